"""The plots of reports (``klc optimize --report``, ``klc batch --report``), drawn with
matplotlib where ``klc-cuda[plot]`` is installed: median time (bars) and % of the speed-of-light
floor (a line, on its own axis) per accepted step of an optimization, or per file of a batch
(original and final time). Each function returns PNG bytes, or None and the sentence saying
why there is no plot (matplotlib missing, nothing timed)."""

from __future__ import annotations

import io
from typing import Any

from klc.extras import available, hint

NO_MATPLOTLIB = f"No plot: matplotlib is not installed ({hint('matplotlib')})."


def optimize_points(report: dict[str, Any]) -> list[tuple[str, float | None, float | None]]:
    """(label, median ms, % of SOL) of the original and each accepted step of an
    ``OptimizeResult.to_json()``."""
    base = report.get("baseline") or {}
    points = [("original", base.get("median_ms"), base.get("pct_of_sol"))]
    for i, s in enumerate(report.get("steps") or [], 1):
        points.append((f"{i} {s.get('skill', '')}", s.get("median_ms"), s.get("pct_of_sol")))
    return points


def batch_points(files: list[dict[str, Any]]
                 ) -> list[tuple[str, float, float, float | None]]:
    """(file, original ms, final ms, final % of SOL) of each timed file of a batch report
    (``FileResult.to_json()``): from ``--optimize`` (its baseline and re-verification) or
    ``--gate`` (the rewrite's time and its speedup over the original)."""
    out = []
    for f in files:
        opt, gate = f.get("optimize"), f.get("gate")
        if opt:
            base = opt.get("baseline") or {}
            final = opt.get("final") if opt.get("changed") else None
            t0 = base.get("median_ms")
            t1 = (final or {}).get("median_ms") or t0
            pct = (final or base).get("pct_of_sol")
            if t0:
                out.append((f["path"], float(t0), float(t1), pct))
        elif gate:
            prof = (gate.get("stages") or {}).get("profile") or {}
            t1, speedup = prof.get("median_ms"), prof.get("speedup")
            if prof.get("status") == "passed" and t1 and speedup:
                out.append((f["path"], float(t1) * float(speedup), float(t1),
                            (prof.get("sol") or {}).get("pct_of_sol")))
    return out


def _figure(labels: list[str], width: float) -> tuple[Any, Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6.0, width * len(labels) + 2.5), 4.4))
    return plt, fig, ax


def _legend(ax: Any, ax2: Any) -> None:
    """One legend for the bars and the % of SOL line of the twin axis."""
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax2.legend(h1 + h2, l1 + l2, loc="upper right", fontsize=8, framealpha=0.85)


def _png(plt: Any, fig: Any) -> bytes:
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def optimize_plot(report: dict[str, Any]) -> tuple[bytes | None, str]:
    """Time and % of SOL per accepted step (the original first)."""
    points = optimize_points(report)
    if not any(t for _, t, _ in points):
        return None, ("No plot: nothing was timed (no GPU, or the original failed its gate); "
                      "run on a GPU machine for times and % of SOL.")
    if not available("matplotlib"):
        return None, NO_MATPLOTLIB
    labels = [p[0] for p in points]
    plt, fig, ax = _figure(labels, 0.55)
    xs = list(range(len(points)))
    ax.bar(xs, [(t or 0) * 1e3 for _, t, _ in points], color="#4c72b0", label="median time")
    ax.set_ylabel("median time (us)")
    ax.set_xticks(xs, labels, rotation=40, ha="right", fontsize=8)
    ax2 = ax.twinx()
    ax2.plot(xs, [p if p is not None else float("nan") for _, _, p in points],
             color="#dd8452", marker="o", label="% of SOL")
    ax2.set_ylabel("% of speed of light")
    ax2.set_ylim(0, max(100.0, *[p or 0 for _, _, p in points]) * 1.05)
    _legend(ax, ax2)
    ax.set_title(f"klc optimize: {report.get('path', '')}", fontsize=10)
    return _png(plt, fig), ""


def batch_plot(files: list[dict[str, Any]]) -> tuple[bytes | None, str]:
    """Original and final time, and the final % of SOL, per timed file."""
    points = batch_points(files)
    if not points:
        return None, ("No plot: no file was timed (times come from --gate or --optimize on "
                      "a GPU machine).")
    if not available("matplotlib"):
        return None, NO_MATPLOTLIB
    labels = [p[0] for p in points]
    plt, fig, ax = _figure(labels, 0.8)
    xs = list(range(len(points)))
    w = 0.38
    ax.bar([x - w / 2 for x in xs], [p[1] * 1e3 for p in points], w, color="#8c8c8c",
           label="original")
    ax.bar([x + w / 2 for x in xs], [p[2] * 1e3 for p in points], w, color="#4c72b0",
           label="klc")
    ax.set_ylabel("median time (us)")
    ax.set_xticks(xs, labels, rotation=40, ha="right", fontsize=8)
    ax2 = ax.twinx()
    ax2.plot(xs, [p[3] if p[3] is not None else float("nan") for p in points],
             color="#dd8452", marker="o", linestyle="none", label="% of SOL (klc)")
    ax2.set_ylabel("% of speed of light (klc)")
    ax2.set_ylim(0, max(100.0, *[p[3] or 0 for p in points]) * 1.05)
    _legend(ax, ax2)
    ax.set_title("klc batch: time per file", fontsize=10)
    return _png(plt, fig), ""
