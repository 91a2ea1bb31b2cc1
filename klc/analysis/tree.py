"""The bottom of ``klc.analysis``: what every analysis shares.

``Place`` is where an analysis looks (a match in a unit, the kernel spec, whether libclang
may be asked; ``klc.guards.GuardContext`` is one). The rest: per-unit memos (tree-sitter
queries run once per unit, not once per guard), nodes inside a span found by bisection,
citing code in reasons, and small tree helpers (parentheses, casts, the variables a pointer
expression is based on)."""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from tree_sitter import Node, Query, QueryCursor

from klc.cuda.syntax import (
    F_ARGUMENT,
    F_ARGUMENTS,
    F_FUNCTION,
    F_NAME,
    F_OPERATOR,
    F_TYPE,
    F_VALUE,
    LANGUAGE,
)

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit
    from klc.match.model import Binding, Match
    from klc.spec import Bound, Spec


class Place(Protocol):
    """Where an analysis looks: a match in a unit, the kernel spec (a ``klc.spec.Spec``, or
    a ``Bound`` one), and whether libclang may be asked (``klc list --tree-only``: no)."""

    @property
    def match(self) -> Match: ...

    @property
    def unit(self) -> Unit: ...

    @property
    def function(self) -> Function | None: ...

    @property
    def spec(self) -> Spec | Bound | None: ...

    @property
    def clang(self) -> bool: ...


def _memo(unit: Unit, key: str, build: Callable[[], Any]) -> Any:
    store = unit.memo
    found = store.get(key, _MISSING)
    if found is _MISSING:
        found = store[key] = build()
    return found


_MISSING = object()


def _nodes(unit: Unit, *types: str) -> list[Node]:
    return _memo(unit, "nodes:" + "|".join(types), lambda: list(unit.nodes_of_type(*types)))


def _in(nodes: list[Node], start: int, end: int) -> Iterator[Node]:
    """The nodes (in source order) that lie inside [start, end): found by bisection."""
    i = bisect.bisect_left(nodes, start, key=_start_byte)
    n = len(nodes)
    while i < n:
        node = nodes[i]
        if node.start_byte >= end:
            return
        if node.end_byte <= end:
            yield node
        i += 1


_start_byte = operator.attrgetter("start_byte")


def _snippet(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _cite(unit: Unit, start: int, end: int) -> str:
    """``file:line:col: code`` for a reason's parenthesis."""
    return f"{unit.where(start)}: {_snippet(unit.text(start, end))}"


def _code(b: Binding) -> str:
    return f"`{_snippet(b.text, 40)}`"


def _facts(ctx: Place) -> tuple[Any, str]:
    """libclang facts, or None and why not: facts are optional, so guards fail closed."""
    if not ctx.clang:
        return None, "libclang facts not consulted (tree-sitter facts only)"
    try:
        return ctx.unit.facts, ""
    except ImportError:
        return None, "libclang facts unavailable"
    except Exception as e:  # a missing shared library, a clang crash: same answer
        return None, f"libclang facts unavailable ({e})"


def _unwrap(node: Node) -> Node:
    """Strip parentheses: ``((x))`` is ``x``."""
    while node.type == "parenthesized_expression" and node.named_child_count:
        node = node.named_children[0]
    return node


def _cast_target(node: Node, src: bytes) -> tuple[Node | None, Node | None]:
    """For a cast ``(T)e`` or ``xxx_cast<T>(e)``: (type node, operand); else (None, None)."""
    if node.type == "cast_expression":
        return node.child_by_field_id(F_TYPE), node.child_by_field_id(F_VALUE)
    if node.type == "call_expression":
        fn = node.child_by_field_id(F_FUNCTION)
        if fn is not None and fn.type == "template_function":
            name = fn.child_by_field_id(F_NAME)
            if name is not None and _text(src, name) in ("reinterpret_cast", "static_cast",
                                                        "const_cast"):
                targs = fn.child_by_field_id(F_ARGUMENTS)
                args = node.child_by_field_id(F_ARGUMENTS)
                ty = targs.named_children[0] if targs is not None and targs.named_children \
                    else None
                val = args.named_children[0] if args is not None and args.named_children \
                    else None
                return ty, val
    return None, None


def _text(src: bytes, node: Node) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _operator(node: Node) -> str:
    op = node.child_by_field_id(F_OPERATOR)
    return op.type if op is not None else ""


def _roots(node: Node, src: bytes) -> set[str]:
    """The variables a pointer-valued expression is based on: ``x`` for ``x[i]``,
    ``*(x + 4)``, ``reinterpret_cast<float4*>(x)[i].y``, ``&x[i]``."""
    node = _unwrap(node)
    t = node.type
    if t == "identifier":
        return {_text(src, node)}
    if t in ("subscript_expression", "pointer_expression", "field_expression",
             "update_expression"):  # (*y++ = v: through y)
        arg = node.child_by_field_id(F_ARGUMENT)
        return _roots(arg, src) if arg is not None else set()
    if t == "assignment_expression":  # *(p += 4) = v: through p
        left = node.child_by_field_name("left")
        return _roots(left, src) if left is not None else set()
    if t == "binary_expression" and _operator(node) in ("+", "-"):
        out: set[str] = set()
        for side in ("left", "right"):
            n = node.child_by_field_name(side)
            if n is not None:
                out |= _roots(n, src)
        return out
    if t == "conditional_expression":
        out = set()
        for side in ("consequence", "alternative"):
            n = node.child_by_field_name(side)
            if n is not None:
                out |= _roots(n, src)
        return out
    _, operand = _cast_target(node, src)
    return _roots(operand, src) if operand is not None else set()


def _identifiers(node: Node, src: bytes) -> list[tuple[str, Node]]:
    """The identifiers in ``node`` (itself, or those under it; not field names), in source
    order, with their text: one query run in C, not a Python walk over every node."""
    if node.type == "identifier":
        return [(_text(src, node), node)]
    if node.child_count == 0:
        return []
    found = QueryCursor(_IDENTIFIER_QUERY).captures(node).get("id")
    if not found:
        return []
    if len(found) > 1:
        found.sort(key=_start_byte)  # (captures need not come in source order)
    return [(src[n.start_byte:n.end_byte].decode("utf-8", "replace"), n) for n in found]


_IDENTIFIER_QUERY = Query(LANGUAGE, "(identifier) @id")


def _leaves(node: Node, src: bytes) -> list[str]:
    if node.child_count == 0:
        return [] if node.type == "comment" else [_text(src, node)]
    out: list[str] = []
    for c in node.children:
        out += _leaves(c, src)
    return out


def _binding_node(b: Binding) -> Node | None:
    return b.node if b.node is not None else (b.nodes[0] if b.nodes else None)


# --------------------------------------------------------------------------------------
# Type predicates


def _leaves_in(unit: Unit, start: int, end: int) -> list[str]:
    """The tokens of the code in [start, end), comments left out."""
    node = unit.root.descendant_for_byte_range(start, end)
    out: list[str] = []

    def walk(n: Node) -> None:
        if n.end_byte <= start or n.start_byte >= end:
            return
        if n.child_count == 0:
            if n.type != "comment":
                out.append(_text(unit.source, n))
            return
        for c in n.children:
            walk(c)

    if node is not None:
        walk(node)
    return out


def _base_identifier(node: Node) -> Node | None:
    """The variable an lvalue writes: ``x`` of ``x``, ``x[i]``, ``x.f``, ``(x)``; None for
    a write through a pointer expression (``*p``, ``p[i]`` is reported as ``p``)."""
    while node is not None:
        if node.type == "identifier":
            return node
        if node.type in ("subscript_expression", "field_expression"):
            node = node.child_by_field_id(F_ARGUMENT) or node.named_children[0]
        elif node.type == "parenthesized_expression":
            node = node.named_children[0] if node.named_children else None
        else:
            return None
    return None
