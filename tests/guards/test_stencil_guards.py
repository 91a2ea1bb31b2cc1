"""``opposite_constants`` (klc/guards/stencil.py), through the skill
direct_offset_stencil_to_halo_tile: the offsets of a window run from the negated radius to the
radius, whichever way the lower bound is spelled."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites, spec_of
from klc.rule import RuleSet

KERNEL = """/* klc-spec
kernel: k
template: {{RAD: 2}}
sizes: {{H: 256, W: 256}}
args:
  - {{name: img, shape: [H, W], role: in}}
  - {{name: out, shape: [H, W], role: out}}
  - {{name: H, value: H}}
  - {{name: W, value: W}}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
#define TWO 2
template <int RAD>
__global__ void k(const float* img, float* out, int H, int W) {{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    float acc = 0.0f;
    for (int dy = {lo}; dy <= {hi}; dy++) {{
        for (int dx = {lo}; dx <= {hi}; dx++) {{
            int yy = y + dy;
            int xx = x + dx;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W) {{
                acc += 0.25f * img[yy * W + xx];
            }}
        }}
    }}
    out[y * W + x] = acc;
}}
"""


def site(lo: str, hi: str):  # type: ignore[no-untyped-def]
    rules = [r for r in RuleSet.load(["skills"]).rules
             if r.name == "direct_offset_stencil_to_halo_tile"]
    unit = parse_bytes(KERNEL.format(lo=lo, hi=hi).encode(), "k.cu")
    (s,) = [s for s in find_sites(unit, rules, spec=spec_of(unit)) if s.rule is rules[0]]
    return s


@pytest.mark.parametrize(("lo", "hi"), [("-1", "1"), ("-2", "2"), ("-TWO", "TWO"),
                                        ("-RAD", "RAD"), ("-(1)", "1"), ("-2", "TWO")])
def test_opposite_bounds_hold(lo: str, hi: str) -> None:
    s = site(lo, hi)
    assert s.ok, s.reason


@pytest.mark.parametrize(("lo", "hi", "why"), [
    ("-1", "2", "= -1 is not the negation of `2` = 2"),
    ("0", "1", "= 0 is not the negation of"),
    ("-W", "2", "`-W` is not an integer constant"),
    ("-W", "W", "`W` is not a compile-time constant"),
])
def test_other_bounds_are_refused(lo: str, hi: str, why: str) -> None:
    s = site(lo, hi)
    assert not s.ok and why in s.reason, s.reason
