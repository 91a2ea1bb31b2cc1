"""Statement dots and ``anchor any`` in the matcher: what a ``...`` skips (shortest first, none
included), what its when clauses and the default forbid, that a rewrite writes the skipped
statements back byte for byte, and that an alternation finds every branch's spelling once
with only the common bindings (docs/rules.md)."""

from __future__ import annotations

import pytest

from klc.cuda.parse import parse_bytes
from klc.errors import KlcError
from klc.match import compile_pattern, find_matches, pattern_of
from klc.pipeline import apply_rules
from klc.rule import load_rules_text

ANCHOR = """
int $R = $E;
...
if ($R < $N) {
    $$$BODY;
}
"""


def _kernel(between: str) -> bytes:
    return (b"__global__ void k(float* out, const float* in, int n) {\n"
            b"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            + between.encode() +
            b"    if (i < n) {\n        out[i] = in[i];\n    }\n}\n")


def _found(anchor: str, source: bytes) -> list[dict[str, str]]:
    unit = parse_bytes(source, "k.cu")
    return [{k: v.text for k, v in m.bindings.items()}
            for m in find_matches(compile_pattern(anchor), unit)]


@pytest.mark.parametrize("between", [
    "",  # none skipped
    "    float eps = 1e-5f;\n",
    "    const float* row = in + i;  // a row pointer\n    float scale = 2.0f;\n",
    "    // only a comment\n",
])
def test_dots_skip_any_run_of_harmless_statements(between: str) -> None:
    [b] = _found(ANCHOR, _kernel(between))
    assert b["R"] == "i" and b["N"] == "n" and b["BODY"] == "out[i] = in[i];"
    assert b["__dots0"] == between.strip()


@pytest.mark.parametrize(("between", "clause"), [
    ("    i += 1;\n", ""),  # assigns what $R bound
    ("    i++;\n", ""),
    ("    int n = 4;\n", ""),  # redeclares what $N bound
    ("    float eps = 1e-5f;\n    n = n / 2;\n", ""),
    ("    out[0] = 1.0f;\n", " when not stores"),
    ("    float t = threadIdx.x;\n", " when not mentions(threadIdx)"),
    ("    float* o = out;\n    o[1] = 2.0f;\n", " when not writes(out)"),  # through an alias
])
def test_dots_refuse_what_their_clauses_forbid(between: str, clause: str) -> None:
    anchor = ANCHOR.replace("...", "..." + clause)
    assert _found(anchor, _kernel(between)) == []
    # the same statement is skipped where nothing forbids it (when any: not even the default)
    assert len(_found(ANCHOR.replace("...", "... when any"), _kernel(between))) == 1


def test_dots_inside_a_block_and_shortest_first() -> None:
    anchor = """
if ($I < $N) {
    ...
    $Y[$I] = $X[$I];
}
"""
    src = (b"__global__ void k(float* y, const float* x, int n) {\n"
           b"    int i = threadIdx.x;\n"
           b"    if (i < n) {\n        float a = 1.0f;\n        y[i] = x[i];\n    }\n}\n")
    [b] = _found(anchor, src)
    assert b["__dots0"] == "float a = 1.0f;" and b["Y"] == "y"


RULE = '''rule twice {
  kind: skill
  anchor: ```
    int $R = $E;
    ... when not mentions(threadIdx)
    if ($R < $N) {
        $$$BODY;
    }
  ```
  rewrite replace: ```
    int $R = 2 * ($E);
    ...
    if ($R < $N) {
        $$$BODY;
    }
  ```
}
'''


def test_a_rewrite_writes_the_skipped_statements_back_byte_for_byte() -> None:
    between = ("    float  eps =  1e-5f;   /* odd spacing */\n"
               "    // a comment line\n"
               "    const float* row = in + i; // trailing\n")
    src = _kernel(between)
    [rule] = load_rules_text(RULE, "t.rule")
    out = apply_rules(parse_bytes(src, "k.cu"), [rule])
    assert out.changed
    assert out.source == src.replace(b"int i = blockIdx.x * blockDim.x + threadIdx.x;",
                                     b"int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x);")


def test_a_matched_line_s_own_comment_stays_with_it() -> None:
    src = _kernel("    float eps = 1e-5f;\n").replace(b"threadIdx.x;\n", b"threadIdx.x; // idx\n")
    [rule] = load_rules_text(RULE, "t.rule")
    out = apply_rules(parse_bytes(src, "k.cu"), [rule])
    assert b"threadIdx.x); // idx\n    float eps = 1e-5f;\n" in out.source


@pytest.mark.parametrize("anchor", [
    "...\nint $R = $E;",  # begins the anchor
    "int $R = $E;\n...",  # ends it
    "{\n    $$$A;\n    ...\n    x = 1;\n}",  # next to a run
])
def test_dots_that_stand_for_nothing_known_are_refused(anchor: str) -> None:
    with pytest.raises(KlcError):
        compile_pattern(anchor)


ALT = '''rule alt {
  kind: skill
  context: global
  anchor any {
    ```
    $X[$I]
    ```
    ```
    $X + $OFFSET
    ```
    ```
    atomicAdd($X, $V)
    ```
  }
  metavar $X: identifier, pointer
  guard: is_kernel_param($X) and not is_restrict($X)
  rewrite add_qualifier $X: "__restrict__"
}
'''

# the three spellings of a use, each parameter in its own
SPELLINGS = (b"__global__ void k(float *a, float* b, int * c, int n) {\n"
             b"    int i = threadIdx.x;\n"
             b"    float* row = b + i * n;\n"
             b"    atomicAdd(c, 1);\n"
             b"    row[0] = a[i];\n}\n")


def test_alternation_finds_each_branch_once_with_the_common_bindings() -> None:
    [rule] = load_rules_text(ALT, "a.rule")
    unit = parse_bytes(SPELLINGS, "k.cu")
    found = list(find_matches(pattern_of(rule), unit, rule))
    spans = [(m.start, m.end) for m in found]
    assert len(spans) == len(set(spans))  # a span matched once, by its first branch
    assert [(unit.text(m.start, m.end), sorted(m.bindings)) for m in found] == [
        ("b + i * n", ["X"]), ("atomicAdd(c, 1)", ["X"]), ("row[0]", ["X"]), ("a[i]", ["X"])]
    out = apply_rules(unit, [rule])
    assert out.source == SPELLINGS.replace(
        b"(float *a, float* b, int * c, int n)",
        b"(float * __restrict__ a, float* __restrict__ b, int * __restrict__ c, int n)")


def test_klc_ast_shows_the_dots_and_their_clauses(capsys: pytest.CaptureFixture[str]) -> None:
    from klc.cli import main

    assert main(["ast", "--pattern", ANCHOR.replace("...", "... when not stores")]) == 0
    out = capsys.readouterr().out
    assert "...  (any run of statements; when not stores)" in out
    assert "__dots" not in out
