"""The words a match must hold (``Pattern.words``) and the candidates that hold them
(``klc.match.find.holding``): a candidate is passed over only when no match can be there, so
a word spelled only in another spelling (an isomorphism), in code a match reads through (a
helper), in a masked macro or in a ``#define`` never costs a match."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from klc.cuda.parse import parse_bytes
from klc.match import compile_pattern, find_matches, pattern_of
from klc.match.find import holding, possible
from klc.pipeline import find_sites
from klc.rule import load_rules_text


def rule(anchor: str, kind: str = "skill", extra: str = "") -> str:
    return (f'rule r {{\n  kind: {kind}\n  description: "t"\n  context: any\n'
            f"  anchor: ```\n{anchor}\n  ```\n{extra}"
            f"  rewrite replace: ```\n{anchor}\n  ```\n}}\n")


def sites(rule_text: str, code: str) -> list[dict[str, str]]:
    unit = parse_bytes(code.encode(), "k.cu")
    return [{k: b.text for k, b in s.match.bindings.items() if not k.startswith("\0")}
            for s in find_sites(unit, load_rules_text(rule_text, "t.rule")) if s.ok]


# -- the candidates that hold the words: the same as asking each candidate

STATEMENTS = ["a = b;", "alpha = beta;", "aaaa = 1;", "gamma += alpha;", "{ }",
              "if (beta) { aaa = 2; }", "for (int i = 0; i < n; i++) { alpha = i; }"]


@st.composite
def blocks(draw: st.DrawFn, depth: int = 0) -> str:
    """A block of statements and nested blocks (the candidates nest: a word inside an inner
    block is inside every block around it)."""
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        if depth < 3 and draw(st.booleans()):
            parts.append(draw(blocks(depth + 1)))
        else:
            parts.append(draw(st.sampled_from(STATEMENTS)))
    return "{ " + " ".join(parts) + " }"


WORDS = [b"alpha", b"beta", b"gamma", b"aaa", b"aa", b"for", b"zeta"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=blocks(), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3,
                                     unique=True))
def test_holding_is_every_candidate_that_holds_every_word(body: str,
                                                           words: list[bytes]) -> None:
    unit = parse_bytes(f"__global__ void k(int n) {body}\n".encode(), "k.cu")
    src = unit.source
    for kind in ("compound_statement", "expression_statement", "for_statement"):
        nodes = unit.nodes_by_type([kind])[kind]
        want = [n for n in nodes if all(src.find(w, n.start_byte, n.end_byte) >= 0
                                        for w in words)]
        assert holding(unit, nodes, tuple(words)) == want
        # (a list made of some of them: the kernel's scope keeps some candidates only)
        some = nodes[::2]
        assert holding(unit, some, tuple(words)) == [n for n in want if n in some]
        # the same list and words with more text required, asked after (the answers are
        # kept per list, words and text: each question gets its own)
        also = [n for n in want if src.find(b"+=", n.start_byte, n.end_byte) >= 0]
        assert holding(unit, nodes, tuple(words), also=(b"+=",)) == also
        assert holding(unit, nodes, tuple(words)) == want
        assert holding(unit, some, tuple(words), also=(b"+=",)) == \
            [n for n in also if n in some]


def test_a_rare_word_finds_the_blocks_around_it() -> None:
    code = ("__global__ void k(float* y) {\n  { y[0] = 1; }\n  { { y[1] = __expf(y[1]); } }\n"
            "  { y[2] = 2; }\n}\n")
    unit = parse_bytes(code.encode(), "k.cu")
    blocks_ = unit.nodes_by_type(["compound_statement"])["compound_statement"]
    got = holding(unit, blocks_, (b"__expf",))
    assert [unit.source[n.start_byte:n.end_byte].count(b"{") for n in got] == [5, 2, 1]


# -- a word only another spelling needs is not required


@pytest.mark.parametrize("spelling", ["if (x[j] > m) m = x[j];", "m = max(m, x[j]);",
                                      "m = x[j] > m ? x[j] : m;"])
def test_a_word_of_one_spelling_only_is_not_required(spelling: str) -> None:
    anchor = "for (int $C = 0; $C < $N; $C++) { $M = fmaxf($M, $E); }"
    on = load_rules_text(rule(anchor), "t.rule")[0]
    assert b"fmaxf" not in pattern_of(on).words  # (not every spelling has it)
    code = ("__global__ void k(const float* x, float* y, int n) {\n  float m = -1e30f;\n"
            f"  for (int j = 0; j < n; j++) {{ {spelling} }}\n  y[0] = m;\n}}\n")
    assert b"fmaxf" not in code.encode()
    assert sites(rule(anchor), code) == [{"C": "j", "N": "n", "M": "m", "E": "x[j]"}]
    # with the isomorphism off, the one spelling the anchor has needs its word
    off = rule(anchor, extra="  isomorphisms: -max_idiom\n")
    assert b"fmaxf" in pattern_of(load_rules_text(off, "t.rule")[0]).words
    assert sites(off, code) == []


# -- a word spelled outside the candidate, in code a match reads


HELPER = ("__device__ float warpSum(float val) {\n"
          "    for (int o = 16; o > 0; o >>= 1)\n"
          "        val += __shfl_down_sync(0xffffffff, val, o);\n    return val;\n}\n")


def test_a_word_spelled_only_in_a_helper_the_match_reads_through() -> None:
    anchor = ("float $V = $E;\nfor (int $O = 16; $O > 0; $O >>= 1) {\n"
              "    $V += __shfl_down_sync($M, $V, $O);\n}\nif ($T == 0) {\n    $D = $V;\n}")
    code = (HELPER + "__global__ void k(const float* x, float* y) {\n"
            "    float sum = x[threadIdx.x];\n    sum = warpSum(sum);\n"
            "    if (threadIdx.x == 0) { y[blockIdx.x] = sum; }\n}\n")
    kernel = code[code.index("__global__"):]
    assert "__shfl_down_sync" not in kernel  # (the kernel's blocks do not hold the word)
    assert sites(rule(anchor, kind="simplification"), code) == [
        {"V": "sum", "E": "x[threadIdx.x]", "O": "o", "M": "0xffffffff", "T": "threadIdx.x",
         "D": "y[blockIdx.x]"}]


# -- macros: a word in a masked macro or a #define


def test_a_match_around_a_masked_macro() -> None:
    # ``CUTLASS_PRAGMA_UNROLL`` is masked before the parse (klc.cuda.macros); the words of
    # the anchor are in the file's own bytes, around it
    code = ("#define TILE 64\n__global__ void k(float* y, int n) {\n  CUTLASS_PRAGMA_UNROLL\n"
            "  for (int i = 0; i < TILE; i++) { y[i] = __expf(y[i]); }\n}\n")
    unit = parse_bytes(code.encode(), "k.cu")
    assert unit.masks
    found = list(find_matches(compile_pattern("for (int $I = 0; $I < $N; $I++) { $B; }"), unit))
    assert [m.bindings["N"].text for m in found] == ["TILE"]
    got = sites(rule("$Y[$I] = __expf($Y[$I]);"), code)
    assert got == [{"Y": "y", "I": "i"}]


def test_a_defined_name_is_matched_where_the_code_spells_it() -> None:
    # the anchor names ``WARPS``, which the file defines and its kernel uses: the word is
    # in the candidate as the code spells it
    code = ("#define WARPS 4\n__global__ void k(float* y) {\n"
            "  for (int w = 0; w < WARPS; w++) { y[w] = 0.0f; }\n}\n")
    got = sites(rule("for (int $W = 0; $W < WARPS; $W++) { $B; }"), code)
    assert got == [{"W": "w", "B": "y[w] = 0.0f;"}]
    assert sites(rule("for (int $W = 0; $W < WARPS; $W++) { $B; }"),
                 code.replace("w < WARPS", "w < 4")) == []


# -- the other tokens a match spells (``Pattern.tokens``): asked of the candidates only


TOKEN_KERNEL = """\
__global__ void k(float* s, const float* x, int n, int w) {
  int t = threadIdx.x, i = t + 1, lane = t % 32, warp = t / (1 << 5);
  s[t] = i < n ? x[i] : 0.0f;
  s[t] = n > i ? x[i] : 0.0f;
  s[t] = (i < n) ? x[i] : 0.0f;
  s[t + 1] = i < n ? x[(i)] : 0.0f;
  if (t % 32 == 0) { s[warp] = x[lane % 32] + x[t % w] + (float)(t % 33); }
  s[lane] = t < 32 ? x[t / (1 << w)] : x[t >> 2];
  for (int j = t; j < 32; j += 2) { s[j] = 0.0f; }
  for (int j = t; j < n; j += 2) { s[j] = 1.0f; }
  for (int j = t; j < 32; j++) { s[j] = 2.0f; }
  for (int j = t; 32 > j; j += 2) { s[j] = 3.0f; }
  {
    int q = t % 32;
    s[q] = 4.0f;
  }
}
"""


@pytest.mark.parametrize("anchor", ["$S[$TID] = $I < $N ? $E : $Z;", "$T % 32",
                                    "$T / (1 << $S)", "$X[$I]", "$X >> $OFFSET",
                                    # words and tokens: ``for`` and ``int`` are in every
                                    # loop, ``32`` and ``+=`` in few
                                    "for (int $J = $A; $J < 32; $J += 2) { $$$B; }",
                                    "int $Q = $T % 32;\n$$$REST;"])
def test_the_tokens_pass_over_no_match(anchor: str) -> None:
    from dataclasses import replace

    pattern = pattern_of(load_rules_text(rule(anchor), "t.rule")[0])
    assert pattern.tokens

    def found(p: object) -> list[tuple[int, int, list[tuple[str, str]]]]:
        unit = parse_bytes(TOKEN_KERNEL.encode(), "k.cu")
        return [(m.start, m.end, sorted((k, b.text) for k, b in m.bindings.items()))
                for m in find_matches(p, unit)]  # type: ignore[arg-type]

    got = found(pattern)
    assert got and got == found(replace(pattern, tokens=()))


def test_the_tokens_most_candidates_spell_are_not_asked() -> None:
    # a closing bracket comes with its opening one; a call, an assignment, a field or a sum
    # is in most statements: asking for them turns away almost no candidate
    pattern = pattern_of(load_rules_text(rule("$Y[$I] = $V.x + f($A, $B);"), "t.rule")[0])
    assert pattern.tokens == (b"[", b"f", b"x")  # (f and x: leaves too short for words)
    assert pattern_of(load_rules_text(rule("$X + $OFFSET"), "t.rule")[0]).tokens == ()
    code = "__global__ void k(float* y, float4 v, int i) {\n  y[i] = v.x + f(i, 2);\n}\n"
    assert sites(rule("$Y[$I] = $V.x + f($A, $B);"), code) == [
        {"Y": "y", "I": "i", "V": "v", "A": "i", "B": "2"}]


def test_a_token_of_one_spelling_only_is_not_required() -> None:
    pattern = pattern_of(load_rules_text(rule("$S[$TID] = $I < $N ? $E : $Z;"), "t.rule")[0])
    assert b"?" in pattern.tokens and b"<" not in pattern.tokens  # (``n > i`` has no <)
    assert pattern_of(load_rules_text(rule("$A < $B"), "t.rule")[0]).tokens == ()
    code = "__global__ void k(float* s, const float* x, int n) {\n  s[0] = n > 1 ? x[1] : 0;\n}\n"
    assert sites(rule("$S[$TID] = $I < $N ? $E : $Z;"), code) == [
        {"S": "s", "TID": "0", "I": "1", "N": "n", "E": "x[1]", "Z": "0"}]


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab ", max_size=60), word=st.sampled_from(["a", "ab", "aa", "b a"]),
       limits=st.lists(st.integers(1, 40), min_size=1, max_size=4))
def test_a_word_is_counted_as_far_as_the_candidates_need(text: str, word: str,
                                                          limits: list[int]) -> None:
    from klc.match.find import _count_below

    source, counts = text.encode(), {}  # type: ignore[var-annotated]
    for limit in limits:  # (one memo for the file, asked with other limits)
        n = _count_below(source, word.encode(), limit, counts)
        true = source.count(word.encode())
        assert n == true if true < limit else n >= limit


# -- every anchor of a library asked at once (``AnchorWords``): the verdicts ``possible``
# gives each


def test_the_library_is_asked_of_a_file_as_each_anchor_would_be() -> None:
    from pathlib import Path

    from klc import plugins
    from klc.match.find import AnchorWords, _possible
    from klc.rule import RuleSet

    plugins.load()
    root = Path(__file__).resolve().parents[2]
    patterns = [pattern_of(r) for r in RuleSet.load([str(root / "skills")]).rules]
    table = AnchorWords(patterns)
    branches = [q for p in patterns for q in (p.alternatives or (p,))]
    kernels = [*sorted((root / "tests" / "golden").rglob("*.cu"))[:60],
               root / "bench" / "examples" / "sigmoid.cu"]
    seen: set[bool] = set()
    for path in kernels:
        unit = parse_bytes(path.read_bytes(), str(path))
        kinds = table.fill(unit)
        alone = parse_bytes(path.read_bytes(), str(path))  # (nothing remembered)
        verdicts = {q.key: _possible(q, alone, {}) for q in branches}
        assert {q.key: possible(q, unit) for q in branches} == verdicts, path
        assert kinds == {q.root_type for q in branches if verdicts[q.key]}, path
        seen |= set(verdicts.values())
    assert seen == {True, False}  # (both verdicts were given)


def test_the_index_captures_the_kinds_of_every_anchor_of_the_library() -> None:
    """The index's one query run captures the kinds the library's anchors start at (here a
    sum's, which the common kinds leave out) in every file, one that holds the anchor's
    words and one that does not: one query compiled for the library (a compile costs
    13-18 ms, more than capturing the kind over hundreds of files), whose nodes of the kind
    are those a query run of their own finds."""
    from tree_sitter import QueryCursor

    from klc.cuda import syntax
    from klc.cuda.syntax import sort_doc_order, type_query

    rules = load_rules_text(rule("$A + zeta * $B"), "t.rule")
    code = "__global__ void k(float *a, float b, float c, float d) {{ a[0] = {}; }}\n"
    held = parse_bytes(code.format("b + zeta * c").replace("float b,", "float b, float zeta,")
                       .encode(), "k.cu")
    found = find_sites(held, rules)
    assert [held.source[s.match.start:s.match.end] for s in found] == [b"b + zeta * c"]
    assert "binary_expression" in held._index  # (captured by the first run)
    compiled = len(syntax._TYPE_QUERIES)
    absent = parse_bytes(code.format("b + c * d").encode(), "k.cu")
    assert find_sites(absent, rules) == []
    assert "binary_expression" in absent._index
    assert len(syntax._TYPE_QUERIES) == compiled  # (the same query: none compiled)
    later = absent.nodes_by_type(["binary_expression"])["binary_expression"]
    fresh = QueryCursor(type_query(("binary_expression",))).captures(absent.root).get(
        "binary_expression", [])
    sort_doc_order(fresh)
    assert [(n.start_byte, n.end_byte) for n in later] == \
        [(n.start_byte, n.end_byte) for n in fresh] and len(later) == 2
