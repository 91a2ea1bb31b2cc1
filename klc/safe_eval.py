"""The one safe expression evaluator: a whitelist over Python's ``ast``, never ``eval``.

Three kinds of text reach it, and each is input that may come from anyone:

- spec expressions (shapes, grid, block, bytes, flops: ``klc.spec``), with the spec's sizes
  as names (``SPEC``);
- constant C arithmetic that the facts spliced from libclang's values (``C_CONSTANT``);
- preprocessor conditions that macro recovery rewrote to Python spelling (``PREPROCESSOR``).

They differ in what ``/`` and ``%`` mean, which constants, operators and functions they take,
and how large a value may grow; each difference is a field of ``Dialect``, and the three
dialects are defined here side by side. Every dialect bounds the text's length and its
nesting, and every failure is an ``ExprError`` (a ``KlcError``) saying what was refused:
callers that only want a value or nothing catch it.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from klc.errors import KlcError

Number = int | float


class ExprError(KlcError):
    """An expression that cannot be evaluated; callers prefix the location of the expression."""


@dataclass(frozen=True, eq=False)  # hashed by identity: parse trees are cached per dialect
class Dialect:
    """What one kind of expression may use, and what its operators mean."""

    what: str  # in messages: "a spec expression"
    allowed: str  # in messages: what the dialect allows, in words
    constants: tuple[type, ...]  # literal types taken (bool is refused unless listed)
    binary: frozenset[type]  # ast operator classes taken in a BinOp
    unary: frozenset[type]  # ast operator classes taken in a UnaryOp
    # ``/`` on two integers: "true" is Python's true division, "floor" Python's ``//``, "c"
    # truncates toward zero (and ``%`` then takes the sign of the dividend, as in C)
    division: Literal["true", "floor", "c"]
    functions: Mapping[str, tuple[Callable[..., Any], int | None]]  # name -> (fn, arity|None)
    logic: bool = False  # and / or, comparisons and ``a if c else b``
    chained_comparisons: bool = False  # ``a < b < c`` (else one operator per comparison)
    max_chars: int = 2000
    max_depth: int = 48  # each operator, operand and call is a level
    max_shift: int = 80  # shift counts in 0..max_shift, both operands integers
    max_exponent: int | None = None  # ``**`` exponents up to this size (with max_magnitude)
    max_magnitude: int | None = None  # every arithmetic result within +- this
    finite: bool = False  # the result must be a finite number (not a bool, inf or nan)


def _ceil_div(a: Number, b: Number) -> int:
    if int(b) == 0:
        raise ExprError("ceil_div by zero")
    return -(-int(a) // int(b))


def c_div(a: Number, b: Number) -> Number:
    """C division: integers truncate toward zero."""
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a: Number, b: Number) -> Number:
    return a - b * c_div(a, b)


_ARITHMETIC = frozenset({ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Mod})
_BITWISE = frozenset({ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor})
_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_DIVISION: dict[str, Callable[[Any, Any], Any]] = {
    "true": operator.truediv, "floor": operator.floordiv, "c": c_div}
_COMPARISONS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}

SPEC = Dialect(
    what="a spec expression",
    allowed="only numbers, names, arithmetic, min/max/ceil_div/abs",
    constants=(int, float),
    binary=_ARITHMETIC | _BITWISE | {ast.FloorDiv, ast.Pow},
    unary=frozenset({ast.USub, ast.UAdd}),
    division="true",  # so that a byte count like ``n * 4 / 2`` is what it says
    functions={"min": (min, None), "max": (max, None), "abs": (abs, 1),
               "ceil_div": (_ceil_div, 2), "cdiv": (_ceil_div, 2), "int": (int, 1)},
    max_exponent=128,
    max_magnitude=1 << 80,  # far beyond any size or byte count; stops 2**2**30 style input
    finite=True,
)
C_CONSTANT = Dialect(
    what="constant C arithmetic",
    allowed="only numbers, C's arithmetic and logic, _int/_float/_bool conversions",
    constants=(int, float, bool),  # true and false are spliced in as True and False
    binary=_ARITHMETIC | _BITWISE,
    unary=frozenset({ast.USub, ast.UAdd, ast.Not, ast.Invert}),
    division="c",
    functions={"_int": (int, 1), "_float": (float, 1), "_bool": (bool, 1)},
    logic=True,
    max_chars=100_000,
    max_depth=200,
    max_shift=4096,  # no giant integers from a typo
)
PREPROCESSOR = Dialect(
    what="a preprocessor condition",
    allowed="only integers, + - * / %, comparisons and logic",
    constants=(int,),
    binary=frozenset({ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod}),
    unary=frozenset({ast.USub, ast.UAdd, ast.Not}),
    division="floor",
    functions={},
    logic=True,
    chained_comparisons=True,
    max_chars=100_000,
    max_depth=200,
)

_STRUCTURE = (ast.Expression, ast.Constant, ast.Name, ast.Load, ast.UnaryOp, ast.BinOp,
              ast.Call)
_LOGIC = (ast.BoolOp, ast.And, ast.Or, ast.Compare, ast.IfExp, *_COMPARISONS)


def _allowed(node: ast.AST, d: Dialect) -> bool:
    if isinstance(node, _STRUCTURE):
        return True
    if d.logic and isinstance(node, _LOGIC):
        return d.chained_comparisons or not isinstance(node, ast.Compare) or len(node.ops) == 1
    return type(node) in d.binary or type(node) in d.unary


def _constant_ok(value: object, d: Dialect) -> bool:
    if isinstance(value, bool):
        return bool in d.constants
    return isinstance(value, d.constants)


def _refuse(node: ast.AST, d: Dialect, text: str) -> ExprError:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id not in d.functions:
        return ExprError(f"{text!r}: unknown function {node.func.id!r} "
                         f"(allowed: {', '.join(sorted(d.functions)) or 'none'})")
    if isinstance(node, ast.Constant):
        return ExprError(f"{text!r}: only numbers are allowed, not {node.value!r}")
    return ExprError(f"{text!r}: {type(node).__name__} is not allowed in {d.what} "
                     f"({d.allowed})")


@lru_cache(maxsize=4096)
def _parsed(text: str, d: Dialect) -> ast.Expression:
    """The tree of an expression (read only: shared by every use of the same text, as the
    spec of each file names the same few grid, block and byte expressions). What the
    evaluator would refuse (attributes, lambdas, subscripts, keywords...) is refused here,
    and so is an expression too long or too deeply nested to be a real one."""
    if len(text) > d.max_chars:
        raise ExprError(f"expression of {len(text)} characters (at most {d.max_chars})")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ExprError(f"cannot parse expression {text!r}: {e.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise ExprError(f"cannot parse expression {text[:40]!r}...: nested too deeply"
                        ) from None
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > d.max_depth:
            raise ExprError(f"expression {text[:40]!r}... is nested more than "
                            f"{d.max_depth} deep")
        if not _allowed(node, d) or (
                isinstance(node, ast.Constant) and not _constant_ok(node.value, d)) or (
                isinstance(node, ast.Call) and (node.keywords or not isinstance(node.func, ast.Name)
                                                or node.func.id not in d.functions)):
            raise _refuse(node, d, text)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


def parse(text: object, dialect: Dialect) -> ast.Expression:
    """The checked tree of an expression; ExprError for anything the dialect refuses."""
    if not isinstance(text, str) or not text.strip():
        raise ExprError("empty expression")
    return _parsed(text.strip(), dialect)


@lru_cache(maxsize=4096)
def _free_names(text: str, d: Dialect) -> frozenset[str]:
    tree = _parsed(text, d)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return frozenset(n.id for n in ast.walk(tree)
                     if isinstance(n, ast.Name) and id(n) not in called)


def names(text: str, dialect: Dialect) -> frozenset[str]:
    """The free names an expression uses (function names excluded); ExprError if refused."""
    parse(text, dialect)
    return _free_names(text.strip(), dialect)


def evaluate(text: str | Number, env: Mapping[str, Any], dialect: Dialect) -> Any:
    """The value of ``text`` with the names in ``env``: a number, or a bool where the
    dialect has logic. A number given instead of text is its own value."""
    if isinstance(text, bool):
        raise ExprError(f"expected a number or an expression, got {text!r}")
    if isinstance(text, int | float):
        return text
    try:
        value = _Evaluator(env, dialect, text).eval(parse(text, dialect).body)
    except ExprError:
        raise
    except (ArithmeticError, ValueError, TypeError, RecursionError, MemoryError) as e:
        raise ExprError(f"{text!r}: {type(e).__name__}: {e}") from None
    if dialect.finite and (isinstance(value, bool) or not isinstance(value, int | float) or (
            isinstance(value, float) and not math.isfinite(value))):
        raise ExprError(f"{text!r} = {value!r} is not a finite real number")
    return value


class _Evaluator:
    """One evaluation: the names, the dialect and the text (for messages)."""

    def __init__(self, env: Mapping[str, Any], dialect: Dialect, text: str):
        self.env, self.d, self.text = env, dialect, text

    def error(self, message: str) -> ExprError:
        return ExprError(f"{self.text!r}: {message}")

    def eval(self, node: ast.AST) -> Any:
        d = self.d
        if isinstance(node, ast.Constant):
            if not _constant_ok(node.value, d):
                raise self.error(f"only numbers are allowed, not {node.value!r}")
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise self.error(f"unknown name {node.id!r} "
                                 f"(known: {', '.join(sorted(self.env)) or 'none'})")
            return self.env[node.id]
        if isinstance(node, ast.UnaryOp) and type(node.op) in d.unary:
            return self.unary(node.op, self.eval(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in d.binary:
            return self.binary(node.op, self.eval(node.left), self.eval(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            return self.call(node.func.id, [self.eval(a) for a in node.args])
        if d.logic:
            if isinstance(node, ast.BoolOp):
                values = [self.eval(v) for v in node.values]
                return all(values) if isinstance(node.op, ast.And) else any(values)
            if isinstance(node, ast.Compare) and (d.chained_comparisons or len(node.ops) == 1):
                return self.compare(node)
            if isinstance(node, ast.IfExp):
                return self.eval(node.body) if self.eval(node.test) else self.eval(node.orelse)
        raise self.error(f"{type(node).__name__} is not allowed in {d.what} ({d.allowed})")

    def unary(self, op: ast.unaryop, v: Any) -> Any:
        if isinstance(op, ast.USub):
            return -v
        if isinstance(op, ast.UAdd):
            return v
        if isinstance(op, ast.Not):
            return not v
        return ~v  # ast.Invert (a float refuses: TypeError)

    def binary(self, op: ast.operator, a: Any, b: Any) -> Any:
        d = self.d
        if isinstance(op, ast.Pow) and d.max_exponent is not None and (
                abs(b) > d.max_exponent or (d.max_magnitude is not None
                                            and abs(a) > d.max_magnitude)):
            raise self.error("exponent too large")
        if isinstance(op, ast.LShift | ast.RShift) and not (
                isinstance(b, int) and 0 <= b <= d.max_shift and isinstance(a, int)):
            raise self.error(f"shifts need integers and a count in 0..{d.max_shift}")
        if isinstance(op, ast.Div):
            fn = _DIVISION[d.division]
        elif isinstance(op, ast.Mod) and d.division == "c":
            fn = _c_mod
        else:
            fn = _OPERATORS[type(op)]
        try:
            v = fn(a, b)
        except ZeroDivisionError:
            raise self.error("division by zero") from None
        except TypeError as e:
            raise self.error(str(e)) from None
        if d.max_magnitude is not None and abs(v) > d.max_magnitude:
            raise self.error("value out of range")
        return v

    def call(self, name: str, args: list[Any]) -> Any:
        fn, arity = self.d.functions.get(name, (None, None))
        if fn is None:
            raise self.error(f"unknown function {name!r} "
                             f"(allowed: {', '.join(sorted(self.d.functions)) or 'none'})")
        if (arity is not None and len(args) != arity) or not args:
            raise self.error(f"wrong number of arguments to {name}")
        return fn(*args)

    def compare(self, node: ast.Compare) -> bool:
        left = self.eval(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.eval(right_node)
            if not _COMPARISONS[type(op)](left, right):
                return False
            left = right
        return True
