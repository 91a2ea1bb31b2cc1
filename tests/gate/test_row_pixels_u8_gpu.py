"""row_pixels_per_thread, row_pixels_uchar4_store and row_pixels_interior_path on a GPU: the
golden rewrites that carry a klc-spec (an 8-bit mean of a `uchar` typedef, a float
threshold), the first-image-kernel spelling bench/spellings/mean_filter_u8.cu rewritten by the
three skills (verified at widths that are no multiple of 4, an image narrower than four
pixels), and the row_pixels_u8 expert against its walk's first version compute what their
originals compute; four results stored in the wrong lanes of the uchar4, and an interior path
that takes in the last column, are found wrong by the gate
(``python3 -m pytest -m gpu tests/gate/test_row_pixels_u8_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
CASES = [GOLDEN / "row_pixels_per_thread" / "mean_uchar_typedef_rows_first.expected.cu",
         GOLDEN / "row_pixels_uchar4_store" / "mean_uchar_typedef_quad.expected.cu",
         GOLDEN / "row_pixels_interior_path" / "mean_uchar_typedef_quad_store.expected.cu"]
SPELLING = ROOT / "bench" / "spellings" / "mean_filter_u8.cu"
WALK = ROOT / "bench" / "lineages" / "row_pixels_u8" / "walk"
STORE = b"make_uchar4(res[0], res[1], res[2], res[3])"
INTERIOR = b"if (row >= R && row < H - R && col0 >= R && col0 + 4 <= W - R) {"


def _rewritten_spelling() -> bytes:
    import klc.plugins
    from klc.pipeline import apply_rules, spec_of
    from klc.rule import RuleSet

    klc.plugins.load()
    rules = {r.name: r for r in RuleSet.load([str(ROOT / "skills")]).rules}
    source = read_source(SPELLING)
    for name in ("row_pixels_per_thread", "row_pixels_uchar4_store", "row_pixels_interior_path"):
        unit = parse_bytes(source, str(SPELLING))
        out = apply_rules(unit, [rules[name]], spec=spec_of(unit))
        assert out.changed, (name, [s.reason for s in out.refused])
        source = out.source
    return source


def test_the_spelling_gets_four_pixels_their_uchar4_store_and_interior() -> None:
    out = _rewritten_spelling()
    assert out.count(b"int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;") == 1
    assert out.count(STORE) == 1
    assert out.count(INTERIOR) == 1
    # the other threads keep the checked windows
    assert out.count(b"if (r >= 0 && r < H && c >= 0 && c < W) {") == 1
    assert b'grid: ["ceil_div(ceil_div(W, 16), 4)", "ceil_div(H, 16)"]' in out


def test_the_rewritten_spelling_compiles() -> None:
    from klc.gate import gate

    rec = gate(_rewritten_spelling(), "mean_filter_u8_quad.cu", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("expected", CASES, ids=lambda p: p.name)
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    from klc.gate import gate

    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = gate(read_source(expected), f"{expected}", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_the_rewritten_spelling_matches_the_original() -> None:
    from klc.gate import gate

    rec = gate(_rewritten_spelling(), "mean_filter_u8_quad.cu",
               reference=read_source(SPELLING), reference_path=str(SPELLING),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_the_expert_matches_its_first_version() -> None:
    from klc.gate import gate

    first = WALK / "v04_row_pixels_to_one_pixel.cu"
    rec = gate(read_source(WALK / "v00_expert.cu"), "row_pixels_u8_expert.cu",
               reference=read_source(first), reference_path=str(first),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_results_in_the_wrong_lanes_are_wrong() -> None:
    """The first two results traded in the uchar4: every aligned quad of a row whose first two
    means differ comes out wrong."""
    from klc.gate import gate

    good = _rewritten_spelling()
    bad = good.replace(STORE, b"make_uchar4(res[1], res[0], res[2], res[3])")
    assert bad != good
    rec = gate(bad, "mean_filter_u8_bad.cu", reference=read_source(SPELLING),
               reference_path=str(SPELLING), stages=("compile", "verify"))
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason


@pytest.mark.gpu
def test_an_interior_that_takes_in_the_last_column_is_wrong() -> None:
    """c0 + 4 <= W in place of c0 + 4 <= W - R: a thread whose last pixel is the row's last
    column adds, unchecked, the first pixels of the next rows and counts nine pixels, not six
    (the image's last row stays out, so every read is inside the buffer)."""
    from klc.gate import gate

    good = _rewritten_spelling()
    bad = good.replace(INTERIOR,
                       b"if (row >= R && row < H - R - 1 && col0 >= R && col0 + 4 <= W) {")
    assert bad != good
    rec = gate(bad, "mean_filter_u8_bad.cu", reference=read_source(SPELLING),
               reference_path=str(SPELLING), stages=("compile", "verify"))
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason
