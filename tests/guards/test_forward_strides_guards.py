"""The guards of the forward strided-loop skills (skills/experts/strided_loops.rule, in
klc/guards/strides.py): a loop's iterations that own their elements
(``iteration_owned_stores``), a kernel that reads no thread coordinate
(``thread_coordinates_unread``) and one that reads nothing of the grid along an axis
(``grid_axis_unread``); each spelling read, each near miss refused with its reason."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from klc.cuda.parse import parse_bytes
from klc.guards.macros import _ANY_DEFINE, _define_lines
from klc.pipeline import find_sites, spec_of
from klc.rule.ruleset import load_rules_text

SPEC = """/* klc-spec
kernel: k
sizes: {rows: 64, n: 4096}
args:
  - {name: y, shape: [rows, n], role: out}
  - {name: x, shape: [rows, n], role: in}
  - {name: z, shape: [n], role: inout}
  - {name: rows, value: rows}
  - {name: n, value: n}
grid: [rows]
block: [1]
bytes: 8 * rows * n
*/
"""


def verdicts(guard: str, body: str, before: str = "") -> list[tuple[bool, str]]:
    rule = f"""
rule probe {{
  kind: skill
  anchor: ```
    for (int $C = 0; $C < $N; $C++) {{
        $$$BODY;
    }}
  ```
  metavar $C: identifier
  guard: {guard}
  rewrite replace: ```
    for (int $C = 0; $C < $N; $C++) {{
        $$$BODY;
    }}
  ```
}}
"""
    code = (f"{SPEC}{before}__global__ void k(float* y, const float* x, float* z, int rows, int n) "
            f"{{\n{body}\n}}\n")
    unit = parse_bytes(code.encode(), "k.cu")
    return [(s.ok, s.reason) for s in find_sites(unit, load_rules_text(rule, "t.rule"),
                                                  spec=spec_of(unit))]


OWNED = "iteration_owned_stores($C, $$$BODY)"


@pytest.mark.parametrize("body", [
    "const int r = blockIdx.x;\n"
    "for (int c = 0; c < n; c++) { y[r * n + c] = 2.0f * x[r * n + c]; }",
    # the element's offset in a local of the body, and the row's pointer advanced before
    "const int r = blockIdx.x;\ny += r * n;\n"
    "for (int c = 0; c < n; c++) { const long long at = c; y[at] = y[at] * x[r * n + c]; }",
    # a private temporary of the body, reads of other memory at any index
    "const int r = blockIdx.x;\n"
    "for (int c = 0; c < n; c++) { float t = x[r * n + c] + x[0]; y[r * n + c] = t; }",
])
def test_owned_stores_read(body: str) -> None:
    [(ok, why)] = verdicts(OWNED, body)
    assert ok, why


@pytest.mark.parametrize("body, why", [
    ("const int r = blockIdx.x;\nfor (int c = 0; c < n; c++) { y[r] = x[r * n + c]; }",
     "whose index is not `c` plus terms that stay fixed"),
    ("const int r = blockIdx.x;\nfor (int c = 0; c < n; c++) { y[2 * c] = x[c]; }",
     "whose index is not `c` plus terms that stay fixed"),
    # a later iteration reads what an earlier one wrote (a prefix)
    ("const int r = blockIdx.x;\n"
     "for (int c = 0; c < n; c++) { y[r * n + c] = x[c] + y[r * n + c - 1]; }",
     "reaches the memory of `y` other than as `y[r*n+c]` in the loop"),
    # the written memory read again after the loop, with no barrier
    ("const int r = blockIdx.x;\nfor (int c = 0; c < n; c++) { y[r * n + c] = x[c]; }\n"
     "if (r == 0) { y[0] = y[n - 1]; }",
     "reaches the memory of `y` other than as `y[r*n+c]` in the loop"),
    # a term of the index that the body changes
    ("int r = blockIdx.x;\nfor (int c = 0; c < n; c++) { y[r + c] = x[c]; r = r + 1; }",
     "`r` may change from one iteration to the next"),
    ("const int r = blockIdx.x;\nfor (int c = 0; c < n; c++) { y[r * n + c] = x[c]; }\n"
     "float* p = &y[0];",
     "takes the address of memory of `y`"),
    # memory the loop reads, written after it: a thread ahead of another changes it
    ("const int r = blockIdx.x;\nfor (int c = 0; c < n; c++) { y[r * n + c] = z[c]; }\n"
     "z[r] = 0.0f;",
     "writes it outside the loop"),
    ("const int r = blockIdx.x;\nfor (int c = 0; c < n; c++) { y[r * n + c] = z[c]; }\n"
     "reset(z);",
     "hands it to a call outside the loop"),
    # a thread's own array: split over threads or blocks, each would fill only its part
    ("float v[8];\nfloat* w = &v[0];\nfor (int c = 0; c < n; c++) { w[c] = x[c]; }\n"
     "y[blockIdx.x] = v[0] + v[7];",
     "which is not the memory of a pointer parameter"),
])
def test_owned_stores_near_misses(body: str, why: str) -> None:
    [(ok, reason)] = verdicts(OWNED, body)
    assert not ok and why in reason, reason


def test_thread_coordinates_unread() -> None:
    guard = "thread_coordinates_unread"
    loop = "for (int c = 0; c < n; c++) { y[blockIdx.x * n + c] = x[c]; }"
    [(ok, why)] = verdicts(guard, loop)
    assert ok, why
    # a copy of threadIdx.x that nothing reads (what a block-stride loop's rewrite leaves)
    [(ok, why)] = verdicts(guard, "const int tid = threadIdx.x;\n" + loop)
    assert ok, why
    for body, reason in (
        ("const int tid = threadIdx.x;\n" + loop + "\ny[tid] = 0.0f;", "reads `threadIdx`"),
        (loop + "\nif (blockDim.x > 1) { y[0] = 1.0f; }", "reads `blockDim`"),
        (loop + "\ny[blockIdx.x] += 1.0f;", "updates memory in place"),
        (loop + "\natomicAdd(y, 1.0f);", "an atomic"),
    ):
        [(ok, why)] = verdicts(guard, body)
        assert not ok and reason in why, (body, why)


def test_grid_axis_unread() -> None:
    guard = "grid_axis_unread(y)"
    loop = "for (int c = 0; c < n; c++) { y[blockIdx.x * n + c] = x[c]; }"
    [(ok, why)] = verdicts(guard, "const int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           + loop)
    assert ok, why
    for body, reason in (
        ("const int r = blockIdx.y;\n" + loop, "`blockIdx.y` is read"),
        (loop + "\nif (gridDim.y > 1) { y[0] = 0.0f; }", "`gridDim.y` is read"),
        (loop + "\ny[0] *= 2.0f;", "updates memory in place"),
    ):
        [(ok, why)] = verdicts(guard, body)
        assert not ok and reason in why, (body, why)


@pytest.mark.parametrize("before, call, refused", [
    # a helper the kernel calls (directly or through another) that reads the axis
    ("__device__ int row() { return blockIdx.y; }\n", "int r = row();", "`row`"),
    ("__device__ int row() { return (int)gridDim.y; }\n"
     "__device__ int outer() { return row() + 1; }\n", "int r = outer();", "`row`"),
    # a macro the kernel uses whose definition reads it
    ("#define ROW (blockIdx.y * 2)\n", "int r = ROW;", "the macro `ROW`"),
    # a helper that reads it but that the kernel never calls; one that reads another axis
    ("__device__ int row() { return blockIdx.y; }\n", "int r = 0;", ""),
    ("__device__ int col() { return blockIdx.x; }\n", "int r = col();", ""),
])
def test_grid_axis_unread_follows_the_helpers_and_macros(before: str, call: str,
                                                         refused: str) -> None:
    loop = "for (int c = 0; c < n; c++) { y[blockIdx.x * n + c] = x[c] + r; }"
    [(ok, why)] = verdicts("grid_axis_unread(y)", f"{call}\n{loop}", before)
    assert ok == (not refused), why
    if refused:
        assert why.startswith(f"grid_axis_unread: {refused}") or refused in why, why


LINES = ["#define A 1", "  #  define B(x) (x)", "#define C \\", " define D", "x = 1; // define",
         "#define E blockIdx.y \\", "  + 1", "define", "#undef A", "#define F", ""]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=12))
def test_the_define_lines_are_the_regexs_over_the_whole_file(lines: list[str]) -> None:
    """``file_definitions`` tries its regex only where a line spells ``define``: the same
    matches as trying every line."""
    src = "\n".join(lines).encode()
    assert [(m.start(), m.end(), m.groups()) for m in _define_lines(src)] == [
        (m.start(), m.end(), m.groups()) for m in _ANY_DEFINE.finditer(src)]


# -- where the grid's words stand: found by scans for the words, then the expression tried
# there (``_word_matches``), the same matches as the expression tried everywhere

_PIECES = ["blockIdx", "gridDim", "threadIdx", "blockDim", "__shfl_down_sync", "__shfl",
           "__syncwarp", ".", " ", "\n", "y", "x", "_", "a", "(", "//", "blockIdx.y"]


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(_PIECES), max_size=40).map("".join),
       start=st.integers(0, 80), width=st.integers(0, 200))
def test_word_matches_are_the_expressions_matches(text: str, start: int, width: int) -> None:
    import re

    from klc.analysis.tree import _leading_words, word_matches

    src = text.encode()
    end = min(len(src), start + width)
    start = min(start, end)
    for words in (re.compile(rb"\b(blockIdx|gridDim)\s*\.\s*y\b"),
                  re.compile(rb"\b(threadIdx|blockDim|__shfl\w*|__syncwarp)\b")):
        assert _leading_words(words.pattern) is not None
        assert [(m.start(), m.group(0)) for m in word_matches(words, src, start, end)] == \
            [(m.start(), m.group(0)) for m in words.finditer(src, start, end)]


def test_a_pattern_of_another_shape_is_tried_everywhere() -> None:
    import re

    from klc.analysis.tree import _leading_words, word_matches

    for pattern in (rb"blockIdx", rb"\b(ab?c|d)", rb"\b(a(b)|c)", rb"\b(\.x|y)"):
        assert _leading_words(pattern) is None
    words = re.compile(rb"\b(ab?c|d)")
    src = b"ac abc d xd"
    assert [m.start() for m in word_matches(words, src, 0, len(src))] == [0, 3, 7]
