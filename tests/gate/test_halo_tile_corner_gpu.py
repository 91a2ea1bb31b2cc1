"""The halo tile of a convolution walked from its window's corner
(checked_corner_window_to_halo_tile, the halo_tile_corner lineage): every golden rewrite
compiles with NVRTC; bench/spellings/conv2d_mask_corner.cu is taken at its own 16 x 16 block
(the tile 16 + MASK_DIM - 1 square), and the interior fast path of the corner spelling
(checked_corner_window_to_interior_path) still applies to the tiled kernel; without a GPU,
``klc optimize`` leaves the tile out of its candidates for the spelling (measured slower),
saying so, and lists it compile-clean with --include-slower.
On a GPU every golden rewrite that has a spec (the bounds checked in nested ifs or in one
``&&`` chain, float and unsigned char inputs, 3 x 3, 5 x 5 and 7 x 7 windows, masks by
pointer, and the interior path's one-chain case; the 2-D ``__constant__`` mask, which the
gate leaves zero, is compiled only), the tiled spelling, and the tiled spelling with the
interior path compute what their originals compute (a 7 x 7 window at N = 64, 37 and 5:
matrices smaller than a tile, outputs whose window reaches past every edge); a tile loaded
one row off, or a window read mirrored from the tile, is found wrong; a tile padded with
ones is not (the checks stay, so what the tile holds outside the matrix is never read)
(``python3 -m pytest -m gpu tests/gate/test_halo_tile_corner_gpu.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.spec import find_spec_block

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "checked_corner_window_to_halo_tile"
# the interior path of the corner spelling reads the one-chain spelling too (nested_if)
CHAIN = ROOT / "tests" / "golden" / "checked_corner_window_to_interior_path" / \
    "conv5x5_one_chain.expected.cu"
EXPECTED = [*sorted(GOLDEN.glob("*.expected.cu")), CHAIN]
# verified on a GPU: the cases with a spec, but not a mask in __constant__ memory, which the
# gate leaves zero (every output would be 0 in both kernels: nothing checked); compiled only
CASES = [p for p in EXPECTED if find_spec_block(p.read_bytes()) is not None
         and b"__constant__" not in p.read_bytes()]
SPELLING = ROOT / "bench" / "spellings" / "conv2d_mask_corner.cu"


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


def _tiled_spelling() -> bytes:
    out = _skill("checked_corner_window_to_halo_tile", read_source(SPELLING), str(SPELLING),
                 {"byc": "16", "bxc": "16", "t": "float", "tile": "tile", "ly": "ty",
                  "lx": "tx", "gy": "gr", "gx": "gc"})
    assert b"__shared__ float tile[16 + MASK_DIM - 1][16 + MASK_DIM - 1];" in out
    assert b"int gr = blockIdx.y * blockDim.y + ty - MASK_OFFSET;" in out
    assert b"? matrix[gr * N + gc] : 0;" in out
    assert b"temp += tile[threadIdx.y + i][threadIdx.x + j] * mask[i * MASK_DIM + j];" in out
    # the checks stay: the mask's entry is multiplied by nothing read outside the matrix
    assert out.count(b"if ((start_r + i) >= 0 && (start_r + i) < N) {") == 1
    assert b"matrix[(start_r + i)" not in out
    return out


def _tiled_with_interior_path() -> bytes:
    out = _skill("checked_corner_window_to_interior_path", _tiled_spelling(), "conv_tiled.cu")
    assert b"if (start_r >= 0 && start_r + MASK_DIM <= N && start_c >= 0" in out
    assert out.count(b"temp += tile[threadIdx.y + i][threadIdx.x + j]") == 2
    return out


def _ids(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


def test_the_cases_are_there() -> None:
    assert "conv5x5_constant_mask_rc.expected.cu" in {p.name for p in EXPECTED} - {
        p.name for p in CASES}
    assert {p.name for p in CASES} >= {"halo_tile_corner_v01.expected.cu",
                                      "conv2d_mask_corner.expected.cu",
                                      "conv3x3_one_chain_u8.expected.cu",
                                      "conv5x5_one_chain.expected.cu"}


@pytest.mark.parametrize("expected", EXPECTED, ids=_ids)
def test_each_golden_rewrite_compiles(expected: Path) -> None:
    from klc.gate import gate

    rec = gate(read_source(expected), str(expected), stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


def test_the_spelling_is_tiled_at_its_own_block_and_compiles() -> None:
    from klc.gate import gate

    for name, source in (("conv_tiled.cu", _tiled_spelling()),
                         ("conv_tiled_interior.cu", _tiled_with_interior_path())):
        rec = gate(source, name, stages=("compile",))
        assert rec.stages["compile"].status == "passed", rec.reason


def test_the_tile_is_a_hole_the_block_fixes() -> None:
    """At a 32 x 8 block the same skill stages a 14 x 38 tile; a tile extent that is not the
    block's is refused with the reason."""
    from klc.pipeline import apply_rules, spec_of
    from klc.rule import RuleSet

    src = read_source(SPELLING).replace(b"block: [16, 16]", b"block: [32, 8]").replace(
        b'grid: ["ceil_div(N, 16)", "ceil_div(N, 16)"]',
        b'grid: ["ceil_div(N, 32)", "ceil_div(N, 8)"]')
    out = _skill("checked_corner_window_to_halo_tile", src, "conv_32x8.cu")
    assert b"__shared__ float tile[8 + MASK_DIM - 1][32 + MASK_DIM - 1];" in out
    rule = next(r for r in RuleSet.load([str(ROOT / "skills")]).rules
                if r.name == "checked_corner_window_to_halo_tile")
    unit = parse_bytes(src, "conv_32x8.cu")
    refused = apply_rules(unit, [rule], {"byc": "16", "bxc": "32"}, spec=spec_of(unit))
    assert not refused.changed
    assert any("block.y is 8" in s.reason for s in refused.refused), refused.refused


def test_optimize_lists_the_tile_only_when_asked_for_slower_skills(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The tile measured slower on the H200 (its card's verdict): klc optimize's static
    candidates (no GPU needed) for the spelling leave it out, saying so, and hold it with
    --include-slower, at the spelling's own block, compile-clean, with its 22 x 22 floats of
    shared memory."""
    from klc.cli import main
    from klc.gate import gpu_status

    if gpu_status()[0] is not None:
        pytest.skip("with a GPU, optimize gates the candidates instead of listing them")
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
    rc = main(["optimize", str(SPELLING), "--json"])
    assert rc == 1
    out = json.loads(capsys.readouterr().out)
    assert not [c for c in out["static_candidates"]
                if c["skill"] == "checked_corner_window_to_halo_tile"]
    assert any(n.startswith("checked_corner_window_to_halo_tile") and "slower" in n
               for n in out["notes"]), out["notes"]
    rc = main(["optimize", str(SPELLING), "--json", "--include-slower"])
    assert rc == 1
    cands = json.loads(capsys.readouterr().out)["static_candidates"]
    tile = [c for c in cands if c["skill"] == "checked_corner_window_to_halo_tile"]
    assert tile and tile[0]["ok"], cands
    assert tile[0]["values"]["byc"] == "16" and tile[0]["values"]["bxc"] == "16"
    assert tile[0]["resources"]["static_smem"] == 22 * 22 * 4


def _verify(candidate: bytes, name: str, reference: Path) -> object:
    from klc.gate import gate

    return gate(candidate, name, reference=read_source(reference), reference_path=str(reference),
                stages=("compile", "verify"))


@pytest.mark.gpu
@pytest.mark.parametrize("expected", CASES, ids=_ids)
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = _verify(read_source(expected), str(expected), original)
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_the_tiled_spelling_matches_the_original() -> None:
    for name, source in (("conv_tiled.cu", _tiled_spelling()),
                         ("conv_tiled_interior.cu", _tiled_with_interior_path())):
        rec = _verify(source, name, SPELLING)
        assert rec.verdict == "passed", (name, rec.reason)


@pytest.mark.gpu
@pytest.mark.parametrize("old,new", [
    (b"ty - MASK_OFFSET;", b"ty - MASK_OFFSET + 1;"),
    (b"tile[threadIdx.y + i][threadIdx.x + j]",
     b"tile[threadIdx.y + i][threadIdx.x + (MASK_DIM - 1 - j)]"),
], ids=["tile_one_row_off", "window_mirrored"])
def test_a_tile_off_by_one_is_found(old: bytes, new: bytes) -> None:
    good = _tiled_spelling()
    bad = good.replace(old, new, 1)
    assert bad != good
    rec = _verify(bad, "conv_bad.cu", SPELLING)
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason


@pytest.mark.gpu
def test_the_padding_is_never_read() -> None:
    good = _tiled_spelling()
    ones = good.replace(b"? matrix[gr * N + gc] : 0;", b"? matrix[gr * N + gc] : 1;")
    assert ones != good
    rec = _verify(ones, "conv_ones.cu", SPELLING)
    assert rec.verdict == "passed", rec.reason
