"""Loops (``klc.analysis`` layer 6, over constants and writes): the loop a predicate is
about, the loop around a span, and the trip count of a counted ``for`` loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from klc.analysis.constants import COMPARISONS, Evaluator
from klc.analysis.tree import (
    Place,
    binding_node,
    nodes_of,
    operator_of,
    quoted,
    snippet,
    text_of,
    unparen,
)
from klc.analysis.writes import is_assigned
from klc.cuda.syntax import (
    F_ARGUMENT,
    F_BODY,
    F_CONDITION,
    F_DECLARATOR,
    F_INITIALIZER,
    F_LEFT,
    F_RIGHT,
    F_UPDATE,
    F_VALUE,
    LOOP_TYPES,
)

if TYPE_CHECKING:
    from klc.cuda.model import Function, Loop


def enclosing_loop(fn: Function, start: int, end: int) -> Loop | None:
    best = None
    for lp in fn.loops:
        if lp.start <= start and end <= lp.end and (lp.start, lp.end) != (start, end) \
                and (best is None or lp.start >= best.start):
            best = lp
    return best


def loop_node(ctx: Place, what: Any) -> tuple[Node | None, str]:
    """The loop statement a predicate is about: the loop a metavariable bound (or whose
    header holds it), ``anchor`` (the match itself), or ``loop`` (the innermost around it)."""
    unit = ctx.unit
    loops = nodes_of(unit, *LOOP_TYPES)
    if isinstance(what, str):
        if what == "anchor":
            for n in ctx.match.nodes:
                if n.type in LOOP_TYPES:
                    return n, ""
            inside = [n for n in loops if ctx.match.start <= n.start_byte
                      and n.end_byte <= ctx.match.end]
            return (inside[0], "") if inside else (None, "the anchor holds no loop")
        fn = ctx.function
        lp = enclosing_loop(fn, ctx.match.start, ctx.match.end) if fn is not None else None
        if lp is None:
            return None, f"the match ({unit.where(ctx.match.start)}) is not inside a loop"
        return next((n for n in loops if n.start_byte == lp.start), None), ""
    node = binding_node(what)
    cur = node
    while cur is not None:
        if cur.type in LOOP_TYPES:
            body = cur.child_by_field_id(F_BODY)
            if cur == node or body is None or not (body.start_byte <= node.start_byte
                                                   < body.end_byte):
                return cur, ""
            break
        cur = cur.parent
    return None, f"{quoted(what)} ({unit.where(what.start)}) is neither a loop nor in a loop header"


_LOOP_WORDS = {"for_range_loop": "range-based for loop", "while_statement": "while loop",
               "do_statement": "do-while loop"}


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}


def loop_header(src: bytes, loop: Node) -> tuple[str, Node, Node, str] | str:
    """(variable, start, bound, comparison) of a ``for`` header that initialises one variable
    (``int v = lo``, or ``v = lo``) and compares it (``v <= hi``; ``hi >= v`` read as
    ``v <= hi``), else why not."""
    init = loop.child_by_field_id(F_INITIALIZER)
    cond = loop.child_by_field_id(F_CONDITION)
    if init is None or cond is None:
        return "the loop header lacks an initializer or a condition"
    var, start_node = None, None
    if init.type == "declaration":
        d = init.child_by_field_id(F_DECLARATOR)
        if d is not None and d.type == "init_declarator":
            name = d.child_by_field_id(F_DECLARATOR)
            var, start_node = (text_of(src, name) if name is not None else None,
                               d.child_by_field_id(F_VALUE))
    elif init.type == "assignment_expression":
        left = init.child_by_field_id(F_LEFT)
        var, start_node = (text_of(src, left) if left is not None else None,
                           init.child_by_field_id(F_RIGHT))
    if var is None or start_node is None:
        return f"`{snippet(text_of(src, init))}` does not initialise one variable"
    cond = unparen(cond)
    if cond.type != "binary_expression":
        return f"the condition `{snippet(text_of(src, cond))}` is not a comparison"
    op = operator_of(cond)
    left, right = cond.child_by_field_id(F_LEFT), cond.child_by_field_id(F_RIGHT)
    if left is not None and right is not None and text_of(src, unparen(right)) == var:
        left, right, op = right, left, _FLIP.get(op, op)
    if left is None or right is None or text_of(src, unparen(left)) != var or op not in _FLIP:
        return f"the condition `{snippet(text_of(src, cond))}` does not compare `{var}`"
    return var, start_node, right, op


def trip_count(ctx: Place, loop: Node) -> tuple[int | None, str | Callable[[], str]]:
    """The number of iterations of a counted ``for`` loop, or None and why not (a reason
    that cites a declaration is a function that writes it, called when it is read)."""
    src = ctx.unit.source
    if loop.type != "for_statement":
        return None, (f"a {_LOOP_WORDS.get(loop.type, loop.type)} has no counted "
                      "header")
    init = loop.child_by_field_id(F_INITIALIZER)
    cond = loop.child_by_field_id(F_CONDITION)
    update = loop.child_by_field_id(F_UPDATE)
    if init is None or cond is None or update is None:
        return None, "the loop header lacks an initializer, a condition or an update"
    header = loop_header(src, loop)
    if isinstance(header, str):
        return None, header
    var, start_node, right, op = header
    ev = Evaluator(ctx)
    lo = ev.node(start_node, src)
    if not isinstance(lo, int):
        return None, lambda: (f"the start `{snippet(text_of(src, start_node))}` is not "
                              f"constant: {ev.why}")
    hi = ev.node(right, src)
    if not isinstance(hi, int):
        return None, lambda: (f"the bound `{snippet(text_of(src, right))}` is not constant: "
                              f"{ev.why}")
    step = _step(update, src, var, ev)
    if step is None:
        return None, f"the update `{snippet(text_of(src, update))}` is not a constant step"
    kind, k = step
    if _assigned_in_body(ctx, loop, var):
        return None, f"`{var}` is also assigned inside the loop body"
    count = _iterations(lo, op, hi, kind, k)
    if count is None or count > MAX_TRIPS:
        return None, "the loop runs more than a million iterations (or forever)"
    return count, ""


MAX_TRIPS = 1 << 20  # a trip count above this is not one a rule can use


def _iterations(lo: int, op: str, hi: int, kind: str, k: int) -> int | None:
    """How many times ``for (i = lo; i op hi; i = i kind k)`` runs its body: in closed form
    for a constant step (``+``), counted for a multiplying or shifting one (a few dozen
    iterations before it passes any bound, or stays put); None when it never ends (or runs
    over ``MAX_TRIPS``: then any number above it)."""
    holds = COMPARISONS[op]
    if not holds(lo, hi):
        return 0
    if kind in (">>", "<<") and k == 0:
        return None  # (i stays where it is)
    if kind == "+":
        if op == "!=":
            gap = hi - lo
            return gap // k if k != 0 and gap % k == 0 and gap // k > 0 else None
        if (k > 0) != (op in ("<", "<=")) or k == 0:
            return None  # (moves away from the bound, or stays)
        span = abs(hi - lo) + (0 if op in ("<", ">") else 1)  # the values that hold
        return -(-span // abs(k))
    if kind in (">>", "<<") and k < 0:
        return None  # (a negative shift: not a step C defines)
    count, i = 0, lo
    while holds(i, hi):
        count += 1
        if count > MAX_TRIPS:
            return None
        i = i * k if kind == "*" else i >> k if kind == ">>" else i << k
    return count


def _step(update: Node, src: bytes, var: str, ev: Evaluator) -> tuple[str, int] | None:
    update = unparen(update)
    if update.type == "update_expression":
        arg = update.child_by_field_id(F_ARGUMENT)
        if arg is None or text_of(src, arg) != var:
            return None
        return ("+", 1) if "++" in text_of(src, update) else ("+", -1)
    if update.type == "assignment_expression":
        left, right = update.child_by_field_id(F_LEFT), update.child_by_field_id(F_RIGHT)
        if left is None or right is None or text_of(src, left) != var:
            return None
        k = ev.node(right, src)
        if not isinstance(k, int):
            return None
        op = operator_of(update)
        table = {"+=": ("+", k), "-=": ("+", -k), "*=": ("*", k), ">>=": (">>", k),
                 "<<=": ("<<", k)}
        if op in table and not (op == "*=" and k in (0, 1)) and not (op == "+=" and k == 0):
            return table[op]
    return None


def _assigned_in_body(ctx: Place, loop: Node, var: str) -> bool:
    body = loop.child_by_field_id(F_BODY)
    return body is not None and is_assigned(ctx, var, body.start_byte, body.end_byte)
