"""Geometry holes (klc/fill/shape.py ``site_holes``): a skill learned at one block shape takes
the site's own extents where its guard ties a hole to the launch or to a constant, is judged
and applied with them, and is still refused where the relation cannot hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.fill.shape import geometry_relations, site_holes
from klc.gate.compile import compile_unit
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.rule import Rule, RuleSet, load_rules_text

ROOT = Path(__file__).resolve().parents[2]
TILES = "naive_matmul_to_shared_tiles"

MATMUL = """
#define BS {b}
__global__ void sgemm_naive(const float *A, const float *B, float *C, int M, int N, int K) {{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {{
        float tmp = 0.0f;
        for (int i = 0; i < K; ++i) {{
            tmp += A[row * K + i] * B[i * N + col];
        }}
        C[row * N + col] = tmp;
    }}
}}
void launch(const float *A, const float *B, float *C, int M, int N, int K) {{
    dim3 block(BS, {by});
    dim3 grid((N + BS - 1) / BS, (M + {by} - 1) / {by});
    sgemm_naive<<<grid, block>>>(A, B, C, M, N, K);
}}
"""


def skill(name: str) -> Rule:
    return next(r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == name)


def sites_of(source: str, rule: Rule, holes: dict[str, str] | None = None) -> list:
    unit = parse_bytes(source.encode(), "k.cu")
    return [s for s in find_sites(unit, [rule], holes, spec_of(unit)) if s.rule is rule]


@pytest.mark.parametrize("b", [8, 16, 32])
def test_the_tile_is_the_sites_block(b: int) -> None:
    rule = skill(TILES)
    src = MATMUL.format(b=b, by="BS")
    (site,) = sites_of(src, rule)
    assert site.ok, site.reason
    assert site.holes == {"tile": str(b)}
    out = apply_rules(parse_bytes(src.encode(), "k.cu"), [rule])
    text = out.source.decode()
    assert f"__shared__ float As[{b}][{b}];" in text and f"k0 += {b})" in text
    result = compile_unit(parse_bytes(out.source, "k.cu"), arch="sm_90", use_cache=False)
    assert result.ok, result.error


def test_a_given_value_is_judged_as_given() -> None:
    rule = skill(TILES)
    (site,) = sites_of(MATMUL.format(b=32, by="BS"), rule, {"tile": "16"})
    assert not site.ok and "block.x is 32" in site.reason and "not 32 == 16" in site.reason
    assert site.holes == {}


def test_a_block_the_relation_cannot_hold_is_refused() -> None:
    rule = skill(TILES)
    (site,) = sites_of(MATMUL.format(b=32, by=8), rule)  # 32 x 8: no square tile
    assert not site.ok and "block.y is 8" in site.reason
    (site,) = sites_of(MATMUL.format(b=128, by=2), rule)  # 128 is outside ?tile's domain
    assert not site.ok and "block.x is 128" in site.reason


RULE = """
rule reshape {{
  kind: skill
  description: "test"
  context: global
  anchor: ```
    $Y[$I] = $E;
  ```
  guard: {guard}
  rewrite replace: ```
    $Y[$I] = $E + ?a + ?b;
  ```
  hole a: int in {{1, 2, 4, 8, 16, 32, 64}} default 2
  hole b: int in {{1, 2, 4, 8, 16, 32, 64}} default 2
}}
"""

ELEMENTWISE = """
#define WIDTH 16
__global__ void k(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * WIDTH;
}
void run(float *y, const float *x, int n) { k<<<(n + 255) / 256, 256>>>(y, x, n); }
"""


@pytest.mark.parametrize(("guard", "want"), [
    ("block_dim_product(x, ?a, ?a) and block_dim(y, ==, 1)", {"a": "16"}),  # 256 = 16 * 16
    ("block_size(<=, ?a) and is_product(?a, ?b, ?b)", {}),  # 256 is outside ?a's domain
    ("block_dim_product(x, ?a, ?b) and equals($E, ?a)", None),  # $E is no constant
    ("block_dim(x, ==, ?a)", {}),
])
def test_relations_are_solved_at_the_site(guard: str, want: dict[str, str] | None) -> None:
    rule = load_rules_text(RULE.format(guard=guard), "t.rule")[0]
    assert geometry_relations(rule)
    unit = parse_bytes(ELEMENTWISE.encode(), "k.cu")
    (site,) = [s for s in find_sites(unit, [rule]) if s.rule is rule]
    got = site_holes(rule, site.match, spec_of(unit))
    if want is None:
        assert "a" not in got
    else:
        assert got == want


def test_the_product_relation_gives_the_other_factor() -> None:
    rule = load_rules_text(RULE.format(guard="block_dim_product(x, ?a, ?b)"), "t.rule")[0]
    unit = parse_bytes(ELEMENTWISE.encode(), "k.cu")
    (site,) = [s for s in find_sites(unit, [rule], {"a": "8"}) if s.rule is rule]
    assert site.ok and site.holes == {"b": "32"}  # 256 / 8
    assert "+ 8 + 32;" in apply_rules(unit, [rule], {"a": "8"}).source.decode()


def test_a_rule_without_relations_has_no_geometry_holes() -> None:
    rule = skill("add_restrict")
    assert geometry_relations(rule) == []


@pytest.mark.parametrize(("b", "s"), [(8, "4"), (16, "2")])
def test_the_block_grows_to_the_learned_tile(b: int, s: str) -> None:
    """grow_block_2d was learned growing 16 x 16 to 32 x 32: at an 8 x 8 site the value that
    reaches the learned block is ?s = 4 (klc.fill.shape.launch_anchors), proposed first."""
    from klc.fill.shape import launch_anchors

    rule = skill("grow_block_2d")
    src = MATMUL.format(b=b, by="BS")
    (site,) = sites_of(src, rule)
    assert site.ok, site.reason
    assert launch_anchors(rule, site, spec_of(parse_bytes(src.encode(), "k.cu"))) == {"s": s}


TYPED = """
rule retype {{
  kind: skill
  description: "test"
  context: global
  anchor: ```
    $Y[$I] = $E;
  ```
  guard: elem_type($I, ?t)
  rewrite replace: ```
    $Y[(?t)$I] = $E;
  ```
  hole t: enum {{{domain}}} default int
}}
"""


@pytest.mark.parametrize(("decl", "domain", "want"), [
    ("const unsigned i", 'int, unsigned, "unsigned int"', "unsigned"),  # its own spelling
    ("unsigned i", 'int, "unsigned int"', "unsigned int"),  # else the one spelling of both
    ("size_t i", "int, size_t", "size_t"),
    ("long int i", "int, long", "long"),
    ("short i", 'int, "unsigned int"', None),  # outside the domain: not taken
])
def test_a_type_hole_takes_the_variables_declared_type(decl: str, domain: str,
                                                        want: str | None) -> None:
    rule = load_rules_text(TYPED.format(domain=domain), "t.rule")[0]
    unit = parse_bytes(ELEMENTWISE.replace("int i", decl).encode(), "k.cu")
    (site,) = [s for s in find_sites(unit, [rule], {}) if s.rule is rule]
    got = site_holes(rule, site.match, spec_of(unit))
    if want is None:
        assert not site.ok and "is short, not int" in site.reason
    else:
        assert got == {"t": want} and site.ok
        assert f"y[({want})i] = " in apply_rules(unit, [rule], {}).source.decode()
