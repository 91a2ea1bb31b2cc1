"""klc lineage: the backward walk, its records, its report, bad input (compile-only gating:
NVRTC needs no GPU), and one walk with the full gate on a GPU (marked ``gpu``)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from klc.cli import main
from klc.errors import KlcError
from klc.lineage import load_lineage, load_passes, walk, write_lineage

ROOT = Path(__file__).resolve().parents[2]
# every lineage of bench/lineages (a new one is walked, reversed and reproduced too)
FAMILIES = tuple(sorted(p.parent.name for p in (ROOT / "bench" / "lineages").glob("*/expert.cu")))


def _recorded_order(family: str) -> list[str] | None:
    doc = ROOT / "bench/lineages" / family / "walk" / "lineage.json"
    return json.loads(doc.read_text())["order"] if doc.exists() else None


# committed walks that passes added after them take further: made again on a GPU when there is
# device time (their steps still verify; the skills learned from them stand)
STALE: set[str] = set()


@pytest.fixture(scope="module")
def walks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every family walked compile-only, written as klc lineage writes it."""
    out = {}
    for fam in FAMILIES:
        # with the passes the committed walk recorded (a pass added since can take the walk a
        # step further: the walk on a GPU is made again for that, test_stale_walks says which)
        lin = walk(ROOT / "bench/lineages" / fam / "expert.cu", ROOT / "passes",
                   stages=("compile",), only=_recorded_order(fam))
        d = tmp_path_factory.mktemp(fam)
        write_lineage(lin, d)
        out[fam] = d
    return out


@pytest.mark.parametrize("family", FAMILIES)
def test_walk_reproduces_the_committed_walk(walks: dict[str, Path], family: str) -> None:
    data = load_lineage(walks[family])
    committed = sorted((ROOT / "bench/lineages" / family / "walk").glob("v*.cu"))
    versions = data["versions"]
    assert [c.name for c in committed] == [v["file"] for v in versions]
    for c, v in zip(committed, versions, strict=True):
        assert (walks[family] / v["file"]).read_bytes() == c.read_bytes(), c.name
    assert data["stop_reason"] == "no simplification applies"


def test_stale_walks() -> None:
    """The walks the current passes take further than the committed walk are exactly STALE:
    a new pass that changes another walk is seen here, and a walk made again leaves the set."""
    from klc.lineage import load_passes

    names = [r.name for r in load_passes(ROOT / "passes")[0]]
    stale = set()
    for fam in FAMILIES:
        order = _recorded_order(fam)
        if order is None or order == names:
            continue
        now = walk(ROOT / "bench/lineages" / fam / "expert.cu", ROOT / "passes",
                   stages=("compile",))
        before = load_lineage(ROOT / "bench/lineages" / fam / "walk")
        if [v.file for v in now.versions] != [v["file"] for v in before["versions"]]:
            stale.add(fam)
    assert stale == STALE


def test_reduce_sum_walk_follows_the_documented_order(walks: dict[str, Path]) -> None:
    data = load_lineage(walks["reduce_sum"])
    assert [v["pass"] for v in data["versions"][1:]] == [
        "remove_launch_bounds", "devectorize_float4_loop", "grid_stride_to_one_per_thread",
        "shuffle_block_reduce_to_shared", "unrolled_last_warp_to_loop",
        "sequential_tree_to_interleaved", "remove_restrict", "remove_restrict",
        "remove_const_param"]
    # a launch pass changes the spec with its hole's default (the expert's 16 per thread)
    grid_step = data["versions"][3]["step"]
    assert grid_step["holes"] == {"factor": "16"}
    assert grid_step["launch"] == [["grid", "x", "*", 16]]
    assert '"(ceil_div(n, BLOCK * 16)) * 16"' in (walks["reduce_sum"] / "v03_grid_stride_to"
                                                   "_one_per_thread.cu").read_text()


def test_transpose_rows_per_thread_is_one_step_at_both_loops(walks: dict[str, Path]) -> None:
    data = load_lineage(walks["transpose"])
    step = next(v["step"] for v in data["versions"][1:]
                if v["pass"] == "rows_per_thread_to_one")
    assert len(step["sites"]) == 2 and step["launch"] == [["block", "y", "*", 4]]
    assert step["facts_before"]["block"] == [32, 8, 1]
    assert step["facts_after"]["block"] == [32, 32, 1]


def test_lineage_json_records_every_version(walks: dict[str, Path]) -> None:
    d = walks["softmax"]
    data = json.loads((d / "lineage.json").read_text())
    assert data["gating"] == "compile-only" and data["family"] == "softmax"
    assert data["expert"].endswith("bench/lineages/softmax/expert.cu")
    files = sorted(p.name for p in d.glob("v*.cu"))
    assert files == sorted(v["file"] for v in data["versions"])
    for i, v in enumerate(data["versions"]):
        assert v["index"] == i
        assert hashlib.sha256((d / v["file"]).read_bytes()).hexdigest() == v["sha256"]
        assert v["gate"]["stages"]["compile"]["status"] == "passed"
        assert v["median_ms"] is None and v["pct_of_sol"] is None  # nothing timed
    for prev, v in zip(data["versions"], data["versions"][1:], strict=False):
        st = v["step"]
        assert st["from"] == prev["file"] and st["to"] == v["file"]
        assert st["diff"].startswith(f"--- a/{prev['file']}\n+++ b/{v['file']}\n")
        assert st["sites"] and all("bindings" in s and "line" in s for s in st["sites"])
        assert st["pass_file"].endswith(".rule")
    # the online softmax step records what the pass erased: the exponential it used
    online = next(v["step"] for v in data["versions"] if v.get("pass") ==
                  "online_softmax_to_two_pass")
    assert online["sites"][0]["bindings"]["EXP"]["text"] == "__expf"


def test_report_says_compile_only_and_lists_versions(walks: dict[str, Path]) -> None:
    report = (walks["transpose"] / "report.md").read_text()
    assert "Compile-only walk" in report
    assert "| `v00_expert.cu` | (expert) |" in report
    assert "rows_per_thread_to_one" in report
    assert "No plot: no version was timed" in report
    assert not (walks["transpose"] / "lineage.png").exists()


def test_report_redraw_with_times(walks: dict[str, Path], tmp_path: Path) -> None:
    d = tmp_path / "w"
    shutil.copytree(walks["reduce_sum"], d)
    data = json.loads((d / "lineage.json").read_text())
    for i, v in enumerate(data["versions"]):
        v["median_ms"], v["pct_of_sol"] = 0.1 + 0.05 * i, 80.0 - 5 * i
    data["device"] = "NVIDIA H200"
    (d / "lineage.json").write_text(json.dumps(data))
    assert main(["lineage", "--report", str(d)]) == 0
    report = (d / "report.md").read_text()
    assert "100.0 us" in report and "80%" in report  # the expert row, from the JSON
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in report and "klc lineage --report" in report
    else:
        assert (d / "lineage.png").read_bytes().startswith(b"\x89PNG")


def _kernel(tmp_path: Path, body: str, spec: bool = True) -> Path:
    head = ("/* klc-spec\nkernel: k\nsizes: {n: 1024}\nargs:\n"
            "  - {name: x, shape: [n], role: in}\n  - {name: y, shape: [n], role: out}\n"
            "  - {name: n, value: n}\ngrid: [\"ceil_div(n, 256)\"]\nblock: [256]\n*/\n")
    p = tmp_path / "k.cu"
    p.write_text((head if spec else "") + body)
    return p


KERNEL = ("__global__ void k(const float* x, float* y, int n) {\n"
          "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
          "    if (i < n) {\n        y[i] = __expf(x[i]);\n    }\n}\n")


def test_a_candidate_the_gate_refuses_is_recorded_and_the_next_is_tried(
        tmp_path: Path) -> None:
    passes = tmp_path / "passes"
    passes.mkdir()
    (passes / "a.rule").write_text(
        'rule broken_exp {\n  kind: simplification\n  anchor: ```__expf($X)```\n'
        '  rewrite replace: ```no_such_function($X)```\n}\n')
    shutil.copy(ROOT / "passes/fast_math.rule", passes / "b.rule")
    (passes / "ORDER").write_text("# broken first\nbroken_exp\nfast_exp_to_precise\n")
    lin = walk(_kernel(tmp_path, KERNEL), passes, stages=("compile",))
    assert [v.step["pass"] for v in lin.versions[1:]] == ["fast_exp_to_precise"]
    refused = lin.versions[1].step["rejected"]
    assert refused[0]["pass"] == "broken_exp" and "no_such_function" in refused[0]["reason"]
    assert "compile" in refused[0]["reason"] and refused[0]["gate"]["verdict"] == "failed"
    # after the step no __expf is left: nothing applies, nothing was refused in the last round
    assert lin.stop_reason == "no simplification applies" and not lin.final_attempts


def test_order_file_errors_name_the_line(tmp_path: Path) -> None:
    passes = tmp_path / "passes"
    passes.mkdir()
    shutil.copy(ROOT / "passes/fast_math.rule", passes)
    (passes / "ORDER").write_text("fast_exp_to_precise\n  fast_exp_to_precis\n")
    with pytest.raises(KlcError, match=r"ORDER:2:3: no pass named fast_exp_to_precis "
                                       r"\(did you mean fast_exp_to_precise\?\)"):
        load_passes(passes)
    (passes / "ORDER").write_text("fast_exp_to_precise\nfast_exp_to_precise\n")
    with pytest.raises(KlcError, match=r"ORDER:2:1: fast_exp_to_precise is listed twice"):
        load_passes(passes)
    (passes / "ORDER").unlink()
    rules, source = load_passes(passes)
    assert [r.name for r in rules] == ["fast_exp_to_precise", "fast_divide_to_precise"]
    assert "load order" in source


@pytest.mark.parametrize(("case", "message"), [
    ("nospec", "has no klc-spec block"),
    ("syntax", "k.cu:2:"),
    ("brokenpass", "bad.rule:3:"),
    ("missing", "no such file"),
])
def test_bad_input_is_a_clear_error_and_nothing_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, message: str) -> None:
    passes = ROOT / "passes"
    if case == "nospec":
        kernel = _kernel(tmp_path, KERNEL, spec=False)
    elif case == "syntax":
        kernel = _kernel(tmp_path, "", spec=False)
        kernel.write_text("__global__ void k(float* y) {\n    y[0] = (1 +;\n}\n")
    elif case == "brokenpass":
        kernel = _kernel(tmp_path, KERNEL)
        passes = tmp_path / "passes"
        passes.mkdir()
        (passes / "bad.rule").write_text(
            "rule r {\n  kind: simplification\n  anchr: ```x```\n}\n")
    else:
        kernel = tmp_path / "nope.cu"
    out = tmp_path / "out"
    code = main(["lineage", str(kernel), "--passes", str(passes), "--stages", "compile",
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err
    assert not out.exists()


def test_cli_writes_the_folder_and_json(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["lineage", str(_kernel(tmp_path, KERNEL)), "--stages", "compile", "--out",
                 str(out), "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert [v["pass"] for v in data["versions"]] == [None, "fast_exp_to_precise",
                                                     "remove_const_param"]
    assert (out / "lineage.json").exists() and (out / "report.md").exists()
    # every version once, in the walk's folder (v00_expert.cu, v01_<pass>.cu, ...)
    assert sorted(p.name for p in tmp_path.rglob("v[0-9]*.cu")) == \
        sorted(v["file"] for v in data["versions"])
    assert all((out / v["file"]).exists() for v in data["versions"])
    # a kernel nothing simplifies: exit 1, the expert and why still written
    plain = _kernel(tmp_path, "__global__ void k(const float* x, float* y, int n) {}\n")
    assert main(["lineage", str(plain), "--stages", "compile", "--out",
                 str(tmp_path / "o2")]) == 1
    assert load_lineage(tmp_path / "o2")["stop_reason"] == "no simplification applies"


@pytest.mark.gpu
def test_gpu_walk_verifies_and_times_every_version(tmp_path: Path) -> None:
    """The lead runs this on the H200: the real gate at every step of reduce_sum."""
    lin = walk(ROOT / "bench/lineages/reduce_sum/expert.cu", ROOT / "passes")
    assert lin.gating == "full"
    assert len(lin.versions) >= 8
    for v in lin.versions:
        stages = v.gate["stages"]
        assert stages["compile"]["status"] == "passed"
        assert stages["verify"]["status"] == "passed", v.file
        assert v.median_ms is not None and v.median_ms > 0, v.file
    write_lineage(lin, tmp_path)
    data = load_lineage(tmp_path)
    assert data["device"] and all(v["median_ms"] for v in data["versions"])
