"""The row_pixels_u8_rows lineage (bench/lineages/row_pixels_u8_rows) and its skills: the
compile-only walk (the 32-bit word loads, the row sums in registers and the rows per thread
taken off, then the row_pixels passes down to one pixel per thread), and the learned skills
continuing the row_pixels_u8 recipe on bench/spellings/mean_filter_u8.cu: the recipe forward
reaches the word loads from the naive filter, or from where the row_pixels_u8 recipe stops;
the interior loads each image row with one 32-bit load (PTX); and on a GPU the rewrites give
the naive filter's bytes exactly at widths that are and are not multiples of 4, ragged
heights, tiny images and a single row, while wrong rewrites are found wrong."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.lineage import walk, write_lineage
from klc.pipeline import apply_rules, spec_of
from klc.recipes import load, replay
from klc.reverse import Learned, learn
from klc.rule import Rule, RuleSet

ROOT = Path(__file__).resolve().parents[2]
FAMILY = ROOT / "bench/lineages/row_pixels_u8_rows"
MEAN = ROOT / "bench/spellings/mean_filter_u8.cu"
SKILLS = ROOT / "skills"
NEW = ("row_pixels_rows_per_thread", "row_pixels_row_sums", "row_pixels_word_row_loads")


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("row_pixels_u8_rows")
    write_lineage(walk(FAMILY / "expert.cu", ROOT / "passes", stages=("compile",)), d)
    return d


@pytest.fixture(scope="module")
def learned(walked: Path) -> dict[str, Learned]:
    return {item.rule.name: item for item in learn([walked], ROOT / "passes")}


def _rules() -> dict[str, Rule]:
    return {r.name: r for r in RuleSet.load([str(SKILLS)]).rules}


def _apply(src: bytes, name: str, holes: dict[str, str] | None = None) -> bytes:
    unit = parse_bytes(src, "k.cu")
    out = apply_rules(unit, [_rules()[name]], holes or {}, spec_of(unit)).source
    assert out != src, name
    return out


def _timed(family: str):  # type: ignore[no-untyped-def]
    """The family's recipe, every step timed faster than the last where the walk timed
    nothing (a compile-only walk's recipe holds no times yet)."""
    rec = next(r for r in load([SKILLS]) if r.family == family)
    for i, s in enumerate(rec.steps):
        if s.before_us is None or s.after_us is None:
            s.before_us, s.after_us = 100.0 * 0.8 ** i, 100.0 * 0.8 ** (i + 1)
    return rec


def _replay(family: str, src: bytes) -> bytes:
    rp = replay(_timed(family), src, str(MEAN), _rules())
    assert rp is not None
    return rp.source


def _ptx(src: bytes) -> str:
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(src.decode(), "k.cu", [], [])
    nvrtc.compileProgram(prog, ["--gpu-architecture=compute_90", "-default-device"])
    return nvrtc.getPTX(prog).decode()


def _body(text: str, name: str) -> str:
    """The code from the first #define on, the kernel's name and the rows' now unused
    #define aside."""
    text = text[text.index("#define R 1"):].replace("#define ROWS 4\n", "")
    return " ".join(text.split()).replace(name, "K")


def test_the_walk_takes_each_optimization_off(walked: Path) -> None:
    data = json.loads((walked / "lineage.json").read_text())
    assert [v["step"]["pass"] for v in data["versions"][1:]] == [
        "row_pixels_word_rows_to_bytes", "row_pixels_row_sums_to_rows",
        "row_pixels_rows_to_one", "remove_const_param", "row_pixels_interior_to_checked",
        "row_pixels_uchar4_store_to_bytes", "row_pixels_to_one_pixel"]
    assert data["versions"][3]["step"]["launch"] == [["grid", "y", "*", 4]]
    assert data["versions"][3]["step"]["facts_before"]["block"] == [32, 8, 1]
    # three steps down, the row_pixels_u8 expert but for the kernel's name and its block
    three = (walked / "v03_row_pixels_rows_to_one.cu").read_text()
    theirs = (ROOT / "bench/lineages/row_pixels_u8/expert.cu").read_text()
    assert _body(three, "mean_filter_3x3_u8_rows") == _body(theirs, "mean_filter_3x3_u8_x4")


def test_the_walk_learns_the_committed_skills(learned: dict[str, Learned]) -> None:
    committed = _rules()
    for name in NEW:
        assert learned[name].rule.anchor == committed[name].anchor
        assert learned[name].rule.guard == committed[name].guard
    text = (SKILLS / "row_pixels_rows.rule").read_text()
    for conjunct in ("equals($R, 1)", 'elem_type($SRC, "unsigned char")',
                     "grid_rows_cover($H, ?rpt)", "no_alias($SRC, $DST)",
                     'elem_type($H, "int")', "byte_integer($DST)"):
        assert conjunct in text


def test_the_recipe_takes_the_naive_filter_to_word_loads() -> None:
    from klc.gate import gate

    out = _replay("row_pixels_u8_rows", read_source(MEAN))
    text = " ".join(out.decode().split())
    assert 'grid: ["ceil_div(ceil_div(W, 16), 4)", "ceil_div(ceil_div(H, 16), 4)"]' in text
    assert "int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4; " \
        "int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * 4; " \
        "if (row0 >= R && row0 + 4 + R <= H && col0 >= R && col0 + 4 + R <= W && W % 4 == 0 " \
        "&& ((reinterpret_cast<unsigned long long>(src) " \
        "| reinterpret_cast<unsigned long long>(dst)) & 3) == 0) { int hs[4 + 2 * R][4];" \
        in text
    assert "unsigned int word = *reinterpret_cast<const unsigned int*>(p);" in text
    assert "} else { for (int rr = 0; rr < 4; rr++) { int row = row0 + rr; " \
        "if (row >= H) return; unsigned char res[4];" in text
    rec = gate(out, str(MEAN), arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason


def test_the_skills_continue_the_row_pixels_u8_recipe() -> None:
    """Where the row_pixels_u8 recipe leaves the filter (its expert's shape), this lineage's
    recipe goes on from its rows per thread: the same kernel as the whole recipe from the
    start."""
    src = read_source(MEAN)
    theirs = _replay("row_pixels_u8", src)
    assert b"make_uchar4" in theirs and b"row0" not in theirs
    rp = replay(_timed("row_pixels_u8_rows"), theirs, str(MEAN), _rules())
    assert rp is not None and rp.recipe.steps[rp.start].skill == "row_pixels_rows_per_thread"
    assert rp.source == _replay("row_pixels_u8_rows", src)


def test_the_interior_loads_each_row_once_in_a_word() -> None:
    """Six image rows for four output rows of four pixels: one 32-bit load and two byte
    loads per row, four 32-bit stores, in the interior branch."""
    out = _replay("row_pixels_u8_rows", read_source(MEAN))
    interior = out[:out.index(b"} else {")] + b"}\n}\n"
    assert interior.count(b"{") == interior.count(b"}")
    ptx = _ptx(interior)
    loads = re.findall(r"\bld\.global[.\w]*", ptx)
    stores = re.findall(r"\bst\.global[.\w]*", ptx)
    assert sorted(loads) == ["ld.global.u32"] * 6 + ["ld.global.u8"] * 12, loads
    assert stores == ["st.global.v4.u8"] * 4, stores


def test_a_radius_two_mean_takes_the_row_sums_but_not_the_word_loads() -> None:
    from klc.pipeline import find_sites

    src = read_source(ROOT / "tests/golden/row_pixels_row_sums/mean_5x5_rows.cu")
    out = _apply(src, "row_pixels_row_sums")
    unit = parse_bytes(out, "k.cu")
    sites = find_sites(unit, [_rules()["row_pixels_word_row_loads"]], {}, spec_of(unit))
    assert len(sites) == 1 and not sites[0].ok and "not 2 == 1" in sites[0].reason


# Verified at widths that are multiples of 4 (the word path) and that are not (the rows loop
# everywhere), heights that end inside a thread's rows, images narrower than a thread's four
# pixels or shorter than its rows, and a single row.
SIZES = (b"verify_sizes:\n  - {H: 64, W: 256}\n  - {H: 37, W: 100}\n  - {H: 37, W: 101}\n"
         b"  - {H: 19, W: 130}\n  - {H: 9, W: 12}\n  - {H: 3, W: 5}\n  - {H: 1, W: 7}\n"
         b"  - {H: 6, W: 2}\n")
INTS = b"init: \"randint(0, 256)\""


def _sized(src: bytes) -> bytes:
    head, rest = src.split(b"verify_sizes:\n", 1)
    rest = rest[rest.index(b"args:"):].replace(b"init: \"uniform(0, 255)\"", INTS, 1)
    return head + SIZES + rest


@pytest.mark.gpu
@pytest.mark.parametrize("rpt", ["2", "4", "8"])
def test_the_word_filter_verifies_on_the_gpu(rpt: str) -> None:
    from klc.gate import gate

    src = _sized(read_source(MEAN))
    out = _apply(src, "row_pixels_per_thread", {"px": "4"})
    out = _apply(_apply(out, "row_pixels_uchar4_store"), "row_pixels_interior_path")
    out = _apply(out, "row_pixels_rows_per_thread", {"rpt": rpt})
    out = _apply(_apply(out, "row_pixels_row_sums"), "row_pixels_word_row_loads")
    assert b"unsigned int word" in out
    rec = gate(out, str(MEAN), reference=src, reference_path=str(MEAN),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("expected", sorted(
    p for d in NEW for p in (ROOT / "tests" / "golden" / d).glob("*.expected.cu")),
    ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    from klc.gate import gate

    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = gate(read_source(expected), str(expected), reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize(("old", "new"), [
    # the first group of a row in the word path: p[-1] is the row above's last pixel
    (b"col0 >= R && col0 + 4 + R", b"col0 >= 0 && col0 + 4 + R"),
    # the last group: p[4] is the next row's first pixel
    (b"col0 + 4 + R <= W", b"col0 + 4 <= W"),
    # rows that do not start 4-byte aligned (W = 101) in the word path: a misaligned load
    (b"W % 4 == 0", b"W % 1 == 0"),
    # the bytes of the word in the wrong order
    (b"(word & 255) + ((word >> 8) & 255) + ((word >> 16) & 255)",
     b"(word >> 24) + ((word >> 8) & 255) + ((word >> 16) & 255)"),
    # the row sums of the wrong image rows
    (b"sum += hs[rr + R + dy][k];", b"sum += hs[rr + R][k];"),
])
def test_wrong_rewrites_are_found_wrong(old: bytes, new: bytes) -> None:
    from klc.gate import gate

    src = _sized(read_source(MEAN))
    good = _replay("row_pixels_u8_rows", src)
    bad = good.replace(old, new, 1)
    assert bad != good
    rec = gate(bad, "bad.cu", reference=src, reference_path=str(MEAN),
               stages=("compile", "verify"))
    assert rec.verdict == "failed", rec.reason
