"""Plain-data views of the model for ``--json`` output and reports."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from klc.frontend import Function, Unit


def function_summary(unit: Unit, f: Function) -> dict[str, Any]:
    line, col = unit.position(f.start)
    return {
        "name": f.name,
        "kind": f.kind,
        "line": line,
        "col": col,
        "start": f.start,
        "end": f.end,
        "specifiers": list(f.specifiers),
        "extern_c": f.extern_c,
        "return_type": f.return_type,
        "template_params": [asdict(t) for t in f.template_params],
        "params": [asdict(p) for p in f.params],
        "launch_bounds": asdict(f.launch_bounds) if f.launch_bounds else None,
        "attributes": list(f.attributes),
        "shared": [asdict(s) for s in f.shared],
        "loops": [asdict(lp) | {"line": unit.position(lp.start)[0]} for lp in f.loops],
        "pragmas": [p.text for p in f.pragmas],
        "barriers": [asdict(c) | {"line": unit.position(c.start)[0]} for c in f.barriers],
        "warp_intrinsics": sorted({c.name for c in f.warp_intrinsics}),
        "atomics": sorted({c.name for c in f.atomics}),
        "inline_asm": len(f.asm),
        "launches": [asdict(lc) for lc in f.launches],
        "analyzable": f.analyzable,
    }


def unit_summary(unit: Unit) -> dict[str, Any]:
    return {
        "path": unit.path,
        "bytes": len(unit.source),
        "functions": [function_summary(unit, f) for f in unit.functions
                      if f.kind != "host" or f.launches],
        "unanalyzable": [asdict(u) for u in unit.unanalyzable],
        "problems": [asdict(p) | {"file": unit.path} for p in unit.problems],
        "masked": [asdict(m) | {"text": unit.text(m.start, m.end)} for m in unit.masks],
    }
