"""The trial: what the optimizer may try and what it need not pay a gate trial to learn.

The fillers propose hole values (``klc.fill.search``, ``klc.fill.llm``); this module says
where a skill may apply and in which order (site ranking), and rewrites and compiles each
proposal on the CPU before any gate trial (the static checks).

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
:func:`candidate_sites` nor by the search filler, unless the caller asks (``include_slower``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from klc.content import sha256 as _sha
from klc.errors import KlcError
from klc.fill.card import card_speedup
from klc.rule.fresh import declared_idents

if TYPE_CHECKING:
    from klc.cuda.model import Unit
    from klc.pipeline import Site
    from klc.rule import Rule

REGISTERS_PER_BLOCK = 65536  # sm_70 .. sm_90: the register file one block may use
MAX_THREADS_PER_BLOCK = 1024


# --------------------------------------------------------------------------------------
# Sites and their ranking


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


def groupable(rule: Rule) -> bool:
    """Whether applying the rule at every site at once is one local change per site (no
    declaration inserted at the kernel's start). A launch-geometry change is allowed: the
    pipeline applies an identical change once for all the sites (``block.y /= 4`` once, as
    the lineage step that erased it did), which is what a skill that reshapes every loop of
    a kernel for a smaller block needs; applied at one site alone, the other loops would
    still assume the old block."""
    return all(e.groupable for e in rule.edits)


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
    return _memo(key, lambda: _static_check(unit, site, values, spec, arch))


def _memo(key: tuple[Any, ...], check: Callable[[], StaticCheck]) -> StaticCheck:
    """The memoised check under ``key``, made by ``check()`` on a miss (the memo is
    emptied when full)."""
    hit = _STATIC_MEMO.get(key)
    if hit is not None:
        return hit
    result = check()
    if len(_STATIC_MEMO) >= _MEMO_CAP:
        _STATIC_MEMO.clear()
    _STATIC_MEMO[key] = result
    return result


def _validated(rule: Rule, values: dict[str, str]) -> dict[str, str] | StaticCheck:
    """The values as each hole's declaration reads them, or the refusal of the first that
    it does not take (a hole the rule lacks, a value outside its domain)."""
    try:
        return {n: rule.holes[n].validate(v) for n, v in values.items()}
    except KeyError as e:
        return StaticCheck(values, False, f"rule {rule.name} has no hole ?{e.args[0]}",
                           "values")
    except KlcError as e:
        return StaticCheck(values, False, str(e), "values")


def _static_check(unit: Unit, site: Site, values: dict[str, str], spec: Any | None,
                  arch: str) -> StaticCheck:
    from klc.pipeline import apply_site

    clean = _validated(site.rule, values)
    if isinstance(clean, StaticCheck):
        return clean
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


def static_check_rule(unit: Unit, rule: Rule, values: dict[str, str], spec: Any | None,
                      arch: str) -> StaticCheck:
    """Like :func:`static_check`, for the rule applied at every site where it applies with
    these values (``klc.pipeline.apply_rules``: what ``klc apply`` does, and what a lineage
    step did), the way an expert applies one optimization throughout a kernel."""
    key = (_sha(unit.source), rule.name, "*", tuple(sorted(values.items())), arch)
    return _memo(key, lambda: _static_check_rule(unit, rule, values, spec, arch))


def _static_check_rule(unit: Unit, rule: Rule, values: dict[str, str], spec: Any | None,
                       arch: str) -> StaticCheck:
    from klc.pipeline import apply_rules

    clean = _validated(rule, values)
    if isinstance(clean, StaticCheck):
        return clean
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


