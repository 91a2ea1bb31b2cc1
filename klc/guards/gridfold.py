"""Guard predicates for giving each thread several elements of a reduction whose operator is
not ``+`` (skills/grid_fold.rule, the inverse of passes/grid_fold.rule): ``grid_folded``,
``fold_identity``.

A maximum or a minimum is coarsened as a sum is (klc/guards/gridstride.py, whose check these
predicates run with another operator): the thread's one element ``m = e`` becomes a
grid-stride loop ``m = fmaxf(m, e)`` from the operator's identity, and the grid shrinks.
That keeps the kernel's results when

- every value the threads carry reaches memory through the operator alone: the block's
  combination (``fmaxf``, ``max``, ... of such values, a ``__shared__`` array, a shuffle, a
  ternary whose arms are such values or the identity), and a global ``atomicMax`` (or
  ``atomicMin``) of the block's value; the bits of a float known to be >= 0 (the element's
  term is ``fabsf``/``fabs``, the start is zero) order as the float does, so
  ``atomicMax((int*)p, __float_as_int(v))`` counts too;
- the start is the operator's identity on the values it meets (``fold_identity``): a thread
  with no element, or each thread's first element, then leaves the result as it was.
  ``-INFINITY``, ``INT_MIN`` for a maximum; ``INFINITY``, ``INT_MAX``, ``UINT_MAX`` for a
  minimum; zero for the maximum of absolute values. ``-FLT_MAX`` is refused (it would
  replace a maximum of ``-inf`` elements) except where the values are >= 0.

The operators are exact, associative and commutative (``fmaxf`` returns the other operand
of a NaN), so the order in which elements meet does not change the result, NaN inputs aside.
"""

from __future__ import annotations

import re
from typing import Any

from tree_sitter import Node

from klc.analysis.tree import binding_node, quoted, text_of
from klc.guards.gridstride import Fold, _walk, judge
from klc.guards.lanes import _ZERO
from klc.guards.registry import (
    ArgSpec,
    GuardContext,
    Verdict,
    _kernel_region,
    _no,
    _region_arg,
    _yes,
    predicate,
)
from klc.match import Binding

_MAX_CALLS = frozenset({"fmaxf", "fmax", "max"})
_MIN_CALLS = frozenset({"fminf", "fmin", "min"})
_MAX_IDENTITY = frozenset({"-INFINITY", "-CUDART_INF_F", "-HUGE_VALF", "-HUGE_VAL", "INT_MIN",
                           "LLONG_MIN", "-std::numeric_limits<float>::infinity()"})
_MIN_IDENTITY = frozenset({"INFINITY", "CUDART_INF_F", "HUGE_VALF", "HUGE_VAL", "INT_MAX",
                           "UINT_MAX", "LLONG_MAX", "0xffffffff", "0xffffffffu", "0xFFFFFFFF",
                           "0xFFFFFFFFu", "0xFFFFFFFFU", "std::numeric_limits<float>::infinity()"})
_ABS_CALLS = frozenset({"fabsf", "fabs"})


def _plain(text: str) -> str:
    """A literal's text without spaces, outer parentheses or a cast to float."""
    t = re.sub(r"\s+", "", text)
    while t.startswith("(") and t.endswith(")") and t.count("(") == t.count(")"):
        t = t[1:-1]
    return re.sub(r"^\((?:float|double|int|unsignedint)\)", "", t)


def _max_identity(text: str) -> bool:
    return _plain(text) in _MAX_IDENTITY


def _min_identity(text: str) -> bool:
    return _plain(text) in _MIN_IDENTITY


MAX = Fold("max", _MAX_CALLS, frozenset({"atomicMax"}), _max_identity, "maximum", "max")
MIN = Fold("min", _MIN_CALLS, frozenset({"atomicMin"}), _min_identity, "minimum", "min")
FOLDS = {**{c: MAX for c in _MAX_CALLS}, **{c: MIN for c in _MIN_CALLS}}


def fold_of(op: Any) -> Fold | None:
    """The fold an operator spelling names (``fmaxf`` -> MAX), a binding's text or a hole's
    value; None for any other."""
    text = op.text if isinstance(op, Binding) else str(op)
    return FOLDS.get(text.strip())


def _nonneg_term(node: Node | None, src: bytes) -> bool:
    if node is None:
        return False
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    if node.type == "conditional_expression":  # (c ? fabsf(x[i]) : 0.0f: each branch >= 0)
        sides = [node.child_by_field_name(f) for f in ("consequence", "alternative")]
        return all(s is not None and (_nonneg_term(s, src) or _ZERO.match(text_of(src, s)))
                   for s in sides)
    fn = node.child_by_field_name("function") if node.type == "call_expression" else None
    return fn is not None and text_of(src, fn).strip() in _ABS_CALLS


@predicate("fold_identity", ArgSpec("OP", frozenset({"metavar", "hole", "name"})),
           ArgSpec("$Z", frozenset({"metavar"})), ArgSpec("$E", frozenset({"metavar"})),
           reads=("arguments",))
def fold_identity(ctx: GuardContext, op: Any, z: Binding, e: Binding) -> Verdict:
    """$Z is the identity of the operator OP (``fmaxf``, ``fmax``, ``max``, ``fminf``,
    ``fmin``, ``min``: a metavariable's code, a hole's value or a name) on the values $E
    takes: ``-INFINITY`` or ``INT_MIN`` for a maximum, ``INFINITY``, ``INT_MAX`` or
    ``UINT_MAX`` for a minimum, and zero (or ``-FLT_MAX``) for a maximum of absolute values
    (``fabsf``/``fabs``): starting from it changes no result."""
    fold = fold_of(op)
    name = op.text.strip() if isinstance(op, Binding) else str(op)
    if fold is None:
        return _no(ctx, f"`{name}` is no maximum or minimum (fmaxf, fmax, max, fminf, fmin, "
                   "min)", z.start)
    if fold.identity(z.text):
        return _yes(f"`{z.text.strip()}` is the identity of {name}", z.start)
    node = binding_node(e)
    if fold is MAX and (_ZERO.match(z.text) or _plain(z.text) == "-FLT_MAX") and \
            _nonneg_term(node, ctx.unit.source):
        return _yes(f"`{z.text.strip()}` is the identity of {name} on {quoted(e)}, which is "
                    ">= 0", z.start)
    return _no(ctx, f"{quoted(z)} is not the identity of {name} on {quoted(e)} (a thread's "
               "start would join the result)", z.start)


@predicate("grid_folded", _region_arg(), ArgSpec("$ACC", frozenset({"metavar"})),
           ArgSpec("OP", frozenset({"metavar", "hole", "name"})),
           reads=("position", "arguments"))
def grid_folded(ctx: GuardContext, region: str, acc: Binding, op: Any) -> Verdict:
    """What ``grid_additive`` asks, for a maximum or a minimum: REGION is a kernel's one element per
    thread (``int i = ...; <declarations>; T acc = start; if (i < n) { acc = e; }``), and
    what the threads carry reaches memory only through OP (the operator's spellings, a
    ``__shared__`` array, a shuffle, a ternary with the identity, ``atomicMax`` or
    ``atomicMin`` of the block's value; the bits of a float >= 0), so that a grid-stride loop
    ``acc = OP(acc, e)`` with fewer blocks leaves the same results."""
    fold = fold_of(op)
    name = op.text.strip() if isinstance(op, Binding) else str(op)
    if fold is None:
        return _no(ctx, f"`{name}` is no maximum or minimum (fmaxf, fmax, max, fminf, fmin, "
                   "min)")
    node = binding_node(acc)
    if node is None or node.type != "identifier":
        return _no(ctx, f"{quoted(acc)} is not a plain name", acc.start)
    return judge(ctx, region, acc, fold)


def fold_operator_at(ctx: GuardContext, region: str = "anchor") -> str | None:
    """The spelling of the maximum or minimum that the kernel's code after REGION combines
    with (its first call among ``fmaxf``, ``fmax``, ``max``, ``fminf``, ``fmin``, ``min``),
    when every such call after it is of one operator: the value ``klc.guards.geometry``
    gives the hole of ``grid_folded(anchor, $ACC, ?op)`` at a site. None otherwise."""
    span = _kernel_region(ctx, region)
    if isinstance(span, Verdict):
        return None
    _, end, _, fn = span
    src = ctx.unit.source
    found: list[str] = []
    for n in _walk(fn.node):
        if n.type == "call_expression" and end <= n.start_byte < fn.body_end:
            callee = text_of(src, n.child_by_field_name("function") or n).strip()
            if callee in FOLDS:
                found.append(callee)
    if not found or len({FOLDS[c].name for c in found}) != 1:
        return None
    return found[0]
