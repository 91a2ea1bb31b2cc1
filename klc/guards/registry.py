"""What a guard predicate is: its parameters and its traits, declared with ``@predicate``.

A predicate is a Python function declared by name (``@predicate``); a rule file only names
it, so a rule cannot smuggle code in, and ``klc check`` refuses a misspelt one at load time
(``klc.guards.table.check_call``, which ``klc.plugins`` hands to the rule loader). Like
MLIR's ``notifyMatchFailure``, every predicate returns a ``Verdict`` whose reason says *why*
with the code it judged and where.

Traits, declared when a predicate registers (``reads=``, required): what its verdict reads
beyond its arguments (``READS``), and whether that verdict may be shared by every use of one
declaration (``per_declaration``). The caches read these traits and nothing else: a
predicate registered without saying what it reads is an error at import time, and one that
claims to be shared per declaration while it reads the position of the match, the rule or
the rest of the file is refused there too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from klc.analysis.loops import enclosing_loop
from klc.rule.guard import GuardArg

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit
    from klc.match import Match
    from klc.spec import Bound, Spec


class Verdict:
    """What a guard decided, and why. ``start`` is the byte offset of the code it judged.

    The reason may be given as a function that writes it: it is written when first read
    (most refusals of ``klc list`` without ``--all`` are never shown). Immutable by
    convention; compared and hashed by its fields, the reason written."""

    __slots__ = ("_reason", "ok", "start", "unknown")

    def __init__(self, ok: bool, reason: str | Callable[[], str], start: int | None = None,
                 unknown: bool = False) -> None:
        self.ok = ok
        self._reason = reason
        self.start = start
        # undecided: pending on a hole (ok) or a missing fact (not ok)
        self.unknown = unknown

    @property
    def reason(self) -> str:
        reason = self._reason
        if reason.__class__ is not str:
            reason = self._reason = reason()  # type: ignore[operator]
        return reason  # type: ignore[return-value]

    def _key(self) -> tuple[bool, str, int | None, bool]:
        return (self.ok, self.reason, self.start, self.unknown)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Verdict:
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"Verdict(ok={self.ok!r}, reason={self.reason!r}, start={self.start!r}, "
                f"unknown={self.unknown!r})")

    def __reduce__(self) -> tuple[type[Verdict], tuple[bool, str, int | None, bool]]:
        return (Verdict, self._key())


@dataclass
class GuardContext:
    """What a guard may look at: the match, the filled hole values, the kernel spec."""

    match: Match
    holes: dict[str, str] = field(default_factory=dict)
    spec: Spec | Bound | None = None  # the kernel's spec (or one bound to it); optional
    clang: bool = True  # False: tree-sitter facts only (``klc list --tree-only``)
    # verdicts of predicate calls at this match, by (predicate, arguments): shared by the
    # rules that share an anchor (``klc.pipeline.find_sites``). A predicate reads only the
    # match, its arguments, the spec and ``clang`` -- except those that read the rule
    # (``Traits.reads_rule``), never kept
    memo: dict[tuple[Any, ...], Verdict] | None = None
    # fills a rewrite template at the match as the rewrite will (``klc.edits.render``, which
    # sits above the guards: the pipeline passes it). ``smem_fits`` counts the __shared__
    # arrays a rule's rewrite declares with it; without it, it cannot tell
    render: Callable[[str, Match, dict[str, str]], str] | None = None

    @property
    def unit(self) -> Unit:
        return self.match.unit

    @property
    def function(self) -> Function | None:
        return self.match.function


# What a predicate's verdict may read beyond its arguments: each predicate names the ones it
# reads when it registers. The caches rely on these words (see ``Traits``).
READS: dict[str, str] = {
    "arguments": "the code its metavariables bound, and its other arguments",
    "declarations": "the declarations the names it is given resolve to in the function, and "
                    "the writes, aliases and uses of those variables there",
    "layout": "a variable's declared type or layout",
    "position": "where the match is: the anchor, the loop or statements around it",
    "spec": "the kernel spec, or the launches of the kernel in the file",
    "file": "the rest of the file and the headers it includes (callers, declarations)",
    "rule": "the rule being judged (its edits) or hole values beyond its arguments: its "
            "verdict at a match is never shared between rules (GuardContext.memo)",
    "holes": "hole values alone, no code: a relation the search filler checks before any "
             "other static check",
}
# The facts of the code a verdict depends on, for composing the rewrites of one run
# (``klc.edits.facts``): an applied rewrite that changes a fact a pending site's guards read
# makes that site's verdict stale, and it is judged again on the rewritten code. Each
# predicate's facts follow from what it reads (``_FACTS_OF_READS``), plus those it names
# itself (``facts=``). No guard reads registers: the gate measures them.
FACTS: dict[str, str] = {
    "code": "the code of the function the match is in (the statements around it, loops, "
            "barriers, later uses)",
    "launch": "the launch geometry (block, grid: the spec and the host launches) and "
              "__launch_bounds__",
    "shared": "the __shared__ memory the kernel declares",
    "declarations": "the declarations, types, layouts, writes, aliases and uses of the "
                    "variables the match names",
    "file": "the rest of the file (callers, where a kernel's name escapes)",
}
_FACTS_OF_READS: dict[str, tuple[str, ...]] = {
    "position": ("code",), "spec": ("launch",), "declarations": ("declarations",),
    "layout": ("declarations",), "file": ("file",),
}
# what a verdict shared by every use of one declaration may read
_PER_DECLARATION_READS = frozenset({"arguments", "declarations", "layout"})


@dataclass(frozen=True)
class Traits:
    """What a predicate's verdict reads (words of ``READS``), and how it may be shared.

    ``per_declaration``: where each $X argument is a plain identifier that names a local or
    a parameter, the verdict (ok, reason, unknown) depends only on the enclosing function,
    on that name and on the declaration it resolves to at the use (``lookup``: the closest
    preceding local, else the parameter), on constant or hole arguments and on the region
    ``kernel``; never on where in the function the use is (no reason cites the use, and
    libclang is never asked when a declaration is found). ``klc.pipeline.find_sites`` judges
    a guard made only of these once per function and declarations, not once per use (a
    qualifier rule anchored on ``$X[$I]`` matches every subscript of a kernel).
    ``pass_only``: a simplification's guard needs it and its inverse skill does not: klc
    learn leaves it out of the skill's guard (removing const needs every caller to pass
    non-const pointers; adding it does not)."""

    reads: frozenset[str]
    per_declaration: bool = False
    pass_only: bool = False
    facts: frozenset[str] = frozenset()  # words of ``FACTS``: what composing rewrites checks

    @property
    def reads_rule(self) -> bool:
        return "rule" in self.reads

    @property
    def reads_layout(self) -> bool:
        return "layout" in self.reads

    @property
    def hole_relation(self) -> bool:
        return self.reads == {"holes"}


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
    """A named guard predicate: its parameters, its traits, a one-line doc for ``klc check
    --predicates``, and the function that decides it."""

    name: str
    params: tuple[ArgSpec, ...]
    doc: str
    traits: Traits
    fn: Callable[..., Verdict] = field(repr=False, compare=False)

    @property
    def signature(self) -> str:
        if not self.params:
            return self.name
        labels = [f"[{p.label}]" if p.optional else p.label for p in self.params]
        return f"{self.name}({', '.join(labels)})"


PREDICATE_ATTR = "__klc_predicate__"  # where a declared predicate's function keeps it

REGIONS = frozenset({"anchor", "loop", "kernel"})

_MV = frozenset({"metavar"})
_VALUE = frozenset({"int", "hole", "metavar"})


def _metavar(label: str = "$X") -> ArgSpec:
    return ArgSpec(label, _MV)


def _region_arg(optional: bool = True) -> ArgSpec:
    return ArgSpec("region", frozenset({"name"}), REGIONS, optional)


def predicate(name: str, *params: ArgSpec, reads: tuple[str, ...], per_declaration: bool = False,
              pass_only: bool = False, facts: tuple[str, ...] = ()
              ) -> Callable[[Callable[..., Verdict]], Callable[..., Verdict]]:
    """Declare a predicate with its traits (``Traits``); the first line of its docstring is
    what the CLI lists. ``reads`` is required: the words of ``READS`` its verdict reads;
    ``facts``: words of ``FACTS`` it reads beyond those its ``reads`` imply. The function is
    returned as it is, carrying its ``Predicate`` (``PREDICATE_ATTR``); the table of
    predicates is built from the families' modules (``klc.guards.table``), not here."""
    traits = _traits(name, params, reads, per_declaration, pass_only, facts)

    def declare(fn: Callable[..., Verdict]) -> Callable[..., Verdict]:
        doc = (fn.__doc__ or "").strip().split("\n\n")[0]
        setattr(fn, PREDICATE_ATTR, Predicate(name, params, " ".join(doc.split()), traits, fn))
        return fn

    return declare


def collect(families: tuple[ModuleType, ...]) -> dict[str, Predicate]:
    """The predicates the family modules declare, by name; a ValueError when two share a
    name."""
    table: dict[str, Predicate] = {}
    for module in families:
        for value in vars(module).values():
            pred = getattr(value, PREDICATE_ATTR, None)
            if not isinstance(pred, Predicate) or value.__module__ != module.__name__:
                continue  # not a predicate, or one another family declares
            if pred.name in table:
                raise ValueError(f"guard predicate {pred.name!r} is declared twice "
                                 f"({table[pred.name].fn.__module__}, {module.__name__})")
            table[pred.name] = pred
    return table


def _traits(name: str, params: tuple[ArgSpec, ...], reads: tuple[str, ...],
            per_declaration: bool, pass_only: bool, facts: tuple[str, ...] = ()) -> Traits:
    """The traits of a predicate being registered; a ValueError (at import) when they cannot
    be right, so that no cache shares a verdict it should not."""
    words = frozenset(reads)
    unknown = sorted(words - set(READS))
    if not words or unknown:
        raise ValueError(f"guard predicate {name!r}: reads= must name what its verdict reads, "
                         f"among {', '.join(READS)} (got {', '.join(unknown) or 'nothing'})")
    if "holes" in words and (words != {"holes"} or any(
            p.kinds - {"int", "hole"} for p in params)):
        raise ValueError(f"guard predicate {name!r}: a hole relation reads hole values alone "
                         "(reads=('holes',), integer or hole parameters only)")
    if per_declaration and not ("declarations" in words and words <= _PER_DECLARATION_READS):
        raise ValueError(f"guard predicate {name!r}: a verdict shared per declaration reads "
                         f"the declarations and only {', '.join(sorted(_PER_DECLARATION_READS))}")
    odd = sorted(set(facts) - set(FACTS))
    if odd:
        raise ValueError(f"guard predicate {name!r}: facts= names {', '.join(odd)}, not among "
                         f"{', '.join(FACTS)}")
    implied = {f for w in words for f in _FACTS_OF_READS.get(w, ())}
    return Traits(words, per_declaration, pass_only, frozenset(implied | set(facts)))




# --------------------------------------------------------------------------------------
# Verdicts with their reasons, for the predicates


def _no(ctx: GuardContext, reason: str | Callable[[], str], start: int | None = None
        ) -> Verdict:
    """A refusal; ``reason`` may be a function that writes it (called when it is read)."""
    return Verdict(False, reason, ctx.match.start if start is None else start)


def _unknown(ctx: GuardContext, reason: str, start: int | None = None) -> Verdict:
    return Verdict(False, "unknown: " + reason, ctx.match.start if start is None else start,
                   True)


def _yes(reason: str | Callable[[], str], start: int | None = None) -> Verdict:
    return Verdict(True, reason, start)


def _region(ctx: GuardContext, region: str) -> tuple[int, int, str] | Verdict:
    """The byte span and a description of ``anchor``, ``loop`` or ``kernel``."""
    m, fn = ctx.match, ctx.function
    if region == "anchor":
        return m.start, m.end, f"the anchor ({ctx.unit.where(m.start)})"
    if fn is None:
        return _no(ctx, f"the match ({ctx.unit.where(m.start)}) is not inside a function")
    if region == "loop":
        loop = enclosing_loop(fn, m.start, m.end)
        if loop is None:
            return _no(ctx, f"the match ({ctx.unit.where(m.start)}) is not inside a loop")
        return loop.start, loop.end, f"the {loop.kind} loop at {ctx.unit.where(loop.start)}"
    return fn.body_start, fn.body_end, f"{fn.kind} function `{fn.name}`"


def _kernel_region(ctx: GuardContext, region: str
                   ) -> tuple[int, int, str, Function] | Verdict:
    """:func:`_region`'s span and description, and the kernel it lies in (a Verdict when it
    lies in none): the prologue of the predicates that judge a kernel's whole body."""
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    fn = ctx.function
    if fn is None or not fn.is_kernel:
        return _no(ctx, f"{label} is not inside a kernel")
    return start, end, label, fn
