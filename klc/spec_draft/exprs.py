"""Spec expressions as text for ``klc spec init``: evaluating a candidate (a value or
nothing), substituting names, finding the simplest shape equal to computed sizes, and
writing the result tidily (parentheses only where needed, YAML quotes only where needed)."""

from __future__ import annotations

import ast
import itertools
import re

from klc import safe_eval
from klc.spec.launch import balanced


def evaluate_or_none(expr: str, env: dict[str, int]) -> int | None:
    """The whole value of a spec expression, or None where it has none (an unknown name,
    a division by zero, a value out of range)."""
    try:
        v = safe_eval.evaluate(expr, env, safe_eval.SPEC)
    except safe_eval.ExprError:
        return None
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):
        return None


def subst(expr: str, values: dict[str, str]) -> str:
    for name in sorted(values, key=len, reverse=True):
        expr = re.sub(rf"\b{re.escape(name)}\b", f"({values[name]})", expr)
    return expr


def _monomials(names: list[str], degree: int = 4) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [()]
    for d in range(1, degree + 1):
        out.extend(itertools.combinations_with_replacement(names, d))
    return out


def _product(m: tuple[str, ...], env: dict[str, int]) -> int:
    p = 1
    for n in m:
        p *= env[n]
    return p


def clean_shape(targets: list[tuple[dict[str, int], int]], names: list[str]
                 ) -> list[str] | None:
    """The simplest shape (a list of size names, a coefficient, or one expression like
    ``n - k + 1``) equal to every target."""
    if len({t for _, t in targets}) == 1 and targets:
        return [str(targets[0][1])]
    monos = _monomials(names)
    for m in monos[1:]:
        for c in (1, 2, 3, 4):
            if all(c * _product(m, env) == t for env, t in targets):
                dims = list(m)
                if c != 1:
                    dims[-1] = f"{c} * {dims[-1]}"
                return dims
    for m in monos[1:]:
        for d in (-3, -2, -1, 1, 2, 3):
            if all(_product(m, env) + d == t for env, t in targets):
                return [" * ".join(m) + (f" + {d}" if d > 0 else f" - {-d}")]
    for m1, m2 in itertools.product(monos[1:], monos[1:]):
        for sign in (1, -1):
            for d in range(-3, 4):
                if all(_product(m1, env) + sign * _product(m2, env) + d == t
                       for env, t in targets):
                    text = " * ".join(m1)
                    if m2:
                        text += (" + " if sign > 0 else " - ") + " * ".join(m2)
                    if d:
                        text += f" + {d}" if d > 0 else f" - {-d}"
                    return [text]
    return None



def resolve_free(expr: str, ranges: dict[str, tuple[str, str]], env: dict[str, int]
                  ) -> str:
    """A range bound that mentions another free variable takes that variable's lowest
    value (``c`` from ``tid`` to ``cols``: ``tid`` at 0)."""
    for _ in range(5):
        names = [v for v in ranges if v not in env and re.search(rf"\b{re.escape(v)}\b", expr)]
        if not names:
            break
        expr = subst(expr, {v: ranges[v][0] for v in names})
    expr = re.sub(r"\b_(threadIdx|blockIdx)_[xyz]\b", "0", expr)
    return expr



def tidy(expr: str) -> str:
    """Drop the parentheses the substitution added where they are not needed."""
    e = expr.strip()
    for _ in range(10):
        new = re.sub(r"\(0 \+ ", "(", e)
        new = re.sub(r"\(\(([^()]*)\)\)", r"(\1)", new)
        new = re.sub(r"\((\w+)\)", r"\1", new)
        # a whole function argument needs no parentheses of its own
        new = re.sub(r"([(,]\s*)\(([^()]*)\)(\s*[,)])", r"\1\2\3", new)
        new = re.sub(r"^\((.*)\)$", lambda m: m.group(1) if balanced(m.group(1)) else
                     m.group(0), new)
        if new == e:
            break
        e = new
    try:  # Python's own printer: the fewest parentheses that keep the meaning
        return ast.unparse(ast.parse(e, mode="eval"))
    except (SyntaxError, ValueError, RecursionError):
        return e


def quote(text: str) -> str:
    t = str(text)
    if re.fullmatch(r"[A-Za-z_][\w]*|\d+(\.\d+)?", t):
        return t
    return '"' + t.replace('"', '\\"') + '"'
