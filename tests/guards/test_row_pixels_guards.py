"""``byte_integer`` (klc/guards/types.py), through the skill row_pixels_uchar4_store: the four
results of a thread leave as one uchar4 only where dst's element is a one-byte integer,
however it is spelled (a typedef included); and the guards of row_pixels_per_thread that keep
a pixel's statements to the pixel."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites, spec_of
from klc.rule import RuleSet

QUAD = """{prelude}
__global__ void k(const unsigned char* __restrict__ src, {t}* __restrict__ dst, int W, int H) {{
    int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    for (int k = 0; k < 4; k++) {{
        int col = col0 + k;
        if (col < W && row < H) {{
            int v = src[row * W + col];
            dst[row * W + col] = v / 2;
        }}
    }}
}}
"""

ONE = """/* klc-spec
kernel: invert
sizes: {{H: 256, W: 256}}
args:
  - {{name: src, shape: [H, W], type: "unsigned char*", role: in}}
  - {{name: dst, shape: [H, W], type: "unsigned char*", role: out}}
  - {{name: W, value: W}}
  - {{name: H, value: H}}
grid: ["ceil_div(W, 16)", "ceil_div(H, 16)"]
block: [16, 16]
*/
__global__ void invert(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                       int W, int H) {{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < W && row < H) {{
        {body}
        dst[row * W + col] = v;
    }}
}}
"""


def site(rule: str, text: str):  # type: ignore[no-untyped-def]
    rules = [r for r in RuleSet.load(["skills"]).rules if r.name == rule]
    unit = parse_bytes(text.encode(), "k.cu")
    sites = [s for s in find_sites(unit, rules, spec=spec_of(unit)) if s.rule is rules[0]]
    assert len(sites) == 1, [s.reason for s in sites]
    return sites[0]


@pytest.mark.parametrize(("prelude", "t"), [
    ("", "unsigned char"), ("", "char"), ("", "signed char"),
    ("#include <stdint.h>", "uint8_t"), ("#include <stdint.h>", "int8_t"),
    ("typedef unsigned char uchar;", "uchar"), ("typedef signed char schar;", "schar"),
    ("using byte_t = unsigned char;", "byte_t"),
])
def test_one_byte_integers_are_stored_as_uchar4(prelude: str, t: str) -> None:
    s = site("row_pixels_uchar4_store", QUAD.format(prelude=prelude, t=t))
    assert s.ok, s.reason


@pytest.mark.parametrize(("prelude", "t"), [
    ("", "bool"), ("", "short"), ("", "int"), ("", "float"), ("#include <cuda_fp16.h>", "__half"),
    ("typedef unsigned short ushort_t;", "ushort_t"), ("typedef float pixel;", "pixel"),
])
def test_other_types_are_refused(prelude: str, t: str) -> None:
    s = site("row_pixels_uchar4_store", QUAD.format(prelude=prelude, t=t))
    assert not s.ok
    assert "not a one-byte integer" in s.reason, s.reason


def test_a_pixel_of_plain_statements_is_taken() -> None:
    body = "unsigned char v = 255 - src[row * W + col];"
    s = site("row_pixels_per_thread", ONE.format(body=body))
    assert s.ok, s.reason


@pytest.mark.parametrize(("body", "why"), [
    ("unsigned char v = dst[row * W + col] + 1;", "uses `dst`"),
    ("unsigned char v = src[row * W + col]; if (v == 0) return;", "return"),
    ("unsigned char v = src[row * W + col] + blockIdx.x;", "reads `blockIdx`"),
    ("unsigned char v = src[row * W + col]; W = 0;", "assigns `W`"),
    ("__shared__ unsigned char t[32]; t[0] = 1; unsigned char v = t[0];", "reads `__shared__`"),
    ("unsigned char v = src[row * W + col]; printf(\"%d\\n\", v);", "may store"),
])
def test_a_pixel_that_reaches_past_itself_is_refused(body: str, why: str) -> None:
    s = site("row_pixels_per_thread", ONE.format(body=body))
    assert not s.ok
    assert why in s.reason, s.reason
