"""The mechanical inverse with geometry: holes that only the inverse block's guard relates
to the launch (the tile edge, the rows per thread), the pass's own relations on them left
out, and launch edits of one extent undone in the opposite order."""

from __future__ import annotations

from pathlib import Path

from klc.reverse import mechanical_inverse
from klc.rule import calls, load_rule_dir, load_rules_text

ROOT = Path(__file__).resolve().parents[2]

PASS = """
rule shrink_groups {
  kind: simplification
  context: any
  anchor: ```
    int $C = (blockIdx.x * blockDim.x * $V + threadIdx.x) * 4;
  ```
  guard: equals($V, ?v) and block_dim(y, ==, ?r) and is_product(?t, ?v, ?r)
  rewrite replace: ```
    int $C = blockIdx.x * blockDim.x + threadIdx.x;
  ```
  rewrite launch grid.x *= 4
  rewrite launch block.y *= 2
  rewrite launch grid.x *= ?v
  hole v: int in {1, 2, 4} default 2
  hole t: int in {8, 16, 32} default 32
  hole r: int in {1, 2, 4, 8} default 4
  inverse {
    guard: block_dim(x, ==, ?t) and is_product(?t, ?v, ?r)
    hole t: int in {8, 16, 32} default 32
    hole r: int in {1, 2, 4, 8} default 8
    hole unused: int in {1, 2} default 1
  }
}
"""


def test_inverse_block_holes_are_kept_and_the_pass_relations_on_them_are_not() -> None:
    (rule,) = load_rules_text(PASS, "p.rule")
    inv = mechanical_inverse(rule).rule
    # ?t and ?r: named by the inverse guard and declared there; ?unused: declared, never named
    assert set(inv.holes) == {"v", "t", "r"}
    # the inverse block's declarations, not the pass's
    assert inv.holes["t"].default == 32 and inv.holes["r"].default == 8
    named = [(c.name, tuple(str(a) for a in c.args)) for c in calls(inv.guard)]
    # block_dim(y, ==, ?r) held before the pass's rewrite (the block it makes), not before
    # the skill's: it is not the skill's
    assert ("block_dim", ("y", "==", "?r")) not in named
    assert ("block_dim", ("x", "==", "?t")) in named
    assert named.count(("is_product", ("?t", "?v", "?r"))) == 1


def test_launch_edits_of_one_extent_are_undone_last_first() -> None:
    (rule,) = load_rules_text(PASS, "p.rule")
    inv = mechanical_inverse(rule).rule
    launch = [(e.dim, e.axis, e.op, e.factor) for e in inv.edits if e.kind == "launch"]
    # grid.x *= 4, then *= ?v: undone /= ?v, then /= 4; block.y keeps its place
    assert launch == [("grid", "x", "/", "?v"), ("block", "y", "/", 2), ("grid", "x", "/", 4)]


def test_the_row_copy_skill_cancels_its_pass_in_the_spec() -> None:
    rules = {r.name: r for r in load_rule_dir(ROOT / "passes")}
    inv = mechanical_inverse(rules["row_copy_vec4_to_scalar"]).rule
    assert [(e.op, e.factor) for e in inv.edits if e.kind == "launch"] == [("/", "?v"),
                                                                           ("/", "?w")]
    tiles = mechanical_inverse(rules["tile_rows_per_thread_to_one"]).rule
    assert {"t", "r", "factor", "j"} == set(tiles.holes)
    assert "square_block" in {c.name for c in calls(tiles.guard)}
