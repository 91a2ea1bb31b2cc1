"""The optimize loop (see :mod:`klc.optimize`): fillers by name, targets (a skill at all its
sites at once, or at one), the rounds of phase A and B, the history of trials per site,
and the choice of the step to keep.
"""


from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from klc.content import sha256
from klc.errors import KlcError
from klc.fill import FillRequest, Trial
from klc.fill.search import SearchFiller
from klc.fill.trial import (
    candidate_sites,
    groupable,
    is_slower,
    site_rank,
    slower_note,
    static_check,
    static_check_rule,
)
from klc.optimize import headroom
from klc.optimize.options import EXPLORE, MAX_ENABLING, MAX_ROUNDS, OptimizeOptions
from klc.optimize.result import Step, TrialLog, step_diff, summarize

if TYPE_CHECKING:
    from klc.cuda.model import Unit
    from klc.fill import Filler
    from klc.gate import GateRecord
    from klc.pipeline import Site
    from klc.rule import Rule


def make_filler(name: str, *, model: str | None = None, arch: str | None = None,
                seed: int = 0, include_slower: bool = False,
                llm_timeout_s: float | None = None, llm_retries: int | None = None) -> Filler:
    """A filler by name: ``search`` (default, embedded) or ``llm`` (imported lazily, with
    its request timeout and retry limit when given)."""
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
        kw: dict[str, Any] = {}
        if llm_timeout_s is not None:
            kw["timeout_s"] = llm_timeout_s
        if llm_retries is not None:
            kw["max_retries"] = llm_retries
        return LlmFiller(model=model, **kw)  # type: ignore[no-any-return]  # or KLC_LLM_MODEL
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
        return sha256(self.source)


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
class _RecipeTrial:
    """A lineage recipe's kernel that the gate found faster, before the round compares it."""

    label: str
    source: bytes
    record: GateRecord
    log: TrialLog


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
    return sha256(m.unit.source[m.start:m.end])[:16]


def _func_sha(site: Site) -> str:
    """The enclosing function's text (the whole file's, for a match outside any function)."""
    m = site.match
    f = m.function
    text = m.unit.source[f.start:f.end] if f is not None else m.unit.source
    return sha256(text)[:16]


class _Loop:
    def __init__(self, original: bytes, path: str, rules: list[Rule], filler: Filler,
                 arch: str, runner: Any, options: OptimizeOptions) -> None:
        self.original = original
        self.path = path
        self.rules = rules
        self.filler = filler
        self.budget = options.budget
        self.target_sol = options.target_sol
        self.arch = arch
        self.runner = runner
        self.progress = options.progress
        self.min_gain = options.min_gain
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
        self.include_slower = options.include_slower
        self.skipped: dict[str, dict[str, Any]] = {}  # slower skills not tried, by name
        self.recipes: list[Any] = []  # klc.recipes.Recipe: lineages replayed as one move
        self.recipe_tried: set[tuple[str, str]] = set()  # (family, version sha)
        self.by_headroom = options.rank_by_headroom
        # structural skills left out near SOL, by name (klc.optimize.headroom)
        self.left_out: dict[str, dict[str, Any]] = {}
        self.ranking: list[dict[str, Any]] = []  # per round: the headroom and the tiers

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
        if not self.by_headroom:
            return sorted(sites, key=site_rank)
        return sorted(sites, key=lambda s: headroom.site_key(s, cur.pct_of_sol))

    def tiered(self, cur: _Version, targets: list[_Target]) -> list[list[_Target]]:
        """The round's targets in the tiers of :func:`klc.optimize.headroom.tiers` (one
        tier, in rank order, without the headroom ranking); structural skills left out near
        SOL are recorded for the report."""
        if not self.by_headroom:
            return [targets]
        rules = list({t.rule.name: t.rule for t in targets}.values())
        groups, out = headroom.tiers(rules, cur.pct_of_sol)
        for r in out:
            entry = self.left_out.setdefault(r.name, {
                "skill": r.name, "location": r.location, "reach": headroom.reach(r).describe(),
                "pct_of_sol": cur.pct_of_sol, "sites": []})
            for t in targets:
                if t.rule.name == r.name and t.where not in entry["sites"]:
                    entry["sites"].append(t.where)
        self.ranking.append({
            "round": self.round, "pct_of_sol": cur.pct_of_sol,
            "regime": headroom.regime(cur.pct_of_sol),
            "tiers": [[{"skill": r.name, "reach": headroom.reach(r).describe(),
                        "expected_gain": round(headroom.expected_gain(r, cur.pct_of_sol), 3)}
                       for r in g] for g in groups],
            "left_out": [r.name for r in out]})
        tier_of = {r.name: i for i, g in enumerate(groups) for r in g}
        return [[t for t in targets if tier_of.get(t.rule.name) == i]
                for i in range(len(groups))]

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
        for tier in self.tiered(cur, self.targets(cur)):
            for target in tier:
                if self.left() <= 0:
                    break
                for values in self.propose(cur, target, 1):
                    proposed_any = True
                    c = self.try_values(cur, target, values)
                    if c is not None:
                        ran.append(c)
            if proposed_any:  # a later tier only when this one had nothing to propose
                break
        promising = [c for c in ran if c.target.rule.holes and c.log.outcome in
                     ("improved", "neutral")]
        near = self.by_headroom and headroom.regime(cur.pct_of_sol) == "near"
        if promising and self.left() > 0 and not near:  # near SOL: no phase B
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

        from klc.cuda.parse import parse_bytes
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
        log = cand.log
        return self.keep(cur, cand.source, cand.record, log, cand.site.rule.name, log.site,
                         log.function, cand.values, kind)

    def keep(self, cur: _Version, source: bytes, record: GateRecord, log: TrialLog,
             skill: str, site: str, function: str, values: dict[str, str], kind: str
             ) -> _Version:
        """Make ``source`` (a gated candidate, or a recipe's kernel) the current version:
        record its step, mark it visited, and say so."""
        from klc.cuda.parse import parse_bytes
        from klc.pipeline import spec_of

        unit = parse_bytes(source, self.path)
        step = Step(self.round, skill, site, function, values, kind, log.median_ms,
                    (log.speedup / cur.speedup) if log.speedup else None, log.speedup,
                    log.pct_of_sol, summarize(record), step_diff(cur.source, source, self.path))
        self.steps.append(step)
        self.visited.add(sha256(source))
        self.emit("accept", skill=skill, site=site, kind=kind,
                  speedup=step.speedup_vs_original)
        return _Version(source, unit, spec_of(unit), log.speedup or cur.speedup,
                        log.median_ms, log.noise or 0.0, log.pct_of_sol)

    def gate_recipe(self, cur: _Version) -> _RecipeTrial | None:
        """Replay the lineage recipes from the current version (klc/recipes.py) and gate the
        one whose walk measured the largest gain, once. The trial when it verified and is
        faster than the current version (not yet kept: :meth:`compare_recipe`), else None."""
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
            if rp is None or sha256(rp.source) in self.visited:
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
        self.visited.add(sha256(best.source))
        self.emit("trial", skill=best.label, site=self.path, values={},
                  verdict=record.verdict, cached=hit, speedup=log.speedup, outcome=log.outcome)
        if log.outcome != "improved":
            return None
        return _RecipeTrial(best.label, best.source, record, log)

    def compare_recipe(self, cur: _Version, rt: _RecipeTrial) -> _Version:
        """Keep the recipe's kernel, or a faster one of the round's own moves from the same
        version. A recipe is ranked by its lineage's gain, measured on another kernel: the
        softmax_block_rows recipe (block per row) can be the right move on a wide row and
        the wrong one where a warp per row fits (logsumexp_rows: 1.72x against 3.67x). So
        the round runs as it would have without the recipe (its structural tier first, far
        from SOL), and a move clearly faster than the recipe (beyond the noise) wins."""
        ran, _ = self.run_round(cur)
        rivals = [c for c in ran if c.log.outcome == "improved"
                  and sha256(c.source) not in self.visited
                  and (c.log.speedup or 0.0) > (rt.log.speedup or 0.0)
                  * (1 + self.threshold(cur, c.log))]
        if rivals:
            best = max(rivals, key=lambda c: c.log.speedup or 0.0)
            self.notes.append(
                f"round {self.round}: {best.site.rule.name} at {best.target.where} "
                f"({best.log.speedup:.2f}x) was kept over {rt.label} "
                f"({(rt.log.speedup or 0.0):.2f}x)")
            return self.accept(cur, best, "improvement")
        return self.keep(cur, rt.source, rt.record, rt.log, rt.label, self.path, "", {},
                         "recipe")

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
            replayed = self.gate_recipe(cur) if self.recipes else None
            if replayed is not None:
                cur = self.compare_recipe(cur, replayed)
                enabling = 0
                continue
            ran, proposed = self.run_round(cur)
            if not proposed:
                if self.by_headroom and headroom.regime(cur.pct_of_sol) == "near":
                    return cur, (f"near the speed-of-light floor ({cur.pct_of_sol:.0f}% of "
                                 "SOL): the cheap skills have nothing left to try, and "
                                 "structural ones are not tried this close"
                                 + (f" ({', '.join(self.left_out)} applied)"
                                    if self.left_out else ""))
                return cur, ("no skill has anything left to try" if self.round > 1 or
                             self.ranked_sites(cur) else _none_applies(self.skipped))
            fresh = [c for c in ran if sha256(c.source) not in
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
