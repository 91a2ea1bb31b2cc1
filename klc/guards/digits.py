"""Guard predicates for a thread's index unpacked into coordinates with / and % (the common
spelling of a 1-D launch over a 3-D array: ``i = idx % HS; t = (idx / HS) % T; b = idx /
(HS * T)``), and for reads that depend on some of the coordinates only. A rewrite that
computes another element's value sets the index to that element's and replays the
unpacking (passes/attention_tiles.rule's value tiles): sound when the coordinates are the
index's digits and the reads it shares between elements are functions of the coordinates
the elements share."""

from __future__ import annotations

from tree_sitter import Node

from klc.analysis.declarations import declarations_named, lookup
from klc.analysis.launch import strip_casts
from klc.analysis.tree import binding_node, cited, operator_of, quoted, text_of, unparen
from klc.analysis.writes import is_assigned
from klc.cuda.syntax import F_LEFT, F_RIGHT
from klc.guards.gemm import _varies_why
from klc.guards.registry import ArgSpec, GuardContext, Verdict, _metavar, _no, _yes, predicate
from klc.match import Binding

_INT_TYPES = frozenset({"int", "unsigned", "unsigned int", "signed", "signed int", "long",
                        "unsigned long", "long long", "unsigned long long", "size_t",
                        "std::size_t", "int32_t", "uint32_t", "int64_t", "uint64_t"})


def _binary(node: Node, src: bytes, op: str) -> tuple[Node, Node] | None:
    node = strip_casts(node, src)
    if node.type != "binary_expression" or operator_of(node) != op:
        return None
    left, right = node.child_by_field_id(F_LEFT), node.child_by_field_id(F_RIGHT)
    if left is None or right is None:
        return None
    return strip_casts(left, src), strip_casts(right, src)


def _same(src: bytes, a: Node, b: Node) -> bool:
    return "".join(text_of(src, a).split()) == "".join(text_of(src, b).split())


def _digit_decl(ctx: GuardContext, m: Binding) -> tuple[str, Node, str] | Verdict:
    """The integer local $M bound names, set once: (name, initialiser, where)."""
    node = binding_node(m)
    fn = ctx.function
    src = ctx.unit.source
    if node is None or fn is None or unparen(node).type != "identifier":
        return _no(ctx, f"{quoted(m)} is not a plain name in a function", m.start)
    name = text_of(src, unparen(node))
    decl = lookup(ctx, name, m.start + 1)
    if decl is None or decl.origin != "local" or decl.init is None:
        return _no(ctx, f"`{name}` is not a local with an initialiser", m.start)
    where = cited(ctx.unit, decl.start, decl.end)
    if decl.pointer or decl.reference or decl.dims or decl.base not in _INT_TYPES:
        return _no(ctx, f"`{name}` is not an integer ({where})", m.start)
    if is_assigned(ctx, name, decl.end, fn.body_end):
        return _no(ctx, f"`{name}` is assigned after its declaration ({where})", m.start)
    return name, decl.init, where


@predicate("index_digits", _metavar("$I"), _metavar("$J"), _metavar("$K"),
           reads=("arguments", "declarations"))
def index_digits(ctx: GuardContext, i: Binding, j: Binding, k: Binding) -> Verdict:
    """$I, $J, $K are the digits of one index X in the base (N1, N2): integer locals set
    once, ``$I = X % N1``, ``$J = (X / N1) % N2``, ``$K = X / (N1 * N2)`` (or ``N2 * N1``,
    or ``(X / N1) / N2``), X, N1 and N2 the same code in each. For X >= 0 and N1, N2 > 0,
    X = ($K * N2 + $J) * N1 + $I: the element of coordinates ($K, $J, $I) has the index
    ``($K * N2 + $J) * N1 + $I``, and unpacking that index gives the coordinates back."""
    src = ctx.unit.source
    found = []
    for m in (i, j, k):
        d = _digit_decl(ctx, m)
        if isinstance(d, Verdict):
            return d
        found.append(d)
    (ni, ii, wi), (nj, ij, wj), (nk, ik, wk) = found
    low = _binary(ii, src, "%")
    if low is None:
        return _no(ctx, f"`{ni}` is not X % N ({wi})", i.start)
    x, n1 = low
    mid = _binary(ij, src, "%")
    inner = _binary(mid[0], src, "/") if mid is not None else None
    if mid is None or inner is None or not _same(src, inner[0], x) \
            or not _same(src, inner[1], n1):
        return _no(ctx, f"`{nj}` is not ({text_of(src, x)} / {text_of(src, n1)}) % N "
                   f"({wj})", j.start)
    n2 = mid[1]
    top = _binary(ik, src, "/")
    ok = False
    if top is not None:
        num, den = top
        prod = _binary(den, src, "*")
        if _same(src, num, x) and prod is not None and (
                (_same(src, prod[0], n1) and _same(src, prod[1], n2))
                or (_same(src, prod[0], n2) and _same(src, prod[1], n1))):
            ok = True
        again = _binary(num, src, "/")
        if again is not None and _same(src, again[0], x) and _same(src, again[1], n1) \
                and _same(src, den, n2):
            ok = True
    if not ok:
        return _no(ctx, f"`{nk}` is not {text_of(src, x)} / ({text_of(src, n1)} * "
                   f"{text_of(src, n2)}) ({wk})", k.start)
    for n in (x, n1, n2):
        why = _varies_why(ctx, n, set(), set()) if n is not x else None
        if why is not None:
            return _no(ctx, f"the base `{text_of(src, n)}` may differ between threads: {why}",
                       n.start_byte)
    return _yes(f"`{nk}`, `{nj}`, `{ni}` are the digits of `{text_of(src, x)}` in the base "
                f"({text_of(src, n2)}, {text_of(src, n1)}) ({wi})", i.start)


def _bound_here(ctx: GuardContext, name: str) -> set[tuple[str, int]]:
    """Every declaration of ``name`` inside the match: a metavariable that the anchor names
    several times (a block that sets an element's coordinates again) binds each of them."""
    m = ctx.match
    return {(name, d.start) for d in declarations_named(ctx.unit, name)
            if m.start <= d.start < m.end}


@predicate("reads_only_with", _metavar("$P"), _metavar("$X"), _metavar("$A"),
           ArgSpec("$B", frozenset({"metavar"}), optional=True),
           ArgSpec("$C", frozenset({"metavar"}), optional=True),
           reads=("arguments", "declarations"))
def reads_only_with(ctx: GuardContext, p: Binding, x: Binding, a: Binding,
                    b: Binding | None = None, c: Binding | None = None) -> Verdict:
    """The read ``$P[$X]`` is at the same address for any two threads of a block (or two
    elements one thread computes) that agree on the variables $A, $B and $C: neither the
    pointer nor the index reads a thread index, calls, reads memory or changes anything,
    and every other name in them is block-uniform (a built-in of the block, a constant, a
    parameter never assigned, or a local set once from such an initialiser, row pointers
    included)."""
    src = ctx.unit.source
    allowed: set[tuple[str, int]] = set()
    names = []
    for m in (a, b, c):
        if m is None:
            continue
        node = binding_node(m)
        if node is None or unparen(node).type != "identifier":
            return _no(ctx, f"{quoted(m)} is not a plain name", m.start)
        name = text_of(src, unparen(node))
        decl = lookup(ctx, name, m.start + 1)
        if decl is None:
            return _no(ctx, f"`{name}` is not a declared variable", m.start)
        allowed.add((name, decl.start))
        allowed.update(_bound_here(ctx, name))
        names.append(f"`{name}`")
    given = ", ".join(names)
    for part in (p, x):
        node = binding_node(part)
        if node is None or ctx.function is None:
            return _no(ctx, f"{quoted(part)} is not an expression in a function", part.start)
        why = _varies_why(ctx, node, allowed, set())
        if why is not None:
            return _no(ctx, f"the read {p.text.strip()}[{x.text.strip()}] may differ between "
                       f"elements that agree on {given}: {why} ({ctx.unit.where(part.start)})",
                       part.start)
    return _yes(f"the read {p.text.strip()}[{x.text.strip()}] depends on {given} alone",
                p.start)
