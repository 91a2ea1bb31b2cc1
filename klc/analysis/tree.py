"""The bottom of ``klc.analysis``: what every analysis shares.

``Place`` is where an analysis looks (a match in a unit, the kernel spec, whether libclang
may be asked; ``klc.guards.GuardContext`` is one). The rest: per-unit memos (tree-sitter
queries run once per unit, not once per guard), nodes inside a span found by bisection,
citing code in reasons, and small tree helpers (parentheses, casts, the variables a pointer
expression is based on)."""

from __future__ import annotations

import bisect
import operator
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from tree_sitter import Node, QueryCursor

from klc.cuda.syntax import (
    F_ARGUMENT,
    F_ARGUMENTS,
    F_FUNCTION,
    F_NAME,
    F_OPERATOR,
    F_TYPE,
    F_VALUE,
    type_query,
    word_occurrences,
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


def unit_memo(unit: Unit, key: str, build: Callable[[], Any]) -> Any:
    store = unit.memo
    found = store.get(key, _MISSING)
    if found is _MISSING:
        found = store[key] = build()
    return found


_MISSING = object()


def nodes_of(unit: Unit, *types: str) -> list[Node]:
    return unit_memo(unit, "nodes:" + "|".join(types), lambda: list(unit.nodes_of_type(*types)))


def in_span(nodes: list[Node], start: int, end: int) -> Iterator[Node]:
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


def nodes_within(unit: Unit, types: frozenset[str], start: int, end: int) -> list[Node]:
    """The nodes of ``types`` that lie inside [start, end), in source order: what ``in_span``
    gives of ``nodes_of``'s list of them, found by a walk of the smallest subtree that holds
    the span, not a query over the whole unit (a type the unit's index does not hold costs
    a query compile and a run over every node, for the few nodes of one expression)."""
    if end <= start:
        return []
    top = unit.root.descendant_for_byte_range(start, end)
    while top is not None and (top.start_byte > start or top.end_byte < end):
        top = top.parent  # (a range tree-sitter reads as ending inside a token)
    if top is None:
        return []
    while (up := top.parent) is not None and up.start_byte == top.start_byte \
            and up.end_byte == top.end_byte:
        top = up  # (a node around it with the same bytes lies inside too)
    return _walked(top, types, start, end)


def _walked(top: Node, types: frozenset[str], start: int, end: int) -> list[Node]:
    """The nodes of ``types`` under ``top`` (itself included) that lie inside [start, end),
    in source order: the node, then its children in order (by start, the longer first)."""
    out: list[Node] = []
    stack = [top]
    while stack:
        node = stack.pop()
        s, e = node.start_byte, node.end_byte
        if s >= end or e < start or (e == start and s < e):
            continue  # (apart from the span: nothing under it lies inside)
        if node.type in types and start <= s and e <= end:
            out.append(node)
        if node.child_count:
            stack.extend(reversed(node.children))
    return out


def identifiers_named(unit: Unit, word: str, start: int, end: int) -> Iterator[int]:
    """Where an identifier spelled ``word`` starts inside [start, end), in source order:
    each place the word stands alone in the text where the tree has an identifier of that
    span (not a comment, a string, a field name or a longer token), found by scans of the
    bytes instead of a walk over every identifier of the span."""
    if not word:
        return
    at_node = unit.root.descendant_for_byte_range
    size = len(word.encode())
    for at in word_occurrences(unit.source, word.encode(), start, end):
        node = at_node(at, at + size)
        if node is not None and node.type == "identifier" and node.start_byte == at \
                and node.end_byte == at + size:
            yield at


def snippet(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def cited(unit: Unit, start: int, end: int) -> str:
    """``file:line:col: code`` for a reason's parenthesis."""
    return f"{unit.where(start)}: {snippet(unit.text(start, end))}"


def quoted(b: Binding) -> str:
    return f"`{snippet(b.text, 40)}`"


def clang_facts(ctx: Place) -> tuple[Any, str]:
    """libclang facts, or None and why not: facts are optional, so guards fail closed."""
    if not ctx.clang:
        return None, "libclang facts not consulted (tree-sitter facts only)"
    try:
        return ctx.unit.facts, ""
    except ImportError:
        return None, "libclang facts unavailable"
    except Exception as e:  # a missing shared library, a clang crash: same answer
        return None, f"libclang facts unavailable ({e})"


def unparen(node: Node) -> Node:
    """Strip parentheses: ``((x))`` is ``x``."""
    while node.type == "parenthesized_expression" and node.named_child_count:
        node = node.named_children[0]
    return node


def cast_target(node: Node, src: bytes) -> tuple[Node | None, Node | None]:
    """For a cast ``(T)e`` or ``xxx_cast<T>(e)``: (type node, operand); else (None, None)."""
    if node.type == "cast_expression":
        return node.child_by_field_id(F_TYPE), node.child_by_field_id(F_VALUE)
    if node.type == "call_expression":
        fn = node.child_by_field_id(F_FUNCTION)
        if fn is not None and fn.type == "template_function":
            name = fn.child_by_field_id(F_NAME)
            if name is not None and text_of(src, name) in ("reinterpret_cast", "static_cast",
                                                        "const_cast"):
                targs = fn.child_by_field_id(F_ARGUMENTS)
                args = node.child_by_field_id(F_ARGUMENTS)
                ty = targs.named_children[0] if targs is not None and targs.named_children \
                    else None
                val = args.named_children[0] if args is not None and args.named_children \
                    else None
                return ty, val
    return None, None


def text_of(src: bytes, node: Node) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def operator_of(node: Node) -> str:
    op = node.child_by_field_id(F_OPERATOR)
    return op.type if op is not None else ""


def pointer_roots(node: Node, src: bytes) -> set[str]:
    """The variables a pointer-valued expression is based on: ``x`` for ``x[i]``,
    ``*(x + 4)``, ``reinterpret_cast<float4*>(x)[i].y``, ``&x[i]``."""
    node = unparen(node)
    t = node.type
    if t == "identifier":
        return {text_of(src, node)}
    if t in ("subscript_expression", "pointer_expression", "field_expression",
             "update_expression"):  # (*y++ = v: through y)
        arg = node.child_by_field_id(F_ARGUMENT)
        return pointer_roots(arg, src) if arg is not None else set()
    if t == "assignment_expression":  # *(p += 4) = v: through p
        left = node.child_by_field_name("left")
        return pointer_roots(left, src) if left is not None else set()
    if t == "binary_expression" and operator_of(node) in ("+", "-"):
        out: set[str] = set()
        for side in ("left", "right"):
            n = node.child_by_field_name(side)
            if n is not None:
                out |= pointer_roots(n, src)
        return out
    if t == "conditional_expression":
        out = set()
        for side in ("consequence", "alternative"):
            n = node.child_by_field_name(side)
            if n is not None:
                out |= pointer_roots(n, src)
        return out
    _, operand = cast_target(node, src)
    return pointer_roots(operand, src) if operand is not None else set()


def names_in(node: Node, src: bytes) -> list[tuple[str, Node]]:
    """The identifiers in ``node`` (itself, or those under it; not field names), in source
    order, with their text: a walk of a small node (most are an expression of a few nodes),
    one query run in C over a large one (a query's compile, once per process, costs more
    than the walks of a file's small nodes)."""
    if node.type == "identifier":
        return [(text_of(src, node), node)]
    if node.child_count == 0:
        return []
    if node.descendant_count <= _WALKED:
        found = _walked(node, _IDENTIFIER, node.start_byte, node.end_byte + 1)  # (all of it)
    else:
        found = QueryCursor(type_query(("identifier",))).captures(node).get("identifier")
    if not found:
        return []
    if len(found) > 1:
        found.sort(key=_start_byte)  # (captures need not come in source order)
    return [(src[n.start_byte:n.end_byte].decode("utf-8", "replace"), n) for n in found]


_WALKED = 256  # nodes: below this, ``names_in`` walks
_IDENTIFIER = frozenset({"identifier"})


def leaf_texts(node: Node, src: bytes) -> list[str]:
    if node.child_count == 0:
        return [] if node.type == "comment" else [text_of(src, node)]
    out: list[str] = []
    for c in node.children:
        out += leaf_texts(c, src)
    return out


def binding_node(b: Binding) -> Node | None:
    return b.node if b.node is not None else (b.nodes[0] if b.nodes else None)


# --------------------------------------------------------------------------------------
# Type predicates


def leaves_in(unit: Unit, start: int, end: int) -> list[str]:
    """The tokens of the code in [start, end), comments left out."""
    node = unit.root.descendant_for_byte_range(start, end)
    out: list[str] = []
    # (a walk by a stack: a closure that calls itself is a cycle holding the unit)
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        if n.end_byte <= start or n.start_byte >= end:
            continue
        if n.child_count == 0:
            if n.type != "comment":
                out.append(text_of(unit.source, n))
            continue
        stack.extend(reversed(n.children))
    return out


def base_identifier(node: Node) -> Node | None:
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


def word_matches(words: re.Pattern[bytes], src: bytes, start: int, end: int
                  ) -> Iterator[re.Match[bytes]]:
    """``words.finditer(src, start, end)``, for a pattern that starts with words
    (``\\b(blockIdx|gridDim)...``): tried only where one of them stands, found by scans of
    the bytes (a regular expression tried at every byte of a large kernel costs ten times
    more)."""
    leading = _leading_words(words.pattern)
    if leading is None:
        yield from words.finditer(src, start, end)
        return
    places = []
    for word in leading:
        at = src.find(word, start, end)
        while at >= 0:
            places.append(at)
            at = src.find(word, at + 1, end)
    places.sort()
    after = start  # (matches do not overlap, as finditer's)
    for at in places:
        if at < after:
            continue
        m = words.match(src, at, end)
        if m is not None:
            yield m
            after = max(m.end(), at + 1)


def first_word(words: re.Pattern[bytes], src: bytes, start: int, end: int) -> bool:
    """Whether ``words`` matches somewhere in [start, end) (``word_matches``)."""
    return next(word_matches(words, src, start, end), None) is not None


@lru_cache(maxsize=64)
def _leading_words(pattern: bytes) -> tuple[bytes, ...] | None:
    """The words a match of ``\\b(w1...|w2...)...`` starts with (each alternative's leading
    word characters), or None for a pattern of another shape."""
    m = re.fullmatch(rb"\\b\(([^()]*)\).*", pattern, re.S)
    if m is None:
        return None
    out = []
    for alternative in m.group(1).split(b"|"):
        word = re.match(rb"\w+", alternative)
        if word is None or (len(word.group(0)) < len(alternative) and alternative[
                len(word.group(0)):len(word.group(0)) + 1] in b"?*{"):
            return None  # (a quantifier on the last letter: that letter is optional)
        out.append(word.group(0))
    return tuple(out)
