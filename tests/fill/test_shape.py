"""Launch-relative hole values (klc/fill/shape.py): a skill that reshapes the block proposes,
at each site, the factors that give it the block its expert used, whatever block the site's
kernel was launched with; the lineage recipes replay that block too."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.fill import FillRequest
from klc.fill.card import card_values
from klc.fill.search import SearchFiller, ranked_assignments
from klc.fill.shape import launch_anchors, learned_block
from klc.fill.trial import candidate_sites
from klc.pipeline import spec_of
from klc.recipes import load, replay
from klc.rule import Rule, RuleSet

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ROOT / "skills"
COLSUM = "thread_per_column_to_block_column_reduce"

# a bias gradient in a real spelling: `T *x`, 256-thread blocks in the host launch, no spec
BIAS_GRAD = """
__global__ void bias_grad(float *db, const float *dy, int rows, int cols) {
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o < cols) {
        float s = 0.0f;
        for (int i = 0; i < rows; i++) {
            s += dy[(size_t)i * cols + o];
        }
        db[o] = s;
    }
}

void launch(float *db, const float *dy, int rows, int cols) {
    bias_grad<<<(cols + BLOCK - 1) / BLOCK, BLOCK>>>(db, dy, rows, cols);
}
"""


def skill(name: str) -> Rule:
    return next(r for r in RuleSet.load([str(SKILLS)]).rules if r.name == name)


def site_and_spec(source: str, rule: Rule) -> tuple[object, object, object]:
    unit = parse_bytes(source.encode(), "k.cu")
    spec = spec_of(unit)
    sites = [s for s in candidate_sites(unit, [rule], spec, include_slower=True)
             if s.rule.name == rule.name]
    assert sites, f"{rule.name} does not apply"
    return sites[0], unit, spec


@pytest.mark.parametrize(("block", "f"), [(256, "8"), (128, "4"), (64, "2"), (1024, "32")])
def test_the_factor_gives_the_learned_block_at_any_launch(block: int, f: str) -> None:
    rule = skill(COLSUM)
    assert learned_block(rule) == (32, 32, 1)  # the premise: the column_sum expert's block
    src = f"#define BLOCK {block}\n" + BIAS_GRAD
    site, _, spec = site_and_spec(src, rule)
    assert launch_anchors(rule, site, spec) == {"f": f, "ty": "32"}
    head = ranked_assignments(rule, limit=2, first=launch_anchors(rule, site, spec))[0]
    assert (head["f"], head["ty"]) == (f, "32")


def test_the_search_filler_proposes_the_learned_block_first() -> None:
    rule = skill(COLSUM)
    site, unit, spec = site_and_spec("#define BLOCK 256\n" + BIAS_GRAD, rule)
    got = SearchFiller(arch="sm_90").propose(
        FillRequest(rule, site, unit, spec, history=[], budget=8), 1)
    assert got and (got[0]["f"], got[0]["ty"]) == ("8", "32")


def test_no_anchor_without_an_exact_block_or_a_learned_one() -> None:
    rule = skill(COLSUM)
    # the block is a runtime value: nothing is known, nothing is guessed
    src = BIAS_GRAD.replace("BLOCK>>>", "threads>>>").replace(
        "int rows, int cols) {\n    bias_grad", "int rows, int cols, int threads) {\n    bias_grad")
    unit = parse_bytes(src.encode(), "k.cu")
    sites = [s for s in candidate_sites(unit, [rule], spec_of(unit), include_slower=True)]
    assert all(launch_anchors(rule, s, spec_of(unit)) == {} for s in sites)
    # a card that records no block: no anchor either
    bare = dataclasses.replace(rule, card=dataclasses.replace(rule.card, conditions=""))
    site, _, spec = site_and_spec("#define BLOCK 256\n" + BIAS_GRAD, rule)
    assert learned_block(bare) is None and launch_anchors(bare, site, spec) == {}
    # a factor that would not divide the block evenly is not proposed (48 / 32)
    site, _, spec = site_and_spec("#define BLOCK 48\n" + BIAS_GRAD, rule)
    assert "f" not in launch_anchors(rule, site, spec)


def test_a_number_written_as_another_holes_value_is_not_this_holes() -> None:
    rule = skill(COLSUM)
    # the card says "?f=2, ?ty=32": 2 is f's, not a value of ty worth trying early
    assert card_values(rule, "ty", rule.holes["ty"]) == ["32"]
    assert card_values(rule, "f", rule.holes["f"])[0] == "2"


def test_a_recipe_replays_the_walks_block_on_a_wider_launch() -> None:
    rules = {r.name: r for r in RuleSet.load([str(SKILLS)]).rules}
    recipe = next(r for r in load([SKILLS]) if r.family == "column_sum")
    assert recipe.steps[0].holes["f"] == "2"  # the premise: recorded on 64-thread blocks
    src = ("#define BLOCK 256\n" + BIAS_GRAD).encode()
    rp = replay(recipe, src, "k.cu", rules)
    assert rp is not None, "the recipe should replay at f=8 (256 / 8 = 32 columns per block)"
    # the host launch takes the new shape in its own spelling: grid.x * 8, block.x / 8,
    # block.y * 32
    assert b"bias_grad<<<(cols + BLOCK - 1) / BLOCK * 8, dim3(BLOCK / 8, 32)>>>" in rp.source
    assert b"threadIdx.y" in rp.source and b"__syncthreads" in rp.source


TRANSPOSE_16 = """
#define TILE 16
__global__ void transpose_naive(float* __restrict__ out, const float* __restrict__ in,
                                int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        out[c * rows + r] = in[r * cols + c];
    }
}
void run(float* out, const float* in, int rows, int cols) {
    dim3 block(TILE, TILE);
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_naive<<<grid, block>>>(out, in, rows, cols);
}
"""


def test_a_recipe_passes_over_a_qualifier_the_kernel_already_has() -> None:
    """The transpose_tile walk's forward steps: grow the 16 x 16 block to 32 x 32, add
    `const` to the input, stage a 32 x 32 tile, pad it. `in` is const already: the replay
    passes over that step and reaches the padded tile at the site's 32 x 32 block."""
    from klc.recipes import Recipe, RecipeStep

    rules = {r.name: r for r in RuleSet.load([str(SKILLS)]).rules}
    recipe = Recipe("transpose_tile", "expert.cu", "test", [
        RecipeStep("grow_block_2d_cols_first", {"s": "2"}, 500.0, 500.0),
        RecipeStep("add_const_param", {}, 500.0, 500.0),
        RecipeStep("tile_transpose", {"t": "32", "tile": "tile"}, 500.0, 330.0),
        RecipeStep("pad_smem_tile", {}, 330.0, 300.0),
    ])
    rp = replay(recipe, TRANSPOSE_16.encode(), "k.cu", rules)
    assert rp is not None and rp.end == 3
    text = rp.source.decode()
    assert "__shared__ float tile[32][32 + 1];" in text
    assert "dim3 block(TILE * 2, TILE * 2);" in text
    # a structural step that does not apply still ends the replay where it stands
    stuck = Recipe("t", "e", "test", [recipe.steps[0], RecipeStep(
        "naive_matmul_to_shared_tiles", {"tile": "32"}, 500.0, 100.0), *recipe.steps[2:]])
    rp = replay(stuck, TRANSPOSE_16.encode(), "k.cu", rules)
    assert rp is None  # only the grown block was reached, which the walk timed no faster
