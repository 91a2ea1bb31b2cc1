"""The zero-filled and clamped halo tiles (clipped_window_to_zero_fill_halo_tile,
checked_window_to_zero_fill_halo_tile, zero_padded_window_to_halo_tile,
clamped_window_to_halo_tile, clamped_unweighted_window_to_halo_tile) and the rows per thread
of a zero-filled tile (zero_fill_halo_tile_rows_per_thread): every golden rewrite compiles
with NVRTC, and the transfer kernel blur_3x3 is taken by the clipped window's skill, then by
the rows per thread.
On a GPU every golden rewrite that has a spec (float and unsigned char images, radius 1 and 2,
16 x 16 and 32 x 8 blocks, verified at odd sizes and at images smaller than a tile) and the
rewritten blur_3x3 compute exactly what their originals compute, counts at the border
included; a tile padded with ones instead of zeros, a count one column short, or a tile
whose rows are clamped one short of the image, is found wrong
(``python3 -m pytest -m gpu tests/gate/test_stencil_tiles_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.spec import find_spec_block

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ("clipped_window_to_zero_fill_halo_tile", "checked_window_to_zero_fill_halo_tile",
          "zero_padded_window_to_halo_tile", "clamped_window_to_halo_tile",
          "zero_fill_halo_tile_rows_per_thread", "clamped_unweighted_window_to_halo_tile")
EXPECTED = sorted(p for d in SKILLS for p in (ROOT / "tests" / "golden" / d).glob("*.expected.cu"))
CASES = [p for p in EXPECTED if find_spec_block(p.read_bytes()) is not None]
BLUR = ROOT / "bench" / "transfer" / "blur_3x3.cu"


def _skill(name: str, source: bytes, path: str, holes: dict[str, str] | None = None) -> bytes:
    import klc.plugins
    from klc.pipeline import apply_rules, spec_of
    from klc.rule import RuleSet

    klc.plugins.load()
    rule = next(r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == name)
    unit = parse_bytes(source, path)
    out = apply_rules(unit, [rule], holes or {}, spec=spec_of(unit))
    assert out.changed, [s.reason for s in out.refused]
    return out.source


def _tiled_blur() -> bytes:
    out = _skill("clipped_window_to_zero_fill_halo_tile", read_source(BLUR), str(BLUR))
    assert b"__shared__ float tile[16 + 2 * 1][16 + 2 * 1];" in out
    return out


def _rows_blur(rpt: str) -> bytes:
    out = _skill("zero_fill_halo_tile_rows_per_thread", _tiled_blur(), "blur_tiled.cu",
                 {"rpt": rpt})
    assert f"__shared__ float tile[16 * {rpt} + 2 * 1][16 + 2 * 1];".encode() in out
    assert f'"ceil_div(ceil_div(H, 16), {rpt})"'.encode() in out
    return out


def _ids(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


def test_the_cases_are_there() -> None:
    names = {p.name for p in CASES}
    assert names >= {"halo_tile_zero_fill_v02.expected.cu",
                     "box_u8_radius2_early_return.expected.cu",
                     "halo_tile_zero_fill_u8_v02.expected.cu", "blur_float_if_block.expected.cu",
                     "halo_tile_zero_pad_v02.expected.cu", "box_u8_radius2_fixed.expected.cu",
                     "halo_tile_clamp_v02.expected.cu", "gauss3x3_u8_replicate.expected.cu",
                     "halo_tile_rows_v01.expected.cu", "box_u8_radius2_tiled.expected.cu",
                     "halo_tile_clamp_u8_v02.expected.cu",
                     "box3x3_float_replicate_if_block.expected.cu"}
    # launched from its own host code, without a spec: compiled below, not verified
    assert "mean3x3_host_launch.expected.cu" in {p.name for p in EXPECTED} - names


@pytest.mark.parametrize("expected", EXPECTED, ids=_ids)
def test_each_golden_rewrite_compiles(expected: Path) -> None:
    from klc.gate import gate

    rec = gate(read_source(expected), str(expected), stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


def test_the_transfer_blur_is_tiled_with_its_window_unrolled_and_compiles() -> None:
    from klc.gate import gate

    out = _tiled_blur()
    assert b"? img[gy * W + gx] : 0;" in out
    assert b"for (int yy = y - 1; yy <= y + 1; yy++) {" in out
    assert (b"count += (min(y + 1, H - 1) - max(y - 1, 0) + 1) * "
            b"(min(x + 1, W - 1) - max(x - 1, 0) + 1);") in out
    rec = gate(out, "blur_zero_fill.cu", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("expected", CASES, ids=_ids)
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    from klc.gate import gate

    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = gate(read_source(expected), f"{expected}", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_the_tiled_transfer_blur_matches_the_original() -> None:
    from klc.gate import gate

    rec = gate(_tiled_blur(), "blur_zero_fill.cu", reference=read_source(BLUR),
               reference_path=str(BLUR), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


def test_the_tiled_blur_takes_rows_per_thread_and_compiles() -> None:
    from klc.gate import gate

    for rpt in ("2", "8"):
        rec = gate(_rows_blur(rpt), f"blur_rows{rpt}.cu", stages=("compile",))
        assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("rpt", ["2", "4", "8"])
def test_the_blur_with_rows_per_thread_matches_the_original(rpt: str) -> None:
    from klc.gate import gate

    rec = gate(_rows_blur(rpt), f"blur_rows{rpt}.cu", reference=read_source(BLUR),
               reference_path=str(BLUR), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("old,new", [
    (b"? img[gy * W + gx] : 0;", b"? img[gy * W + gx] : 1;"),
    (b"(min(x + 1, W - 1) - max(x - 1, 0) + 1);", b"(min(x + 1, W - 1) - max(x - 1, 0));"),
], ids=["padded_with_ones", "count_one_column_short"])
def test_a_wrong_padding_or_count_is_found(old: bytes, new: bytes) -> None:
    from klc.gate import gate

    good = _tiled_blur()
    bad = good.replace(old, new)
    assert bad != good
    rec = gate(bad, "blur_bad.cu", reference=read_source(BLUR), reference_path=str(BLUR),
               stages=("compile", "verify"))
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason


GAUSS = ROOT / "tests" / "golden" / "clamped_window_to_halo_tile" / "gauss3x3_u8_replicate.cu"


@pytest.mark.gpu
def test_a_tile_clamped_otherwise_than_its_window_is_found() -> None:
    """The tile's rows clamped to H - 2: the last row's window reads the row above where the
    original replicates the last row."""
    from klc.gate import gate

    good = read_source(GAUSS.with_name("gauss3x3_u8_replicate.expected.cu"))
    bad = good.replace(b"ty - 1, 0), H - 1);", b"ty - 1, 0), H - 2);")
    assert bad != good
    rec = gate(bad, "gauss_bad.cu", reference=read_source(GAUSS), reference_path=str(GAUSS),
               stages=("compile", "verify"))
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason
