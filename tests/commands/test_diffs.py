"""The diffs klc prints apply with ``git apply`` and ``patch -p1`` whatever form the kernel's
path was given in; ``klc apply`` and ``klc batch`` print the same diff for the same change;
``--annotate`` names the rules of each hunk; built-in rules are named without their path."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from klc.cli import main

pytestmark = pytest.mark.skipif(not (shutil.which("git") and shutil.which("patch")),
                                reason="needs git and patch")

# two kernels far apart, so that their rewrites land in two hunks
KERNEL = (b"__global__ void scale(float* x, float* y, int n) {\n"
          b"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
          b"    if (i < n) y[i] = 2.0f * x[i];\n"
          b"}\n" + b"// filler\n" * 12 +
          b"__global__ void act(float* x, float* y, int n) {\n"
          b"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
          b"    if (i < n) y[i] = expf(x[i]);\n"
          b"}")  # (no newline at the end of the file)


def klc(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def applies(diff: str, where: Path) -> None:
    """``git apply --check`` and ``patch -p1 --dry-run`` both take the diff in ``where``."""
    git = subprocess.run(["git", "apply", "--check", "-"], input=diff.encode(), cwd=where,
                         capture_output=True)
    assert git.returncode == 0, git.stderr.decode() + diff
    patch = subprocess.run(["patch", "-p1", "--dry-run", "--batch"], input=diff.encode(),
                           cwd=where, capture_output=True)
    assert patch.returncode == 0, patch.stdout.decode() + patch.stderr.decode() + diff


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "k.cu").write_bytes(KERNEL)
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("form", ["src/k.cu", "./src/k.cu", "src/../src/k.cu", "absolute"])
def test_apply_diff_applies_from_every_path_form(project: Path, form: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = str(project / "src" / "k.cu") if form == "absolute" else form
    rc, out, _ = klc(capsys, "apply", "add_const_param", path)
    assert rc == 0
    assert out.startswith("--- a/src/k.cu\n+++ b/src/k.cu\n"), out
    applies(out, project)
    # and it really makes the rewrite: applied for real, the file is the rewritten one
    subprocess.run(["patch", "-p1", "--batch", "--quiet"], input=out.encode(), cwd=project,
                   check=True)
    assert b"void scale(const float* x" in (project / "src" / "k.cu").read_bytes()


def test_a_file_outside_the_working_folder_is_named_from_the_root(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    rc, out, _ = klc(capsys, "apply", "add_const_param", "../proj/src/k.cu")
    assert rc == 0
    name = str(project / "src" / "k.cu").lstrip("/")
    assert out.startswith(f"--- a/{name}\n+++ b/{name}\n"), out
    assert "/../" not in out and "a//" not in out
    applies(out, Path("/"))


def test_a_last_line_without_newline_is_marked(project: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = klc(capsys, "apply", "fast_math", "src/k.cu")
    assert rc == 0
    assert out.endswith("\n }\n\\ No newline at end of file\n"), out
    applies(out, project)


def test_annotate_names_the_rules_of_each_hunk(project: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    rules = project / "both.rule"
    restrict = Path(__file__).resolve().parents[2] / "skills" / "qualifiers.rule"
    fast = Path(__file__).resolve().parents[2] / "skills" / "fast_math.rule"
    rules.write_text(restrict.read_text() + "\n" + fast.read_text())
    rc, out, _ = klc(capsys, "apply", str(rules), "src/k.cu", "--rule", "add_const_param",
                     "--rule", "precise_exp_to_fast", "--annotate")
    assert rc == 0
    hunks = [line for line in out.splitlines() if line.startswith("@@")]
    assert len(hunks) == 2, out
    assert hunks[0].endswith("@@ klc: add_const_param"), hunks
    assert hunks[1].endswith("@@ klc: add_const_param, precise_exp_to_fast"), hunks
    applies(out, project)
    rc, plain, _ = klc(capsys, "apply", str(rules), "src/k.cu", "--rule", "add_const_param",
                       "--rule", "precise_exp_to_fast")
    assert [ln for ln in plain.splitlines() if ln.startswith("@@")] == \
        [h.split(" klc:")[0] for h in hunks]


def test_apply_and_batch_print_the_same_diff(project: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    fast = Path(__file__).resolve().parents[2] / "skills" / "fast_math.rule"
    for path in ("src/k.cu", str(project / "src" / "k.cu")):
        rc, applied, _ = klc(capsys, "apply", str(fast), path)
        assert rc == 0
        root = str(Path(path).parent)
        rc, batch, _ = klc(capsys, "batch", root, "--rule", str(fast), "--diff", "-j", "1",
                           "-q", "--no-compile-check")
        assert rc == 0 and batch == applied, (batch, applied)


def test_a_builtin_rule_by_name_and_a_file_path_wins(project: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    rc, out, _ = klc(capsys, "apply", "fast_math", "src/k.cu")  # a library's file
    assert rc == 0 and "__expf(x[i])" in out and "const float" not in out
    rc, out, _ = klc(capsys, "apply", "add_const_param", "src/k.cu")  # one rule of a file
    assert rc == 0  # (qualifiers.rule holds add_restrict too, which is not applied)
    assert "+__global__ void scale(const float* x" in out and "__expf" not in out
    (project / "fast_math").write_text(  # a file of that name wins over the built-in
        "rule mine {\n  kind: skill\n  description: \"d\"\n  context: any\n"
        "  anchor: ```\n    expf($X)\n  ```\n  rewrite replace: ```\n    exp2f($X)\n  ```\n"
        "}\n")
    rc, out, _ = klc(capsys, "apply", "fast_math", "src/k.cu")
    assert rc == 0 and "exp2f(x[i])" in out
    rc, out, err = klc(capsys, "apply", "no_such_rule_here", "src/k.cu")
    assert rc == 2 and out == ""
    assert err.strip().splitlines() == [
        "klc: error: no_such_rule_here: no such rule file, and no built-in rule or rule "
        "file of that name (klc list --rules lists them)"]


def test_batch_takes_builtin_rules_by_name_too(project: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    rc, applied, _ = klc(capsys, "apply", "add_const_param", "src/k.cu")
    assert rc == 0
    rc, batch, _ = klc(capsys, "batch", "src", "--rule", "add_const_param", "--diff", "-j",
                       "1", "-q", "--no-compile-check")
    assert rc == 0 and batch == applied  # one rule of qualifiers.rule, not add_restrict
    rc, both, _ = klc(capsys, "batch", "src", "--rule", "add_const_param", "--rule",
                      "fast_math", "--diff", "-j", "1", "-q", "--no-compile-check")
    assert rc == 0 and "+    if (i < n) y[i] = __expf(x[i]);" in both and "const float* x" in both
    rc, out, err = klc(capsys, "batch", "src", "--rule", "no_such_rule_here", "--diff")
    assert (rc, out) == (2, "") and "no_such_rule_here: no such rule file" in err


def test_batch_annotates_its_diff_as_apply_does(project: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    rules = project / "both.rule"
    restrict = Path(__file__).resolve().parents[2] / "skills" / "qualifiers.rule"
    fast = Path(__file__).resolve().parents[2] / "skills" / "fast_math.rule"
    rules.write_text(restrict.read_text() + "\n" + fast.read_text())
    picked = ("--rule", "add_const_param", "--rule", "precise_exp_to_fast")
    rc, applied, _ = klc(capsys, "apply", str(rules), "src/k.cu", *picked, "--annotate")
    assert rc == 0
    only = [w for w in picked if w != "--rule"]
    rc, batch, _ = klc(capsys, "batch", "src", "--rule", str(rules), "--only", only[0],
                       "--only", only[1], "--diff", "--annotate", "-j", "1", "-q",
                       "--no-compile-check")
    assert rc == 0 and batch == applied, (batch, applied)
    hunks = [line for line in batch.splitlines() if line.startswith("@@")]
    assert [h.split(" @@ ")[1] for h in hunks] == \
        ["klc: add_const_param", "klc: add_const_param, precise_exp_to_fast"], hunks
    applies(batch, project)
    rc, plain, _ = klc(capsys, "batch", "src", "--rule", str(rules), "--only", only[0],
                       "--only", only[1], "--diff", "-j", "1", "-q", "--no-compile-check")
    assert rc == 0 and " klc: " not in plain
    assert [ln for ln in plain.splitlines() if ln.startswith("@@")] == \
        [h.split(" klc:")[0] for h in hunks]


def test_batch_annotate_without_a_diff_is_refused(project: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    for extra in ((), ("--out", str(project / "out")), ("--diff", "--optimize")):
        rc, out, err = klc(capsys, "batch", "src", "--rule", "fast_math", "--annotate", "-q",
                           *extra)
        assert rc == 2 and out == "", (extra, out)
        line, = err.strip().splitlines()
        assert line.startswith("klc: error: --annotate "), line
    assert not (project / "out").exists()
    assert (project / "src" / "k.cu").read_bytes() == KERNEL
