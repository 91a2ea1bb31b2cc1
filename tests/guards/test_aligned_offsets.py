"""``aligned`` through a pointer offset that is not a constant but a known multiple (a row
pointer ``x + row * cols`` with every spec size of cols a multiple of 4), and the float4
skills that now guard the 16-byte alignment of the pointer they vectorize."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.pipeline import apply_rules, find_sites, spec_of
from klc.rule.ruleset import load_rules, load_rules_text

ROOT = Path(__file__).resolve().parents[2]

SPEC = """/* klc-spec
kernel: k
template: {TILE: 8}
sizes: {rows: 64, cols: 4096}
verify_sizes:
  - {rows: 3, cols: COLS}
args:
  - {name: x, shape: [rows, cols], role: in}
  - {name: y, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: [rows]
block: [32]
*/
template <int TILE>
__global__ void k(const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x;
    const float* p = OFFSET;
    y[r] = p[0];
}
"""

PROBE = """
rule probe {
  kind: skill
  anchor: ```
    const float* $P = $E;
  ```
  guard: aligned($P, 16)
  rewrite replace: ```
    const float* $P = $E;
  ```
}
"""


def verdict(offset: str, cols: int = 1000) -> tuple[bool, str]:
    src = SPEC.replace("COLS", str(cols)).replace("OFFSET", offset)
    unit = parse_bytes(src.encode(), "k.cu")
    (site,) = find_sites(unit, load_rules_text(PROBE, "p.rule"), spec=spec_of(unit))
    return site.ok, site.reason


@pytest.mark.parametrize("offset", [
    "x + (size_t)r * cols",          # cols: 4096 and 1000, multiples of 4
    "x + cols * r",
    "x + r * cols + 4 * threadIdx.x",
    "x + (r << 2)",
    "x + r * TILE",                  # a template argument the spec gives
    "x + ((size_t)r * cols - 8)",
])
def test_an_offset_known_to_be_a_multiple_of_four_floats_keeps_16_bytes(offset: str) -> None:
    ok, reason = verdict(offset)
    assert ok, reason


@pytest.mark.parametrize(("offset", "cols", "why"), [
    ("x + (size_t)r * cols", 999, "the spec gives `cols` the sizes 4096, 999: multiples of 1"),
    ("x + r * cols + 2", 1000, "only known to be 8-byte aligned, not 16"),
    ("x + r", 1000, "the offset `r` of `x + r` is not a known constant"),
    ("x + (r << 1)", 1000, "offset by `(r << 1)`, a multiple of 2 × 4 bytes"),
    ("x + rows * 2", 1000, "the spec gives `rows` the sizes 64, 3: multiples of 1"),
])
def test_an_offset_not_known_to_be_a_multiple_of_four_floats_is_refused(
        offset: str, cols: int, why: str) -> None:
    ok, reason = verdict(offset, cols)
    assert not ok and why in reason, reason


def test_a_size_parameter_assigned_in_the_kernel_proves_nothing() -> None:
    src = SPEC.replace("COLS", "1000").replace("OFFSET", "x + (size_t)r * cols") \
        .replace("    const int r = blockIdx.x;", "    const int r = blockIdx.x;\n    cols += 1;")
    unit = parse_bytes(src.encode(), "k.cu")
    (site,) = find_sites(unit, load_rules_text(PROBE, "p.rule"), spec=spec_of(unit))
    assert not site.ok


OFFSET_KERNEL = """\
__global__ void k(const float* x, float* y, float* acc_out, int n4) {
    const float* xs = x + 2;
    float* ys = y + 2;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v;
    v = make_float4(xs[4 * (i) + 0], xs[4 * (i) + 1], xs[4 * (i) + 2], xs[4 * (i) + 3]);
    {
        ys[4 * (i) + 0] = v.x;
        ys[4 * (i) + 1] = v.y;
        ys[4 * (i) + 2] = v.z;
        ys[4 * (i) + 3] = v.w;
    }
    float acc = 0.0f;
    for (int j = i; j < n4; j += 32) {
        acc += xs[j];
    }
    acc_out[i] = acc;
}
"""


@pytest.mark.parametrize("skill", ["vectorize_float4_assign", "vectorize_float4_store",
                                   "vectorize_float4_loop"])
def test_the_float4_skills_refuse_a_pointer_two_floats_in(skill: str) -> None:
    rules = [r for r in load_rules(str(ROOT / "skills/vectorize.rule")) if r.name == skill]
    unit = parse_bytes(OFFSET_KERNEL.encode(), "k.cu")
    out = apply_rules(unit, rules, {"j": "t", "v": "w"} if skill.endswith("loop") else None)
    assert not out.changed
    (refused,) = out.refused
    assert "only known to be 8-byte aligned, not 16" in refused.reason
    # at offset 0 the same code is vectorized
    unit = parse_bytes(OFFSET_KERNEL.replace(" + 2;", ";").encode(), "k.cu")
    out = apply_rules(unit, rules, {"j": "t", "v": "w"} if skill.endswith("loop") else None)
    assert out.changed and b"reinterpret_cast<" in out.source
