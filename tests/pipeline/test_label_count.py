"""The label_count lineage (bench/lineages/label_count) and its privatisation skill: the
compile-only walk, the round trip of the privatisation step, and what the learned skill
makes of the held-out byte histogram (bench/heldout/histogram.cu, which no lineage walks):
privatised by ``privatize_atomic_histogram``, then coarsened by ``grid_stride_loop``,
compiled by NVRTC here and verified against the original on a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.lineage import walk, write_lineage
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.reverse import Learned, learn
from klc.round_trip import apply_at_step

ROOT = Path(__file__).resolve().parents[2]
EXPERT = ROOT / "bench/lineages/label_count/expert.cu"
HELDOUT = ROOT / "bench/heldout/histogram.cu"
STEPS = ["remove_launch_bounds", "grid_stride_to_one_per_thread",
         "privatized_histogram_to_global_atomics", "remove_restrict", "remove_restrict",
         "remove_const_param"]


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("label_count")
    write_lineage(walk(EXPERT, ROOT / "passes", stages=("compile",)), d)
    return d


@pytest.fixture(scope="module")
def skills(walked: Path) -> dict[str, Learned]:
    return {item.rule.name: item for item in learn([walked], ROOT / "passes")}


def _body(source: bytes) -> str:
    text = source.decode()
    return " ".join(text[text.index("{", text.index("__global__")):].split())


def test_walk_peels_the_private_histogram_after_the_grid_stride_loop(walked: Path) -> None:
    import json

    data = json.loads((walked / "lineage.json").read_text())
    assert [v["step"]["pass"] for v in data["versions"][1:]] == STEPS
    naive = (walked / data["versions"][-1]["file"]).read_bytes()
    assert _body(naive) == ("{ int i = blockIdx.x * BLOCK + threadIdx.x; if (i < n) { "
                            "atomicAdd(&counts[labels[i]], 1u); } }")
    # the committed walk is this walk (the GPU session re-walks with the full gate)
    committed = sorted((ROOT / "bench/lineages/label_count/walk").glob("v*.cu"))[1:]
    assert [p.name.split("_", 1)[1][:-3] for p in committed] == STEPS
    assert committed[-1].read_bytes() == naive


def test_privatisation_round_trip(walked: Path, skills: dict[str, Learned]) -> None:
    """The skill on version 3 with the observed holes gives version 2 back, with the
    expert's template constant C as its value (an int hole holds a number)."""
    item = skills["privatize_atomic_histogram"]
    (o,) = item.observations
    before = (walked / o.before["file"]).read_bytes()
    after = (walked / o.version["file"]).read_bytes()
    back = apply_at_step(item.inverse, after, str(walked / o.version["file"]), o.step)
    assert back == before.replace(b"block_counts[C]", b"block_counts[256]") \
        .replace(b"b < C;", b"b < 256;")
    rule = item.rule
    assert " ".join(rule.anchor.split()) == ("$IT $I = $GI; if ($I < $N) { $$$PRE; "
                                             "atomicAdd(&$G[$V], $W); }")
    guard = str(rule.guard)
    for pred in ("block_cooperative", "index_below", "smem_fits", "is_kernel_param",
                 "elem_type"):
        assert pred in guard, pred
    assert rule.holes["nb"].default == 256 and rule.holes["s"].default == "block_counts"


def _apply(item: Learned, source: bytes, path: str, holes: dict[str, str]) -> bytes:
    unit = parse_bytes(source, path)
    out = apply_rules(unit, [item.rule], holes, spec_of(unit))
    assert out.source != source, [s.reason for s in find_sites(unit, [item.rule], holes,
                                                                spec_of(unit))]
    return out.source


def privatised_heldout(skills: dict[str, Learned]) -> tuple[bytes, bytes]:
    """(privatised, privatised then coarsened 16x) held-out histogram."""
    src = HELDOUT.read_bytes()
    one = _apply(skills["privatize_atomic_histogram"], src, str(HELDOUT),
                 {"nb": "256", "s": "block_counts", "j": "b", "cnt": "c"})
    two = _apply(skills["grid_stride_loop"], one, str(HELDOUT), {"factor": "16"})
    return one, two


def test_learned_skill_privatises_the_heldout_histogram(skills: dict[str, Learned]) -> None:
    one, two = privatised_heldout(skills)
    assert _body(one) == (
        "{ __shared__ unsigned int block_counts[256]; "
        "for (int b = threadIdx.x; b < 256; b += blockDim.x) { block_counts[b] = 0; } "
        "__syncthreads(); { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { "
        "atomicAdd(&block_counts[data[i]], 1u); } } __syncthreads(); "
        "for (int b = threadIdx.x; b < 256; b += blockDim.x) { unsigned int c = block_counts[b]; "
        "if (c != 0) { atomicAdd(&bins[b], c); } } }")
    assert "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * " \
        "gridDim.x) {" in two.decode()
    assert 'grid: ["ceil_div(ceil_div(n, 256), 16)"]' in two.decode()
    # applying the privatisation again finds nothing: the element code is no longer at the
    # top level, and its atomic targets the private copy
    unit = parse_bytes(two, str(HELDOUT))
    assert not [s for s in find_sites(unit, [skills["privatize_atomic_histogram"].rule],
                                      {"nb": "256"}, spec_of(unit)) if s.ok]
    from klc.gate import gate

    for version in (one, two):
        rec = gate(version, str(HELDOUT), arch="sm_90", stages=("compile",))
        assert rec.verdict == "passed", rec.reason
        res = rec.stages["compile"].data["resources"]["histogram"]
        assert res["spill_stores"] == 0 and res["spill_loads"] == 0


@pytest.mark.parametrize(("change", "nb", "why"), [
    (None, "128", "`data[i]` has type unsigned char, which does not bound it below 128"),
    (("block: [256]", "block: [64, 4]"), "256", "threadIdx.x does not number its threads"),
    (("    int i = blockIdx", "    if (threadIdx.x == 0 && n < 0) return;\n    int i = blockIdx"),
     "256", "comes before the end of the anchor"),
    (("{name: bins, shape: [256]", "{name: bins, shape: [n]"), "256",
     "`data[i]` has type int, which does not bound it below 256; the spec allocates `bins` "
     "with shape [n]: 67108864 elements, more than 256"),
])
def test_the_skill_refuses_what_it_cannot_privatise(skills: dict[str, Learned],
                                                    change: tuple[str, str] | None, nb: str,
                                                    why: str) -> None:
    src = HELDOUT.read_text()
    if change is not None:
        assert change[0] in src
        src = src.replace(change[0], change[1], 1)
    if change and change[0].startswith("{name: bins"):
        src = src.replace("const unsigned char* data", "const int* data")
    unit = parse_bytes(src.encode(), "h.cu")
    sites = find_sites(unit, [skills["privatize_atomic_histogram"].rule], {"nb": nb},
                       spec_of(unit))
    assert len(sites) == 1 and not sites[0].ok
    assert why in sites[0].reason, sites[0].reason


def test_int_bins_get_an_int_private_copy(skills: dict[str, Learned]) -> None:
    """The private copy's element type is a geometry hole read from `bins` (elem_type): int
    counters give an int copy, and the rewrite compiles."""
    from klc.gate import gate

    src = HELDOUT.read_text().replace("unsigned int* bins", "int* bins", 1)
    unit = parse_bytes(src.encode(), "h.cu")
    rule = skills["privatize_atomic_histogram"].rule
    sites = find_sites(unit, [rule], {"nb": "256"}, spec_of(unit))
    assert len(sites) == 1 and sites[0].ok and sites[0].holes.get("t") == "int", sites
    out = apply_rules(unit, [rule], {"nb": "256"}, spec_of(unit)).source
    assert b"__shared__ int " in out and b"unsigned int" not in out.split(b"__shared__")[1][:40]
    rec = gate(out, "h.cu", arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
def test_privatised_heldout_histogram_verifies_on_the_gpu(skills: dict[str, Learned]) -> None:
    """The gate's verify: the skill's output against the original held-out kernel, on fresh
    random bytes and random starting counts, at every verify size (odd and tiny included)."""
    from klc.gate import gate

    one, two = privatised_heldout(skills)
    reference = HELDOUT.read_bytes()
    for version in (one, two):
        rec = gate(version, str(HELDOUT), reference=reference, reference_path=str(HELDOUT),
                   stages=("compile", "verify"))
        assert rec.verdict == "passed", rec.reason
