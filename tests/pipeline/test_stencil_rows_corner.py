"""The stencil_rows_corner lineage (bench/lineages/stencil_rows_corner) and its skills: the
compile-only walk ends at the first version of bench/spellings/conv2d_mask_corner.cu (token
for token); forward, the learned skills take that spelling at a 32 x 8 block (the window
walked from its corner, checked in nested ifs, the mask by pointer; at its own 16 x 16 block
they refuse it: a warp spans half a row) to four rows per thread on a grid four times shorter
whose interior rows load each shared matrix row and the mask once (NVRTC's PTX), and the
rewrite compiles with NVRTC here; on a GPU it computes what the original computes at every
?rpt, and rows one off are found wrong."""

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
from klc.spec.expr import launch_dims

ROOT = Path(__file__).resolve().parents[2]
FAMILY = ROOT / "bench/lineages/stencil_rows_corner"
SPELLING = ROOT / "bench/spellings/conv2d_mask_corner.cu"
SKILLS = ("corner_stencil_rows_per_thread", "checked_corner_rows_to_interior_rows")


def wide() -> bytes:
    """The spelling at a 32 x 8 block (as the block-shape skills leave it): the rows skill
    asks that a warp span 32 columns of a row."""
    src = read_source(SPELLING)
    out = src.replace(b'grid: ["ceil_div(N, 16)", "ceil_div(N, 16)"]\nblock: [16, 16]',
                      b'grid: ["ceil_div(N, 32)", "ceil_div(N, 8)"]\nblock: [32, 8]')
    assert out != src
    return out


def _kernel(text: str) -> str:
    """The code after the spec and the comments before it (from the first #define on), its
    tokens without the spaces between them: the walk's naive end is the spelling's kernel
    but for a space after each `*` of the signature, where add_restrict's template writes
    `T * __restrict__ p` and the pass takes `__restrict__` out."""
    return re.sub(r"\s+", "", text[text.index("#define"):])


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Learned]:
    d = tmp_path_factory.mktemp("stencil_rows_corner")
    write_lineage(walk(FAMILY / "expert.cu", ROOT / "passes", stages=("compile",)), d)
    data = json.loads((d / "lineage.json").read_text())
    assert [v["step"]["pass"] for v in data["versions"][1:]] == [
        "remove_bare_pragma_unroll", "remove_bare_pragma_unroll",
        "corner_rows_interior_to_checked", "corner_rows_to_one", "remove_restrict",
        "remove_restrict", "remove_restrict", "remove_const_param", "remove_const_param"]
    step = data["versions"][4]["step"]
    assert step["holes"] == {"rpt": "4"} and step["launch"] == [["grid", "y", "*", 4]]
    naive = (d / "v09_remove_const_param.cu").read_text()
    assert _kernel(naive) == _kernel(SPELLING.read_text())
    assert "convolution_2d(float * matrix, float * result, float * mask, int N)" in naive
    return {item.rule.name: item for item in learn([d], ROOT / "passes")}


def _skill(name: str) -> Rule:
    return next(r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == name)


def _apply(src: bytes, name: str, holes: dict[str, str] | None = None) -> bytes:
    unit = parse_bytes(src, "k.cu")
    out = apply_rules(unit, [_skill(name)], holes or {}, spec_of(unit)).source
    assert out != src, name
    return out


def recipe(src: bytes, rpt: str = "4") -> bytes:
    """The walk reversed, as klc optimize replays it: restrict on the three pointers (one
    run), ?rpt rows per thread, the interior rows, the rows loops unrolled."""
    out = _apply(src, "add_restrict")
    assert out.count(b"__restrict__") == 3
    out = _apply(out, "corner_stencil_rows_per_thread", {"rpt": rpt})
    out = _apply(out, "checked_corner_rows_to_interior_rows")
    return _apply(out, "add_bare_pragma_unroll")


def _loads(src: bytes) -> tuple[int, int]:
    """(global loads, global stores) in NVRTC's PTX for sm_90."""
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(src.decode(), "k.cu", [], [])
    nvrtc.compileProgram(prog, ["--gpu-architecture=compute_90", "-default-device"])
    ptx = nvrtc.getPTX(prog).decode()
    return len(re.findall(r"\bld\.global", ptx)), len(re.findall(r"\bst\.global", ptx))


def test_the_walk_learns_the_committed_skills(learned: dict[str, Learned]) -> None:
    assert set(SKILLS) <= set(learned)
    for name in SKILLS:
        assert learned[name].rule.anchor == _skill(name).anchor
    text = (ROOT / "skills" / "stencil_rows_corner.rule").read_text()
    assert "window_rows($$$BODY, $Y) and grid_rows_cover($H, ?rpt)" in text


def test_the_spelling_lists_the_rows_skill_at_a_warp_wide_block() -> None:
    rule = _skill("corner_stencil_rows_per_thread")
    unit = parse_bytes(wide(), str(SPELLING))
    sites = find_sites(unit, [rule], {}, spec_of(unit))
    assert len(sites) == 1 and sites[0].ok, [s.reason for s in sites]
    # at its own 16 x 16 block a warp spans half a row: refused, saying so
    unit = parse_bytes(read_source(SPELLING), str(SPELLING))
    sites = find_sites(unit, [rule], {}, spec_of(unit))
    assert len(sites) == 1 and not sites[0].ok and "block.x is 16" in sites[0].reason, \
        [s.reason for s in sites]


def test_the_spelling_takes_the_recipe_with_its_grid_and_compiles() -> None:
    from klc.gate import gate

    out = recipe(wide())
    assert 'grid: ["ceil_div(N, 32)", "ceil_div(ceil_div(N, 8), 4)"]' in out.decode()
    spec = spec_of(parse_bytes(out, "k.cu"))
    assert spec is not None
    # 8192 rows of 8-row blocks, four rows per thread: 256 block rows of 256 blocks; at 37
    # rows 2 blocks wide and 2 tall (64 rows >= 37)
    assert launch_dims(spec.grid, spec.env())[:2] == (256, 256)
    assert launch_dims(spec.grid, spec.env({"N": 37}))[:2] == (2, 2)
    text = " ".join(out.decode().split())
    assert "int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4; " \
        "int col = blockIdx.x * blockDim.x + threadIdx.x; " \
        "if (y0 - MASK_OFFSET >= 0 && y0 - MASK_OFFSET + 4 + MASK_DIM - 1 <= N && " \
        "col - MASK_OFFSET >= 0 && col - MASK_OFFSET + MASK_DIM <= N) { #pragma unroll " \
        "for (int rr = 0; rr < 4; rr++) { int row = y0 + rr;" in text
    rec = gate(out, str(SPELLING), arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason


def test_the_interior_rows_load_each_matrix_row_and_the_mask_once() -> None:
    """Four rows of a 7 x 7 window share 10 matrix rows: 70 loads of the matrix and 49 of the
    mask in the unrolled interior, where the checked rows load 49 + 49 for each output."""
    out = recipe(wide())
    interior = out[:out.index(b"} else {")] + b"}\n}\n"
    assert interior.count(b"{") == interior.count(b"}")
    assert _loads(interior) == (70 + 49, 4)
    plain = interior.replace(b"__restrict__ ", b"")
    loads, stores = _loads(plain)
    assert stores == 4 and loads > 70 + 49


def test_the_rows_interior_does_not_split_its_border_again() -> None:
    out = recipe(wide())
    unit = parse_bytes(out, "k.cu")
    sites = find_sites(unit, [_skill("checked_corner_rows_to_interior_rows")], {},
                       spec_of(unit))
    assert len(sites) == 1 and not sites[0].ok and "else branch" in sites[0].reason, \
        sites[0].reason


def test_the_rows_skill_does_not_take_its_own_rows_again() -> None:
    out = _apply(wide(), "corner_stencil_rows_per_thread")
    unit = parse_bytes(out, "k.cu")
    assert find_sites(unit, [_skill("corner_stencil_rows_per_thread")], {},
                      spec_of(unit)) == []


@pytest.mark.gpu
@pytest.mark.parametrize("rpt", ["2", "4", "8"])
def test_the_spelling_recipe_verifies_on_the_gpu(rpt: str) -> None:
    """Verified against the original at its verify sizes: 64, 37 (a last thread with some of
    its rows past the matrix) and 5 (no interior thread at all)."""
    from klc.gate import gate

    src = wide()
    rec = gate(recipe(src, rpt), str(SPELLING), reference=src, reference_path=str(SPELLING),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("expected", sorted(
    p for d in SKILLS for p in (ROOT / "tests" / "golden" / d).glob("*.expected.cu")),
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
    # each row one off: the thread's rows start one row below its first
    (b"int row = y0 + rr;", b"int row = y0 + rr + 1;"),
    # an interior one column too wide: the thread of column N - 3 reads its window unchecked,
    # column N being the next row's first element
    (b"col - MASK_OFFSET + MASK_DIM <= N", b"col - MASK_OFFSET + MASK_DIM <= N + 1"),
])
def test_wrong_rows_are_found_wrong(old: bytes, new: bytes) -> None:
    from klc.gate import gate

    src = wide()
    good = recipe(src)
    bad = good.replace(old, new, 1)
    assert bad != good
    rec = gate(bad, "bad.cu", reference=src, reference_path=str(SPELLING),
               stages=("compile", "verify"))
    assert rec.verdict == "failed", rec.reason
