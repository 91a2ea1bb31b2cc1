"""Optimizing forward: apply skills to a kernel, one verified step at a time.

    optimize(source, path)  ->  OptimizeResult

The loop (DESIGN.md, "forward"), with the gate as the only judge:

1. baseline: the original kernel through the gate against itself (determinism, its time, its
   % of the speed-of-light floor). It counts as one trial of the budget.
2. a round: every applicable site of every skill on the current version (``find_sites``;
   sites whose guards wait on a hole count as applicable until the hole is filled), ranked by
   the skill card's verdict (faster, then unmeasured or hand-written, then neutral), then its
   measured speedup (unmeasured skills rank as 1.0x), then source order. A skill whose
   verdict is "slower" is not tried (a note says where it applied) unless
   ``include_slower``. A
   skill with several sites and only local edits is first tried at all of them at once
   (``klc.pipeline.apply_rules``, as a lineage step applied its pass), one trial instead of
   one per site; when that candidate fails, its sites are tried one by one. Each target gets
   its filler's best proposal (phase A); then the most promising site with holes
   (verified, not slower) gets up to ``EXPLORE`` more of its hole values (phase B), because
   once a site is applied its holes cannot be tuned again. Every proposal goes through the
   static checks first (``klc.fill.search.static_check``: guards with the values, rewrite,
   spec, NVRTC compile, spills, registers and shared memory per block): a refused one costs
   no trial. The rest go through the gate against the ORIGINAL kernel.
3. keep the round's best verified candidate when it is faster than the current version by
   more than the noise: each trial times the original (the reference) between two timings of
   the candidate in one process, so the speedup over the original is measured against the
   same clocks; candidate and current are compared by those speedups, and the gain must
   exceed ``max(min_gain, the candidate's noise, the current version's noise)``. When no
   candidate is faster, a verified one that is not slower and makes new sites applicable
   (an *enabling* step: a ``__restrict__`` that a vectorizing skill's guard needs) may be
   kept, at most ``MAX_ENABLING`` in a row.
4. repeat until the current version reaches ``target_sol`` of the floor, the budget of gate
   trials is spent, or no site has anything left to try.
5. the final kernel is gated again against the original with fresh seeds (an independent
   re-verification, outside the budget and never from the cache). Only a kernel that passes
   it, and is faster than the original beyond the noise, is reported (``changed``); otherwise
   the original is returned and the notes say why.

Budget: every gate call that is not a cache hit counts, passed or failed; static refusals and
cache hits do not. Gate records are cached on disk (``klc.gate.cache``): a re-run, or a run
resumed after an interruption, spends nothing twice.

A filler's history at a site holds what is not worth paying for again on the current
version. A trial's outcome is evidence about the version it ran on, so:

- every trial of the current version is in it;
- a trial of an earlier version that improved it (but was not the round's best) is not: it is
  tried again on the new version;
- one that failed (verify, compile, a static refusal) is, while the site's matched text is
  the same; once an accepted step changed that text, it may be tried again;
- one that passed but was not faster (neutral or slower) is, while the enclosing function's
  text is the same; once an accepted step changed the function (a tile that was declared
  but unused became live, so padding it now matters), it is a *retry*: proposed only after
  the filler has no fresh assignment left at the site (:meth:`_Loop.propose` asks twice),
  and at most once per accepted step (the retry is a trial of the new version, so it is in
  the history from then on).

Without a GPU (or without a klc-spec block), nothing can be verified or timed: the static
part runs (sites, hole values, static checks, the gate's compile and plan), the report lists
the statically valid candidates in rank order, and nothing is claimed. ``unverified=True``
then returns the first of them as ``source`` (``changed`` true, ``verified`` false): an
explicit request, for a user who will gate it elsewhere.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc.errors import KlcError
from klc.fill import FillRequest, Trial
from klc.fill.search import (
    SearchFiller,
    candidate_sites,
    groupable,
    is_slower,
    resolve_arch,
    site_rank,
    slower_note,
    static_check,
    static_check_rule,
)

if TYPE_CHECKING:
    from klc.fill import Filler
    from klc.frontend import Unit
    from klc.gate import GateRecord
    from klc.pipeline import Site
    from klc.rules import Rule

MIN_GAIN = 0.02  # a step must be at least 2% faster (or beyond the noise, if larger)
EXPLORE = 3  # phase B: more hole values for the round's most promising holed site
MAX_ENABLING = 2  # neutral steps that only unlock new sites, in a row
MAX_ROUNDS = 64  # a driver caps its iterations

ProgressFn = Callable[[str, dict[str, Any]], None]


# --------------------------------------------------------------------------------------
# Results


@dataclass
class TrialLog:
    """One gate trial (or cache hit) of a candidate."""

    number: int  # budget trials spent when this one finished (a cache hit adds none)
    round: int
    skill: str
    site: str  # file:line:col in the version it rewrote
    function: str
    values: dict[str, str]
    verdict: str
    reason: str
    cached: bool
    median_ms: float | None = None
    speedup: float | None = None  # vs the original, timed in the same trial
    noise: float | None = None
    pct_of_sol: float | None = None
    elapsed_s: float = 0.0
    outcome: str = ""  # "improved" | "neutral" | "slower" | "failed" | "baseline"
    seeds: list[int] | None = None  # the verify seeds the trial used

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Step:
    """One accepted rewrite."""

    round: int
    skill: str
    site: str
    function: str
    values: dict[str, str]
    kind: str  # "improvement" | "enabling"
    median_ms: float | None
    speedup_vs_previous: float | None
    speedup_vs_original: float | None
    pct_of_sol: float | None
    gate: dict[str, Any]  # the record's summary (verdict, reason, times, noise)
    diff: str = ""  # the unified diff from the version before the step to the one after

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class OptimizeResult:
    path: str
    original: bytes
    source: bytes
    changed: bool
    verified: bool
    mode: str  # "gpu" | "static"
    steps: list[Step] = field(default_factory=list)
    trials: list[TrialLog] = field(default_factory=list)
    trials_used: int = 0
    cache_hits: int = 0
    budget: int = 0
    target_sol: float = 0.0
    usage: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stop_reason: str = ""
    baseline: dict[str, Any] | None = None  # the original's gate summary
    final: dict[str, Any] | None = None  # the re-verification's gate summary
    reverify: dict[str, Any] | None = None  # its full record
    static_candidates: list[dict[str, Any]] = field(default_factory=list)
    static_refusals: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)  # slower skills not tried
    arch: str = ""
    filler: str = ""

    @property
    def speedup(self) -> float | None:
        """The final kernel's speedup over the original, from the re-verification."""
        return (self.final or {}).get("speedup") if self.changed else None

    @property
    def pct_of_sol(self) -> float | None:
        if self.changed and self.final:
            return self.final.get("pct_of_sol")
        return (self.baseline or {}).get("pct_of_sol")

    def trials_to_fraction(self, fraction: float = 0.95) -> int | None:
        """Budget trials spent until a verified candidate reached ``fraction`` of the final
        speedup (None when nothing improved)."""
        if not self.changed or not self.steps:
            return None
        final = self.steps[-1].speedup_vs_original
        if not final:
            return None
        for t in self.trials:
            if t.verdict == "passed" and t.speedup and t.speedup >= fraction * final:
                return t.number
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path, "changed": self.changed, "verified": self.verified,
            "mode": self.mode, "arch": self.arch, "filler": self.filler,
            "budget": self.budget, "trials_used": self.trials_used,
            "cache_hits": self.cache_hits, "target_sol": self.target_sol,
            "stop_reason": self.stop_reason, "speedup": self.speedup,
            "pct_of_sol": self.pct_of_sol, "trials_to_95pct": self.trials_to_fraction(),
            "baseline": self.baseline, "final": self.final,
            "steps": [s.to_json() for s in self.steps],
            "trials": [t.to_json() for t in self.trials],
            "static_candidates": self.static_candidates,
            "static_refusals": self.static_refusals,
            "skipped_slower": self.skipped,
            "usage": self.usage, "notes": self.notes, "reverify": self.reverify,
            "source_sha256": hashlib.sha256(self.source).hexdigest(),
        }


def step_diff(before: bytes, after: bytes, path: str) -> str:
    """The unified diff of one accepted step (what a report shows of it)."""
    import difflib

    from klc.fsutil import diff_name

    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(line if line.endswith("\n") else line + "\n"
                   for line in difflib.unified_diff(a, b, diff_name("a/", path),
                                                    diff_name("b/", path)))


def summarize(record: GateRecord) -> dict[str, Any]:
    """The numbers of a gate record a report shows."""
    out: dict[str, Any] = {"verdict": record.verdict, "reason": record.reason,
                           "device": record.device, "elapsed_s": round(record.elapsed_s, 3)}
    prof = record.stages.get("profile")
    if prof is not None and prof.status == "passed":
        d = prof.data
        out.update(median_ms=d.get("median_ms"), noise=d.get("noise"),
                   speedup=d.get("speedup"), pct_of_sol=d.get("sol", {}).get("pct_of_sol"),
                   bound=d.get("sol", {}).get("bound"))
    ver = record.stages.get("verify")
    if ver is not None and ver.status == "passed":
        out["seeds"] = ver.data.get("seeds")
    comp = record.stages.get("compile")
    if comp is not None:
        res = comp.data.get("resources", {}).get(record.kernel or "", {})
        if res:
            out["registers"] = res.get("registers")
            out["spill_bytes"] = res.get("spill_stores", 0) + res.get("spill_loads", 0)
    return out


# --------------------------------------------------------------------------------------
# Fillers


def make_filler(name: str, *, model: str | None = None, arch: str | None = None,
                seed: int = 0, include_slower: bool = False) -> Filler:
    """A filler by name: ``search`` (default, embedded) or ``llm`` (imported lazily)."""
    if name == "search":
        return SearchFiller(arch=arch, seed=seed, include_slower=include_slower)
    if name == "llm":
        from klc.extras import available, missing

        if not available("openai"):  # imported by the filler when it is made
            raise KlcError(missing("openai", "--filler llm") + " (or use --filler search)")
        try:
            from klc.fill.llm import LlmFiller
        except ModuleNotFoundError as e:
            if e.name != "klc.fill.llm":
                raise
            raise KlcError(f"--filler llm: the LLM filler is not available here ({e}); use "
                           "--filler search") from None
        return LlmFiller(model=model)  # type: ignore[no-any-return]  # model: or KLC_LLM_MODEL
    raise KlcError(f"unknown filler {name!r} (fillers: search, llm)")


# --------------------------------------------------------------------------------------
# The loop


@dataclass
class _Version:
    """The kernel the loop is improving, and what the gate measured of it."""

    source: bytes
    unit: Unit
    spec: Any
    speedup: float  # vs the original
    median_ms: float | None
    noise: float
    pct_of_sol: float | None

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.source).hexdigest()


@dataclass
class _Entry:
    base: str  # sha of the version the trial rewrote
    text: str  # sha of the site's matched text
    func: str  # sha of the enclosing function's text in that version
    single: bool  # the rule matched once in that function
    trial: Trial
    outcome: str


@dataclass
class _Target:
    """What one proposal rewrites: one site, or (``group`` > 1) the rule at each of its
    ``group`` sites at once. ``site`` is the first one (the filler's context)."""

    site: Site
    key: tuple[str, str, int]  # history key: (rule, function, ordinal); ("*", rule, -1)
    single: bool  # the rule matched once in that function
    group: int = 1

    @property
    def rule(self) -> Rule:
        return self.site.rule

    @property
    def where(self) -> str:
        w = _site_where(self.site)
        return w if self.group == 1 else f"{w} (+{self.group - 1} more sites)"

    @property
    def text(self) -> str:
        return "*" if self.group > 1 else _text_sha(self.site)

    @property
    def func(self) -> str:
        return _func_sha(self.site)


@dataclass
class _Candidate:
    target: _Target
    values: dict[str, str]
    source: bytes
    record: GateRecord
    log: TrialLog

    @property
    def site(self) -> Site:
        return self.target.site


def build_targets(sites: list[Site], split: set[str]) -> list[_Target]:
    """Targets from ranked sites, in their order: a groupable rule with several sites is
    first tried at all of them at once (one trial, as an expert applies it and as a lineage
    step did); once that failed (its name in ``split``), its sites are tried one by one."""
    count: dict[tuple[str, str], int] = {}
    per_rule: dict[str, list[Site]] = {}
    keys = []
    for s in sites:
        k = (s.rule.name, s.function_name)
        keys.append((*k, count.get(k, 0)))
        count[k] = count.get(k, 0) + 1
        per_rule.setdefault(s.rule.name, []).append(s)
    out: list[_Target] = []
    grouped: set[str] = set()
    for s, key in zip(sites, keys, strict=True):
        name = s.rule.name
        group = per_rule[name]
        if len(group) > 1 and groupable(s.rule) and name not in split:
            if name not in grouped:
                grouped.add(name)
                out.append(_Target(group[0], ("*", name, -1), False, len(group)))
            continue
        out.append(_Target(s, key, count[key[:2]] == 1))  # type: ignore[arg-type]
    return out


def check_target(unit: Unit, target: _Target, values: dict[str, str], spec: Any,
                 arch: str) -> Any:
    """The static checks of one proposal for a target (one site, or the rule everywhere)."""
    if target.group > 1:
        return static_check_rule(unit, target.rule, values, spec, arch)
    return static_check(unit, target.site, values, spec, arch)


def skip_slower(sites: list[Site], skipped: dict[str, dict[str, Any]]) -> list[Site]:
    """The sites of skills not measured slower; the others are recorded in ``skipped`` (by
    skill: its location and the sites where it applied), for the report's notes."""
    kept = []
    for s in sites:
        if not is_slower(s.rule):
            kept.append(s)
            continue
        entry = skipped.setdefault(s.rule.name, {"skill": s.rule.name,
                                                 "location": s.rule.location,
                                                 "verdict": s.rule.card.verdict, "sites": []})
        where = _site_where(s)
        if where not in entry["sites"]:
            entry["sites"].append(where)
    return kept


def _skipped_notes(skipped: dict[str, dict[str, Any]], rules: list[Rule]) -> list[str]:
    by_name = {r.name: r for r in rules}
    return [f"{slower_note(by_name[name])}; it applied at {', '.join(e['sites'])}"
            for name, e in skipped.items()]


def _none_applies(skipped: dict[str, dict[str, Any]]) -> str:
    if not skipped:
        return "no skill applies"
    return (f"no skill applies but {len(skipped)} measured slower ("
            + ", ".join(skipped) + "; --include-slower tries them)")


def _site_where(site: Site) -> str:
    return site.match.unit.where(site.match.start)


def _text_sha(site: Site) -> str:
    m = site.match
    return hashlib.sha256(m.unit.source[m.start:m.end]).hexdigest()[:16]


def _func_sha(site: Site) -> str:
    """The enclosing function's text (the whole file's, for a match outside any function)."""
    m = site.match
    f = m.function
    text = m.unit.source[f.start:f.end] if f is not None else m.unit.source
    return hashlib.sha256(text).hexdigest()[:16]


class _Loop:
    def __init__(self, original: bytes, path: str, rules: list[Rule], filler: Filler,
                 budget: int, target_sol: float, arch: str, runner: Any,
                 progress: ProgressFn | None, min_gain: float,
                 include_slower: bool = False) -> None:
        self.original = original
        self.path = path
        self.rules = rules
        self.filler = filler
        self.budget = budget
        self.target_sol = target_sol
        self.arch = arch
        self.runner = runner
        self.progress = progress
        self.min_gain = min_gain
        self.used = 0
        self.hits = 0
        self.round = 0
        self.trials: list[TrialLog] = []
        self.steps: list[Step] = []
        self.notes: list[str] = []
        self.refusals: list[dict[str, Any]] = []
        self.history: dict[tuple[str, str, int], list[_Entry]] = {}
        self.visited: set[str] = set()
        self.seeds_seen: set[int] = set()  # verify seeds of every trial (re-verify avoids them)
        self.split: set[str] = set()  # rules whose all-sites candidate failed: site by site
        self.include_slower = include_slower
        self.skipped: dict[str, dict[str, Any]] = {}  # slower skills not tried, by name
        self.recipes: list[Any] = []  # klc.recipes.Recipe: lineages replayed as one move
        self.recipe_tried: set[tuple[str, str]] = set()  # (family, version sha)

    # -- bookkeeping ----------------------------------------------------------------

    def emit(self, event: str, **data: Any) -> None:
        if self.progress is not None:
            self.progress(event, {"used": self.used, "budget": self.budget, **data})

    def left(self) -> int:
        return self.budget - self.used

    def gate(self, source: bytes, reference: bytes | None,
             seeds: list[int] | None = None) -> tuple[GateRecord, bool]:
        record, hit = self.runner.run(source, self.path, reference=reference,
                                      reference_path=self.path if reference else None,
                                      seeds=seeds)
        if hit:
            self.hits += 1
        elif seeds is None:
            self.used += 1
        return record, hit

    def targets(self, cur: _Version) -> list[_Target]:
        return build_targets(self.ranked_sites(cur), self.split)

    def target_history(self, target: _Target, base: str, retry: bool = False
                       ) -> list[Trial]:
        """The trials the filler must not propose again at ``target`` on version ``base``
        (module doc). With ``retry``, the passed-but-not-faster trials of earlier versions
        whose function has changed since are left out (proposable again)."""
        out = []
        func = target.func
        for e in self.history.get(target.key, []):
            same_site = e.text == target.text or (target.single and e.single)
            if not same_site:
                continue
            if e.base == base:
                out.append(e.trial)
            elif e.outcome == "failed":
                if e.text == target.text:  # the site's code is what failed: still excluded
                    out.append(e.trial)
            elif e.outcome in ("neutral", "slower") and (not retry or e.func == func):
                out.append(e.trial)
        return out

    def retryable(self, target: _Target, base: str) -> bool:
        return len(self.target_history(target, base, retry=True)) < \
            len(self.target_history(target, base))

    # -- one candidate --------------------------------------------------------------

    def try_values(self, cur: _Version, target: _Target, values: dict[str, str],
                   ) -> _Candidate | None:
        site = target.site
        check = check_target(cur.unit, target, values, cur.spec, self.arch)
        where = target.where
        if not check.ok:
            self.refusals.append({"round": self.round, "skill": site.rule.name,
                                  "site": where, "values": values,
                                  "stage": check.stage, "reason": check.reason})
            self.remember(cur, target, Trial(dict(check.values), False, None,
                                             f"static: {check.reason}"), "failed")
            self.emit("refused", skill=site.rule.name, site=where, values=values,
                      reason=check.reason)
            return None
        assert check.source is not None
        self.emit("trial-start", skill=site.rule.name, site=where, values=values)
        try:
            record, hit = self.gate(check.source, self.original)
        except KlcError as e:  # the gate refused the candidate as input: costs no trial
            self.refusals.append({"round": self.round, "skill": site.rule.name,
                                  "site": where, "values": values, "stage": "gate",
                                  "reason": str(e)})
            self.remember(cur, target, Trial(dict(check.values), False, None, str(e)),
                          "failed")
            return None
        log = self.log_trial(cur, record, hit, site.rule.name, where, site.function_name,
                             dict(check.values))
        ms = log.median_ms if record.passed else None
        self.remember(cur, target, Trial(dict(check.values), record.passed, ms,
                                         "" if record.passed else record.reason), log.outcome)
        self.emit("trial", skill=site.rule.name, site=where, values=values,
                  verdict=record.verdict, cached=hit, speedup=log.speedup,
                  outcome=log.outcome)
        return _Candidate(target, dict(check.values), check.source, record, log)

    def log_trial(self, cur: _Version, record: GateRecord, hit: bool, skill: str, where: str,
                  function: str, values: dict[str, str]) -> TrialLog:
        """Record one gate trial: its log (judged against the current version) and the
        verify seeds it used (the re-verification avoids them)."""
        s = summarize(record)
        self.seeds_seen.update(s.get("seeds") or ())
        log = TrialLog(self.used, self.round, skill, where, function, values, record.verdict,
                       record.reason, hit, s.get("median_ms"), s.get("speedup"),
                       s.get("noise"), s.get("pct_of_sol"), record.elapsed_s)
        log.outcome = self.judge(cur, log)
        log.seeds = s.get("seeds")
        self.trials.append(log)
        return log

    def remember(self, cur: _Version, target: _Target, trial: Trial, outcome: str) -> None:
        self.history.setdefault(target.key, []).append(
            _Entry(cur.sha, target.text, target.func, target.single, trial, outcome))
        if target.group > 1 and outcome == "failed":
            self.split.add(target.rule.name)  # one site may be wrong where others are fine

    def threshold(self, cur: _Version, log: TrialLog) -> float:
        return max(self.min_gain, log.noise or 0.0, cur.noise)

    def judge(self, cur: _Version, log: TrialLog) -> str:
        if log.verdict != "passed":
            return "failed"
        if not log.speedup:
            return "neutral"  # passed, but no time to compare (a gate without profile)
        ratio = log.speedup / cur.speedup
        thr = self.threshold(cur, log)
        if ratio > 1 + thr:
            return "improved"
        return "neutral" if ratio >= 1 - thr else "slower"

    # -- rounds ---------------------------------------------------------------------

    def ranked_sites(self, cur: _Version) -> list[Site]:
        sites = candidate_sites(cur.unit, self.rules, cur.spec, include_slower=True)
        if not self.include_slower:
            sites = skip_slower(sites, self.skipped)
        return sorted(sites, key=site_rank)

    def propose(self, cur: _Version, target: _Target, k: int) -> list[dict[str, str]]:
        """The filler's proposals: fresh assignments first; when it has none left, the
        retries (module doc: passed-but-not-faster on an earlier version of a function that
        has changed since)."""
        site = target.site
        got: list[dict[str, str]] = []
        for retry in (False, True):
            if retry and not self.retryable(target, cur.sha):
                break
            req = FillRequest(site.rule, site, cur.unit, cur.spec,
                              history=self.target_history(target, cur.sha, retry),
                              budget=self.left(), baseline_ms=cur.median_ms)
            try:
                got = self.filler.propose(req, k)
            except KlcError as e:
                self.notes.append(f"{target.where}: {site.rule.name}: the "
                                  f"{self.filler.name} filler failed: {e}")
                return []
            if got:
                break
        reason = getattr(self.filler, "last_reason", "")
        if not got and reason and reason not in self.notes:
            self.notes.append(reason)
        return [dict(v) for v in got[:k]]

    def run_round(self, cur: _Version) -> tuple[list[_Candidate], bool]:
        """Phase A and B of one round (module doc). Returns the candidates that ran and
        whether any target had something to propose."""
        ran: list[_Candidate] = []
        proposed_any = False
        for target in self.targets(cur):
            if self.left() <= 0:
                break
            for values in self.propose(cur, target, 1):
                proposed_any = True
                c = self.try_values(cur, target, values)
                if c is not None:
                    ran.append(c)
        promising = [c for c in ran if c.target.rule.holes and c.log.outcome in
                     ("improved", "neutral")]
        if promising and self.left() > 0:
            best = max(promising, key=lambda c: c.log.speedup or 0.0)
            for values in self.propose(cur, best.target, min(EXPLORE, self.left())):
                if self.left() <= 0:
                    break
                proposed_any = True
                c = self.try_values(cur, best.target, values)
                if c is not None:
                    ran.append(c)
        return ran, proposed_any

    def new_sites(self, cur: _Version, cand: _Candidate) -> int:
        """How many more sites the candidate's skills have than the current version's (the
        applied rule aside): what an enabling step unlocks. Counted per rule, so that a
        site whose text merely changed (a kernel-wide anchor) is not taken for a new one."""
        from collections import Counter

        from klc.frontend import parse_bytes
        from klc.pipeline import spec_of

        unit = parse_bytes(cand.source, self.path)
        try:
            spec = spec_of(unit)
        except KlcError:
            return 0
        slower = self.include_slower
        before = Counter(s.rule.name for s in candidate_sites(cur.unit, self.rules, cur.spec,
                                                              include_slower=slower))
        after = Counter(s.rule.name for s in candidate_sites(unit, self.rules, spec,
                                                             include_slower=slower))
        applied = cand.site.rule.name
        return sum(max(0, n - before[r]) for r, n in after.items() if r != applied)

    def accept(self, cur: _Version, cand: _Candidate, kind: str) -> _Version:
        from klc.frontend import parse_bytes
        from klc.pipeline import spec_of

        log = cand.log
        unit = parse_bytes(cand.source, self.path)
        step = Step(self.round, cand.site.rule.name, log.site, log.function, cand.values, kind,
                    log.median_ms, (log.speedup / cur.speedup) if log.speedup else None,
                    log.speedup, log.pct_of_sol, summarize(cand.record),
                    step_diff(cur.source, cand.source, self.path))
        self.steps.append(step)
        self.visited.add(hashlib.sha256(cand.source).hexdigest())
        self.emit("accept", skill=step.skill, site=step.site, kind=kind,
                  speedup=step.speedup_vs_original)
        return _Version(cand.source, unit, spec_of(unit), log.speedup or cur.speedup,
                        log.median_ms, log.noise or 0.0, log.pct_of_sol)

    def try_recipe(self, cur: _Version) -> _Version | None:
        """Replay the lineage recipes from the current version (klc/recipes.py); gate the
        one whose walk measured the largest gain, once; the new version when it verified
        and is faster, else None."""
        from klc.recipes import replay

        rules = {r.name: r for r in self.rules}
        best = None
        for recipe in self.recipes:
            key = (recipe.family, cur.sha)
            if key in self.recipe_tried:
                continue
            self.recipe_tried.add(key)
            try:
                rp = replay(recipe, cur.source, self.path, rules)
            except KlcError as e:
                self.notes.append(f"lineage {recipe.family}: the replay stopped: {e}")
                continue
            if rp is None or hashlib.sha256(rp.source).hexdigest() in self.visited:
                continue
            if best is None or rp.gain > best.gain:
                best = rp
        if best is None or self.left() <= 0:
            return None
        self.emit("trial-start", skill=best.label, site=self.path, values={})
        try:
            record, hit = self.gate(best.source, self.original)
        except KlcError as e:
            self.refusals.append({"round": self.round, "skill": best.label, "site": self.path,
                                  "values": {}, "stage": "gate", "reason": str(e)})
            return None
        log = self.log_trial(cur, record, hit, best.label, self.path, "", {})
        self.visited.add(hashlib.sha256(best.source).hexdigest())
        self.emit("trial", skill=best.label, site=self.path, values={},
                  verdict=record.verdict, cached=hit, speedup=log.speedup, outcome=log.outcome)
        if log.outcome != "improved":
            return None
        from klc.frontend import parse_bytes
        from klc.pipeline import spec_of

        self.steps.append(Step(self.round, best.label, self.path, "", {}, "recipe",
                               log.median_ms, (log.speedup / cur.speedup) if log.speedup
                               else None, log.speedup, log.pct_of_sol, summarize(record),
                               step_diff(cur.source, best.source, self.path)))
        self.emit("accept", skill=best.label, site=self.path, kind="recipe",
                  speedup=log.speedup)
        unit = parse_bytes(best.source, self.path)
        return _Version(best.source, unit, spec_of(unit), log.speedup or cur.speedup,
                        log.median_ms, log.noise or 0.0, log.pct_of_sol)

    def loop(self, cur: _Version) -> tuple[_Version, str]:
        enabling = 0
        for _ in range(MAX_ROUNDS):
            if cur.pct_of_sol is not None and cur.pct_of_sol >= 100 * self.target_sol:
                return cur, (f"reached {cur.pct_of_sol:.0f}% of the speed-of-light floor "
                             f"(target {100 * self.target_sol:.0f}%)")
            if self.left() <= 0:
                return cur, f"the budget of {self.budget} gate trials is spent"
            self.round += 1
            self.emit("round", round=self.round)
            replayed = self.try_recipe(cur) if self.recipes else None
            if replayed is not None:
                cur = replayed
                enabling = 0
                continue
            ran, proposed = self.run_round(cur)
            if not proposed:
                return cur, ("no skill has anything left to try" if self.round > 1 or
                             self.ranked_sites(cur) else _none_applies(self.skipped))
            fresh = [c for c in ran if hashlib.sha256(c.source).hexdigest() not in
                     self.visited]
            better = [c for c in fresh if c.log.outcome == "improved"]
            if better:
                best = max(better, key=lambda c: c.log.speedup or 0.0)
                cur = self.accept(cur, best, "improvement")
                enabling = 0
                continue
            if enabling >= MAX_ENABLING:
                continue
            neutral = [(self.new_sites(cur, c), c) for c in fresh
                       if c.log.outcome == "neutral"]
            neutral = [(n, c) for n, c in neutral if n > 0]
            if neutral:
                _, best = max(neutral, key=lambda nc: (nc[0], nc[1].log.speedup or 0.0))
                cur = self.accept(cur, best, "enabling")
                enabling += 1
        return cur, f"stopped after {MAX_ROUNDS} rounds"


def optimize(source: bytes, path: str, *, skills: list[Rule] | None = None,
             filler: str | Filler = "search", budget: int = 30, target_sol: float = 0.9,
             arch: str | None = None, cache_dir: str | None = None,
             progress: ProgressFn | None = None, gpu: bool | None = None,
             gate_fn: Callable[..., GateRecord] | None = None, use_cache: bool = True,
             unverified: bool = False, min_gain: float = MIN_GAIN, model: str | None = None,
             seed: int = 0, include_slower: bool = False,
             recipes: list[Any] | None = None) -> OptimizeResult:
    """Optimize one kernel with skills under the gate (see the module doc).

    ``gpu`` forces the mode (None: ask the driver); ``gate_fn`` replaces ``klc.gate.gate``
    (same signature; tests script it); ``cache_dir`` is where gate records are kept
    (default ``$KLC_CACHE_DIR/gate``); ``use_cache=False`` runs every trial;
    ``include_slower`` tries the skills whose card's verdict is "slower" too (ranked last);
    ``recipes`` are the lineage recipes to replay (default: ``recipes.yaml`` of the skills'
    folders; ``[]`` for none)."""
    from klc.frontend import check_text, parse_bytes
    from klc.gate import gate, gpu_status
    from klc.gate.cache import CachedGate, GateCache, device_name
    from klc.pipeline import spec_of

    if budget < 1:
        raise KlcError(f"--budget {budget}: the budget must be at least 1 gate trial")
    if not 0 < target_sol <= 1:
        raise KlcError(f"--target-sol {target_sol}: give a fraction in (0, 1]")
    check_text(path, source)
    unit = parse_bytes(source, path)
    if unit.problems:
        raise KlcError(f"{unit.problems[0].describe(path)}: fix the syntax before optimizing")
    spec = spec_of(unit)  # a bad spec is the user's error, here, before any work
    if skills is None:
        from klc.library import default_skill_dirs, load_rule_paths

        skills = load_rule_paths(default_skill_dirs())
    skills = [r for r in skills if r.kind == "skill"] or list(skills)
    device_arch, no_gpu = gpu_status()
    target = resolve_arch(arch) if arch else (device_arch or resolve_arch(None))
    fill = make_filler(filler, model=model, arch=target, seed=seed,
                       include_slower=include_slower) if isinstance(filler, str) else filler
    has_gpu = gpu if gpu is not None else device_arch is not None
    result = OptimizeResult(path=path, original=source, source=source, changed=False,
                            verified=False, mode="gpu", budget=budget, target_sol=target_sol,
                            arch=target, filler=fill.name)
    gate_fn = gate_fn or gate
    if spec is None or not has_gpu:
        why = ("the file has no klc-spec block, so the gate does not know how to launch it "
               "(see docs/spec.md)" if spec is None else no_gpu or "no GPU")
        return _static(result, unit, spec, skills, fill, target, gate_fn, unverified, why,
                       progress, include_slower)

    cache = GateCache.open(cache_dir) if use_cache else None
    runner = CachedGate(cache, gate_fn, target, device_name())
    loop = _Loop(source, path, skills, fill, budget, target_sol, target, runner, progress,
                 min_gain, include_slower)
    if recipes is None:
        from klc.recipes import load as load_recipes

        recipes = load_recipes(sorted({Path(r.path).parent for r in skills if r.path}))
    loop.recipes = list(recipes)
    loop.emit("start", kernel=path)
    base_rec, hit = loop.gate(source, None)
    base = summarize(base_rec)
    result.baseline = base
    loop.trials.append(TrialLog(loop.used, 0, "(original)", path, "", {}, base_rec.verdict,
                                base_rec.reason, hit, base.get("median_ms"), 1.0,
                                base.get("noise"), base.get("pct_of_sol"),
                                base_rec.elapsed_s, "baseline"))
    if not base_rec.passed:
        raise KlcError(f"{path}: the original kernel does not pass its own gate, so nothing "
                       f"can be verified against it: {base_rec.reason}")
    loop.visited.add(hashlib.sha256(source).hexdigest())
    start = _Version(source, unit, spec, 1.0, base.get("median_ms"), base.get("noise") or 0.0,
                     base.get("pct_of_sol"))
    try:
        final, why = loop.loop(start)
    finally:
        result.trials, result.steps = loop.trials, loop.steps
        result.trials_used, result.cache_hits = loop.used, loop.hits
        result.static_refusals = loop.refusals + [
            {"skill": sk.split("@")[0], "site_key": sk, **c.to_json()}
            for sk, c in getattr(fill, "refusals", [])]
        result.usage = {"filler": fill.name, **fill.usage(), "gate_trials": loop.used,
                        "cache_hits": loop.hits}
        result.skipped = list(loop.skipped.values())
    result.stop_reason = why
    result.notes.extend(loop.notes)
    if getattr(fill, "without_optuna", False):
        from klc.extras import hint

        result.notes.append("the search filler sampled large hole domains at random: optuna "
                            f"is not installed ({hint('optuna')} for its TPE sampler)")
    result.notes.extend(_skipped_notes(loop.skipped, skills))
    if final.source == source:
        result.notes.append(f"nothing improved the kernel: {why}")
        loop.emit("done", changed=False)
        return result
    _reverify(result, loop, final, source)
    loop.emit("done", changed=result.changed)
    return result


def _reverify(result: OptimizeResult, loop: _Loop, final: _Version, original: bytes) -> None:
    """Gate the final kernel against the original once more, with fresh seeds."""
    seeds: list[int] = []
    while len(seeds) < 3:
        s = secrets.randbits(31)
        if s not in loop.seeds_seen and s not in seeds:
            seeds.append(s)
    loop.emit("reverify")
    record, _ = loop.gate(final.source, original, seeds=seeds)
    summary = summarize(record)
    result.final = summary
    result.reverify = record.to_json()
    if not record.passed:
        result.notes.append(f"the final kernel FAILED the independent re-verification "
                            f"(seeds {seeds}): {record.reason}; the original is kept")
        return
    speedup = summary.get("speedup")
    noise = max(loop.min_gain, summary.get("noise") or 0.0)
    if speedup is None or speedup <= 1 + noise:
        shown = f"{speedup:.3f}x" if speedup else "untimed"
        result.notes.append(f"the re-verification passed but measured {shown} the original "
                            f"(not beyond the noise, {100 * noise:.1f}%); the original is kept")
        return
    result.source = final.source
    result.changed = True
    result.verified = True


def _static(result: OptimizeResult, unit: Unit, spec: Any, skills: list[Rule], fill: Filler,
            arch: str, gate_fn: Callable[..., GateRecord], unverified: bool, why: str,
            progress: ProgressFn | None, include_slower: bool = False) -> OptimizeResult:
    """No GPU or no spec: sites, hole values, static checks and the gate's compile; nothing
    verified, nothing timed, nothing claimed."""
    result.mode = "static"
    result.notes.append(f"cannot verify or time: {why}. Only the static part ran (sites, hole "
                        "values, guards, NVRTC compile, registers/spills/shared memory): the "
                        "candidates below are compile-clean, not verified, and no speedup is "
                        "claimed")
    if progress:
        progress("start", {"used": 0, "budget": 0, "kernel": result.path})
    sites = candidate_sites(unit, skills, spec, include_slower=True)
    skipped: dict[str, dict[str, Any]] = {}
    if not include_slower:
        sites = skip_slower(sites, skipped)
    sites.sort(key=site_rank)
    result.skipped = list(skipped.values())
    result.notes.extend(_skipped_notes(skipped, skills))
    if not sites:
        result.stop_reason = _none_applies(skipped)
    for target in build_targets(sites, set()):
        site = target.site
        req = FillRequest(site.rule, site, unit, spec, history=[], budget=1)
        try:
            proposals = fill.propose(req, 1)
        except KlcError as e:
            result.notes.append(f"{target.where}: {site.rule.name}: {e}")
            continue
        if not proposals and getattr(fill, "last_reason", ""):
            result.notes.append(fill.last_reason)  # type: ignore[attr-defined]
        for values in proposals[:1]:
            check = check_target(unit, target, values, spec, arch)
            entry: dict[str, Any] = {"skill": site.rule.name, "site": target.where,
                                     "function": site.function_name, **check.to_json()}
            if not check.ok:
                result.static_refusals.append(entry)
                continue
            assert check.source is not None
            try:  # without a spec there is nothing to verify against: compile only
                record = gate_fn(check.source, result.path, arch=arch,
                                 reference=result.original if spec is not None else None,
                                 reference_path=result.path if spec is not None else None)
            except KlcError as e:
                result.static_refusals.append({**entry, "ok": False, "stage": "gate",
                                               "reason": str(e)})
                continue
            entry["gate"] = summarize(record)
            if record.verdict == "failed":
                entry["ok"] = False
                entry["reason"] = record.reason
                result.static_refusals.append(entry)
                continue
            entry["source_sha256"] = hashlib.sha256(check.source).hexdigest()
            result.static_candidates.append(entry)
            if unverified and not result.changed:
                result.source = check.source
                result.changed = True
    for sk, c in getattr(fill, "refusals", []):
        result.static_refusals.append({"skill": sk.split("@")[0], "site_key": sk,
                                       **c.to_json()})
    result.usage = {"filler": fill.name, **fill.usage(), "gate_trials": 0, "cache_hits": 0}
    if result.changed:
        first = result.static_candidates[0]
        result.notes.append(f"--unverified: wrote the first compile-clean candidate "
                            f"({first['skill']} at {first['site']}); it is NOT verified")
    if not result.stop_reason:
        result.stop_reason = (f"static only: {len(result.static_candidates)} compile-clean "
                              "candidate(s), none verified")
    if progress:
        progress("done", {"used": 0, "budget": 0, "changed": result.changed})
    return result


# --------------------------------------------------------------------------------------
# Reports


def _fmt(v: float | None, spec: str, suffix: str = "") -> str:
    return "-" if v is None else f"{v:{spec}}{suffix}"


def _values_text(values: dict[str, str]) -> str:
    return ", ".join(f"?{k}={v}" for k, v in values.items()) or "-"


def to_markdown(result: OptimizeResult) -> str:
    """The report as Markdown: outcome, steps in order, every trial, refusals, notes."""
    r = result
    lines = [f"# klc optimize: `{r.path}`", ""]
    if r.mode == "static":
        head = "static only (nothing verified or timed)"
    elif r.changed:
        head = (f"**improved, verified**: {_fmt(r.speedup, '.2f', 'x')} the original, "
                f"{_fmt(r.pct_of_sol, '.0f', '%')} of SOL")
    else:
        head = "**not changed**"
    device = (r.final or r.baseline or {}).get("device") or "none"
    lines += [f"- outcome: {head}", f"- stopped: {r.stop_reason}",
              f"- arch {r.arch}, device {device}, filler {r.filler}",
              f"- gate trials: {r.trials_used} of {r.budget} (+ {r.cache_hits} cache hits"
              + (", + 1 independent re-verification" if r.final else "") + ")",
              "- filler spend: " + ", ".join(f"{k} {v}" for k, v in r.usage.items()
                                               if k != "filler"), ""]
    if r.baseline:
        b = r.baseline
        lines += [f"Original: {_fmt(b.get('median_ms'), '.4f', ' ms')}, "
                  f"{_fmt(b.get('pct_of_sol'), '.0f', '%')} of SOL, noise "
                  f"{_fmt((b.get('noise') or 0) * 100, '.1f', '%')}", ""]
    if r.steps:
        lines += ["## Steps", "", "| # | skill | site | holes | kind | time ms | vs previous | "
                  "vs original | % SOL |", "|---|---|---|---|---|---|---|---|---|"]
        for i, s in enumerate(r.steps, 1):
            lines.append(f"| {i} | {s.skill} | {s.site} | {_values_text(s.values)} | {s.kind} "
                         f"| {_fmt(s.median_ms, '.4f')} | "
                         f"{_fmt(s.speedup_vs_previous, '.3f', 'x')} | "
                         f"{_fmt(s.speedup_vs_original, '.3f', 'x')} | "
                         f"{_fmt(s.pct_of_sol, '.0f', '%')} |")
        lines.append("")
    if r.final:
        f = r.final
        lines += ["## Independent re-verification", "",
                  f"{f['verdict']} (seeds {f.get('seeds', '-')}): "
                  f"{_fmt(f.get('median_ms'), '.4f', ' ms')}, "
                  f"{_fmt(f.get('speedup'), '.3f', 'x')} the original, "
                  f"{_fmt(f.get('pct_of_sol'), '.0f', '%')} of SOL", ""]
    if r.trials:
        lines += ["## Gate trials", "", "| n | round | skill | site | holes | verdict | speedup "
                  "| outcome | cached | reason |", "|---|---|---|---|---|---|---|---|---|---|"]
        for t in r.trials:
            reason = "" if t.verdict == "passed" else t.reason.replace("|", "\\|")[:160]
            lines.append(f"| {t.number} | {t.round} | {t.skill} | {t.site} | "
                         f"{_values_text(t.values)} | {t.verdict} | "
                         f"{_fmt(t.speedup, '.3f', 'x')} | {t.outcome} | "
                         f"{'yes' if t.cached else ''} | {reason} |")
        lines.append("")
    if r.static_candidates:
        lines += ["## Statically valid candidates (not verified)", "",
                  "| skill | site | holes | registers | smem B |", "|---|---|---|---|---|"]
        for c in r.static_candidates:
            res = c.get("resources", {})
            lines.append(f"| {c['skill']} | {c['site']} | {_values_text(c['values'])} | "
                         f"{res.get('registers', '-')} | {res.get('smem_per_block', '-')} |")
        lines.append("")
    if r.static_refusals:
        lines += ["## Refused before any GPU trial", ""]
        for c in r.static_refusals:
            where = c.get("site") or c.get("site_key", "")
            lines.append(f"- {c.get('skill', '')} {where} {_values_text(c['values'])}: "
                         f"{c['reason']}")
        lines.append("")
    if r.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in r.notes] + [""]
    return "\n".join(lines)
