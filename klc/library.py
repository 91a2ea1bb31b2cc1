"""Rule libraries: where the shipped passes and skills live, and picking rules by name."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from klc.errors import KlcError

if TYPE_CHECKING:
    from klc.rules import Rule


def _packaged(name: str) -> Path:
    """An installed data folder (``klc.grammar``, ``klc.passes``, ``klc.skills``); from a
    checkout that is on ``sys.path`` but not installed, the repository's own folder."""
    try:
        return Path(str(files(f"klc.{name}")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[1] / name


def default_skill_dirs() -> list[str]:
    """The skills library: ./skills when run from a checkout, else the installed copy."""
    local = Path("skills")
    return [str(local if local.is_dir() else _packaged("skills"))]


def default_pass_dirs() -> list[str]:
    local = Path("passes")
    return [str(local if local.is_dir() else _packaged("passes"))]


def load_rule_paths(paths: list[str]) -> list[Rule]:
    """Rules from files and folders (a folder: every ``*.rule`` in it, sorted by name)."""
    from klc.rules import load_rule_dir, load_rules

    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for p in paths:
        path = Path(p)
        if path.is_dir():
            loaded = load_rule_dir(path)
        elif path.exists():
            loaded = load_rules(path)
        else:
            raise KlcError(f"{p}: no such rule file or folder")
        for r in loaded:
            if r.name in seen:
                raise KlcError(f"{r.location}: rule {r.name} is also defined at {seen[r.name]}")
            seen[r.name] = r.location
            rules.append(r)
    return rules


def select_rules(rules: list[Rule], names: list[str] | None, path: str) -> list[Rule]:
    """The rules named with --rule (all when none named); an unknown name is an error."""
    if not names:
        return rules
    by_name = {r.name: r for r in rules}
    missing = [n for n in names if n not in by_name]
    if missing:
        known = ", ".join(sorted(by_name)) or "none"
        raise KlcError(f"{path}: no rule named {', '.join(missing)} (rules here: {known})")
    return [by_name[n] for n in names]
