"""The class_count_i64 lineage (bench/lineages/class_count_i64) and the wide grid-stride
skill: the compile-only walk (the cast grid-stride loop, then the private histogram), and the
two learned skills composed in forward order on the transfer set's int64 bincount
(bench/transfer/bincount_labels.cu, which no lineage walks): privatised by
``privatize_atomic_histogram``, then coarsened by ``grid_stride_loop_wide`` with its cast
kept, compiled by NVRTC here and verified against the original on a GPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.lineage import walk, write_lineage
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.reverse import Learned, learn

ROOT = Path(__file__).resolve().parents[2]
EXPERT = ROOT / "bench/lineages/class_count_i64/expert.cu"
BINCOUNT = ROOT / "bench/transfer/bincount_labels.cu"
STEPS = ["grid_stride_wide_to_one_per_thread", "privatized_histogram_to_global_atomics",
         "remove_const_param"]


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("class_count_i64")
    write_lineage(walk(EXPERT, ROOT / "passes", stages=("compile",)), d)
    return d


@pytest.fixture(scope="module")
def skills(walked: Path) -> dict[str, Learned]:
    return {item.rule.name: item for item in learn([walked], ROOT / "passes")}


def _body(source: bytes) -> str:
    text = source.decode()
    return " ".join(text[text.index("{", text.index("__global__")):].split())


def test_walk_peels_the_wide_grid_stride_loop_then_the_private_histogram(walked: Path) -> None:
    data = json.loads((walked / "lineage.json").read_text())
    assert [v["step"]["pass"] for v in data["versions"][1:]] == STEPS
    naive = (walked / data["versions"][-1]["file"]).read_bytes()
    assert _body(naive) == ("{ long i = (long)blockIdx.x * blockDim.x + threadIdx.x; "
                            "if (i < n) { atomicAdd(&counts[labels[i]], 1); } }")
    committed = sorted((ROOT / "bench/lineages/class_count_i64/walk").glob("v*.cu"))[1:]
    assert [p.name.split("_", 1)[1][:-3] for p in committed] == STEPS


def _apply(item: Learned, source: bytes, path: str, holes: dict[str, str]) -> bytes:
    unit = parse_bytes(source, path)
    out = apply_rules(unit, [item.rule], holes, spec_of(unit))
    assert out.source != source, [s.reason for s in find_sites(unit, [item.rule], holes,
                                                                spec_of(unit))]
    return out.source


def coarsened_bincount(skills: dict[str, Learned], factor: str = "64") -> tuple[bytes, bytes]:
    """(privatised, privatised then coarsened) int64 bincount."""
    src = BINCOUNT.read_bytes()
    one = _apply(skills["privatize_atomic_histogram"], src, str(BINCOUNT),
                 {"nb": "1024", "t": "int"})
    two = _apply(skills["grid_stride_loop_wide"], one, str(BINCOUNT), {"factor": factor})
    return one, two


def test_privatised_bincount_is_coarsened_with_its_cast(skills: dict[str, Learned]) -> None:
    from klc.gate import gate

    one, two = coarsened_bincount(skills)
    assert "{ long i = (long)blockIdx.x * blockDim.x + threadIdx.x; if (i < n) {" \
        in _body(one)
    assert ("for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; "
            "i += (long)blockDim.x * gridDim.x) {") in two.decode()
    assert 'grid: ["ceil_div(ceil_div(n, 256), 64)"]' in two.decode()
    for version in (one, two):
        rec = gate(version, str(BINCOUNT), arch="sm_90", stages=("compile",))
        assert rec.verdict == "passed", rec.reason


def test_an_int_index_without_the_cast_is_left_to_grid_stride_loop(
        skills: dict[str, Learned]) -> None:
    """The cast is the anchor's: an index `blockIdx.x * B + threadIdx.x` with no cast is
    grid_stride_loop's site (skills/grid_stride.rule), not this skill's; and an int index
    near 2^31 would overflow the longer stride (stride_fits)."""
    one, _ = coarsened_bincount(skills)
    text = one.decode()
    plain = text.replace("(long)blockIdx.x", "blockIdx.x")
    unit = parse_bytes(plain.encode(), "p.cu")
    assert find_sites(unit, [skills["grid_stride_loop_wide"].rule], {"factor": "64"},
                      spec_of(unit)) == []
    narrow = text.replace("long i = (long)", "int i = (int)").replace("long n)", "int n)")
    narrow = narrow.replace("sizes: {n: 33554432", "sizes: {n: 2147483000")
    unit = parse_bytes(narrow.encode(), "n.cu")
    sites = find_sites(unit, [skills["grid_stride_loop_wide"].rule], {"factor": "64"},
                       spec_of(unit))
    assert len(sites) == 1 and not sites[0].ok
    assert "overflow" in sites[0].reason, sites[0].reason


@pytest.mark.gpu
@pytest.mark.parametrize("factor", ["16", "256"])
def test_coarsened_bincount_verifies_on_the_gpu(skills: dict[str, Learned], factor: str) -> None:
    """The gate's verify: both steps against the original bincount, on fresh random labels
    and random starting counts, at every verify size (1 class and 777 labels included)."""
    from klc.gate import gate

    one, two = coarsened_bincount(skills, factor)
    reference = BINCOUNT.read_bytes()
    for version in (one, two):
        rec = gate(version, str(BINCOUNT), reference=reference, reference_path=str(BINCOUNT),
                   stages=("compile", "verify"))
        assert rec.verdict == "passed", rec.reason
