"""walks_slow_dimension (klc/guards/coalesce.py): which of two indices scales addresses (the
row of a row-major array) and which never does (the column)."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import find_sites
from klc.rule import load_rules_text

RULE = """
rule t {
  kind: skill
  description: "t"
  context: global, kernel_scope
  anchor: ```
    int $R = blockIdx.x * blockDim.x + threadIdx.x;
    int $C = blockIdx.y * blockDim.y + threadIdx.y;
    $$$REST;
  ```
  metavar $R: identifier
  metavar $C: identifier
  guard: walks_slow_dimension($R, $C, $$$REST)
  rewrite add_attribute: "__launch_bounds__(256)"
}
"""

KERNEL = """
__global__ void k(const float* A, float* out, int rows, int cols, int ld) {{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    int c = blockIdx.y * blockDim.y + threadIdx.y;
    {body}
}}
"""


@pytest.mark.parametrize(("body", "ok", "why"), [
    ("if (r < rows && c < cols) out[r * cols + c] = A[r * cols + c];", True, "`r` scales"),
    ("const float* a = A + (size_t)r * ld; if (r < rows && c < cols) out[r * ld + c] = a[c];",
     True, "`r` scales"),
    ("if (r < rows) out[(r << 10) + c] = 1.0f;", True, "`r` scales"),
    # the column scales too (a transpose): neither index is the contiguous one alone
    ("if (r < rows && c < cols) out[c * rows + r] = A[r * cols + c];", False,
     "`c` scales an address too"),
    # already coalesced: r is the column
    ("if (r < cols && c < rows) out[c * cols + r] = A[c * cols + r];", False,
     "`c` scales an address too"),
    ("if (r < rows) out[r] = A[r];", False, "`r` scales no address"),
    ("if (r < rows) out[r * cols] = 0.0f;", False, "does not use `c`"),
])
def test_walks_slow_dimension(body: str, ok: bool, why: str) -> None:
    rule = load_rules_text(RULE, "t.rule")[0]
    (site,) = find_sites(parse_bytes(KERNEL.format(body=body).encode(), "k.cu"), [rule])
    assert site.ok is ok, site.reason
    if not ok:
        assert why in site.reason
