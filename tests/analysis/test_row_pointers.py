"""Row pointers in the analyses that guards read: ``const float* x = inp +
idx * C;`` makes "x is a row of inp" a fact. A write through a row pointer is a write to the
matrix (``no_write``, ``writes_in``, ``const_safe``, ``restrict_safe``); advancing a row
pointer writes no memory; the alignment of a row pointer is its matrix's, kept by every
step. Each construct in the spellings real kernels use, each verdict with its reason."""

from __future__ import annotations

import re

import pytest

from klc.cuda.parse import parse_bytes
from klc.guards import GuardContext, Verdict, evaluate
from klc.match import Binding, Match
from klc.pipeline import spec_of
from klc.rule.compile import parse_guard

SPEC = """/* klc-spec
kernel: k
sizes: {rows: 64, cols: 4096}
verify_sizes:
  - {rows: 3, cols: 1000}
args:
  - {name: inp, shape: [rows, cols], role: in}
  - {name: out, shape: [rows, cols], role: out}
  - {name: rows, value: rows}
  - {name: cols, value: cols}
grid: [rows]
block: [32]
*/
"""

KERNEL = """__global__ void k(const float* inp, float* out, int rows, int cols) {
    int row = blockIdx.x;
BODY
}
"""


def judge(body: str, guard: str, spec: bool = False, **binds: str) -> Verdict:
    """``guard`` at a match of the kernel's first line, with each metavariable bound to the
    first occurrence of its text as a whole word (after the parameter list: the parameter
    itself for ``inp``/``out``)."""
    src = (SPEC if spec else "") + KERNEL.replace("BODY", body)
    unit = parse_bytes(src.encode(), "k.cu")
    head = src.index("__global__")
    bindings = {}
    for name, text in binds.items():
        m = re.compile(r"(?<![\w.])" + re.escape(text) + r"(?![\w])").search(src, head)
        assert m is not None, text
        node = unit.root.descendant_for_byte_range(m.start(), m.end())
        assert node is not None and (node.start_byte, node.end_byte) == m.span(), text
        bindings[name] = Binding(name, m.start(), m.end(), text, (node,))
    end = src.index("{", head) + 1
    match = Match(None, unit, unit.function_at(head), head, end,  # type: ignore[arg-type]
                  (unit.root.descendant_for_byte_range(head, end),), bindings)
    return evaluate(parse_guard(guard), GuardContext(match, {}, spec_of(unit) if spec else None))


def holds(v: Verdict, reason: str) -> None:
    assert v.ok and not v.unknown, v.reason
    assert reason in v.reason, v.reason


def refused(v: Verdict, reason: str) -> None:
    assert not v.ok, v.reason
    assert reason in v.reason, v.reason


# a write through a row pointer is a write to the matrix ----------------------------------

@pytest.mark.parametrize(("body", "store"), [
    ("    float *y = out + (size_t)row * cols;\n"
     "    for (int c = 0; c < cols; c++) { y[c] = inp[c]; }", "k.cu:4:38: y[c] = inp[c]"),
    ("    float* __restrict__ y = &out[row * cols];\n"
     "    for (int c = 0; c < cols; c++) { y[c] = inp[c]; }", "k.cu:4:38: y[c] = inp[c]"),
    ("    auto y = out + row * cols;\n"
     "    for (int c = 0; c < cols; c++) { y[c] = inp[c]; }", "k.cu:4:38: y[c] = inp[c]"),
    ("    float* y;\n    y = out + row * cols;\n"
     "    for (int c = 0; c < cols; c++) { y[c] = inp[c]; }", "k.cu:5:38: y[c] = inp[c]"),
    ("    for (float* p = out + row * cols; p < out + (row + 1) * cols; ++p) *p = 0.0f;",
     "k.cu:3:72: *p = 0.0f"),
])
def test_a_store_through_a_row_pointer_writes_the_matrix(body: str, store: str) -> None:
    refused(judge(body, "no_write($O, kernel)", O="out"),
            f"`out` is written in global function `k`: {store} stores through it")
    holds(judge(body, "writes_in($O, kernel)", O="out"), store)
    refused(judge(body, "restrict_safe($O)", O="out"),
            f"`out` may share memory with `inp` (not __restrict__, not a distinct spec "
            f"buffer): `out` is written ({store} stores through it)")


# advancing a pointer writes no memory ------------------------------------------------------

ADVANCED = [
    # a row pointer moved to its row after its declaration
    "    const float* x = inp;\n    x += row * cols;\n    out[row] = x[0];",
    # walked element by element in the loop header
    "    const float* x = inp + row * cols;\n    float s = 0.0f;\n"
    "    for (int c = 0; c < cols; c++, x++) { s += *x; }\n    out[row] = s;",
    # with a prefix increment in the body
    "    const float *x = &inp[row * cols];\n    float s = 0.0f;\n"
    "    for (int c = 0; c < cols; c++) { s += *x; ++x; }\n    out[row] = s;",
    # the parameter itself advanced
    "    inp += (size_t)row * cols;\n    out[row] = inp[0];",
]


@pytest.mark.parametrize("body", ADVANCED)
def test_advancing_a_pointer_into_the_input_keeps_it_const_safe(body: str) -> None:
    holds(judge(body, "const_safe($I)", I="inp"),
          "`inp` is only read in `k`, through const views, and the type of `k` is free to "
          "change")


@pytest.mark.parametrize("body", ADVANCED[:3])
def test_no_write_sees_no_write_where_only_a_derived_pointer_moves(body: str) -> None:
    holds(judge(body, "no_write($I, kernel)", I="inp"), "no write through `inp` in global "
          "function `k`")


def test_no_write_still_refuses_the_buffer_itself_reassigned() -> None:
    # a load through `inp` after `inp += ...` reads other memory: row_cache_in_registers's
    # no_write($LOAD, anchor) must see it
    refused(judge(ADVANCED[3], "no_write($I, kernel)", I="inp"),
            "`inp` is written in global function `k`: k.cu:3:5: inp += (size_t)row * cols "
            "reassigns the pointer")


@pytest.mark.parametrize("body", [
    "    float& r = out[row];\n    r = 1.0f;",
    "    float &r = out[row * cols];\n    r += 2.0f;",
    "    auto& r = out[row];\n    r++;",
])
def test_a_reference_assigned_is_a_write(body: str) -> None:
    refused(judge(body, "no_write($O, kernel)", O="out"), "`out` is written in global "
            "function `k`: k.cu:4:5: r")


def test_an_advanced_output_row_pointer_is_still_a_write_to_the_output() -> None:
    body = ("    float* y = out + row * cols;\n"
            "    for (int c = 0; c < cols; c++) { *y++ = inp[c]; }")
    refused(judge(body, "no_write($O, kernel)", O="out"),
            "`out` is written in global function `k`: k.cu:4:38: *y++ = inp[c] stores "
            "through it")


# alignment through a row pointer ---------------------------------------------------------

@pytest.mark.parametrize(("decl", "how"), [
    ("const float* x = inp + (size_t)row * cols;",
     "offset by `(size_t)row * cols`, a multiple of 8 × 4 bytes (the spec gives `cols` the "
     "sizes 4096, 1000: multiples of 8), copied into `x`"),
    ("const float* __restrict__ x = &inp[row * cols];",
     "`row * cols` × 4 B, a multiple of 32 B (the spec gives `cols` the sizes 4096, 1000: "
     "multiples of 8), copied into `x`"),
    ("auto x = inp + row * cols;",
     "offset by `row * cols`, a multiple of 8 × 4 bytes (the spec gives `cols` the sizes "
     "4096, 1000: multiples of 8), copied into `x` (k.cu:16:5: auto x = inp + row * cols;)"),
    ("const float* x = inp;\n    x += row * cols;",
     "copied into `x` (k.cu:16:5: const float* x = inp;), advanced by known multiples of 32 "
     "bytes"),
])
def test_a_row_pointer_of_a_kernel_parameter_keeps_its_alignment(decl: str, how: str) -> None:
    body = f"    {decl}\n    out[row] = x[0];"
    holds(judge(body, "aligned($X, 16)", spec=True, X="x"), how)
    holds(judge(body, "element_aligned($X, $I, 16)", spec=True, X="x", I="0"), "")


@pytest.mark.parametrize(("decl", "why"), [
    ("const float* x = inp + row * cols;\n    x += 2;",
     "`x` is only known to be 8-byte aligned, not 16"),
    ("const float* x = &inp[row * cols + 1];",
     "`x` is only known to be 4-byte aligned, not 16"),
    ("const float* x = inp + row * cols;\n    for (int c = 0; c < 4; c++) x++;",
     "`x` is only known to be 4-byte aligned, not 16"),
    ("const float* x = inp + row * cols;\n    x = (const float*)(out + row);",
     "assigns `x` an address of unknown alignment"),
])
def test_a_row_pointer_moved_off_the_alignment_is_refused(decl: str, why: str) -> None:
    body = f"    {decl}\n    out[row] = x[0];"
    refused(judge(body, "aligned($X, 16)", spec=True, X="x"), why)
