"""What an optimize run gives back: every gate trial (``TrialLog``), the steps kept
(``Step``), and the whole run (``OptimizeResult``, its JSON report).
"""


from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from klc.content import sha256, unified_diff

if TYPE_CHECKING:
    from klc.gate import GateRecord


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
    # per round: the % of SOL, its regime and the tiers of skills in the order tried
    ranking: list[dict[str, Any]] = field(default_factory=list)
    left_out: list[dict[str, Any]] = field(default_factory=list)  # structural, near SOL
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
            "ranking": self.ranking, "left_out_near_sol": self.left_out,
            "usage": self.usage, "notes": self.notes, "reverify": self.reverify,
            "source_sha256": sha256(self.source),
        }


def step_diff(before: bytes, after: bytes, path: str) -> str:
    """The unified diff of one accepted step (what a report shows of it)."""
    return unified_diff(before, after, path)


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
