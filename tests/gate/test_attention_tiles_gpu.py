"""The attention tile skills (skills/attention_tiles.rule) on the transfer kernels and on a GPU:
thread_per_output_to_value_tiles rewrites bench/transfer/attention_value_sum.cu as it stands,
lane_keys_to_warp_key_tile rewrites bench/transfer/attention_scores_softmax.cu once
thread_per_row_to_warp_per_row has given it a warp per row (the order of the
attention_key_tile recipe), and both compile with NVRTC; on a GPU every golden rewrite with a
spec and both transfer rewrites compute what their originals compute, the experts compute what
their walks' naive ends do, and a tile that mixes up its rows is found wrong
(``python3 -m pytest -m gpu tests/gate/test_attention_tiles_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes, read_source
from klc.spec import find_spec_block

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ("thread_per_output_to_value_tiles", "lane_keys_to_warp_key_tile")
CASES = sorted(p for d in SKILLS for p in (ROOT / "tests" / "golden" / d).glob("*.expected.cu")
               if find_spec_block(p.read_bytes()) is not None)
VALUES = ROOT / "bench" / "transfer" / "attention_value_sum.cu"
SCORES = ROOT / "bench" / "transfer" / "attention_scores_softmax.cu"
LINEAGES = ROOT / "bench" / "lineages"


def _apply(source: bytes, path: str, *names: str, holes: dict[str, str] | None = None) -> bytes:
    import klc.plugins
    from klc.pipeline import apply_rules, spec_of
    from klc.rule import RuleSet

    klc.plugins.load()
    rules = {r.name: r for r in RuleSet.load([str(ROOT / "skills")]).rules}
    for name in names:
        unit = parse_bytes(source, path)
        out = apply_rules(unit, [rules[name]], holes or {}, spec=spec_of(unit)).source
        assert out != source, f"{name} did not rewrite {path}"
        source = out
    return source


def _tiled_values(**holes: str) -> bytes:
    return _apply(read_source(VALUES), str(VALUES), "thread_per_output_to_value_tiles",
                  holes=dict(holes))


def _tiled_scores() -> bytes:
    return _apply(read_source(SCORES), str(SCORES), "thread_per_row_to_warp_per_row",
                  "lane_keys_to_warp_key_tile")


def test_the_value_tiles_take_the_transfer_kernel_and_compile() -> None:
    from klc.gate import gate

    out = _tiled_values()
    # the learned geometry: a 128 x 64 tile of 16 x 16 threads, 8 x 4 outputs each
    assert b"__shared__ float as[8][16 * 8 + 4];" in out
    assert b"for (int tile = blockIdx.x; tile < BH * ntt * nti; tile += gridDim.x)" in out
    # each element is addressed by the transfer kernel's own unpacking, replayed
    assert out.count(b"int t = (idx / HS) % T;") == 3
    rec = gate(out, "values_tiled.cu", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason
    # another thread grid of the same block: 8 x 32 threads, 16 x 2 outputs each
    other = _tiled_values(gy="8", gx="32", rm="8", rn="2", tk="16")
    assert b"__shared__ float as[16][8 * 8 + 4];" in other
    rec = gate(other, "values_tiled_8x32.cu", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


def test_the_value_tiles_refuse_a_thread_grid_that_is_not_the_block() -> None:
    import klc.plugins
    from klc.pipeline import find_sites, spec_of
    from klc.rule import RuleSet

    klc.plugins.load()
    rule = next(r for r in RuleSet.load([str(ROOT / "skills")]).rules
                if r.name == "thread_per_output_to_value_tiles")
    unit = parse_bytes(read_source(VALUES), str(VALUES))
    (site,) = find_sites(unit, [rule], {"gy": "8", "gx": "16"}, spec=spec_of(unit))
    assert not site.ok and "256 != 16 * 8" in site.reason


def test_the_key_tile_takes_the_transfer_kernel_after_the_warp_and_compiles() -> None:
    from klc.gate import gate

    out = _tiled_scores()
    assert b"__shared__ float keys[256 / 32][32][32 + 1];" in out
    assert out.count(b"__syncwarp();") == 2
    rec = gate(out, "scores_tiled.cu", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


def test_the_cases_with_a_spec_are_there() -> None:
    assert {p.name for p in CASES} >= {"transfer_attention_value_sum.expected.cu",
                                       "direct_indexing.expected.cu",
                                       "scaled_store_128.expected.cu",
                                       "transfer_scores_warp_rows.expected.cu",
                                       "warp_scores_bits.expected.cu"}


@pytest.mark.gpu
@pytest.mark.parametrize("expected", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_golden_rewrite_matches_its_original(expected: Path) -> None:
    from klc.gate import gate

    original = expected.with_name(expected.name.replace(".expected.cu", ".cu"))
    rec = gate(read_source(expected), f"{expected}", reference=read_source(original),
               reference_path=str(original), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("family", ["attention_key_tile", "attention_value_tile"])
def test_each_expert_matches_its_naive_end(family: str) -> None:
    from klc.gate import gate

    expert = LINEAGES / family / "expert.cu"
    naive = max((LINEAGES / family / "walk").glob("v*.cu"))
    rec = gate(read_source(expert), str(expert), reference=read_source(naive),
               reference_path=str(naive), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_the_tiled_transfer_kernels_match_the_originals() -> None:
    from klc.gate import gate

    for out, original in ((_tiled_values(), VALUES), (_tiled_scores(), SCORES)):
        rec = gate(out, f"{original.stem}_tiled.cu", reference=read_source(original),
                   reference_path=str(original), stages=("compile", "verify"))
        assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_tiles_that_mix_up_their_rows_are_wrong() -> None:
    """The value tile taking the key one past each row's query (its loads' mask and its
    unmasked step one key late), and the key tile's lane reading its neighbour's key row."""
    from klc.gate import gate

    values = _tiled_values()
    # (steps start at multiples of 8 and rows at multiples of 128: the diagonal step itself
    # taken unmasked, with the key past each row's query loaded)
    early = values.replace(b"if (k0 + 8 <= t0 + 1) {", b"if (k0 <= t0) {") \
        .replace(b"t2 <= t) ? att_row[t2]", b"t2 <= t + 1) ? att_row[t2]")
    assert early.count(b"if (k0 <= t0) {") == 1 and early.count(b"t2 <= t + 1)") == 1
    scores = _tiled_scores()
    neighbour = scores.replace(b"keys[threadIdx.x / 32][lane][i - i0]",
                               b"keys[threadIdx.x / 32][(lane + 1) % 32][i - i0]")
    assert neighbour != scores
    for bad, original in ((early, VALUES), (neighbour, SCORES)):
        rec = gate(bad, "bad.cu", reference=read_source(original),
                   reference_path=str(original), stages=("compile", "verify"))
        assert rec.verdict != "passed", rec.reason
