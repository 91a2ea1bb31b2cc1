"""The optimize report as Markdown.
"""


from __future__ import annotations

from typing import TYPE_CHECKING

from klc.optimize.result import OptimizeResult

if TYPE_CHECKING:
    pass


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
    if r.ranking:
        lines += ["## Ranking by headroom", "", "| round | % SOL | regime | tried in this order "
                  "(expected gain) | left out |", "|---|---|---|---|---|"]
        for e in r.ranking:
            tiers = " ; then ".join(", ".join(f"{x['skill']} ({x['expected_gain']:.2f}x, "
                                              f"{x['reach']})" for x in tier)
                                    for tier in e["tiers"]) or "-"
            lines.append(f"| {e['round']} | {_fmt(e['pct_of_sol'], '.0f', '%')} | "
                         f"{e['regime']} | {tiers} | {', '.join(e['left_out']) or '-'} |")
        lines.append("")
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
