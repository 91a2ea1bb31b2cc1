"""Plain-data views of the model for ``--json`` output and reports."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import fields
from functools import cache
from operator import attrgetter
from typing import Any

from klc.cuda.model import Function, Unit


@cache
def _fields_of(cls: type) -> tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]]:
    names = tuple(f.name for f in fields(cls))
    get = attrgetter(*names)
    return names, (get if len(names) > 1 else lambda o: (get(o),))


def json_text(value: Any) -> str:
    """``value`` as indented JSON: the text of ``json.dumps(value, indent=2)``, written by
    orjson (in C: the standard library encodes an indented value in Python, a value at a
    time) where that gives the same text, else by ``json.dumps``. orjson writes non-ASCII
    text and DEL as they are, where ``json.dumps`` escapes them, and refuses what JSON has
    no value for (a key that is not text, an integer past 64 bits): those go to
    ``json.dumps``. Floats are the one other difference (``1e-07`` is written ``1e-7``);
    the records klc writes hold none. (orjson imported here: it imports ``uuid`` and
    ``platform``, which a text listing never needs.)"""
    import orjson

    try:
        data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value, indent=2)
    if not data.isascii() or b"\x7f" in data:
        return json.dumps(value, indent=2)
    return data.decode("ascii")


def plain(obj: Any) -> dict[str, Any]:
    """The fields of a model record (a dataclass whose fields hold text, numbers, None and
    tuples of them) as a dict, in their declared order: what ``dataclasses.asdict`` gives
    for such a record, without its recursive deep copy of every value."""
    names, get = _fields_of(type(obj))
    return dict(zip(names, get(obj), strict=True))


def _plain_all(records: Sequence[Any], extra: str = "",
               value: Callable[[Any], Any] | None = None) -> list[dict[str, Any]]:
    """``plain`` of each record of a list of one class (its fields looked up once), and where
    ``extra`` is given, the key ``extra`` added last with ``value(record)``."""
    if not records:
        return []
    names, get = _fields_of(type(records[0]))
    if not extra or value is None:
        return [dict(zip(names, get(r), strict=True)) for r in records]
    out = []
    for r in records:
        d = dict(zip(names, get(r), strict=True))
        d[extra] = value(r)
        out.append(d)
    return out


def function_summary(unit: Unit, f: Function) -> dict[str, Any]:
    position = unit.position
    line, col = position(f.start)

    def line_of(record: Any) -> int:
        return position(record.start)[0]

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
        "template_params": _plain_all(f.template_params),
        "params": _plain_all(f.params),
        "launch_bounds": plain(f.launch_bounds) if f.launch_bounds else None,
        "attributes": list(f.attributes),
        "shared": _plain_all(f.shared),
        "loops": _plain_all(f.loops, "line", line_of),
        "pragmas": [p.text for p in f.pragmas],
        "barriers": _plain_all(f.barriers, "line", line_of),
        "warp_intrinsics": sorted({c.name for c in f.warp_intrinsics}),
        "atomics": sorted({c.name for c in f.atomics}),
        "inline_asm": len(f.asm),
        "launches": _plain_all(f.launches),
        "analyzable": f.analyzable,
    }


def unit_summary(unit: Unit) -> dict[str, Any]:
    path = unit.path
    source = unit.source
    return {
        "path": path,
        "bytes": len(source),
        "functions": [function_summary(unit, f) for f in unit.functions
                      if f.kind != "host" or f.launches],
        "unanalyzable": _plain_all(unit.unanalyzable),
        "problems": _plain_all(unit.problems, "file", lambda p: path),
        "masked": _plain_all(unit.masks, "text", lambda m: unit.text(m.start, m.end)),
    }


def binding_json(unit: Unit, b: Any) -> dict[str, Any]:
    line, col = unit.position(b.start)
    return {"text": b.text, "start": b.start, "end": b.end, "line": line, "col": col}


def site_json(site: Any) -> dict[str, Any]:
    m = site.match
    line, col = m.unit.position(m.start)
    end_line, end_col = m.unit.position(m.end)
    return {
        "rule": site.rule.name,
        "rule_location": site.rule.location,
        "kind": site.rule.kind,
        "file": m.unit.path,
        "function": site.function_name,
        "start": m.start,
        "end": m.end,
        "line": line,
        "col": col,
        "end_line": end_line,
        "end_col": end_col,
        "applicable": site.ok,
        "why_not": site.reason or None,
        "refused_by": site.stage or None,
        "intent": site.rule.card.intent or site.rule.description,
        "verdict": site.rule.card.verdict or None,  # a learned card's; None: hand-written
        "holes": {n: _hole_json(h) for n, h in site.rule.holes.items()},
        # the values the site's own launch and constants give its geometry holes
        "site_holes": dict(getattr(site, "holes", {}) or {}),
        "bindings": {n: binding_json(m.unit, b) for n, b in m.bindings.items()},
    }


def _hole_json(h: Any) -> dict[str, Any]:
    return {"type": h.type, "values": list(h.values) if h.values else None, "lo": h.lo,
            "hi": h.hi, "default": h.default}


def outcome_json(outcome: Any) -> dict[str, Any]:
    unit = outcome.unit
    applied = []
    for rw in outcome.applied:
        m = rw.match
        start = outcome.start_of(rw)
        line, col = unit.position(start)
        applied.append({
            "rule": m.rule.name,
            "rule_location": m.rule.location,
            "function": m.function.name if m.function else "",
            "start": start, "end": start + m.end - m.start, "line": line, "col": col,
            # a site judged again after another's rewrite: its bindings and edits are
            # offsets in the code the earlier rounds left
            "later_round": m.unit is not unit,
            "holes": rw.holes,
            "bindings": {n: binding_json(m.unit, b) for n, b in m.bindings.items()},
            "edits": [{"start": e.start, "end": e.end, "what": e.what,
                       "replacement": e.text} for e in rw.edits],
            "launch": [{"dim": d, "axis": a, "op": o, "factor": k} for d, a, o, k in rw.launch],
        })
    return {
        "file": unit.path,
        "changed": outcome.changed,
        "applied": applied,
        "refused": [site_json(s) for s in outcome.refused],
        "skipped": [site_json(s) | {"why": why} for s, why in outcome.skipped],
        "notes": outcome.notes,
    }


def format_tree(unit: Unit) -> str:
    """An indented tree of named nodes with line:col and short text for leaves."""
    lines: list[str] = []
    cursor = unit.tree.walk()
    depth = 0
    while True:
        node = cursor.node
        if node is not None and (node.is_named or node.is_missing):
            line, col = unit.position(node.start_byte)
            field = f"{cursor.field_name}: " if cursor.field_name else ""
            label = f"MISSING {node.type}" if node.is_missing else node.type
            text = ""
            if node.child_count == 0 or node.type == "ERROR":
                text = " " + repr(unit.text(node)[:40])
            lines.append(f"{'  ' * depth}{field}{label} {line}:{col}{text}")
        if cursor.goto_first_child():
            depth += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return "\n".join(lines)
            depth -= 1


def format_pattern(pattern: Any) -> str:
    """How an anchor compiles: the node kinds it dispatches on and what each part binds."""
    out = [f"root type: {pattern.root_type}" + (" (a run of statements)"
                                                if pattern.is_sequence else ""),
           f"required words: {', '.join(w.decode() for w in pattern.words) or '-'}"]

    def walk(p: Any, depth: int) -> None:
        pad = "  " * depth
        if p.metavar is not None:
            what = "statement" if p.type == "statement" else "node"
            out.append(f"{pad}${p.metavar}  (any one {what})")
        elif p.dots is not None:  # statement dots: the statements skipped, and the clauses
            d = p.dots
            says = ["any"] if d.any else [f"not {w}({', '.join(a)})" for w, a in
                                          (("writes", d.writes), ("mentions", d.mentions)) if a]
            says += ["not stores"] if d.stores else []
            says = says or ["the default: nothing bound written"]
            out.append(f"{pad}...  (any run of statements; when {', '.join(says)})")
        elif p.seq is not None:
            out.append(f"{pad}$$${p.seq}  (a run of nodes)")
        elif p.text_pattern is not None:
            out.append(f"{pad}{p.type} ~ {p.text!r}  (binds {', '.join(p.text_vars)})")
        elif not p.children:
            out.append(f"{pad}{p.type} {p.text!r}")
        else:
            out.append(f"{pad}{p.type}")
            for c in p.children:
                walk(c, depth + 1)

    for e in pattern.elements:
        walk(e, 0)
    return "\n".join(out)


class ShortPaths:
    """Paths as a report shows them, so that its tables fit the page: relative to the
    folder that holds every file of the report (``root``, said once at the top), and the
    same in the reasons and notes that name them."""

    def __init__(self, paths: list[str]) -> None:
        import os

        full = [os.path.abspath(p) for p in paths if p]
        root = os.path.commonpath([os.path.dirname(p) for p in full]) if full else ""
        cwd = os.getcwd()
        if root == cwd or root.startswith(cwd + os.sep):
            root = cwd  # under the working folder: relative to it, as the files were named
        self.root = root

    def path(self, path: str) -> str:
        import os

        if not self.root or not path:
            return path
        rel = os.path.relpath(os.path.abspath(path), self.root)
        return path if rel.startswith(os.pardir) else rel

    def text(self, text: str) -> str:
        """``text`` with the root left out of every path it names under it."""
        import os

        if not self.root or self.root == os.sep:
            return text
        return text.replace(self.root + os.sep, "")

