"""No silent downgrade of a check: ``klc batch --gate`` where verify or profile cannot run
refuses before writing anything, unless ``--gate-stages compile`` asks for compiling alone;
every result says which checks its rewrite passed. The GPU is hidden here
(``CUDA_VISIBLE_DEVICES=-1``), so these run on a machine with one too, unless CUDA was
already set up in the test process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from klc.batch import GATE_FAILED, REWRITTEN, BatchConfig, FileResult, gate_result
from klc.cli import main

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ("adam_update.cu", "relu.cu")


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from klc.gate import gpu_status

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    if gpu_status()[0] is not None:  # (CUDA was set up in this process before: it stays)
        pytest.skip("a GPU is still visible to this process; these are for a machine "
                    "without one")
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    for name in KERNELS:
        shutil.copy(ROOT / "bench" / "heldout" / name, src / name)
    return src


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "cache" not in p.parts}


@pytest.mark.parametrize("mode", [["--in-place"], ["--out", "mirror"]])
@pytest.mark.parametrize("stages", [[], ["--gate-stages", "verify"],
                                    ["--gate-stages", "compile,profile"]])
def test_gate_without_a_gpu_refuses_before_writing(tree: Path, mode: list[str],
                                                   stages: list[str],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(tree.parent)
    assert main(["batch", str(tree), "--gate", *stages, *mode, "-j", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("klc: error: --gate: ")
    assert ("needs a GPU" if stages else "need a GPU") in err
    assert "a GPU and this machine has none" in err
    assert "nothing was written (--gate-stages compile gates by compiling alone)" in err
    assert _snapshot(tree.parent) == before  # no rewrite, no journal, no mirror folder
    assert not (tree.parent / "mirror").exists()


def test_gate_stages_compile_gates_by_compiling_and_says_so(
        tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    assert main(["batch", str(tree), "--gate", "--gate-stages", "compile", "--out", "mirror",
                 "-j", "1", "--report", str(report)]) == 0
    err = capsys.readouterr().err
    assert "rewritten files compiled only (not verified on a GPU)" in err
    doc = json.loads(report.read_text())
    assert doc["counts"]["checked_compile"] == len(KERNELS)
    assert doc["counts"]["checked_verify"] == doc["counts"]["checked_profile"] == 0
    for f in doc["files"]:
        assert f["status"] == REWRITTEN and f["checks"] == ["compile"]
        assert f["gate"]["verdict"] == "passed"  # (every stage asked for passed)
        assert set(f["gate"]["stages"]) == {"compile"}  # verify was never planned
    for name in KERNELS:
        assert (tmp_path / "mirror" / name).read_bytes() != (tree / name).read_bytes()


def test_each_file_says_what_checked_its_rewrite(tree: Path, tmp_path: Path) -> None:
    """Ungated: the compile check ran (``compile``), or nothing did (--no-compile-check);
    the Markdown report has the column too."""
    cases: list[tuple[tuple[str, ...], list[str], str]] = [
        ((), ["compile"], "checked_compile"), (("--no-compile-check",), [], "checked_none")]
    for extra, checks, key in cases:
        report = tmp_path / f"r{len(extra)}.json"
        out = tmp_path / f"o{len(extra)}"
        assert main(["batch", str(tree), "--out", str(out), "-j", "1", "-q", *extra,
                     "--report", str(report)]) == 0
        doc = json.loads(report.read_text())
        assert [f["checks"] for f in doc["files"]] == [checks] * len(KERNELS)
        assert doc["counts"][key] == len(KERNELS)
    md = tmp_path / "r.md"
    assert main(["batch", str(tree), "--out", str(tmp_path / "o9"), "-j", "1", "-q",
                 "--report", str(md)]) == 0
    rows = [line for line in md.read_text().splitlines() if line.startswith("| `")]
    assert rows and all(line.split("|")[3].strip() == "compile" for line in rows)
    page = tmp_path / "r.html"
    assert main(["batch", str(tree), "--out", str(tmp_path / "o8"), "-j", "1", "-q",
                 "--report", str(page)]) == 0
    html = page.read_text()
    table = html[html.index('id="files-table"'):]
    assert "<th>checks</th>" in table
    assert table.count("<td>rewritten</td><td>compile</td>") == len(KERNELS)


@pytest.mark.parametrize(("argv", "words"), [
    (["--gate", "--gate-stages", "compile,speed"], "--gate-stages compile,speed: expected "
                                                   "stages among compile, verify, profile"),
    (["--gate-stages", "compile"], "--gate-stages needs --gate"),
])
def test_bad_gate_stages(tree: Path, argv: list[str], words: str,
                         capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(tree.parent)
    assert main(["batch", str(tree), "--in-place", "-j", "1", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"klc: error: {words} (e.g. compile, or compile,verify,profile)" \
        if "expected" in words else err == f"klc: error: {words}"
    assert _snapshot(tree.parent) == before


def test_a_file_whose_verify_could_not_run_is_not_written(tree: Path) -> None:
    """The worker's own line (a Ray node without a GPU, where the driver cannot tell): a
    gate asked to verify that skipped verify keeps the original."""
    config = BatchConfig.from_paths([str(ROOT / "skills")], gate=True)
    original = (tree / "relu.cu").read_bytes()
    res = FileResult(str(tree / "relu.cu"), REWRITTEN, output=b"changed")
    gate_result(config, res, original, original.replace(b"relu", b"relu", 1))
    assert res.status == GATE_FAILED and res.output is None and res.checks == []
    assert "verify and profile asked for (--gate-stages) but not run: skipped because there " \
           "is no GPU" in res.reason
    compile_only = BatchConfig.from_paths([str(ROOT / "skills")], gate=True,
                                          gate_stages=("compile",))
    res = FileResult(str(tree / "relu.cu"), REWRITTEN, output=b"changed")
    gate_result(compile_only, res, original, original)
    assert res.status == REWRITTEN and res.checks == ["compile"]
