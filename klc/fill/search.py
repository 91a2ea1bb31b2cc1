"""The search filler: the embedded default, no network, no model.

It fills the holes of one skill at one site by searching their finite domains
(``HoleDecl.domain()``), spending the caller's budget of gate trials where they are most
likely to pay, and never spending one on a candidate that static checks can refuse.

Static constraints (CPU only, before any GPU trial; :func:`static_check`):

- the guards, evaluated again with the hole values filled (``klc.pipeline.apply_site``): a
  value for which a guard fails (``equals($W, ?warps)``, ``smem_fits``) is not proposed;
- the rewrite must parse (the pipeline's reparse check) and the kernel's spec must still fit
  its kernel;
- NVRTC compile (cached by hash): a candidate that does not compile, that spills more than the
  current version, whose registers per block exceed the register file (65536), whose static
  plus dynamic shared memory exceeds the device's opt-in limit, whose block exceeds 1024
  threads or its own ``__launch_bounds__``, is refused;
- divisibility: a launch edit that divides the block (``block.x /= ?warps``) needs a block
  dimension divisible by the value.

Skills: a learned card's ``verdict`` ranks them (:func:`site_rank`): ``faster`` first, then
``unmeasured`` (and hand-written rules, which have none), then ``neutral``; ``slower`` (measured
slower wherever it was measured: "when not" knowledge) is never recommended, neither by
:func:`candidate_sites` nor by the filler, unless the caller asks (``include_slower``).

Ranking: for each hole, the site's own guess first (a hole that reshapes the block: the
value that gives this site the block the skill was learned with, ``klc.fill.shape``), then its
default, then the values the skill card mentions (its measured effects and provenance:
``?factor = 8``, ``factor 8``, then other integers of the domain written there, unless written
as another hole's value), then the rest of the domain by closeness to those (in log2 for
positive integers, by position for enums). An assignment of several holes ranks by the sum of
its holes' ranks.

Strategy: when the untried assignments fit in the remaining budget, they are all proposed in
rank order (exhaustive). Otherwise the ranked head (the default and the card's values) goes
first, then Optuna's TPE sampler over the categorical domains, told every earlier trial at
this site (``FillRequest.history``: measured times to minimise; failed trials and static
refusals as failed trials) so that it samples near what was fast. Without Optuna, a seeded
random sample of the untried assignments. Open holes (``expr``, ``stmts``, ``ident``) take
their default when they have one; without a default search cannot fill them, and says so
(``last_reason``). An ident hole whose value the rewrite declares as a new variable
(``klc.rule.fresh``) takes the first fresh variant of its default at the site instead
(``offset``, else ``offset_1``, ``offset_2``, ...; :func:`with_fresh_defaults`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import random
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from klc.content import sha256 as _sha
from klc.errors import KlcError
from klc.fill import FillRequest, Trial
from klc.fill.shape import launch_anchors
from klc.measurements import measured

if TYPE_CHECKING:
    from klc.cuda.model import Unit
    from klc.pipeline import Site
    from klc.rule import HoleDecl, Rule

REGISTERS_PER_BLOCK = 65536  # sm_70 .. sm_90: the register file one block may use
MAX_THREADS_PER_BLOCK = 1024
WARMUP = 4  # ranked assignments proposed before the sampler takes over (large domains)
MAX_ASKS = 64  # sampler draws per proposal before giving up on finding an untried one


# --------------------------------------------------------------------------------------
# Static checks


@dataclass
class StaticCheck:
    """What the CPU-only checks said about one assignment at one site."""

    values: dict[str, str]
    ok: bool
    reason: str = ""  # why refused ("" when ok)
    stage: str = ""  # "values" | "guard" | "rewrite" | "spec" | "compile" | "resources"
    source: bytes | None = None  # the candidate, when the rewrite happened
    resources: dict[str, Any] = field(default_factory=dict)  # registers, spills, smem, threads

    def to_json(self) -> dict[str, Any]:
        return {"values": self.values, "ok": self.ok, "reason": self.reason,
                "stage": self.stage, "resources": self.resources}


_STATIC_MEMO: dict[tuple[Any, ...], StaticCheck] = {}
_MEMO_CAP = 4096


def site_key(site: Site) -> str:
    """What identifies a site across versions of a kernel: the rule, the function and the
    matched text (offsets move when an earlier rewrite changes the file)."""
    m = site.match
    return f"{site.rule.name}@{site.function_name}:{_sha(m.unit.source[m.start:m.end])[:16]}"


def hole_dependent(rule: Rule) -> bool:
    """Whether the rule's guard reads a hole (``equals($W, ?warps)``, or ``smem_fits`` of a
    rewrite that declares shared memory sized by a hole): its verdict changes with the
    values, so a site refused at the default values may still be sound for others."""
    from klc.rule import calls

    if rule.guard is None or not rule.holes:
        return False
    return any(a.kind == "hole" for c in calls(rule.guard) for a in c.args) or \
        any(c.name == "smem_fits" for c in calls(rule.guard))


def declared_idents(rule: Rule) -> tuple[str, ...]:
    """The ident holes whose values the rule's rewrites (``within`` blocks included) declare
    as new variables (``klc.rule.fresh``): each must be a name the function does not use."""
    from klc.rule.fresh import declared_holes

    out = dict.fromkeys(declared_holes(rule.edits, rule.holes))
    for e in rule.edits:
        for sub in e.subrules():
            out.update(dict.fromkeys(declared_holes(sub.edits, rule.holes)))
    return tuple(out)


MAX_FRESH_SUFFIX = 99  # offset, offset_1, ..., offset_99


def fresh_value(site: Site, name: str) -> str:
    """The first of ``name``, ``name_1``, ``name_2``, ... that is fresh in the site's function
    as the pipeline judges a declared hole's value (``klc.guards.loops.fresh_in_function``);
    ``name`` itself when none is (the site is then refused, saying why)."""
    from klc.guards import GuardContext
    from klc.guards.loops import fresh_in_function

    ctx = GuardContext(site.match)
    for k in range(MAX_FRESH_SUFFIX + 1):
        word = f"{name}_{k}" if k else name
        if fresh_in_function(ctx, word, replaced=True).ok:
            return word
    return name


def with_fresh_defaults(rule: Rule, site: Site) -> Rule:
    """The rule with the default of each ident hole its rewrite declares replaced by a fresh
    variant at this site (``offset`` -> ``offset_1`` where the kernel has an ``offset``), so
    that the search proposes a value the site's guards accept; the rule itself when nothing
    changes."""
    holes = dict(rule.holes)
    for name in declared_idents(rule):
        decl = holes[name]
        if decl.default is None:
            continue
        value = fresh_value(site, str(decl.default))
        if value != str(decl.default):
            holes[name] = dataclasses.replace(decl, default=value)
    if holes == rule.holes:
        return rule
    return dataclasses.replace(rule, holes=holes)


# the order in which skills are recommended, by their card's verdict ("" : a hand-written
# rule, which has none, ranks with the unmeasured ones); "slower" is last, and only ranked at
# all when the caller asked to include slower skills
VERDICT_RANK = {"faster": 0, "unmeasured": 1, "": 1, "neutral": 2, "slower": 3}


def is_slower(rule: Rule) -> bool:
    """Whether the rule's card says it was measured slower wherever it was measured."""
    return rule.card.verdict == "slower"


def slower_note(rule: Rule) -> str:
    """Why a slower skill is not recommended, and how to try it anyway."""
    return (f"{rule.name} ({rule.location}): not recommended: its card's verdict is "
            "\"slower\" (measured slower wherever it was measured); --include-slower tries it")


def site_rank(site: Site) -> tuple[int, float, int, str]:
    """The sort key of a site: its card's verdict (faster, unmeasured, neutral, slower), then
    its best measured speedup (unmeasured: 1.0x), then source order."""
    rule = site.rule
    return (VERDICT_RANK.get(rule.card.verdict, 1), -(card_speedup(rule) or 1.0),
            site.match.start, rule.name)


def candidate_sites(unit: Unit, rules: list[Rule], spec: Any | None, *,
                    include_slower: bool = False) -> list[Site]:
    """Where the rules may apply: the applicable sites, and the sites refused only by a guard
    that reads a hole or by the name a declared ident hole's default gives (``find_sites``
    judges those at the default values; the filler tries the others, and ``static_check``
    judges each assignment again). Skills whose verdict is
    ``slower`` are left out unless ``include_slower``."""
    from klc.pipeline import find_sites

    if not include_slower:
        rules = [r for r in rules if not is_slower(r)]
    return [s for s in find_sites(unit, rules, None, spec)
            if s.ok or (s.stage == "guard" and (hole_dependent(s.rule)
                                                or _declared_name_refusal(s)))]


def _declared_name_refusal(site: Site) -> bool:
    """Whether the site was refused only for the name a declared ident hole's default gives
    (``klc.rule.fresh``): the filler proposes a fresh variant instead."""
    from klc.guards.loops import DECLARED_NAME

    return bool(declared_idents(site.rule)) and DECLARED_NAME in site.reason


def resolve_arch(arch: str | None) -> str:
    """The arch candidates are compiled for: the given one, the device's, or sm_90."""
    from klc.gate import gpu_status
    from klc.gate.compile import DEFAULT_ARCH, check_arch

    if arch:
        return check_arch(arch)
    device, _ = gpu_status()
    return device or DEFAULT_ARCH


def static_check(unit: Unit, site: Site, values: dict[str, str], spec: Any | None,
                 arch: str) -> StaticCheck:
    """Rewrite ``site`` with ``values`` and check the candidate without a GPU (see the module
    doc). Memoised by (source, site, values, arch): the filler and the optimizer both ask."""
    key = (_sha(unit.source), site.rule.name, site.match.start, site.match.end,
           tuple(sorted(values.items())), arch)
    hit = _STATIC_MEMO.get(key)
    if hit is not None:
        return hit
    result = _static_check(unit, site, values, spec, arch)
    if len(_STATIC_MEMO) >= _MEMO_CAP:
        _STATIC_MEMO.clear()
    _STATIC_MEMO[key] = result
    return result


def _static_check(unit: Unit, site: Site, values: dict[str, str], spec: Any | None,
                  arch: str) -> StaticCheck:
    from klc.pipeline import apply_site

    rule = site.rule
    try:
        clean = {n: rule.holes[n].validate(v) for n, v in values.items()}
    except KeyError as e:
        return StaticCheck(values, False, f"rule {rule.name} has no hole ?{e.args[0]}",
                           "values")
    except KlcError as e:
        return StaticCheck(values, False, str(e), "values")
    try:
        outcome = apply_site(unit, site, clean, spec)
    except KlcError as e:
        return StaticCheck(clean, False, str(e), "rewrite")
    if outcome.refused:
        return StaticCheck(clean, False, outcome.refused[0].reason, "guard")
    if not outcome.changed:
        why = outcome.skipped[0][1] if outcome.skipped else "the rewrite changes nothing"
        return StaticCheck(clean, False, why, "rewrite")
    candidate = outcome.source
    launch = [c for rw in outcome.applied for c in rw.launch]
    return _check_candidate(unit, candidate, clean, launch, arch)


def groupable(rule: Rule) -> bool:
    """Whether applying the rule at every site at once is one local change per site (no
    declaration inserted at the kernel's start). A launch-geometry change is allowed: the
    pipeline applies an identical change once for all the sites (``block.y /= 4`` once, as
    the lineage step that erased it did), which is what a skill that reshapes every loop of
    a kernel for a smaller block needs; applied at one site alone, the other loops would
    still assume the old block."""
    return all(e.groupable for e in rule.edits)


def static_check_rule(unit: Unit, rule: Rule, values: dict[str, str], spec: Any | None,
                      arch: str) -> StaticCheck:
    """Like :func:`static_check`, for the rule applied at every site where it applies with
    these values (``klc.pipeline.apply_rules``: what ``klc apply`` does, and what a lineage
    step did), the way an expert applies one optimization throughout a kernel."""
    key = (_sha(unit.source), rule.name, "*", tuple(sorted(values.items())), arch)
    hit = _STATIC_MEMO.get(key)
    if hit is not None:
        return hit
    result = _static_check_rule(unit, rule, values, spec, arch)
    if len(_STATIC_MEMO) >= _MEMO_CAP:
        _STATIC_MEMO.clear()
    _STATIC_MEMO[key] = result
    return result


def _static_check_rule(unit: Unit, rule: Rule, values: dict[str, str], spec: Any | None,
                       arch: str) -> StaticCheck:
    from klc.pipeline import apply_rules

    try:
        clean = {n: rule.holes[n].validate(v) for n, v in values.items()}
    except KeyError as e:
        return StaticCheck(values, False, f"rule {rule.name} has no hole ?{e.args[0]}",
                           "values")
    except KlcError as e:
        return StaticCheck(values, False, str(e), "values")
    try:
        outcome = apply_rules(unit, [rule], clean, spec)
    except KlcError as e:
        return StaticCheck(clean, False, str(e), "rewrite")
    if not outcome.changed:
        why = outcome.refused[0].reason if outcome.refused else "the rewrite changes nothing"
        return StaticCheck(clean, False, why, "guard" if outcome.refused else "rewrite")
    launch = [c for rw in outcome.applied for c in rw.launch]
    check = _check_candidate(unit, outcome.source, clean, launch, arch)
    check.resources["sites_rewritten"] = len(outcome.applied)
    return check


def _check_candidate(unit: Unit, candidate: bytes, values: dict[str, str],
                     launch: list[tuple[str, str, str, int]], arch: str) -> StaticCheck:
    from klc.analysis.launch import SMEM_OPTIN
    from klc.cuda.parse import parse_bytes
    from klc.gate.compile import compile_unit
    from klc.spec import check_spec, evaluate_int, launch_dims, load_spec

    def refuse(stage: str, why: str, res: dict[str, Any] | None = None) -> StaticCheck:
        return StaticCheck(values, False, why, stage, candidate, res or {})

    cand_unit = parse_bytes(candidate, unit.path)
    try:
        cspec = load_spec(candidate, unit.path)
        bound = check_spec(cspec, cand_unit) if cspec is not None else None
    except KlcError as e:
        return refuse("spec", f"the rewritten kernel's spec no longer fits it: {e}")
    base_spec = load_spec(unit.source, unit.path)
    base_bound = None
    if base_spec is not None:
        try:
            base_bound = check_spec(base_spec, unit)
        except KlcError:
            base_bound = None
    # divisibility of launch edits that divide the block
    if base_bound is not None:
        dims = launch_dims(base_bound.spec.block, base_bound.env())
        for dim, axis, op, factor in launch:
            cur = dims["xyz".index(axis)]
            if dim == "block" and op == "/" and cur % factor:
                return refuse("resources", f"block.{axis} = {cur} is not divisible by {factor}")
    names = (bound.name_expression,) if bound else ()
    options = cspec.options if cspec else ()
    cres = compile_unit(cand_unit, arch=arch, name_expressions=names, options=options)
    if not cres.ok:
        first = (cres.error or "compile failed").strip().splitlines()[0]
        return refuse("compile", f"does not compile: {first}")
    res = _main_resources(cres, names)
    info: dict[str, Any] = dict(res) if res else {}
    base_spill = _base_spills(unit, arch, base_bound)
    spill = (res or {}).get("spill_stores", 0) + (res or {}).get("spill_loads", 0)
    if spill > base_spill:
        return refuse("resources", f"spills {spill} B to local memory (the current version "
                      f"spills {base_spill} B)", info)
    if bound is None:
        return StaticCheck(values, True, "", "", candidate, info)
    env = bound.env()
    try:
        block = launch_dims(bound.spec.block, env)
        dyn = evaluate_int(bound.spec.shared, env) if bound.spec.shared else 0
    except Exception as e:  # an expression the spec cannot evaluate: the gate would refuse
        return refuse("spec", f"the rewritten spec's launch does not evaluate: {e}", info)
    threads = block[0] * block[1] * block[2]
    info["threads_per_block"] = threads
    if threads > MAX_THREADS_PER_BLOCK:
        return refuse("resources", f"{threads} threads per block (block {list(block)}) exceed "
                      f"{MAX_THREADS_PER_BLOCK}", info)
    regs = info.get("registers")
    if regs and regs * threads > REGISTERS_PER_BLOCK:
        return refuse("resources", f"{regs} registers x {threads} threads = {regs * threads} "
                      f"registers per block exceed the register file ({REGISTERS_PER_BLOCK})",
                      info)
    smem = info.get("static_smem", 0) + dyn
    info["smem_per_block"] = smem
    if smem > SMEM_OPTIN:
        return refuse("resources", f"{smem} B of shared memory per block (static "
                      f"{info.get('static_smem', 0)} + dynamic {dyn}) exceed the device's "
                      f"{SMEM_OPTIN} B", info)
    fn = next((f for f in cand_unit.functions if f.name == bound.function_name), None)
    if fn is not None and fn.launch_bounds is not None:
        try:
            lb = evaluate_int(fn.launch_bounds.max_threads, env)
        except Exception:
            lb = None
        if lb is not None and lb < threads:
            return refuse("resources", f"__launch_bounds__({lb}) is below the launch's "
                          f"{threads} threads per block: every launch would fail", info)
    return StaticCheck(values, True, "", "", candidate, info)


def _main_resources(cres: Any, names: tuple[str, ...]) -> dict[str, Any] | None:
    if names and names[0] in cres.resources:
        return dict(vars(cres.resources[names[0]]))
    if cres.resources:  # no spec: the sum over entries is what can spill
        total: dict[str, Any] = {}
        for r in cres.resources.values():
            for k, v in vars(r).items():
                total[k] = max(total.get(k) or 0, v or 0) if k == "registers" else \
                    (total.get(k) or 0) + (v or 0)
        return total
    return None


_BASE_SPILLS: dict[tuple[str, str], int] = {}


def _base_spills(unit: Unit, arch: str, bound: Any | None) -> int:
    """Spill bytes of the version being rewritten (a candidate may not spill more)."""
    from klc.gate.compile import compile_unit

    key = (_sha(unit.source), arch)
    if key not in _BASE_SPILLS:
        names = (bound.name_expression,) if bound else ()
        cres = compile_unit(unit, arch=arch, name_expressions=names,
                            options=bound.spec.options if bound else ())
        res = (_main_resources(cres, names) if cres.ok else None) or {}
        _BASE_SPILLS[key] = res.get("spill_stores", 0) + res.get("spill_loads", 0)
    return _BASE_SPILLS[key]


# --------------------------------------------------------------------------------------
# Domains and ranking


def card_text(rule: Rule) -> str:
    m = measured(rule)
    return "\n".join((*m.effect, *m.provenance))


def card_speedup(rule: Rule) -> float | None:
    """The best measured speedup the card reports ("measured: 1.31x on H100 ..."), or None."""
    effect = "\n".join(measured(rule).effect)
    found = [float(m) for m in re.findall(r"(\d+(?:\.\d+)?)\s*x\b", effect)]
    return max(found) if found else None


def card_values(rule: Rule, name: str, decl: HoleDecl) -> list[str]:
    """Values of hole ``name`` that the card's measured effects and provenance mention:
    first those written next to the hole's name (``?factor = 8``, ``factor 8``), then, for
    int holes, other whole numbers of the domain (not part of a decimal, a speedup or a
    power like 2^24)."""
    text = card_text(rule)
    named = re.findall(rf"\??\b{re.escape(name)}\b\s*(?:=|:|is|of)?\s*([A-Za-z_0-9]+)", text)
    out = [v for v in named if decl.contains(v)]
    if decl.type == "int":
        # a number written as another hole's value (``?f=2`` for hole ty) says nothing of this one
        others = "|".join(re.escape(n) for n in rule.holes if n != name)
        taken = {m.start(1) for m in re.finditer(rf"\?(?:{others})\s*=\s*(\d+)", text)} \
            if others else set()
        for m in re.finditer(r"(?<![\w.^])(\d+)(?![\w.^%])", text):
            if decl.contains(m.group(1)) and m.start(1) not in taken:
                out.append(m.group(1))
    seen: list[str] = []
    for v in out:
        if v not in seen:
            seen.append(v)
    return seen


def ranked_values(rule: Rule, name: str, decl: HoleDecl, first: str | None = None
                  ) -> list[str]:
    """The hole's domain (or its default alone, for an open hole), best guess first:
    ``first`` (the site's own best guess: :func:`klc.fill.shape.launch_anchors`), the
    default, the card's values, then the rest by closeness to those."""
    domain = decl.domain()
    if domain is None:
        return [str(decl.default)] if decl.default is not None else []
    values = [str(v) for v in searched_values(decl, domain)]
    anchors: list[str] = [first] if first is not None and decl.contains(first) else []
    if decl.default is not None and decl.contains(decl.default) and \
            str(decl.default) not in anchors:
        anchors.append(str(decl.default))
    for v in card_values(rule, name, decl):
        if v not in anchors:
            anchors.append(v)
    if not anchors:
        anchors = [values[0]]
    values += [a for a in anchors if a not in values]  # (a large range: listed in part)
    pos = {v: i for i, v in enumerate(values)}

    def distance(v: str) -> float:
        if decl.type == "int" and all(int(a) > 0 for a in anchors) and int(v) > 0:
            return min(abs(math.log2(int(v)) - math.log2(int(a))) for a in anchors)
        return float(min(abs(pos[v] - pos[a]) for a in anchors))

    rest = sorted((v for v in values if v not in anchors), key=lambda v: (distance(v), pos[v]))
    return anchors + rest


MAX_SEARCHED = 4096  # values of one hole's domain that search ranks; a larger range, in part


def searched_values(decl: HoleDecl, domain: Sequence[int | str]) -> Sequence[int | str]:
    """The values of a domain that search ranks: all of them, or for a range of more than
    ``MAX_SEARCHED`` values its ends, its powers of two and their neighbours (what a tile, a
    factor or a block size is), never the range listed whole."""
    if not isinstance(domain, range) or (decl.size() or 0) <= MAX_SEARCHED:
        return domain
    lo, hi = domain.start, domain.stop - 1
    picks = {lo, hi}
    p = 1
    while p <= hi and len(picks) < MAX_SEARCHED:
        for v in (p - 1, p, p + 1, -p):
            if lo <= v <= hi:
                picks.add(v)
        p *= 2
    return sorted(picks)[:MAX_SEARCHED]


def open_holes_without_default(rule: Rule) -> list[str]:
    return [n for n, d in rule.holes.items() if d.domain() is None and d.default is None]


def hole_relations(rule: Rule) -> list[Any]:
    """The guard's conjuncts that tie hole values alone (predicates registered with the trait
    ``Traits.hole_relation``, such as ``is_product(?t, ?r, ?factor)``, learned by
    ``klc.reverse``): judged without any code."""
    from klc.guards import with_trait
    from klc.rule import GuardAnd, GuardCall

    if rule.guard is None:
        return []
    relations = with_trait(lambda t: t.hole_relation)
    parts = list(rule.guard.operands) if isinstance(rule.guard, GuardAnd) else [rule.guard]
    return [c for c in parts if isinstance(c, GuardCall) and c.name in relations
            and all(a.kind in ("hole", "int") for a in c.args)]


def relation_refusal(rule: Rule, values: dict[str, str]) -> str:
    """Why ``values`` break one of the rule's hole relations ("" when they keep them all, or
    when a hole a relation reads has no value yet)."""
    from klc.guards import PREDICATES

    for call in hole_relations(rule):
        args: list[Any] = []
        for a in call.args:
            if a.kind == "hole":
                v = values.get(str(a.value))
                if v is None:
                    break
                try:
                    args.append(int(str(v).strip(), 0))
                except ValueError:
                    args.append(v)
            else:
                args.append(a.value)
        else:
            verdict = PREDICATES[call.name].fn(None, *args)
            if not verdict.ok:
                return f"{call.name}: {verdict.reason}"
    return ""


def space_size(rule: Rule) -> int:
    """Assignments of the rule's holes, less those that break a hole relation."""
    if hole_relations(rule):
        return len(ranked_assignments(rule))
    return math.prod(len(ranked_values(rule, n, d)) for n, d in rule.holes.items())


def ranked_assignments(rule: Rule, limit: int | None = None,
                       first: dict[str, str] | None = None) -> list[dict[str, str]]:
    """Assignments in rank order (sum of per-hole ranks, then the earlier hole's rank first).
    With ``limit``, only the best ``limit`` (from the heads of each hole's list). ``first``:
    the site's own best guess per hole (:func:`ranked_values`)."""
    names = list(rule.holes)
    first = first or {}
    lists = [ranked_values(rule, n, rule.holes[n], first.get(n)) for n in names]
    if limit is not None:
        width = max(1, limit)
        lists = [lst[:width] for lst in lists]
    combos = itertools.product(*(list(enumerate(lst)) for lst in lists))
    scored = sorted(combos, key=lambda c: (sum(i for i, _ in c), [i for i, _ in c]))
    out = [{n: v for n, (_, v) in zip(names, c, strict=True)} for c in scored]
    if hole_relations(rule):
        out = [v for v in out if not relation_refusal(rule, v)]
    return out[:limit] if limit is not None else out


def _norm(rule: Rule, values: dict[str, str]) -> tuple[tuple[str, str], ...] | None:
    try:
        return tuple(sorted((n, rule.holes[n].validate(v)) for n, v in values.items()))
    except (KeyError, KlcError):
        return None


# --------------------------------------------------------------------------------------
# The filler


class SearchFiller:
    """Enumerate, rank and sample hole values under static constraints (module doc)."""

    name = "search"

    def __init__(self, *, arch: str | None = None, seed: int = 0, use_optuna: bool = True,
                 static: bool = True, include_slower: bool = False) -> None:
        self._arch = arch
        self.include_slower = include_slower
        self.seed = seed
        self.use_optuna = use_optuna
        self.static = static
        self.last_reason = ""
        self.refusals: list[tuple[str, StaticCheck]] = []  # (site key, check), all calls
        self.strategy = ""  # "exhaustive" | "tpe" | "random" | "none": the last call's
        self.without_optuna = False  # sampled at random because optuna is not installed
        self._proposed = 0
        self._checks = 0

    @property
    def arch(self) -> str:
        if self._arch is None:
            self._arch = resolve_arch(None)
        return self._arch

    def usage(self) -> dict[str, int]:
        return {"proposed": self._proposed, "static_checks": self._checks,
                "static_refusals": len(self.refusals)}

    def propose(self, req: FillRequest, k: int) -> list[dict[str, str]]:
        self.last_reason = ""
        fresh = with_fresh_defaults(req.rule, req.site)  # declared names: fresh variants
        if fresh is not req.rule:
            req = dataclasses.replace(req, rule=fresh)
        rule = req.rule
        if is_slower(rule) and not self.include_slower:
            self.strategy = "none"
            self.last_reason = slower_note(rule)
            return []
        missing = open_holes_without_default(rule)
        if missing:
            self.strategy = "none"
            self.last_reason = (f"{rule.name}: search cannot fill the open hole(s) "
                                + ", ".join(f"?{n} ({rule.holes[n].type})" for n in missing)
                                + " without a default; use the LLM filler (--filler llm) or "
                                "--hole")
            return []
        tried = {t for t in (_norm(rule, tr.values) for tr in req.history) if t is not None}
        skey = site_key(req.site)
        refused = {_norm(rule, c.values) for s, c in self.refusals if s == skey}
        total = space_size(rule)
        untried = total - len(tried) - len(refused - tried)
        if untried <= 0 or k <= 0:
            self.strategy = "none"
            self.last_reason = (f"{rule.name}: all {total} assignment(s) at this site were "
                                "tried or refused" if untried <= 0 else "no budget")
            return []
        exhaustive = untried <= max(req.budget, k) or not rule.holes
        # the values this site's launch fixes, and the learned block at this site
        first = {**getattr(req.site, "holes", {}), **launch_anchors(rule, req.site, req.spec)}
        out: list[dict[str, str]] = []
        if exhaustive:
            self.strategy = "exhaustive"
            pool: Iterable[dict[str, str]] = ranked_assignments(rule, first=first)
            for values in pool:
                if len(out) >= k:
                    break
                self._consider(req, values, tried, refused, out)
        else:
            self.strategy = "tpe" if self.use_optuna and _has_optuna() else "random"
            self.without_optuna |= self.use_optuna and self.strategy == "random"
            for values in ranked_assignments(rule, limit=WARMUP, first=first):
                if len(tried) + len(out) >= WARMUP or len(out) >= k:
                    break
                self._consider(req, values, tried, refused, out)
            if len(out) < k:
                self._sample(req, k, tried, refused, out)
        if not out and not self.last_reason:
            self.last_reason = (f"{rule.name}: every untried assignment at this site was "
                                "refused by the static checks" if self.static else
                                f"{rule.name}: nothing left to propose")
        self._proposed += len(out)
        return out

    def _consider(self, req: FillRequest, values: dict[str, str], tried: set[Any],
                  refused: set[Any], out: list[dict[str, str]]) -> bool:
        key = _norm(req.rule, values)
        if key is None or key in tried or key in refused or \
                any(_norm(req.rule, o) == key for o in out):
            return False
        if relation_refusal(req.rule, dict(key)):
            refused.add(key)  # no code to look at: not a static check, not a refusal to note
            return False
        if self.static:
            self._checks += 1
            check = static_check(req.unit, req.site, values, req.spec, self.arch)
            if not check.ok:
                self.refusals.append((site_key(req.site), check))
                refused.add(key)
                return False
        out.append(dict(key))
        return True

    def _sample(self, req: FillRequest, k: int, tried: set[Any], refused: set[Any],
                out: list[dict[str, str]]) -> None:
        if self.strategy == "tpe":
            self._tpe(req, k, tried, refused, out)
        else:
            self._random(req, k, tried, refused, out)

    def _seed(self, req: FillRequest, salt: int) -> int:
        h = hashlib.sha256(f"{self.seed}:{site_key(req.site)}:{salt}".encode()).digest()
        return int.from_bytes(h[:4], "little")

    def _random(self, req: FillRequest, k: int, tried: set[Any], refused: set[Any],
                out: list[dict[str, str]]) -> None:
        rng = random.Random(self._seed(req, len(req.history)))
        names = list(req.rule.holes)
        lists = [ranked_values(req.rule, n, req.rule.holes[n]) for n in names]
        for _ in range(MAX_ASKS * max(1, k)):
            if len(out) >= k:
                return
            values = {n: rng.choice(lst) for n, lst in zip(names, lists, strict=True)}
            self._consider(req, values, tried, refused, out)

    def _tpe(self, req: FillRequest, k: int, tried: set[Any], refused: set[Any],
             out: list[dict[str, str]]) -> None:
        import optuna
        from optuna.distributions import CategoricalDistribution
        from optuna.trial import TrialState, create_trial

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        rule = req.rule
        dists = {n: CategoricalDistribution(ranked_values(rule, n, d))
                 for n, d in rule.holes.items()}
        with warnings.catch_warnings():  # multivariate TPE is marked experimental
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            sampler = optuna.samplers.TPESampler(seed=self._seed(req, len(req.history)),
                                                 n_startup_trials=WARMUP, multivariate=True)
        study = optuna.create_study(direction="minimize", sampler=sampler)
        for t in req.history:
            key = _norm(rule, t.values)
            if key is None:
                continue
            params = dict(key)
            if t.ok and t.median_ms is not None:
                study.add_trial(create_trial(params=params, distributions=dists,
                                             value=t.median_ms))
            else:
                study.add_trial(create_trial(params=params, distributions=dists,
                                             state=TrialState.FAIL))
        for key in refused:
            if key is not None:
                study.add_trial(create_trial(params=dict(key), distributions=dists,
                                             state=TrialState.FAIL))
        for _ in range(MAX_ASKS * max(1, k)):
            if len(out) >= k:
                return
            trial = study.ask(dists)
            values = {n: str(trial.params[n]) for n in dists}
            before = len(out)
            self._consider(req, values, tried, refused, out)
            # what was proposed is pending (the gate decides); what was refused, or already
            # tried, is a failure as far as the sampler is concerned, so it moves on
            study.tell(trial, state=TrialState.PRUNED if len(out) > before else TrialState.FAIL)


def _has_optuna() -> bool:
    try:
        import optuna  # noqa: F401
    except ImportError:
        return False
    return True


def history_trial(values: dict[str, str], record: Any) -> Trial:
    """A filler's ``Trial`` from a gate record (ok: passed; the time: the profiled median)."""
    prof = record.stages.get("profile") if record is not None else None
    ms = prof.data.get("median_ms") if prof is not None and prof.status == "passed" else None
    return Trial(dict(values), bool(record is not None and record.passed), ms,
                 "" if record is None or record.passed else record.reason)
