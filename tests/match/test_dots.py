"""Statement dots and ``anchor any`` in the matcher: what a ``...`` skips (shortest first, none
included), what its when clauses and the default forbid, that a rewrite writes the skipped
statements back byte for byte, and that an alternation finds every branch's spelling once
with only the common bindings (docs/rules.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klc.cuda.parse import parse_bytes
from klc.errors import KlcError
from klc.match import compile_pattern, find_matches, pattern_of
from klc.pipeline import apply_rules, find_sites
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
    ("    int m = n / 2;\n    m -= 1;\n", " when not writes(m)"),  # declares what it lists
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


def _rows_kernel(between: str, bound: str = "rows") -> bytes:
    """A first-version row kernel: the row count may be a local declared between the row
    index and its check (``between``)."""
    return (b"__global__ void row_sums(float* out, const float* x, int batch, int seq,\n"
            b"                         int dim) {\n"
            b"    int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
            + between.encode() +
            b"    if (r < " + bound.encode() + b") {\n"
            b"        float acc = 0.0f;\n"
            b"        for (int j = 0; j < dim; j++) {\n"
            b"            acc += x[r * dim + j];\n"
            b"        }\n"
            b"        out[r] = acc;\n"
            b"    }\n}\n")


@pytest.mark.parametrize("between", [
    "    int rows = batch * seq;\n",
    "    const int rows = batch * seq;\n",
    "    const float eps = 1e-5f;\n    int rows = batch * seq;\n",
    "    int rows = batch * seq, cols = dim;\n",
    "    size_t rows = (size_t)batch * seq;  // a 64-bit count\n",
])
def test_the_dots_may_declare_the_name_the_anchor_reads_after_them(between: str) -> None:
    """``int rows = batch * seq;`` skipped by the dots declares the ``rows`` that ``$N``
    binds after them: the match reads it in the run's scope only, as the code does."""
    [b] = _found(ANCHOR, _rows_kernel(between))
    assert b["R"] == "r" and b["N"] == "rows" and b["__dots0"] == between.strip()


def test_a_name_the_dots_declare_in_a_nested_block_is_not_theirs() -> None:
    """A declaration nested in a block of the skipped statements ends with that block: the
    ``rows`` the check reads is the one declared straight among them."""
    between = ("    int rows = batch * seq;\n    float warm = 0.0f;\n    {\n"
               "        const int rows = 4;\n        warm += x[rows];\n    }\n")
    [b] = _found(ANCHOR, _rows_kernel(between))
    assert b["N"] == "rows" and b["__dots0"] == between.strip()
    # a loop of the skipped statements that assigns its own `r`: the default still refuses
    loop = "    int rows = batch * seq;\n    for (int r = 0; r < 4; r++) {\n    }\n"
    assert _found(ANCHOR, _rows_kernel(loop)) == []


@pytest.mark.parametrize(("source", "reason"), [
    # the name is assigned again by the skipped statements: the check reads another value
    (_rows_kernel("    int rows = batch * seq;\n    rows = rows - 1;\n"), "assign rows"),
    (_rows_kernel("    int rows = batch * seq;\n    rows--;\n"), "assign rows"),
    # the match reads the name before the dots too: there it is the parameter, after them
    # the local of a nested block that shadows it (the same word, two variables)
    (b"__global__ void k(float* out, const float* in, int n) {\n"
     b"    if (n > 0) {\n"
     b"        int i = (blockIdx.x * blockDim.x + threadIdx.x) % n;\n"
     b"        int n = 4;\n"
     b"        if (i < n) {\n            out[i] = in[i];\n        }\n    }\n}\n",
     "declare n, which the match reads before them"),
])
def test_a_declared_name_whose_meaning_the_dots_change_is_refused(source: bytes,
                                                                 reason: str) -> None:
    assert _found(ANCHOR, source) == []
    unit = parse_bytes(source, "k.cu")
    [m] = _found_raw(ANCHOR.replace("...", "... when any"), unit)
    from klc.match.dots import dots_refusal
    why = dots_refusal(compile_pattern(ANCHOR), m)
    assert why is not None and reason in why, why


def test_a_name_declared_in_a_block_and_read_after_it_is_refused() -> None:
    """``$Y`` bound inside the block (the local ``y`` the dots declare) and after it (the
    parameter ``y``): two variables, one word."""
    anchor = """
if ($I < $N) {
    ...
    $Y[$I] = $X[$I];
}
$Y[$I] = $V;
"""
    src = (b"__global__ void k(float* y, const float* x, float* z, int n) {\n"
           b"    int i = threadIdx.x;\n"
           b"    if (i < n) {\n        float* y = z;\n        y[i] = x[i];\n    }\n"
           b"    y[i] = 0.0f;\n}\n")
    assert _found(anchor, src) == []
    assert len(_found(anchor.replace("...", "... when any"), src)) == 1
    # without the shadowing local the same shape matches
    assert len(_found(anchor, src.replace(b"float* y = z;", b"float* w = z;"))) == 1


def _found_raw(anchor: str, unit):  # type: ignore[no-untyped-def]
    return list(find_matches(compile_pattern(anchor), unit))


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


# Rules whose rewrites write the bound name in and out of the scope of the run that declares it
SCOPED = '''rule keep_after {
  kind: skill
  anchor: ```
    int $R = $E;
    ... when not stores
    if ($R < $N) {
        $$$BODY;
    }
  ```
  rewrite replace: ```
    const int $R = $E;
    ...
    if ($R < $N) {
        $$$BODY;
    }
  ```
}

rule clamp_before {
  kind: skill
  anchor: ```
    int $R = $E;
    ... when not stores
    if ($R < $N) {
        $$$BODY;
    }
  ```
  rewrite replace: ```
    int $R = min($E, $N);
    ...
    if ($R < $N) {
        $$$BODY;
    }
  ```
}

rule run_clamp_before {
  kind: skill
  anchor: ```
    int $R = $E;
    $$$PRE;
    if ($R < $N) {
        $$$BODY;
    }
  ```
  rewrite replace: ```
    int $R = min($E, $N);
    $$$PRE;
    if ($R < $N) {
        $$$BODY;
    }
  ```
}

rule run_keep_after {
  kind: skill
  anchor: ```
    int $R = $E;
    $$$PRE;
    if ($R < $N) {
        $$$BODY;
    }
  ```
  rewrite replace: ```
    $$$PRE;
    const int $R = $E;
    if ($R < $N) {
        $$$BODY;
    }
  ```
}
'''


def _scoped(name: str):  # type: ignore[no-untyped-def]
    return next(r for r in load_rules_text(SCOPED, "s.rule") if r.name == name)


def _compiles(source: bytes) -> str | None:
    """None when NVRTC compiles the source, else its log."""
    from klc.gate.compile import compile_unit

    result = compile_unit(parse_bytes(source, "k.cu"), arch="sm_90", use_cache=False)
    return None if result.ok else result.log


DECLARED = _rows_kernel("    int rows = batch * seq;\n")
PARAMETER = _rows_kernel("    float unused = 0.0f;\n", bound="batch")


@pytest.mark.parametrize("name", ["keep_after", "run_keep_after"])
def test_a_rewrite_that_keeps_the_uses_after_the_declaring_run_applies(name: str) -> None:
    out = apply_rules(parse_bytes(DECLARED, "k.cu"), [_scoped(name)])
    assert out.changed
    text = out.source.decode()
    assert text.index("int rows = batch * seq;") < text.index("if (r < rows)")
    assert _compiles(out.source) is None


@pytest.mark.parametrize(("name", "run"), [
    ("clamp_before", "the statements `...` skipped at k.cu:4:5"),
    ("run_clamp_before", "the statements `$$$PRE` bound at k.cu:4:5"),
])
@pytest.mark.parametrize("spelling", ["int rows", "const int rows", "int const rows"])
def test_a_rewrite_that_writes_the_bound_name_above_its_declaration_is_refused(
        name: str, run: str, spelling: str) -> None:
    rule = _scoped(name)
    declared = DECLARED.replace(b"int rows", spelling.encode())
    [site] = find_sites(parse_bytes(declared, "k.cu"), [rule])
    assert not site.ok
    assert site.reason == (f"{run} declare rows, which `$N` reads, and the rewrite writes it "
                           "before them or after their block")
    assert [s.ok for s in find_sites(parse_bytes(declared, "k.cu"),
                                     [_scoped(name.replace("clamp_before", "keep_after"))])] \
        == [True]
    # what the refusal prevents: the rewrite would read `rows` above its declaration
    from klc.edits.replace import replace_match

    edit = replace_match(site.match, rule.edits[0].templates()[0], {})
    forced = DECLARED[:edit.start] + edit.text.encode() + DECLARED[edit.end:]
    assert b"min(blockIdx.x * blockDim.x + threadIdx.x, rows)" in forced
    log = _compiles(forced)
    assert log is not None and "rows" in log
    # the same rule where the bound is a parameter (declared before everything): applies
    out = apply_rules(parse_bytes(PARAMETER, "k.cu"), [rule])
    assert out.changed and b"min(blockIdx.x * blockDim.x + threadIdx.x, batch)" in out.source
    assert _compiles(out.source) is None


def test_klc_list_says_why_the_rewrite_cannot_keep_the_declaration_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from klc.cli import main

    (tmp_path / "s.rule").write_text(SCOPED)
    (tmp_path / "k.cu").write_bytes(DECLARED)
    assert main(["list", "--all", "--skills", str(tmp_path), "--only", "*clamp_before",
                 str(tmp_path / "k.cu")]) == 0
    out = capsys.readouterr().out
    assert out.count("not applicable") == 2
    assert "declare rows, which `$N` reads, and the rewrite writes it before them" in out


NEW_GOLDEN = [
    "thread_per_row_to_warp_per_row/dots_rows_declared_between",
    "thread_per_row_to_warp_per_row/dots_total_declared_host_launch",
    "thread_per_row_to_block_per_row/rows_declared_between",
    "tile_transpose/nhwc_pixels_declared",
    "one_block_to_grid_reduce/count_declared_between",
]


@pytest.mark.parametrize("case", NEW_GOLDEN)
def test_golden_rewrites_of_names_declared_between_compile(case: str) -> None:
    """The golden cases whose dots skip the declaration of the name the anchor reads after
    them: the kernel and its rewrite both compile with NVRTC (the declaration precedes
    every use in the rewrite too)."""
    root = Path(__file__).resolve().parents[2] / "tests" / "golden"
    before = (root / f"{case}.cu").read_bytes()
    after = (root / f"{case}.expected.cu").read_bytes()
    assert before != after
    assert _compiles(before) is None
    assert _compiles(after) is None


ELSEWHERE = '''rule note_rows_at_start {
  kind: skill
  anchor: ```
    int $R = $E;
    ... when not stores
    if ($R < $N) {
        $$$BODY;
    }
  ```
  rewrite insert_body_start: ```
    const int seen_rows = $N;
  ```
}

rule scale_in_body {
  kind: skill
  anchor: ```
    int $R = $E;
    $$$PRE;
    for (int $J = 0; $J < $D; $J++) {
        $$$LOOP;
    }
    if ($R < $N) {
        $$$BODY;
    }
  ```
  rewrite within $$$LOOP {
    anchor: ```
      $ACC += $X;
    ```
    replace: ```
      $ACC += $X * (float)$N;
    ```
  }
}

rule scale_before_count {
  kind: skill
  anchor: ```
    int $R = $E;
    for (int $J = 0; $J < $D; $J++) {
        $$$LOOP;
    }
    $$$PRE;
    if ($R < $N) {
        $$$BODY;
    }
  ```
  rewrite within $$$LOOP {
    anchor: ```
      $ACC += $X;
    ```
    replace: ```
      $ACC += $X * (float)$N;
    ```
  }
}
'''


def test_an_edit_that_writes_the_name_elsewhere_is_refused() -> None:
    """``insert_body_start`` writes at the start of the function, above the dots that
    declare the name: refused there; where the name is a parameter, it applies."""
    [rule] = [r for r in load_rules_text(ELSEWHERE, "e.rule") if r.name == "note_rows_at_start"]
    [site] = find_sites(parse_bytes(DECLARED, "k.cu"), [rule])
    assert not site.ok and "declare rows, which `$N` reads" in site.reason
    out = apply_rules(parse_bytes(PARAMETER, "k.cu"), [rule])
    assert out.changed and b"const int seen_rows = batch;" in out.source
    assert _compiles(out.source) is None


def test_a_within_block_may_not_carry_the_name_above_its_declaration() -> None:
    """The sub-rule writes ``$N`` into ``$$$LOOP``'s code: where ``$$$PRE`` declares the
    name and the loop comes after it, that is in its scope; a loop before the declaring
    statements would read it undeclared."""
    [rule] = [r for r in load_rules_text(ELSEWHERE, "e.rule") if r.name == "scale_in_body"]
    src = (b"__global__ void k(float* out, const float* x, int batch, int seq, int dim) {\n"
           b"    int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
           b"    int rows = batch * seq;\n"
           b"    float acc = 0.0f;\n"
           b"    for (int j = 0; j < dim; j++) {\n        acc += x[j];\n    }\n"
           b"    if (r < rows) {\n        out[r] = acc;\n    }\n}\n")
    out = apply_rules(parse_bytes(src, "k.cu"), [rule])
    assert b"acc += x[j] * (float)rows;" in out.source
    assert _compiles(out.source) is None
    from klc.rule.scopes import run_scopes

    assert run_scopes(rule).carried == {"LOOP": frozenset({"N"})}
    # the loop before the statements that declare the count: refused, and for a reason
    [before] = [r for r in load_rules_text(ELSEWHERE, "e.rule")
                if r.name == "scale_before_count"]
    late = (src.replace(b"    int rows = batch * seq;\n", b"")
            .replace(b"    float acc = 0.0f;\n", b"")
            .replace(b"    int r = blockIdx", b"    float acc = 0.0f;\n    int r = blockIdx")
            .replace(b"    if (r < rows)", b"    int rows = batch * seq;\n    if (r < rows)"))
    assert _compiles(late) is None
    [site] = find_sites(parse_bytes(late, "k.cu"), [before])
    assert not site.ok
    assert site.reason == ("the statements `$$$PRE` bound at k.cu:7:5 declare rows, which "
                           "`$N` reads, and the rewrite writes it into `$$$LOOP`, outside "
                           "their scope")
