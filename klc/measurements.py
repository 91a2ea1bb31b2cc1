"""What was measured of the learned skills, kept beside them rather than inside their text.

A learned skill's card says what the rule means (intent, where, conditions, pitfalls) and
its ``verdict``. What the walks measured (one effect line per step: speedup, device,
workload, times) and where each measurement came from (the expert, the lineage step, the
sha256 of the files) is data: ``klc learn`` writes it to one file per skills folder,
``measurements.json``, and every reader asks this module for it (``measured(rule)``):
``klc list --format sarif|github`` (the finding's help), the Python API's ``Card.effect``,
the search filler's ranking and hole values, and the LLM filler's prompt.

A card that still carries ``effect:`` and ``provenance:`` lines (a skill file written by an
older klc, or a hand-written rule) loads as before: its own lines are its measurements.

The file is JSON: ``{"about": ..., "skills": {name: {"effect": [...], "provenance":
[...]}}}``, the skills in name order and the lines in the order measured, so that learning
the same walks again writes the same bytes.

This module is a leaf: it reads files through :mod:`klc.fsutil` and knows a rule only by its
``name``, ``path`` and ``card``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from klc.errors import KlcError

MEASUREMENTS_FILE = "measurements.json"
ABOUT = ("Measured effects and provenance of the learned skills in this folder, by skill. "
         "Written by `klc learn` (do not edit by hand); read by `klc list`, the Python API "
         "and `klc optimize`.")


@dataclass(frozen=True)
class Measured:
    """A skill's measurements: one effect line and one provenance line per step measured."""

    effect: tuple[str, ...] = ()
    provenance: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.effect or self.provenance)


_CACHE: dict[str, tuple[tuple[int, int], dict[str, Measured]]] = {}


def measurements_path(folder: str | Path) -> Path:
    return Path(folder) / MEASUREMENTS_FILE


def load_measurements(folder: str | Path) -> dict[str, Measured]:
    """The measurements of a skills folder by skill name; none when the folder has no
    ``measurements.json``. A file that is not the format is a KlcError naming it. Read once
    per process while the file is unchanged."""
    from klc.fsutil import read_input

    path = measurements_path(folder)
    try:
        st = os.stat(path)
    except OSError:
        return {}
    key, stamp = str(path.resolve()), (st.st_mtime_ns, st.st_size)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    data = read_input(path, "measurements file")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise KlcError(f"{path}: not valid JSON: {e}") from None
    found = _parse(doc, path)
    _CACHE[key] = (stamp, found)
    return found


def _parse(doc: Any, path: Path) -> dict[str, Measured]:
    skills = doc.get("skills") if isinstance(doc, dict) else None
    if not isinstance(skills, dict):
        raise KlcError(f"{path}: expected an object with \"skills\": {{name: {{\"effect\": "
                       "[...], \"provenance\": [...]}}}")
    found = {}
    for name, entry in skills.items():
        lines = {}
        for field in ("effect", "provenance"):
            value = entry.get(field, []) if isinstance(entry, dict) else None
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise KlcError(f"{path}: skill {name}: {field} must be a list of strings")
            lines[field] = tuple(value)
        found[name] = Measured(lines["effect"], lines["provenance"])
    return found


def measured(rule: Any) -> Measured:
    """A rule's measurements: its card's own ``effect``/``provenance`` lines where it has
    them (an older skill file, or a skill ``klc learn`` has just made), else the entry of
    ``measurements.json`` beside the rule's file."""
    card = rule.card
    if card.effect or card.provenance:
        return Measured(tuple(card.effect), tuple(card.provenance))
    if not getattr(rule, "path", None):
        return Measured()
    return load_measurements(Path(rule.path).parent).get(rule.name, Measured())


def measurements_text(entries: Mapping[str, Measured]) -> str:
    """The file's text: skills by name, their lines in order (deterministic)."""
    doc = {"about": ABOUT, "skills": {
        name: {"effect": list(m.effect), "provenance": list(m.provenance)}
        for name, m in sorted(entries.items())}}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def write_measurements(folder: str | Path, entries: Mapping[str, Measured]) -> Path:
    """Write (atomically) the folder's ``measurements.json``."""
    from klc.fsutil import atomic_write

    path = measurements_path(folder)
    atomic_write(path, measurements_text(entries).encode())
    return path
