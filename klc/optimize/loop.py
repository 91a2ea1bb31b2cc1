"""The optimize loop (see :mod:`klc.optimize`): fillers by name, the rounds of phase A and
B, and the choice of the step to keep. Its pieces are small classes of their own modules:
what it works on (``targets``: versions, targets, candidates), the noise judge (``judge``),
the retry memory (``memory``), the tier ranking (``tiers``) and the recipe replay
(``replay``).
"""


from __future__ import annotations

from typing import TYPE_CHECKING, Any

from klc.content import sha256
from klc.errors import KlcError
from klc.fill import FillRequest, Trial
from klc.fill.search import SearchFiller
from klc.fill.trial import candidate_sites
from klc.optimize.climb import climb_recipe, climb_site
from klc.optimize.judge import NoiseJudge
from klc.optimize.memory import RetryMemory
from klc.optimize.options import EXPLORE, MAX_ENABLING, MAX_ROUNDS, OptimizeOptions
from klc.optimize.replay import RecipeReplay, RecipeTrial
from klc.optimize.result import Step, TrialLog, step_diff, summarize
from klc.optimize.targets import Candidate, Target, Version, build_targets, check_target
from klc.optimize.tiers import TierRanking

if TYPE_CHECKING:
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


class _Loop:
    def __init__(self, original: bytes, path: str, rules: list[Rule], filler: Filler,
                 arch: str, runner: Any, options: OptimizeOptions,
                 recipes: list[Any] | None = None) -> None:
        self.original = original
        self.path = path
        self.rules = rules
        self.filler = filler
        self.budget = options.budget
        self.target_sol = options.target_sol
        self.arch = arch
        self.runner = runner
        self.progress = options.progress
        self.used = 0
        self.hits = 0
        self.round = 0
        self.trials: list[TrialLog] = []
        self.steps: list[Step] = []
        self.notes: list[str] = []
        self.refusals: list[dict[str, Any]] = []
        self.visited: set[str] = set()
        self.seeds_seen: set[int] = set()  # verify seeds of every trial (re-verify avoids them)
        self.judge = NoiseJudge(options.min_gain)
        self.memory = RetryMemory()
        self.ranking = TierRanking(rules, include_slower=options.include_slower,
                                   by_headroom=options.rank_by_headroom)
        self.replay = RecipeReplay(path, rules, recipes or ())

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

    def sites(self, cur: Version) -> list[Site]:
        return self.ranking.sites(cur.unit, cur.spec, cur.pct_of_sol)

    def remember(self, cur: Version, target: Target, trial: Trial, outcome: str) -> None:
        self.memory.remember(cur.sha, target, trial, outcome)

    # -- one candidate --------------------------------------------------------------

    def try_values(self, cur: Version, target: Target, values: dict[str, str],
                   ) -> Candidate | None:
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
        got = self.trial(cur, check.source, site.rule.name, where, site.function_name,
                         dict(check.values), values)
        if isinstance(got, KlcError):  # the gate refused the candidate as input: no trial
            self.remember(cur, target, Trial(dict(check.values), False, None, str(got)),
                          "failed")
            return None
        record, log = got
        ms = log.median_ms if record.passed else None
        self.remember(cur, target, Trial(dict(check.values), record.passed, ms,
                                         "" if record.passed else record.reason), log.outcome)
        return Candidate(target, dict(check.values), check.source, record, log)

    def trial(self, cur: Version, source: bytes, skill: str, where: str, function: str,
              values: dict[str, str], asked: dict[str, str]
              ) -> tuple[GateRecord, TrialLog] | KlcError:
        """Gate ``source`` against the original and log the trial (``asked``: the values
        as proposed, which the progress events show); the gate's refusal of the input (it
        costs no trial) is recorded and returned."""
        self.emit("trial-start", skill=skill, site=where, values=asked)
        try:
            record, hit = self.gate(source, self.original)
        except KlcError as e:
            self.refusals.append({"round": self.round, "skill": skill, "site": where,
                                  "values": asked, "stage": "gate", "reason": str(e)})
            return e
        log = self.log_trial(cur, record, hit, skill, where, function, values)
        self.emit("trial", skill=skill, site=where, values=asked, verdict=record.verdict,
                  cached=hit, speedup=log.speedup, outcome=log.outcome)
        return record, log

    def log_trial(self, cur: Version, record: GateRecord, hit: bool, skill: str, where: str,
                  function: str, values: dict[str, str]) -> TrialLog:
        """Record one gate trial: its log (judged against the current version) and the
        verify seeds it used (the re-verification avoids them)."""
        s = summarize(record)
        self.seeds_seen.update(s.get("seeds") or ())
        log = TrialLog(self.used, self.round, skill, where, function, values, record.verdict,
                       record.reason, hit, s.get("median_ms"), s.get("speedup"),
                       s.get("noise"), s.get("pct_of_sol"), record.elapsed_s)
        log.outcome = self.judge.judge(cur, log)
        log.seeds = s.get("seeds")
        self.trials.append(log)
        return log

    # -- rounds ---------------------------------------------------------------------

    def propose(self, cur: Version, target: Target, k: int) -> list[dict[str, str]]:
        """The filler's proposals: fresh assignments first; when it has none left, the
        retries (module doc: passed-but-not-faster on an earlier version of a function that
        has changed since)."""
        site = target.site
        got: list[dict[str, str]] = []
        for retry in (False, True):
            if retry and not self.memory.retryable(target, cur.sha):
                break
            req = FillRequest(site.rule, site, cur.unit, cur.spec,
                              history=self.memory.history(target, cur.sha, retry),
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

    def run_round(self, cur: Version) -> tuple[list[Candidate], bool]:
        """Phase A and B of one round (module doc). Returns the candidates that ran and
        whether any target had something to propose."""
        ran: list[Candidate] = []
        proposed_any = False
        targets = build_targets(self.sites(cur), self.memory.split)
        for tier in self.ranking.tiers(self.round, cur.pct_of_sol, targets):
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
        near = self.ranking.near(cur.pct_of_sol)
        if promising and self.left() > 0 and not near:  # near SOL: no phase B
            best = max(promising, key=lambda c: c.log.speedup or 0.0)
            # a coarsening that paid climbs first (klc/optimize/climb.py); the filler's
            # ranked values get the rest of phase B
            climbed = climb_site(self, cur, best) if best.log.outcome == "improved" else []
            ran.extend(climbed)
            proposed_any |= bool(climbed)
            more = min(EXPLORE - len(climbed), self.left())
            for values in (self.propose(cur, best.target, more) if more > 0 else []):
                if self.left() <= 0:
                    break
                proposed_any = True
                c = self.try_values(cur, best.target, values)
                if c is not None:
                    ran.append(c)
        return ran, proposed_any

    def new_sites(self, cur: Version, cand: Candidate) -> int:
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
        slower = self.ranking.include_slower
        before = Counter(s.rule.name for s in candidate_sites(cur.unit, self.rules, cur.spec,
                                                              include_slower=slower))
        after = Counter(s.rule.name for s in candidate_sites(unit, self.rules, spec,
                                                             include_slower=slower))
        applied = cand.site.rule.name
        return sum(max(0, n - before[r]) for r, n in after.items() if r != applied)

    def accept(self, cur: Version, cand: Candidate, kind: str) -> Version:
        log = cand.log
        return self.keep(cur, cand.source, cand.record, log, cand.site.rule.name, log.site,
                         log.function, cand.values, kind)

    def keep(self, cur: Version, source: bytes, record: GateRecord, log: TrialLog,
             skill: str, site: str, function: str, values: dict[str, str], kind: str
             ) -> Version:
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
        return Version(source, unit, spec_of(unit), log.speedup or cur.speedup,
                       log.median_ms, log.noise or 0.0, log.pct_of_sol)

    def gate_recipe(self, cur: Version) -> RecipeTrial | None:
        """Replay the lineage recipes from the current version (klc/recipes.py) and gate
        the replays ``RecipeReplay.choices`` names (the deepest, and the one whose walk
        measured the largest gain), each once. The faster trial that verified and is faster
        than the current version (not yet kept: :meth:`compare_recipe`), else None."""
        won: tuple[Any, RecipeTrial] | None = None
        tried: list[tuple[str, float]] = []
        for rp in self.replay.choices(cur, self.visited, self.notes):
            if self.left() <= 0:
                break
            got = self.trial(cur, rp.source, rp.label, self.path, "", {}, {})
            if isinstance(got, KlcError):
                continue
            record, log = got
            self.visited.add(sha256(rp.source))
            if log.outcome != "improved":
                continue
            tried.append((rp.label, log.speedup or 0.0))
            if won is None or (log.speedup or 0.0) > (won[1].log.speedup or 0.0):
                won = rp, RecipeTrial(rp.label, rp.source, record, log)
        if won is None:
            return None
        for label, speedup in tried:
            if label != won[0].label:
                self.notes.append(f"round {self.round}: two recipes gated: {won[0].label} "
                                  f"({won[1].log.speedup or 0.0:.2f}x) is faster than {label} "
                                  f"({speedup:.2f}x)")
        return climb_recipe(self, cur, won[0], won[1])

    def compare_recipe(self, cur: Version, rt: RecipeTrial) -> Version:
        """Keep the recipe's kernel, or a faster one of the round's own moves from the same
        version. A recipe is ranked by its lineage's gain, measured on another kernel: the
        softmax_block_rows recipe (block per row) can be the right move on a wide row and
        the wrong one where a warp per row fits (logsumexp_rows: 1.72x against 3.67x). So
        the round runs as it would have without the recipe (its structural tier first, far
        from SOL), and a move clearly faster than the recipe (beyond the noise) wins."""
        ran, _ = self.run_round(cur)
        best = self.replay.rival(cur, rt, ran, self.visited, self.judge)
        if best is not None:
            self.notes.append(
                f"round {self.round}: {best.site.rule.name} at {best.target.where} "
                f"({best.log.speedup:.2f}x) was kept over {rt.label} "
                f"({(rt.log.speedup or 0.0):.2f}x)")
            return self.accept(cur, best, "improvement")
        return self.keep(cur, rt.source, rt.record, rt.log, rt.label, self.path, "", {},
                         "recipe")

    def loop(self, cur: Version) -> tuple[Version, str]:
        enabling = 0
        for _ in range(MAX_ROUNDS):
            if cur.pct_of_sol is not None and cur.pct_of_sol >= 100 * self.target_sol:
                return cur, (f"reached {cur.pct_of_sol:.0f}% of the speed-of-light floor "
                             f"(target {100 * self.target_sol:.0f}%)")
            if self.left() <= 0:
                return cur, f"the budget of {self.budget} gate trials is spent"
            self.round += 1
            self.emit("round", round=self.round)
            replayed = self.gate_recipe(cur) if self.replay.recipes else None
            if replayed is not None:
                cur = self.compare_recipe(cur, replayed)
                enabling = 0
                continue
            ran, proposed = self.run_round(cur)
            if not proposed:
                if self.ranking.near(cur.pct_of_sol):
                    return cur, (f"near the speed-of-light floor ({cur.pct_of_sol:.0f}% of "
                                 "SOL): the cheap skills have nothing left to try, and "
                                 "structural ones are not tried this close"
                                 + (f" ({', '.join(self.ranking.left_out)} applied)"
                                    if self.ranking.left_out else ""))
                return cur, ("no skill has anything left to try" if self.round > 1 or
                             self.sites(cur) else self.ranking.none_applies())
            fresh = [c for c in ran if sha256(c.source) not in self.visited]
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
