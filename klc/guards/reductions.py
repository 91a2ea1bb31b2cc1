"""Guard predicates for block reductions (passes/block_reduce.rule's inverses): who reads a
reduced variable after the reduction (``thread0_reads_after``: the warp-shuffle and unrolled
forms leave the block's total in thread 0 alone, and other partial sums in the other
threads), a ``__shared__`` array a rewrite may park one value per warp in
(``spare_shared_array``), and a ``__shared__`` array that holds a block's tree
(``shared_array``, ``shared_array_holds``)."""

from __future__ import annotations

import re
from typing import Any

from tree_sitter import Node

from klc.analysis.constants import Evaluator, constant_of, kernel_spec, spec_for
from klc.analysis.declarations import declarations_named, lookup
from klc.analysis.launch import field_of, strip_casts
from klc.analysis.tree import cited, in_span, nodes_of, quoted, snippet, text_of, unparen
from klc.analysis.types import SIZES, norm_type
from klc.analysis.writes import is_assigned
from klc.guards.launch import _INDEX_TYPES
from klc.guards.loops import name_run_once
from klc.guards.registry import ArgSpec, GuardContext, Verdict, _metavar, _no, _yes, predicate
from klc.match import Binding
from klc.spec import evaluate_int


def _thread_zero_test(ctx: GuardContext, cond: Node) -> bool:
    """Whether the condition holds only for threadIdx.x == 0: ``T == 0``, ``0 == T`` or
    ``!T`` with T threadIdx.x or a never-reassigned integer local initialised to it, or a
    ``&&`` of conditions one of which is such a test."""
    src = ctx.unit.source
    cond = unparen(cond)
    if cond.type == "condition_clause":
        inner = [c for c in cond.named_children if c.type != "comment"]
        return len(inner) == 1 and _thread_zero_test(ctx, inner[0])
    if cond.type == "binary_expression":
        op = cond.child_by_field_name("operator")
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        if op is None or left is None or right is None:
            return False
        word = text_of(src, op)
        if word == "&&":
            return _thread_zero_test(ctx, left) or _thread_zero_test(ctx, right)
        if word == "==":
            for a, b in ((left, right), (right, left)):
                if unparen(b).type == "number_literal" and _c_zero(text_of(src, unparen(b))) \
                        and _is_thread_index(ctx, a):
                    return True
        return False
    if cond.type == "unary_expression":
        op = cond.child_by_field_name("operator")
        arg = cond.child_by_field_name("argument")
        return op is not None and arg is not None and text_of(src, op) == "!" \
            and _is_thread_index(ctx, arg)
    return False


def _c_zero(word: str) -> bool:
    return re.fullmatch(r"0+[uUlL]*", word) is not None


def _is_thread_index(ctx: GuardContext, node: Node) -> bool:
    """``block_thread_index``'s test on a node: threadIdx.x (casts allowed) or a local integer
    of at least 32 bits initialised to it and never reassigned."""
    src = ctx.unit.source
    if field_of(node, src, "threadIdx"):
        return True
    bare = strip_casts(node, src)
    if bare.type != "identifier":
        return False
    name = text_of(src, bare)
    decl = lookup(ctx, name, bare.start_byte)
    fn = ctx.function
    return decl is not None and decl.origin == "local" and decl.init is not None \
        and field_of(decl.init, src, "threadIdx") and not decl.pointer \
        and not decl.reference and norm_type(decl.base) in _INDEX_TYPES \
        and fn is not None and not is_assigned(ctx, name, decl.end, fn.body_end)


@predicate("thread0_reads_after", _metavar("$X"),
           reads=("arguments", "declarations", "position"))
def thread0_reads_after(ctx: GuardContext, x: Binding) -> Verdict:
    """After the match, only thread 0 of the block reads the variable $X: every use of its
    name after the match lies in the then-branch of an ``if`` testing ``threadIdx.x == 0``
    (or ``tid == 0``, ``!tid``, such a test ``&&`` others), the match is in no loop and no
    ``goto`` of the function can run it again, and $X is a local (not ``__shared__`` nor
    ``static``, no reference) or a by-value parameter whose address is never taken. A block
    reduction that leaves the total in thread 0 alone may then change what the other
    threads' copies of $X hold."""
    named = name_run_once(ctx, x, "read")
    if isinstance(named, Verdict):
        return named
    name, fn = named
    unit, src, m = ctx.unit, ctx.unit.source, ctx.match
    decl = lookup(ctx, name, m.start)
    if decl is None or decl.origin not in ("local", "parameter") or decl.reference \
            or decl.qualifiers & {"__shared__", "static", "extern", "__device__"}:
        where = f" ({cited(unit, decl.start, decl.end)})" if decl is not None else ""
        return _no(ctx, f"`{name}` is not a thread's own local variable{where}", x.start)
    for ident in in_span(nodes_of(unit, "identifier"), fn.body_start, fn.body_end):
        if text_of(src, ident) != name:
            continue
        parent = ident.parent
        while parent is not None and parent.type == "parenthesized_expression":
            parent = parent.parent
        if parent is not None and parent.type == "pointer_expression" \
                and text_of(src, parent).lstrip().startswith("&"):
            return _no(ctx, f"the address of `{name}` is taken ({unit.where(ident.start_byte)})",
                       ident.start_byte)
        if parent is not None and parent.type == "init_declarator":
            d = parent.child_by_field_name("declarator")
            if d is not None and d.type == "reference_declarator":
                return _no(ctx, f"a reference is bound to `{name}` "
                           f"({unit.where(ident.start_byte)})", ident.start_byte)
        if ident.start_byte < m.end:
            continue
        if not _under_thread_zero(ctx, ident, m.end):
            return _no(ctx, f"`{name}` is read after the match by threads other than thread 0 "
                       f"({unit.where(ident.start_byte)}: "
                       f"`{snippet(unit.text(_statement_of(ident)))}`)", ident.start_byte)
    return _yes(f"after the match only thread 0 reads `{name}`", x.start)


def _statement_of(node: Node) -> Node:
    while node.parent is not None and not node.type.endswith("statement") \
            and node.type != "declaration":
        node = node.parent
    return node


def _under_thread_zero(ctx: GuardContext, node: Node, after: int) -> bool:
    """Whether ``node`` lies in the then-branch of an ``if`` (starting at or after ``after``)
    whose condition holds only for thread 0."""
    child, p = node, node.parent
    while p is not None and p.type != "function_definition":
        if p.type == "if_statement" and p.start_byte >= after \
                and p.child_by_field_name("consequence") == child:
            cond = p.child_by_field_name("condition")
            if cond is not None and _thread_zero_test(ctx, cond):
                return True
        child, p = p, p.parent
    return False


@predicate("spare_shared_array", ArgSpec("NAME", frozenset({"hole", "name", "string"})),
           ArgSpec("T", frozenset({"string"})), _metavar("$E"), ArgSpec("N", frozenset({"int"})),
           reads=("arguments", "declarations", "position", "spec"))
def spare_shared_array(ctx: GuardContext, name: Any, ty: str, e: Binding, n: int) -> Verdict:
    """NAME (an ident hole's value) is a ``__shared__`` array of element type T declared
    once in the enclosing function before the match, one-dimensional, with at least
    ceil($E / N) elements (its size and $E known), and used nowhere else in the function: a
    rewrite may park $E / N values in it (a warp's sum per warp of a $E-thread block)
    without writing past its end or over values the kernel keeps there."""
    fn = ctx.function
    unit, src, m = ctx.unit, ctx.unit.source, ctx.match
    word = str(name).strip()
    if fn is not None and fn.param(word) is not None:
        return _no(ctx, f"`{word}` is a parameter of `{fn.name}`, not a shared array")
    d = _shared_array_decl(ctx, word, m.start)
    if isinstance(d, Verdict):
        return d
    cite = cited(unit, d.start, d.end)
    if "extern" in d.qualifiers or not d.dims[0].strip() or d.pointer != 1:
        return _no(ctx, f"`{word}` is not a one-dimensional __shared__ array of a known size "
                   f"({cite})", d.start)
    if norm_type(d.base) != norm_type(ty):
        return _no(ctx, f"`{word}` holds {d.base}, not {ty} ({cite})", d.start)
    if d.start >= m.start:
        return _no(ctx, f"`{word}` is declared after the match starts ({cite})", d.start)
    size = Evaluator(ctx).text(d.dims[0])
    if not isinstance(size, int):
        return _no(ctx, f"the size [{d.dims[0]}] of `{word}` has no known value ({cite})",
                   d.start)
    v, why, _, _ = constant_of(ctx, e, runtime=True)
    if not isinstance(v, int) or not isinstance(n, int) or n <= 0:
        return _no(ctx, f"{quoted(e)} has no known integer value: {why}", e.start)
    need = -(-v // n)
    if size < need:
        return _no(ctx, f"`{word}` has {size} elements ({cite}), fewer than {quoted(e)} / {n} "
                   f"= {need}", d.start)
    for ident in in_span(nodes_of(unit, "identifier"), fn.start, fn.body_end):
        if text_of(src, ident) == word and not d.start <= ident.start_byte < d.end:
            return _no(ctx, f"`{word}` is also used at {unit.where(ident.start_byte)}: the "
                       "values it holds there would be overwritten", ident.start_byte)
    return _yes(f"`{word}` is a spare __shared__ {d.base} array of {size} >= {need} "
                f"elements ({cite})", d.start)


def _shared_array_decl(ctx: GuardContext, word: str, at: int) -> Any:
    """The declaration of the one-dimensional ``__shared__`` array ``word`` names (a name
    written at byte ``at``), declared once in the enclosing function, else the refusal."""
    fn = ctx.function
    unit = ctx.unit
    if fn is None:
        return _no(ctx, "the match is not inside a function")
    if not re.fullmatch(r"[A-Za-z_]\w*", word):
        return _no(ctx, f"`{word}` is not a plain name", at)
    decls = [d for d in declarations_named(unit, word) if fn.body_start <= d.start < fn.body_end]
    if len(decls) != 1:
        return _no(ctx, f"`{word}` is declared {len(decls)} times in `{fn.name}`, not once",
                   at)
    d = decls[0]
    if "__shared__" not in d.qualifiers or len(d.dims) != 1 or d.reference:
        return _no(ctx, f"`{word}` is not a one-dimensional __shared__ array "
                   f"({cited(unit, d.start, d.end)})", at)
    return d


@predicate("shared_array", _metavar("$R"), reads=("arguments", "declarations"))
def shared_array(ctx: GuardContext, r: Binding) -> Verdict:
    """$R names a one-dimensional ``__shared__`` array declared once in the enclosing
    function (``extern __shared__ T r[]`` included): what one warp stores in it, another
    reads after a barrier."""
    d = _shared_array_decl(ctx, r.text.strip(), r.start)
    if isinstance(d, Verdict):
        return d
    return _yes(f"`{r.text.strip()}` is a __shared__ {d.base} array "
                f"({cited(ctx.unit, d.start, d.end)})", r.start)


@predicate("shared_array_holds", _metavar("$R"), _metavar("$N"),
           reads=("arguments", "declarations", "spec"), pass_only=True)
def shared_array_holds(ctx: GuardContext, r: Binding, n: Binding) -> Verdict:
    """The array $R is ``shared_array``'s and holds at least $N elements, both known: its
    declared size (for an ``extern`` array, the spec's dynamic shared memory over its
    element's size) and $N's value. For simplifications: a rewrite may then use its first
    $N cells (a tree over a block of $N values). Pass-only (the inverse skill uses fewer cells
    of the array than the code it rewrites did)."""
    d = _shared_array_decl(ctx, r.text.strip(), r.start)
    if isinstance(d, Verdict):
        return d
    word = r.text.strip()
    cite = cited(ctx.unit, d.start, d.end)
    want, why, _, _ = constant_of(ctx, n, runtime=True)
    if not isinstance(want, int):
        return _no(ctx, f"{quoted(n)} has no known integer value: {why}", n.start)
    if "extern" in d.qualifiers or not d.dims[0].strip():
        elem = SIZES.get(norm_type(d.base))
        spec = spec_for(ctx)
        inner = kernel_spec(spec)
        dyn = inner.shared if inner is not None else None
        if not dyn or elem is None:
            return _no(ctx, f"`{word}` is an extern __shared__ array ({cite}) and the spec "
                       "gives no dynamic shared memory for it", r.start)
        try:
            size = evaluate_int(dyn, spec.env() if spec is not None else {}) // elem
        except Exception:
            return _no(ctx, f"the spec's dynamic shared memory `{dyn}` has no value", r.start)
        how = f"the spec's dynamic shared memory `{dyn}`"
    else:
        size = Evaluator(ctx).text(d.dims[0])
        if not isinstance(size, int):
            return _no(ctx, f"the size [{d.dims[0]}] of `{word}` has no known value ({cite})",
                       r.start)
        how = cite
    if size < want:
        return _no(ctx, f"`{word}` has {size} elements ({how}), fewer than {quoted(n)} = {want}",
                   r.start)
    return _yes(f"`{word}` is a __shared__ {d.base} array of {size} >= {want} elements ({how})",
                r.start)


@predicate("unused_before", _metavar("$X"), reads=("arguments", "position"))
def unused_before(ctx: GuardContext, x: Binding) -> Verdict:
    """The name $X bound is used nowhere in its function before the match but in its own
    declaration, the match is in no loop and the function has no ``goto``: no thread can
    still be reading or writing the array $X names when the match starts (a rewrite may then
    have one thread write a cell another thread's code used, with no barrier before)."""
    named = name_run_once(ctx, x, "use")
    if isinstance(named, Verdict):
        return named
    name, fn = named
    unit, src, m = ctx.unit, ctx.unit.source, ctx.match
    decls = [(d.start, d.end) for d in declarations_named(unit, name)
             if fn.body_start <= d.start < m.start]
    for ident in in_span(nodes_of(unit, "identifier"), fn.body_start, m.start):
        if text_of(src, ident) == name and not any(s <= ident.start_byte < e for s, e in decls):
            return _no(ctx, f"`{name}` is used before the match ({unit.where(ident.start_byte)})",
                       ident.start_byte)
    return _yes(f"`{name}` is not used before the match", x.start)
