"""Reversal: every accepted step of a lineage becomes a skill, the inverse of its pass.

    learn([lineage dirs], passes/) -> skills by family -> write_skills(skills/)

The inverse is mechanical (each rewrite kind inverts itself: ``invert`` in klc/edits):

- anchor and rewrite swap: the pass's ``replace`` template, with its metavariables, is the
  skill's anchor; the pass's anchor is the skill's ``replace`` (a pass without ``replace``
  keeps its anchor, less a removed attribute); ``insert_body_start`` and ``remove_statement``
  swap, so do ``add_*`` and ``remove_*`` qualifiers and attributes; ``launch *=`` becomes
  ``/=``;
- a value the pass erased (a metavariable its anchor binds and its rewrites drop) becomes a
  hole: the pass's own hole when its guard ties them (``equals($W, ?warps)``), the hole the
  pass's ``inverse`` block declares for it, else an int hole (when the value folds to an
  integer: its domain is the powers of two from a quarter to four times it, plus it), an
  ident hole, or an expr hole; the observed value is the default (the most frequent one
  when several walks saw different values); the pass's own holes keep their domain plus the
  observed values;
- the guard: the pass guard's conjuncts that speak only of what the skill's anchor binds
  (a qualifier test on the edited parameter flipped: ``is_restrict($X)`` becomes ``not
  is_restrict($X)``), and the ``inverse`` block's guard (forward-only conditions);
- the card comes from measurement: conditions with the facts that held at each site, one
  effect line per walk (forward speedup, device, workload, times), the gate's refusals as
  pitfalls, one provenance line per walk, and a verdict (``faster`` | ``neutral`` |
  ``slower`` | ``unmeasured``): a skill that was never faster is never recommended.
"""

from __future__ import annotations

import itertools
import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from klc.edits.base import InvertContext, KindEdit, metavar_names, to_holes
from klc.errors import KlcError
from klc.guards import with_trait
from klc.guards.geometry import geometry_relations, learned_relation
from klc.measurements import Measured, write_measurements
from klc.rule import (
    Card,
    GuardAnd,
    GuardArg,
    GuardCall,
    GuardExpr,
    GuardNot,
    HoleDecl,
    Rule,
    calls,
    code_refs,
    guard_text,
    load_rules_text,
    rule_to_text,
)
from klc.rule.defines import with_named_guards

NOISE = 0.03  # a speedup within 3% (or the profile's own noise, if larger) is "neutral"
LEARNED_MARK = "// klc learn:"


# --------------------------------------------------------------------------------------
# The mechanical inverse


@dataclass
class Inverse:
    """A pass's inverse skill before its card: the rule, and where each hole's observed
    value comes from: ``("pass", hole)`` a hole of the pass (the step's hole values),
    ``("metavar", M)`` a metavariable the pass erased (the step's binding of ``$M``)."""

    rule: Rule
    pass_rule: Rule
    sources: dict[str, tuple[str, str]]
    anchor_metavars: frozenset[str]
    undeclared: frozenset[str] = frozenset()  # erased-value holes nobody declared: typed
    #                                           from what the walks saw (int, ident, expr)


def _qualifier_flips(rule: Rule) -> dict[tuple[str, str], bool]:
    """{(predicate, metavar): held before the pass} for the qualifiers the pass edits."""
    flips: dict[tuple[str, str], bool] = {}
    for e in _kind_edits(rule):
        flip = e.flips()
        if flip is not None:
            pred, target, held_before = flip
            flips[(pred, target)] = held_before
    return flips


def _conjuncts(expr: GuardExpr | None) -> list[GuardExpr]:
    if expr is None:
        return []
    if isinstance(expr, GuardAnd):
        return [c for e in expr.operands for c in _conjuncts(e)]
    return [expr]


def _mechanical_guard(rule: Rule, bound: frozenset[str], holes: set[str]) -> list[GuardExpr]:
    flips = _qualifier_flips(rule)
    kept: list[GuardExpr] = []
    pass_only = with_trait(lambda t: t.pass_only)
    for c in _conjuncts(rule.guard):
        if any(call.name in pass_only for call in calls(c)):
            continue  # what only the simplification needs (``Traits.pass_only``)
        args = [a for call in calls(c) for a in call.args]
        if any(a.kind in ("metavar", "sequence") and str(a.value) not in bound for a in args):
            continue
        if any(a.kind == "hole" and str(a.value) not in holes for a in args):
            continue
        inner, negated = (c.operand, True) if isinstance(c, GuardNot) else (c, False)
        if isinstance(inner, GuardCall) and len(inner.args) == 1 and \
                inner.args[0].kind == "metavar":
            key = (inner.name, str(inner.args[0].value))
            if key in flips:  # the pass made this predicate change: the inverse needs the after
                held_before = flips[key]
                kept.append(inner if negated == held_before else GuardNot(inner))
                continue
        kept.append(c)
    return kept


def _tied_holes(rule: Rule) -> dict[str, str]:
    """{metavar: pass hole} for guard conjuncts ``equals($M, ?h)``."""
    tied: dict[str, str] = {}
    for c in _conjuncts(rule.guard):
        if isinstance(c, GuardCall) and c.name == "equals" and len(c.args) == 2:
            a, b = c.args
            if a.kind == "metavar" and b.kind == "hole":
                tied[str(a.value)] = str(b.value)
    return tied


def _kind_edits(rule: Rule) -> list[KindEdit]:
    return list(rule.edits)  # type: ignore[arg-type]  (every edit is a klc.edits kind)


def _skill_anchor(rule: Rule, where_: str) -> tuple[str, str]:
    """The skill's anchor: the pass's replace template; a pass without one keeps its anchor,
    less what its edits took out of it (a removed attribute: its text is the second)."""
    leading = [e for e in rule.edits if e.leads]
    if leading:
        anchor = leading[0].template
        if any(r.kind == "hole" for r in code_refs(anchor)):
            raise KlcError(f"{where_}: its replace template holds a hole, which an anchor "
                           "cannot")
        return anchor, ""
    anchor, removed = rule.anchor, ""
    for e in _kind_edits(rule):
        try:
            stripped = e.strip_from_anchor(anchor)
        except KlcError as err:
            raise KlcError(f"{where_}: {err}") from None
        if stripped is not None:
            anchor, removed = stripped
    return anchor, removed


def _undo_order(edits: list[Any]) -> list[Any]:
    """The anchor swap first; launch edits of one extent (``grid.x *= 4`` then ``grid.x *=
    ?v``) undone in the opposite order (``/= ?v`` then ``/= 4``), as an inverse composes,
    so that the skill's spec expression cancels the pass's; every other edit in place."""
    slots: dict[tuple[str, str], list[int]] = {}
    for i, e in enumerate(edits):
        if getattr(e, "kind", "") == "launch" and getattr(e, "op", "") in ("*", "/"):
            slots.setdefault((e.dim, e.axis), []).append(i)
    out = list(edits)
    for where in slots.values():
        for i, j in zip(where, reversed(where), strict=True):
            out[i] = edits[j]
    return out


def mechanical_inverse(rule: Rule) -> Inverse:
    """The inverse skill of a simplification, holes still without observed values (each
    keeps the pass's or the inverse block's declaration; erased values get a placeholder
    declaration that ``learn`` replaces from the observations). Each edit inverts itself
    (``KindEdit.invert``, klc/edits)."""
    where_ = f"{rule.path}:{rule.line}: cannot invert {rule.name}"
    if rule.kind != "simplification":
        raise KlcError(f"{where_}: it is a {rule.kind}, not a simplification")
    anchor, attr_text = _skill_anchor(rule, where_)
    # ``anchor any`` without a replace (qualifier edits): the skill keeps every branch, and
    # binds what all of them bind
    anchors = rule.anchors if not any(e.leads for e in rule.edits) else ()
    bound = frozenset.intersection(*(frozenset(metavar_names(a)) for a in anchors)) \
        if anchors else frozenset(metavar_names(anchor))
    inv = rule.inverse
    tied = _tied_holes(rule)
    names: dict[str, str] = {}  # erased metavariable -> skill hole
    sources: dict[str, tuple[str, str]] = {}
    holes: dict[str, HoleDecl] = {}

    def erased_hole(m: str) -> str:
        if m in names:
            return names[m]
        if m in tied and tied[m] in rule.holes:
            name = tied[m]
            sources[name] = ("pass", name)
        else:
            name = m.lower()
            while name in rule.holes or (name in names.values()):
                name += "_v"
            sources[name] = ("metavar", m)
        names[m] = name
        return name

    def skill_text(text: str) -> str:
        for m in sorted(metavar_names(text) - bound):
            erased_hole(m)
        return to_holes(text, names)

    ix = InvertContext(rule, where_, anchor, bound, attr_text, skill_text, erased_hole)
    ordered = _undo_order(sorted(_kind_edits(rule), key=lambda e: not e.leads))
    edits = [inverted for e in ordered if (inverted := e.invert(ix)) is not None]
    used_pass_holes = {h for e in edits for h in e.holes_used()}
    for name in sorted(used_pass_holes):
        if name in rule.holes:
            holes[name] = (inv.holes.get(name) if inv else None) or rule.holes[name]
            sources.setdefault(name, ("pass", name))
    undeclared = set()
    for name, (kind, _) in sources.items():
        if kind == "metavar":
            declared = inv.holes.get(name) if inv else None
            if declared is None:
                undeclared.add(name)
            holes[name] = declared or HoleDecl(name, "expr")
    guard_parts = _mechanical_guard(rule, bound, set(holes))
    if inv is not None and inv.guard is not None:
        # a hole that only the inverse block's guard names (a geometry relation such as
        # ``block_dim(y, ==, ?t)``) and declares: the skill keeps it. Added after the pass
        # guard's conjuncts are chosen: the pass's own relations for it held before its
        # rewrite, not before the skill's
        for name in sorted({str(a.value) for call in calls(inv.guard) for a in call.args
                            if a.kind == "hole"} - set(holes)):
            if name in inv.holes:
                holes[name] = inv.holes[name]
                sources.setdefault(name, ("pass", name))
    if inv is not None and inv.guard is not None:
        guard_parts += _conjuncts(inv.guard)
    guard: GuardExpr | None = None
    if len(guard_parts) == 1:
        guard = guard_parts[0]
    elif guard_parts:
        guard = GuardAnd(tuple(guard_parts))
    seqs = frozenset(r.name for r in code_refs(anchor) if r.kind == "sequence")
    skill = Rule(
        name=(inv.name if inv and inv.name else _inverse_name(rule.name)), kind="skill",
        description=(inv.description if inv and inv.description
                     else f"Inverse of {rule.name}: {rule.description}"),
        path=rule.path, line=rule.line, col=rule.col, anchor=anchor, anchor_line=0,
        anchor_col=0, context=rule.context, guard=guard, edits=tuple(edits), holes=holes,
        card=Card(), metavars=bound, sequence_metavars=seqs,
        # a kind the pass required of what it matched holds of the same code, reversed
        metavar_kinds=tuple((n, k) for n, k in rule.metavar_kinds if n in bound),
        # the isomorphisms the pass does without (for soundness) the skill does without too
        isos_off=rule.isos_off, anchors=anchors)
    return Inverse(skill, rule, sources, bound, frozenset(undeclared))


def _inverse_name(name: str) -> str:
    if name.startswith("remove_"):
        return "add_" + name[len("remove_"):]
    if "_to_" in name:
        a, _, b = name.partition("_to_")
        return f"{b}_to_{a}"
    return f"undo_{name}"


# --------------------------------------------------------------------------------------
# Observations: what each walk saw of a pass


@dataclass
class Observation:
    """One accepted step of a pass in one walk."""

    lineage: dict[str, Any]
    directory: Path
    version: dict[str, Any]  # the simplified version (N)
    before: dict[str, Any]  # the version it came from (N - 1): the optimized one

    @property
    def step(self) -> dict[str, Any]:
        return self.version["step"]


def observed_value(inv: Inverse, hole: str, step: dict[str, Any],
                   as_int: bool | None = None) -> str | None:
    """The value a hole of the skill had in this step (what the pass erased): an erased
    binding's integer value for an int hole (``as_int``: whatever the declaration says),
    else its text."""
    kind, name = inv.sources.get(hole, ("pass", hole))
    if kind == "pass":
        got = step.get("holes", {}).get(name)
        tied = {h: m for m, h in _tied_holes(inv.pass_rule).items()}.get(name)
        if got is not None or tied is None:
            return got
        kind, name = "erased", tied  # a walk that gave the hole no value: the value of the
        # metavariable the pass ties it to (``equals($T, ?t)``), the site's own geometry
    for site in step.get("sites", []):
        b = site.get("bindings", {}).get(name)
        if b is not None:
            decl = inv.rule.holes.get(hole)
            want_int = as_int if as_int is not None else decl is not None and decl.type == "int"
            if want_int and "value" in b:
                return str(b["value"])
            if want_int and as_int is None:  # declared int, but no value: the text, which
                return b["text"]             # the hole's validation then refuses, saying why
            return " ".join(b["text"].split())
    return None


def observed_holes(inv: Inverse, step: dict[str, Any]) -> dict[str, str]:
    out = {}
    for h in inv.rule.holes:
        v = observed_value(inv, h, step)
        if v is not None:
            out[h] = v
    return out


def _neighbours(v: int) -> set[int]:
    out = {v}
    p = 1
    while p <= 4 * v:
        if v // 4 <= p <= 4 * v:
            out.add(p)
        p *= 2
    return {x for x in out if x >= 1} or {v}


def _fill_holes(inv: Inverse, observations: list[Observation]) -> dict[str, HoleDecl]:
    """The skill's holes with domains that hold every observed value, defaulting to the
    most frequent one (the first seen on a tie)."""
    holes: dict[str, HoleDecl] = {}
    for name, decl in inv.rule.holes.items():
        fresh = name in inv.undeclared
        seen = [v for o in observations
                if (v := observed_value(inv, name, o.step, True if fresh else None)) is not None]
        ints = [int(v) for v in seen if re.fullmatch(r"-?\d+", v)]
        if fresh and seen and len(ints) == len(seen):
            values = sorted({x for v in ints for x in _neighbours(v)})
            decl = HoleDecl(name, "int", tuple(values))
        elif fresh and seen:
            seen = [v for o in observations
                    if (v := observed_value(inv, name, o.step, False)) is not None]
            typ = "ident" if all(re.fullmatch(r"[A-Za-z_]\w*", v) for v in seen) else "expr"
            decl = HoleDecl(name, typ)
        if decl.type == "int" and ints:
            if decl.values is not None:
                decl = replace(decl, values=tuple(sorted(set(decl.values) | set(ints))))
            elif decl.lo is not None and decl.hi is not None:
                decl = replace(decl, lo=min(decl.lo, *ints), hi=max(decl.hi, *ints))
        common = Counter(seen).most_common()
        if common:
            best = max(c for _, c in common)
            first = next(v for v in seen if Counter(seen)[v] == best)
            default: int | str = int(first) if decl.type == "int" else first
            decl = replace(decl, default=default)
        holes[name] = replace(decl, line=0, col=0)
    return holes


def hole_relations(inv: Inverse, observations: list[Observation],
                   holes: dict[str, HoleDecl]) -> list[GuardCall]:
    """Relations between the skill's int holes that held at every observed site: one hole
    the product of two others (``?t = ?r * ?factor``: a tile of T rows walked R at a time in
    T / R steps). Values a simplification erased together are rarely free: the search would
    otherwise spend trials on tuples that break the code (rows left unwritten, addresses out
    of the tile). Each becomes an ``is_product`` guard conjunct, which the search filler
    judges before anything else (``klc.fill.search.relation_refusal``). A relation is kept
    only when every observation saw all three holes, and none of the factors was 1 (a
    product with 1 is an equality that one site may show by chance)."""
    ints = [n for n in sorted(holes) if holes[n].type == "int"]
    if len(ints) < 3 or not observations:
        return []
    seen: list[dict[str, int]] = []
    for o in observations:
        row: dict[str, int] = {}
        for n in ints:
            v = observed_value(inv, n, o.step, True if n in inv.undeclared else None)
            if v is not None and re.fullmatch(r"-?\d+", str(v).strip()):
                row[n] = int(str(v).strip())
        seen.append(row)
    out: list[GuardCall] = []
    for a in ints:
        for b, c in itertools.combinations([n for n in ints if n != a], 2):
            if all(a in r and b in r and c in r and r[b] not in (0, 1) and
                   r[c] not in (0, 1) and r[a] == r[b] * r[c] for r in seen):
                out.append(GuardCall("is_product", (GuardArg("hole", a), GuardArg("hole", b),
                                                    GuardArg("hole", c))))
    return out


def geometry_guards(inv: Inverse, observations: list[Observation],
                    holes: dict[str, HoleDecl]) -> list[GuardCall]:
    """Relations between the skill's int holes and the block of the code it rewrites that
    held at every observed site (``klc.guards.geometry.learned_relation``): a tile extent
    equal to the block's, so that at a new site it takes that site's own extent. The block
    is the simplified version's (``facts_after``), where the skill applies; a hole the guard
    already relates to the launch or a constant is left as it is."""
    related = {str(a.value) for c in geometry_relations(inv.rule) for a in c.args
               if a.kind == "hole"}
    text = "\n".join(t for e in inv.rule.edits for t in getattr(e, "templates", tuple)())
    out: list[GuardCall] = []
    for name in sorted(holes):
        if holes[name].type != "int" or name in related or not observations:
            continue
        rows = []
        for o in observations:
            v = observed_value(inv, name, o.step, True if name in inv.undeclared else None)
            block = (o.step.get("facts_after") or {}).get("block")
            if v is None or not re.fullmatch(r"\d+", str(v).strip()) or not block:
                break
            rows.append((int(str(v).strip()), tuple(int(b) for b in block)))
        else:
            found = learned_relation(name, rows, text)
            if found is not None:
                out.append(found)
    return out


# --------------------------------------------------------------------------------------
# The card


def _time(v: dict[str, Any]) -> float | None:
    return v.get("median_ms")


def _noise(v: dict[str, Any]) -> float:
    prof = v.get("gate", {}).get("stages", {}).get("profile", {})
    return float(prof.get("noise") or 0.0)


def effect_line(o: Observation, inv: Inverse) -> tuple[str, str]:
    """(kind, text): the skill's forward effect in this walk: version N -> N - 1."""
    data, st = o.lineage, o.step
    slow, fast = _time(o.version), _time(o.before)
    holes = ", ".join(f"?{k}={v}" for k, v in observed_holes(inv, st).items())
    where_ = f"{data.get('workload')}, {data['family']} step {st['index']}" + \
        (f" with {holes}" if holes else "")
    if slow is None or fast is None:
        why = "compile-only walk" if data.get("gating") == "compile-only" else "not profiled"
        return "unmeasured", f"not measured yet: {where_} ({why})"
    speedup = slow / fast
    noise = max(NOISE, _noise(o.version), _noise(o.before))
    kind = "faster" if speedup > 1 + noise else "slower" if speedup < 1 - noise else "neutral"
    device = data.get("device") or "?"
    times = f"{slow * 1e3:.1f} us -> {fast * 1e3:.1f} us"
    pct = o.before.get("pct_of_sol")
    sol = f", {pct:.0f}% of SOL after" if pct is not None else ""
    prefix = {"faster": "faster", "slower": "slower (when not)",
              "neutral": "neutral (within the noise)"}[kind]
    return kind, f"{prefix}: {speedup:.2f}x on {device}, {where_}: {times}{sol}"


def verdict_of(kinds: list[str]) -> str:
    measured = [k for k in kinds if k != "unmeasured"]
    if not measured:
        return "unmeasured"
    if "faster" in measured:
        return "faster"
    return "slower" if all(k == "slower" for k in measured) else "neutral"


def _pitfalls(pass_name: str, lineages: list[tuple[dict[str, Any], Path]]) -> list[str]:
    """What the gate refused of this pass in the walks: each refusal marks a condition."""
    out: list[str] = []
    for data, _ in lineages:
        tried: list[tuple[int, dict[str, Any]]] = []
        for v in data["versions"][1:]:
            tried += [(v["step"]["index"], a) for a in v["step"].get("rejected", [])]
        tried += [(len(data["versions"]), a) for a in data.get("final_attempts", [])]
        tried += [(len(data["versions"]), a) for a in data.get("final_guard_refused", [])]
        for index, a in tried:
            if a.get("pass") != pass_name or a.get("accepted"):
                continue
            at = ", ".join(f"{s.get('line')}:{s.get('col')}" for s in a.get("sites", []))
            holes = ", ".join(f"?{k}={x}" for k, x in a.get("holes", {}).items())
            reason = " ".join(str(a.get("reason", "")).split())[:240]
            by = "its guard" if reason.startswith("guard: ") else "the gate"
            out.append(f"{data['family']} step {index}: the simplification at {at}"
                       f"{f' with {holes}' if holes else ''} was refused by {by}: "
                       f"{reason.removeprefix('guard: ')}")
    return list(dict.fromkeys(out))


def _conditions(inv: Inverse, observations: list[Observation]) -> str:
    parts = [f"Guard: {guard_text(inv.rule.guard)}." if inv.rule.guard is not None
             else "No static guard: the gate decides."]
    if inv.pass_rule.card.conditions:
        parts.append(_sentence(f"The simplification's conditions: "
                               f"{inv.pass_rule.card.conditions}"))
    held: dict[str, list[str]] = {}  # the facts -> the steps where they held
    for o in observations:
        st = o.step
        before = st.get("facts_before", {})
        facts = [f"block {before.get('block')}", f"grid {before.get('grid')}"] if before else []
        # after the skill the geometry is the optimized version's: the pass's "before"
        facts += [f"?{k}={v}" for k, v in observed_holes(inv, st).items()]
        site_facts = "; ".join(s.get("guard_facts", "") for s in st.get("sites", [])
                               if s.get("guard_facts"))
        text = ", ".join(facts)
        if site_facts:
            text += f" ({' '.join(site_facts.split())[:300]})"
        held.setdefault(text, []).append(f"{o.lineage['family']} step {st['index']}")
    if held:
        parts.append(_sentence("Held at the sites: " + " | ".join(
            f"{', '.join(steps)}: {text}" for text, steps in held.items())))
    return " ".join(parts)


def _sentence(text: str) -> str:
    """``text`` ending as a sentence does, so that the parts of a card's conditions read
    apart."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _named(o: Observation) -> str:
    """The walk's family, and where its expert came from when a ``SOURCE`` file beside the
    walk's folder or the expert says so (bench/experts/materialize.py writes one per
    third-party expert: ``package==version path``, then one ``path:line name#i ...`` line per
    piece of code it took, the kernel last):
    ``row_sums (somepkg 1.2.3, the file, kernel row_sum_kernel)``."""
    family = str(o.lineage["family"])
    for folder in (o.directory.parent, Path(str(o.lineage.get("expert", ""))).parent):
        record = folder / "SOURCE"
        try:
            lines = record.read_text().splitlines() if record.is_file() else []
        except OSError:
            lines = []
        if len(lines) >= 2 and "==" in lines[0] and len(lines[-1].split()) >= 2:
            package, _, rest = lines[0].partition("==")
            version, _, path = rest.partition(" ")
            kernel = lines[-1].split()[1].split("#")[0]
            return f"{family} ({package} {version}, {path.strip()}, kernel {kernel})"
    return family


def _provenance(o: Observation) -> str:
    data, st = o.lineage, o.step
    return (f"{data['expert']} (sha256 {str(data.get('expert_sha256'))[:12]}), lineage "
            f"{o.directory}, step {st['index']}: {o.before['file']} (sha256 "
            f"{o.before['sha256'][:12]}) <- {o.version['file']} (sha256 "
            f"{o.version['sha256'][:12]}), gated {data.get('gating')}")


# --------------------------------------------------------------------------------------
# Learning


@dataclass
class Learned:
    """A skill learned from one pass, with the observations it came from."""

    inverse: Inverse
    family: str  # the pass file's stem: the skill file it goes to
    observations: list[Observation] = field(default_factory=list)

    @property
    def rule(self) -> Rule:
        return self.inverse.rule


def learn(lineage_dirs: list[str | Path], passes_dir: str | Path | None = None
          ) -> list[Learned]:
    """Every accepted step of the walks, reversed into one skill per pass (merged across
    walks), in the order first seen, the walks taken in the order of their paths (a shell's
    glob sorts by its locale: the skills must not depend on it). Raises KlcError on a
    missing or broken lineage, a pass that is gone from the passes folder, or a skill that
    would not load."""
    from klc.lineage import load_lineage
    from klc.rule import RuleSet

    ordered = sorted(dict.fromkeys(str(d) for d in lineage_dirs))
    lineages = [(load_lineage(d), Path(d)) for d in ordered]
    if not lineages:
        raise KlcError("klc learn: give at least one lineage folder")
    by_pass: dict[str, Learned] = {}
    rules_cache: dict[str, dict[str, Rule]] = {}
    for data, d in lineages:
        folder = str(passes_dir or data.get("passes") or "passes")
        if folder not in rules_cache:  # several folders are joined by os.pathsep
            rules_cache[folder] = {r.name: r for r in RuleSet.load(
                [f for f in folder.split(os.pathsep) if f]).rules}
        rules = rules_cache[folder]
        versions = data["versions"]
        for before, v in itertools.pairwise(versions):
            st = v.get("step")
            if not st:
                raise KlcError(f"{d}/lineage.json: version {v.get('file')} has no step")
            name = st["pass"]
            if name not in rules:
                raise KlcError(f"{d}/lineage.json: step {st['index']} used pass {name}, which "
                               f"{folder}/ no longer has")
            if name not in by_pass:
                inv = mechanical_inverse(rules[name])
                declared = rules[name].inverse
                family = declared.family if declared and declared.family \
                    else Path(rules[name].path).stem
                by_pass[name] = Learned(inv, family)
            by_pass[name].observations.append(Observation(data, d, v, before))
    learned = list(by_pass.values())
    names: dict[str, str] = {}
    for item in learned:
        if item.rule.name in names:
            raise KlcError(f"passes {names[item.rule.name]} and {item.inverse.pass_rule.name} "
                           f"have inverses of the same name {item.rule.name}: give one an "
                           "inverse { name: ... }")
        names[item.rule.name] = item.inverse.pass_rule.name
        item.inverse.rule = _with_card(item, lineages)
    return learned


_WARP_CODE = re.compile(r"__shfl\w*_sync|__syncwarp|__ballot_sync|__reduce_\w+_sync")


def learned_guards(inv: Inverse, observations: list[Observation]) -> list[GuardCall]:
    """Facts that every walk's expert had and the skill's code needs, where its guard does
    not say them: a skill that writes warp-synchronous code (shuffles over the full mask,
    __syncwarp) learned only from blocks of whole warps gets ``block_size_multiple(32)``
    (a partial warp would leave lanes of the mask out). Narrowed, not widened: a fact one
    walk lacked is not learned."""
    if inv.rule.changes_launch:
        return []  # the block the skill's code runs on is not the block it is given
    rewrites = rule_to_text(inv.rule).split("rewrite", 1)[-1]
    names = {c.name for c in calls(inv.rule.guard)} if inv.rule.guard is not None else set()
    out: list[GuardCall] = []
    if _WARP_CODE.search(rewrites) and not names & {"block_size_multiple", "block_size"}:
        sizes = []
        for o in observations:  # the skill's input is the simplified version: its block
            block = o.step.get("facts_after", {}).get("block") or []
            size = 1
            for d in block:
                size = size * d if isinstance(d, int) else -1
            sizes.append(size if block else -1)
        if sizes and all(s > 0 and s % 32 == 0 for s in sizes):
            out.append(GuardCall("block_size_multiple", (GuardArg("int", 32),)))
    return out


def _with_card(item: Learned, lineages: list[tuple[dict[str, Any], Path]]) -> Rule:
    inv, obs = item.inverse, item.observations
    holes = _fill_holes(inv, obs)
    guard = inv.rule.guard
    relations = (hole_relations(inv, obs, holes) + geometry_guards(inv, obs, holes)
                 + learned_guards(inv, obs))
    if relations:
        parts = list(guard.operands) if isinstance(guard, GuardAnd) else \
            ([guard] if guard is not None else [])
        both = parts + [r for r in relations if r not in parts]  # once, where stated
        guard = GuardAnd(tuple(both)) if len(both) > 1 else both[0]
    filled = replace(inv, rule=replace(inv.rule, holes=holes, guard=guard))
    effects = [effect_line(o, filled) for o in obs]
    p = inv.pass_rule
    card = Card(
        intent=inv.rule.description,
        where=(f"Code of the shape that the simplification {p.name} leaves ({p.path}); "
               f"learned from {', '.join(dict.fromkeys(_named(o) for o in obs))}"),
        conditions=_conditions(filled, obs),
        effect=tuple(t for _, t in effects),
        pitfalls=tuple(_pitfalls(p.name, lineages)) or (
            "none seen: the gate refused no candidate of this simplification in these walks",),
        provenance=tuple(_provenance(o) for o in obs),
        verdict=verdict_of([k for k, _ in effects]),
        precision=p.card.precision,
    )
    rule = replace(inv.rule, holes=holes, guard=guard, card=card,
                   path=f"skills/{item.family}.rule")
    text = rule_to_text(_unmeasured(rule))
    try:
        loaded = load_rules_text(text, rule.path)
    except KlcError as e:
        raise KlcError(f"the inverse of {p.name} ({p.path}:{p.line}) does not load as a "
                       f"rule:\n{e}\n--- the rule:\n{text}") from None
    # in memory the learned skill keeps its measurements on its card (klc.measurements
    # reads them there); its file leaves them to measurements.json
    return replace(loaded[0], card=replace(loaded[0].card, effect=card.effect,
                                           provenance=card.provenance))


def _unmeasured(rule: Rule) -> Rule:
    """The rule as its skill file shows it: the card without the measured effects and
    provenance, which go to the folder's measurements.json (klc.measurements)."""
    return replace(rule, card=replace(rule.card, effect=(), provenance=()))


def skill_files(learned: list[Learned]) -> dict[str, str]:
    """{file name: text}: one file per family (the pass file's stem), rules in the order
    learned, each printed by rule_to_text, their guards in the named guards of
    grammar/guards.rule where they spell one out (``with_named_guards``)."""
    files: dict[str, list[Learned]] = {}
    for item in learned:
        files.setdefault(item.family, []).append(item)
    out = {}
    for family, items in files.items():
        sources = sorted({str(o.directory) for i in items for o in i.observations})
        head = (f"{LEARNED_MARK} inverses of passes/{family}.rule, learned from "
                f"{', '.join(sources)}.\n// Do not edit by hand: run `klc learn` again "
                "(docs/lineage.md).\n")
        out[f"{family}.rule"] = with_named_guards(
            head + "\n" + "\n".join(rule_to_text(_unmeasured(i.rule)) for i in items))
    return out


def skill_measurements(learned: list[Learned]) -> dict[str, Measured]:
    """{skill: its measured effects and provenance}: the folder's measurements.json."""
    return {i.rule.name: Measured(i.rule.card.effect, i.rule.card.provenance)
            for i in learned}


MEASURED_VERDICTS = ("faster", "neutral", "slower")


def measured_losses(learned: list[Learned], out_dir: str | Path) -> list[str]:
    """The learned skills of ``out_dir`` whose cards hold a measured verdict that this
    learning would turn into ``unmeasured`` (walks gated by compile only), as ``name
    (verdict)``."""
    from klc.rule import load_rules

    new = {i.rule.name: i.rule.card.verdict for i in learned}
    lost = []
    for p in sorted(Path(out_dir).glob("*.rule")):
        if not p.read_text(encoding="utf-8", errors="replace").startswith(LEARNED_MARK):
            continue  # a hand-written file is not replaced (a name clash is an error)
        try:
            rules = load_rules(p)
        except KlcError:
            continue  # (a broken file: write_skills says so, or replaces it)
        lost += [f"{r.name} ({r.card.verdict})" for r in rules
                 if r.card.verdict in MEASURED_VERDICTS and new.get(r.name) == "unmeasured"]
    return lost


def write_skills(learned: list[Learned], out_dir: str | Path) -> list[Path]:
    """Write the skill files atomically, then their measurements (``measurements.json``,
    klc.measurements). Earlier learned files (marked) that this run does not produce are
    removed; a hand-written file whose rule names clash is an error, raised before anything
    is written."""
    from klc.fsutil import atomic_write
    from klc.rule import load_rules

    out = Path(out_dir)
    if not out.is_dir():
        raise KlcError(f"{out_dir}: no such folder")
    files = skill_files(learned)
    names = {i.rule.name for i in learned}
    stale = []
    for p in sorted(out.glob("*.rule")):
        if p.name in files:
            continue
        if p.read_text(encoding="utf-8").startswith(LEARNED_MARK):
            stale.append(p)
            continue
        try:
            clash = [r.name for r in load_rules(p) if r.name in names]
        except KlcError:
            continue
        if clash:
            raise KlcError(f"{p}: hand-written rule {clash[0]} has the name of a learned "
                           "skill: rename or remove it first (nothing written)")
    written = []
    for name, text in files.items():
        atomic_write(out / name, text.encode())
        written.append(out / name)
    written.append(write_measurements(out, skill_measurements(learned)))
    for p in stale:
        p.unlink()
    return written
