"""The fast paths of listing give the answers of the slow ones they replace.

``find_sites`` shares matching between rules with one anchor, judges declaration guards once
per (guard, declaration) and remembers predicate verdicts per match; the matcher rejects
blocks by shape before binding anything; the front end builds its model on first use and
finds functions and declarations by bisection and word index. Each test runs the plain way
(one rule at a time, no memo, a linear scan, a regex per declaration) beside the fast one
on generated kernels (bench/make_corpus.py: every style the corpus has) and on cases made to
break a careless shortcut (shadowing locals, non-identifier bases, macros, syntax errors).
"""

from __future__ import annotations

import bisect
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from klc.analysis.declarations import _declarations_named, declarations_of
from klc.analysis.tree import nodes_of
from klc.cuda.model import Unit
from klc.cuda.parse import parse_bytes
from klc.guards import GuardContext, evaluate
from klc.match import _Matcher, block_statements, compile_pattern, find_matches
from klc.pipeline import find_sites
from klc.rule import RuleSet
from klc.rule.values import resolve_holes

ROOT = Path(__file__).resolve().parents[2]

SHADOWS = b"""\
__global__ void scale(float* x, const float* w, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = x[i] * w[i] + (x + 1)[0];
  {
    float* x = out + 4;          // a local that shadows the parameter
    x[i] = w[i];
    atomicAdd(x, 1.0f);
  }
  x[i] = x[i] + 1.0f;            // the parameter again
  out[i + 1] = (out + i)[1] + w[0];
}

__global__ void twice(float* a, float* b) {
  __shared__ float s[32][32];
  s[threadIdx.y][threadIdx.x] = a[threadIdx.x];
  __syncthreads();
  for (int k = 0; k < 4; ++k) { b[k] += s[k][threadIdx.x]; }
  for (int k = 0; k < 4; ++k) b[k] = a[k];
  atomicAdd(b, a[0]);
}

__device__ float helper(float* p, int j) { return p[j] + p[j + 1]; }
"""

BROKEN = b"""\
__global__ void ok(float* x) { x[threadIdx.x] = 1.0f; }
__global__ void bad(float* y) { y[threadIdx.x] = ; }
"""


@pytest.fixture(scope="module")
def units(tmp_path_factory: pytest.TempPathFactory) -> list[Unit]:
    """Generated kernels of every style the benchmark corpus has, and the cases above."""
    out = tmp_path_factory.mktemp("corpus")
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_corpus.py"), str(out), "-n",
                    "6", "--seed", "7"], check=True, capture_output=True)
    found = [parse_bytes(p.read_bytes(), str(p)) for p in sorted(out.rglob("*"))
             if p.suffix in (".cu", ".cuh")]
    assert len(found) == 6
    return [*found, parse_bytes(SHADOWS, "shadows.cu"), parse_bytes(BROKEN, "broken.cu")]


@pytest.fixture(scope="module")
def rules() -> list:  # type: ignore[type-arg]
    return list(RuleSet.load([str(ROOT / "skills")]).rules)


def _view(sites: list) -> list[tuple]:  # type: ignore[type-arg]
    return [(s.rule.name, s.match.start, s.match.end, s.ok, s.stage, s.reason,
             {k: b.text for k, b in s.match.bindings.items()}) for s in sites]


@pytest.mark.parametrize("clang", [False, True], ids=["tree-only", "clang"])
def test_sites_of_all_rules_are_those_of_each_rule_alone(units: list[Unit], rules: list,  # type: ignore[type-arg]
                                                         clang: bool) -> None:
    """Shared matching, shared verdicts and declaration keys change nothing: every rule
    listed alone (nothing to share) gives the same sites, verdicts and reasons."""
    for unit in units if not clang else units[-2:]:  # (libclang: the two made cases)
        together = _view(find_sites(unit, rules, clang=clang))
        alone = []
        again = parse_bytes(unit.source, unit.path)  # (none of the first call's caches)
        for r in rules:
            alone += find_sites(again, [r], clang=clang)
        alone.sort(key=lambda s: (s.match.start, s.rule.name))
        assert together == _view(alone), unit.path
        assert together, unit.path  # the cases do exercise the rules


def test_remembered_verdicts_are_the_verdicts_of_each_use(units: list[Unit],
                                                          rules: list) -> None:  # type: ignore[type-arg]
    """A verdict judged once per declaration (or remembered across rules at one match) is
    what the guard says at each use, judged afresh without any memo."""
    judged = 0
    for unit in units:
        fresh = parse_bytes(unit.source, unit.path)  # (none of find_sites' caches)
        for s in find_sites(unit, rules, clang=False):
            if s.stage not in ("guard", "") or s.rule.guard is None:
                continue
            m = next(m for m in find_matches(_pattern(s.rule), fresh, s.rule)
                     if (m.start, m.end) == (s.match.start, s.match.end))
            # the defaults, and the values the site's own geometry fixes (Site.holes)
            holes = {**resolve_holes(s.rule, {}, strict=False), **s.holes}
            v = evaluate(s.rule.guard, GuardContext(m, holes, None, False))
            assert (v.ok, "" if v.ok else v.reason) == (s.ok, s.reason), (s.rule.name, m.start)
            judged += 1
    assert judged > 100


def _pattern(rule):  # type: ignore[no-untyped-def]
    from klc.match import pattern_of

    return pattern_of(rule)


def test_statement_run_prefilter_rejects_only_blocks_without_a_match(units: list[Unit],
                                                                     rules: list) -> None:  # type: ignore[type-arg]
    """``fits`` holds wherever ``node`` matches, and a run anchor finds what the plain
    search over every block and start (no shape prefilter) finds."""
    runs = {r.anchor: _pattern(r) for r in rules if _pattern(r).is_sequence}
    runs["pair"] = compile_pattern("__syncthreads();\nfor ($I; $C; $S) $B")
    runs["tail"] = compile_pattern("$$$A;\n$X[$I] = $V;")
    for unit in units:
        m = _Matcher(unit.source)
        for p in runs.values():
            plain = []
            for block in unit.nodes_by_type(["compound_statement"])["compound_statement"]:
                kids = block_statements(block)
                for j in range(len(kids)):
                    b: dict = {}  # type: ignore[type-arg]
                    end = m.seq(p.elements, 0, kids, j, b, anchored=False)
                    if end is not None and end > j:
                        plain.append((kids[j].start_byte, kids[end - 1].end_byte))
                        for e in p.fixed:  # each fixed statement fits one of the run's
                            assert any(m.fits(e, k) for k in kids[j:end])
            fast = [(x.start, x.end) for x in find_matches(p, unit)]
            assert fast == plain, (unit.path, p.code)


# Matches whose tokens are apart in the ways the matcher allows, a few per file (a file
# passes the prefilter on any one occurrence): comments, a line continuation, spacing, and
# the punctuation the matcher ignores (the ";" of `__syncthreads();` before `}`).
GAPS = [b"""\
__global__ void k(float* __restrict__ x, int n) {
  for (int s = n / 2; s > 0; s >>= /* half */ 1) {
    if (threadIdx . x < s) /* c */ { x[threadIdx.x] += x[threadIdx.x + s]; }
    __syncthreads();
  }
}
""", b"""\
__global__ void k(float* x, int n) {
  for (int s = n / 2; s > 0; s >>= 1) {
    if (threadIdx.x <
        // a comment line
        s) { x[threadIdx.x] += x[threadIdx.x + s]; }
    __syncthreads \\
    ();
  }
}
""", b"""\
__global__ void k(float* x, int n) {
  for (int s = n / 2; s > 0; s >>= 1) {
    if (threadIdx/* the lane */.x < s) { x[threadIdx.x] += x[threadIdx.x + s]; }
    __syncthreads // the barrier
    ( );
  }
}
"""]
HALVING = ("for (int $S = $N / 2; $S > 0; $S >>= 1) {\n"
           "    if (threadIdx.x < $S) { $X[threadIdx.x] += $X[threadIdx.x + $S]; }\n"
           "    __syncthreads();\n}")


def _runs_off(p):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    return replace(p, runs=())


def test_token_run_prefilter_rejects_only_files_without_a_match(units: list[Unit],
                                                                rules: list) -> None:  # type: ignore[type-arg]
    """A run of an anchor's adjacent tokens is a regex over the parser's text with only
    what the matcher skips between the tokens: every match has each run, so a file
    rejected for a missing run had no match. Checked against the matcher without runs on
    the corpus, on matches spread by comments, a continuation and spacing, and on a
    file where a run is missing (nothing is found, and the runs are what rejects it)."""
    anchors = {r.anchor: _pattern(r) for r in rules}
    halving = anchors["halving"] = compile_pattern(HALVING)
    assert len(halving.runs) >= 2 and any(b"threadIdx" in r for r in halving.runs)
    gaps = [parse_bytes(g, f"gap{i}.cu") for i, g in enumerate(GAPS)]
    for unit in [*units, *gaps]:
        for p in anchors.values():
            fast = [(m.start, m.end) for m in find_matches(p, unit)]
            assert fast == [(m.start, m.end) for m in find_matches(_runs_off(p), unit)]
    for unit in gaps:
        assert len(list(find_matches(halving, unit))) == 1, unit.path
        assert all(r in unit.squeezed for r in halving.runs), unit.path
    # the words are all there, but not the run `>>= 1 ) {`: rejected before any candidate
    other = parse_bytes(GAPS[0].replace(b"/* half */ 1", b"2"), "two.cu")
    assert not all(r in other.squeezed for r in halving.runs)
    assert list(find_matches(halving, other)) == []


# Cases made for the matcher made per pattern (``klc.match._specialise``): comments and
# ignored punctuation where a metavariable or a token stands, a missing token, a repeated
# metavariable, kinds, a nested run.
SPECIAL = b"""\
__global__ void s(float* a, float* b, int n) {
  a[/* c */ n] = b[n /* d */];
  a[n] = a[n] + a[n];
  f(a, /* e */ b);
  g();
  g(/* only a comment */);
  h(a, b, n);
  b[a[n]] = (a)[n + 1];
  x = (y + );
  g(a + );
  q = a[i;
  for (int i = 0; i < 4; ++i) { a[i] += b[i]; }
}
__global__ void w(int n) {
  while (n > 1) { n >>= 1; }
}
"""


def test_code_is_made_for_a_pattern_node_tried_often() -> None:
    from klc.match.specialise import HOT, fast_of

    q = compile_pattern("$X[$I] + $Y").elements[0]
    unit = parse_bytes(b"__global__ void k(float* a) { a[0] = a[1] + 2.0f; }", "k.cu")
    node = unit.nodes_by_type(["binary_expression"])["binary_expression"][0]
    m = _Matcher(unit.source, {})
    for tries in range(1, HOT + 1):
        b: dict = {}  # type: ignore[type-arg]
        assert m.node(q, node, b) and sorted(b) == ["I", "X", "Y"]
        assert (q.fast is None) == (tries < HOT), tries
    assert callable(q.fast) and fast_of(q) is q.fast
    assert fast_of(compile_pattern("$X - $Y").elements[0]) is None  # (not tried often yet)


def test_code_made_per_pattern_matches_as_the_generic_matcher(units: list[Unit],
                                                              rules: list) -> None:  # type: ignore[type-arg]
    """Every pattern node the code generator covers gives, on every node of its kind, the
    verdict and the bindings (names, spans, in order) of the generic matcher."""
    from klc.match.specialise import _specialise

    pats = [_pattern(r) for r in rules]
    pats += [compile_pattern(c) for c in ("$X[$I]", "$X[$X]", "f($A, $B)", "g($A)", "g()",
                                          "$A + $A", "h($$$ARGS)", "($X)[$I]", "$X + $Y")]
    pats.append(compile_pattern("$X[$I]", kinds=(("X", "identifier"),)))
    covered = 0
    for unit in [*units, parse_bytes(SPECIAL, "special.cu")]:
        m = _Matcher(unit.source, {})
        for p in pats:
            todo = list(p.elements)
            while todo:
                q = todo.pop()
                todo += q.children
                if q.metavar is not None or not q.children or not q.plain:
                    continue
                nodes = unit.nodes_by_type([q.type])[q.type]
                code = _specialise(q)
                assert code not in (None, False), (p.code, q.type)
                for node in nodes:
                    slow: dict = {}  # type: ignore[type-arg]
                    fast: dict = {}  # type: ignore[type-arg]
                    want = m.generic(q, node, slow)
                    assert code(node, fast, m) == want, (unit.path, p.code, node.start_byte)
                    if want:
                        assert [(k, v.start, v.end) for k, v in fast.items()] == \
                            [(k, v.start, v.end) for k, v in slow.items()]
                        covered += 1
    assert covered > 1000


def test_explicit_instantiations_are_the_query_s(units: list[Unit]) -> None:
    """The explicit instantiations found from the ``template`` words are the nodes a query
    over the tree finds, in the same order, on the corpus and on text made to mislead a
    careless search (a longer word, ``template <``, ``extern template``, comments)."""
    from klc.cuda.facts import _explicit_instantiations

    texts = [b"template <int N> f", b"template void f<1>();", b"xtemplate void",
             b"template", b"templates x", b"template\n<", b"_template x",
             b"\xc3template x", b"a template\tint f<2>(int);", b"template_ x",
             b"template <int N> __global__ void k(float* x) {}\n"
             b"template __global__ void k<4>(float*);\n"
             b"extern template __global__ void k<8>(float*);\n"
             b"/* template void k<2>(float*); */ template /* x */ void k<16>(float*);\n",
             b"template class A<int>;\ntemplate struct B<float>;\n"]
    seen = 0
    for unit in [*units, *(parse_bytes(t, "t.cu") for t in texts)]:
        want = list(unit.nodes_of_type("template_instantiation"))
        assert [n.id for n in _explicit_instantiations(unit)] == [n.id for n in want], \
            unit.path
        seen += len(want)
    assert seen >= 4


def test_function_at_is_the_innermost_function_found_by_a_scan(units: list[Unit]) -> None:
    for unit in units:
        for offset in range(0, len(unit.source) + 2, 7):
            best = None
            for f in unit.functions:
                if f.start <= offset < f.end and (best is None or f.start >= best.start):
                    best = f
            assert unit.function_at(offset) is best


def test_function_at_past_many_functions_is_the_scan_s() -> None:
    # a file of many small functions, a struct of methods and host code between them: an
    # offset between two functions is in none, one inside a method is in the method
    parts = []
    for i in range(30):
        parts.append(f"__device__ float f{i}(float x) {{ return x * {i}.0f; }}\n")
        parts.append(f"static const int k{i} = {i};\n")
        if i % 7 == 0:
            parts.append(f"struct S{i} {{\n  __device__ int g(int a) {{ return a + {i}; }}\n"
                         f"  int h;\n}};\n")
    unit = parse_bytes("".join(parts).encode(), "many.cu")
    assert len(unit.functions) > 30
    inside = outside = 0
    for offset in range(0, len(unit.source) + 2, 3):
        best = None
        for f in unit.functions:
            if f.start <= offset < f.end and (best is None or f.start >= best.start):
                best = f
        assert unit.function_at(offset) is best, offset
        inside += best is not None
        outside += best is None
    assert inside > 100 and outside > 100


@given(st.lists(st.integers(0, 50), max_size=40))
def test_the_previous_greater_value_is_the_scan_s(values: list[int]) -> None:
    from klc.cuda.model import _previous_greater

    want = [next((j for j in range(i - 1, -1, -1) if values[j] > v), -1)
            for i, v in enumerate(values)]
    assert _previous_greater(values) == want


def test_node_lists_are_in_document_order(units: list[Unit]) -> None:
    for unit in units:
        for t, nodes in unit.nodes_by_type(["binary_expression", "subscript_expression",
                                            "compound_statement", "declaration",
                                            "gnu_asm_expression", "field_expression"]).items():
            keys = [(n.start_byte, -n.end_byte) for n in nodes]
            assert keys == sorted(keys), t


def test_the_model_built_on_first_use_is_the_model(units: list[Unit]) -> None:
    """Problems come with the parse; functions, launches and the index on first use, the
    same whichever is asked first."""
    for unit in units:
        a = parse_bytes(unit.source, unit.path)
        b = parse_bytes(unit.source, unit.path)
        assert a.problems == b.problems
        b.nodes_by_type(["declaration"])  # the index first, then the functions
        assert [(f.name, f.start, f.end) for f in a.functions] == \
            [(f.name, f.start, f.end) for f in b.functions]
        assert a.launches == b.launches and a.unanalyzable == b.unanalyzable
    broken = units[-1]
    assert broken.problems and broken.unanalyzable  # a syntax error is still reported


def test_declarations_by_word_index_are_those_a_regex_finds(units: list[Unit]) -> None:
    for unit in units:
        src = unit.source
        names = {w.decode() for w in re.findall(rb"[A-Za-z_]\w*", src)}
        for name in sorted(names):
            word = re.compile(rb"(?<![\w$])" + re.escape(name.encode()) + rb"(?![\w$])")
            nodes = [n for n in nodes_of(unit, "declaration")
                     if word.search(src, n.start_byte, n.end_byte) is not None]
            plain = [d for d in declarations_of(unit, nodes) if d.name == name]
            assert _declarations_named(unit, name) == plain, name


def test_local_lookup_by_bisection_is_the_closest_preceding_local() -> None:
    from klc.site_keys import Locals

    unit = parse_bytes(SHADOWS, "shadows.cu")
    fn = unit.functions[0]
    locals_ = Locals(unit)
    starts = [d.start for d in _declarations_named(unit, "x")]
    for offset in range(fn.body_start, fn.body_end, 3):
        plain = [s for s in starts if fn.body_start <= s < offset]
        assert locals_.before(fn, "x", offset) == (plain[-1] if plain else -1)
    assert bisect.bisect_left(starts, fn.body_end) == len(starts)


def test_clang_file_test_by_handle_is_the_test_by_name() -> None:
    pytest.importorskip("clang.cindex")
    unit = parse_bytes(SHADOWS, "shadows.cu")
    facts = unit.facts
    try:
        cursors = list(facts.tu.cursor.get_children())
    except Exception as e:  # libclang missing: nothing to compare
        pytest.skip(f"libclang unavailable: {e}")
    seen = 0
    for c in cursors:
        f = c.extent.start.file
        by_name = f is not None and f.name == facts._main_name
        assert facts._in_main(c) == by_name
        seen += by_name
    assert seen >= 3  # the three functions (and the stub's declarations are not)


CONSTANTS = b"""\
#define SCALE 3
constexpr int kBlock = 128;
namespace tiles { constexpr int kTile = 16; enum Mode { kFast = 2, kSlow = 5 }; }
extern "C" { const int kExtern = 7; }
enum Axis { kX = 1, kY = kX + 1 };
template <int N> __device__ int twice() { return 2 * N; }
__device__ int pick(int v = 9) { const int kLocal = 4; return v + kLocal; }
__global__ void k(float* out) {
  constexpr int kInner = kBlock / 4;
  const int kBlock = 64;                   // function scope: file scope wins
  auto f = [] { constexpr int kLambda = 11; return kLambda; };
  out[0] = pick(f()) + twice<kInner>() + tiles::kTile + SCALE;
  for (const int kLoop = 2; false;) {}
}
"""


def test_named_constants_by_native_walk_are_those_of_a_recursive_walk() -> None:
    """libclang's own recursion (one callback per cursor) finds the constants, with the same
    scope rules, that a recursive walk over each cursor's children finds."""
    pytest.importorskip("clang.cindex")
    unit = parse_bytes(CONSTANTS, "constants.cu")
    facts = unit.facts
    try:
        top = facts._top
    except Exception as e:
        pytest.skip(f"libclang unavailable: {e}")
    k = facts.tu.cursor.kind.__class__
    scopes = (k.NAMESPACE, k.LINKAGE_SPEC, k.UNEXPOSED_DECL, k.ENUM_DECL)
    outer: dict = {}  # type: ignore[type-arg]
    inner: dict = {}  # type: ignore[type-arg]

    def visit(cursors, values):  # type: ignore[no-untyped-def]
        for c in cursors:
            if not facts._in_main(c):
                continue
            if c.kind == k.VAR_DECL and c.type.is_const_qualified():
                v = facts._evaluate_cursor(c)
                if v is not None:
                    values.setdefault(c.spelling, v)
            elif c.kind == k.ENUM_CONSTANT_DECL:
                values.setdefault(c.spelling, c.enum_value)
            if c.kind in scopes and values is outer:
                visit(c.get_children(), outer)
            elif c.kind not in (k.PARM_DECL, k.CALL_EXPR):
                visit(c.get_children(), inner)

    visit(iter(top), outer)
    plain = {**inner, **outer}
    fast = facts._named_constants
    assert fast == plain
    assert {"kBlock", "kTile", "kFast", "kExtern", "kY", "kLocal", "kInner", "kLambda",
            "kLoop"} <= set(fast)
    assert fast["kBlock"] == 128  # file scope wins over the function's kBlock


def test_incremental_reparse_gives_the_tree_of_a_whole_parse(units: list[Unit],
                                                             rules: list) -> None:  # type: ignore[type-arg]
    """The re-parse after a rewrite reuses the old tree (``parse_bytes(previous=...)``): it
    gives the tree, the masks and the problems that parsing the new text from nothing
    gives, for every rewrite of the skills library and for edits made to break it
    (a new syntax error, an edit in a masked macro, insertions at one offset, the end)."""
    from klc.edits import ByteEdit, apply_edits, plan
    from klc.pipeline import _changes

    def same(unit: Unit, edits: list[ByteEdit]) -> None:
        new = apply_edits(unit.source, edits)
        whole = parse_bytes(new, unit.path)
        again = parse_bytes(new, unit.path, previous=(unit, _changes(edits)))
        assert str(again.root) == str(whole.root), unit.path
        assert again.parsed == whole.parsed and again.masks == whole.masks
        assert again.problems == whole.problems

    rewritten = carried = 0
    for unit in units:
        if unit.problems:
            continue
        carried += bool(unit.recovered)  # (recovery masks, which the re-parse carries)
        sites = find_sites(unit, rules, clang=False)
        values = {r.name: resolve_holes(r, {}, strict=False) for r in rules}
        edits = [e for s in sites if s.ok and not plan(s.match, values[s.rule.name]).launch
                 for e in plan(s.match, values[s.rule.name]).edits]
        taken: list[ByteEdit] = []
        for e in sorted(edits, key=lambda e: (e.start, e.end)):
            if not taken or e.start >= taken[-1].end:  # (the same skill's sites overlap)
                taken.append(e)
        if taken:
            same(unit, taken)
            rewritten += 1
        size = len(unit.source)
        same(unit, [ByteEdit(size // 2, size // 2, " ) ; {", "insert")])  # a new error
        same(unit, [ByteEdit(0, 0, "#define X 1\n", "insert"),
                    ByteEdit(0, 0, "MY_MACRO(1)\n", "insert"),
                    ByteEdit(size, size, "\nint tail;", "insert")])
    assert rewritten >= 4 and carried >= 2
    made = parse_bytes(b"__global__ __launch_bounds__(256) void k(float* x) {\n"
                       b"  CUDA_KERNEL_LOOP(i, 4) { x[i] = 1.0f; }\n}\n", "m.cu")
    at = made.source.index(b"256")
    same(made, [ByteEdit(at, at + 3, "128", "replace")])  # inside a masked attribute
    at = made.source.index(b"x[i]")
    same(made, [ByteEdit(at, at + 1, "y", "replace")])  # inside a recovered macro block
    assert made.recovered  # (the macro line was masked by recovery: carried, or not)
    at = made.source.index(b"CUDA_KERNEL_LOOP")
    same(made, [ByteEdit(at, at + len("CUDA_KERNEL_LOOP(i, 4)"), "", "replace")])  # gone
    same(made, [ByteEdit(at, at, "for (;;) ", "insert")])  # a change on its line
    line = made.source.index(b"\n") + 1
    same(made, [ByteEdit(line - 2, line - 2, ";", "insert")])  # on the line before
    macro = parse_bytes(b"REGISTER(1, \"x\")\n__global__ void k(float* x) { x[0] = 1.0f; }\n"
                        b"__global__ void g(float* y) { y[0] = 2.0f; }\n", "r.cu")
    assert macro.recovered
    at = macro.source.index(b"y[0]")
    same(macro, [ByteEdit(at, at + 1, "z", "replace")])  # far away: the mask is carried
    same(macro, [ByteEdit(0, 0, "int a;\n", "insert")])  # before it: moved


HOSTS = b"""\
#include <cstdio>
static float table[4] = {1, 2, 3, 4};
__host__ __device__ float both(float* a, int i) { return a[i] + table[i]; }
void host_only(float* a, int n) { for (int i = 0; i < n; ++i) a[i] = a[i] + 1; }
__device__ float dev(const float* a, int i) { return a[i] * 2.0f; }
__global__ void k1(float* a, float* b, int n) {
  int i = threadIdx.x;
  if (i < n) { b[i] = dev(a, i) + a[i + 1]; }
  __syncthreads();
  for (int j = 0; j < 4; ++j) { b[j] += a[j]; }
}
struct S { float* p; float get(int i) { return p[i] + 1; } };
__global__ void k2(float* c) { auto f = [&](int i) { return c[i]; }; c[0] = f(1) + c[2]; }
int main() { float x[4]; host_only(x, 4); printf("%f", x[0] + x[1]); return 0; }
"""


def test_scoped_candidates_are_those_that_overlap_an_admitted_function(
        units: list[Unit], rules: list) -> None:  # type: ignore[type-arg]
    """The candidates ``scoped`` keeps (by bisection, a slice per function) are those a plain
    scan keeps: every node that overlaps a function the scope admits and, at kernel scope,
    a kernel body (a run's block) or a statement of one (a node matched alone)."""
    from itertools import product

    from klc.match.scope import Scope, scoped

    pats = [_pattern(r) for r in rules]
    pats += [compile_pattern(c) for c in ("$X[$I]", "$A + $B", "$X = $V;",
                                          "__syncthreads();\nfor ($I; $C; $S) $B")]
    kept = 0
    for unit in [*units, parse_bytes(HOSTS, "hosts.cu")]:
        types = sorted({q.root_type for p in pats for q in (p, *p.alternatives)})
        candidates = unit.nodes_by_type(types)
        for flags in product((False, True), repeat=4):
            scope = Scope(*flags)
            fns = [f for f in unit.functions if scope.admits(f)]
            bodies = {f.body_start for f in fns}
            memo: dict = {}  # type: ignore[type-arg]
            for p in pats:
                got = scoped(unit, p, candidates, scope, memo)
                for q in (p, *p.alternatives):
                    t = q.root_type
                    runs = any(b.root_type == t and b.is_sequence for b in (p, *p.alternatives))
                    alone = any(b.root_type == t and not b.is_sequence
                                for b in (p, *p.alternatives))
                    plain = [n for n in candidates[t]
                             if any(f.start < n.end_byte and n.start_byte < f.end for f in fns)
                             and (not scope.body or (runs and n.start_byte in bodies) or (
                                 alone and n.parent is not None
                                 and n.parent.start_byte in bodies))]
                    assert got[t] == plain, (unit.path, scope, t)
                    kept += len(plain)
    assert kept > 1000


def test_overlapping_by_slices_is_the_plain_overlap(units: list[Unit]) -> None:
    """``_overlapping`` (a slice per span, the nodes between spans one by one) keeps what a
    scan keeps, on spans that cut nodes anywhere: starting inside a node, at its start,
    at its end, between nodes."""
    from klc.match.scope import _overlapping

    checked = 0
    for unit in units:
        n = len(unit.source)
        for t, nodes in unit.nodes_by_type(["compound_statement", "binary_expression",
                                            "subscript_expression", "identifier"]).items():
            cuts = sorted({0, n, *(x.start_byte for x in nodes[::5]),
                           *(x.end_byte for x in nodes[::7]), *range(0, n, 97)})
            for step in (1, 2, 3, 5):
                starts, ends = cuts[0::2 * step], cuts[step::2 * step]
                starts = starts[:len(ends)]
                plain = [x for x in nodes if any(s < x.end_byte and x.start_byte < e
                                                 for s, e in zip(starts, ends, strict=True))]
                assert _overlapping(nodes, starts, ends, {}) == plain, (unit.path, t, step)
                checked += len(plain)
    assert checked > 1000


def test_nodes_of_one_shape_share_their_code_and_keep_their_values() -> None:
    """Code made per pattern node is compiled once per shape (the kinds and tokens are its
    constants): ``$X + $Y`` and ``$X - $Y`` run one compiled code, each with its own token."""
    from klc.match.specialise import _specialise

    plus, minus = (compile_pattern(c).elements[0] for c in ("$X + $Y", "$X - $Y"))
    fast_plus, fast_minus = _specialise(plus), _specialise(minus)
    assert fast_plus.__code__ is fast_minus.__code__
    unit = parse_bytes(b"void f(int a, int b) { int c = a + b; int d = a - b; }", "s.cu")
    sums = unit.nodes_by_type(["binary_expression"])["binary_expression"]
    m = _Matcher(unit.source, {})
    got = [(unit.text(n), m.node(plus, n, {}), m.node(minus, n, {})) for n in sums]
    assert got == [("a + b", True, False), ("a - b", False, True)]


PARAMS = b"""\
__global__ void shadowed(float* x, float* y, int n, float* z) {
  float* w = x + 1;              // x offset first: the first use of x
  y[0] = w[0];
  {
    float* x = y;                // a local x: its uses are not the parameter's
    x[1] = 2.0f;
  }
  x[2] = y[n] + z[n];
  float* z = y;                  // z is a local from here on
  z[3] = 1.0f;
}
__global__ void casts(const float* a, float* b, float* c, int* counts) {
  float4 v = reinterpret_cast<const float4*>(a)[threadIdx.x];
  reinterpret_cast<float4*>(b)[threadIdx.x] = v;
  atomicAdd(counts, 1);
  c[threadIdx.x] = (c + 1)[0] + 1 + c[0];
}
__global__ void nameless(float*, float* q) { q[0] = 1.0f; }
__global__ void same(float* p, float* p2) { p2[p[0] > 0] = p[1]; }
__device__ float helper(float* h) { return h[0]; }
"""


def test_first_uses_of_parameters_are_those_of_the_whole_list(units: list[Unit],
                                                              rules: list) -> None:  # type: ignore[type-arg]
    """``first_per_name`` (matching only around each parameter's occurrences) gives, for
    each function and parameter, the first match of the whole list (``anchor any``'s
    merge) that binds the parameter, and the listing without refusals is the applicable
    part of the listing with them."""
    from klc.match.find import first_per_name
    from klc.match.scope import Where, scoped, where_of
    from klc.pipeline import _scope, _SiteCaches
    from klc.site_keys import parameter_names, parameter_target

    qualifiers = [r for r in rules if parameter_target(r) is not None]
    assert {r.name for r in qualifiers} >= {"add_restrict", "add_const_param"}
    found = 0
    for unit in [*units, parse_bytes(SHADOWS, "shadows.cu"), parse_bytes(PARAMS, "params.cu"),
                 parse_bytes(HOSTS, "hosts.cu")]:
        caches = _SiteCaches(unit, qualifiers)
        for rule, pattern in zip(qualifiers, caches.patterns, strict=True):
            target, scope = parameter_target(rule), _scope(rule)
            assert target is not None and scope is not None
            whole = caches.matches(pattern, scope)
            want, seen = [], set()
            for m in whole:
                b = m.bindings.get(target)
                names = parameter_names(m.function) if m.function is not None else []
                if b is not None and b.text in names and (m.function.start, b.text) not in seen:
                    seen.add((m.function.start, b.text))
                    want.append(m)
            # the candidates met on the way down: those in the scope's functions (what the
            # listing asks), and those of the scoped list (a kernel body's top level)
            for where in (lambda b, u=unit, c=caches, sc=scope: where_of(u, b, sc, c.candidates,
                                                                          {}),
                          lambda b, u=unit, c=caches, sc=scope: Where(nodes=scoped(
                              u, b, c.candidates, sc, {})[b.root_type])):
                got = first_per_name(pattern, unit, where, target, parameter_names)
                assert got is not None
                assert [(m.start, m.end, {k: v.text for k, v in m.bindings.items()})
                        for m in got] == [(m.start, m.end, {k: v.text for k, v in
                                                           m.bindings.items()}) for m in want]
            found += len(got)
        fresh = parse_bytes(unit.source, unit.path)
        applicable = [s for s in find_sites(fresh, rules, clang=False) if s.ok]
        assert _view(find_sites(unit, rules, clang=False, refused=False)) == _view(applicable)
    assert found > 50


# the words the model is found from, where they start no construct (comments, strings, a
# macro's text, longer tokens), and the constructs themselves in every spelling the text scan
# has to find: a do loop's `while`, `__asm__`, two `__shared__` on one declaration, a launch
# beside a shift, calls that share a start, a lambda called in place, methods of groups
WORDS = b"""\
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define LAUNCH_ALL __global__ void
#define SYNC() __syncthreads()
// for while do asm __shared__ __global__ #pragma <<< atomicAdd __shfl_down_sync .sync()
const char* words = "for (;;) while do asm __shared__ #pragma unroll <<< atomic";
extern "C" {
__global__ void in_c(float* p) { p[threadIdx.x] = 0.0f; }
}
namespace outer { namespace inner {
struct Helper {
  __device__ float twice(float v) const { return 2.0f * v; }
  template <int N> __device__ void sweep(float* p) {
    #pragma unroll
    for (int i = 0; i < N; ++i) p[i] += 1.0f;
  }
};
struct { __device__ int one() { return 1; } } single;
}}  // namespace outer::inner
__global__ void words_everywhere(float* x, int* count, int n) {
  __shared__ __shared__ float tile[32];
  extern __shared__ float dyn[];
  auto block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  int i = 0;
  do { tile[i % 32] = x[i]; i++; } while (i < n);
  while (i > 0) { --i; }
  for (float v : tile) { x[0] += v; }
  #pragma unroll 2
  for (int k = 0; k < 4; k++) x[k] = 0;
  #pragmaunroll
  asm volatile("membar.gl;");
  __asm__("membar.cta;");
  block.sync();
  warp .
      shfl_xor(x[0], 2);
  (&block)->sync();
  asm volatile("bar.sync 0; mma.sync.aligned.m16n8k16;");
  cg::this_thread_block().sync();
  float s = cg::reduce(warp, x[0], cg::plus<float>());
  s += warp.shfl_down(s, 1) + __shfl_down_sync(0xffffffff, s, 1);
  atomicAdd<float>(x, s);
  ::atomicAdd(count, 1);
  atomicAdd(count, 1);
  [&] { atomicAdd(count, 2); __syncwarp(); }();
  SYNC();
  int shifted = n << 2 < 3;
  (void)shifted;
}
__global__ void launcher_kernel(float* x) { x[0] = 1.0f; }
void host(float* x) {
  launcher_kernel<<<1, 32>>>(x);
  outer::inner::Helper h;
  (void)h;
}
"""


def _spans(nodes: list) -> list[tuple[int, int, str]]:  # type: ignore[type-arg]
    return [(n.start_byte, n.end_byte, n.type) for n in nodes]


def test_the_model_found_from_the_text_is_the_one_a_query_finds(units: list[Unit]) -> None:
    """In a tree without errors the model's constructs are found from the words that start
    them (klc.cuda.scan.by_text), not by a query over every node (_by_query): the same
    nodes, in the same order; the calls that may be intrinsics are every call the query finds
    whose name makes it one (and only calls)."""
    from klc.cuda.build import _by_query, _call_kind, _call_name
    from klc.cuda.scan import by_text
    from klc.cuda.syntax import F_FUNCTION

    frontend = sorted((ROOT / "tests" / "data" / "frontend").glob("*.cu*"))
    clean = [u for u in [*units, parse_bytes(WORDS, "words.cu"),
                         *(parse_bytes(p.read_bytes(), str(p)) for p in frontend)]
             if not u.root.has_error]
    assert len(clean) > 20 and any(u.path == "words.cu" for u in clean)
    kinds = 0
    for unit in clean:
        text, query = by_text(unit), _by_query(unit)
        for name in ("functions", "launches", "loops", "shared", "pragmas", "asm", "globals"):
            want = getattr(query, name)
            if name == "pragmas":  # (the query takes every directive; the model "#pragma")
                want = [n for n in want if unit.text(n.child_by_field_id(
                    unit.tree.language.field_id_for_name("directive"))).strip() == "#pragma"]
            assert _spans(getattr(text, name)) == _spans(want), (unit.path, name)
        every = {(n.start_byte, n.end_byte) for n in query.calls}
        assert {(n.start_byte, n.end_byte) for n in text.calls} <= every, unit.path
        found = {(n.start_byte, n.end_byte) for n in text.calls}
        for n in query.calls:
            callee = n.child_by_field_id(F_FUNCTION)
            if callee is not None and _call_kind(_call_name(unit, callee)) is not None:
                kinds += 1
                assert (n.start_byte, n.end_byte) in found, (unit.path, unit.text(n))
    assert kinds > 10
    words = next(u for u in clean if u.path == "words.cu")
    kernel = words.function("words_everywhere")
    assert kernel is not None
    assert [(lp.kind, lp.unroll) for lp in kernel.loops] == [
        ("do", None), ("while", None), ("for", None), ("for", "2")]
    assert len(kernel.shared) == 2 and len(kernel.asm) == 3
    assert [p.text for p in kernel.pragmas] == ["unroll 2"]  # (not "#pragmaunroll")
    # (SYNC() is a macro's name, not a barrier's; the lambda's calls are the kernel's; "bar.sync"
    # in PTX text is no call; a method may stand after blanks)
    assert [c.name for c in kernel.barriers] == ["block.sync", "(&block)->sync",
                                                 "cg::this_thread_block().sync", "__syncwarp"]
    assert [c.name for c in kernel.warp_intrinsics] == ["warp.shfl_xor", "cg::reduce",
                                                        "warp.shfl_down", "__shfl_down_sync"]
    assert [c.name for c in kernel.atomics] == ["atomicAdd", "::atomicAdd", "atomicAdd",
                                                "atomicAdd"]
    assert [lc.kernel for lc in words.launches] == ["launcher_kernel"]
    assert {f.name for f in words.functions} >= {"in_c", "twice", "sweep", "one",
                                                 "words_everywhere", "host"}


def test_a_functions_calls_are_those_its_body_holds(units: list[Unit]) -> None:
    """``Function.calls`` (read on first use from the per-type index) is every call whose
    innermost function is this one, in document order, as a scan of all calls finds them."""
    for unit in [*units, parse_bytes(WORDS, "words.cu")]:
        calls = unit.nodes_by_type(["call_expression"])["call_expression"]
        for f in unit.functions:
            want = [(c.start_byte, c.end_byte) for c in calls
                    if c.child_by_field_name("function") is not None
                    and unit.function_at(c.start_byte) is f
                    and f.body_start <= c.start_byte and c.end_byte <= f.body_end]
            assert [(c.start, c.end) for c in f.calls] == want, (unit.path, f.name)


FRESH_RULES = """\
rule guard_first {{
  kind: skill
  description: "t"
  context: global
  anchor: ```
    for (int $V = 0; $V < $N; $V++) {{
        $$$BODY;
    }}
  ```
  guard: {guard}
  rewrite replace: ```
    {{
        const int ?t = $N;
        for (int $V = 0; $V < ?t; $V++) {{
            $$$BODY;
        }}
    }}
  ```
  hole t: ident default tile
}}
"""

FRESH = b"""\
__global__ void taken(float* y, int n) {
  int tile = 2;
  for (int i = 0; i < n; i++) { y[i] = tile; }
}
__global__ void free_(float* y, int n) {
  for (int i = 0; i < n; i++) { y[i] = 1.0f; }
}
__global__ void refused(float* y, int n) {
  int tile = 2;
  for (int i = 0; i < n; i++) { y[i] = tile; }
  for (int i = 0; i < 4; i++) { y[i] = tile; }
}
"""


@pytest.mark.parametrize("guard", [
    "is_constant($N)", "not is_constant($N)",     # reads no hole: judged before the names
    "fresh_name(?t) and not is_constant($N)",     # reads the name
    "smem_fits(default) and not is_constant($N)",  # fills the templates with every hole
])
def test_a_guard_judged_before_the_fresh_names_gives_the_same_sites(guard: str) -> None:
    """Without ``--all``, a guard that reads none of the names ``fresh_defaults`` gives is
    judged before they are found (``_RuleSites.guard_first``): the same sites, with the same
    hole values (``tile_1`` where the kernel has its own ``tile``), as the full listing."""
    from klc.rule import load_rules_text

    rules = load_rules_text(FRESH_RULES.format(guard=guard), "t.rule")
    every = [s for s in find_sites(parse_bytes(FRESH, "f.cu"), rules, clang=False) if s.ok]
    some = find_sites(parse_bytes(FRESH, "f.cu"), rules, clang=False, refused=False)
    assert [(s.match.start, s.holes) for s in some] == [(s.match.start, s.holes) for s in every]
    if guard.startswith("not"):
        assert [s.holes for s in some] == [{"t": "tile_1"}, {}, {"t": "tile_1"}]
