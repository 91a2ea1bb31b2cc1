"""``klc list``'s layout through the real command: the compact default (structural skills
first, each cheap skill once per file, rules that rewrite the same code the same way folded),
``--full``, ``--only``/``--exclude`` and ``--rules``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from klc.cli import main
from klc.rule import RuleSet, default_skill_dirs

ROOT = Path(__file__).resolve().parents[2]

# three counted loops (unroll_loop and add_bare_pragma_unroll both apply to each, the same
# rewrite but for the factor) and an element-wise kernel that a structural skill reshapes
LOOPS = """/* klc-spec
kernel: act
sizes: {n: 1048576}
args:
  - {name: x, shape: [n], role: in}
  - {name: y, shape: [n], role: out}
  - {name: n, value: n}
grid: ["ceil_div(n, 256)"]
block: [256]
*/
__device__ float sum3(const float* x) {
    float s = 0.0f;
    for (int j = 0; j < 8; ++j) s += x[j];
    for (int j = 0; j < 4; ++j) s += x[j + 8];
    for (int j = 0; j < 16; ++j) s += x[j + 12];
    return s;
}
__global__ void act(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = expf(x[i]);
    }
}
"""


def run_list(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["list", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    path = tmp_path / "k.cu"
    path.write_text(LOOPS)
    return path


def _heads(out: str, path: Path) -> list[str]:
    """The rule of each entry, in order."""
    return [ln.split(": ", 1)[1].split(" (")[0] for ln in out.splitlines()
            if ln.startswith(f"{path}:")]


def test_compact_default_folds_and_groups(kernel: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    rc, full, _ = run_list(capsys, "--full", str(kernel))
    assert rc == 0
    every = _heads(full, kernel)
    assert every.count("unroll_loop") == 3 and every.count("add_bare_pragma_unroll") == 3
    rc, out, _ = run_list(capsys, str(kernel))
    assert rc == 0
    heads = _heads(out, kernel)
    # each rule once; the loops' two unroll rules are one entry that names the other
    assert len(heads) == len(set(heads)) and "add_bare_pragma_unroll" not in heads
    assert "and 2 more sites in this file, at lines 14, 15" in out
    assert "the same rewrite: add_bare_pragma_unroll" in out
    # structural skills before every cheap one
    from klc.rule import RuleSet
    from klc.rule.reach import reach

    rules = {r.name: r for r in RuleSet.load([str(ROOT / "skills"),
                                              str(ROOT / "skills" / "experts")]).rules}
    shape = [reach(rules[h]).structural for h in heads]
    assert any(shape) and not all(shape)
    assert shape == sorted(shape, reverse=True), heads


def test_only_and_exclude_filter_rules_by_glob(kernel: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_list(capsys, "--only", "*unroll*", "--full", str(kernel))
    assert rc == 0 and set(_heads(out, kernel)) == {"unroll_loop", "add_bare_pragma_unroll"}
    rc, out, _ = run_list(capsys, "--only", "*unroll*", "--exclude", "unroll_loop",
                          str(kernel))
    assert rc == 0 and _heads(out, kernel) == ["add_bare_pragma_unroll"]
    assert "the same rewrite" not in out  # nothing left to agree with
    rc, out, _ = run_list(capsys, "--exclude", "*", "--json", str(kernel))
    assert rc == 0 and json.loads(out) == []
    rc, out, err = run_list(capsys, "--only", "no_such_*", str(kernel))
    assert (rc, out) == (2, "")
    n = len(RuleSet.load(default_skill_dirs()).rules)  # (the library it lists)
    assert err.strip() == (f"klc: error: --only 'no_such_*': no rule of {n} matches it (klc "
                           "list --rules lists them)")


def test_rules_lists_the_builtin_rules_with_intent(capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    rc, out, _ = run_list(capsys, "--rules")
    assert rc == 0
    assert "skills/fast_math.rule (klc apply fast_math KERNEL: all of them)" in out
    assert "  add_restrict: skill, cheap, faster\n" in out
    assert "passes/fast_math.rule\n" in out  # the skills' file of that name is found first
    lines = out.splitlines()
    i = lines.index("  unroll_loop: skill, cheap")
    assert lines[i + 1].strip().startswith("Unroll a short counted loop")
    rc, out, _ = run_list(capsys, "--rules", "--json", "--only", "add_*")
    rows = json.loads(out)
    assert rc == 0 and {r["rule"] for r in rows} == {"add_restrict", "add_const_param",
                                                      "add_launch_bounds",
                                                      "add_bare_pragma_unroll"}
    assert all(r["intent"] and r["reach"] for r in rows)
    rc, out, err = run_list(capsys)
    assert (rc, out) == (2, "") and "give KERNEL files or folders (or --rules)" in err


def test_every_format_folds_the_same_rewrites_alike(kernel: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """One deduplication before any format: the text, JSON, SARIF and GitHub listings keep
    the same sites, and each names the rules folded into it; ``--full`` keeps them all."""
    rc, out, _ = run_list(capsys, "--json", str(kernel))
    assert rc == 0
    sites = json.loads(out)
    loops = [(s["line"], s["also"]) for s in sites if s["rule"] == "unroll_loop"]
    assert loops == [(13, ["add_bare_pragma_unroll"]), (14, ["add_bare_pragma_unroll"]),
                     (15, ["add_bare_pragma_unroll"])]
    assert not any(s["rule"] == "add_bare_pragma_unroll" for s in sites)
    kept = sorted((s["rule"], s["line"], s["col"]) for s in sites)
    rc, out, _ = run_list(capsys, "--format", "sarif", str(kernel))
    assert rc == 0
    results = json.loads(out)["runs"][0]["results"]
    located = sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["region"]
                      ["startLine"], r["locations"][0]["physicalLocation"]["region"]
                      ["startColumn"]) for r in results)
    assert located == kept
    for r in results:
        folded = ["add_bare_pragma_unroll"] if r["ruleId"] == "unroll_loop" else []
        assert r["properties"]["also"] == folded, r
        assert ("the same rewrite: add_bare_pragma_unroll" in r["message"]["text"]) == \
            bool(folded)
    rc, out, _ = run_list(capsys, "--format", "github", str(kernel))
    assert rc == 0
    notes = [ln for ln in out.splitlines() if ln.startswith("::notice ")]
    assert sorted(re.search(r"title=klc%3A (\w+)", n).group(1) for n in notes) == \
        [k[0] for k in kept]  # type: ignore[union-attr]
    assert sum("the same rewrite: add_bare_pragma_unroll" in n for n in notes) == 3
    rc, out, _ = run_list(capsys, "--all", str(kernel))  # --all's layout: one line per site
    assert rc == 0 and "add_bare_pragma_unroll (" not in out
    assert out.count("    the same rewrite: add_bare_pragma_unroll\n") == 3
    for fmt in ("json", "sarif", "github"):
        rc, out, _ = run_list(capsys, "--full", "--format", fmt, str(kernel))
        assert rc == 0 and out.count("add_bare_pragma_unroll") >= 3, fmt
        assert "the same rewrite" not in out, fmt
    rc, out, _ = run_list(capsys, "--full", "--json", str(kernel))
    assert sorted((s["rule"], s["line"]) for s in json.loads(out)
                  if "unroll" in s["rule"]) == sorted(
        (r, n) for r in ("unroll_loop", "add_bare_pragma_unroll") for n in (13, 14, 15))


def test_a_broken_spec_is_said_with_its_position_and_the_rest_is_listed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A klc-spec block that does not load is an error of the file (exit 2, file:line:col),
    not silence: the guards that read the spec fail closed, so a listing without a word
    would hide why the launch-dependent skills are missing. The file's other sites are
    still listed."""
    path = tmp_path / "k.cu"
    path.write_text(LOOPS.replace("role: in}", "role: in, dtype: f32}"))
    rc, out, err = run_list(capsys, str(path))
    assert rc == 2
    assert f"klc: error: {path}:5:37: unknown field 'dtype'" in err
    assert "klc-spec block is not read" in err
    assert "unroll_loop" in out  # the spec-free sites are listed
    assert "elementwise_grid_stride" not in out  # it needs the spec's block
    fine = tmp_path / "fine.cu"
    fine.write_text(LOOPS)
    rc_ok, out_ok, err_ok = run_list(capsys, str(fine))
    assert rc_ok == 0 and err_ok == "" and "elementwise_grid_stride" in out_ok


def test_the_default_workers_list_what_one_process_lists(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``-j``, a tree whose bytes pay for workers is listed by them (one per CPU at
    most), and the listing is the one ``-j 1`` prints; ``-j 1`` starts none."""
    from klc.batch import listing

    for name in ("saxpy.cu", "sigmoid.cu", "reduce_sum.cu"):
        (tmp_path / name).write_bytes((ROOT / "bench" / "examples" / name).read_bytes())
    (tmp_path / "loops.cu").write_text(LOOPS)
    monkeypatch.setenv("KLC_NO_CACHE", "1")
    started: list[int] = []
    real = listing._in_workers

    def spy(paths: list[str], jobs: int, initargs: tuple[object, ...]) -> object:
        started.append(jobs)
        return real(paths, jobs, initargs)

    monkeypatch.setattr(listing, "_in_workers", spy)
    rc1, one, err1 = run_list(capsys, "--tree-only", "-j", "1", str(tmp_path))
    assert started == []
    monkeypatch.setattr(listing, "BYTES_PER_WORKER", 1000)  # (these files: several workers)
    monkeypatch.setattr(listing, "cpus", lambda: 2)
    rc, out, err = run_list(capsys, "--tree-only", str(tmp_path))
    assert started == [2]
    assert (rc, out, err) == (rc1, one, err1)
    assert "unroll_loop" in out and "loops.cu" in out
