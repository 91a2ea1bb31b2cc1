"""Optimizing forward: apply skills to a kernel, one verified step at a time.

    optimize(source, path, OptimizeOptions(budget=30))  ->  OptimizeResult

The package: ``options`` (``OptimizeOptions`` and the loop's limits), ``result`` (trials,
steps, the report's JSON), ``headroom`` (structural or cheap skills, their expected gain at a
measured % of SOL, the tiers of a round, a batch's budget shared by headroom), ``loop``
(fillers by name, the rounds) and its pieces: ``targets`` (the current version, what a
proposal rewrites, a gated candidate), ``judge`` (the noise judge), ``memory`` (the retry
memory: each target's trials), ``tiers`` (the tier ranking: the sites of a round, in
order and in tiers) and ``replay`` (the lineage recipes); ``run`` (``optimize()``,
``probe()``, the static mode, the re-verification) and ``report`` (Markdown).

The loop, with the gate as the only judge:

1. baseline: the original kernel through the gate against itself (determinism, its time, its
   % of the speed-of-light floor). It counts as one trial of the budget.
2. a round: every applicable site of every skill on the current version (``find_sites``;
   sites whose guards wait on a hole count as applicable until the hole is filled), ranked by
   headroom (:mod:`klc.optimize.headroom`): the skill's expected gain at the current
   version's % of SOL (its measured speedup, capped at 100 / %SOL), then the card's verdict
   (faster, then unmeasured or hand-written, then neutral), then its measured speedup, then
   source order; far from SOL (under 30%) the structural skills (launch, thread mapping,
   loops, shared memory) are tried before any cheap one, near it (75% and above) only cheap
   ones are, with no phase B. A skill whose
   verdict is "slower" is not tried (a note says where it applied) unless
   ``include_slower``. A
   skill with several sites and only local edits is first tried at all of them at once
   (``klc.pipeline.apply_rules``, as a lineage step applied its pass), one trial instead of
   one per site; when that candidate fails, its sites are tried one by one. Each target gets
   its filler's best proposal (phase A); then the most promising site with holes
   (verified, not slower) gets up to ``EXPLORE`` more of its hole values (phase B), because
   once a site is applied its holes cannot be tuned again. Every proposal goes through the
   static checks first (``klc.fill.trial.static_check``: guards with the values, rewrite,
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
   trials is spent, or no site (near the floor: no cheap skill) has anything left to try.
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
the statically valid candidates in rank order, and nothing is claimed. ``unverified``
then returns the first of them as ``source`` (``changed`` true, ``verified`` false): an
explicit request, for a user who will gate it elsewhere.
"""

from __future__ import annotations

from klc.optimize.loop import make_filler
from klc.optimize.options import (
    EXPLORE,
    MAX_ENABLING,
    MAX_ROUNDS,
    MIN_GAIN,
    OptimizeOptions,
    ProgressFn,
)
from klc.optimize.report import to_markdown
from klc.optimize.result import OptimizeResult, Step, TrialLog, step_diff, summarize
from klc.optimize.run import optimize, probe

__all__ = [
    "EXPLORE", "MAX_ENABLING", "MAX_ROUNDS", "MIN_GAIN", "OptimizeOptions", "OptimizeResult",
    "ProgressFn", "Step", "TrialLog", "make_filler", "optimize", "probe", "step_diff",
    "summarize", "to_markdown",
]
