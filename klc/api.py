"""klc's Python API: the stable surface for tools that embed klc (a build system, a notebook,
an agent). Documented, with examples that run in CI, in docs/api.md.

Every function takes paths or source text and returns plain frozen dataclasses (strings,
numbers, tuples, and a few dicts of strings), never the parser's trees or the rule engine's
objects, so that the modules behind it may change. Bad input raises :class:`KlcError` (a
one-line message naming the file, and line:column where there is one), as the CLI prints it.

    load_rules(*paths)                  -> RuleSet
    parse(path, source=None)            -> ParsedFile
    list_sites(path, rules=None, ...)   -> list[SiteInfo]
    apply(path, rules, holes=None, ...) -> Applied
    gate(path, against=None, ...)       -> GateResult
    optimize(path, rules=None, ...)     -> Optimized

This module is a facade over klc's packages (``klc.rule``, ``klc.cuda``, ``klc.pipeline``,
``klc.gate``, ``klc.optimize``); it imports them when a function is called.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc.errors import KlcError

if TYPE_CHECKING:
    from klc.cuda.model import Unit
    from klc.rule import Rule

__all__ = [
    "API_VERSION", "Applied", "AppliedSite", "Card", "FunctionInfo", "GateResult", "Hole",
    "KlcError", "Optimized", "Param", "ParsedFile", "RuleInfo", "RuleSet", "SiteInfo", "Step",
    "apply", "gate", "list_sites", "load_rules", "optimize", "parse", "unified_diff",
]

API_VERSION = 1  # raised only when a name or a field below changes meaning or goes away


# --------------------------------------------------------------------------------------
# Rules


@dataclass(frozen=True)
class Hole:
    """A typed hole of a rule: ``int``, ``enum``, ``ident``, ``expr`` or ``stmts``; its
    values (a finite domain), range (``lo``..``hi``) and default, where declared."""

    name: str
    type: str
    values: tuple[str, ...] = ()
    lo: int | None = None
    hi: int | None = None
    default: str | None = None


@dataclass(frozen=True)
class Card:
    """What a rule means, in words; ``verdict`` is a learned card's (``faster``,
    ``neutral``, ``slower``, ``unmeasured``), "" for a hand-written rule."""

    intent: str
    where: str
    conditions: str
    effect: tuple[str, ...]
    pitfalls: tuple[str, ...]
    verdict: str
    precision: str


@dataclass(frozen=True)
class RuleInfo:
    name: str
    kind: str  # "skill" | "simplification"
    description: str
    location: str  # file:line
    holes: tuple[Hole, ...]
    card: Card


@dataclass(frozen=True)
class RuleSet:
    """Rules loaded (and validated) from files and folders."""

    paths: tuple[str, ...]
    rules: tuple[RuleInfo, ...]
    _compiled: tuple[Any, ...] = field(default=(), repr=False, compare=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def select(self, *names: str) -> RuleSet:
        """The rules with these names, in that order (KlcError for an unknown name)."""
        from klc.rule import select_rules

        chosen = select_rules(list(self._compiled), list(names), ", ".join(self.paths))
        return _ruleset(self.paths, chosen)


def _hole(name: str, h: Any) -> Hole:
    return Hole(name, h.type, tuple(str(v) for v in h.values or ()), h.lo, h.hi,
                None if h.default is None else str(h.default))


def _rule_info(r: Rule) -> RuleInfo:
    from klc.measurements import measured

    c = r.card
    return RuleInfo(r.name, r.kind, r.description, r.location,
                    tuple(_hole(n, h) for n, h in r.holes.items()),
                    Card(c.intent, c.where, c.conditions, measured(r).effect, tuple(c.pitfalls),
                         c.verdict, c.precision))


def _ruleset(paths: Iterable[str], rules: list[Rule]) -> RuleSet:
    return RuleSet(tuple(paths), tuple(_rule_info(r) for r in rules), tuple(rules))


def load_rules(*paths: str | Path) -> RuleSet:
    """Load rule files and folders (a folder: its ``*.rule`` files, sorted); with no path,
    the skills library. A rule that does not load raises KlcError (file:line:col)."""
    from klc import plugins, rule

    plugins.load()
    names = [str(p) for p in paths] or rule.default_skill_dirs()
    return _ruleset(names, list(rule.RuleSet.load(names).rules))


def _rules_of(rules: RuleSet | str | Path | None) -> list[Rule]:
    if rules is None:
        return list(load_rules()._compiled)
    if isinstance(rules, RuleSet):
        return list(rules._compiled)
    return list(load_rules(rules)._compiled)


# --------------------------------------------------------------------------------------
# Parsing


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    const: bool
    restrict: bool


@dataclass(frozen=True)
class FunctionInfo:
    """A kernel (``global``), device function (``device``) or launching host function."""

    name: str
    kind: str
    line: int
    col: int
    params: tuple[Param, ...]
    launch_bounds: int | None  # max threads per block, when declared
    shared: tuple[str, ...]  # names of the __shared__ arrays it declares
    loops: int
    barriers: int


@dataclass(frozen=True)
class ParsedFile:
    path: str
    functions: tuple[FunctionInfo, ...]
    problems: tuple[str, ...]  # syntax problems left after recovery, file:line:col: what

    @property
    def kernels(self) -> tuple[FunctionInfo, ...]:
        return tuple(f for f in self.functions if f.kind == "global")


def _unit(path: str | Path, source: str | bytes | None) -> Unit:
    from klc.cuda.parse import parse_bytes, parse_file

    if source is None:
        return parse_file(path)
    return parse_bytes(source.encode() if isinstance(source, str) else source, str(path))


def parse(path: str | Path, source: str | bytes | None = None) -> ParsedFile:
    """Parse a CUDA file (or ``source`` named ``path``): its kernels and device functions,
    and the syntax problems that recovery could not fix."""
    unit = _unit(path, source)
    functions = []
    for f in unit.functions:
        if f.kind == "host" and not f.launches:
            continue
        line, col = unit.position(f.start)
        functions.append(FunctionInfo(
            f.name, f.kind, line, col,
            tuple(Param(p.name, p.type, p.const, p.restrict) for p in f.params),
            _int_or_none(f.launch_bounds.max_threads) if f.launch_bounds else None,
            tuple(s.name for s in f.shared), len(f.loops), len(f.barriers)))
    return ParsedFile(str(path), tuple(functions),
                      tuple(p.describe(unit.path) for p in unit.problems))


def _int_or_none(v: Any) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------------------
# Sites


@dataclass(frozen=True)
class SiteInfo:
    """Where a rule matched: ``applicable``, or refused with ``why_not`` (and the stage
    that refused it: ``context``, ``region`` or ``guard``)."""

    rule: str
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    function: str
    applicable: bool
    why_not: str
    refused_by: str
    intent: str
    verdict: str
    holes: tuple[str, ...]
    text: str  # the matched code

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


def _site(site: Any) -> SiteInfo:
    m = site.match
    line, col = m.unit.position(m.start)
    end_line, end_col = m.unit.position(m.end)
    return SiteInfo(site.rule.name, m.unit.path, line, col, end_line, end_col,
                    site.function_name, site.ok, site.reason or "", site.stage or "",
                    site.rule.card.intent or site.rule.description, site.rule.card.verdict,
                    tuple(site.rule.holes), m.unit.text(m.start, m.end))


def list_sites(path: str | Path, rules: RuleSet | str | Path | None = None, *,
               source: str | bytes | None = None, all: bool = False,
               tree_only: bool = False) -> list[SiteInfo]:
    """The sites where ``rules`` (default: the skills library) apply in a file, in source
    order; ``all``: the refused matches too, each with why not. ``tree_only``: guards from
    tree-sitter facts only (no libclang)."""
    from klc.pipeline import find_sites, spec_of

    unit = _unit(path, source)
    try:
        spec = spec_of(unit)
    except KlcError:
        spec = None  # as klc list: a broken spec block makes the guards that read it refuse
    sites = find_sites(unit, _rules_of(rules), None, spec, clang=not tree_only)
    return [_site(s) for s in sites if s.ok or all]


# --------------------------------------------------------------------------------------
# Applying


@dataclass(frozen=True)
class AppliedSite:
    rule: str
    line: int
    col: int
    function: str
    holes: Mapping[str, str]


@dataclass(frozen=True)
class Applied:
    """What applying rules did: the new ``source`` (the original when nothing changed), a
    unified ``diff``, the sites rewritten, the matches refused, and notes."""

    path: str
    changed: bool
    source: str
    diff: str
    applied: tuple[AppliedSite, ...]
    refused: tuple[SiteInfo, ...]
    notes: tuple[str, ...]


def unified_diff(old: str | bytes, new: str | bytes, path: str) -> str:
    """The unified diff of a file's two versions, as ``klc apply`` and ``klc batch`` print
    it (``klc.content.unified_diff``: headers relative to the working folder, so that
    ``git apply`` and ``patch -p1`` take it; a name that holds a control character or a
    quote is quoted, as git does)."""
    from klc.content import unified_diff as write

    return write(old, new, path)


def apply(path: str | Path, rules: RuleSet | str | Path, holes: Mapping[str, object] | None
          = None, *, source: str | bytes | None = None, only: Iterable[str] = ()) -> Applied:
    """Apply ``rules`` (``only`` these names, if given) to a file, with hole values (each
    validated against its declaration; a hole not given takes its default). Nothing is
    written: ``Applied.source`` is the result."""
    from klc.rewrite import apply_unit
    from klc.rule import select_rules

    compiled = select_rules(_rules_of(rules), list(only), str(path))
    unit = _unit(path, source)
    values = {str(k).lstrip("?"): str(v) for k, v in (holes or {}).items()}
    done = apply_unit(unit, compiled, values)
    applied = tuple(AppliedSite(s.rule, s.line, s.col, s.function, s.holes) for s in done.sites)
    return Applied(str(path), done.changed, done.source.decode("utf-8"), done.diff(str(path)),
                   applied, tuple(_site(s) for s in done.refused), tuple(done.notes))


# --------------------------------------------------------------------------------------
# The gate


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict: ``passed``, ``failed``, ``compiled`` (compile-only: no GPU, or
    only that stage asked) or ``skipped``; each stage's status; the measured numbers when
    profile ran."""

    path: str
    verdict: str
    reason: str
    device: str | None
    arch: str
    stages: Mapping[str, str]  # stage -> passed | failed | skipped
    median_ms: float | None = None
    speedup: float | None = None  # vs the reference, when one was given
    pct_of_sol: float | None = None
    registers: int | None = None

    @property
    def ok(self) -> bool:
        return self.verdict in ("passed", "compiled")


def gate(path: str | Path, against: str | Path | None = None, *, source: str | bytes | None
         = None, arch: str | None = None, stages: Iterable[str] = ("compile", "verify",
                                                                   "profile"),
         timeout_s: float | None = None) -> GateResult:
    """Compile (NVRTC), verify against ``against`` (default: the kernel against itself) on
    fresh inputs, profile and bound by speed of light, under the file's klc-spec. Without a
    GPU it compiles and says that verify and profile need one (verdict ``compiled``)."""
    from klc.cuda.parse import read_source
    from klc.gate import gate as run_gate

    data = read_source(path) if source is None else (
        source.encode() if isinstance(source, str) else source)
    record = run_gate(data, str(path),
                      reference=read_source(against) if against is not None else None,
                      reference_path=str(against) if against is not None else None,
                      arch=arch, stages=tuple(stages), timeout_s=timeout_s)
    prof = record.stages.get("profile")
    numbers: dict[str, Any] = {}
    if prof is not None and prof.status == "passed":
        d = prof.data
        numbers = {"median_ms": d.get("median_ms"), "speedup": d.get("speedup"),
                   "pct_of_sol": d.get("sol", {}).get("pct_of_sol")}
    comp = record.stages.get("compile")
    if comp is not None:
        res = comp.data.get("resources", {}).get(record.kernel or "", {})
        numbers["registers"] = res.get("registers")
    return GateResult(str(path), record.verdict, record.reason, record.device, record.arch,
                      {name: s.status for name, s in record.stages.items()}, **numbers)


# --------------------------------------------------------------------------------------
# Optimizing


@dataclass(frozen=True)
class Step:
    """One accepted step of ``optimize``, with the unified diff it made."""

    skill: str
    site: str
    holes: Mapping[str, str]
    kind: str  # "improvement" | "enabling" | "recipe"
    median_ms: float | None
    speedup_vs_original: float | None
    pct_of_sol: float | None
    diff: str


@dataclass(frozen=True)
class Optimized:
    """The result of ``optimize``: ``changed`` only when a faster kernel passed the final,
    independent re-verification (``verified``); ``mode`` is ``gpu`` or ``static`` (no GPU:
    sites, holes and compiles only; ``candidates`` lists the compile-clean rewrites)."""

    path: str
    changed: bool
    verified: bool
    mode: str
    source: str
    speedup: float | None
    pct_of_sol: float | None
    steps: tuple[Step, ...]
    candidates: tuple[str, ...]  # static mode: "skill at file:line:col ?hole=value ..."
    trials_used: int
    stop_reason: str
    notes: tuple[str, ...]
    report: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


def optimize(path: str | Path, rules: RuleSet | str | Path | None = None, *,
             source: str | bytes | None = None, budget: int = 30, target_sol: float = 0.9,
             filler: str = "search", arch: str | None = None, seed: int = 0,
             use_cache: bool = True) -> Optimized:
    """Apply skills forward under the gate (``klc optimize``): each candidate is gated
    against the original; the best verified faster one is kept, until ``target_sol`` of
    the speed-of-light floor, ``budget`` gate trials, or nothing left to try. Nothing is
    written. ``report`` holds the full JSON report (``klc optimize --report F.json``)."""
    from klc.cuda.parse import read_source
    from klc.optimize import OptimizeOptions
    from klc.optimize import optimize as run_optimize

    if budget < 1:
        raise KlcError(f"budget {budget}: give at least 1 gate trial")
    if not 0 < target_sol <= 1:
        raise KlcError(f"target_sol {target_sol}: give a fraction in (0, 1]")
    data = read_source(path) if source is None else (
        source.encode() if isinstance(source, str) else source)
    result = run_optimize(data, str(path), OptimizeOptions(
        skills=_rules_of(rules), filler=filler, budget=budget, target_sol=target_sol,
        arch=arch, seed=seed, use_cache=use_cache))
    steps = tuple(Step(s.skill, s.site, dict(s.values), s.kind, s.median_ms,
                       s.speedup_vs_original, s.pct_of_sol, s.diff)
                  for s in result.steps)
    candidates = tuple(
        f"{c['skill']} at {c['site']}" + "".join(f" ?{k}={v}" for k, v in
                                                 c.get("values", {}).items())
        for c in result.static_candidates)
    return Optimized(str(path), result.changed, result.verified, result.mode,
                     result.source.decode("utf-8"), result.speedup, result.pct_of_sol, steps,
                     candidates, result.trials_used, result.stop_reason, tuple(result.notes),
                     result.to_json())
