"""The column_split lineage (bench/lineages/column_split) and its row-split skill: the
compile-only walk (row split -> block column -> thread per column), the round trip of the
row-split step, the two learned skills in forward order on the transfer set's bias gradient
(bench/transfer/bias_grad_cols.cu, which no lineage walks) compiled by NVRTC here and
verified against the original on a GPU, and a refused rewrite that the gate finds wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.lineage import walk, write_lineage
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.reverse import Learned, learn
from klc.round_trip import apply_at_step

ROOT = Path(__file__).resolve().parents[2]
EXPERT = ROOT / "bench/lineages/column_split/expert.cu"
BIAS = ROOT / "bench/transfer/bias_grad_cols.cu"
STEPS = ["row_split_to_block_column", "block_column_reduce_to_thread_per_column"]


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("column_split")
    write_lineage(walk(EXPERT, ROOT / "passes", stages=("compile",)), d)
    return d


@pytest.fixture(scope="module")
def skills(walked: Path) -> dict[str, Learned]:
    return {item.rule.name: item for item in learn([walked], ROOT / "passes")}


def _body(source: bytes) -> str:
    text = source.decode()
    return " ".join(text[text.index("{", text.index("__global__")):].split())


def test_walk_takes_the_row_split_apart_before_the_block_column(walked: Path) -> None:
    data = json.loads((walked / "lineage.json").read_text())
    assert [v["step"]["pass"] for v in data["versions"][1:]] == STEPS
    naive = (walked / data["versions"][-1]["file"]).read_bytes()
    assert _body(naive) == ("{ int c = blockIdx.x * blockDim.x + threadIdx.x; if (c < cols) "
                            "{ float sum = 0.0f; for (int r = 0; r < rows; r++) { sum += "
                            "x[(size_t)r * cols + c]; } acc[c] += sum; } }")
    committed = sorted((ROOT / "bench/lineages/column_split/walk").glob("v*.cu"))[1:]
    assert [p.name.split("_", 1)[1][:-3] for p in committed] == STEPS


def test_row_split_round_trip(walked: Path, skills: dict[str, Learned]) -> None:
    """The skill on version 1 with the observed ?gy gives the expert back."""
    item = skills["block_column_to_row_split"]
    (o,) = item.observations
    before = (walked / o.before["file"]).read_bytes()
    after = (walked / o.version["file"]).read_bytes()
    back = apply_at_step(item.inverse, after, str(walked / o.version["file"]), o.step)
    assert _body(back) == _body(before)
    guard = str(item.rule.guard)
    for pred in ("declares_zero", "atomic_accumulator", "grid_dim", "no_stores",
                 "stride_fits", "kernel_body"):
        assert pred in guard, pred
    assert "grid_extent_is" not in guard  # pass-only: it speaks of the expert's launch


def _apply(item: Learned, source: bytes, path: str, holes: dict[str, str]) -> bytes:
    unit = parse_bytes(source, path)
    out = apply_rules(unit, [item.rule], holes, spec_of(unit))
    assert out.source != source, [s.reason for s in find_sites(unit, [item.rule], holes,
                                                                spec_of(unit))]
    return out.source


def bias_split(skills: dict[str, Learned], gy: str = "8") -> tuple[bytes, bytes]:
    """(block column, then rows split over gy blocks along y) bias gradient."""
    src = BIAS.read_bytes()
    one = _apply(skills["thread_per_column_to_block_column_reduce"], src, str(BIAS),
                 {"f": "8", "ty": "32"})
    two = _apply(skills["block_column_to_row_split"], one, str(BIAS), {"gy": gy})
    return one, two


def test_bias_gradient_is_split_over_grid_y_and_compiles(skills: dict[str, Learned]) -> None:
    from klc.gate import gate

    one, two = bias_split(skills)
    text = two.decode()
    assert ("for (int i = blockIdx.y * blockDim.y + threadIdx.y; i < BT; "
            "i += blockDim.y * gridDim.y) {") in text
    assert "atomicAdd(&dbias[o], sum);" in text and "dbias[o] += sum;" not in text
    assert 'grid: ["(ceil_div(OC, 256)) * 8", 8]' in text
    # once split, the grid is no longer one block tall: the skill does not apply again
    unit = parse_bytes(two, str(BIAS))
    assert not find_sites(unit, [skills["block_column_to_row_split"].rule], {"gy": "8"},
                          spec_of(unit))
    for version in (one, two):
        rec = gate(version, str(BIAS), arch="sm_90", stages=("compile",))
        assert rec.verdict == "passed", rec.reason


@pytest.mark.parametrize(("old", "new", "why"), [
    ("float sum = 0.0f;", "float sum = 0.5f;", "not at zero"),
    ("dbias[o] += sum;", "dbias[o] += sum * 0.5f;", None),  # not out[c] += sum: no match
    ("float* dbias", "int* dbias", "not int, the element type of `dbias`"),
    ('grid: ["(ceil_div(OC, 256)) * 8"]', 'grid: ["(ceil_div(OC, 256)) * 8", 2]', "not 2 == 1"),
])
def test_the_skill_refuses_what_it_cannot_split(skills: dict[str, Learned], old: str, new: str,
                                               why: str | None) -> None:
    one, _ = bias_split(skills)
    text = one.decode()
    assert old in text
    unit = parse_bytes(text.replace(old, new, 1).encode(), "b.cu")
    sites = find_sites(unit, [skills["block_column_to_row_split"].rule], {"gy": "8"},
                       spec_of(unit))
    if why is None:
        assert sites == []
        return
    assert len(sites) == 1 and not sites[0].ok
    assert why in sites[0].reason, sites[0].reason


@pytest.mark.gpu
@pytest.mark.parametrize("gy", ["2", "8", "64"])
def test_split_bias_gradient_verifies_on_the_gpu(skills: dict[str, Learned], gy: str) -> None:
    """The gate's verify: both steps against the original bias gradient, on fresh random
    data and a random starting dbias, at every verify size (301 x 999 and 3 x 5 included)."""
    from klc.gate import gate

    one, two = bias_split(skills, gy)
    reference = BIAS.read_bytes()
    for version in (one, two):
        rec = gate(version, str(BIAS), reference=reference, reference_path=str(BIAS),
                   stages=("compile", "verify"))
        assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_a_split_of_a_sum_that_starts_at_one_is_wrong(skills: dict[str, Learned]) -> None:
    """What declares_zero refuses: with the sum started at 0.5, each of the 8 blocks along y
    would add its 0.5; the gate finds the written-out rewrite wrong."""
    from klc.gate import gate

    _, two = bias_split(skills)
    ref = BIAS.read_text().replace("float sum = 0.0f;", "float sum = 0.5f;")
    bad = two.decode().replace("float sum = 0.0f;", "float sum = 0.5f;")
    assert bad != two.decode()
    rec = gate(bad.encode(), "bad.cu", reference=ref.encode(), reference_path="ref.cu",
               stages=("compile", "verify"))
    assert rec.verdict == "failed" and "verify" in rec.reason, rec.reason


EXPERT2 = ROOT / "bench/lineages/column_split2/expert.cu"
LNGRADS = ROOT / "bench/transfer/layernorm_param_grads.cu"


@pytest.fixture(scope="module")
def skills2(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Learned]:
    d = tmp_path_factory.mktemp("column_split2")
    write_lineage(walk(EXPERT2, ROOT / "passes", stages=("compile",)), d)
    data = json.loads((d / "lineage.json").read_text())
    assert [v["step"]["pass"] for v in data["versions"][1:]] == [
        "row_split2_to_block_column_early_return",
        "block_column_reduce2_to_thread_per_column_early_return"]
    return {item.rule.name: item for item in learn([d], ROOT / "passes")}


def layernorm_split(skills2: dict[str, Learned], gy: str = "8") -> tuple[bytes, bytes]:
    """(block column, then rows split over gy blocks) layer norm parameter gradients: the
    two-sum, early-return spelling."""
    src = LNGRADS.read_bytes()
    one = _apply(skills2["thread_per_column_to_block_column_reduce2_early_return"], src,
                 str(LNGRADS), {"f": "4", "ty": "32"})
    two = _apply(skills2["block_column2_to_row_split_early_return"], one, str(LNGRADS),
                 {"gy": gy})
    return one, two


def test_layernorm_param_grads_split_over_grid_y(skills2: dict[str, Learned]) -> None:
    from klc.gate import gate

    one, two = layernorm_split(skills2)
    text = two.decode()
    assert "for (int n = blockIdx.y * blockDim.y + threadIdx.y; n < N; " \
        "n += blockDim.y * gridDim.y) {" in text
    assert "atomicAdd(&dweight[c], dw);" in text and "atomicAdd(&dbias[c], db);" in text
    rec = gate(two, str(LNGRADS), arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason
    # one output overwritten instead of accumulated: no match (each block would overwrite)
    unit = parse_bytes(one.replace(b"dbias[c] += db;", b"dbias[c] = db;"), "l.cu")
    assert find_sites(unit, [skills2["block_column2_to_row_split_early_return"].rule],
                      {"gy": "8"}, spec_of(unit)) == []


@pytest.mark.gpu
def test_split_layernorm_param_grads_verify_on_the_gpu(skills2: dict[str, Learned]) -> None:
    from klc.gate import gate

    one, two = layernorm_split(skills2, "16")
    reference = LNGRADS.read_bytes()
    for version in (one, two):
        rec = gate(version, str(LNGRADS), reference=reference, reference_path=str(LNGRADS),
                   stages=("compile", "verify"))
        assert rec.verdict == "passed", rec.reason
