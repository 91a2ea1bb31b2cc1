"""Guard predicates about what a name is: a parameter, an identifier, its qualifiers
(``is_const``, ``is_restrict``), and whether two bindings are the same code."""

from __future__ import annotations

from klc.analysis.declarations import lookup
from klc.analysis.tree import binding_node, cited, leaf_texts, quoted, text_of, unparen
from klc.analysis.types import type_fact
from klc.guards.registry import (
    ArgSpec,
    GuardContext,
    Verdict,
    _metavar,
    _no,
    _unknown,
    _yes,
    predicate,
)
from klc.match import Binding


def _qualifier(ctx: GuardContext, x: Binding, what: str) -> Verdict:
    node = binding_node(x)
    decl = None
    if node is not None and unparen(node).type == "identifier":
        decl = lookup(ctx, text_of(ctx.unit.source, unparen(node)), x.start)
    if decl is not None:
        has = decl.const if what == "const" else decl.restrict
        spelled = "__restrict__" if what == "restrict" else "const"
        if has:
            return _yes(lambda: f"{quoted(x)} is {spelled}", x.start)
        unit = ctx.unit  # (the reason written when it is read)
        return _no(ctx, lambda: f"{quoted(x)} is not {spelled} "
                   f"({cited(unit, decl.start, decl.end)})", decl.start)
    fact, why = type_fact(ctx, x)
    if fact is None:
        return _unknown(ctx, f"{quoted(x)} is not a declared variable and {why}", x.start)
    pointee = fact.pointee if fact.pointee is not None else fact
    has = pointee.const if what == "const" else fact.restrict
    if has:
        return _yes(f"{quoted(x)} is {what} (clang)", x.start)
    return _no(ctx, f"{quoted(x)} is not {what}: its type is {fact.spelling} "
               f"({ctx.unit.where(x.start)})", x.start)


@predicate("is_const", _metavar(), reads=("declarations",), per_declaration=True)
def is_const(ctx: GuardContext, x: Binding) -> Verdict:
    """What $X points at (or $X itself, if not a pointer) is const: the kernel promises not
    to write it."""
    return _qualifier(ctx, x, "const")


@predicate("is_restrict", _metavar(), reads=("declarations",), per_declaration=True)
def is_restrict(ctx: GuardContext, x: Binding) -> Verdict:
    """$X is declared __restrict__: the compiler, and so klc, may assume no other pointer
    reaches its memory."""
    return _qualifier(ctx, x, "restrict")


@predicate("is_identifier", _metavar(), reads=("arguments", "declarations"), per_declaration=True)
def is_identifier(ctx: GuardContext, x: Binding) -> Verdict:
    """$X bound a plain identifier (a variable name), not a larger expression."""
    node = binding_node(x)
    if node is not None and len(x.nodes) == 1 and node.type in ("identifier",
                                                                 "field_identifier"):
        return _yes(f"{quoted(x)} is an identifier", x.start)
    kind = node.type.replace("_", " ") if node is not None else "a sequence"
    return _no(ctx, f"{quoted(x)} is not an identifier but {kind} ({ctx.unit.where(x.start)})",
               x.start)


@predicate("is_kernel_param", _metavar(), reads=("declarations",), per_declaration=True)
def is_kernel_param(ctx: GuardContext, x: Binding) -> Verdict:
    """$X is a parameter of the enclosing function, used directly (not a local copy)."""
    node = binding_node(x)
    fn = ctx.function
    if node is None or unparen(node).type != "identifier" or fn is None:
        return _no(ctx, f"{quoted(x)} is not a parameter name ({ctx.unit.where(x.start)})",
                   x.start)
    decl = lookup(ctx, text_of(ctx.unit.source, unparen(node)), x.start)
    if decl is not None and decl.origin == "parameter":
        return _yes(lambda: f"{quoted(x)} is a parameter of {fn.name}", x.start)
    unit = ctx.unit  # (the reason written when it is read)
    return _no(ctx, lambda: f"{quoted(x)} is not a parameter of {fn.name}" + (
        f" (declared at {cited(unit, decl.start, decl.end)})" if decl else ""), x.start)


@predicate("same_text", ArgSpec("$A", frozenset({"metavar", "sequence"})),
           ArgSpec("$B", frozenset({"metavar", "sequence"})), reads=("arguments",))
def same_text(ctx: GuardContext, a: Binding, b: Binding) -> Verdict:
    """$A and $B bound the same code, token for token (spacing and comments aside)."""
    src = ctx.unit.source
    ta = [t for n in a.nodes for t in leaf_texts(n, src)] or a.text.split()
    tb = [t for n in b.nodes for t in leaf_texts(n, src)] or b.text.split()
    if ta == tb:
        return _yes(f"{quoted(a)} and {quoted(b)} are the same code", a.start)
    return _no(ctx, f"{quoted(a)} ({ctx.unit.where(a.start)}) and {quoted(b)} "
               f"({ctx.unit.where(b.start)}) differ", a.start)
