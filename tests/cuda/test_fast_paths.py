"""The front end's shortcuts give what the plain ways they replace give.

The known macro prefixes are found by one scan per first byte they share (not one ``in`` per
prefix); a unit's first positions are counted from the text (not looked up in a table of
every line start); the comments are found from their ``//`` and ``/*`` (not by a query over
every node). Each is checked against the plain way on the front end's test corpus and
on text made to break a careless shortcut (prefixes inside one another, offsets out of order,
past the end, lines ended by "\\r\\n").
"""

from __future__ import annotations

import bisect
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from klc.cuda import model
from klc.cuda.macros import _KNOWN_PREFIXES, _known_prefixes
from klc.cuda.parse import parse_bytes
from klc.cuda.syntax import line_starts

CORPUS = Path(__file__).parents[1] / "data" / "frontend"
SOURCES = [p.read_bytes() for p in sorted(CORPUS.iterdir()) if p.suffix in (".cu", ".cuh")]


def _prefixes_by_in(source: bytes) -> set[bytes]:
    return {p for p in _KNOWN_PREFIXES if p in source}


def test_known_prefixes_are_those_the_text_holds() -> None:
    made = [b"CUTHRUST_", b"xTHRUSTORCH_ C10_CUB_", b"CUTCUTLASS_", b"__CCCL_", b"C", b"",
            b"CUTLASS_DEVICE void f();", b"THRUSTHRUST_", b"TORCH_THRUST_CUTE_"]
    held = 0
    for source in [*SOURCES, *made]:
        assert _known_prefixes(source) == _prefixes_by_in(source), source[:60]
        held += bool(_prefixes_by_in(source))
    assert held >= 8  # (the corpus and the made text hold some)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*_KNOWN_PREFIXES, b"C", b"T", b"_", b"UT", b"x", b"10_"]))
       .map(b"".join))
def test_known_prefixes_of_any_run_of_their_pieces(source: bytes) -> None:
    assert _known_prefixes(source) == _prefixes_by_in(source)


def _position_by_table(source: bytes, offset: int) -> tuple[int, int]:
    starts = line_starts(source)
    line = bisect.bisect_right(starts, offset) - 1
    return line + 1, offset - starts[line] + 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"\n", b"\r\n", b" ", b"{}", b"int x;"]), min_size=1)
       .map(b"".join).filter(bytes.strip),
       st.lists(st.integers(min_value=0, max_value=2_000), max_size=40))
def test_counted_positions_are_those_of_the_line_table(source: bytes,
                                                       offsets: list[int]) -> None:
    unit = parse_bytes(source, "t.cu")
    for offset in offsets:  # (in any order, past the end too)
        assert unit.position(offset) == _position_by_table(source, offset)
    assert "_line_starts" not in unit.__dict__  # (counted: no table made)


def test_positions_past_the_counted_ones_come_from_the_table() -> None:
    source = b"".join(SOURCES)
    unit = parse_bytes(source, "all.cu")
    offsets = list(range(len(source) - 1, -1, -max(1, len(source) // 700)))
    assert len(offsets) > model._COUNTED_POSITIONS + 100
    for i, offset in enumerate(offsets):
        assert unit.position(offset) == _position_by_table(source, offset), i
    assert "_line_starts" in unit.__dict__
    assert unit.position(len(source) + 5) == _position_by_table(source, len(source) + 5)


BROKEN = [
    b"void f() int x; }\n",
    b"__global__ void k(float* a) a[0] = 1; }\n",
    b"namespace n  __global__ void k() { } }\n",
    b"__global__ void k(float* a) { for (int i = 0; i < 4; ++i) a[i] = 1 }\n",
    b"__global__ void k(float* a) { do a[0]++; while (a[0] < 3) }\n",
    b"__global__ void k(float* a) { do { a[0]++; } while (a[0] < 3 }\n",
    b"struct S { __device__ void m() { int x = 1 } };\n",
    b"__global__ void k(float* a) { do { a[0]++; } }\n void g() {}\n",
    b"void h() { k<<<1, 32>>>(p) }\n__global__ void k(float* p) { while (1) { asm(\"nop\") } }\n",
    b"__global__ void k(float* a) {\n#pragma unroll\n for (;;) { a[0] = 1 }\n",
    b"__global__ void k(float* a) { __shared__ float s[32] a[0] = s[0]; __syncthreads() }\n",
]


def test_constructs_of_trees_with_errors_from_the_text_are_the_querys() -> None:
    """A tree whose errors are ERROR nodes and MISSING tokens the constructs are not found
    from is read from the text (``by_text``): the nodes one query over the tree finds."""
    from klc.cuda.build import _by_query, _call_kind, _call_name, _found
    from klc.cuda.scan import by_text
    from klc.cuda.syntax import F_DIRECTIVE, F_FUNCTION

    def spans(nodes: list) -> list[tuple[int, int, str]]:  # type: ignore[type-arg]
        return [(n.start_byte, n.end_byte, n.type) for n in nodes]

    units = [parse_bytes(source, f"b{i}.cu") for i, source in enumerate([*BROKEN, *SOURCES])]
    broken = [u for u in units if u.root.has_error]
    assert len(broken) >= len(BROKEN) and any(u.missing for u in broken)
    for unit in broken:
        text, query = by_text(unit), _by_query(unit)
        for name in ("functions", "launches", "loops", "shared", "pragmas", "asm", "globals"):
            want = getattr(query, name)
            if name == "pragmas":  # (the query takes every directive; the model "#pragma")
                want = [n for n in want
                        if unit.text(n.child_by_field_id(F_DIRECTIVE)).strip() == "#pragma"]
            assert spans(getattr(text, name)) == spans(want), (unit.path, name)
        found = {(n.start_byte, n.end_byte) for n in text.calls}
        for n in query.calls:
            callee = n.child_by_field_id(F_FUNCTION)
            if callee is not None and _call_kind(_call_name(unit, callee)) is not None:
                assert (n.start_byte, n.end_byte) in found, (unit.path, unit.text(n))
        assert spans(_found(unit).loops) == spans(text.loops)


def test_a_missing_token_a_construct_is_found_from_sends_the_tree_to_the_query(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from klc.cuda import build

    unit = parse_bytes(BROKEN[3], "missing.cu")
    assert unit.missing == {";"}
    asked: list[str] = []
    query = build._by_query
    monkeypatch.setattr(build, "_by_query", lambda u: asked.append(u.path) or query(u))
    build._found(unit)
    assert asked == []  # a ";": read from the text
    unit.missing = frozenset({"while"})  # (as if the "while" of a do loop were MISSING)
    build._found(unit)
    assert asked == ["missing.cu"]


NESTED = b"""\
extern "C" __global__ void c_kernel(float* a) { a[0] = 1; }
extern "C" { __global__ void in_block(float* a) { a[0] = 2; } }
namespace outer { namespace inner {
template <typename T, int N = 4>
__global__ void templ(T* a) { a[0] = N; }
struct S { __device__ void method(float* p) { p[0] = 3; } };
} }
extern "C" { template <int K> __device__ void t_in_block(int* a) { a[0] = K; } }
"""


def test_function_ancestors_from_the_descent_are_the_nodes_parents() -> None:
    """The parents the outline descent records for each definition are its ``parent``,
    grandparent and great-grandparent, and the functions built from them are those built
    from asking each node."""
    from klc.cuda.build import _ancestors, _function
    from klc.cuda.scan import function_nodes

    checked = 0
    for unit in [parse_bytes(NESTED, "nested.cu"), *(parse_bytes(s, "c.cu") for s in SOURCES)]:
        nodes, ancestors = function_nodes(unit)
        for node, up in zip(nodes, ancestors, strict=True):
            assert [(a.type, a.start_byte, a.end_byte) for a in up] == [
                (a.type, a.start_byte, a.end_byte) for a in _ancestors(node)]
            assert _function(unit, node, up) == _function(unit, node)
            checked += 1
    nested = parse_bytes(NESTED, "nested.cu")
    kinds = {f.name: (f.extern_c, len(f.template_params)) for f in nested.functions}
    assert kinds == {"c_kernel": (True, 0), "in_block": (True, 0), "templ": (False, 2),
                     "method": (False, 0), "t_in_block": (True, 1)}
    assert checked > 100


COMMENTED = [
    b'const char* url = "http://x/*y*/"; // a comment /* inside */ a line\nint a;\n',
    b"/* a block // with a line one */ int b = 1 / 2; /**/ int c = 3 //x\n;\n",
    b"#define D(x) x // after a macro\\\n  still the comment\nint d = D(1);\n",
    b"char s = '/'; char t = '*'; int e = s / *&t; // end\n",
    b'auto r = R"(// not /* a comment)"; /* one\n over lines */\n',
    b"int f = 1; /* never closed\nint g = 2;\n",
    b"// only a comment, no newline at the end",
    b"int h = 4 /* between */ + /**/ 5 ///\n;\n",
]

_COMMENT_WORDS = [b"//", b"/*", b"*/", b"/", b"*", b'"', b"'", b"\\\n", b"\n", b" ", b"x",
                  b"int a = 1;", b'R"(', b')"', b"#define M ", b"{", b"}"]


def _comments_by_query(unit: model.Unit) -> list[tuple[int, int]]:
    from tree_sitter import QueryCursor

    from klc.cuda.syntax import type_query

    found = QueryCursor(type_query(("comment",))).captures(unit.root).get("comment", [])
    return sorted((n.start_byte, n.end_byte) for n in found)


def test_comments_found_from_the_text_are_the_querys() -> None:
    """``Unit.squeezed`` takes out the comments ``comment_nodes`` finds from the text (each
    ``//`` and ``/*`` looked up in the tree), not from a query over every node: the same
    comments, whatever strings, character literals, raw strings, line continuations and
    unclosed comments stand around them."""
    from klc.cuda.syntax import comment_nodes

    held = 0
    for source in [*SOURCES, *COMMENTED]:
        unit = parse_bytes(source, "c.cu")
        got = [(n.start_byte, n.end_byte) for n in comment_nodes(unit.root, unit.parsed)]
        assert got == _comments_by_query(unit), source[:60]
        held += len(got)
    assert held >= 40


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_COMMENT_WORDS), max_size=40))
def test_comments_of_any_text_are_the_querys(pieces: list[bytes]) -> None:
    from klc.cuda.syntax import comment_nodes

    unit = parse_bytes(b"".join(pieces), "c.cu")
    got = [(n.start_byte, n.end_byte) for n in comment_nodes(unit.root, unit.parsed)]
    assert got == _comments_by_query(unit)


# -- the nodes of a few kinds inside a span: a walk of the span's subtree, the nodes the
# whole unit's list holds there (``in_span`` of ``nodes_of``), in the same order

_SPAN_KINDS = [frozenset({"subscript_expression", "call_expression", "pointer_expression",
                          "field_expression"}),
               frozenset({"identifier"}), frozenset({"for_statement", "compound_statement"})]


@settings(max_examples=300, deadline=None)
@given(which=st.integers(0, len(SOURCES) - 1), kinds=st.sampled_from(_SPAN_KINDS),
       a=st.floats(0, 1), b=st.floats(0, 1))
def test_the_nodes_inside_a_span_are_the_unit_lists(which: int, kinds: frozenset[str],
                                                     a: float, b: float) -> None:
    from klc.analysis.tree import in_span, nodes_of, nodes_within

    unit = parse_bytes(SOURCES[which], "k.cu")
    n = len(unit.source)
    start, end = sorted((int(a * n), int(b * n)))
    want = list(in_span(nodes_of(unit, *sorted(kinds)), start, end))
    assert [n.id for n in nodes_within(unit, kinds, start, end)] == [n.id for n in want]


def test_the_nodes_inside_a_node_are_the_unit_lists() -> None:
    from klc.analysis.tree import in_span, nodes_of, nodes_within

    kinds = _SPAN_KINDS[0]
    seen = 0
    for source in SOURCES:
        unit = parse_bytes(source, "k.cu")
        for node in nodes_of(unit, "expression_statement", "for_statement", "call_expression"):
            want = list(in_span(nodes_of(unit, *sorted(kinds)), node.start_byte, node.end_byte))
            got = nodes_within(unit, kinds, node.start_byte, node.end_byte)
            assert [n.id for n in got] == [n.id for n in want]
            seen += len(want)
    assert seen > 100


# -- the declarations of one name, read from the declarations that spell it: those of the
# unit's table


def test_the_declarations_of_a_name_are_the_table_s() -> None:
    from klc.analysis.declarations import _BUDGET, _NAMED, _declarations, _declarations_named

    seen = lazy = 0
    lambdas = (b"__global__ void k(float* x) {\n  auto f = [&](int i) {\n"
               b"    int i2 = i; float x2 = x[i2]; return x2; };\n"
               b"  int a = 1, i2 = 2; x[a] = f(i2);\n}\nint a;\n")
    for source in [*SOURCES, lambdas]:
        unit = parse_bytes(source, "k.cu")
        names = sorted(set(_declarations(parse_bytes(source, "k.cu")))
                       | {"", "x", "i", "n", "idx", "no_such_name"})
        got = {}
        for name in names:
            unit.memo.pop("declarations", None)  # (each name read without the table)
            unit.memo.pop(_BUDGET, None)
            got[name] = _declarations_named(unit, name)
            lazy += name in unit.memo.get(_NAMED, {})
        table = _declarations(unit)
        for name in names:
            assert got[name] == table.get(name, []), name
            seen += len(got[name])
    assert seen > 500 and lazy > 300


def test_names_asked_past_the_budget_are_read_from_the_table() -> None:
    from klc.analysis.declarations import _NAMED, _TABLE, _declarations, _declarations_named

    # a generated kernel: many names, each declared once and used a few times
    lines = [f"  float v{i} = x[{i}];\n  x[{i}] = v{i} * v{i} + 1.0f;\n" for i in range(40)]
    source = ("__global__ void k(float* x) {\n" + "".join(lines) + "}\n").encode()
    unit = parse_bytes(source, "k.cu")
    got = {f"v{i}": _declarations_named(unit, f"v{i}") for i in range(40)}
    lazy = set(unit.memo.get(_NAMED, {}))
    assert unit.memo.get(_TABLE) is not None  # the budget ran out: the table was made
    assert 0 < len(lazy) < 40  # (the first names were read one by one)
    table = _declarations(unit)
    for name, decls in got.items():
        assert decls == table[name] and len(decls) == 1, name


# -- the identifiers in a node: a walk of a small node, a query over a large one, the same


def test_the_names_in_a_node_are_the_query_s(monkeypatch: pytest.MonkeyPatch) -> None:
    from klc.analysis import tree

    seen = walked = 0
    for source in SOURCES:
        unit = parse_bytes(source, "k.cu")
        for node in tree.nodes_of(unit, "expression_statement", "declaration", "for_statement",
                                  "compound_statement"):
            got = tree.names_in(node, unit.source)
            with monkeypatch.context() as m:
                m.setattr(tree, "_WALKED", -1)  # (every node asked of the query)
                want = tree.names_in(node, unit.source)
            assert [(t, n.id) for t, n in got] == [(t, n.id) for t, n in want]
            seen += len(want)
            walked += node.descendant_count <= tree._WALKED
    assert seen > 1000 and walked > 100


def _constructs(unit: model.Unit) -> list[object]:
    """Everything the model holds of the functions' bodies, and the unit's launches and
    kernels it could not model, as plain values."""
    held: list[object] = [[(lc.kernel, lc.start, lc.end) for lc in unit.launches],
                          [(u.name, u.line, u.reason) for u in unit.unanalyzable]]
    for f in unit.functions:
        held.append((f.name, [(s.name, s.type) for s in f.shared],
                     [(p.text, p.start) for p in f.pragmas],
                     [(c.name, c.start) for c in (*f.barriers, *f.warp_intrinsics, *f.atomics)],
                     [(lp.start, lp.depth, lp.unroll, lp.var) for lp in f.loops], list(f.asm),
                     [lc.start for lc in f.launches]))
    return held


@pytest.mark.parametrize(("first", "group"), [
    ("loops", "loops"), ("barriers", "calls"), ("warp_intrinsics", "calls"),
    ("launches", "launches"), ("pragmas", "rest"), ("shared", "rest"),
    ("unanalyzable", "rest")])
def test_the_bodies_constructs_are_found_by_group_on_the_first_question_about_one(
        first: str, group: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The functions are modeled without what their bodies hold; the first question about
    one of a group of it (a function's loops, its barriers, the unit's launches, ...) finds
    that group, once, for every function; asked group by group, the model is the one a unit
    that finds every group at once has, in a tree read from the text and in one read by the
    query (which finds them all with the functions)."""
    from klc.cuda import build

    runs: list[tuple[int, str | None]] = []  # (the unit, by id, and the group)
    real = build._found
    monkeypatch.setattr(build, "_found",
                        lambda u, g=None: runs.append((id(u), g)) or real(u, g))
    # (and each broken one as if a token the text is read from were MISSING: the query's)
    sources = [(s, False) for s in [*SOURCES, *BROKEN]] + [(s, True) for s in BROKEN]
    checked = queried = 0
    for i, (source, missing) in enumerate(sources):
        unit = parse_bytes(source, f"u{i}.cu")
        if missing:
            unit.missing = frozenset({"while"})
        names = [f.name for f in unit.functions]
        by_query = bool(unit.missing & build._FOUND_FROM)
        assert unit._constructed == (set(model.CONSTRUCT_GROUPS) if by_query else set())
        if first == "unanalyzable" or not unit.functions:
            unit.unanalyzable  # noqa: B018 (asked of the unit)
            asked = "rest"
        else:  # (of the last function: the others are found too)
            getattr(unit.functions[-1], first)
            asked = group
        assert [f.name for f in unit.functions] == names
        if by_query:
            assert runs == []
        else:
            assert unit._constructed == {asked} and runs == [(id(unit), asked)], unit.path
        whole = parse_bytes(source, unit.path)
        whole.missing = unit.missing
        whole.constructs()  # (every group, asked of the unit before any function's)
        assert _constructs(unit) == _constructs(whole), unit.path
        if not by_query:  # (each group of each unit found once, every group of the whole)
            assert len(runs) == len(set(runs))
            assert {g for u, g in runs if u == id(whole)} == set(model.CONSTRUCT_GROUPS)
        runs.clear()
        checked += 1
        queried += by_query
    assert checked == len(sources) and queried == len(BROKEN)
    # (the corpus holds every kind: loops, pragmas, barriers, launches, shared arrays)
    every = [parse_bytes(s, "x.cu") for s in SOURCES]
    assert all(any(getattr(f, kind) for u in every for f in u.functions)
               for kind in ("loops", "pragmas", "barriers", "launches", "shared"))


def test_a_listing_whose_matches_no_guard_judges_finds_no_constructs() -> None:
    """Matching needs the functions (where a rule may apply), not what their bodies hold:
    a rule without a guard lists its sites and leaves the unit's constructs unfound, and one
    whose guard reads a function's loops finds them, and only them."""
    from klc.pipeline import find_sites
    from klc.rule.ruleset import load_rules_text

    source = (b"__global__ void k(float* a, int n) {\n"
              b"    for (int i = 0; i < n; ++i) { a[i] = expf(a[i]); }\n}\n")
    bare, = load_rules_text('rule fast_exp {\n  kind: skill\n  context: any\n'
                            '  anchor: ```\n    expf($X)\n  ```\n'
                            '  rewrite replace: ```\n    __expf($X)\n  ```\n}\n', "t.rule")
    unit = parse_bytes(source, "k.cu")
    assert [s.ok for s in find_sites(unit, [bare], clang=False)] == [True]
    assert unit._modeled and unit._constructed == set()
    guarded, = load_rules_text('rule fast_exp_in_loops {\n  kind: skill\n  context: any\n'
                               '  anchor: ```\n    expf($X)\n  ```\n'
                               '  guard: in_loop\n'
                                   '  rewrite replace: ```\n    __expf($X)\n  ```\n}\n', "t.rule")
    unit = parse_bytes(source, "k.cu")
    find_sites(unit, [guarded], clang=False)
    assert unit._constructed == {"loops"}  # (its loops only)
