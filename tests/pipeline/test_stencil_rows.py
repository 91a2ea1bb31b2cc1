"""The stencil_rows lineage (bench/lineages/stencil_rows) and its skills: the compile-only walk
(the interior rows of a thread and its rows per thread taken back to one pixel per thread),
and the learned skills on the transfer set's 3 x 3 box blur (bench/transfer/blur_3x3.cu, the
walk's naive end but for its names) and on the window_interior expert: the recipe forward
compiles with NVRTC here, the interior rows load each shared window row once (PTX), and on a
GPU the rewrites compute what the originals compute, border pixels, images shorter than a
thread's rows and grids that stop short included; two wrong rewrites are found wrong."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.lineage import walk, write_lineage
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.reverse import Learned, learn
from klc.rule import Rule, RuleSet

ROOT = Path(__file__).resolve().parents[2]
FAMILY = ROOT / "bench/lineages/stencil_rows"
BLUR = ROOT / "bench/transfer/blur_3x3.cu"
INTERIOR = ROOT / "bench/lineages/window_interior/walk/v00_expert.cu"


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Learned]:
    d = tmp_path_factory.mktemp("stencil_rows")
    write_lineage(walk(FAMILY / "expert.cu", ROOT / "passes", stages=("compile",)), d)
    data = json.loads((d / "lineage.json").read_text())
    assert [v["step"]["pass"] for v in data["versions"][1:]] == [
        "remove_bare_pragma_unroll", "remove_bare_pragma_unroll",
        "rows_interior_to_clipped_rows", "stencil_rows_to_one", "remove_restrict",
        "remove_restrict", "remove_const_param"]
    step = data["versions"][4]["step"]
    assert step["holes"] == {"rpt": "4"} and step["launch"] == [["grid", "y", "*", 4]]
    # the naive end is the transfer blur but for its names
    naive = (d / "v07_remove_const_param.cu").read_text()
    assert "int y = blockIdx.y * blockDim.y + threadIdx.y;\n    if (x >= W || y >= H) return;" \
        in naive
    return {item.rule.name: item for item in learn([d], ROOT / "passes")}


def _skill(name: str) -> Rule:
    return next(r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == name)


def _apply(src: bytes, name: str, holes: dict[str, str] | None = None) -> bytes:
    unit = parse_bytes(src, "k.cu")
    out = apply_rules(unit, [_skill(name)], holes or {}, spec_of(unit)).source
    assert out != src, name
    return out


def _restricted(src: bytes) -> bytes:
    """add_restrict on both pointers (its sites are applied together)."""
    out = _apply(src, "add_restrict")
    assert out.count(b"__restrict__") == 2
    return out


def recipe(src: bytes) -> bytes:
    """The walk reversed, as klc optimize replays it: restrict on both pointers, four rows
    per thread, the interior rows, the rows loops unrolled."""
    out = _apply(_restricted(src), "stencil_rows_per_thread")
    out = _apply(out, "clipped_rows_to_interior_rows")
    return _apply(out, "add_bare_pragma_unroll")


def _loads(src: bytes) -> tuple[int, int]:
    """(global loads, global stores) in NVRTC's PTX for sm_90."""
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(src.decode(), "k.cu", [], [])
    nvrtc.compileProgram(prog, ["--gpu-architecture=compute_90", "-default-device"])
    ptx = nvrtc.getPTX(prog).decode()
    return len(re.findall(r"\bld\.global", ptx)), len(re.findall(r"\bst\.global", ptx))


def test_the_walk_learns_the_committed_skills(learned: dict[str, Learned]) -> None:
    assert {"stencil_rows_per_thread", "clipped_rows_to_interior_rows"} <= set(learned)
    for name in ("stencil_rows_per_thread", "clipped_rows_to_interior_rows"):
        assert learned[name].rule.anchor == _skill(name).anchor
    text = (ROOT / "skills" / "stencil_rows.rule").read_text()
    assert "window_rows($$$BODY, $Y) and grid_rows_cover($H, ?rpt)" in text


def test_the_blur_takes_the_recipe_and_compiles() -> None:
    from klc.gate import gate

    out = recipe(read_source(BLUR))
    text = " ".join(out.decode().split())
    assert 'grid: ["ceil_div(W, 16)", "ceil_div(ceil_div(H, 16), 4)"]' in text
    assert "int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4; if (x >= W) return; " \
        "if (y0 >= 1 && y0 + 4 + 1 <= H && x >= 1 && x + 1 < W) { #pragma unroll " \
        "for (int rr = 0; rr < 4; rr++) { int y = y0 + rr; float sum = 0.0f; int count = 0; " \
        "for (int dv = -1; dv <= 1; dv++) {" in text
    assert "} else { #pragma unroll for (int rr = 0; rr < 4; rr++) { int y = y0 + rr; " \
        "if (y >= H) return;" in text
    rec = gate(out, str(BLUR), arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason


def test_the_interior_rows_load_each_window_row_once() -> None:
    """Four rows of a 3 x 3 window share 6 image rows: 18 loads, not 36, in the unrolled
    interior; without __restrict__ the stores between the rows make NVRTC load again."""
    out = recipe(read_source(BLUR))
    interior = out[:out.index(b"} else {")] + b"}\n}\n"
    assert interior.count(b"{") == interior.count(b"}")
    assert _loads(interior) == (18, 4)
    plain = interior.replace(b"__restrict__ ", b"")
    loads, stores = _loads(plain)
    assert stores == 4 and loads > 18


def test_the_window_interior_expert_takes_the_rows() -> None:
    from klc.gate import gate

    src = read_source(INTERIOR)
    out = _apply(src, "stencil_rows_per_thread", {"rpt": "2"})
    text = " ".join(out.decode().split())
    assert "for (int rr = 0; rr < 2; rr++) { int y = y0 + rr; if (y >= H) return; " \
        "float acc = 0.0f; int n = 0; if (y >= RADIUS && y < H - RADIUS" in text
    # its rows keep their own interior path: the rows' interior skill needs clipped loops
    unit = parse_bytes(out, "k.cu")
    assert find_sites(unit, [_skill("clipped_rows_to_interior_rows")], {}, spec_of(unit)) == []
    rec = gate(out, str(INTERIOR), arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason


def test_the_rows_interior_does_not_split_its_border_again() -> None:
    out = recipe(read_source(BLUR))
    unit = parse_bytes(out, "k.cu")
    sites = find_sites(unit, [_skill("clipped_rows_to_interior_rows")],
                       {"dv": "dv_1", "du": "du_1"}, spec_of(unit))
    assert len(sites) == 1 and not sites[0].ok and "else branch" in sites[0].reason, \
        sites[0].reason


@pytest.mark.gpu
@pytest.mark.parametrize("rpt", ["2", "4", "8"])
def test_the_blur_recipe_verifies_on_the_gpu(rpt: str) -> None:
    """Verified against the original at 64 x 256, 37 x 101 (a last thread with 1 of its rows
    inside) and 1 x 2 (no interior thread at all)."""
    from klc.gate import gate

    src = read_source(BLUR)
    out = _apply(_restricted(src), "stencil_rows_per_thread", {"rpt": rpt})
    out = _apply(_apply(out, "clipped_rows_to_interior_rows"), "add_bare_pragma_unroll")
    rec = gate(out, str(BLUR), reference=src, reference_path=str(BLUR),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("expected", sorted(
    p for d in ("stencil_rows_per_thread", "clipped_rows_to_interior_rows")
    for p in (ROOT / "tests" / "golden" / d).glob("*.expected.cu")),
    ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    from klc.gate import gate

    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = gate(read_source(expected), str(expected), reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize(("old", "new"), [
    # rows RPT apart instead of adjacent: the grid four times shorter misses three rows in four
    (b"(blockIdx.y * blockDim.y + threadIdx.y) * 4;", b"(blockIdx.y * blockDim.y + threadIdx.y);"),
    # an interior one row too deep: the last thread's windows read the row below the image
    (b"y0 + 4 + 1 <= H", b"y0 + 4 <= H"),
])
def test_wrong_rows_are_found_wrong(old: bytes, new: bytes) -> None:
    from klc.gate import gate

    src = read_source(BLUR)
    good = recipe(src)
    bad = good.replace(old, new, 1)
    assert bad != good
    rec = gate(bad, "bad.cu", reference=src, reference_path=str(BLUR),
               stages=("compile", "verify"))
    assert rec.verdict == "failed", rec.reason
