"""Spec expressions: shapes, grid, block, bytes, flops and scalar values.

Evaluated by the one safe evaluator (``klc.safe_eval``) in its ``SPEC`` dialect: numbers, the
spec's names, ``+ - * / // % **``, shifts, ``min``, ``max``, ``ceil_div``, ``abs``. Never
``eval``: a spec is input, and may come from anyone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from klc import safe_eval
from klc.safe_eval import ExprError, Number

__all__ = ["ExprError", "Number", "element_count", "evaluate", "evaluate_int", "expr_names",
           "launch_dims", "parse_expr"]


def parse_expr(expr: str) -> None:
    """Refuse (ExprError) an expression the evaluator would refuse, before any value is known."""
    safe_eval.parse(expr, safe_eval.SPEC)


def expr_names(expr: str) -> frozenset[str]:
    """The free names an expression uses (function names excluded); ExprError if unparsable."""
    return safe_eval.names(expr, safe_eval.SPEC)


def evaluate(expr: str | Number, env: Mapping[str, Number]) -> Number:
    """Evaluate a spec expression with the names in ``env``; only arithmetic is allowed.

    ``/`` is true division (use ``//`` or ``ceil_div`` for integers), as in Python, so that a
    byte count like ``n * 4 / 2`` is what it says.
    """
    value: Number = safe_eval.evaluate(expr, env, safe_eval.SPEC)
    return value


def evaluate_int(expr: str | Number, env: Mapping[str, Number]) -> int:
    """Evaluate an expression that must be a whole number (a shape, a grid dimension)."""
    v = evaluate(expr, env)
    if isinstance(v, float):
        if not math.isfinite(v) or not v.is_integer():
            raise ExprError(f"{expr!r} = {v} is not a whole number (use // or ceil_div)")
        v = int(v)
    return v


def launch_dims(exprs: tuple[str, ...], env: Mapping[str, Number]) -> tuple[int, int, int]:
    """Evaluate grid or block expressions to a 3-tuple (missing axes are 1)."""
    vals = [evaluate_int(e, env) for e in exprs]
    return tuple(vals + [1] * (3 - len(vals)))  # type: ignore[return-value]


def element_count(shape: tuple[str, ...], env: Mapping[str, Number]) -> int:
    return math.prod(evaluate_int(e, env) for e in shape)
