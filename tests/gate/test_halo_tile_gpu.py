"""The halo-tile skills on a GPU: every golden rewrite of direct_stencil_to_halo_tile,
direct_offset_stencil_to_halo_tile and direct_unweighted_offset_stencil_to_halo_tile that has
a spec (float and unsigned char images, radius 1 and 2, blocks of 16 x 16, 32 x 8, 32 x 16
and 32 x 32, a convolution's mask in an argument) and the first one's rewrite of the
transfer kernel blur_3x3 compute what their originals compute; a tile whose halo is loaded
one row off is found wrong by the gate, so the verification would catch a window that leaves
its tile
(``python3 -m pytest -m gpu tests/gate/test_halo_tile_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.spec import find_spec_block

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ("direct_stencil_to_halo_tile", "direct_offset_stencil_to_halo_tile",
          "direct_unweighted_offset_stencil_to_halo_tile")
CASES = sorted(p for d in SKILLS for p in (ROOT / "tests" / "golden" / d).glob("*.expected.cu")
               if find_spec_block(p.read_bytes()) is not None)
BLUR = ROOT / "bench" / "transfer" / "blur_3x3.cu"


def _tiled_blur() -> bytes:
    import klc.plugins
    from klc.pipeline import apply_rules, spec_of
    from klc.rule import RuleSet

    klc.plugins.load()
    rule = next(r for r in RuleSet.load([str(ROOT / "skills")]).rules
                if r.name == "direct_stencil_to_halo_tile")
    unit = parse_bytes(read_source(BLUR), str(BLUR))
    out = apply_rules(unit, [rule], spec=spec_of(unit)).source
    assert b"__shared__ float tile[16 + 2 * 1][16 + 2 * 1];" in out
    return out


def test_the_cases_with_a_spec_are_there() -> None:
    assert {p.name for p in CASES} >= {"gray_u8_box5.expected.cu", "halo_tile_v01.expected.cu",
                                       "halo_tile_u8_v01.expected.cu",
                                       "gauss_u8_literal.expected.cu",
                                       "conv3x3_mask.expected.cu",
                                       "halo_tile_mean_u8_v01.expected.cu",
                                       "mean_filter_u8.expected.cu"}
    # a case that only names the spec in a comment launches from its host code: not one
    assert "mean_filter_define.expected.cu" not in {p.name for p in CASES}
    assert b"int gy = blockIdx.y * blockDim.y + ty - 1;" in _tiled_blur()


@pytest.mark.gpu
@pytest.mark.parametrize("expected", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    from klc.gate import gate

    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = gate(read_source(expected), f"{expected}", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_the_tiled_transfer_blur_matches_the_original() -> None:
    from klc.gate import gate

    rec = gate(_tiled_blur(), "blur_tiled.cu", reference=read_source(BLUR),
               reference_path=str(BLUR), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_a_halo_one_row_off_is_wrong() -> None:
    """The tile's row ty loaded from the image's row blockIdx.y * 16 + ty instead of ... + ty
    - 1: the window then reads the row below each pixel it means."""
    from klc.gate import gate

    good = _tiled_blur()
    bad = good.replace(b"int gy = blockIdx.y * blockDim.y + ty - 1;",
                       b"int gy = blockIdx.y * blockDim.y + ty;")
    assert bad != good
    rec = gate(bad, "blur_bad.cu", reference=read_source(BLUR), reference_path=str(BLUR),
               stages=("compile", "verify"))
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason
