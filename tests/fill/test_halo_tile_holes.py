"""The halo tile of a 2-D stencil (passes/halo_tile.rule, skills/halo_tile.rule): the skill
takes the tile's extents from the site's block and its element type from the input's
(geometry holes: ``block_dim(y, ==, ?byc)``, ``elem_type($SRC, ?t)``), and its rewrite
compiles at each; the pass takes the tile apart only where the tile is the block's plus its
halo and nothing else reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cli import main
from klc.cuda.parse import parse_bytes
from klc.gate.compile import compile_unit
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.rule import Rule, RuleSet

ROOT = Path(__file__).resolve().parents[2]

NAIVE = """/* klc-spec
kernel: box
sizes: {{H: 512, W: 640}}
args:
  - {{name: img, shape: [H, W], role: in, init: "randint(0, 200)"}}
  - {{name: out, shape: [H, W], role: out}}
  - {{name: H, value: H}}
  - {{name: W, value: W}}
grid: ["ceil_div(W, {bx})", "ceil_div(H, {by})"]
block: [{bx}, {by}]
*/
__global__ void box(const {t}* img, {t}* out, int H, int W) {{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    {acc} sum = 0;
    int count = 0;
    for (int yy = max(y - {r}, 0); yy <= min(y + {r}, H - 1); yy++) {{
        for (int xx = max(x - {r}, 0); xx <= min(x + {r}, W - 1); xx++) {{
            sum += img[yy * W + xx];
            count++;
        }}
    }}
    out[y * W + x] = ({t})(sum / count);
}}
"""


def rule_of(folder: str, name: str) -> Rule:
    return next(r for r in RuleSet.load([str(ROOT / folder)]).rules if r.name == name)


def applied(source: str, rule: Rule) -> str:
    unit = parse_bytes(source.encode(), "k.cu")
    return apply_rules(unit, [rule], spec=spec_of(unit)).source.decode()


def sites_of(source: str, rule: Rule) -> list:
    unit = parse_bytes(source.encode(), "k.cu")
    return [s for s in find_sites(unit, [rule], None, spec_of(unit)) if s.rule is rule]


@pytest.mark.parametrize(("bx", "by", "t", "acc", "r"), [
    (16, 16, "float", "float", 1),
    (32, 8, "unsigned char", "int", 2),
    (64, 4, "int", "int", 3),
    (8, 32, "unsigned short", "unsigned int", 1),
])
def test_the_tile_is_the_sites_block_and_element_type(bx: int, by: int, t: str, acc: str,
                                                      r: int) -> None:
    rule = rule_of("skills", "direct_stencil_to_halo_tile")
    src = NAIVE.format(bx=bx, by=by, t=t, acc=acc, r=r)
    (site,) = sites_of(src, rule)
    assert site.ok, site.reason
    assert {k: site.holes[k] for k in ("bxc", "byc", "t")} == \
        {"bxc": str(bx), "byc": str(by), "t": t}
    text = applied(src, rule)
    assert f"__shared__ {t} tile[{by} + 2 * {r}][{bx} + 2 * {r}];" in text
    assert f"sum += tile[yy - blockIdx.y * blockDim.y + {r}][xx - blockIdx.x * blockDim.x + " \
           f"{r}];" in text and "img[yy * W + xx]" not in text
    assert text.index("__syncthreads();") < text.index("if (x >= W || y >= H) return;")
    result = compile_unit(parse_bytes(text.encode(), "k.cu"), arch="sm_90", use_cache=False)
    assert result.ok, result.log


def test_a_type_outside_the_domain_is_refused_at_the_default() -> None:
    rule = rule_of("skills", "direct_stencil_to_halo_tile")
    src = NAIVE.format(bx=16, by=16, t="long long", acc="long long", r=1)
    (site,) = sites_of(src, rule)
    assert not site.ok and "long long" in site.reason and "float" in site.reason


def test_a_block_other_than_the_tiles_is_refused() -> None:
    rule = rule_of("skills", "direct_stencil_to_halo_tile")
    src = NAIVE.format(bx=16, by=16, t="float", acc="float", r=1).replace(
        "block: [16, 16]", "block: [16, 16, 2]")
    (site,) = sites_of(src, rule)
    assert not site.ok and "block.z" in site.reason


EXPERT = (ROOT / "bench/lineages/halo_tile/expert.cu").read_text()


def test_the_pass_takes_the_experts_tile_apart() -> None:
    rule = rule_of("passes", "halo_tile_to_direct")
    (site,) = sites_of(EXPERT, rule)
    assert site.ok, site.reason
    text = applied(EXPERT, rule)
    assert "__shared__" not in text and "__syncthreads" not in text
    assert "sum += img[yy * W + xx];" in text


@pytest.mark.parametrize(("edit", "why"), [
    # the block is not the tile's: the spec's block 32 x 8 under a 16 x 16 tile
    (("block: [BX, BY]", "block: [32, 8]"), "block.y is 8"),
    # the tile is read after the window too
    (("    out[y * W + x] = sum / count;", "    out[y * W + x] = sum / count + tile[0][0];"),
     "tile"),
    # the input is written: the tile holds the values before the barrier
    (("    out[y * W + x] = sum / count;", "    ((float*)img)[y * W + x] = sum / count;"),
     "img"),
    # the window's column moves inside the loop
    (("            count++;", "            count++;\n            x = x + 0;"), "x"),
])
def test_the_pass_refuses(edit: tuple[str, str], why: str) -> None:
    rule = rule_of("passes", "halo_tile_to_direct")
    assert edit[0] in EXPERT
    (site,) = sites_of(EXPERT.replace(*edit), rule)
    assert not site.ok and why in site.reason, site.reason


def test_klc_list_quotes_a_type_with_a_space(capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "tests/golden/direct_stencil_to_halo_tile/gray_u8_box5.cu"
    assert main(["list", str(path), "--only", "direct_stencil_to_halo_tile"]) == 0
    out = capsys.readouterr().out
    assert '?bxc=32 ?byc=8' in out and '?t="unsigned char"' in out
