"""``square_block``: blockDim.x == blockDim.y, known exactly from the spec's block or the
file's launches (tile_transpose hands the element of thread (x, y) to thread (y, x))."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites, spec_of
from klc.rule.ruleset import load_rules_text

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    $Y[$I] = $X[$I];
  ```
  guard: square_block
  rewrite replace: ```
    $Y[$I] = $X[$I];
  ```
}
"""

KERNEL = """__global__ void k(const float* x, float* y, int n) {
    int i = threadIdx.y * blockDim.x + threadIdx.x;
    y[i] = x[i];
}
"""


def spec(block: str) -> str:
    return ("/* klc-spec\nkernel: k\nsizes: {n: 1024}\nargs:\n"
            "  - {name: x, shape: [n], role: in}\n  - {name: y, shape: [n], role: out}\n"
            f"  - {{name: n, value: n}}\ngrid: [1]\nblock: {block}\n*/\n")


def verdict(source: str) -> tuple[bool, str]:
    unit = parse_bytes(source.encode(), "k.cu")
    sites = find_sites(unit, load_rules_text(PROBE, "p.rule"), None, spec_of(unit))
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


def test_a_square_spec_block() -> None:
    assert verdict(spec("[16, 16]") + KERNEL)[0]
    assert verdict(spec("[32, 32, 1]") + KERNEL)[0]


def test_a_flat_block_is_refused() -> None:
    ok, reason = verdict(spec("[32, 8]") + KERNEL)
    assert not ok and "the block is 32 x 8" in reason and "not square" in reason


def test_a_one_dimensional_block_is_refused() -> None:
    ok, reason = verdict(spec("[256]") + KERNEL)
    assert not ok and "not square" in reason


def test_an_unknown_block_is_refused() -> None:
    ok, reason = verdict(KERNEL)
    assert not ok and "not known exactly" in reason


def test_the_launches_in_the_file_tell_it() -> None:
    host = ("void run(const float* x, float* y) {\n"
            "    k<<<dim3(4, 4), dim3(16, 16)>>>(x, y, 1024);\n}\n")
    assert verdict(KERNEL + host)[0]


EXTENT = PROBE.replace("$Y[$I] = $X[$I];", "$Y[blockIdx.x * $B + threadIdx.x] = 0.0f;").replace(
    "guard: square_block", "guard: block_extent($B, x)")
TILED = """#define TILE 16
__global__ void k(const float* x, float* y, int n) {
    y[blockIdx.x * EDGE + threadIdx.x] = 0.0f;
}
"""


def extent(source: str) -> tuple[bool, str]:
    unit = parse_bytes(source.encode(), "k.cu")
    sites = find_sites(unit, load_rules_text(EXTENT, "p.rule"), None, spec_of(unit))
    assert len(sites) == 1
    return sites[0].ok, sites[0].reason


def test_block_extent_is_blockdim_or_the_constant_of_the_block() -> None:
    assert extent(spec("[7, 3]") + TILED.replace("EDGE", "blockDim.x"))[0]
    assert extent(spec("[16, 16]") + TILED.replace("EDGE", "TILE"))[0]
    assert extent(spec("[16, 16]") + TILED.replace("EDGE", "16"))[0]


def test_block_extent_refuses_another_value_or_axis() -> None:
    ok, reason = extent(spec("[32, 32]") + TILED.replace("EDGE", "TILE"))
    assert not ok and "`TILE` = 16, and block.x is 32" in reason
    ok, reason = extent(spec("[16, 8]") + TILED.replace("EDGE", "blockDim.y"))
    assert not ok and "and block.x is 16" in reason
    ok, reason = extent(spec("[16, 16]") + TILED.replace("EDGE", "n"))
    assert not ok and "neither blockDim.x nor a known constant" in reason
    ok, reason = extent(TILED.replace("EDGE", "TILE"))
    assert not ok and "not known exactly" in reason
