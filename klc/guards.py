"""Guards: the fixed vocabulary of static predicates a rule's ``guard:`` combines, and their
evaluator.

A guard decides, before any rewrite, whether a match is a place where the rule is sound.
Predicates are Python functions registered by name (``PREDICATES``); a rule file only names
them, so a rule cannot smuggle code in, and ``klc check`` can refuse a misspelt one at load
time. Like MLIR's ``notifyMatchFailure``, every predicate returns a ``Verdict`` whose reason
says *why* with the code it judged and where: ``klc list --all`` shows that as "why not".

Facts come from the tree-sitter model first (``klc.frontend``: parameters, declarations,
loops, barriers, launch bounds): cheap, so that listing a folder of kernels stays fast. Only
where the tree cannot know (the type of an arbitrary expression, a constant hidden behind a
template or a global ``constexpr`` the tree does not resolve) is libclang asked, through
``unit.facts``, lazily. When libclang is missing the predicate fails closed, saying so.

Three-valued verdicts: a predicate may not know. ``Verdict.unknown`` marks that; an unknown
verdict is *pending* (``ok=True``) when it only waits for a hole value (``depends on ?h``:
listing works before a value is chosen, and the guard is checked again once it is filled), or
*failed closed* (``ok=False``) when a fact is missing. ``not`` leaves unknown verdicts as they
are, so ``not p`` never turns "cannot tell" into "yes".
"""

from __future__ import annotations

import bisect
import functools
import math
import operator
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tree_sitter import Node, Query, QueryCursor

from klc.errors import KlcError
from klc.frontend import (
    F_ARGUMENT,
    F_ARGUMENTS,
    F_BODY,
    F_CONDITION,
    F_DECLARATOR,
    F_FIELD,
    F_FUNCTION,
    F_INDICES,
    F_INITIALIZER,
    F_LEFT,
    F_NAME,
    F_OPERATOR,
    F_RIGHT,
    F_SIZE,
    F_TYPE,
    F_UPDATE,
    F_VALUE,
    LANGUAGE,
    LOOP_TYPES,
    parse_expression,
)

if TYPE_CHECKING:
    from klc.frontend import Function, Loop, Param, Unit
    from klc.match import Binding, Match


# --------------------------------------------------------------------------------------
# Guard expressions (built by klc.rules from the lark tree)


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


# --------------------------------------------------------------------------------------
# Verdicts and the evaluation context


@dataclass(unsafe_hash=True)  # immutable by convention: a frozen __init__ costs 3x
class Verdict:
    """What a guard decided, and why. ``start`` is the byte offset of the code it judged."""

    ok: bool
    reason: str
    start: int | None = None
    unknown: bool = False  # undecided: pending on a hole (ok) or a missing fact (not ok)


@dataclass
class GuardContext:
    """What a guard may look at: the match, the filled hole values, the kernel spec."""

    match: Match
    holes: dict[str, str] = field(default_factory=dict)
    spec: object | None = None  # a klc.spec.Spec or Bound; optional
    clang: bool = True  # False: tree-sitter facts only (``klc list --tree-only``)
    # verdicts of predicate calls at this match, by (predicate, arguments): shared by the
    # rules that share an anchor (``klc.pipeline.find_sites``). A predicate reads only the
    # match, its arguments, the spec and ``clang`` -- except those of READS_RULE, never kept
    memo: dict[tuple[Any, ...], Verdict] | None = None

    @property
    def unit(self) -> Unit:
        return self.match.unit

    @property
    def function(self) -> Function | None:
        return self.match.function


# --------------------------------------------------------------------------------------
# The registry


@dataclass(frozen=True)
class ArgSpec:
    """One parameter of a predicate: what kinds of argument it accepts."""

    label: str  # as shown in the signature: "$X", "N", "region"
    kinds: frozenset[str]
    names: frozenset[str] | None = None  # allowed bare names, where kind "name" is accepted
    optional: bool = False

    def accepts(self, arg: GuardArg) -> bool:
        if arg.kind not in self.kinds:
            return False
        return not (arg.kind == "name" and self.names is not None
                    and str(arg.value) not in self.names)

    def words(self) -> str:
        names = {"metavar": "a metavariable ($X)", "sequence": "a sequence metavariable ($$$X)",
                 "hole": "a hole (?h)", "int": "an integer", "float": "a number",
                 "string": 'a string ("...")', "op": "a comparison (<, <=, ==, !=, >=, >)"}
        parts = [names[k] for k in sorted(self.kinds) if k in names]
        if "name" in self.kinds:
            parts.append("one of " + ", ".join(sorted(self.names)) if self.names
                         else "a name")
        return " or ".join(parts)


@dataclass(frozen=True)
class Predicate:
    """A named guard predicate: its parameters, a one-line doc for ``klc check
    --predicates``, and the function that decides it."""

    name: str
    params: tuple[ArgSpec, ...]
    doc: str
    fn: Callable[..., Verdict] = field(repr=False, compare=False)

    @property
    def signature(self) -> str:
        if not self.params:
            return self.name
        labels = [f"[{p.label}]" if p.optional else p.label for p in self.params]
        return f"{self.name}({', '.join(labels)})"


PREDICATES: dict[str, Predicate] = {}

REGIONS = frozenset({"anchor", "loop", "kernel"})
# Declaration predicates: where each $X argument is a plain identifier that names a local or a
# parameter, their verdict (ok, reason, unknown) depends only on the enclosing function, on
# that name and on the declaration it resolves to at the use (``_lookup``: the closest
# preceding local, else the parameter), on constant or hole arguments and on the region
# ``kernel``; never on where in the function the use is (no reason of theirs cites the use,
# and libclang is never asked when a declaration is found). ``klc.pipeline.find_sites``
# judges a guard made only of these once per function and declarations, not once per use (a
# qualifier rule anchored on ``$X[$I]`` matches every subscript of a kernel).
# Predicates that read the rule being judged (its edits) or its hole values beyond their
# arguments: their verdict at a match is not shared between rules (``GuardContext.memo``).
READS_RULE = frozenset({"smem_fits"})
DECLARATION_PREDICATES = frozenset({"is_kernel_param", "is_const", "is_restrict", "no_write",
                                    "writes_in", "is_identifier", "elem_type", "is_pointer"})
COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b,
}

_MV = frozenset({"metavar"})
_VALUE = frozenset({"int", "hole", "metavar"})


def _metavar(label: str = "$X") -> ArgSpec:
    return ArgSpec(label, _MV)


def _region_arg(optional: bool = True) -> ArgSpec:
    return ArgSpec("region", frozenset({"name"}), REGIONS, optional)


def predicate(name: str, *params: ArgSpec) -> Callable[[Callable[..., Verdict]],
                                                        Callable[..., Verdict]]:
    """Register a predicate; the first line of its docstring is what the CLI lists."""

    def register(fn: Callable[..., Verdict]) -> Callable[..., Verdict]:
        doc = (fn.__doc__ or "").strip().split("\n\n")[0]
        PREDICATES[name] = Predicate(name, params, " ".join(doc.split()), fn)
        return fn

    return register


def check_call(call: GuardCall) -> list[tuple[int, int, str]]:
    """Load-time check of one call: a known predicate, the right number and kinds of
    arguments. Returns (line, col, message) for each problem."""
    import difflib

    pred = PREDICATES.get(call.name)
    if pred is None:
        close = difflib.get_close_matches(call.name, PREDICATES, n=3, cutoff=0.5)
        rest = sorted(n for n in PREDICATES if n not in close)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        return [(call.line, call.col, f"unknown guard predicate {call.name!r}{hint} "
                 f"(known: {', '.join(close + rest)})")]
    problems: list[tuple[int, int, str]] = []
    required = sum(1 for p in pred.params if not p.optional)
    if not required <= len(call.args) <= len(pred.params):
        count = (f"{required}" if required == len(pred.params)
                 else f"{required} to {len(pred.params)}")
        noun = "argument" if count == "1" else "arguments"
        problems.append((call.line, call.col, f"{call.name} takes {count} {noun} "
                         f"({pred.signature}), got {len(call.args)}"))
        return problems
    for i, (arg, spec) in enumerate(zip(call.args, pred.params, strict=False), start=1):
        if not spec.accepts(arg):
            problems.append((arg.line, arg.col, f"argument {i} of {call.name} "
                             f"({spec.label}) must be {spec.words()}, got {arg}"))
    return problems


# --------------------------------------------------------------------------------------
# Evaluation


def evaluate(expr: GuardExpr, ctx: GuardContext) -> Verdict:
    """Decide a guard expression: ``and`` fails with the first failing reason, ``or`` fails
    with all of them, ``not`` flips a known verdict and keeps its reason."""
    if isinstance(expr, GuardCall):
        return _call(expr, ctx)
    if isinstance(expr, GuardNot):
        v = evaluate(expr.operand, ctx)
        if v.unknown:
            return v
        reason = f"not ({v.reason})" if v.ok else v.reason
        return Verdict(not v.ok, reason, v.start)
    # Short-circuit on a decisive known verdict (a known "no" for `and`, a known "yes" for
    # `or`): later operands may be costly (libclang) and cannot change the outcome.
    decisive = isinstance(expr, GuardOr)
    verdicts: list[Verdict] = []
    for e in expr.operands:
        v = evaluate(e, ctx)
        if v.ok == decisive and not v.unknown:
            return v
        verdicts.append(v)
    if isinstance(expr, GuardAnd):
        for want in ((False, False), (False, True)):  # a known "no" first, then "cannot tell"
            for v in verdicts:
                if (v.ok, v.unknown) == want:
                    return v
        pending = [v for v in verdicts if v.unknown]
        if pending:
            return Verdict(True, "; ".join(v.reason for v in pending), pending[0].start, True)
        return Verdict(True, "; ".join(v.reason for v in verdicts), verdicts[0].start)
    for want in ((True, False), (True, True)):
        for v in verdicts:
            if (v.ok, v.unknown) == want:
                return v
    unknown = any(v.unknown for v in verdicts)
    return Verdict(False, "; and ".join(v.reason for v in verdicts), verdicts[0].start, unknown)


def _call(call: GuardCall, ctx: GuardContext) -> Verdict:
    pred = PREDICATES.get(call.name)
    if pred is None:  # the loader refuses these; a hand-built expression may not
        return Verdict(False, f"unknown guard predicate {call.name!r}", None, True)
    args: list[Any] = []
    key: list[Any] = [call.name]  # for the memo: a metavariable by its name (one match)
    for arg in call.args:
        if arg.kind == "hole":
            value = ctx.holes.get(str(arg.value))
            if value is None:
                return Verdict(True, f"{call.name}: depends on ?{arg.value}", None, True)
            args.append(_int_or_text(value))
            key += ("hole", args[-1])
        elif arg.kind in ("metavar", "sequence"):
            b = ctx.match.bindings.get(str(arg.value))
            if b is None:
                return Verdict(False, f"{call.name}: {arg} is not bound by the match", None,
                               True)
            args.append(b)
            key += (arg.kind, arg.value)
        else:
            args.append(arg.value)
            key += (arg.kind, arg.value)
    memo = ctx.memo
    if memo is None or call.name in READS_RULE:
        return _run(pred, ctx, call, args)
    at = tuple(key)
    verdict = memo.get(at)
    if verdict is None:
        verdict = memo[at] = _run(pred, ctx, call, args)
    return verdict


def _run(pred: Predicate, ctx: GuardContext, call: GuardCall, args: list[Any]) -> Verdict:
    try:
        return pred.fn(ctx, *args)
    except Exception as e:  # a guard must never take a batch down: fail closed, say why
        return Verdict(False, f"unknown: {call.name} could not judge this code ({e!r})",
                       ctx.match.start, True)


def _int_or_text(value: str) -> int | str:
    try:
        return int(value.strip(), 0)
    except ValueError:
        return value.strip()


# --------------------------------------------------------------------------------------
# Per-unit caches (tree-sitter queries run once per unit, not once per guard)

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


# --------------------------------------------------------------------------------------
# Citing code in reasons


def _snippet(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _cite(unit: Unit, start: int, end: int) -> str:
    """``file:line:col: code`` for a reason's parenthesis."""
    return f"{unit.where(start)}: {_snippet(unit.text(start, end))}"


def _code(b: Binding) -> str:
    return f"`{_snippet(b.text, 40)}`"


def _no(ctx: GuardContext, reason: str, start: int | None = None) -> Verdict:
    return Verdict(False, reason, ctx.match.start if start is None else start)


def _unknown(ctx: GuardContext, reason: str, start: int | None = None) -> Verdict:
    return Verdict(False, "unknown: " + reason, ctx.match.start if start is None else start,
                   True)


def _yes(reason: str, start: int | None = None) -> Verdict:
    return Verdict(True, reason, start)


def _facts(ctx: GuardContext) -> tuple[Any, str]:
    """libclang facts, or None and why not: facts are optional, so guards fail closed."""
    if not ctx.clang:
        return None, "libclang facts not consulted (tree-sitter facts only)"
    try:
        return ctx.unit.facts, ""
    except ImportError:
        return None, "libclang facts unavailable"
    except Exception as e:  # a missing shared library, a clang crash: same answer
        return None, f"libclang facts unavailable ({e})"


# --------------------------------------------------------------------------------------
# Tree helpers


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
    if t in ("subscript_expression", "pointer_expression", "field_expression"):
        arg = node.child_by_field_id(F_ARGUMENT)
        return _roots(arg, src) if arg is not None else set()
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


# --------------------------------------------------------------------------------------
# Declarations: what a name is (tree-sitter model first)


@dataclass(unsafe_hash=True)  # immutable by convention: a frozen __init__ costs 3x
class _Decl:
    """A variable as declared: the facts the type predicates ask about."""

    name: str
    base: str  # the type without qualifiers and declarator: "float", "float4", "T"
    pointer: int  # levels of indirection; an array counts as one
    const: bool  # the pointee (or the value) is const
    restrict: bool
    qualifiers: frozenset[str]  # "__shared__", "constexpr", "static", ...
    dims: tuple[str, ...]  # array sizes as written
    init: Node | None
    start: int
    end: int
    origin: str  # "parameter" | "local" | "global"
    align: int | None = None  # from __align__(N)
    reference: bool = False  # declared `T& r = ...`: another name for what it is bound to

    @property
    def signature(self) -> tuple[object, ...]:
        """What a declaration says about its variable's type and layout (not where it is)."""
        return (self.base, self.pointer, self.dims, self.align, tuple(sorted(self.qualifiers)))


_ALIGN_RE = re.compile(r"__align__\s*\(\s*(\d+)\s*\)")


def _declarations_named(unit: Unit, name: str) -> list[_Decl]:
    """The declarations of one name (locals and globals), in source order: from the unit's
    declarations, read once (a file's lookups ask for most of its names, and the taint and
    alias analyses for all of them)."""
    return _declarations(unit).get(name, [])


def declarations_named(unit: Unit, name: str) -> list[Any]:
    """The declarations of ``name`` in the unit (locals and globals; parameters are not
    declarations here), each with ``start``/``end`` byte offsets, in source order."""
    return _declarations_named(unit, name)


def _declarations(unit: Unit) -> dict[str, list[_Decl]]:
    """Every declared variable of the unit by name (locals and globals), in source order."""
    return _memo(unit, "declarations",
                 lambda: _group(_declarations_of(unit, _nodes(unit, "declaration"))))


def _function_declarations(unit: Unit, fn: Function) -> list[_Decl]:
    """The variables declared in ``fn``'s body, in the order of ``_declarations``: by name
    (in the order of the unit's first declaration of each), then in source order. A slice of
    the unit's declarations sorted by start, found by bisection: not a scan of them all for
    every function."""
    by_start, rank = _memo(unit, "declarations_by_start", lambda: _by_start_and_rank(unit))
    lo = bisect.bisect_left(by_start, fn.body_start, key=_decl_start)
    hi = bisect.bisect_left(by_start, fn.body_end, key=_decl_start)
    return sorted(by_start[lo:hi], key=lambda d: rank[d.name])  # (stable: source order)


def _by_start_and_rank(unit: Unit) -> tuple[list[_Decl], dict[str, int]]:
    whole = _declarations(unit)
    rank = {name: i for i, name in enumerate(whole)}
    return sorted((d for decls in whole.values() for d in decls), key=_decl_start), rank


def _group(decls: list[_Decl]) -> dict[str, list[_Decl]]:
    out: dict[str, list[_Decl]] = {}
    for d in decls:
        out.setdefault(d.name, []).append(d)
    return out


# the predicates that read a variable's declared type or layout (a rewrite of that
# declaration in the same run makes their verdict stale: klc.pipeline._stale_sites)
LAYOUT_PREDICATES = frozenset({"aligned", "element_aligned", "elem_type", "smem_fits",
                               "index_below", "is_pointer", "restrict_safe",
                               "elementwise_only", "double_buffered"})


@functools.lru_cache(maxsize=1024)
def _signatures_of(text: str) -> tuple[tuple[str, tuple[object, ...]], ...]:
    from klc.frontend import parse_bytes

    unit = parse_bytes(f"void __klc_decl__() {{\n{text}\n}}\n".encode(), "<declaration>")
    return tuple((d.name, d.signature)
                 for d in _declarations_of(unit, list(unit.nodes_of_type("declaration"))))


def declaration_signatures(text: str) -> dict[str, tuple[object, ...]]:
    """The variables that declaration code (a statement, or a rewrite's text) declares, each
    with its type and layout (``_Decl.signature``)."""
    return dict(_signatures_of(text))


def _declarations_of(unit: Unit, nodes: list[Node]) -> list[_Decl]:
    """The variables the given declaration nodes declare, in order."""
    src = unit.source
    out: list[_Decl] = []
    for node in nodes:
        quals: set[str] = set()
        for c in node.children:
            if c.type in ("type_qualifier", "storage_class_specifier",
                          "attribute_specifier"):
                quals.add(_text(src, c))
        type_node = node.child_by_field_id(F_TYPE)
        base = _base_type(_text(src, type_node)) if type_node is not None else ""
        align = None
        masks = unit.masks
        i = bisect.bisect_left(unit._mask_starts, node.start_byte)  # (masks sorted by start)
        while i < len(masks) and masks[i].start < node.end_byte:
            am = _ALIGN_RE.match(unit.text(masks[i].start, masks[i].end))
            if am:
                align = int(am.group(1))
            i += 1
        for d in node.children_by_field_id(F_DECLARATOR):
            decl = _declarator(src, d, base, quals, node, align)
            if decl is not None:
                out.append(decl)
    return out


def _declarator(src: bytes, d: Node, base: str, quals: set[str], node: Node,
                align: int | None) -> _Decl | None:
    pointer, restrict, dims, init, reference = 0, False, [], None, False
    while d is not None and d.type != "identifier":
        if d.type == "reference_declarator":
            reference = True
        if d.type == "init_declarator":
            init = d.child_by_field_id(F_VALUE)
        elif d.type == "pointer_declarator":
            pointer += 1
            restrict |= any(c.type == "type_qualifier" and _text(src, c) in
                            ("__restrict__", "__restrict", "restrict") for c in d.children)
        elif d.type == "array_declarator":
            size = d.child_by_field_id(F_SIZE)
            dims.append(_text(src, size) if size is not None else "")
        nxt = d.child_by_field_id(F_DECLARATOR)
        if nxt is None:
            nxt = next((c for c in d.named_children if c.type in (
                "identifier", "pointer_declarator", "array_declarator", "init_declarator",
                "parenthesized_declarator", "reference_declarator")), None)
        d = nxt
    if d is None:
        return None
    return _Decl(_text(src, d), base, pointer + (1 if dims else 0), "const" in quals, restrict,
                 frozenset(quals), tuple(reversed(dims)), init, node.start_byte, node.end_byte,
                 "local", align, reference)


_TYPE_WORDS = re.compile(r"\b(?:const|volatile|__restrict__|__restrict|restrict|struct|"
                         r"typename|class|__shared__|__constant__|__device__)\b")


@functools.lru_cache(maxsize=4096)
def _base_type(text: str) -> str:
    text = _TYPE_WORDS.sub(" ", text).replace("std::", "")
    return " ".join(text.replace("*", " ").replace("&", " ").split())


def _param_decl(p: Param) -> _Decl:
    return _Decl(p.name, _base_type(p.base_type), p.pointer + (1 if p.array else 0), p.const,
                 p.restrict, frozenset(), (), None, p.start, p.end, "parameter")


def _lookup(ctx: GuardContext, name: str, at: int) -> _Decl | None:
    """The declaration a use of ``name`` at offset ``at`` refers to: the closest preceding
    local of the enclosing function, else a parameter, else a global."""
    fn = ctx.function
    unit = ctx.unit
    decls = _declarations_named(unit, name)
    if fn is not None and decls:
        # the last declaration that starts before the use, if it is in this function's
        # body (declarations are in source order: found by bisection)
        i = bisect.bisect_left(decls, at, key=_decl_start) - 1
        if i >= 0 and decls[i].start >= fn.body_start:
            return decls[i]
    # the parameter, else the global: the same for every use in the function (once each)
    known = _memo(unit, "lookups", dict)
    key = (fn.start, fn.end, name) if fn is not None else (None, None, name)
    if key not in known:
        known[key] = _lookup_outside(unit, fn, name, decls)
    return known[key]


_decl_start = operator.attrgetter("start")


def _lookup_outside(unit: Unit, fn: Function | None, name: str, decls: list[_Decl]
                    ) -> _Decl | None:
    if fn is not None:
        p = fn.param(name)
        if p is not None:
            return _param_decl(p)
    inside = [(f.start, f.end) for f in unit.functions]
    glob = [d for d in decls if not any(s <= d.start < e for s, e in inside)]
    if glob:
        return _Decl(**{**glob[-1].__dict__, "origin": "global"})
    return None


# --------------------------------------------------------------------------------------
# Types of expressions

_VECTOR_COMPONENT = {"float": "float", "double": "double", "int": "int", "uint": "unsigned int",
                     "half": "__half", "__half": "__half", "char": "char", "uchar":
                     "unsigned char", "short": "short", "longlong": "long long"}
SIZES: dict[str, int] = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2,
    "__nv_bfloat16": 2, "nv_bfloat16": 2, "int": 4, "unsigned": 4, "unsigned int": 4,
    "int32_t": 4, "uint32_t": 4, "float": 4, "long": 8, "unsigned long": 8, "long long": 8,
    "unsigned long long": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8, "double": 8,
    "half2": 4, "__half2": 4, "__nv_bfloat162": 4, "char2": 2, "uchar2": 2, "char4": 4,
    "uchar4": 4, "short2": 4, "ushort2": 4, "short4": 8, "float2": 8, "float3": 12,
    "float4": 16, "int2": 8, "int3": 12, "int4": 16, "uint2": 8, "uint3": 12, "uint4": 16,
    "double2": 16, "longlong2": 16, "ulonglong2": 16,
}
# natural alignment where it differs from the size (three-component vectors)
ALIGNS: dict[str, int] = {"float3": 4, "int3": 4, "uint3": 4}
_TYPE_ALIASES = {"unsigned": "unsigned int", "half": "__half", "half2": "__half2",
                 "nv_bfloat16": "__nv_bfloat16", "signed int": "int", "signed": "int",
                 "long int": "long", "long long int": "long long",
                 "unsigned long long int": "unsigned long long"}


def _norm_type(t: str) -> str:
    t = _base_type(t)
    return _TYPE_ALIASES.get(t, t)


@dataclass(frozen=True)
class _Type:
    base: str
    pointer: int
    decl: _Decl | None  # where the type came from, when it is a declared variable
    how: str  # for reasons: "declared `const float* x` (k.cu:1:20)"


def _type_of(ctx: GuardContext, node: Node) -> _Type | None:
    """The type of an expression from the tree alone, or None when only clang would know."""
    unit, src = ctx.unit, ctx.unit.source
    node = _unwrap(node)
    t = node.type
    if t == "identifier":
        d = _lookup(ctx, _text(src, node), node.start_byte)
        if d is None:
            return None
        return _Type(d.base, d.pointer, d, f"declared at {_cite(unit, d.start, d.end)}")
    if t == "number_literal":
        lit = _text(src, node).lower()
        is_float = not lit.startswith("0x") and ("." in lit or "e" in lit or lit.endswith("f"))
        base = ("float" if lit.endswith("f") else "double") if is_float else "int"
        return _Type(base, 0, None, f"literal {lit}")
    if t == "subscript_expression":
        inner = _type_of(ctx, node.child_by_field_id(F_ARGUMENT))
        if inner is None or inner.pointer == 0:
            return None
        return _Type(inner.base, inner.pointer - 1, inner.decl, inner.how)
    if t == "pointer_expression":
        inner = _type_of(ctx, node.child_by_field_id(F_ARGUMENT))
        if inner is None:
            return None
        if _operator(node) == "&":
            return _Type(inner.base, inner.pointer + 1, inner.decl, inner.how)
        return None if inner.pointer == 0 else _Type(inner.base, inner.pointer - 1, inner.decl,
                                                     inner.how)
    if t == "binary_expression" and _operator(node) in ("+", "-"):
        for side in ("left", "right"):
            inner = _type_of(ctx, node.child_by_field_name(side))
            if inner is not None and inner.pointer > 0:
                return inner
        return None
    if t == "field_expression":
        arg = node.child_by_field_id(F_ARGUMENT)
        fld = node.child_by_field_id(F_FIELD)
        if arg is not None and _text(src, arg) in ("threadIdx", "blockIdx", "blockDim",
                                                   "gridDim"):
            return _Type("unsigned int", 0, None, "a CUDA built-in index")
        inner = _type_of(ctx, arg) if arg is not None else None
        if inner is not None and fld is not None and _text(src, fld) in "xyzw" \
                and inner.pointer == (1 if _operator(node) == "->" else 0):
            m = re.fullmatch(r"([a-z_]+?)([1-4])", inner.base)
            if m and m.group(1) in _VECTOR_COMPONENT:
                return _Type(_VECTOR_COMPONENT[m.group(1)], 0, inner.decl, inner.how)
        return None
    ty, _ = _cast_target(node, src)
    if ty is not None:
        text = _text(src, ty)
        return _Type(_base_type(text), text.count("*"), None, f"cast to {' '.join(text.split())}")
    return None


def _type_fact(ctx: GuardContext, b: Binding) -> tuple[Any, str]:
    facts, why = _facts(ctx)
    if facts is None:
        return None, why
    fact = facts.type_of(b.start, b.end)
    return fact, "" if fact is not None else "clang has no type for it"


def _binding_node(b: Binding) -> Node | None:
    return b.node if b.node is not None else (b.nodes[0] if b.nodes else None)


# --------------------------------------------------------------------------------------
# Type predicates


@predicate("elem_type", _metavar(), ArgSpec('"type"', frozenset({"string", "name"})))
def elem_type(ctx: GuardContext, x: Binding, want: str) -> Verdict:
    """The element type of a pointer or array $X (or the type of an expression) is TYPE.

    Qualifiers do not count: ``const float* __restrict__`` has element type ``float``."""
    node = _binding_node(x)
    typ = _type_of(ctx, node) if node is not None else None
    want_n = _norm_type(want)
    if typ is not None:
        have = _norm_type(typ.base)
        fn = ctx.function
        if fn is not None and any(t.name == have for t in fn.template_params):
            return _unknown(ctx, f"the element type of {_code(x)} is the template parameter "
                            f"{have} ({typ.how})", x.start)
        if have == want_n:
            return _yes(f"{_code(x)} has element type {want}", x.start)
        return _no(ctx, f"the element type of {_code(x)} is {typ.base}, not {want} ({typ.how})",
                   x.start)
    fact, why = _type_fact(ctx, x)
    if fact is None:
        return _unknown(ctx, f"the type of {_code(x)} ({ctx.unit.where(x.start)}): {why}",
                        x.start)
    have = _norm_type(fact.element_type)
    if have == want_n:
        return _yes(f"{_code(x)} has element type {want} (clang)", x.start)
    return _no(ctx, f"the element type of {_code(x)} is {fact.element_type}, not {want} "
               f"(clang, {ctx.unit.where(x.start)})", x.start)


def _decl_type(ctx: GuardContext, x: Binding) -> tuple[_Type | None, Any, str]:
    """Tree type, else clang's TypeFact, else why neither."""
    node = _binding_node(x)
    typ = _type_of(ctx, node) if node is not None else None
    if typ is not None:
        return typ, None, ""
    fact, why = _type_fact(ctx, x)
    return None, fact, why


def has_type_kind(ctx: GuardContext, x: Binding, kind: str) -> bool:
    """Does $X have the type a ``metavar $X: pointer`` (or ``scalar``) line asks for? From
    the declarations (then clang); a type that is not known is not that kind."""
    typ, fact, _ = _decl_type(ctx, x)
    if typ is not None:
        pointer = typ.pointer > 0
    elif fact is not None:
        pointer = bool(fact.is_pointer)
    else:
        return False
    return pointer if kind == "pointer" else not pointer


@predicate("is_pointer", _metavar())
def is_pointer(ctx: GuardContext, x: Binding) -> Verdict:
    """$X is a pointer (or an array, which decays to one)."""
    typ, fact, why = _decl_type(ctx, x)
    if typ is not None:
        if typ.pointer > 0:
            return _yes(f"{_code(x)} is a pointer", x.start)
        return _no(ctx, f"{_code(x)} is not a pointer: its type is {typ.base} ({typ.how})",
                   x.start)
    if fact is None:
        return _unknown(ctx, f"the type of {_code(x)}: {why}", x.start)
    if fact.is_pointer:
        return _yes(f"{_code(x)} is a pointer (clang)", x.start)
    return _no(ctx, f"{_code(x)} is not a pointer: its type is {fact.spelling} "
               f"({ctx.unit.where(x.start)})", x.start)


def _qualifier(ctx: GuardContext, x: Binding, what: str) -> Verdict:
    node = _binding_node(x)
    decl = None
    if node is not None and _unwrap(node).type == "identifier":
        decl = _lookup(ctx, _text(ctx.unit.source, _unwrap(node)), x.start)
    if decl is not None:
        has = decl.const if what == "const" else decl.restrict
        spelled = "__restrict__" if what == "restrict" else "const"
        cite = _cite(ctx.unit, decl.start, decl.end)
        if has:
            return _yes(f"{_code(x)} is {spelled}", x.start)
        return _no(ctx, f"{_code(x)} is not {spelled} ({cite})", decl.start)
    fact, why = _type_fact(ctx, x)
    if fact is None:
        return _unknown(ctx, f"{_code(x)} is not a declared variable and {why}", x.start)
    pointee = fact.pointee if fact.pointee is not None else fact
    has = pointee.const if what == "const" else fact.restrict
    if has:
        return _yes(f"{_code(x)} is {what} (clang)", x.start)
    return _no(ctx, f"{_code(x)} is not {what}: its type is {fact.spelling} "
               f"({ctx.unit.where(x.start)})", x.start)


@predicate("is_const", _metavar())
def is_const(ctx: GuardContext, x: Binding) -> Verdict:
    """What $X points at (or $X itself, if not a pointer) is const: the kernel promises not
    to write it."""
    return _qualifier(ctx, x, "const")


@predicate("is_restrict", _metavar())
def is_restrict(ctx: GuardContext, x: Binding) -> Verdict:
    """$X is declared __restrict__: the compiler, and so klc, may assume no other pointer
    reaches its memory."""
    return _qualifier(ctx, x, "restrict")


@predicate("is_identifier", _metavar())
def is_identifier(ctx: GuardContext, x: Binding) -> Verdict:
    """$X bound a plain identifier (a variable name), not a larger expression."""
    node = _binding_node(x)
    if node is not None and len(x.nodes) == 1 and node.type in ("identifier",
                                                                 "field_identifier"):
        return _yes(f"{_code(x)} is an identifier", x.start)
    kind = node.type.replace("_", " ") if node is not None else "a sequence"
    return _no(ctx, f"{_code(x)} is not an identifier but {kind} ({ctx.unit.where(x.start)})",
               x.start)


@predicate("is_kernel_param", _metavar())
def is_kernel_param(ctx: GuardContext, x: Binding) -> Verdict:
    """$X is a parameter of the enclosing function, used directly (not a local copy)."""
    node = _binding_node(x)
    fn = ctx.function
    if node is None or _unwrap(node).type != "identifier" or fn is None:
        return _no(ctx, f"{_code(x)} is not a parameter name ({ctx.unit.where(x.start)})",
                   x.start)
    decl = _lookup(ctx, _text(ctx.unit.source, _unwrap(node)), x.start)
    if decl is not None and decl.origin == "parameter":
        return _yes(f"{_code(x)} is a parameter of {fn.name}", x.start)
    where_ = f" (declared at {_cite(ctx.unit, decl.start, decl.end)})" if decl else ""
    return _no(ctx, f"{_code(x)} is not a parameter of {fn.name}{where_}", x.start)


@predicate("same_text", ArgSpec("$A", frozenset({"metavar", "sequence"})),
           ArgSpec("$B", frozenset({"metavar", "sequence"})))
def same_text(ctx: GuardContext, a: Binding, b: Binding) -> Verdict:
    """$A and $B bound the same code, token for token (spacing and comments aside)."""
    src = ctx.unit.source
    ta = [t for n in a.nodes for t in _leaves(n, src)] or a.text.split()
    tb = [t for n in b.nodes for t in _leaves(n, src)] or b.text.split()
    if ta == tb:
        return _yes(f"{_code(a)} and {_code(b)} are the same code", a.start)
    return _no(ctx, f"{_code(a)} ({ctx.unit.where(a.start)}) and {_code(b)} "
               f"({ctx.unit.where(b.start)}) differ", a.start)


# --------------------------------------------------------------------------------------
# Constants


class _Eval:
    """Constant folding over tree-sitter nodes with C's integer semantics.

    Names resolve to ``#define``s, ``const``/``constexpr`` variables with constant
    initialisers, template arguments given by the spec, and (``runtime=True``) the spec's
    sizes. When a value is unknown, ``why`` says which sub-expression stopped it and
    ``definite`` whether it is certainly not a compile-time constant (a kernel parameter,
    a plain variable) or merely unknown to the tree (then clang may be asked)."""

    def __init__(self, ctx: GuardContext, runtime: bool = False):
        self.ctx = ctx
        self.unit = ctx.unit
        self.runtime = runtime
        self.why = ""
        self.definite = False
        # unknown for good: it needs a template parameter no spec or instantiation binds,
        # which clang cannot evaluate either (a value-dependent expression), so not asked
        self.settled = False
        self.sources: list[str] = []  # where names got their values, for reasons

    def text(self, text: str, depth: int = 0) -> int | float | None:
        parsed = parse_expression(text)
        if parsed is None:
            self.why = f"`{_snippet(text)}` does not parse as an expression"
            return None
        node, src = parsed
        return self.node(node, src, depth)

    def node(self, node: Node, src: bytes, depth: int = 0) -> int | float | None:
        if depth > 24:
            self.why = "the definitions are too deeply nested"
            return None
        node = _unwrap(node)
        t = node.type
        if t == "number_literal":
            return _c_number(_text(src, node))
        if t in ("true", "false"):
            return int(t == "true")
        if t == "char_literal":
            body = _text(src, node)[1:-1]
            return ord(body) if len(body) == 1 else None
        if t == "unary_expression":
            v = self.node(node.child_by_field_id(F_ARGUMENT), src, depth)
            return None if v is None else _unary(_operator(node), v)
        if t == "binary_expression":
            a = self.node(node.child_by_field_id(F_LEFT), src, depth)
            if a is None:
                return None
            b = self.node(node.child_by_field_id(F_RIGHT), src, depth)
            if b is None:
                return None
            v = _binary(_operator(node), a, b)
            if v is None:
                self.why = f"`{_snippet(_text(src, node))}` cannot be folded (division by zero?)"
            return v
        if t == "conditional_expression":
            c = self.node(node.child_by_field_id(F_CONDITION), src, depth)
            if c is None:
                return None
            return self.node(node.child_by_field_name("consequence" if c else "alternative"),
                             src, depth)
        if t == "sizeof_expression":
            ty = node.child_by_field_id(F_TYPE)
            size = SIZES.get(_norm_type(_text(src, ty))) if ty is not None else None
            if size is None:
                self.why = f"`{_snippet(_text(src, node))}`: size unknown to the tree"
            return size
        if t == "identifier":
            return self.name(_text(src, node), node.start_byte if src is self.unit.source
                             else self.ctx.match.start, depth)
        if t == "field_expression":
            arg = node.child_by_field_id(F_ARGUMENT)
            fld = node.child_by_field_id(F_FIELD)
            if arg is not None and fld is not None and _text(src, arg) == "blockDim":
                exact, _, how = _block_dims(self.ctx)
                axis = "xyz".find(_text(src, fld))
                if exact is not None and axis >= 0:
                    self.sources.append(how)
                    return exact[axis]
            self.why = f"`{_snippet(_text(src, node))}` is not a compile-time constant"
            self.definite = True
            return None
        ty, operand = _cast_target(node, src)
        if operand is not None:
            v = self.node(operand, src, depth)
            if v is not None and ty is not None and _norm_type(_text(src, ty)) in (
                    "int", "unsigned int", "long", "long long", "size_t", "unsigned long long"):
                v = int(v)
            return v
        self.why = f"`{_snippet(_text(src, node))}` is not a constant expression the tree knows"
        return None

    def name(self, name: str, at: int, depth: int) -> int | float | None:
        defines = _defines(self.unit)
        if name in defines:
            v = self.text(defines[name], depth + 1)
            if v is not None:
                self.sources.append(f"#define {name} {defines[name]}")
            return v
        fn = self.ctx.function
        if fn is not None and any(t.name == name and t.kind == "value"
                                  for t in fn.template_params):
            values, how = _template_values(self.ctx)
            if name in values:
                self.sources.append(f"template argument {name} = {values[name]} ({how})")
                return values[name]
            self.why = f"`{name}` is a template parameter of {fn.name}"
            self.settled = True
            return None
        decl = _lookup(self.ctx, name, at)
        if decl is not None and decl.origin == "parameter":
            if self.runtime and (sizes := _spec_sizes(self.ctx, name)) is not None \
                    and len(set(sizes)) == 1:
                self.sources.append(f"{name} = {sizes[0]} (spec)")
                return sizes[0]
            self.why = f"`{name}` is a parameter (a run-time value)"
            self.definite = True
            return None
        if decl is not None:
            if decl.init is not None and decl.pointer == 0 and (
                    "const" in decl.qualifiers or "constexpr" in decl.qualifiers):
                v = self.node(decl.init, self.unit.source, depth + 1)
                if v is not None:
                    self.sources.append(f"{_snippet(self.unit.text(decl.start, decl.end))}")
                return v
            self.why = (f"`{name}` is a variable, not a constant "
                        f"({_cite(self.unit, decl.start, decl.end)})")
            self.definite = True
            return None
        self.why = f"`{name}` is not defined in this file as a constant"
        return None


def _c_number(text: str) -> int | float | None:
    t = text.strip().lower().replace("'", "")
    try:
        if t.startswith(("0x", "-0x")):
            return int(t.rstrip("ul"), 16)
        if "." in t or "e" in t or t.endswith("f"):
            return float(t.rstrip("fl"))
        t = t.rstrip("ul")
        if len(t) > 1 and t.startswith("0") and t.isdigit():
            return int(t, 8)
        return int(t)
    except ValueError:
        return None


def _unary(op: str, v: int | float) -> int | float | None:
    if op == "-":
        return -v
    if op == "+":
        return v
    if op == "!":
        return int(not v)
    if op == "~" and isinstance(v, int):
        return ~v
    return None


def _binary(op: str, a: int | float, b: int | float) -> int | float | None:
    both_int = isinstance(a, int) and isinstance(b, int)
    if op in ("/", "%"):
        if b == 0:
            return None
        if both_int:
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C truncates
            return q if op == "/" else a - b * q
        return a / b if op == "/" else None
    simple: dict[str, Callable[[Any, Any], Any]] = {
        "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
        "<": lambda x, y: int(x < y), "<=": lambda x, y: int(x <= y),
        ">": lambda x, y: int(x > y), ">=": lambda x, y: int(x >= y),
        "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y),
        "&&": lambda x, y: int(bool(x) and bool(y)), "||": lambda x, y: int(bool(x) or bool(y)),
    }
    if op in simple:
        return simple[op](a, b)
    if both_int:
        bits: dict[str, Callable[[int, int], int]] = {
            "<<": lambda x, y: x << y, ">>": lambda x, y: x >> y, "&": lambda x, y: x & y,
            "|": lambda x, y: x | y, "^": lambda x, y: x ^ y}
        if op in bits and (op not in ("<<", ">>") or 0 <= b < 64):
            return bits[op](a, b)  # type: ignore[arg-type]
    return None


def _defines(unit: Unit) -> dict[str, str]:
    """Object-like ``#define NAME value`` of the unit (the last one wins)."""

    def build() -> dict[str, str]:
        out: dict[str, str] = {}
        for node in _nodes(unit, "preproc_def"):
            name = node.child_by_field_id(F_NAME)
            value = node.child_by_field_id(F_VALUE)
            if name is not None and value is not None:
                out[unit.text(name)] = unit.text(value).strip()
        return out

    return _memo(unit, "defines", build)


def _spec_for(ctx: GuardContext) -> Any:
    """The spec, if there is one and it describes the enclosing kernel."""
    spec = ctx.spec
    if spec is None:
        return None
    inner = getattr(spec, "spec", spec)  # a klc.spec.Bound wraps its Spec
    name = getattr(inner, "kernel_name", None)
    fn = ctx.function
    if fn is not None and name is not None and name != fn.name:
        return None
    return spec


def _spec_template(ctx: GuardContext) -> dict[str, str]:
    spec = _spec_for(ctx)
    inner = getattr(spec, "spec", spec)
    return dict(getattr(inner, "template", ()) or ())


def _template_values(ctx: GuardContext) -> tuple[dict[str, int | float], str]:
    """The numeric template arguments of the enclosing function, and where they come from:
    the spec's ``template:`` values when it gives any, else the function's one
    instantiation in the file (``k<256><<<...>>>``); none when it has several or none."""
    fn = ctx.function
    spec_t = _spec_template(ctx)
    values = {k: n for k, v in spec_t.items() if (n := _c_number(v)) is not None}
    if values or fn is None or not fn.template_params:
        return values, "spec"

    def build() -> list[dict[str, str]]:
        from klc.facts import instantiations

        return instantiations(ctx.unit, fn.name)

    inst = _memo(ctx.unit, f"instantiations:{fn.name}", build)
    if len(inst) != 1:
        return values, "spec"
    found = {k: n for k, v in inst[0].items() if (n := _c_number(v)) is not None}
    return found, "its one instantiation in the file"


def _spec_sizes(ctx: GuardContext, name: str) -> tuple[int, ...] | None:
    """Every value the spec gives a size parameter: its profiling size and each verification
    size. None when the spec does not fix it (the gate then derives sizes, including ones
    that are not multiples of the block size, so nothing may be assumed)."""
    spec = _spec_for(ctx)
    inner = getattr(spec, "spec", spec)
    sizes = getattr(inner, "sizes", None)
    verify = getattr(inner, "verify_sizes", None)
    if not isinstance(sizes, Mapping) or name not in sizes or not verify:
        return None
    values = [sizes[name]] + [v[name] for v in verify if name in v]
    if len(values) != 1 + len(verify):
        return None
    return tuple(int(v) for v in values)


def _constant(ctx: GuardContext, b: Binding, runtime: bool = False
              ) -> tuple[int | float | None, str, bool, list[str]]:
    """(value, why not, definitely not constant, sources) of a bound expression: the tree
    first, then clang for what the tree cannot resolve (template arguments, globals)."""
    node = _binding_node(b)
    ev = _Eval(ctx, runtime)
    if node is None:  # a fragment of a token (a metavariable in a #pragma line) or a run
        v = ev.text(b.text) if b.text.strip() else None
        return v, ev.why or f"{_code(b)} is not one expression", ev.definite, ev.sources
    v = ev.node(node, ctx.unit.source)
    if v is not None or ev.definite or ev.settled:
        return v, ev.why, ev.definite, ev.sources
    facts, why = _facts(ctx)
    if facts is None:
        return None, f"{ev.why}; {why}", False, []
    bindings = {k: v2 for k, v2 in _template_values(ctx)[0].items() if isinstance(v2, int)}
    value = facts.constant(b.start, b.end, bindings or None)
    if value is None or isinstance(value, str):
        return None, ev.why, False, []
    return value, "", False, ["clang"]


def _from(sources: list[str]) -> str:
    return f" (from {'; '.join(dict.fromkeys(sources))})" if sources else ""


@predicate("is_constant", _metavar("$E"))
def is_constant(ctx: GuardContext, e: Binding) -> Verdict:
    """$E is a compile-time constant: literals, #defines, const/constexpr variables,
    template arguments the spec gives, folded with C's arithmetic."""
    v, why, definite, sources = _constant(ctx, e)
    if v is not None:
        return _yes(f"{_code(e)} = {v}{_from(sources)}", e.start)
    if definite:
        return _no(ctx, f"{_code(e)} is not a compile-time constant: {why} "
                   f"({ctx.unit.where(e.start)})", e.start)
    return _unknown(ctx, f"{_code(e)} has no known value: {why} ({ctx.unit.where(e.start)})",
                    e.start)


@predicate("const_value", _metavar("$E"), ArgSpec("op", frozenset({"op", "string"})),
           ArgSpec("N", frozenset({"int", "float", "hole", "metavar"})))
def const_value(ctx: GuardContext, e: Binding, op: str, n: Any) -> Verdict:
    """The value of $E, known statically (a constant, or a size the spec fixes), compares
    with N: ``const_value($K, >=, 4)``."""
    if op not in COMPARISONS:
        return _no(ctx, f"const_value: unknown comparison {op!r}")
    rhs = _number_arg(ctx, n)
    if rhs is None:
        return _unknown(ctx, f"const_value: {_describe_arg(n)} has no known value")
    v, why, definite, sources = _constant(ctx, e, runtime=True)
    if v is None:
        verdict = _no if definite else _unknown
        return verdict(ctx, f"{_code(e)} has no known value: {why} "
                       f"({ctx.unit.where(e.start)})", e.start)
    if COMPARISONS[op](v, rhs):
        return _yes(f"{_code(e)} = {v} {op} {rhs}{_from(sources)}", e.start)
    return _no(ctx, f"{_code(e)} = {v}{_from(sources)} ({ctx.unit.where(e.start)}), "
               f"and not {v} {op} {rhs}", e.start)


@predicate("equals", _metavar("$E"), ArgSpec("N", frozenset({"int", "float", "hole",
                                                             "metavar"})))
def equals(ctx: GuardContext, e: Binding, n: Any) -> Verdict:
    """$E is known to equal N (shorthand for ``const_value($E, ==, N)``)."""
    return const_value(ctx, e, "==", n)


def _number_arg(ctx: GuardContext, n: Any) -> int | float | None:
    if isinstance(n, int | float):
        return n
    if isinstance(n, str):
        return _c_number(n)
    v, _, _, _ = _constant(ctx, n, runtime=True)
    return v


def _describe_arg(n: Any) -> str:
    return _code(n) if hasattr(n, "text") else repr(n)


@predicate("divisible", _metavar("$E"), ArgSpec("N", _VALUE))
def divisible(ctx: GuardContext, e: Binding, n: Any) -> Verdict:
    """$E is known to be a multiple of N: a constant, a #define, or a size the spec fixes
    (every profiling and verification size, or none counts)."""
    d = _number_arg(ctx, n)
    if not isinstance(d, int) or d == 0:
        return _unknown(ctx, f"divisible: the divisor {_describe_arg(n)} is not a known "
                        "non-zero integer")
    node = _binding_node(e)
    if node is not None and _unwrap(node).type == "identifier":
        sizes = _spec_sizes(ctx, _text(ctx.unit.source, _unwrap(node)))
        if sizes is not None:
            bad = [s for s in sizes if s % d]
            if bad:
                return _no(ctx, f"{_code(e)} takes the value {bad[0]} in the spec, not a "
                           f"multiple of {d}", e.start)
            return _yes(f"every spec size of {_code(e)} ({', '.join(map(str, sizes))}) is a "
                        f"multiple of {d}", e.start)
    v, why, definite, sources = _constant(ctx, e)
    if v is None and node is not None:
        # not one value, but maybe always a multiple: products, sums and shifts of
        # constants, spec sizes, locals set once and counted loop variables
        m, how = _multiple_of(ctx, node)
        if m == 0 or (m > 1 and m % d == 0):
            return _yes(f"{_code(e)} is a multiple of {m or d}: {how}", e.start)
    if v is None:
        extra = "" if _spec_for(ctx) is None else (
            "; the spec does not fix it for every verification size")
        verdict = _no if definite else _unknown
        return verdict(ctx, f"{_code(e)} is not known to be a multiple of {d}: {why}{extra} "
                       f"({ctx.unit.where(e.start)})", e.start)
    if isinstance(v, int) and v % d == 0:
        return _yes(f"{_code(e)} = {v} is a multiple of {d}{_from(sources)}", e.start)
    return _no(ctx, f"{_code(e)} = {v}{_from(sources)} is not a multiple of {d} "
               f"({ctx.unit.where(e.start)})", e.start)


@predicate("power_of_two", _metavar("$E"))
def power_of_two(ctx: GuardContext, e: Binding) -> Verdict:
    """$E is a known constant power of two (1, 2, 4, ...)."""
    v, why, definite, sources = _constant(ctx, e)
    if v is None:
        verdict = _no if definite else _unknown
        return verdict(ctx, f"{_code(e)} has no known value: {why} "
                       f"({ctx.unit.where(e.start)})", e.start)
    if isinstance(v, int) and v > 0 and v & (v - 1) == 0:
        return _yes(f"{_code(e)} = {v} is a power of two{_from(sources)}", e.start)
    return _no(ctx, f"{_code(e)} = {v}{_from(sources)} is not a power of two "
               f"({ctx.unit.where(e.start)})", e.start)


# --------------------------------------------------------------------------------------
# Alignment

CUDA_MALLOC_ALIGN = 256


def _alignment(ctx: GuardContext, node: Node, depth: int = 0) -> tuple[int | None, str]:
    """The known alignment in bytes of the address a pointer expression holds, and how it
    is known (or why not)."""
    unit, src = ctx.unit, ctx.unit.source
    node = _unwrap(node)
    if depth > 8:
        return None, "the pointer is defined through too many copies"
    _, operand = _cast_target(node, src)
    if operand is not None:
        return _alignment(ctx, operand, depth + 1)
    if node.type == "identifier":
        name = _text(src, node)
        decl = _lookup(ctx, name, node.start_byte)
        if decl is None:
            return None, f"`{name}` is not declared in this file"
        cite = _cite(unit, decl.start, decl.end)
        if decl.align is not None:
            return decl.align, f"__align__({decl.align}) ({cite})"
        if decl.origin == "parameter":
            fn = ctx.function
            if fn is None or not fn.is_kernel or decl.pointer == 0:
                return None, f"`{name}` is not a pointer parameter of a kernel ({cite})"
            if _assigned(ctx, name, fn.body_start, fn.body_end):
                return None, f"parameter `{name}` is reassigned in the kernel ({cite})"
            return CUDA_MALLOC_ALIGN, (f"kernel parameter `{name}`, a device allocation "
                                       f"at offset 0 ({cite})")
        if "__shared__" in decl.qualifiers or decl.origin == "global":
            natural = ALIGNS.get(decl.base, SIZES.get(_norm_type(decl.base)))
            if natural:
                return natural, f"the natural alignment of {decl.base} ({cite})"
            return None, f"the alignment of {decl.base} is unknown ({cite})"
        if decl.init is not None and decl.pointer > 0:
            if _assigned(ctx, name, decl.end, ctx.function.body_end if ctx.function else
                         decl.end):
                return None, f"`{name}` is reassigned after its declaration ({cite})"
            a, how = _alignment(ctx, decl.init, depth + 1)
            return a, f"{how}, copied into `{name}` ({cite})" if a else how
        return None, f"`{name}` is declared without a known alignment ({cite})"
    if node.type == "binary_expression" and _operator(node) in ("+", "-"):
        left, right = node.child_by_field_id(F_LEFT), node.child_by_field_id(F_RIGHT)
        for base, off in ((left, right), (right, left)):
            typ = _type_of(ctx, base)
            if typ is None or typ.pointer == 0:
                continue
            a, how = _alignment(ctx, base, depth + 1)
            if a is None:
                return None, how
            elem = SIZES.get(_norm_type(typ.base)) if typ.pointer == 1 else 8
            ev = _Eval(ctx)
            k = ev.node(off, src)
            if elem is not None and not isinstance(k, int):
                m, why = _multiple_of(ctx, off)  # x + (size_t)row * cols, cols a multiple of 4
                if m == 0:  # 0 * n: no offset at all
                    return a, f"{how}, offset by `{_snippet(_text(src, off))}`, which is 0 ({why})"
                if m > 1:
                    return math.gcd(a, m * elem), (f"{how}, offset by `{_snippet(_text(src, off))}`"
                                                   f", a multiple of {m} × {elem} bytes ({why})")
                if why:
                    return None, (f"the offset `{_snippet(_text(src, off))}` of "
                                  f"`{_snippet(_text(src, node))}` is neither a known constant "
                                  f"nor a known multiple of more than one element ({why})")
            if elem is None or not isinstance(k, int):
                return None, (f"the offset `{_snippet(_text(src, off))}` of "
                              f"`{_snippet(_text(src, node))}` is not a known constant")
            return math.gcd(a, abs(k) * elem) or a, (f"{how}, offset by {k} × {elem} bytes")
        return None, f"`{_snippet(_text(src, node))}` is not pointer arithmetic the tree knows"
    if node.type == "pointer_expression" and _operator(node) == "&":
        inner = _unwrap(node.child_by_field_id(F_ARGUMENT))
        if inner.type == "subscript_expression":
            base = inner.child_by_field_id(F_ARGUMENT)
            idx = inner.child_by_field_id(F_INDICES)
            idx_node = idx.named_children[0] if idx is not None and idx.named_children else idx
            typ = _type_of(ctx, base)
            a, how = _alignment(ctx, base, depth + 1)
            k = _Eval(ctx).node(idx_node, src) if idx_node is not None else None
            if a is None or typ is None or not isinstance(k, int):
                return None, how if a is None else "the index is not a known constant"
            elem = SIZES.get(_norm_type(typ.base), 0)
            return math.gcd(a, abs(k) * elem) or a, f"{how}, element {k}"
    return None, f"`{_snippet(_text(src, node))}` has no alignment the tree knows"


def _multiple_of(ctx: GuardContext, node: Node, depth: int = 0) -> tuple[int, str]:
    """A number the integer expression is known to be a multiple of (1: nothing known; 0:
    it is 0), and why: constants, kernel size parameters the spec fixes (every profiling and
    verification size, as ``divisible`` reads them), and their products, sums and shifts."""
    src = ctx.unit.source
    node = _unwrap(node)
    k = _Eval(ctx).node(node, src)
    if isinstance(k, int):
        return abs(k), f"`{_snippet(_text(src, node))}` = {k}"
    if depth > 8:
        return 1, ""
    _, operand = _cast_target(node, src)
    if operand is not None:
        return _multiple_of(ctx, operand, depth + 1)
    if node.type == "identifier":
        name = _text(src, node)
        decl, fn = _lookup(ctx, name, node.start_byte), ctx.function
        if decl is not None and fn is not None and decl.origin == "local" \
                and decl.pointer == 0 and decl.init is not None:
            return _local_multiple(ctx, name, decl, fn, depth)
        sizes = _spec_sizes(ctx, name)
        if sizes is None or decl is None or decl.origin != "parameter" or fn is None \
                or _assigned(ctx, name, fn.body_start, fn.body_end):
            return 1, ""
        g = functools.reduce(math.gcd, sizes)
        return g, f"the spec gives `{name}` the sizes {', '.join(map(str, sizes))}: " \
                  f"multiples of {g}"
    if node.type == "binary_expression" and _operator(node) in ("*", "+", "-", "<<"):
        left, right = node.child_by_field_id(F_LEFT), node.child_by_field_id(F_RIGHT)
        (a, why_a), (b, why_b) = (_multiple_of(ctx, left, depth + 1),
                                  _multiple_of(ctx, right, depth + 1))
        why = "; ".join(w for w in (why_a, why_b) if w)
        if _operator(node) == "*":
            return a * b, why
        if _operator(node) == "<<":
            shift = _Eval(ctx).node(right, src)
            return (a << shift, why_a) if isinstance(shift, int) and 0 <= shift < 32 else (1, "")
        return math.gcd(a, b), why
    return 1, ""


def _local_multiple(ctx: GuardContext, name: str, decl: _Decl, fn: Function, depth: int
                    ) -> tuple[int, str]:
    """What a local integer is known to be a multiple of: its initialiser's, when nothing
    assigns it later; a for loop's own variable, its start's and its constant step's."""
    unit, src = ctx.unit, ctx.unit.source
    node: Node | None = unit.root.descendant_for_byte_range(decl.start, decl.end)
    while node is not None and (node.start_byte, node.end_byte) != (decl.start, decl.end):
        node = node.parent
    assert decl.init is not None
    loop = node.parent if node is not None else None
    if loop is not None and loop.type == "for_statement" \
            and loop.child_by_field_id(F_INITIALIZER) == node:
        update = loop.child_by_field_id(F_UPDATE)
        step = _step(update, src, name, _Eval(ctx)) if update is not None else None
        if step is None or step[0] != "+" or _assigned_in_body(ctx, loop, name):
            return 1, ""
        a, why = _multiple_of(ctx, decl.init, depth + 1)
        m = math.gcd(a, abs(step[1]))
        return m, (f"`{name}` starts at `{_snippet(_text(src, decl.init))}` and steps by "
                   f"{step[1]}" + (f" ({why})" if why else ""))
    if _assigned(ctx, name, decl.end, fn.body_end) or _address_taken(src, name, decl.end,
                                                                       fn.body_end):
        return 1, ""
    a, why = _multiple_of(ctx, decl.init, depth + 1)
    return a, why


def _address_taken(src: bytes, name: str, start: int, end: int) -> bool:
    """``&name`` in [start, end): something may write the variable through a pointer."""
    return re.search(rb"&\s*" + re.escape(name.encode()) + rb"\b(?!\s*\[)",
                     src[start:end]) is not None


def _element_alignment(ctx: GuardContext, array: Node, index: Node) -> tuple[int | None, str]:
    """The known alignment in bytes of ``&array[index]``, where ``array`` may itself be
    subscripted (``As[buf][k]``): the array's own alignment, and each index times the bytes
    one step of it spans (its stride) a known multiple (or zero)."""
    src = ctx.unit.source
    indices = [index]
    base = _unwrap(array)
    while base.type == "subscript_expression":
        idx = base.child_by_field_id(F_INDICES)
        inner = [c for c in idx.named_children if c.type != "comment"] if idx else []
        if len(inner) != 1:
            return None, f"`{_snippet(_text(src, base))}` is not a plain subscript"
        indices.insert(0, inner[0])
        base = _unwrap(base.child_by_field_id(F_ARGUMENT))
    if base.type != "identifier":
        return None, f"`{_snippet(_text(src, base))}` is not a named array or pointer"
    name = _text(src, base)
    decl = _lookup(ctx, name, base.start_byte)
    if decl is None:
        return None, f"`{name}` is not declared in this file"
    elem = SIZES.get(_norm_type(decl.base))
    if elem is None:
        return None, f"the size of {decl.base} is unknown to the tree"
    dims: tuple[str, ...] = decl.dims
    if not dims and not (decl.pointer == 1 and len(indices) == 1):
        return None, f"`{name}` is not an array of {len(indices)} dimension(s) or a pointer"
    if dims and len(indices) > len(dims):
        return None, f"`{name}` has {len(dims)} dimension(s), not {len(indices)}"
    a, how = _alignment(ctx, base)
    if a is None:
        return None, how
    parts = [how]
    ev = _Eval(ctx)
    for j, idx in enumerate(indices):
        m, why = _multiple_of(ctx, idx)
        if m == 0:
            continue  # index 0: no offset
        stride = elem
        for d in dims[j + 1:]:
            size = ev.text(d) if d else None
            if not isinstance(size, int):
                return None, (f"the stride of index `{_snippet(_text(src, idx))}` of `{name}` "
                              f"is unknown: dimension `{d}`: {ev.why}")
            stride *= size
        a = math.gcd(a, m * stride)
        parts.append(f"`{_snippet(_text(src, idx))}` × {stride} B, a multiple of {m * stride} B"
                     + (f" ({why})" if why and m > 1 else ""))
    return a, "; ".join(parts)


@predicate("element_aligned", _metavar("$A"), _metavar("$I"),
           ArgSpec("N", frozenset({"int", "hole"})))
def element_aligned(ctx: GuardContext, arr: Binding, i: Binding, n: Any) -> Verdict:
    """The address of element $A[$I] is known N-byte aligned ($A may be subscripted itself:
    As[buf][k]): the array's alignment (__align__, natural, a kernel pointer parameter) and
    every index times its stride a known multiple of N (constants, spec sizes, template
    arguments, locals initialised from them, loop variables with a constant start and
    step)."""
    want = _number_arg(ctx, n)
    if not isinstance(want, int) or want <= 0:
        return _no(ctx, f"element_aligned: {n!r} is not a positive integer")
    array, index = _binding_node(arr), _binding_node(i)
    if array is None or index is None:
        return _no(ctx, f"{_code(arr)}[{_code(i)}]: a sequence is not an array element",
                   arr.start)
    what = f"`&{_snippet(arr.text)}[{_snippet(i.text)}]`"
    a, how = _element_alignment(ctx, array, index)
    if a is None:
        return _no(ctx, f"{what} is not known to be {want}-byte aligned: {how}", arr.start)
    if a % want == 0:
        return _yes(f"{what} is {want}-byte aligned: {how}", arr.start)
    return _no(ctx, f"{what} is only known to be {a}-byte aligned, not {want}: {how}",
               arr.start)


@predicate("aligned", _metavar(), ArgSpec("N", frozenset({"int", "hole"})))
def aligned(ctx: GuardContext, x: Binding, n: Any) -> Verdict:
    """Pointer $X is known aligned to N bytes: __align__, a vector element type (float4),
    a kernel pointer parameter used at offset 0 (cudaMalloc aligns to 256), or offsets from
    one that are constants or known multiples (spec sizes: x + row * cols)."""
    want = _number_arg(ctx, n)
    if not isinstance(want, int) or want <= 0:
        return _no(ctx, f"aligned: {n!r} is not a positive integer")
    node = _binding_node(x)
    if node is None:
        return _no(ctx, f"{_code(x)} is a sequence, not a pointer", x.start)
    typ = _type_of(ctx, node)
    if typ is not None and typ.pointer > 0:
        natural = ALIGNS.get(typ.base, SIZES.get(_norm_type(typ.base), 0))
        if typ.pointer == 1 and natural >= want and natural % want == 0:
            return _yes(f"{_code(x)} points to {typ.base}, aligned to {natural} bytes", x.start)
    a, how = _alignment(ctx, node)
    if a is None:
        facts, _ = _facts(ctx) if typ is None else (None, "")
        fact = facts.type_of(x.start, x.end) if facts is not None else None
        pointee = getattr(fact, "pointee", None)
        align = getattr(pointee, "align_bytes", None)
        if align and align >= want and align % want == 0:
            return _yes(f"{_code(x)} points to {pointee.spelling}, aligned to {align} bytes "
                        "(clang)", x.start)
        return _no(ctx, f"{_code(x)} is not known to be {want}-byte aligned: {how}", x.start)
    if a % want == 0:
        return _yes(f"{_code(x)} is {want}-byte aligned: {how}", x.start)
    return _no(ctx, f"{_code(x)} is only known to be {a}-byte aligned, not {want}: {how}",
               x.start)


# --------------------------------------------------------------------------------------
# Writes and aliasing

_READ_ONLY_CALLS = re.compile(r"^(?:__ld\w*|__ldg|min|max|fminf?|fmaxf?|make_\w+|printf|"
                              r"static_cast|reinterpret_cast|const_cast|__shfl\w*|sizeof)$")
_STORE_CALLS = re.compile(r"^(?:__st\w+|memcpy|memset|cuda::memcpy_async|__pipeline_memcpy_async"
                          r"|cp_async\w*)$")


def _region(ctx: GuardContext, region: str) -> tuple[int, int, str] | Verdict:
    """The byte span and a description of ``anchor``, ``loop`` or ``kernel``."""
    m, fn = ctx.match, ctx.function
    if region == "anchor":
        return m.start, m.end, f"the anchor ({ctx.unit.where(m.start)})"
    if fn is None:
        return _no(ctx, f"the match ({ctx.unit.where(m.start)}) is not inside a function")
    if region == "loop":
        loop = _enclosing_loop(fn, m.start, m.end)
        if loop is None:
            return _no(ctx, f"the match ({ctx.unit.where(m.start)}) is not inside a loop")
        return loop.start, loop.end, f"the {loop.kind} loop at {ctx.unit.where(loop.start)}"
    return fn.body_start, fn.body_end, f"{fn.kind} function `{fn.name}`"


def _enclosing_loop(fn: Function, start: int, end: int) -> Loop | None:
    best = None
    for lp in fn.loops:
        if lp.start <= start and end <= lp.end and (lp.start, lp.end) != (start, end) \
                and (best is None or lp.start >= best.start):
            best = lp
    return best


def _aliases(ctx: GuardContext, name: str) -> frozenset[str]:
    """``name`` and the local pointers initialised from it (``float* p = x + off``); once
    per function and name."""
    fn = ctx.function
    if fn is None:
        return frozenset({name})
    return _memo(ctx.unit, f"aliases:{fn.start}:{fn.end}:{name}",
                 lambda: frozenset(_find_aliases(ctx, fn, name)))


def _find_aliases(ctx: GuardContext, fn: Function, name: str) -> set[str]:
    names = {name}
    src = ctx.unit.source
    # what may hold an address taken from another variable, found once per function (each
    # one's roots read on first need, once): the closure over them is the same in any order
    pointers = _memo(ctx.unit, f"pointers:{fn.start}:{fn.end}",
                     lambda: _address_holders(ctx.unit, fn))
    changed = True
    while changed:
        changed = False
        for entry in pointers:
            other = entry[0]
            if other in names:
                continue
            if entry[2] is None:
                entry[2] = _roots(entry[1], src)
            if entry[2] & names:
                names.add(other)
                changed = True
    return names


def _address_holders(unit: Unit, fn: Function) -> list[list[Any]]:
    """[holder, the expression it takes an address from, None] for each place in ``fn``
    where a variable may come to reach memory through another: an initialised local pointer
    (``float *d_Src = d_Input + base;``), reference (``Node &node = nodes[i];``) or ``auto``;
    an assignment of an address to a variable (``p = x + off;``); an address stored into an
    aggregate or array (``s.ptr = x;``, ``Params p = {x, n};``: then ``p`` reaches ``x``).
    Over-approximate on purpose: a write through any holder counts as a write."""
    src = unit.source
    decls = _function_declarations(unit, fn)
    levels = {p.name: p.pointer + (1 if p.array else 0) for p in fn.params}
    for d in decls:
        levels[d.name] = max(levels.get(d.name, 0), d.pointer)
    out: list[list[Any]] = []
    for d in decls:
        if d.init is None:
            continue
        if d.pointer > 0 or d.reference:
            out.append([d.name, d.init, None])
        elif d.init.type in ("initializer_list", "argument_list") or d.base == "auto":
            for part in (d.init.named_children if d.base != "auto" else [d.init]):
                if part.type != "comment" and _pointer_valued(part, src, levels):
                    out.append([d.name, part, None])
    for node in _in(_nodes(unit, "assignment_expression"), fn.body_start, fn.body_end):
        if _operator(node) != "=":
            continue
        left, right = node.child_by_field_id(F_LEFT), node.child_by_field_name("right")
        if left is None or right is None or not _pointer_valued(right, src, levels):
            continue
        holder = _unwrap(left)
        if holder.type == "identifier":
            out.append([_text(src, holder), right, None])
        else:
            for root in _roots(holder, src):
                out.append([root, right, None])
    return out


def _pointer_valued(node: Node, src: bytes, levels: Mapping[str, int], depth: int = 0) -> bool:
    """Is this expression an address (not a value loaded through one)? ``levels``: the
    pointer levels of the function's parameters and locals by name."""
    node = _unwrap(node)
    t = node.type
    if depth > 50:
        return True  # (deeper than real code: count it as an address, which is the safe side)
    if t == "identifier":
        return levels.get(_text(src, node), 0) > 0
    if t == "pointer_expression":
        if _operator(node) == "&":
            return True
        arg = node.child_by_field_id(F_ARGUMENT)
        return arg is not None and _pointer_level(arg, src, levels) > 1
    if t == "subscript_expression":
        return _pointer_level(node.child_by_field_id(F_ARGUMENT), src, levels) > 1
    if t == "binary_expression" and _operator(node) in ("+", "-"):
        return any(_pointer_valued(c, src, levels, depth + 1) for c in
                   (node.child_by_field_name("left"), node.child_by_field_name("right"))
                   if c is not None)
    if t == "conditional_expression":
        return any(_pointer_valued(c, src, levels, depth + 1) for c in
                   (node.child_by_field_name("consequence"),
                    node.child_by_field_name("alternative")) if c is not None)
    ty, _ = _cast_target(node, src)
    return ty is not None and "*" in _text(src, ty)


def _pointer_level(node: Node | None, src: bytes, levels: Mapping[str, int]) -> int:
    node = _unwrap(node) if node is not None else None
    if node is None:
        return 0
    if node.type == "identifier":
        return levels.get(_text(src, node), 0)
    if node.type == "subscript_expression":
        return max(0, _pointer_level(node.child_by_field_id(F_ARGUMENT), src, levels) - 1)
    return 0


def _assigned(ctx: GuardContext, name: str, start: int, end: int) -> bool:
    """Is the variable ``name`` itself assigned or incremented in [start, end)?"""
    src = ctx.unit.source
    for node in _in(_nodes(ctx.unit, "assignment_expression", "update_expression"), start,
                    end):
        target = node.child_by_field_name("left" if node.type == "assignment_expression"
                                          else "argument")
        if target is not None and _unwrap(target).type == "identifier" \
                and _text(src, _unwrap(target)) == name:
            return True
    return False


def _writes(ctx: GuardContext, names: frozenset[str], start: int, end: int
            ) -> Iterator[tuple[int, int, str]]:
    """Places in [start, end) that may write memory reached through one of ``names``."""
    entries = _writes_around(ctx, start, end)
    i = bisect.bisect_left(entries, start, key=_entry_start)
    n = len(entries)
    while i < n:
        s, e, roots, what = entries[i]
        if s >= end:
            return
        if e <= end and not roots.isdisjoint(names):
            yield s, e, what
        i += 1


_REASSIGNS = "reassigns the pointer"  # (an assignment or ++/-- of the variable itself)


def _writes_around(ctx: GuardContext, start: int, end: int
                   ) -> list[tuple[int, int, frozenset[str], str]]:
    """``_write_entries`` of the enclosing function's body when it holds [start, end), else
    of the whole unit: found once per function."""
    fn = ctx.function
    lo, hi = (fn.body_start, fn.body_end) if fn is not None and \
        fn.body_start <= start and end <= fn.body_end else (0, len(ctx.unit.source) + 1)
    return _memo(ctx.unit, f"write_entries:{lo}:{hi}", lambda: _write_entries(ctx.unit, lo, hi))


def _entry_start(entry: tuple[int, int, frozenset[str], str]) -> int:
    return entry[0]


def _write_entries(unit: Unit, lo: int, hi: int) -> list[tuple[int, int, frozenset[str], str]]:
    """Every place in [lo, hi) (a function body) that may write memory, once: (start, end,
    the variables the written memory may be reached through, how), in source order (what
    ``_writes`` asks of each guard's region and buffers)."""
    src = unit.source
    out: list[tuple[int, int, frozenset[str], str]] = []
    nodes = _nodes(unit, "assignment_expression", "update_expression", "call_expression",
                   "gnu_asm_expression")
    for node in _in(nodes, lo, hi):
        t = node.type
        s, e = node.start_byte, node.end_byte
        if t in ("assignment_expression", "update_expression"):
            target = node.child_by_field_id(F_LEFT if t == "assignment_expression"
                                            else F_ARGUMENT)
            if target is None:
                continue
            target = _unwrap(target)
            if target.type == "identifier":
                out.append((s, e, frozenset({_text(src, target)}), _REASSIGNS))
                continue
            roots = _roots(target, src)
            if roots:
                out.append((s, e, frozenset(roots), "stores through it"))
        elif t == "gnu_asm_expression":
            out.append((s, e, frozenset(n for n, _ in _identifiers(node, src)),
                        "passes it to inline asm"))
        else:
            fn_node = node.child_by_field_id(F_FUNCTION)
            args = node.child_by_field_id(F_ARGUMENTS)
            if fn_node is None or args is None:
                continue
            callee = "".join(_text(src, fn_node).split())
            method = re.split(r"::|\.|->", callee)[-1]
            method = method.split("<", 1)[0] if method.endswith(">") else method  # casts
            if fn_node.type == "field_expression":  # obj.f(...): the object may change
                obj = fn_node.child_by_field_id(F_ARGUMENT)
                roots = _roots(obj, src) if obj is not None else set()
                if roots:
                    out.append((s, e, frozenset(roots),
                                f"calls its method {method}, which may write to it"))
            if _READ_ONLY_CALLS.match(method) or "<<<" in unit.text(node):
                continue
            for k, arg in enumerate(a for a in args.named_children if a.type != "comment"):
                roots = _roots(arg, src)
                if not roots or not _passes_pointer(arg, src):
                    continue
                if method.startswith("atomic") or _STORE_CALLS.match(callee):
                    if k == 0:
                        out.append((s, e, frozenset(roots), f"writes it with {callee}"))
                else:
                    out.append((s, e, frozenset(roots),
                                f"passes it to {callee}, which may write through it"))
    return out


def _passes_pointer(arg: Node, src: bytes) -> bool:
    """Does this call argument hand over an address (not a loaded value)?"""
    arg = _unwrap(arg)
    if arg.type == "identifier":
        return True
    if arg.type == "pointer_expression":
        return _operator(arg) == "&"
    if arg.type == "binary_expression":
        return _operator(arg) in ("+", "-")
    _, operand = _cast_target(arg, src)
    return operand is not None and _passes_pointer(operand, src)


def _buffer_name(ctx: GuardContext, x: Binding) -> str | None:
    node = _binding_node(x)
    if node is None:
        return None
    roots = _roots(node, ctx.unit.source)
    return next(iter(roots)) if len(roots) == 1 else None


@predicate("no_write", _metavar(), _region_arg(optional=False))
def no_write(ctx: GuardContext, x: Binding, region: str = "kernel") -> Verdict:
    """Nothing in REGION (anchor, loop, kernel) writes memory through buffer $X or a local
    pointer derived from it: no assignment, ++/--, atomic, store intrinsic, asm, or call
    that receives the pointer."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    name = _buffer_name(ctx, x)
    if name is None:
        return _no(ctx, f"{_code(x)} is not a single buffer ({ctx.unit.where(x.start)})",
                   x.start)
    for s, e, what in _writes(ctx, _aliases(ctx, name), start, end):
        return _no(ctx, f"`{name}` is written in {label}: {_cite(ctx.unit, s, e)} {what}", s)
    return _yes(f"no write through `{name}` in {label}", x.start)


@predicate("const_safe", _metavar())
def const_safe(ctx: GuardContext, x: Binding) -> Verdict:
    """Kernel pointer parameter $X can point to const: the kernel writes nothing through it
    or anything derived from it (``no_write($X, kernel)``: aliases, references, escapes into
    aggregates, member calls, calls that receive it); nothing derived from it is a non-const
    pointer or reference (``float *p = x + off;``) or a ``reinterpret_cast``/``static_cast``
    to one, which would not compile with a const source; and the kernel's type may change:
    its name is used only where it is called or launched, and the file declares it once
    (``kernel = &copy;`` with a ``void (*)(float*)``, a prototype or an explicit
    instantiation would no longer match). Where the file cannot tell, no."""
    verdict = no_write(ctx, x, "kernel")
    if not verdict.ok:
        return verdict
    fn, unit, src = ctx.function, ctx.unit, ctx.unit.source
    name = _buffer_name(ctx, x)
    if fn is None or name is None:
        return _no(ctx, f"{_code(x)} is not a buffer of a function", x.start)
    names = _aliases(ctx, name)
    for d in _function_declarations(unit, fn):
        if d.init is not None and (d.pointer > 0 or d.reference) and not d.const \
                and _roots(d.init, src) & names:
            return _no(ctx, f"`{d.name}` ({_cite(unit, d.start, d.end)}) is a non-const "
                       f"{'reference' if d.reference else 'pointer'} into `{name}`", d.start)
    for node in _in(_nodes(unit, "call_expression", "cast_expression"), fn.body_start,
                    fn.body_end):
        ty, operand = _cast_target(node, src)
        if ty is None or operand is None or node.type == "cast_expression":
            continue  # (a C-style cast may drop const: it compiles)
        target = _text(src, ty)
        if ("*" in target or "&" in target) and "const" not in target \
                and _roots(operand, src) & names:
            return _no(ctx, f"{_cite(unit, node.start_byte, node.end_byte)} casts `{name}` to "
                       f"the non-const `{' '.join(target.split())}`", node.start_byte)
    why = _kernel_type_pinned(ctx, fn)
    if why:
        return _no(ctx, why, x.start)
    return _yes(f"`{name}` is only read in `{fn.name}`, through const views, and the type "
                f"of `{fn.name}` is free to change", x.start)


# predicates that a simplification's guard needs and its inverse skill does not: klc learn
# leaves them out of the skill's guard (removing const needs every caller to pass non-const
# pointers; adding it does not)
PASS_ONLY_PREDICATES = frozenset({"const_removable"})


@predicate("const_removable", _metavar())
def const_removable(ctx: GuardContext, x: Binding) -> Verdict:
    """Removing const from kernel pointer parameter $X's pointee keeps the file compiling:
    the kernel's name is used nowhere else in the file (a launch or a call could pass a
    const pointer, which no longer converts), is declared once, and no header the file
    includes with quotes names it. For simplifications (the inverse, adding const, needs
    ``const_safe`` instead)."""
    fn = ctx.function
    if fn is None:
        return _no(ctx, f"{_code(x)} is not in a function", x.start)
    why = _kernel_type_pinned(ctx, fn, calls_too=True)
    if why:
        return _no(ctx, why, x.start)
    return _yes(f"`{fn.name}` is not called, launched or declared elsewhere in this file",
                x.start)


def _kernel_type_pinned(ctx: GuardContext, fn: Function, calls_too: bool = False) -> str:
    """Why the function's parameter types may not change ('' when they may): its name used
    other than as a callee or a launch (any use, with ``calls_too``), declared elsewhere in
    the file, or in a header the file includes with quotes."""
    unit, src = ctx.unit, ctx.unit.source
    declarator = fn.node.child_by_field_id(F_DECLARATOR)
    own = (declarator.start_byte, declarator.end_byte) if declarator is not None else (0, 0)
    word = fn.name.encode()
    root = unit.tree.root_node
    for m in re.finditer(rb"(?<![\w])" + re.escape(word) + rb"(?![\w])", src):
        if own[0] <= m.start() < own[1]:
            continue
        node = root.descendant_for_byte_range(m.start(), m.end())
        if node is None or node.type != "identifier" \
                or node.start_byte != m.start():
            continue  # (in a comment or a string)
        parent = node.parent
        if parent is not None and parent.type == "template_function":
            node, parent = parent, parent.parent
        if parent is not None and parent.type == "call_expression" \
                and parent.child_by_field_id(F_FUNCTION) == node:
            if calls_too:
                where = _cite(unit, parent.start_byte, parent.end_byte)
                return f"`{fn.name}` is called or launched at {where}"
            continue
        if parent is not None and parent.type == "function_declarator":
            where = _cite(unit, parent.start_byte, parent.end_byte)
            return f"`{fn.name}` is declared again at {where}: the declarations would disagree"
        where = _cite(unit, node.start_byte, node.end_byte)
        return f"the name `{fn.name}` is used at {where}, where the kernel's type matters"
    import os

    from klc.fsutil import read_input

    folder = os.path.dirname(unit.path)
    for m in re.finditer(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', src, re.M):
        header = os.path.join(folder, m.group(1).decode("utf-8", "replace"))
        if not os.path.lexists(header):
            continue  # (on the build's include path, which the file does not say)
        try:
            text = read_input(header, "header")  # regular files only, never blocks
        except KlcError as e:
            return f"cannot read the included {m.group(1).decode()} to check it: {e}"
        if re.search(rb"(?<![\w])" + re.escape(fn.name.encode()) + rb"(?![\w])", text):
            return (f"`{fn.name}` is named in the included {m.group(1).decode()}: a declaration "
                    "there would no longer agree")
    return ""


@predicate("writes_in", _metavar(), _region_arg(optional=False))
def writes_in(ctx: GuardContext, x: Binding, region: str = "kernel") -> Verdict:
    """Something in REGION writes memory through buffer $X (the negation of no_write, for
    rules that read better with ``not``)."""
    v = no_write(ctx, x, region)
    if v.unknown:
        return v
    return Verdict(not v.ok, v.reason, v.start)


@predicate("no_alias", _metavar("$X"), _metavar("$Y"))
def no_alias(ctx: GuardContext, x: Binding, y: Binding) -> Verdict:
    """Buffers $X and $Y cannot overlap in a way that matters: both are __restrict__, or
    neither is written in the kernel, or the spec allocates them as distinct arguments."""
    a, b = _buffer_name(ctx, x), _buffer_name(ctx, y)
    if a is None or b is None:
        return _no(ctx, f"{_code(x if a is None else y)} is not a single buffer", x.start)
    if a == b:
        return _no(ctx, f"{_code(x)} and {_code(y)} are the same buffer `{a}`", x.start)
    da, db = _lookup(ctx, a, x.start), _lookup(ctx, b, y.start)
    if da is not None and db is not None and da.restrict and db.restrict:
        return _yes(f"`{a}` and `{b}` are both __restrict__", x.start)
    fn = ctx.function
    written: list[str] = []
    if fn is not None:
        for name in (a, b):
            for s, e, what in _writes(ctx, _aliases(ctx, name), fn.body_start, fn.body_end):
                written.append(f"`{name}` is written ({_cite(ctx.unit, s, e)} {what})")
                break
        if not written:
            return _yes(f"neither `{a}` nor `{b}` is written in `{fn.name}`", x.start)
    spec = _spec_for(ctx)
    inner = getattr(spec, "spec", spec)
    buffers = {arg.name for arg in getattr(inner, "args", ()) if getattr(arg, "shape", None)}
    if da is not None and db is not None and da.origin == db.origin == "parameter" \
            and {a, b} <= buffers:
        return _yes(f"`{a}` and `{b}` are distinct buffers allocated by the spec", x.start)
    missing = [n for n, d in ((a, da), (b, db)) if d is None or not d.restrict]
    return _no(ctx, f"`{a}` and `{b}` may alias: {', '.join(f'`{n}`' for n in missing)} "
               f"not __restrict__, and {'; '.join(written) or 'no spec says otherwise'}",
               x.start)


@predicate("no_memory_update", ArgSpec("$$$S", frozenset({"metavar", "sequence"})))
def no_memory_update(ctx: GuardContext, stmts: Binding) -> Verdict:
    """The code bound to $$$S updates no memory in place: no compound assignment (``+=``,
    ``|=``, ...), ``++`` or ``--`` on an array element, a field or through a pointer. Run by
    several threads at once with the same values (a row's body given to a whole warp), such
    code leaves memory as one run does; an update in place would be applied once per
    thread."""
    unit, src = ctx.unit, ctx.unit.source
    for node in _in(_nodes(unit, "assignment_expression", "update_expression"), stmts.start,
                    stmts.end):
        if node.type == "assignment_expression":
            if _operator(node) == "=":
                continue
            target = node.child_by_field_id(F_LEFT)
        else:
            target = node.child_by_field_id(F_ARGUMENT)
        if target is not None and _unwrap(target).type != "identifier":
            return _no(ctx, f"`{_snippet(_text(src, node))}` ({unit.where(node.start_byte)}) "
                       "updates memory in place", node.start_byte)
    return _yes(f"{_code(stmts)} updates no memory in place", stmts.start)


@predicate("double_buffered", ArgSpec("NAME", frozenset({"hole", "name", "string"})))
def double_buffered(ctx: GuardContext, name: Any) -> Verdict:
    """The matched barrier may become the toggle ``NAME ^= 1`` of a double buffer: it is
    the last statement of the body of the loop around it, an earlier barrier in that body
    separates the step's stores from its reads, every __shared__ array the loop touches has
    a first dimension of 2 and is subscripted first with NAME everywhere in the loop, and
    NAME is a variable declared before the loop that nothing in the loop assigns and nothing
    after it reads. Then the next step stores into the other buffer while slow warps still
    read this one, and the barrier before the reads keeps each buffer from being reused
    too early."""
    unit, src, fn = ctx.unit, ctx.unit.source, ctx.function
    word = str(name)
    if fn is None or not re.fullmatch(r"[A-Za-z_]\w*", word):
        return _no(ctx, f"`{word}` is not a variable name in a function")
    loop, why = _loop_node(ctx, "loop")
    if loop is None:
        return _no(ctx, why)
    body = loop.child_by_field_id(F_BODY)
    stmts = [c for c in body.named_children if c.type != "comment"] if body is not None else []
    anchor = ctx.match.nodes[-1]
    if not stmts or (stmts[-1].start_byte, stmts[-1].end_byte) != (anchor.start_byte,
                                                                   anchor.end_byte):
        return _no(ctx, f"the barrier ({unit.where(ctx.match.start)}) does not end the body "
                   f"of the loop at {unit.where(loop.start_byte)}")
    if not any(_BLOCK_BARRIER.match(b.name) and body.start_byte < b.start < ctx.match.start
               for b in fn.barriers):
        return _no(ctx, f"no other barrier in the loop at {unit.where(loop.start_byte)} "
                   "separates its stores from its reads")
    decl = _lookup(ctx, word, loop.start_byte)
    if decl is None or decl.start >= loop.start_byte or decl.pointer:
        return _no(ctx, f"`{word}` is not a variable declared before the loop")
    if _assigned(ctx, word, loop.start_byte, loop.end_byte):
        return _no(ctx, f"`{word}` is assigned in the loop at {unit.where(loop.start_byte)}")
    after = re.search(rb"(?<![\w.])" + re.escape(word.encode()) + rb"\b", src[loop.end_byte:
                                                                          fn.body_end])
    if after is not None:
        return _no(ctx, f"`{word}` is read after the loop "
                   f"({unit.where(loop.end_byte + after.start())})")
    ev, used = _Eval(ctx), []
    for sh in fn.shared:
        uses = list(re.finditer(rb"(?<![\w.])" + re.escape(sh.name.encode()) + rb"\s*\[",
                                src[loop.start_byte:loop.end_byte]))
        if not uses:
            continue
        used.append(sh.name)
        if not sh.dims or ev.text(sh.dims[0]) != 2:
            return _no(ctx, f"__shared__ `{sh.name}` ({unit.where(sh.start)}) has no first "
                       "dimension of 2")
        for u in uses:
            at = loop.start_byte + u.end()  # just after the "["
            depth, close = 1, at
            while close < loop.end_byte and depth:
                depth += {91: 1, 93: -1}.get(src[close], 0)  # "[" and "]"
                close += 1
            index = src[at:close - 1].strip()
            if index != word.encode():
                return _no(ctx, f"`{sh.name}[{index.decode('utf-8', 'replace')}]` "
                           f"({unit.where(loop.start_byte + u.start())}) is not subscripted "
                           f"first with `{word}`")
    if not used:
        return _no(ctx, f"the loop at {unit.where(loop.start_byte)} touches no __shared__ "
                   "array")
    return _yes(f"the barrier ends the loop's step; {', '.join(used)} are double buffers "
                f"indexed by `{word}`", ctx.match.start)


@predicate("moves_before", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           ArgSpec("$$$MID", frozenset({"metavar", "sequence"})))
def moves_before(ctx: GuardContext, stmts: Binding, mid: Binding) -> Verdict:
    """The code bound to $$$S may run before the code bound to $$$MID with the same effect
    (a rewrite that hoists it): $$$S uses no variable that $$$MID declares or assigns and no
    memory it writes, and assigns nothing, writes no memory, that $$$MID uses. An empty
    $$$MID always holds."""
    unit, src = ctx.unit, ctx.unit.source
    if mid.start >= mid.end or not mid.text.strip():
        return _yes(f"{_code(mid)} is empty", mid.start)

    def names(b: Binding) -> set[str]:
        return {n for node in b.nodes for n, _ in _identifiers(node, src)}

    def changes(b: Binding) -> tuple[set[str], set[str]]:
        """(variables declared or assigned, buffers whose memory is written) in b."""
        declared = {d.name for d in _declarations_of(unit, [n for n in b.nodes
                                                               if n.type == "declaration"])}
        assigned: set[str] = set()
        memory: set[str] = set()
        for s, e, roots, what in _writes_around(ctx, b.start, b.end):
            if b.start <= s and e <= b.end:
                (assigned if what == _REASSIGNS else memory).update(roots)
        return declared | assigned, memory

    mid_vars, mid_memory = changes(mid)
    s_vars, s_memory = changes(stmts)
    s_names, mid_names = names(stmts), names(mid)
    if clash := sorted(s_names & mid_vars):
        return _no(ctx, f"{_code(stmts)} uses `{clash[0]}`, which {_code(mid)} declares or "
                   f"assigns ({unit.where(mid.start)})", stmts.start)
    if clash := sorted(s_names & mid_memory):
        return _no(ctx, f"{_code(stmts)} reads memory through `{clash[0]}`, which "
                   f"{_code(mid)} writes ({unit.where(mid.start)})", stmts.start)
    if clash := sorted(mid_names & (s_vars | s_memory)):
        return _no(ctx, f"{_code(mid)} ({unit.where(mid.start)}) uses `{clash[0]}`, which "
                   f"{_code(stmts)} changes", stmts.start)
    return _yes(f"{_code(stmts)} and {_code(mid)} touch nothing the other changes",
                stmts.start)


@predicate("elementwise_only", _metavar())
def elementwise_only(ctx: GuardContext, x: Binding) -> Verdict:
    """Array $X is only used element by element in its function: every use is subscripted
    as many times as the array has dimensions (``t[i][j]`` of ``float t[32][32]``) and its
    address is not taken (``&t[i][j]``). No row pointer, cast or call sees its layout, so a
    change of the layout (a padded row) cannot break an access that assumed the old one."""
    name = _buffer_name(ctx, x)
    fn = ctx.function
    if name is None or fn is None:
        return _no(ctx, f"{_code(x)} is not an array in a function", x.start)
    decl = _lookup(ctx, name, x.start)
    if decl is None or not decl.dims:
        return _no(ctx, f"`{name}` is not declared as an array here", x.start)
    unit, src = ctx.unit, ctx.unit.source
    want = len(decl.dims)
    uses = 0
    word = re.compile(rb"(?<![\w.>])" + re.escape(name.encode()) + rb"\b")
    for found in word.finditer(src, fn.body_start, fn.body_end):  # (the few uses, not a query)
        if decl.start <= found.start() < decl.end:
            continue
        node = unit.root.descendant_for_byte_range(found.start(), found.end())
        if node is None or node.type != "identifier" or node.start_byte != found.start():
            continue  # in a comment, a string, a member name
        uses += 1
        depth, top = 0, node
        parent = top.parent
        while parent is not None:
            if parent.type == "parenthesized_expression":
                top = parent
            elif parent.type == "subscript_expression" \
                    and parent.child_by_field_id(F_ARGUMENT) == top:
                depth, top = depth + 1, parent
            else:
                break
            parent = top.parent
        if depth != want:
            return _no(ctx, f"`{_snippet(_text(src, top))}` ({unit.where(top.start_byte)}) uses "
                       f"`{name}` with {depth} of its {want} subscripts: its layout is "
                       "seen there", top.start_byte)
        if parent is not None and parent.type == "pointer_expression" and \
                _operator(parent) == "&":
            return _no(ctx, f"`{_snippet(_text(src, parent))}` ({unit.where(parent.start_byte)}) "
                       f"takes the address of an element of `{name}`", parent.start_byte)
    return _yes(f"all {uses} uses of `{name}` in `{fn.name}` are single elements", x.start)


@predicate("restrict_safe", _metavar())
def restrict_safe(ctx: GuardContext, x: Binding) -> Verdict:
    """Declaring kernel pointer parameter $X __restrict__ promises nothing the code does not
    already keep: for every other pointer parameter, that one is __restrict__ itself (its own
    promise already rules out an overlap with written memory), or neither it nor $X is
    written in the kernel (read-only buffers may share memory), or the spec allocates both as
    distinct buffers (the caller's contract). Otherwise a caller that passes overlapping
    buffers (an in-place call, ``k(x, x)``) would get wrong results."""
    name = _buffer_name(ctx, x)
    fn = ctx.function
    if name is None or fn is None:
        return _no(ctx, f"{_code(x)} is not a single buffer in a function", x.start)
    mine = fn.param(name)
    if mine is None or (mine.pointer == 0 and not mine.array):
        return _no(ctx, f"`{name}` is not a pointer parameter of `{fn.name}`", x.start)
    if mine.star_end < 0:
        return _no(ctx, f"`{name}` is declared as an array (`{ctx.unit.text(mine.start, mine.end)}`"
                   f"): __restrict__ qualifies a pointer declarator", x.start)
    others = [p for p in fn.params if p.name != name and (p.pointer > 0 or p.array)]
    if not others:
        return _yes(f"`{name}` is the only pointer parameter of `{fn.name}`", x.start)
    spec = _spec_for(ctx)
    inner = getattr(spec, "spec", spec)
    buffers = {arg.name for arg in getattr(inner, "args", ()) if getattr(arg, "shape", None)}

    def written(param: str) -> str:  # (once per function and parameter)
        def first() -> str:
            for s, e, what in _writes(ctx, _aliases(ctx, param), fn.body_start, fn.body_end):
                return f"`{param}` is written ({_cite(ctx.unit, s, e)} {what})"
            return ""

        return str(_memo(ctx.unit, f"written:{fn.start}:{fn.end}:{param}", first))

    why: list[str] = []
    for p in others:
        if p.restrict:
            why.append(f"`{p.name}` is __restrict__")
            continue
        if {name, p.name} <= buffers:
            why.append(f"`{p.name}` is another buffer of the spec")
            continue
        written_by = written(name) or written(p.name)
        if not written_by:
            why.append(f"neither `{name}` nor `{p.name}` is written")
            continue
        return _no(ctx, f"`{name}` may share memory with `{p.name}` (not __restrict__, not a "
                   f"distinct spec buffer): {written_by}", x.start)
    return _yes(f"no other pointer parameter of `{fn.name}` can overlap `{name}` in a way "
                f"that matters: {'; '.join(why)}", x.start)


# --------------------------------------------------------------------------------------
# Threads and blocks

_BUILTIN_DIMS = ("blockIdx", "blockDim", "threadIdx")


def _field_of(node: Node, src: bytes, base: str, axis: str = "x") -> bool:
    node = _strip_casts(node, src)
    if node.type != "field_expression":
        return False
    arg, fld = node.child_by_field_id(F_ARGUMENT), node.child_by_field_id(F_FIELD)
    return arg is not None and fld is not None and _text(src, arg) == base \
        and _text(src, fld) == axis


def _strip_casts(node: Node, src: bytes) -> Node:
    while True:
        node = _unwrap(node)
        _, operand = _cast_target(node, src)
        if operand is None:
            return node
        node = operand


def _is_linear_index(node: Node, src: bytes) -> bool:
    node = _strip_casts(node, src)
    if node.type != "binary_expression" or _operator(node) != "+":
        return False
    left = _strip_casts(node.child_by_field_id(F_LEFT), src)
    right = _strip_casts(node.child_by_field_id(F_RIGHT), src)
    for prod, tid in ((left, right), (right, left)):
        if not _field_of(tid, src, "threadIdx") or prod.type != "binary_expression" \
                or _operator(prod) != "*":
            continue
        a, b = prod.child_by_field_id(F_LEFT), prod.child_by_field_id(F_RIGHT)
        if (_field_of(a, src, "blockIdx") and _field_of(b, src, "blockDim")) or \
                (_field_of(a, src, "blockDim") and _field_of(b, src, "blockIdx")):
            return True
    return False


@predicate("thread_linear_index", _metavar("$E"))
def thread_linear_index(ctx: GuardContext, e: Binding) -> Verdict:
    """$E is the global thread index ``blockIdx.x * blockDim.x + threadIdx.x`` (operands in
    any order), or a variable initialised to it and never reassigned."""
    node = _binding_node(e)
    src = ctx.unit.source
    if node is None:
        return _no(ctx, f"{_code(e)} is a sequence, not an expression", e.start)
    if _is_linear_index(node, src):
        return _yes(f"{_code(e)} is the thread's linear index", e.start)
    bare = _strip_casts(node, src)
    if bare.type == "identifier":
        name = _text(src, bare)
        decl = _lookup(ctx, name, e.start)
        fn = ctx.function
        if decl is not None and decl.init is not None and _is_linear_index(decl.init, src):
            if fn is not None and _assigned(ctx, name, decl.end, fn.body_end):
                return _no(ctx, f"`{name}` is initialised to the thread's linear index but "
                           f"reassigned later ({_cite(ctx.unit, decl.start, decl.end)})",
                           e.start)
            return _yes(f"`{name}` = the thread's linear index "
                        f"({_cite(ctx.unit, decl.start, decl.end)})", e.start)
        if decl is not None:
            return _no(ctx, f"`{name}` is not the thread's linear index "
                       f"({_cite(ctx.unit, decl.start, decl.end)})", e.start)
    return _no(ctx, f"{_code(e)} is not blockIdx.x * blockDim.x + threadIdx.x "
               f"({ctx.unit.where(e.start)})", e.start)


def _block_dims(ctx: GuardContext) -> tuple[tuple[int, int, int] | None, int | None, str]:
    """(exact block dimensions, upper bound on threads per block, how known).

    Exact: from the spec's ``block``, or from every launch of the kernel in this file
    agreeing on a constant block. Upper bound: ``__launch_bounds__`` (a launch with more
    threads fails, so it bounds the block; it does not fix it).

    Remembered per function and spec when nothing of the match was read: launches are
    judged where they stand; a spec's block or a ``__launch_bounds__`` expression is text
    whose names resolve where the match is."""
    fn = ctx.function
    if fn is None:
        return None, None, "the match is not inside a function"
    spec = _spec_for(ctx)
    key = f"block_dims:{fn.start}:{fn.end}"
    found = ctx.unit.memo.get(key)
    if found is not None and found[0] is spec:  # (the spec object itself: no id reuse)
        return found[1]  # type: ignore[no-any-return]
    result = _find_block_dims(ctx, fn, spec)
    inner = getattr(spec, "spec", spec)
    lb = fn.launch_bounds
    if not getattr(inner, "block", None) and (
            result[0] is not None or lb is None or lb.max_threads.strip().isdigit()):
        ctx.unit.memo[key] = (spec, result)
    return result


def _find_block_dims(ctx: GuardContext, fn: Function, spec: Any
                     ) -> tuple[tuple[int, int, int] | None, int | None, str]:
    unit = ctx.unit
    inner = getattr(spec, "spec", spec)
    block = getattr(inner, "block", None)
    if block:
        dims = _spec_dims(ctx, tuple(block))
        if dims is not None:
            return dims, math.prod(dims), f"the spec's block {list(block)}"
    launches = [lc for lc in unit.launches if lc.kernel == fn.name and len(lc.config) >= 2]
    launch_why = ""
    if launches:
        blocks = [_launch_block(ctx, lc.config[1]) for lc in launches]
        found = set(blocks)
        if len(found) == 1 and None not in found:
            dims = found.pop()
            assert dims is not None
            return dims, math.prod(dims), f"the launch at {unit.where(launches[0].start)}"
        unknown = next((lc for lc, b in zip(launches, blocks, strict=True) if b is None), None)
        if unknown is not None:
            launch_why = (f"the launch at {unit.where(unknown.start)} gives block "
                          f"`{' '.join(unknown.config[1].split())}`, not a constant")
        else:
            launch_why = (f"the launches of `{fn.name}` give different blocks: "
                          + ", ".join(sorted({str(list(b or ())) for b in blocks})))
    lb = fn.launch_bounds
    if lb is not None:
        ev = _Eval(ctx)
        v = ev.text(lb.max_threads)
        if isinstance(v, int):
            return None, v, f"__launch_bounds__({lb.max_threads}) ({unit.where(lb.start)})"
        return None, None, (f"__launch_bounds__({lb.max_threads}) has no known value: "
                            f"{ev.why}")
    if launch_why:
        return None, None, f"no spec block, {launch_why}, and no __launch_bounds__"
    return None, None, (f"no spec block, no launch of `{fn.name}` in this file and no "
                        "__launch_bounds__")


def _spec_dims(ctx: GuardContext, exprs: tuple[Any, ...]) -> tuple[int, int, int] | None:
    try:
        from klc.spec import launch_dims

        spec = _spec_for(ctx)
        env = spec.env() if hasattr(spec, "env") else {}
        return launch_dims(tuple(str(e) for e in exprs), env)
    except Exception:  # an expression the spec cannot evaluate without sizes: not known
        return None


def _launch_block(ctx: GuardContext, text: str) -> tuple[int, int, int] | None:
    m = re.fullmatch(r"\s*dim3\s*\((.*)\)\s*", text, re.S)
    parts = [p for p in m.group(1).split(",")] if m else [text]
    values = []
    for p in parts:
        v = _Eval(ctx).text(p)
        if not isinstance(v, int):
            return None
        values.append(v)
    values += [1] * (3 - len(values))
    return values[0], values[1], values[2]


@predicate("block_size_known")
def block_size_known(ctx: GuardContext) -> Verdict:
    """The threads per block of the enclosing kernel are known, exactly (spec, launches in
    this file) or as an upper bound (__launch_bounds__)."""
    exact, bound, how = _block_dims(ctx)
    if exact is not None:
        return _yes(f"block {exact[0]}×{exact[1]}×{exact[2]} from {how}", ctx.match.start)
    if bound is not None:
        return _yes(f"at most {bound} threads per block from {how}", ctx.match.start)
    return _no(ctx, f"the block size of `{ctx.function.name if ctx.function else '?'}` is "
               f"unknown: {how}")


@predicate("block_size", ArgSpec("op", frozenset({"op", "string"})),
           ArgSpec("N", frozenset({"int", "hole"})))
def block_size(ctx: GuardContext, op: str, n: Any) -> Verdict:
    """The threads per block compare with N: ``block_size(<=, 1024)``; an upper bound from
    __launch_bounds__ proves only < and <=."""
    want = _number_arg(ctx, n)
    if op not in COMPARISONS or want is None:
        return _no(ctx, f"block_size: cannot compare with {op} {n!r}")
    exact, bound, how = _block_dims(ctx)
    if exact is not None:
        total = math.prod(exact)
        if COMPARISONS[op](total, want):
            return _yes(f"{total} threads per block {op} {want} ({how})", ctx.match.start)
        return _no(ctx, f"the block has {total} threads ({how}), and not {total} {op} {want}")
    if bound is not None:
        if op in ("<", "<=") and COMPARISONS[op](bound, want):
            return _yes(f"at most {bound} threads per block {op} {want} ({how})",
                        ctx.match.start)
        return _no(ctx, f"only an upper bound of {bound} threads per block is known ({how}); "
                   f"it does not prove block size {op} {want}")
    return _no(ctx, f"the block size is unknown: {how}")


@predicate("block_dim", ArgSpec("axis", frozenset({"name"}), frozenset({"x", "y", "z"})),
           ArgSpec("op", frozenset({"op", "string"})),
           ArgSpec("N", frozenset({"int", "hole"})))
def block_dim(ctx: GuardContext, axis: str, op: str, n: Any) -> Verdict:
    """The block's extent along AXIS (x, y or z) compares with N, known exactly (the spec's
    block, or every launch in this file): ``block_dim(y, ==, ?t)`` before a rewrite that
    divides block.y."""
    want = _number_arg(ctx, n)
    if op not in COMPARISONS or not isinstance(want, int):
        return _no(ctx, f"block_dim: cannot compare with {op} {n!r}")
    exact, _bound, how = _block_dims(ctx)
    if exact is None:
        return _no(ctx, f"the block's {axis} extent is not known exactly: {how}")
    have = exact["xyz".index(axis)]
    if COMPARISONS[op](have, want):
        return _yes(f"block.{axis} = {have} {op} {want} ({how})", ctx.match.start)
    return _no(ctx, f"block.{axis} is {have} ({how}), and not {have} {op} {want}")


def _thread_dependent(ctx: GuardContext, fn: Function) -> dict[str, str]:
    """Variables of ``fn`` whose value may differ between threads of a block, each with the
    assignment that makes it so (a taint analysis to a fixpoint over the function)."""

    def build() -> dict[str, str]:
        unit, src = ctx.unit, ctx.unit.source
        tainted: dict[str, str] = {}
        defs: list[tuple[str, Node, Node]] = []  # (variable, value, where)
        for d in _function_declarations(unit, fn):
            if d.init is not None:
                defs.append((d.name, d.init, d.init))
        for node in _in(_nodes(unit, "assignment_expression"), fn.body_start, fn.body_end):
            left, right = node.child_by_field_id(F_LEFT), node.child_by_field_id(F_RIGHT)
            if left is not None and right is not None and _unwrap(left).type == "identifier":
                defs.append((_text(src, _unwrap(left)), right, node))
        for lp in fn.loops:  # a loop variable stepping from a thread-dependent start
            if lp.var and lp.init and "threadIdx" in lp.init:
                tainted.setdefault(lp.var, f"{lp.var} = {lp.init}")
        # what ``_depends`` reads of each value, found once: whether its text names the
        # thread, else the identifiers it reads (the passes then only look them up)
        reads: list[tuple[bool, list[str]] | None] = [None] * len(defs)
        changed = True
        while changed:
            changed = False
            for i, (name, value, node) in enumerate(defs):
                if name in tainted:
                    continue
                seen = reads[i]
                if seen is None:
                    text = _text(src, value)
                    direct = "threadIdx" in text or any(c in text for c in _THREAD_CALLS)
                    seen = reads[i] = (direct, [] if direct else
                                       [n for n, _ in _identifiers(value, src)])
                if seen[0] or any(n in tainted for n in seen[1]):
                    tainted[name] = _snippet(_text(src, node))
                    changed = True
        return tainted

    return _memo(ctx.unit, f"tainted:{fn.start}", build)


_THREAD_CALLS = ("thread_rank", "__lane_id", "laneid", "threadIdx", "__shfl")


def _depends(node: Node, src: bytes, tainted: Mapping[str, str]) -> bool:
    text = _text(src, node)
    if "threadIdx" in text or any(c in text for c in _THREAD_CALLS):
        return True
    return any(name in tainted for name, _ in _identifiers(node, src))


_BLOCK_BARRIER = re.compile(r"^(?:__syncthreads\w*|__barrier_sync|.*\bblock\w*\.sync|"
                            r".*this_thread_block\(\)\.sync|.*grid\w*\.sync)$")


@predicate("sync_uniform", _region_arg())
def sync_uniform(ctx: GuardContext, region: str = "kernel") -> Verdict:
    """Every block-wide barrier (__syncthreads) in REGION is reached by all threads: none is
    under an if/loop/?:/switch whose condition depends on threadIdx, directly or through a
    variable, and no thread-dependent break/continue/return skips one."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    assert fn is not None
    # the verdict depends on the region alone (not on the match in it): once per region
    return _memo(ctx.unit, f"sync_uniform:{fn.start}:{start}:{end}:{label}",
                 lambda: _sync_uniform(ctx, fn, start, end, label))


def _sync_uniform(ctx: GuardContext, fn: Function, start: int, end: int, label: str) -> Verdict:
    unit, src = ctx.unit, ctx.unit.source
    tainted = _thread_dependent(ctx, fn)
    barriers = [c for c in fn.barriers if start <= c.start < end
                and _BLOCK_BARRIER.match(c.name)]
    calls = _memo(unit, "calls_by_start",
                  lambda: {n.start_byte: n for n in _nodes(unit, "call_expression")})
    for bar in barriers:
        node = calls.get(bar.start)
        while node is not None and node.start_byte > fn.body_start:
            parent = node.parent
            if parent is None:
                break
            cond = _condition_of(parent, node)
            if cond is not None and _depends(cond, src, tainted):
                why = _taint_words(cond, src, tainted)
                return _no(ctx, f"`{bar.name}()` ({unit.where(bar.start)}) is under "
                           f"`{_snippet(_text(src, cond))}` ({unit.where(cond.start_byte)}), "
                           f"which depends on the thread{why}", bar.start)
            if parent.type in LOOP_TYPES:
                for jump in _in(_nodes(unit, "break_statement", "continue_statement",
                                       "return_statement"), parent.start_byte,
                                parent.end_byte):
                    guard = _thread_condition_above(jump, parent, src, tainted)
                    if guard is not None:
                        return _no(ctx, f"`{_snippet(_text(src, jump))}` "
                                   f"({unit.where(jump.start_byte)}) under the thread-dependent "
                                   f"`{_snippet(_text(src, guard))}` leaves the loop around "
                                   f"`{bar.name}()` ({unit.where(bar.start)})", jump.start_byte)
            node = parent
    if not barriers:
        return _yes(f"no block-wide barrier in {label}", start)
    return _yes(f"every barrier in {label} is reached by all threads", start)


def _condition_of(parent: Node, child: Node) -> Node | None:
    """The condition controlling whether ``child`` runs, if ``parent`` is a branch or loop
    and ``child`` is not that condition itself."""
    t = parent.type
    if t in ("if_statement", "while_statement", "do_statement", "switch_statement",
             "for_statement"):
        cond = parent.child_by_field_id(F_CONDITION)
        if cond is None or cond.start_byte <= child.start_byte < cond.end_byte:
            return None
        if cond.type == "condition_clause":
            cond = cond.child_by_field_id(F_VALUE) or cond
        return _unwrap(cond)
    if t == "conditional_expression":
        cond = parent.child_by_field_id(F_CONDITION)
        return None if cond is not None and cond == child else cond
    if t == "binary_expression" and _operator(parent) in ("&&", "||"):
        left = parent.child_by_field_id(F_LEFT)
        return left if left is not None and left != child else None
    return None


def _thread_condition_above(node: Node, stop: Node, src: bytes,
                            tainted: Mapping[str, str]) -> Node | None:
    cur = node
    while cur.parent is not None and cur.parent != stop:
        cond = _condition_of(cur.parent, cur)
        if cond is not None and _depends(cond, src, tainted):
            return cond
        cur = cur.parent
    return None


def _taint_words(cond: Node, src: bytes, tainted: Mapping[str, str]) -> str:
    for name, _ in _identifiers(cond, src):
        if name in tainted:
            return f" (`{tainted[name]}`)"
    return ""


@predicate("no_early_return_before_barrier", _region_arg())
def no_early_return_before_barrier(ctx: GuardContext, region: str = "kernel") -> Verdict:
    """No ``return`` in REGION comes before a later __syncthreads: a thread that leaves
    early never arrives at the barrier the others wait at."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    assert fn is not None
    unit = ctx.unit
    barriers = [c for c in fn.barriers if _BLOCK_BARRIER.match(c.name)]
    if not barriers:
        return _yes(f"no block-wide barrier in `{fn.name}`", start)
    last = barriers[-1]
    for ret in _in(_nodes(unit, "return_statement"), start, end):
        if ret.start_byte < last.start and fn.body_start <= ret.start_byte < fn.body_end:
            return _no(ctx, f"`{_snippet(unit.text(ret))}` ({unit.where(ret.start_byte)}) "
                       f"comes before `{last.name}()` ({unit.where(last.start)}) in {label}",
                       ret.start_byte)
    return _yes(f"no return before the last barrier in {label}", start)


@predicate("uses_warp_intrinsics", _region_arg())
def uses_warp_intrinsics(ctx: GuardContext, region: str = "kernel") -> Verdict:
    """REGION calls a warp-level intrinsic (__shfl*_sync, __ballot_sync, cooperative-groups
    tile shuffles...)."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    assert fn is not None
    used = [c for c in fn.warp_intrinsics if start <= c.start < end]
    if used:
        return _yes(f"{label} calls {used[0].name} ({ctx.unit.where(used[0].start)})",
                    used[0].start)
    return _no(ctx, f"{label} calls no warp intrinsic", start)


# --------------------------------------------------------------------------------------
# Shared memory

SMEM_DEFAULT = 48 * 1024
SMEM_OPTIN = 227 * 1024


def _shared_bytes(decls: list[Any], ev: _Eval) -> tuple[int | None, str]:
    """Static shared bytes of ``__shared__`` declarations (extern ones are dynamic)."""
    total = 0
    for s in decls:
        if s.extern:
            continue
        size = SIZES.get(_norm_type(s.type))
        if size is None:
            return None, f"the size of {s.type} (`__shared__ {s.type} {s.name}`) is unknown"
        for dim in s.dims:
            v = ev.text(dim)
            if not isinstance(v, int):
                return None, f"the dimension [{dim}] of `{s.name}` has no known value: {ev.why}"
            size *= v
        total += size
    return total, ""


@predicate("smem_fits", ArgSpec("limit", frozenset({"int", "name", "hole"}),
                                frozenset({"default", "optin"}), optional=True))
def smem_fits(ctx: GuardContext, limit: int | str = "default") -> Verdict:
    """The kernel's static __shared__ bytes, plus what the rule's rewrite declares (with the
    hole values filled) and the spec's dynamic shared memory, fit LIMIT bytes (default
    48 KiB; ``optin``: 227 KiB, the sm_90 opt-in maximum)."""
    from klc.frontend import parse_bytes

    fn = ctx.function
    if fn is None:
        return _no(ctx, "the match is not inside a function")
    cap = SMEM_OPTIN if limit == "optin" else SMEM_DEFAULT if limit == "default" else limit
    if not isinstance(cap, int):
        return _no(ctx, f"smem_fits: limit {limit!r} is not a number of bytes")
    ev = _Eval(ctx)
    have, why = _shared_bytes(fn.shared, ev)
    if have is None:
        return _unknown(ctx, f"shared memory of `{fn.name}`: {why}")
    parts = [f"{have} B declared in `{fn.name}`"]
    total = have
    rule = getattr(ctx.match, "rule", None)
    for edit in getattr(rule, "edits", ()) or ():
        template = getattr(edit, "template", None)
        if not template or "__shared__" not in template:
            continue
        missing = [h for h in re.findall(r"\?([A-Za-z_]\w*)", template) if h not in ctx.holes]
        if missing:
            return Verdict(True, f"smem_fits: depends on ?{missing[0]}", ctx.match.start, True)
        from klc.rewrite import render

        try:  # the declarations exactly as the rewrite writes them (values in parentheses
            text = render(template, ctx.match, ctx.holes)  # where the template needs them)
        except KlcError as e:
            return _unknown(ctx, f"the rewrite's __shared__ declarations: {e}")
        inserted = parse_bytes(f"__global__ void __klc_smem__() {{\n{text}\n}}\n".encode(),
                               "<rewrite>")
        if not inserted.functions:
            return _unknown(ctx, "the rewrite's __shared__ declarations do not parse")
        add, why = _shared_bytes(inserted.functions[0].shared, ev)
        if add is None:
            return _unknown(ctx, f"shared memory the rewrite adds: {why}")
        total += add
        parts.append(f"{add} B from the rewrite")
    spec = _spec_for(ctx)
    inner = getattr(spec, "spec", spec)
    dyn = getattr(inner, "shared", None)
    if dyn:
        try:
            from klc.spec import evaluate_int

            extra = evaluate_int(dyn, spec.env() if hasattr(spec, "env") else {})
        except Exception:
            return _unknown(ctx, f"the spec's dynamic shared memory `{dyn}` has no value")
        total += extra
        parts.append(f"{extra} B dynamic (spec)")
    words = " + ".join(parts)
    if total <= cap:
        return _yes(f"{words} = {total} B fits {cap} B", ctx.match.start)
    return _no(ctx, f"{words} = {total} B exceeds {cap} B "
               f"({_cite(ctx.unit, fn.start, fn.body_start)})")


# --------------------------------------------------------------------------------------
# Loops


def _loop_node(ctx: GuardContext, what: Any) -> tuple[Node | None, str]:
    """The loop statement a predicate is about: the loop a metavariable bound (or whose
    header holds it), ``anchor`` (the match itself), or ``loop`` (the innermost around it)."""
    unit = ctx.unit
    loops = _nodes(unit, *LOOP_TYPES)
    if isinstance(what, str):
        if what == "anchor":
            for n in ctx.match.nodes:
                if n.type in LOOP_TYPES:
                    return n, ""
            inside = [n for n in loops if ctx.match.start <= n.start_byte
                      and n.end_byte <= ctx.match.end]
            return (inside[0], "") if inside else (None, "the anchor holds no loop")
        fn = ctx.function
        lp = _enclosing_loop(fn, ctx.match.start, ctx.match.end) if fn is not None else None
        if lp is None:
            return None, f"the match ({unit.where(ctx.match.start)}) is not inside a loop"
        return next((n for n in loops if n.start_byte == lp.start), None), ""
    node = _binding_node(what)
    cur = node
    while cur is not None:
        if cur.type in LOOP_TYPES:
            body = cur.child_by_field_id(F_BODY)
            if cur == node or body is None or not (body.start_byte <= node.start_byte
                                                   < body.end_byte):
                return cur, ""
            break
        cur = cur.parent
    return None, f"{_code(what)} ({unit.where(what.start)}) is neither a loop nor in a loop header"


_LOOP_WORDS = {"for_range_loop": "range-based for loop", "while_statement": "while loop",
               "do_statement": "do-while loop"}


def trip_count(ctx: GuardContext, loop: Node) -> tuple[int | None, str]:
    """The number of iterations of a counted ``for`` loop, or None and why not."""
    src = ctx.unit.source
    if loop.type != "for_statement":
        return None, (f"a {_LOOP_WORDS.get(loop.type, loop.type)} has no counted "
                      "header")
    init = loop.child_by_field_id(F_INITIALIZER)
    cond = loop.child_by_field_id(F_CONDITION)
    update = loop.child_by_field_id(F_UPDATE)
    if init is None or cond is None or update is None:
        return None, "the loop header lacks an initializer, a condition or an update"
    var, start_node = None, None
    if init.type == "declaration":
        d = init.child_by_field_id(F_DECLARATOR)
        if d is not None and d.type == "init_declarator":
            name = d.child_by_field_id(F_DECLARATOR)
            var, start_node = (_text(src, name) if name is not None else None,
                               d.child_by_field_id(F_VALUE))
    elif init.type == "assignment_expression":
        left = init.child_by_field_id(F_LEFT)
        var, start_node = (_text(src, left) if left is not None else None,
                           init.child_by_field_id(F_RIGHT))
    if var is None or start_node is None:
        return None, f"`{_snippet(_text(src, init))}` does not initialise one variable"
    ev = _Eval(ctx)
    lo = ev.node(start_node, src)
    if not isinstance(lo, int):
        return None, f"the start `{_snippet(_text(src, start_node))}` is not constant: {ev.why}"
    cond = _unwrap(cond)
    if cond.type != "binary_expression":
        return None, f"the condition `{_snippet(_text(src, cond))}` is not a comparison"
    op = _operator(cond)
    left, right = cond.child_by_field_id(F_LEFT), cond.child_by_field_id(F_RIGHT)
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
    if _text(src, _unwrap(right)) == var:
        left, right, op = right, left, flip.get(op, op)
    if _text(src, _unwrap(left)) != var or op not in flip:
        return None, f"the condition `{_snippet(_text(src, cond))}` does not compare `{var}`"
    hi = ev.node(right, src)
    if not isinstance(hi, int):
        return None, f"the bound `{_snippet(_text(src, right))}` is not constant: {ev.why}"
    step = _step(update, src, var, ev)
    if step is None:
        return None, f"the update `{_snippet(_text(src, update))}` is not a constant step"
    kind, k = step
    if _assigned_in_body(ctx, loop, var):
        return None, f"`{var}` is also assigned inside the loop body"
    count, i = 0, lo
    while COMPARISONS[op](i, hi):
        count += 1
        if count > 1 << 20:
            return None, "the loop runs more than a million iterations (or forever)"
        i = i + k if kind == "+" else i * k if kind == "*" else i >> k if kind == ">>" \
            else i << k
    return count, ""


def _step(update: Node, src: bytes, var: str, ev: _Eval) -> tuple[str, int] | None:
    update = _unwrap(update)
    if update.type == "update_expression":
        arg = update.child_by_field_id(F_ARGUMENT)
        if arg is None or _text(src, arg) != var:
            return None
        return ("+", 1) if "++" in _text(src, update) else ("+", -1)
    if update.type == "assignment_expression":
        left, right = update.child_by_field_id(F_LEFT), update.child_by_field_id(F_RIGHT)
        if left is None or right is None or _text(src, left) != var:
            return None
        k = ev.node(right, src)
        if not isinstance(k, int):
            return None
        op = _operator(update)
        table = {"+=": ("+", k), "-=": ("+", -k), "*=": ("*", k), ">>=": (">>", k),
                 "<<=": ("<<", k)}
        if op in table and not (op == "*=" and k in (0, 1)) and not (op == "+=" and k == 0):
            return table[op]
    return None


def _assigned_in_body(ctx: GuardContext, loop: Node, var: str) -> bool:
    body = loop.child_by_field_id(F_BODY)
    return body is not None and _assigned(ctx, var, body.start_byte, body.end_byte)


@predicate("trip_count_known", ArgSpec("loop", frozenset({"metavar", "name"}),
                                       frozenset({"anchor", "loop"})))
def trip_count_known(ctx: GuardContext, what: Any) -> Verdict:
    """The for loop ($LOOP, the loop whose header holds $COND, ``anchor`` or ``loop``) runs
    a number of iterations known at compile time: constant start, bound and step."""
    node, why = _loop_node(ctx, what)
    if node is None:
        return _no(ctx, why)
    count, why = trip_count(ctx, node)
    header = _snippet(ctx.unit.text(node.start_byte, (node.child_by_field_id(F_BODY)
                                                      or node).start_byte))
    if count is None:
        return _no(ctx, f"the trip count of `{header}` ({ctx.unit.where(node.start_byte)}) "
                   f"is not known: {why}", node.start_byte)
    return _yes(f"`{header}` runs {count} iterations", node.start_byte)


@predicate("has_pragma_unroll", ArgSpec("loop", frozenset({"metavar", "name"}),
                                        frozenset({"anchor", "loop"})),
           ArgSpec("N", frozenset({"int", "hole"}), optional=True))
def has_pragma_unroll(ctx: GuardContext, what: Any, factor: Any = None) -> Verdict:
    """The loop ($LOOP, ``anchor`` or ``loop``) is directly preceded by ``#pragma unroll``
    (with factor N, when N is given)."""
    node, why = _loop_node(ctx, what)
    if node is None:
        return _no(ctx, why)
    fn = ctx.function
    lp = next((lp for lp in (fn.loops if fn else []) if lp.start == node.start_byte), None)
    where_ = ctx.unit.where(node.start_byte)
    if lp is None or lp.unroll is None:
        return _no(ctx, f"the loop at {where_} has no #pragma unroll", node.start_byte)
    if factor is not None and str(lp.unroll).strip() != str(factor):
        return _no(ctx, f"the loop at {where_} has #pragma unroll {lp.unroll}, not {factor}",
                   node.start_byte)
    return _yes(f"the loop at {where_} has #pragma unroll {lp.unroll}".rstrip(),
                node.start_byte)


@predicate("in_loop")
def in_loop(ctx: GuardContext) -> Verdict:
    """The match is inside a loop of its function (not merely a loop itself)."""
    fn = ctx.function
    lp = _enclosing_loop(fn, ctx.match.start, ctx.match.end) if fn is not None else None
    if lp is None:
        return _no(ctx, f"the match ({ctx.unit.where(ctx.match.start)}) is not inside a loop")
    return _yes(f"inside the {lp.kind} loop at {ctx.unit.where(lp.start)}", lp.start)


@predicate("not_in_error")
def not_in_error(ctx: GuardContext) -> Verdict:
    """The match does not overlap a region the parser could not read (a syntax error)."""
    problem = ctx.unit.in_error(ctx.match.start, ctx.match.end)
    if problem is None:
        return _yes("the match parsed cleanly", ctx.match.start)
    return _no(ctx, f"the match overlaps a syntax error: {problem.describe(ctx.unit.path)}",
               problem.start)


# ---- predicates added for lineages


@predicate("no_block_sharing", _region_arg())
def no_block_sharing(ctx: GuardContext, region: str = "kernel") -> Verdict:
    """REGION has no block-wide barrier (__syncthreads) and declares no __shared__ memory:
    the warps of a block share nothing, so they may be packed into one block or split into
    separate ones without changing what they compute."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    assert fn is not None
    unit = ctx.unit
    bar = next((c for c in fn.barriers if start <= c.start < end
                and _BLOCK_BARRIER.match(c.name)), None)
    if bar is not None:
        return _no(ctx, f"`{bar.name}()` ({unit.where(bar.start)}) is a block-wide barrier in "
                   f"{label}", bar.start)
    sh = next((s for s in fn.shared if start <= s.start < end), None)
    if sh is not None:
        return _no(ctx, f"`__shared__ {sh.type} {sh.name}` ({unit.where(sh.start)}) is shared "
                   f"by the block, in {label}", sh.start)
    return _yes(f"no __syncthreads and no __shared__ memory in {label}", start)


# ---- relations between hole values (klc.reverse learns them; the search filler checks them
# before any other static check, since they need no code: HOLE_RELATIONS)


@predicate("is_product", ArgSpec("A", frozenset({"int", "hole"})),
           ArgSpec("B", frozenset({"int", "hole"})), ArgSpec("C", frozenset({"int", "hole"})))
def is_product(ctx: GuardContext | None, a: Any, b: Any, c: Any) -> Verdict:
    """A = B * C, all three integers (hole values or literals): values that a simplification
    erased together and that were tied at every site it was seen (a tile T walked R rows at
    a time in T / R steps: ``is_product(?t, ?r, ?factor)``)."""
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b, c)):
        return Verdict(False, f"is_product: {a!r}, {b!r}, {c!r} are not all integers", None)
    if a == b * c:
        return Verdict(True, f"{a} = {b} * {c}", None)
    return Verdict(False, f"{a} != {b} * {c} (the values are tied: the first is the product "
                   "of the other two)", None)


HOLE_RELATIONS = frozenset({"is_product"})  # predicates of hole values alone (no code)


# ---- predicates for sub-rewrites (``rewrite within $$$X { ... }``): what a run of statements
# does to the variables around it


def _span_of(ctx: GuardContext, what: Any) -> tuple[int, int, str] | Verdict:
    """The byte span and a description of a bound metavariable or sequence, or a region."""
    from klc.match import Binding

    if isinstance(what, Binding):
        where_ = ctx.unit.where(what.start)
        return what.start, what.end, f"`{_snippet(what.text)}` ({where_})"
    return _region(ctx, str(what))


def _declared_names_in(unit: Unit, start: int, end: int) -> set[str]:
    return {d.name for d in _declarations_of(unit, list(_in(_nodes(unit, "declaration"),
                                                              start, end)))}


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


@predicate("mentions", ArgSpec("$X|region", frozenset({"metavar", "sequence", "name"})),
           ArgSpec("NAME", frozenset({"name", "string", "hole", "metavar"})))
def mentions(ctx: GuardContext, what: Any, name: Any) -> Verdict:
    """The code bound to $X (or REGION: anchor, loop, kernel) uses the identifier NAME (a
    name, a string, an ident hole, or what a metavariable bound; an expression bound by a
    metavariable is looked for token by token): ``not mentions($$$BODY, threadIdx)`` says
    the statements never look at the thread index."""
    span = _span_of(ctx, what)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    word = name.text.strip() if hasattr(name, "text") else str(name)
    src = ctx.unit.source
    bound = _binding_node(name) if hasattr(name, "text") else None
    if bound is not None and _unwrap(bound).type != "identifier":
        # an expression: its code, token for token (spacing and comments aside)
        code = "\0".join(_leaves(bound, src))
        if code and f"\0{code}\0" in "\0" + "\0".join(_leaves_in(ctx.unit, start, end)) + "\0":
            return _yes(f"{label} uses `{_snippet(word)}`", start)
        return _no(ctx, f"{label} never uses `{_snippet(word)}`", start)
    for node in _in(_nodes(ctx.unit, "identifier"), start, end):
        if _text(src, node) == word:
            return _yes(f"{label} uses `{word}` ({ctx.unit.where(node.start_byte)})",
                        node.start_byte)
    return _no(ctx, f"{label} never uses `{word}`", start)


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


@predicate("assigns_only_locals", ArgSpec("$$$S", frozenset({"metavar", "sequence"})))
def assigns_only_locals(ctx: GuardContext, stmts: Binding) -> Verdict:
    """The statements bound to $$$S assign no variable declared outside them: every
    assignment, compound assignment, ++ or -- writes a variable the statements declare
    themselves, or memory through a pointer or a parameter array. A write to a scalar or a
    register array of the enclosing code (an accumulator) makes it false: split across
    threads, such a write would need a reduction."""
    unit, src = ctx.unit, ctx.unit.source
    start, end = stmts.start, stmts.end
    inner = _declared_names_in(unit, start, end)
    targets: list[tuple[Node, Node]] = []
    for node in _in(_nodes(unit, "assignment_expression"), start, end):
        left = node.child_by_field_id(F_LEFT)
        if left is not None:
            targets.append((node, left))
    for node in _in(_nodes(unit, "update_expression"), start, end):
        arg = node.child_by_field_id(F_ARGUMENT)
        if arg is not None:
            targets.append((node, arg))
    for node, lvalue in sorted(targets, key=lambda t: t[0].start_byte):
        base = _base_identifier(lvalue)
        if base is None:
            continue  # *p = ..., a write through a pointer expression: memory
        name = _text(src, base)
        if name in inner:
            continue
        outer = [d for d in _declarations_named(unit, name) if d.start < start
                 and (ctx.function is None or ctx.function.body_start <= d.start)]
        decl = outer[-1] if outer else None
        direct = lvalue.type == "identifier" or _unwrap(lvalue).type == "identifier"
        if decl is None:
            if direct:  # a parameter or a global assigned as a whole
                return _no(ctx, f"{_cite(unit, node.start_byte, node.end_byte)} assigns "
                           f"`{name}`, which the statements do not declare", node.start_byte)
            continue  # x[i] = ... through a parameter or global pointer: memory
        if direct or (decl.dims and "__shared__" not in decl.qualifiers):
            return _no(ctx, f"{_cite(unit, node.start_byte, node.end_byte)} writes `{name}`, "
                       f"declared outside the statements ({unit.where(decl.start)})",
                       node.start_byte)
    return _yes(f"the statements at {unit.where(start)} write only their own variables and "
                "memory", start)


@predicate("no_jumps", ArgSpec("$$$S", frozenset({"metavar", "sequence"})))
def no_jumps(ctx: GuardContext, stmts: Binding) -> Verdict:
    """The code bound to $$$S has no return, goto, break or continue out of it (a break of
    a loop or switch of its own, a continue of a loop of its own, is fine): control always
    reaches its end. A continue of a loop around the code skips the rest of it, and the
    rules that re-wrap code in a loop or unwrap it (loop_of_one, trip_count_one_loop_to_block)
    would hand it to another loop."""
    loops = LOOP_TYPES
    unit = ctx.unit
    start, end = stmts.start, stmts.end
    for node in _in(_nodes(unit, "return_statement", "goto_statement", "break_statement",
                           "continue_statement"), start, end):
        if node.type in ("break_statement", "continue_statement"):
            targets = (*loops, "switch_statement") if node.type == "break_statement" \
                else loops  # a continue inside a switch belongs to the loop around it
            p = node.parent
            while p is not None and p.start_byte >= start and p.type not in targets:
                p = p.parent
            if p is not None and p.start_byte >= start:
                continue
        return _no(ctx, f"{_cite(unit, node.start_byte, node.end_byte)} leaves the code early",
                   node.start_byte)
    return _yes(f"no return, goto, break or continue out of the code at {unit.where(start)}",
                start)


@predicate("fresh_name", ArgSpec("NAME", frozenset({"hole", "name", "string"})))
def fresh_name(ctx: GuardContext, name: Any) -> Verdict:
    """NAME (an ident hole's value) is not used anywhere in the enclosing function, so a
    rewrite may declare it."""
    fn = ctx.function
    if fn is None:
        return _no(ctx, "the match is not inside a function")
    word = str(name)
    if not re.fullmatch(r"[A-Za-z_]\w*", word):
        return _no(ctx, f"`{word}` is not an identifier")
    src = ctx.unit.source
    for node in _in(_nodes(ctx.unit, "identifier"), fn.start, fn.body_end):
        if _text(src, node) == word:
            return _no(ctx, f"`{word}` is already used in `{fn.name}` "
                       f"({ctx.unit.where(node.start_byte)})", node.start_byte)
    return _yes(f"`{word}` is a fresh name in `{fn.name}`")


@predicate("block_size_multiple", ArgSpec("N", frozenset({"int", "hole"})))
def block_size_multiple(ctx: GuardContext, n: Any) -> Verdict:
    """The threads per block are known exactly and are a multiple of N (whole warps:
    ``block_size_multiple(32)``)."""
    want = _number_arg(ctx, n)
    if not isinstance(want, int) or want < 1:
        return _no(ctx, f"block_size_multiple: {n!r} is not a positive integer")
    exact, _bound, how = _block_dims(ctx)
    if exact is None:
        return _no(ctx, f"the exact block size is unknown: {how}")
    total = math.prod(exact)
    if total % want:
        return _no(ctx, f"the block has {total} threads ({how}), not a multiple of {want}")
    return _yes(f"{total} threads per block, a multiple of {want} ({how})")


# ---- predicates for privatisation (passes/privatize.rule's inverse): may the block's
# threads work together at this point of the kernel, and does every index fit a private copy

_INDEX_TYPE_LIMIT = {"bool": 2, "unsigned char": 256, "uint8_t": 256, "unsigned short": 65536,
                     "uint16_t": 65536}


def _spec_elements(ctx: GuardContext, name: str) -> tuple[int | None, str]:
    """(the most elements the spec ever allocates for buffer argument ``name``, how known)."""
    from klc.spec import element_count

    spec = _spec_for(ctx)
    inner = getattr(spec, "spec", spec)
    arg = next((a for a in getattr(inner, "args", ()) if a.name == name), None)
    if arg is None or arg.shape is None:
        return None, f"the spec gives no buffer `{name}`" if spec is not None else "no spec"
    sizes = dict(getattr(inner, "sizes", {}) or {})
    verify = tuple(getattr(inner, "verify_sizes", ()) or ())
    words = set(re.findall(r"[A-Za-z_]\w*", " ".join(arg.shape)))
    if not verify and words & set(sizes):  # the gate derives sizes: nothing may be assumed
        return None, (f"the shape [{', '.join(arg.shape)}] of `{name}` depends on sizes the "
                      "spec does not fix (no verify_sizes)")
    try:
        counts = [element_count(arg.shape, spec.env(s)) for s in (sizes, *verify)]
    except Exception as e:  # an expression the spec cannot evaluate here: not known
        return None, f"the shape [{', '.join(arg.shape)}] of `{name}` has no value ({e})"
    return max(counts), f"the spec allocates `{name}` with shape [{', '.join(arg.shape)}]"


@predicate("index_below", _metavar("$V"), _metavar("$G"), ArgSpec("N", frozenset({"int",
                                                                                  "hole"})))
def index_below(ctx: GuardContext, v: Binding, g: Binding, n: Any) -> Verdict:
    """Every value of $V, an index into buffer $G, lies in [0, N): the type of $V bounds it
    (an unsigned char is below 256, an unsigned short below 65536), or the spec allocates the
    kernel parameter $G with at most N elements at every size it runs (a correct kernel
    indexes inside its buffers, so that a private copy of N elements holds every index)."""
    want = _number_arg(ctx, n)
    if not isinstance(want, int):
        return _no(ctx, f"index_below: {n!r} is not an integer")
    node = _binding_node(v)
    typ = _type_of(ctx, node) if node is not None else None
    if typ is not None and not typ.pointer:
        limit = _INDEX_TYPE_LIMIT.get(_norm_type(typ.base))
        if limit is not None and limit <= want:
            return _yes(f"{_code(v)} is an {typ.base}: below {limit} <= {want}", v.start)
    gnode = _binding_node(g)
    fn = ctx.function
    if gnode is None or _unwrap(gnode).type != "identifier" or fn is None:
        return _no(ctx, f"{_code(g)} is not a buffer parameter ({ctx.unit.where(g.start)})",
                   g.start)
    name = _text(ctx.unit.source, _unwrap(gnode))
    decl = _lookup(ctx, name, g.start)
    if decl is None or decl.origin != "parameter":
        return _no(ctx, f"{_code(g)} is not a parameter of {fn.name}", g.start)
    elements, how = _spec_elements(ctx, name)
    typed = f"{_code(v)} has type {typ.base}, which does not bound it below {want}; " \
        if typ is not None else ""
    if elements is None:
        return _no(ctx, f"{typed}the size of `{name}` is unknown: {how}", v.start)
    if elements <= want:
        return _yes(f"{how}: at most {elements} elements <= {want}, so {_code(v)} < {want}",
                    v.start)
    return _no(ctx, f"{typed}{how}: {elements} elements, more than {want}", v.start)


@predicate("block_cooperative", _region_arg())
def block_cooperative(ctx: GuardContext, region: str = "anchor") -> Verdict:
    """Every thread of a one-dimensional block reaches REGION: the block is known to be
    blockDim.y = blockDim.z = 1 (the spec, or every launch in the file), REGION starts at the
    top level of a kernel body (under no branch or loop), and no return comes before its
    end. Code put around REGION may then hold __syncthreads and share work over the block
    (a loop from threadIdx.x by blockDim.x visits every index once per block)."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    if fn is None or not fn.is_kernel:
        return _no(ctx, f"{label} is not inside a kernel")
    exact, _bound, how = _block_dims(ctx)
    if exact is None:
        return _no(ctx, f"the shape of the block of `{fn.name}` is unknown: {how}")
    if exact[1] != 1 or exact[2] != 1:
        return _no(ctx, f"the block is {exact[0]}×{exact[1]}×{exact[2]} ({how}): "
                   "threadIdx.x does not number its threads")
    if start != fn.body_start:
        nodes = getattr(ctx.match, "nodes", None) or []
        first = nodes[0] if nodes and region == "anchor" else None
        if first is None:
            node = ctx.unit.tree.root_node.descendant_for_byte_range(start, start)
            while node is not None and node.parent is not None and \
                    node.parent.start_byte != fn.body_start:
                node = node.parent
            first = node
        parent = first.parent if first is not None else None
        if parent is None or parent.start_byte != fn.body_start or parent.type != \
                "compound_statement":
            return _no(ctx, f"{label} is not at the top level of `{fn.name}`'s body: a "
                       "branch or a loop around it may keep threads away", start)
    for ret in _in(_nodes(ctx.unit, "return_statement"), fn.body_start, fn.body_end):
        if ret.start_byte < end:
            return _no(ctx, f"`{_snippet(ctx.unit.text(ret))}` ({ctx.unit.where(ret.start_byte)}) "
                       f"comes before the end of {label}: a thread that leaves never reaches "
                       "a barrier put there", ret.start_byte)
    return _yes(f"a {exact[0]}-thread one-dimensional block ({how}) reaches {label} whole",
                start)
