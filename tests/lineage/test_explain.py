"""klc.explain: the constructs a walk leaves, outermost first, and why no pass took each
apart; ``klc lineage --explain`` prints them at the version where the walk stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cli import main
from klc.errors import KlcError
from klc.explain import explain, stop_construct
from klc.lineage import Attempt, load_lineage

# A kernel written here: a device function with a warp butterfly, a padded tile, a float4
# alias that is still read and one that nothing reads any more, a restrict qualifier.
SOURCE = b"""
__device__ float warp_total(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ float plain(float v) { return 2.0f * v; }
__global__ void k(const float* __restrict__ x, float* y, int n) {
    __shared__ float tile[32][33];
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const float4* unused4 = reinterpret_cast<const float4*>(y);
    float4 a = x4[threadIdx.x];
    tile[threadIdx.y][threadIdx.x] = warp_total(a.x) + plain(a.y);
    y[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
"""


def test_constructs_are_found_outermost_first_with_their_place() -> None:
    found = explain(SOURCE, [], [])
    names = [f.construct for f in found]
    assert names == ["warp shuffle", "128-bit access", "padded shared tile",
                     "shared-memory staging", "restrict qualifier", "called device function"]
    shuffle = found[0]
    assert (shuffle.line, shuffle.text) == (3, "__shfl_xor_sync(")
    vec = found[1]
    assert vec.line == 9  # the alias that is read; the unread one (line 10) is not a construct
    called = found[-1]
    # the device function whose body holds a construct, at its call; `plain` holds none
    assert called.text == "warp_total" and called.line == 12


def test_verdicts_say_missing_pass_refusal_or_spelling() -> None:
    refused = Attempt("warp_xor_sum_to_shared", [{"line": 3, "col": 5}], {}, False,
                      "verify: max abs error 3.0 at y[7]")
    found = {f.construct: f for f in explain(SOURCE, ["warp_xor_sum_to_shared",
                                                      "remove_smem_padding"], [refused])}
    assert found["warp shuffle"].verdict.startswith("warp_xor_sum_to_shared matched and was "
                                                    "refused: verify: max abs error 3.0")
    assert "does not match this spelling" in found["padded shared tile"].verdict
    assert found["128-bit access"].verdict.startswith("no pass takes apart a vector")
    # JSON attempts (lineage.json's final_attempts) read the same
    again = {f.construct: f for f in explain(SOURCE, ["warp_xor_sum_to_shared"],
                                             [refused.to_json()])}
    assert again["warp shuffle"].verdict == found["warp shuffle"].verdict


def test_the_stop_is_the_first_construct_that_is_not_a_qualifier() -> None:
    only_quals = b"__global__ void __launch_bounds__(256) k(const float* __restrict__ x) {}\n"
    found = explain(only_quals, [], [])
    assert [f.construct for f in found] == ["launch bounds", "restrict qualifier"]
    assert stop_construct(found).construct == "launch bounds"  # nothing else is left
    assert stop_construct(explain(SOURCE, [], [])).construct == "warp shuffle"
    assert stop_construct([]) is None


def test_comments_are_not_code() -> None:
    src = b"// __shfl_xor_sync(mask, v, 1) and __shared__ in a comment\n" \
          b"/* float4* p = reinterpret_cast<float4*>(q); */\n__global__ void k() {}\n"
    assert explain(src, [], []) == []


def test_a_macro_nothing_uses_any_more_is_no_construct() -> None:
    used = b"""#define LOAD(p) __ldg(p)
__global__ void k(const float* x, float* y) { y[0] = LOAD(x); }
"""
    assert [f.construct for f in explain(used, [], [])] == ["cache hint"]
    left = used.replace(b"LOAD(x)", b"(*(x))")  # remove_load_hint_macro took every use apart
    assert explain(left, [], []) == []


def test_cli_explain_prints_where_the_walk_stops(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text(
        "/* klc-spec\nkernel: k\nsizes: {n: 1024}\nargs:\n"
        "  - {name: x, shape: [n], role: in}\n  - {name: y, shape: [n], role: out}\n"
        "  - {name: n, value: n}\ngrid: [\"ceil_div(n, 256)\"]\nblock: [256]\n*/\n"
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    float v = i < n ? x[i] : 0.0f;\n"
        "    for (int o = 8; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);\n"
        "    if (i < n) y[i] = v;\n}\n")
    out = tmp_path / "walk"
    code = main(["lineage", str(kernel), "--stages", "compile", "--out", str(out),
                 "--explain"])
    assert code == 0  # const came off x
    text = capsys.readouterr().out
    assert "the walk stops at warp shuffle" in text
    assert "__shfl_down_sync(" in text and "v01_remove_const_param.cu:" in text
    data = load_lineage(out)
    assert data["stop_constructs"][0]["construct"] == "warp shuffle"
    assert "## Where the walk stops" in (out / "report.md").read_text()


def test_every_pass_a_construct_names_is_a_pass() -> None:
    from klc.explain import CONSTRUCTS
    from klc.lineage import load_passes

    root = Path(__file__).resolve().parents[2]
    names = {r.name for r in load_passes([root / "passes", root / "passes" / "warp_sums"])[0]}
    missing = sorted({p for c in CONSTRUCTS for p in c.passes} - names)
    assert missing == []


def test_golden_cases_of_the_warp_sum_passes() -> None:
    """The warp all-reduce passes live in passes/warp_sums (walked on request) and their
    golden cases in tests/golden_warp_sums."""
    from klc.golden import run_golden

    root = Path(__file__).resolve().parents[2]
    results = run_golden(str(root / "tests" / "golden_warp_sums"),
                         [str(root / "passes" / "warp_sums")])
    assert len(results) >= 9
    assert [f"{r.case}: {r.message}" for r in results if not r.ok] == []


def test_a_walk_takes_several_pass_folders_in_order(tmp_path: Path) -> None:
    from klc.lineage import load_passes

    root = Path(__file__).resolve().parents[2]
    rules, source = load_passes([root / "passes", root / "passes" / "warp_sums"])
    names = [r.name for r in rules]
    assert names[0] == "remove_launch_bounds" and names[-1] == "warp_down_sum_up_to_shared"
    assert source.count("ORDER") == 2
    # the same name in two folders is an error
    with pytest.raises(KlcError, match="is also in"):
        load_passes([root / "passes" / "warp_sums", root / "passes" / "warp_sums"])


def test_guard_refusals_at_the_end_are_recorded_explained_and_become_pitfalls(
        tmp_path: Path) -> None:
    from klc.lineage import walk, write_lineage
    from klc.reverse import _pitfalls

    kernel = tmp_path / "half_sums.cu"
    kernel.write_text(
        "/* klc-spec\nkernel: half_sums\nsizes: {n: 4096}\nargs:\n"
        "  - {name: x, shape: [n], role: in}\n  - {name: y, shape: [n], role: out}\n"
        "grid: [\"n // 256\"]\nblock: [256]\n*/\n"
        "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
        "#define HALF 16\n"
        "__global__ void half_sums(const float* x, float* y) {\n"
        "    cg::thread_block block = cg::this_thread_block();\n"
        "    cg::thread_block_tile<HALF> tile = cg::tiled_partition<HALF>(block);\n"
        "    float v = x[blockIdx.x * blockDim.x + threadIdx.x];\n"
        "    for (int o = 1; o < HALF; o *= 2) v += tile.shfl_xor(v, o);\n"
        "    y[blockIdx.x * blockDim.x + threadIdx.x] = v;\n}\n")
    root = Path(__file__).resolve().parents[2]
    lin = walk(kernel, root / "passes", stages=("compile",))
    refused = [r for r in lin.final_guard_refused if r["pass"] == "cg_tile_shfl_to_intrinsic"]
    assert refused and "not 16 == 32" in refused[0]["reason"]
    tile = next(s for s in lin.stop_constructs if s["construct"] == "cooperative-groups tile")
    assert tile["verdict"].startswith("cg_tile_shfl_to_intrinsic matched and was refused: "
                                      "guard:") and "16 == 32" in tile["verdict"]
    out = tmp_path / "walk"
    write_lineage(lin, out)
    pits = _pitfalls("cg_tile_shfl_to_intrinsic", [(load_lineage(out), out)])
    assert len(pits) == 1 and "was refused by its guard" in pits[0] and "16 == 32" in pits[0]


def test_the_shared_memory_a_pass_wrote_is_not_the_experts() -> None:
    src = (b"__global__ void k(const float* x, float* y) {\n"
           b"    float s = x[threadIdx.x];\n"
           b"    {\n        __shared__ decltype(0 + s) klc_lanes[1024];\n"
           b"        klc_lanes[threadIdx.x] = s;\n    }\n"
           b"    __shared__ float mine[64];\n    mine[threadIdx.x % 64] = s;\n"
           b"    y[threadIdx.x] = mine[0];\n}\n")
    staging = [f for f in explain(src, [], []) if f.construct == "shared-memory staging"]
    assert [f.line for f in staging] == [7]
