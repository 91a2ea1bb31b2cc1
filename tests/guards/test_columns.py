"""The column-reduction predicates (klc/guards/columns.py): ``pure_declarations``,
``declares_zero``, ``no_stores``, ``block_split``, ``kernel_body``, ``column_walk``, and
the pass-only ``block_y_is``."""

from __future__ import annotations

from klc.cuda.parse import parse_bytes
from klc.guards import PREDICATES
from klc.pipeline import find_sites, spec_of
from klc.rule.ruleset import load_rules_text

SPEC = """/* klc-spec
kernel: k
sizes: {rows: 64, cols: 64}
args:
  - {name: x, shape: [rows, cols], role: in}
  - {name: y, shape: [cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: ["ceil_div(cols, 256)"]
block: [BLOCK]
*/
"""

PROBE = """
rule probe {
  kind: skill
  context: global
  anchor: ```
    int $C = blockIdx.x * blockDim.x + threadIdx.x;
    if ($C < $COLS) {
        $$$DECL;
        for (int $R = 0; $R < $N; $R++) {
            $$$LOOP;
            $A += $E;
        }
        $$$POST;
    }
  ```
  guard: GUARD and block_split(?f, ?ty)
  rewrite replace: ```
    int $C = blockIdx.x * blockDim.x + threadIdx.x;
    if ($C < $COLS) {
        $$$DECL;
        for (int $R = 0; $R < $N; $R++) {
            $$$LOOP;
            $A += $E;
        }
        $$$POST;
    }
  ```
  hole f: int in {1, 2, 4, 8} default 2
  hole ty: int in {2, 4, 8, 16, 32} default 8
}
"""


def kernel(decl: str = "float s = 0.0f;", loop: str = "", after: str = "",
           post: str = "y[c] = s;", before: str = "") -> str:
    return (f"__global__ void k(float* x, float* y, int rows, int cols) {{\n{before}"
            "    int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (c < cols) {{\n        {decl}\n"
            f"        for (int r = 0; r < rows; r++) {{\n            {loop}\n"
            "            s += x[r * cols + c];\n        }\n"
            f"        {post}\n    }}\n{after}}}\n")


def verdict(guard: str, source: str, block: str = "256") -> tuple[bool, str]:
    text = (SPEC.replace("BLOCK", block) + source).encode()
    unit = parse_bytes(text, "k.cu")
    rules = load_rules_text(PROBE.replace("GUARD", guard), "p.rule")
    sites = find_sites(unit, rules, None, spec_of(unit))
    assert len(sites) == 1, [s.reason for s in sites]
    return sites[0].ok, sites[0].reason


def test_registered() -> None:
    for name in ("pure_declarations", "declares_zero", "no_stores", "block_split",
                 "kernel_body", "block_y_is", "column_walk"):
        assert name in PREDICATES


def test_pure_declarations() -> None:
    assert verdict("pure_declarations($$$DECL)",
                   kernel("float s = 0.0f, t = 1.0f / rows; const float* p = x + c;"))[0]
    ok, why = verdict("pure_declarations($$$DECL)", kernel("float s = x[c];"))
    assert not ok and "reads memory" in why
    ok, why = verdict("pure_declarations($$$DECL)", kernel("float s = 0.0f; y[c] = 0.0f;"))
    assert not ok and "is not a declaration" in why
    ok, why = verdict("pure_declarations($$$DECL)", kernel("float s = expf(0.0f);"))
    assert not ok and "calls" in why
    ok, why = verdict("pure_declarations($$$DECL)", kernel("float s = *y;"))
    assert not ok and "dereferences" in why


def test_declares_zero() -> None:
    for decl in ("float s = 0.0f;", "double t = 1.0, s = 0.0;", "int s = 0;", "float s = 0;"):
        assert verdict("declares_zero($$$DECL, $A)", kernel(decl))[0], decl
    ok, why = verdict("declares_zero($$$DECL, $A)", kernel("float s = 1.0f;"))
    assert not ok and "not at zero" in why
    ok, why = verdict("declares_zero($$$DECL, $A)", kernel("float s;"))
    assert not ok and "not declared with an initializer" in why


def test_no_stores() -> None:
    assert verdict("no_stores($$$LOOP)", kernel(loop="float v = x[r];"))[0]
    ok, why = verdict("no_stores($$$LOOP)", kernel(loop="y[c] = s;"))
    assert not ok and "stores" in why
    ok, _ = verdict("no_stores($$$LOOP)", kernel(loop="atomicAdd(y, 1.0f);"))
    assert not ok


def test_block_split() -> None:
    assert verdict("block_split(?f, ?ty)", kernel())[0]          # 256 -> 128 x 8
    assert verdict("block_split(?f, ?ty)", kernel(), "64")[0]    # 64 -> 32 x 8
    ok, why = verdict("block_split(?f, ?ty)", kernel(), "512")   # 256 x 8 > 1024
    assert not ok and "exceed 1024" in why
    ok, why = verdict("block_split(?f, ?ty)", kernel(), "64, 2")
    assert not ok and "not one-dimensional" in why
    ok, why = verdict("block_split(?f, ?ty)", kernel(), "33")
    assert not ok and "not a multiple of 2" in why
    bounded = kernel().replace("__global__ void", "__global__ void __launch_bounds__(256)")
    ok, why = verdict("block_split(?f, ?ty)", bounded)
    assert not ok and "__launch_bounds__" in why


def test_kernel_body() -> None:
    assert verdict("kernel_body(anchor)", kernel())[0]
    ok, why = verdict("kernel_body(anchor)", kernel(after="    y[0] = 1.0f;\n"))
    assert not ok and "follows the anchor" in why
    ok, why = verdict("kernel_body(anchor)", kernel(before="    int t = threadIdx.x;\n"))
    assert not ok and "comes before the anchor" in why


def test_block_y_is_is_pass_only() -> None:
    assert PREDICATES["block_y_is"].traits.pass_only
    assert verdict("block_y_is(1)", kernel())[0]
    ok, why = verdict("block_y_is(8)", kernel())
    assert not ok and "block.y is 1" in why


def walk_kernel(loop: str, acc: str) -> str:
    return ("__global__ void k(float* x, float* y, int rows, int cols) {\n"
            "    int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (c < cols) {\n        float s = 0.0f;\n"
            f"        for (int r = 0; r < rows; r++) {{\n            {loop}\n"
            f"            s += {acc};\n        }}\n        y[c] = s;\n    }}\n}}\n")


def test_column_walk() -> None:
    guard = "column_walk($$$LOOP, $E, $R, $C)"
    for loop, acc in (("", "x[r * cols + c]"), ("", "x[c + (size_t)r * cols]"),
                      ("float v = x[(long)r * cols + c];", "v"),
                      ("const float* row = x + r * cols;", "row[c] * 2.0f")):
        assert verdict(guard, walk_kernel(loop, acc))[0], (loop, acc)
    for loop, acc in (("", "x[c * cols + r]"), ("const float* p = x + c * cols;", "p[r]"),
                      ("", "x[r]")):
        ok, why = verdict(guard, walk_kernel(loop, acc))
        assert not ok and "does not walk down a column" in why, (loop, acc)
