"""The guard AST: what a rule's ``guard:`` says, as data (``is_restrict($X) and not in_loop``).

Built by the rule syntax (``klc.rule.syntax``) from the lark tree, printed back by
``guard_text``, judged by ``klc.guards`` (which knows what each predicate means). Nothing here
evaluates a guard.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class GuardArg:
    """One argument of a predicate call, as written in the rule file.

    ``kind`` is one of ``metavar`` (``$X``; ``value`` is ``X``), ``sequence`` (``$$$X``),
    ``hole`` (``?h``; ``value`` is ``h``), ``int``, ``float``, ``string``, ``name`` (a bare
    identifier or a dotted name such as ``block.x``) or ``op`` (a comparison: ``<=``)."""

    kind: str
    value: str | int | float
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)

    def __str__(self) -> str:
        if self.kind == "metavar":
            return f"${self.value}"
        if self.kind == "sequence":
            return f"$$${self.value}"
        if self.kind == "hole":
            return f"?{self.value}"
        if self.kind == "string":
            return '"' + str(self.value).replace("\\", "\\\\").replace('"', '\\"') + '"'
        return str(self.value)


@dataclass(frozen=True)
class GuardCall:
    """``name(arg, ...)``, or a bare ``name`` for a predicate without arguments."""

    name: str
    args: tuple[GuardArg, ...] = ()
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


@dataclass(frozen=True)
class GuardNot:
    operand: GuardExpr
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


@dataclass(frozen=True)
class GuardAnd:
    operands: tuple[GuardExpr, ...]
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


@dataclass(frozen=True)
class GuardOr:
    operands: tuple[GuardExpr, ...]
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


GuardExpr = GuardCall | GuardNot | GuardAnd | GuardOr


def calls(expr: GuardExpr) -> Iterator[GuardCall]:
    """Every predicate call in a guard expression, left to right."""
    if isinstance(expr, GuardCall):
        yield expr
    elif isinstance(expr, GuardNot):
        yield from calls(expr.operand)
    else:
        for e in expr.operands:
            yield from calls(e)


def guard_text(expr: GuardExpr, _outer: int = 0) -> str:
    """The guard in the rule language, with only the parentheses precedence needs."""
    if isinstance(expr, GuardCall):
        if not expr.args:
            return expr.name
        return f"{expr.name}({', '.join(str(a) for a in expr.args)})"
    if isinstance(expr, GuardNot):
        return "not " + guard_text(expr.operand, 3)
    prec, word = (2, " and ") if isinstance(expr, GuardAnd) else (1, " or ")
    text = word.join(guard_text(e, prec + 1 if isinstance(e, type(expr)) else prec)
                     for e in expr.operands)
    return f"({text})" if _outer > prec else text
