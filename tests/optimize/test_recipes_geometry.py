"""Lineage recipes replayed at another kernel's own geometry and names: a step that only
changes the launch (grow_block_2d's 16 x 16 -> 32 x 32) is passed over where the kernel does
not take it (it launches 32 x 32 already), and a name the walk declared that the kernel uses
itself takes its first fresh variant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from klc.cuda.parse import parse_bytes
from klc.gate.compile import compile_unit
from klc.recipes import launch_only, load, replay
from klc.rule import RuleSet

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ROOT / "skills"

# an SGEMM in a common first spelling: one thread per element of C, x (from threadIdx.x)
# the row, a 32 x 32 block, the accumulator named acc
X_ROW_32 = """/* klc-spec
kernel: matmul_x_row
sizes: {M: 512, N: 512, K: 256}
args:
  - {name: A, shape: [M, K], role: in, init: normal}
  - {name: B, shape: [K, N], role: in, init: normal}
  - {name: C, shape: [M, N], role: out}
  - {name: M, value: M}
  - {name: N, value: N}
  - {name: K, value: K}
grid: ["ceil_div(M, 32)", "ceil_div(N, 32)"]
block: [32, 32]
bytes: 4 * M * K + 4 * K * N + 4 * M * N
flops: 2 * M * N * K
*/
__global__ void matmul_x_row(const float* A, const float* B, float* C, int M, int N, int K) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < M && y < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[x * K + k] * B[k * N + y];
        }
        C[x * N + y] = acc;
    }
}
"""


def rules() -> dict[str, Any]:
    return {r.name: r for r in RuleSet.load([str(SKILLS)]).rules}


def test_a_32_x_32_sgemm_replays_the_tile32_recipe_past_its_block_growth() -> None:
    recipe = next(r for r in load([SKILLS]) if r.family == "matmul_tile32")
    names = [s.skill for s in recipe.steps]
    assert names.index("grow_block_2d") < names.index("shared_tiles_to_regblock_rows")
    rp = replay(recipe, X_ROW_32.encode(), "k.cu", rules())
    assert rp is not None
    reached = names[rp.start:rp.end + 1]
    assert reached[0] == "swap_thread_roles_for_coalescing"
    assert reached[-1] == "shared_tiles_to_regblock_rows"
    out = rp.source.decode()
    # the block stayed 32 x 32 (grow_block_2d passed over) and the tiles are 32 wide
    assert "__shared__ float As[32][32];" in out and "block: [32, \"ceil_div(32, " in out
    # the walk's accumulator array `acc` is the kernel's own scalar here: acc_1 instead
    assert "float acc_1[" in out and "float acc = acc_1[" in out
    result = compile_unit(parse_bytes(rp.source, "k.cu"), arch="sm_90", use_cache=False)
    assert result.ok, result.log


def test_launch_only_steps() -> None:
    r = rules()
    assert launch_only(r["grow_block_2d"]) and launch_only(r["grow_block_2d_cols_first"])
    assert not launch_only(r["tile_transpose"]) and not launch_only(r["add_const_param"])


def test_the_transfer_transpose_replays_the_tile_bounds_recipe_to_constant_bounds() -> None:
    """bench/transfer/transpose_2d.cu (16 x 16, no tile) through the transpose_tile_bounds
    recipe: the tile steps of transpose_tile_rows, then the loops' bounds from the block's
    constants (after the rows per thread), then the padding. The committed walk is
    compile-only (its recipe holds no times, and a replay is ranked by them), so the replay is
    given times that fall at every step: it then reaches the end of the recipe, every step
    applied on this kernel."""
    from dataclasses import replace

    recipe = next(r for r in load([SKILLS]) if r.family == "transpose_tile_bounds")
    names = [s.skill for s in recipe.steps]
    assert names.index("tile_rows_per_thread") < names.index("block_extents_to_constant_bounds")
    timed = replace(recipe, steps=[replace(s, before_us=100.0 - i, after_us=99.0 - i)
                                   for i, s in enumerate(recipe.steps)])
    path = ROOT / "bench/transfer/transpose_2d.cu"
    rp = replay(timed, path.read_bytes(), str(path), rules())
    assert rp is not None
    assert (rp.start, rp.end) == (0, len(names) - 1)
    out = rp.source.decode()
    assert out.count("for (int j = 0; j < 32; j += 8) {") == 2 and "blockDim.y)" not in out
    assert "__shared__ float tile[32][32 + 1];" in out
    # the block the bounds name, in the spec and at the file's host launch
    assert 'block: ["(16) * 2", "ceil_div((16) * 2, 4)"]' in out
    assert "dim3 block(TILE * 2, TILE * 2 / 4);" in out
    result = compile_unit(parse_bytes(rp.source, str(path)), arch="sm_90", use_cache=False)
    assert result.ok, result.log
