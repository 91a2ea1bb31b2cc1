"""The lineage stage: walk an expert kernel backward through gated simplifications.

    walk(expert.cu, passes/) -> Lineage -> write_lineage(out/) -> lineage.json, v*.cu, report

At each step (docs/lineage.md, "The walk"):

1. list  - the sites where a simplification applies (``klc.pipeline.find_sites``: anchor,
           context, static guards);
2. order - passes in the order of ``passes/ORDER`` (passes it does not name come after, in
           the order they load), sites in source order; a pass that changes the launch
           geometry is applied at all its sites of the kernel at once (the grid or block is
           the kernel's, one change for all its sites); any other pass at one site;
3. holes - a pass with holes tries every value of its (finite) domains, default first;
4. apply - ``klc.pipeline.apply_site`` (or ``apply_rules`` for a launch pass);
5. gate  - the result against the *expert* (compile + verify, and profile, when a GPU is
           there; compile only otherwise): the first candidate that passes is the step;
6. stop  - when no simplification applies, or the gate refuses every candidate.

Every rejected candidate is kept with the gate's reason: a simplification that breaks
verification marks a condition that its inverse skill (klc/reverse.py) must check.
"""

from __future__ import annotations

import difflib
import itertools
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klc.content import sha256, unified_diff
from klc.errors import KlcError, where
from klc.rule import Rule

FORMAT = 1  # lineage.json's format version
MAX_STEPS = 200  # a walk longer than this is a cycle, not a lineage
MAX_HOLE_COMBINATIONS = 64
ORDER_FILE = "ORDER"


# --------------------------------------------------------------------------------------
# The order of the passes


Passes = str | Path | list[str | Path] | tuple[str | Path, ...]


def pass_folders(passes: Passes) -> list[Path]:
    """The folders of a ``passes`` argument: one folder, a list of them, or (as
    lineage.json records several) their names joined by ``os.pathsep``."""
    if isinstance(passes, (list, tuple)):
        return [Path(p) for p in passes]
    return [Path(p) for p in str(passes).split(os.pathsep) if p]


def load_passes(passes: Passes) -> tuple[list[Rule], str]:
    """The simplifications of one folder or several, in walk order, and where the order came
    from: each folder's rules in the order of its ORDER file, the folders one after the
    other (a rule name given in two folders is an error)."""
    rules: list[Rule] = []
    sources: list[str] = []
    seen: dict[str, str] = {}
    for d in pass_folders(passes):
        mine, source = _load_pass_folder(d)
        for r in mine:
            if r.name in seen:
                raise KlcError(f"{where(r.path, r.line, r.col)}: pass {r.name} is also in "
                               f"{seen[r.name]}")
            seen[r.name] = str(d)
        rules += mine
        sources.append(source)
    if not rules:
        raise KlcError("no passes given")
    return rules, "; ".join(sources)


def _load_pass_folder(passes_dir: str | Path) -> tuple[list[Rule], str]:
    """One folder's simplifications in walk order (``load_passes``).

    ``DIR/ORDER`` names rules one per line (``#`` comments, blank lines ignored); rules it
    does not name follow in load order (files by name, rules as written). A name in ORDER
    that no rule has, or a name given twice, is an error at its line."""
    from klc.rule import load_rule_dir

    d = Path(passes_dir)
    rules = load_rule_dir(d)
    if not rules:
        raise KlcError(f"{passes_dir}: no rules in this folder")
    not_simpl = [r for r in rules if r.kind != "simplification"]
    if not_simpl:
        r = not_simpl[0]
        raise KlcError(f"{where(r.path, r.line, r.col)}: rule {r.name} is a {r.kind}; a lineage "
                       "walks simplifications only")
    order_path = d / ORDER_FILE
    if not order_path.exists():
        return rules, "load order (no ORDER file)"
    by_name = {r.name: r for r in rules}
    ordered: list[Rule] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(order_path.read_text(encoding="utf-8").splitlines(), start=1):
        name = raw.split("#", 1)[0].strip()
        if not name:
            continue
        col = raw.index(name) + 1
        if name in seen:
            raise KlcError(f"{where(str(order_path), n, col)}: {name} is listed twice (first "
                           f"at line {seen[name]})")
        if name not in by_name:
            close = difflib.get_close_matches(name, list(by_name), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise KlcError(f"{where(str(order_path), n, col)}: no pass named {name}{hint}")
        seen[name] = n
        ordered.append(by_name[name])
    rest = [r for r in rules if r.name not in seen]
    source = str(order_path) + (f", then {len(rest)} unlisted in load order" if rest else "")
    return ordered + rest, source


# --------------------------------------------------------------------------------------
# The walk's records


@dataclass
class Attempt:
    """One candidate the walk tried: a pass at a site (or all its sites) with hole values."""

    pass_name: str
    sites: list[dict[str, Any]]
    holes: dict[str, str]
    accepted: bool
    reason: str
    gate: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"pass": self.pass_name, "sites": [_site_ref(s) for s in self.sites],
                "holes": self.holes, "accepted": self.accepted, "reason": self.reason,
                "gate": self.gate}


@dataclass
class Version:
    """One kernel of the lineage: the expert (index 0) or the result of step ``index``."""

    index: int
    file: str
    source: bytes
    gate: dict[str, Any]
    step: dict[str, Any] | None = None  # how it was made from the version before

    @property
    def sha256(self) -> str:
        return sha256(self.source)

    @property
    def median_ms(self) -> float | None:
        return _profile(self.gate).get("median_ms")

    @property
    def pct_of_sol(self) -> float | None:
        return _profile(self.gate).get("sol", {}).get("pct_of_sol")


@dataclass
class Lineage:
    expert_path: str
    family: str
    passes_dir: str
    order: list[str]
    order_source: str
    stages: tuple[str, ...]
    gating: str  # "full" | "compile-only"
    gating_note: str
    arch: str
    workload: str
    versions: list[Version] = field(default_factory=list)
    final_attempts: list[Attempt] = field(default_factory=list)
    stop_reason: str = ""
    stop_constructs: list[dict[str, Any]] = field(default_factory=list)  # klc.explain
    final_guard_refused: list[dict[str, Any]] = field(default_factory=list)

    @property
    def device(self) -> str | None:
        return next((v.gate.get("device") for v in self.versions if v.gate.get("device")),
                    None)

    def to_json(self) -> dict[str, Any]:
        versions = []
        for v in self.versions:
            entry: dict[str, Any] = {
                "index": v.index, "file": v.file, "sha256": v.sha256,
                "pass": v.step["pass"] if v.step else None,
                "verdict": v.gate.get("verdict"), "median_ms": v.median_ms,
                "pct_of_sol": v.pct_of_sol, "gate": v.gate}
            if v.step is not None:
                entry["step"] = v.step
            versions.append(entry)
        return {
            "klc_lineage": FORMAT, "expert": self.expert_path, "family": self.family,
            "expert_sha256": self.versions[0].sha256 if self.versions else None,
            "passes": self.passes_dir, "order": self.order, "order_source": self.order_source,
            "stages": list(self.stages), "gating": self.gating, "gating_note": self.gating_note,
            "arch": self.arch, "device": self.device, "workload": self.workload,
            "versions": versions, "stop_reason": self.stop_reason,
            "final_attempts": [a.to_json() for a in self.final_attempts],
            "stop_constructs": self.stop_constructs,
            "final_guard_refused": self.final_guard_refused,
        }


def _profile(gate: dict[str, Any]) -> dict[str, Any]:
    prof = gate.get("stages", {}).get("profile", {})
    return prof if prof.get("status") == "passed" else {}


def _site_ref(site: dict[str, Any]) -> dict[str, Any]:
    return {k: site[k] for k in ("line", "col", "function") if k in site}


# --------------------------------------------------------------------------------------
# Constants: what an erased binding was worth


_DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]+?)[ \t]*$", re.M)
_CONST_RE = re.compile(r"\b(?:static[ \t]+)?(?:constexpr|const)[ \t]+(?:unsigned[ \t]+)?"
                       r"(?:int|long|size_t|unsigned)[ \t]+([A-Za-z_]\w*)[ \t]*=[ \t]*"
                       r"([^;{}\n]+);")


def constant_env(source: bytes, spec: Any | None) -> dict[str, int | float]:
    """Names with a constant value in a kernel file: the spec's template arguments and
    sizes, ``#define`` and ``const``/``constexpr`` integer declarations (folded in order)."""
    from klc.spec import evaluate

    text = source.decode("utf-8", "replace")
    env: dict[str, int | float] = dict(spec.env()) if spec is not None else {}
    pending = [(m.group(1), m.group(2)) for m in _DEFINE_RE.finditer(text)]
    pending += [(m.group(1), m.group(2)) for m in _CONST_RE.finditer(text)]
    for _ in range(3):  # definitions may use each other
        for name, expr in pending:
            if name in env:
                continue
            try:
                value = evaluate(_c_to_py(expr), env)
            except KlcError:
                continue
            env[name] = value
    return env


def _c_to_py(expr: str) -> str:
    expr = re.sub(r"(?<=\d)[uUlL]+\b", "", expr.strip())
    expr = re.sub(r"\(\s*(?:int|unsigned|size_t|long)\s*\)", "", expr)
    return re.sub(r"(?<!/)/(?!/)", "//", expr)  # C's integer division


def constant_value(text: str, env: dict[str, int | float]) -> int | None:
    """The integer value of a C expression over known constants, or None."""
    from klc.spec import evaluate

    try:
        value = evaluate(_c_to_py(text), env)
    except KlcError:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


# --------------------------------------------------------------------------------------
# The walk


Progress = Callable[[str], None]


def _hole_choices(rule: Rule, first: dict[str, str] | None = None) -> Iterator[dict[str, str]]:
    """Hole values to try: the product of each hole's finite domain, the value the site's
    own geometry gives it first (``Site.holes``: a tile of 32 on a 32 x 32 block), then the
    default."""
    per_hole: list[list[tuple[str, str]]] = []
    for name, decl in rule.holes.items():
        domain = decl.domain()
        values: list[str] = [] if decl.default is None else [str(decl.default)]
        if first and name in first:
            values = [first[name]] + [v for v in values if v != first[name]]
        values += [str(v) for v in (domain or ()) if str(v) not in values]
        if not values:
            return  # an open hole without a default: nothing to try
        per_hole.append([(name, v) for v in values])
    for combo in itertools.islice(itertools.product(*per_hole), MAX_HOLE_COMBINATIONS):
        yield dict(combo)


def _describe_site(site: Any, env: dict[str, int | float], spec: Any) -> dict[str, Any]:
    """A site as lineage.json records it: where, what each metavariable bound (and its
    constant value, when it has one), and the facts its guard established."""
    from klc.guards import GuardContext, evaluate

    m = site.match
    line, col = m.unit.position(m.start)
    bindings = {}
    every = dict(m.bindings)
    subs = getattr(m, "subs", None)  # a rewrite within's pieces: their first bindings too
    for sms in (subs.matches.values() if subs is not None else ()):
        for sm in sms:
            for name, b in sm.bindings.items():
                every.setdefault(name, b)
    for name, b in sorted(every.items()):
        entry: dict[str, Any] = {"text": b.text, "sequence": name in site.rule.sequence_metavars,
                                 "start": b.start, "end": b.end}
        value = constant_value(b.text, env) if b.text.strip() else None
        if value is not None:
            entry["value"] = value
        bindings[name] = entry
    facts = ""
    if site.rule.guard is not None:
        facts = evaluate(site.rule.guard, GuardContext(m, {}, spec)).reason
    return {"line": line, "col": col, "function": site.function_name, "start": m.start,
            "end": m.end, "bindings": bindings, "guard_facts": facts}


def _new_offsets(source: bytes, outcome: Any) -> list[int | None]:
    """Where each applied rewrite's replacement starts in the new source (its first
    non-blank character), or None for a rewrite without a replace: the reverse skill's site
    in the next version is found there."""
    from klc.edits import apply_edits

    edits = []
    seen = set()
    for rw in outcome.applied:
        for e in rw.edits:
            if (e.start, e.end, e.text) not in seen:
                seen.add((e.start, e.end, e.text))
                edits.append(e)
    spec_delta = len(outcome.source) - len(apply_edits(source, edits))
    out: list[int | None] = []
    for rw in outcome.applied:
        rep = next((e for e in rw.edits if e.what == "replace"), None)
        if rep is None:
            out.append(None)
            continue
        shift = sum(len(e.text.encode()) - (e.end - e.start) for e in edits
                    if e is not rep and e.end <= rep.start)
        text = rep.text.encode()
        lead = len(text) - len(text.lstrip())
        out.append(rep.start + shift + spec_delta + lead)
    return out


def _facts(spec: Any, env: dict[str, int | float]) -> dict[str, Any]:
    from klc.spec import launch_dims

    facts: dict[str, Any] = {"kernel": spec.kernel}
    for key in ("grid", "block"):
        try:
            facts[key] = list(launch_dims(tuple(getattr(spec, key)), env))
        except KlcError:
            facts[key] = list(getattr(spec, key))
    return facts


def _workload(spec: Any) -> str:
    sizes = ", ".join(f"{k}={v}" for k, v in spec.sizes.items())
    return f"{spec.kernel} ({sizes})" if sizes else spec.kernel


def version_file(index: int, pass_name: str | None) -> str:
    return f"v{index:02d}_{pass_name or 'expert'}.cu"


def resolve_stages(stages: tuple[str, ...]) -> tuple[tuple[str, ...], str, str]:
    """(stages to run, "full" | "compile-only", a note for the report)."""
    from klc.gate import GPU_STAGES, STAGES, gpu_status

    bad = [s for s in stages if s not in STAGES]
    if bad:
        raise KlcError(f"--stages: unknown stage {bad[0]!r} (stages: {', '.join(STAGES)})")
    if "compile" not in stages:
        stages = ("compile", *stages)
    if not any(s in stages for s in GPU_STAGES):
        return stages, "compile-only", ("compile-only gating (--stages compile): every "
                                        "candidate that compiles is accepted; nothing is "
                                        "verified or timed")
    arch, why = gpu_status()
    if arch is None:
        return ("compile",), "compile-only", (f"compile-only gating: {why}; every candidate "
                                              "that compiles is accepted; nothing is verified "
                                              "or timed")
    if "verify" not in stages:
        raise KlcError("--stages: a lineage step must be verified against the expert: give "
                       "compile,verify[,profile] or compile alone")
    return stages, "full", f"gated by {', '.join(stages)} against the expert"


def check_replace(out_dir: str | Path, stages: tuple[str, ...], force: bool = False) -> None:
    """Refuse (KlcError, before anything runs or is written) to write a walk over one that
    measured more: a walk gated in full (verified on a GPU) by one this run can only compile,
    or a timed walk by one that will not time (no ``profile`` stage). ``force`` replaces it
    all the same."""
    path = Path(out_dir) / "lineage.json"
    if force or not path.is_file():
        return
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # not a walk klc can read: nothing measured to keep
    if not isinstance(old, dict) or old.get("gating") != "full":
        return
    stages, gating, note = resolve_stages(stages)
    timed = any(isinstance(v, dict) and v.get("median_ms") is not None
                for v in old.get("versions") or ())
    on = f" on {old['device']}" if old.get("device") else ""
    if gating == "compile-only":
        lost = f"its verified steps{' and times' if timed else ''}"
        why = note.split(";")[0]
    elif timed and "profile" not in stages:
        lost, why = "its times", f"--stages {','.join(stages)} does not profile"
    else:
        return
    raise KlcError(f"{path}: a walk measured{on}; this run would replace {lost} with "
                   f"unmeasured ones ({why}): give --force to replace it, or another --out")


def walk(expert_path: str | Path, passes_dir: Passes | None = None, *,
         stages: tuple[str, ...] = ("compile", "verify", "profile"), arch: str | None = None,
         progress: Progress | None = None, max_steps: int = MAX_STEPS,
         only: list[str] | None = None) -> Lineage:
    """Walk the expert backward (see the module doc). Bad input raises KlcError before any
    gate runs: a missing or unreadable file, a syntax problem, no spec or a spec that does
    not fit the kernel, a passes folder with a broken rule or ORDER. ``only``: walk with
    these passes alone, in this order (a recorded walk's ``order``: the walk again as its
    passes made it, whatever passes came after it)."""
    from klc.cuda.parse import parse_bytes, read_source
    from klc.gate import gate
    from klc.gate.compile import DEFAULT_ARCH, check_arch
    from klc.spec import check_spec, load_spec

    say = progress or (lambda _msg: None)
    path = str(expert_path)
    expert = read_source(path)
    unit = parse_bytes(expert, path)
    if unit.problems:
        raise KlcError(f"{unit.problems[0].describe(path)}: the expert must parse cleanly to be "
                       "walked")
    spec = load_spec(expert, path)
    if spec is None:
        raise KlcError(f"{path}: the expert has no klc-spec block: the gate cannot verify "
                       "the steps against it (see docs/spec.md)")
    check_spec(spec, unit)
    if passes_dir is None:  # the passes klc ships
        from klc.rule import default_pass_dirs

        passes_dir = default_pass_dirs()[0]
    rules, order_source = load_passes(passes_dir)
    if only is not None:
        by_name = {r.name: r for r in rules}
        missing = [n for n in only if n not in by_name]
        if missing:
            raise KlcError(f"no pass named {', '.join(missing)} in {passes_dir}")
        rules = [by_name[n] for n in only]
    stages, gating, note = resolve_stages(tuple(stages))
    target = check_arch(arch) if arch else None
    p = Path(path)
    family = p.parent.name if p.stem == "expert" and p.parent.name else p.stem
    folders = os.pathsep.join(str(f) for f in pass_folders(passes_dir))
    lineage = Lineage(path, family, folders, [r.name for r in rules], order_source,
                      stages, gating, note, target or DEFAULT_ARCH, _workload(spec))

    def run_gate(source: bytes, name: str, reference: bytes | None) -> dict[str, Any]:
        rec = gate(source, name, reference=reference,
                   reference_path=path if reference is not None else None,
                   arch=target, stages=stages)
        return rec.to_json()

    say(f"{path}: gating the expert ({', '.join(stages)})")
    expert_gate = run_gate(expert, version_file(0, None), None)
    if expert_gate["verdict"] not in ("passed", "compiled"):
        raise KlcError(f"{path}: the expert itself does not pass the gate: "
                       f"{expert_gate['reason']}")
    lineage.arch = expert_gate.get("arch", lineage.arch)
    lineage.versions.append(Version(0, version_file(0, None), expert, expert_gate))
    seen = {sha256(expert)}
    current = expert
    for index in range(1, max_steps + 1):
        step, attempts = _step(current, index, rules, lineage, seen, run_gate, expert, say)
        if step is None:
            lineage.final_attempts = attempts
            lineage.stop_reason = ("no simplification applies" if not attempts else
                                   f"the gate refused all {len(attempts)} candidates")
            break
        lineage.versions.append(step)
        seen.add(step.sha256)
        current = step.source
    else:
        lineage.stop_reason = f"stopped after {max_steps} steps (--max-steps)"
    from klc.explain import explain

    lineage.final_guard_refused = _guard_refusals(lineage.versions[-1], rules)
    lineage.stop_constructs = [f.to_json() for f in explain(
        lineage.versions[-1].source, rules,
        [*lineage.final_attempts, *lineage.final_guard_refused])]
    say(f"{path}: {len(lineage.versions) - 1} steps; {lineage.stop_reason}")
    return lineage


def _guard_refusals(version: Version, rules: list[Rule]) -> list[dict[str, Any]]:
    """The matches of the passes that their static guards refused in the walk's last
    version (pass, place, reason): where a simplification met the code and did not hold,
    which the inverse skill's card records as a pitfall."""
    from klc.cuda.parse import parse_bytes
    from klc.pipeline import find_sites, spec_of

    unit = parse_bytes(version.source, version.file)
    out = []
    for s in find_sites(unit, rules, None, spec_of(unit)):
        if s.ok:
            continue
        line, col = unit.position(s.match.start)
        out.append({"pass": s.rule.name, "sites": [{"line": line, "col": col,
                                                     "function": s.function_name}],
                    "holes": {}, "accepted": False, "reason": f"guard: {s.reason}"})
    return out


def _candidates(unit: Any, rules: list[Rule], spec: Any) -> Iterator[tuple[Rule, list[Any]]]:
    """(pass, sites) in walk order: a launch pass's sites of one kernel together, any
    other pass's sites one by one."""
    from klc.pipeline import find_sites

    sites = [s for s in find_sites(unit, rules, None, spec) if s.ok]
    for rule in rules:
        mine = sorted((s for s in sites if s.rule is rule), key=lambda s: s.match.start)
        if not mine:
            continue
        if rule.changes_launch:
            by_fn: dict[str, list[Any]] = {}
            for s in mine:
                by_fn.setdefault(s.function_name, []).append(s)
            yield from ((rule, group) for group in by_fn.values())
        else:
            yield from ((rule, [s]) for s in mine)


def _step(current: bytes, index: int, rules: list[Rule], lineage: Lineage, seen: set[str],
          run_gate: Callable[[bytes, str, bytes | None], dict[str, Any]], expert: bytes,
          say: Progress) -> tuple[Version | None, list[Attempt]]:
    from klc.cuda.parse import parse_bytes
    from klc.pipeline import apply_rules, apply_site, spec_of

    prev = lineage.versions[-1]
    unit = parse_bytes(current, prev.file)
    spec = spec_of(unit)
    env = constant_env(current, spec)
    attempts: list[Attempt] = []
    for rule, sites in _candidates(unit, rules, spec):
        described = [_describe_site(s, env, spec) for s in sites]
        for holes in _hole_choices(rule, sites[0].holes if sites else None):
            name = version_file(index, rule.name)
            try:
                if len(sites) == 1 and not rule.changes_launch:
                    outcome = apply_site(unit, sites[0], holes, spec)
                else:
                    outcome = apply_rules(unit, [rule], holes, spec)
            except KlcError as e:
                attempts.append(Attempt(rule.name, described, holes, False, f"rewrite: {e}"))
                continue
            if not outcome.changed:
                reason = outcome.refused[0].reason if outcome.refused else "no change"
                attempts.append(Attempt(rule.name, described, holes, False, reason))
                continue
            new = outcome.source
            if sha256(new) in seen:
                attempts.append(Attempt(rule.name, described, holes, False,
                                        "gives back an earlier version of the lineage"))
                continue
            try:
                record = run_gate(new, name, expert)
            except KlcError as e:
                attempts.append(Attempt(rule.name, described, holes, False, f"gate: {e}"))
                continue
            ok = _accepted(record)
            where_ = ", ".join(f"{prev.file}:{d['line']}:{d['col']}" for d in described)
            if not ok:
                say(f"  step {index}: {rule.name} at {where_} refused: {record['reason']}")
                attempts.append(Attempt(rule.name, described, holes, False, record["reason"],
                                        record))
                continue
            say(f"  step {index}: {rule.name} at {where_}: {record['verdict']}")
            offsets = _new_offsets(current, outcome)
            applied = [rw.match.start for rw in outcome.applied]
            for d in described:
                if d["start"] in applied:
                    d["new_offset"] = offsets[applied.index(d["start"])]
            new_spec = spec_of(parse_bytes(new, name))
            step = {
                "index": index, "pass": rule.name, "pass_file": rule.path,
                "pass_line": rule.line, "from": prev.file, "to": name,
                "sites": [d for d in described if d["start"] in applied],
                "holes": holes,
                "launch": [list(c) for c in dict.fromkeys(
                    c for rw in outcome.applied for c in rw.launch)],
                "facts_before": _facts(spec, env) if spec is not None else {},
                "facts_after": _facts(new_spec, constant_env(new, new_spec))
                if new_spec is not None else {},
                "diff": unified_diff(current, new, prev.file, new_path=name),
                "rejected": [a.to_json() for a in attempts],
            }
            return Version(index, name, new, record, step), attempts
    return None, attempts


def _accepted(record: dict[str, Any]) -> bool:
    """Compile and verify passed (profile is measured, not a condition: its failure is
    recorded with the version)."""
    stages = record.get("stages", {})
    for name in ("compile", "verify"):
        st = stages.get(name)
        if st is not None and st.get("status") != "passed":
            return False
    return stages.get("compile", {}).get("status") == "passed"


# --------------------------------------------------------------------------------------
# Output: lineage.json, the versions, the report


def write_lineage(lineage: Lineage, out_dir: str | Path) -> list[Path]:
    """Write every version's source, lineage.json and the report (atomically, file by
    file); old version files of an earlier walk into the same folder are removed."""
    from klc.fsutil import atomic_write

    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise KlcError(f"{out_dir}: cannot create the folder: {e.strerror or e}") from None
    written: list[Path] = []
    names = {v.file for v in lineage.versions}
    for old in out.glob("v[0-9][0-9]_*.cu"):
        if old.name not in names:
            old.unlink()
    for v in lineage.versions:
        atomic_write(out / v.file, v.source)
        written.append(out / v.file)
    data = lineage.to_json()
    atomic_write(out / "lineage.json", (json.dumps(data, indent=1) + "\n").encode())
    written.append(out / "lineage.json")
    written += write_report(data, out)
    return written


def load_lineage(directory: str | Path) -> dict[str, Any]:
    """A walk's lineage.json, checked enough to be learned from or reported."""
    d = Path(directory)
    path = d / "lineage.json" if d.is_dir() else d
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KlcError(f"{directory}: no lineage.json here (run klc lineage first)") from None
    except json.JSONDecodeError as e:
        raise KlcError(f"{where(str(path), e.lineno, e.colno)}: not JSON: {e.msg}") from None
    except OSError as e:
        raise KlcError(f"{path}: cannot read: {e.strerror or e}") from None
    if not isinstance(data, dict) or data.get("klc_lineage") != FORMAT:
        raise KlcError(f"{path}: not a klc lineage (format {FORMAT})")
    for key in ("expert", "family", "versions", "gating"):
        if key not in data:
            raise KlcError(f"{path}: lineage.json has no {key!r}")
    return data


def report_markdown(data: dict[str, Any], plot: str | None, plot_note: str) -> str:
    """The walk as Markdown: the versions naive to expert, each step's pass and gate, what
    the gate refused, and the plot (or why there is none)."""
    versions = data["versions"]
    expert_ms = versions[0].get("median_ms") if versions else None
    lines = [f"# Lineage of `{data['expert']}` ({data['family']})", "",
             f"- workload: {data.get('workload', '?')}",
             f"- device: {data.get('device') or 'none (no GPU)'}; arch {data.get('arch')}",
             f"- gating: {data['gating']} — {data.get('gating_note', '')}",
             f"- passes: `{data.get('passes')}`, order from {data.get('order_source')}",
             f"- {len(versions) - 1} steps; stopped: {data.get('stop_reason', '?')}", ""]
    if data["gating"] == "compile-only":
        lines += ["Compile-only walk: the steps compile, nothing was verified or timed. Run it "
                  "again on a machine with an NVIDIA GPU to gate every step (verify) and time "
                  "every version (profile).", ""]
    lines += ["## Versions, naive to expert", "",
              "| version | pass (the step that made it) | gate | median | % of SOL | vs expert |",
              "| --- | --- | --- | ---: | ---: | ---: |"]
    for v in reversed(versions):
        ms = v.get("median_ms")
        pct = v.get("pct_of_sol")
        rel = f"{expert_ms / ms:.2f}x" if ms and expert_ms else "-"
        verdict = "compiled" if data["gating"] == "compile-only" else v.get("verdict")
        lines.append(f"| `{v['file']}` | {v.get('pass') or '(expert)'} | {verdict} | "
                     f"{f'{ms * 1e3:.1f} us' if ms else '-'} | "
                     f"{f'{pct:.0f}%' if pct is not None else '-'} | {rel} |")
    lines.append("")
    lines += ["## Plot", "", f"![time and % of SOL per version]({plot})" if plot else plot_note,
              ""]
    lines += ["## Steps", ""]
    for v in versions[1:]:
        st = v["step"]
        at = ", ".join(f"{st['from']}:{s['line']}:{s['col']}" for s in st["sites"])
        holes = ", ".join(f"?{k}={x}" for k, x in st["holes"].items())
        lines.append(f"{st['index']}. **{st['pass']}** at {at}"
                     + (f" ({holes})" if holes else "") + f": {v.get('verdict')}")
        for r in st.get("rejected", []):
            lines.append(f"   - refused: {r['pass']} ({', '.join(f'?{k}={x}' for k, x in r['holes'].items()) or 'no holes'}): {_short(r['reason'])}")  # noqa: E501
    for r in data.get("final_attempts", []):
        lines.append(f"- last round, refused: {r['pass']}: {_short(r['reason'])}")
    stops = data.get("stop_constructs") or []
    if stops:
        last = versions[-1]["file"] if versions else "?"
        lines += ["", "## Where the walk stops", "",
                  "The optimization constructs left in the last version, outermost first, and "
                  "why no pass took each apart (klc/explain.py):", ""]
        lines += [f"- `{last}:{s['line']}:{s['col']}` {s['construct']} (`{s['text']}`): "
                  f"{_short(s['verdict'])}" for s in stops]
    return "\n".join(lines) + "\n"


def _short(text: str, n: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def write_plot(data: dict[str, Any], path: Path) -> str:
    """Draw time and % of SOL per version, naive to expert, into ``path`` (PNG); return ""
    or why there is no plot (no matplotlib, no times)."""
    versions = list(reversed(data["versions"]))
    times = [v.get("median_ms") for v in versions]
    if not any(t is not None for t in times):
        return ("No plot: no version was timed (a compile-only walk). Walk again on a GPU "
                "machine for times and % of SOL.")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ("No plot: matplotlib is not installed here (pip install 'klc-cuda[plot]'). Make "
                f"it where it is: `klc lineage --report {path.parent}` (or `klc learn`, which "
                "draws it too).")
    labels = [f"v{v['index']:02d} {v.get('pass') or 'expert'}" for v in versions]
    xs = list(range(len(versions)))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(xs) + 2), 4.2))
    ax.bar(xs, [(t or 0) * 1e3 for t in times], color="#4c72b0")
    ax.set_ylabel("median time (us)")
    ax.set_xticks(xs, labels, rotation=60, ha="right", fontsize=7)
    ax2 = ax.twinx()
    ax2.plot(xs, [v.get("pct_of_sol") for v in versions], color="#dd8452", marker="o")
    ax2.set_ylabel("% of SOL")
    ax2.set_ylim(bottom=0)
    ax.set_title(f"{data['family']}: naive -> expert ({data.get('device') or '?'})")
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.klc-tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)
    return ""


def write_report(data: dict[str, Any], out: Path) -> list[Path]:
    """report.md (and lineage.png when it can be drawn) in ``out``."""
    from klc.fsutil import atomic_write

    png = out / "lineage.png"
    note = write_plot(data, png)
    text = report_markdown(data, None if note else png.name, note)
    atomic_write(out / "report.md", text.encode())
    return [out / "report.md"] + ([] if note else [png])
