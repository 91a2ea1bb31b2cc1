"""Reports people read: ``klc optimize --report F`` and ``klc batch --report F``.

- ``F.json``: the data, as before.
- ``F.md``: the Markdown report, with the plot (time and % of SOL per accepted step, or per
  file for a batch: ``klc.plots``) written beside it as ``F.png`` and linked, where
  ``klc-cuda[plot]`` is installed; else a line says why there is no plot.
- ``F.html``: one self-contained page (the plot inlined as a PNG data URI, no script, no
  external resource) that a browser opens: the outcome, the steps (or files) in a table, the
  plot, and the unified diff of every accepted step (of every rewritten file, and of each
  step of an optimized one, for a batch), coloured by line.

Every file is written atomically.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from klc import __version__
from klc.report import ShortPaths

REPORT_SUFFIXES = (".json", ".md", ".html")

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:72em;color:#1b1b1b;line-height:1.4;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;max-width:100%}td,th{border:1px solid #ccc;
padding:.25em .6em;text-align:left;font-size:.92em;vertical-align:top;overflow-wrap:anywhere}
th{background:#f3f3f3}td.num{text-align:right;white-space:nowrap}td.why{min-width:16em}
pre.diff{background:#f8f8f8;border:1px solid #ddd;padding:.6em;overflow-x:auto;font-size:.85em}
pre.diff span{display:block;white-space:pre}.add{background:#e6ffec;color:#1a7f37}
.del{background:#ffebe9;color:#cf222e}.hunk{color:#8250df}.meta{color:#57606a}
.outcome{font-size:1.1em}.note{color:#57606a}img.plot{max-width:100%;border:1px solid #ddd}
details{margin:.6em 0}summary{cursor:pointer;font-weight:600}
"""


def _e(x: object) -> str:
    return html.escape("" if x is None else str(x))


def _fmt(v: Any, spec: str, unit: str = "") -> str:
    return "-" if v is None else f"{v:{spec}}{unit}"


def diff_html(diff: str) -> str:
    """A unified diff as ``<pre class="diff">``, one span per line (added, removed, hunk
    header, file header)."""
    spans = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            cls = "meta"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        elif line.startswith("@@"):
            cls = "hunk"
        else:
            cls = "ctx"
        spans.append(f'<span class="{cls}">{_e(line) or " "}</span>')
    return f'<pre class="diff">{"".join(spans)}</pre>'


def _page(title: str, body: list[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"generator\" content=\"klc {__version__}\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _plot_html(png: bytes | None, why: str, alt: str) -> str:
    if png is None:
        return f'<p class="note" id="no-plot">{_e(why)}</p>'
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="plot" id="plot" alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def _table(head: list[str], rows: list[list[str]], num: set[int] | None = None,
           table_id: str = "", wide: int | None = None) -> str:
    """An HTML table; ``num``: right-aligned columns; ``wide``: the column of long text
    (it takes the room left and wraps)."""
    num = num or set()
    ident = f' id="{table_id}"' if table_id else ""
    out = [f"<table{ident}><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head)
           + "</tr></thead><tbody>"]
    for r in rows:
        out.append("<tr>" + "".join(
            f'<td class="num">{c}</td>' if i in num else
            f'<td class="why">{c}</td>' if i == wide else f"<td>{c}</td>"
            for i, c in enumerate(r)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


# --------------------------------------------------------------------------------------
# klc optimize


def _outcome(r: dict[str, Any]) -> str:
    if r.get("mode") == "static":
        return "static only (nothing verified or timed)"
    if r.get("changed"):
        return (f"improved, verified: {_fmt(r.get('speedup'), '.2f', 'x')} the original, "
                f"{_fmt(r.get('pct_of_sol'), '.0f', '%')} of SOL")
    return "not changed"


def _original(r: dict[str, Any]) -> str:
    """The original kernel's measurement, or what was not measured and why (never a row of
    placeholders)."""
    base = r.get("baseline") or {}
    if base.get("median_ms") is not None:
        sol = base.get("pct_of_sol")
        return (f"original: {base['median_ms']:.4f} ms"
                + (f", {sol:.0f}% of SOL" if sol is not None else
                   " (% of SOL not known: the spec gives no bytes or flops)"))
    if r.get("mode") == "static":
        return ("not measured: the original's time and % of SOL, and every candidate's "
                "(no GPU here: verify and profile need one)")
    why = base.get("reason") or "its gate run did not time it"
    return f"not measured: the original's time and % of SOL ({_e(why)})"


def _steps_html(steps: list[dict[str, Any]], heading: str = "h2") -> list[str]:
    rows = []
    for i, s in enumerate(steps, 1):
        holes = " ".join(f"?{k}={v}" for k, v in (s.get("values") or {}).items())
        rows.append([str(i), _e(s.get("skill")), _e(s.get("site")), _e(holes),
                     _e(s.get("kind")), _fmt(s.get("median_ms"), ".4f"),
                     _fmt(s.get("speedup_vs_previous"), ".3f", "x"),
                     _fmt(s.get("speedup_vs_original"), ".3f", "x"),
                     _fmt(s.get("pct_of_sol"), ".0f", "%")])
    out = [_table(["#", "skill", "site", "holes", "kind", "time ms", "vs previous",
                   "vs original", "% SOL"], rows, {0, 5, 6, 7, 8}, "steps-table")]
    for i, s in enumerate(steps, 1):
        diff = s.get("diff") or ""
        out.append(f'<details open class="step" id="step-{i}"><summary>step {i}: '
                   f"{_e(s.get('skill'))} at {_e(s.get('site'))}</summary>"
                   + (diff_html(diff) if diff else
                      '<p class="note">(no diff recorded for this step)</p>') + "</details>")
    return out


def optimize_html(report: dict[str, Any], png: bytes | None, why: str) -> str:
    """The page of an ``OptimizeResult.to_json()``."""
    r = report
    base = r.get("baseline") or {}
    device = (r.get("final") or base).get("device") or "none"
    body = [f"<h1>klc optimize: <code>{_e(r.get('path'))}</code></h1>",
            f'<p class="outcome" id="outcome">{_e(_outcome(r))}</p>',
            "<ul>"
            f"<li>stopped: {_e(r.get('stop_reason'))}</li>"
            f"<li>arch {_e(r.get('arch'))}, device {_e(device)}, filler {_e(r.get('filler'))}"
            "</li>"
            f"<li>gate trials: {_e(r.get('trials_used'))} of {_e(r.get('budget'))} "
            f"(+ {_e(r.get('cache_hits'))} cache hits)</li>"
            f"<li>{_original(r)}</li></ul>",
            "<h2>Time and % of SOL per step</h2>",
            _plot_html(png, why, "median time and % of SOL per accepted step")]
    steps = r.get("steps") or []
    body.append('<h2 id="steps">Accepted steps</h2>')
    body += _steps_html(steps) if steps else ['<p class="note">No step was accepted.</p>']
    final = r.get("final")
    if final:
        body += ["<h2>Independent re-verification</h2>",
                 f"<p>{_e(final.get('verdict'))} (seeds {_e(final.get('seeds'))}): "
                 f"{_fmt(final.get('median_ms'), '.4f', ' ms')}, "
                 f"{_fmt(final.get('speedup'), '.3f', 'x')} the original</p>"]
    if r.get("static_candidates"):
        rows = [[_e(c.get("skill")), _e(c.get("site")),
                 _e(" ".join(f"?{k}={v}" for k, v in (c.get("values") or {}).items()))]
                for c in r["static_candidates"]]
        body += ["<h2>Statically valid candidates (not verified)</h2>",
                 _table(["skill", "site", "holes"], rows)]
    trials = r.get("trials") or []
    if trials:
        rows = [[str(t.get("number")), _e(t.get("skill")), _e(t.get("site")),
                 _e(" ".join(f"?{k}={v}" for k, v in (t.get("values") or {}).items())),
                 _e(t.get("verdict")), _fmt(t.get("speedup"), ".3f", "x"), _e(t.get("outcome")),
                 _e("" if t.get("verdict") == "passed" else (t.get("reason") or "")[:200])]
                for t in trials]
        body += ["<h2>Gate trials</h2>",
                 _table(["n", "skill", "site", "holes", "verdict", "speedup", "outcome",
                         "reason"], rows, {0, 5})]
    if r.get("notes"):
        body += ["<h2>Notes</h2>", "<ul>" + "".join(f"<li>{_e(n)}</li>" for n in r["notes"])
                 + "</ul>"]
    return _page(f"klc optimize: {r.get('path')}", body)


# --------------------------------------------------------------------------------------
# klc batch


def batch_html(summary: dict[str, Any], diffs: dict[str, str], png: bytes | None,
               why: str, labels: dict[str, str]) -> str:
    """The page of a ``BatchSummary.to_json()``; ``diffs``: each rewritten file's diff;
    ``labels``: the counts' labels."""
    s = summary
    files = s.get("files") or []
    short = ShortPaths([f["path"] for f in files])
    body = ["<h1>klc batch report</h1>",
            f'<p class="outcome" id="outcome">configuration <code>{_e(s.get("config"))}</code>, '
            f"executor {_e(s.get('executor'))}, {_e(s.get('jobs'))} job(s), "
            f"{_e(s.get('gpus'))} GPU(s), {_e(s.get('elapsed_s'))} s"
            + (" (interrupted)" if s.get("interrupted") else "") + "</p>",
            _table(["what", "count"], [[_e(labels.get(k, k)), str(v)]
                                       for k, v in (s.get("counts") or {}).items()], {1},
                   "counts"),
            "<h2>Time and % of SOL per file</h2>",
            _plot_html(png, why, "original and final time and % of SOL per file")]
    if short.root:
        body.insert(2, f'<p id="root">paths below are relative to <code>{_e(short.root)}'
                       "</code></p>")
    rows = []
    for f in files:
        rules = ", ".join(sorted({a["rule"] for a in f.get("applied") or []}))
        opt = f.get("optimize") or {}
        if opt.get("steps"):
            rules = ", ".join(st.get("skill", "") for st in opt["steps"])
        why_text = short.text(f.get("reason") or "; ".join(f.get("notes") or []))
        name = _e(short.path(f["path"]))
        anchor = (f'<a href="#file-{_slug(f["path"])}">{name}</a>'
                  if _changed(f, diffs) else name)
        checks = ", ".join(f.get("checks") or []) if f.get("status") == "rewritten" else ""
        rows.append([anchor, _e(f.get("status")), _e(checks or "-"), _e(rules),
                     str(sum((f.get("refused_by") or {}).values())), _e(why_text)])
    body += ['<h2 id="files">Files</h2>',
             _table(["file", "status", "checks", "rules applied", "refused", "why"], rows, {4},
                    "files-table", wide=5)]
    shown = [f for f in files if _changed(f, diffs)]
    body.append('<h2 id="diffs">Changes</h2>')
    if not shown:
        body.append('<p class="note">No file was rewritten.</p>')
    for f in shown:
        body.append(f'<section class="file" id="file-{_slug(f["path"])}"><h3>'
                    f"<code>{_e(short.path(f['path']))}</code>: {_e(f.get('status'))}</h3>")
        steps = (f.get("optimize") or {}).get("steps") or []
        if steps:
            body += _steps_html(steps)
        elif f["path"] in diffs:
            body.append(diff_html(diffs[f["path"]]))
        else:  # only a result read back from the journal has none
            body.append('<p class="note">No diff: this result was taken from the journal '
                        "(--resume), which keeps no diffs.</p>")
        body.append("</section>")
    if s.get("notes"):
        body += ["<h2>Notes</h2>", "<ul>" + "".join(f"<li>{_e(short.text(n))}</li>"
                                                    for n in s["notes"]) + "</ul>"]
    return _page("klc batch report", body)


def _changed(f: dict[str, Any], diffs: dict[str, str]) -> bool:
    return (f["path"] in diffs or f.get("status") == "rewritten"
            or bool((f.get("optimize") or {}).get("steps")))


def _slug(path: str) -> str:
    import hashlib

    return hashlib.sha256(path.encode()).hexdigest()[:12]


# --------------------------------------------------------------------------------------
# Writing


def check_report_path(path: str) -> None:
    """Refuse an unusable ``--report`` path before any work is done."""
    from klc.errors import KlcError

    p = Path(path)
    if p.suffix.lower() not in REPORT_SUFFIXES:
        raise KlcError(f"--report {path}: give a .json, .md or .html file")
    if p.is_dir():
        raise KlcError(f"--report {path}: is a directory")
    if not p.parent.is_dir():
        raise KlcError(f"--report {path}: folder {p.parent} does not exist")


def _with_plot(path: Path, markdown: str, png: bytes | None, why: str) -> str:
    """Write the plot beside a Markdown report (``F.png``) and link it, or say why not."""
    from klc.fsutil import atomic_write

    if png is None:
        return markdown.rstrip("\n") + f"\n\n{why}\n"
    image = path.with_suffix(".png")
    atomic_write(str(image), png)
    return (markdown.rstrip("\n")
            + f"\n\n## Time and % of SOL\n\n![time and % of SOL]({image.name})\n")


def write_optimize_report(path: str, result: Any) -> list[str]:
    """Write ``klc optimize``'s report (``.json``, ``.md`` or ``.html``); the files
    written."""
    import json

    from klc.fsutil import atomic_write
    from klc.optimize import to_markdown
    from klc.plots import optimize_plot

    p = Path(path)
    data = result.to_json()
    suffix = p.suffix.lower()
    if suffix == ".json":
        atomic_write(path, json.dumps(data, indent=2).encode())
        return [path]
    png, why = optimize_plot(data)
    if suffix == ".md":
        atomic_write(path, _with_plot(p, to_markdown(result), png, why).encode())
        return [path] + ([str(p.with_suffix(".png"))] if png else [])
    atomic_write(path, optimize_html(data, png, why).encode())
    return [path]


def write_batch_report(path: str, summary: Any) -> list[str]:
    """Write ``klc batch``'s report (``.json``, ``.md`` or ``.html``); the files written."""
    import json

    from klc.batch import SUMMARY_LABELS
    from klc.fsutil import atomic_write
    from klc.plots import batch_plot

    p = Path(path)
    data = summary.to_json()
    suffix = p.suffix.lower()
    if suffix == ".json":
        atomic_write(path, (json.dumps(data, indent=2) + "\n").encode())
        return [path]
    png, why = batch_plot(data["files"])
    if suffix == ".md":
        atomic_write(path, _with_plot(p, summary.to_markdown(), png, why).encode())
        return [path] + ([str(p.with_suffix(".png"))] if png else [])
    diffs = {r.path: r.diff for r in summary.results if getattr(r, "diff", "")}
    atomic_write(path, batch_html(data, diffs, png, why, SUMMARY_LABELS).encode())
    return [path]
