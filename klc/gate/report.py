"""Human-readable output of a gate record (the CLI's text mode; ``--json`` prints the record)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from klc.errors import shown
from klc.gate import GateRecord

_STYLE = {"passed": "green", "failed": "red", "skipped": "yellow", "compiled": "cyan"}


def _fmt_bytes_per_s(v: float | None) -> str:
    return f"{v / 1e12:.2f} TB/s" if v else "?"


def _fmt_flops(v: float | None) -> str:
    return f"{v / 1e12:.1f} TFLOP/s" if v else "?"


def print_record(record: GateRecord, out: Console) -> None:
    """One headline with the verdict, then a line per stage with its numbers."""
    style = _STYLE.get(record.verdict, "white")
    head = f"[bold]{escape(shown(record.path))}[/bold]"
    if record.kernel:
        head += f"  kernel [cyan]{record.kernel}[/cyan]"
    out.print(head)
    out.print(f"  arch {record.arch}, device {record.device or 'none'}, "
              f"source sha256 {record.source_hash[:12]}"
              + (f", against {record.reference_path}" if record.reference_path else ""))
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("stage")
    table.add_column("result")
    table.add_column("details", overflow="fold")
    for name, st in record.stages.items():
        table.add_row(name, f"[{_STYLE.get(st.status, 'white')}]{st.status}[/]",
                      _details(name, st.reason, st.data))
    out.print(table)
    out.print(f"  verdict: [{style}][bold]{record.verdict}[/bold][/] "
              f"({record.elapsed_s:.1f} s)")
    if record.verdict == "failed":
        out.print(f"  {record.reason}", markup=False)


def _details(stage: str, reason: str, data: dict[str, Any]) -> str:
    from rich.markup import escape

    text = escape(reason)
    if stage == "compile" and data.get("removed_host_code"):
        text += escape(f"\nremoved host code: {', '.join(data['removed_host_code'])}")
    if stage == "compile" and data.get("cached"):
        text += " (cached)"
    if stage == "profile" and "figures" in data:
        f = data["figures"]
        text += escape(f"\ndevice ceilings: copy {_fmt_bytes_per_s(f.get('bandwidth_Bps'))}, "
                       f"fp32 {_fmt_flops(f['peaks_flops'].get('fp32'))}, "
                       f"fp16 {_fmt_flops(f['peaks_flops'].get('fp16'))}"
                       + (" (cached)" if f.get("cached") else ""))
    ref = data.get("series", {}).get("reference", {})
    if ref.get("cached"):
        text += escape(f"\nreference timed earlier in this series ({ref.get('runs')} runs), "
                       f"checked now: {ref.get('check_runs')} runs, drift "
                       f"{100 * ref.get('drift', 0):+.1f}%")
    elif "drift" in ref:
        text += escape(f"\nreference timed again: it drifted {100 * ref['drift']:+.1f}% from "
                       f"its earlier timing (tolerance {100 * ref['drift_tolerance']:.1f}%)")
    return text
