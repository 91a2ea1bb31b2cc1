"""Spending the budget where the headroom is: what a skill changes (``reach``), what it may
gain on a kernel at a measured % of the speed-of-light floor (``expected_gain``), the order
in which the optimizer tries skills (``rank_key``, ``tiers``) and how ``klc batch
--optimize`` shares one budget between files (``split_budget``).

Everything here is a pure function of the rule, the measured headroom and the skill's
measurements (``klc.measurements.measured``): no GPU, no gate.

**Structural or cheap** (``klc.rule.reach``, read from the rule alone: ``klc list`` orders
its listing by it too). A skill is *structural* when its rewrite changes how the work maps
to threads, the iteration space, the memory layout or the launch; everything else is
*cheap* (qualifiers, attributes, pragmas, a faster intrinsic, a wider access at the same
place). It is read from the rule itself, never from its name, by comparing the code each
edit writes (``Edit.templates()``) with the code the rule matched (its anchor; for a
``rewrite within`` block, the sub-rule's anchor and replacement, recursively):

- ``launch``: an edit changes the launch geometry (``Edit.changes_launch``: ``rewrite launch
  grid.x *= 32``);
- ``threads``: the thread-geometry and cross-thread words differ (``threadIdx``,
  ``blockIdx``, ``blockDim``, ``gridDim``, ``warpSize``, warp shuffles and votes,
  ``__syncthreads``/``__syncwarp``, atomics): work is handed out or combined differently;
- ``loops``: the loop headers differ (``for``/``while`` added, removed, or with another
  start, bound or step): the iteration space changed;
- ``shared memory``: the ``__shared__`` declarations differ (a tile added, removed, padded):
  the memory layout changed.

An edit that swaps the anchor (``Edit.leads``: ``replace``) is compared with the anchor; code
inserted or removed beside it (``insert_body_start``, ``remove_statement``) counts in full.
An edit that writes no code (a qualifier, an attribute) changes none of these.

**Expected gain.** A skill's measured speedup (the best of its effect lines, as the search
filler reads them) when its card's verdict is ``faster`` or it has no verdict;
``neutral`` counts as 1.0x (never beyond the noise, whatever its lines say), ``slower`` at
most 1.0x, no measurement 1.0x. It is capped by the headroom: a kernel at ``p``% of SOL
cannot get faster than ``100 / p`` (a 9x skill on a kernel at 60% is worth at most 1.67x).

**Regimes.** By the current version's % of SOL (unknown: ``mid``):

- ``far`` (below ``FAR_SOL``, 30%): it needs a structural change, not a qualifier. The
  structural skills are tried first (by expected gain); the cheap ones only in a round where
  no structural skill has anything left to propose;
- ``mid``: every skill, by expected gain (then verdict, speedup, source order);
- ``near`` (at or above ``NEAR_SOL``, 75%): only cheap skills are worth a trial: structural
  ones are not tried (a note says which applied), phase B (more hole values for one site)
  is skipped, and the loop stops once the cheap skills have nothing left to propose.

**Budget across files** (``split_budget``): each file's weight is the log of the speedup
that would take it to the target (``log(target * 100 / p)``), the share of the geomean a
file can still contribute: a file at 3% of SOL weighs 3.4, one at 30% 1.1, one at 80% 0.12,
one at or above the target 0. A file whose headroom is unknown (no GPU, no spec, its probe
failed) weighs the mean of the known ones (1 when none is known). Shares are whole trials by
largest remainder, at least one for every file with a positive weight while the budget lasts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from klc.rule.reach import Reach, reach, structural  # noqa: F401 (headroom.reach, as before)

if TYPE_CHECKING:
    from klc.pipeline import Site
    from klc.rule import Rule

FAR_SOL = 30.0  # below this % of SOL a kernel needs a structural change
NEAR_SOL = 75.0  # at or above it only cheap skills are worth a trial
REGIMES = ("far", "mid", "near")

def regime(pct_of_sol: float | None) -> str:
    """``far``, ``mid`` or ``near`` (module doc); ``mid`` when the % of SOL is unknown."""
    if pct_of_sol is None or pct_of_sol <= 0:
        return "mid"
    if pct_of_sol < FAR_SOL:
        return "far"
    return "near" if pct_of_sol >= NEAR_SOL else "mid"


def measured_speedup(rule: Rule) -> float | None:
    """The best speedup the skill's measured effects report (``1.31x``), or None."""
    from klc.fill.card import card_speedup

    return card_speedup(rule)


def expected_gain(rule: Rule, pct_of_sol: float | None) -> float:
    """What a trial of the skill may gain on a kernel at ``pct_of_sol`` (module doc): its
    measured speedup by its verdict, capped by the headroom ``100 / pct_of_sol``."""
    best = measured_speedup(rule)
    verdict = rule.card.verdict
    if verdict == "neutral":
        gain = 1.0
    elif verdict == "slower":
        gain = min(best or 1.0, 1.0)
    else:
        gain = best if best is not None else 1.0
    if pct_of_sol is not None and pct_of_sol > 0:
        gain = min(gain, 100.0 / pct_of_sol)
    return gain


def rank_key(rule: Rule, pct_of_sol: float | None) -> tuple[float, int, float]:
    """The order of skills at one headroom: expected gain (best first), then the card's
    verdict (faster, unmeasured, neutral, slower), then the measured speedup uncapped."""
    from klc.fill.trial import VERDICT_RANK

    return (-expected_gain(rule, pct_of_sol), VERDICT_RANK.get(rule.card.verdict, 1),
            -(measured_speedup(rule) or 1.0))


def site_key(site: Site, pct_of_sol: float | None) -> tuple[Any, ...]:
    """The sort key of a site: its skill's ``rank_key``, then the skill's name (the tie-break
    of :func:`tiers`, so that sites are tried in the order the ranking reports), then source
    order."""
    return (*rank_key(site.rule, pct_of_sol), site.rule.name, site.match.start)


def tiers(rules: Sequence[Rule], pct_of_sol: float | None
          ) -> tuple[list[list[Rule]], list[Rule]]:
    """The rules in the tiers a round tries in turn (a later tier only when no rule of the
    earlier ones had anything to propose), each tier by ``rank_key``; and the rules left out
    at this headroom (structural ones near SOL)."""
    ranked = sorted(rules, key=lambda r: (*rank_key(r, pct_of_sol), r.name))
    where = regime(pct_of_sol)
    if where == "far":
        first = [r for r in ranked if structural(r)]
        rest = [r for r in ranked if not structural(r)]
        return [t for t in (first, rest) if t], []
    if where == "near":
        return [[r for r in ranked if not structural(r)]], [r for r in ranked if structural(r)]
    return [ranked], []


def headroom_weight(pct_of_sol: float | None, target_sol: float = 0.9) -> float | None:
    """A file's claim on a shared budget: the log of the speedup that takes it to the target
    (0 at or above it); None when its % of SOL is unknown."""
    if pct_of_sol is None or pct_of_sol <= 0 or not math.isfinite(pct_of_sol):
        return None
    return max(0.0, math.log(100.0 * target_sol / pct_of_sol))


def split_budget(total: int, pct_of_sol: Mapping[str, float | None],
                 target_sol: float = 0.9) -> dict[str, int]:
    """``total`` gate trials shared between files by headroom (module doc): file -> trials.
    Deterministic: ties go to the files in name order."""
    if total < 0:
        raise ValueError(f"a budget cannot be negative ({total})")
    weights = {f: headroom_weight(p, target_sol) for f, p in pct_of_sol.items()}
    known = [w for w in weights.values() if w is not None]
    fill = (sum(known) / len(known)) if known and sum(known) > 0 else 1.0
    w = {f: (fill if v is None else v) for f, v in weights.items()}
    names = sorted(w)
    share = dict.fromkeys(names, 0)
    live = [f for f in names if w[f] > 0]
    if not live or total == 0:
        return share
    # at least one trial for each file with headroom, most headroom first, while it lasts
    for f in sorted(live, key=lambda f: (-w[f], f))[:total]:
        share[f] = 1
    left = total - sum(share.values())
    weight = sum(w[f] for f in live)
    exact = {f: left * w[f] / weight for f in live}
    for f in live:
        share[f] += int(exact[f])
    rest = total - sum(share.values())
    for f in sorted(live, key=lambda f: (-(exact[f] - int(exact[f])), -w[f], f))[:rest]:
        share[f] += 1
    return share
