"""Where the rule libraries and the grammar live: the shipped passes and skills, and the
rule language's grammar (installed data folders ``klc.grammar``, ``klc.passes``,
``klc.skills``; the repository's own folders in a checkout)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def packaged(name: str) -> Path:
    """An installed data folder (``klc.grammar``, ``klc.passes``, ``klc.skills``); from a
    checkout that is on ``sys.path`` but not installed, the repository's own folder."""
    try:
        return Path(str(files(f"klc.{name}")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / name


def _shown(path: Path) -> str:
    """A library's path as messages show it: relative to the current folder when it lies
    inside it (``skills`` in a checkout), else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def default_skill_dirs() -> list[str]:
    """The skills library klc ships (the checkout's ``skills/`` in an editable install),
    whatever the current folder holds: another library is named with ``--skills DIR``."""
    return [_shown(packaged("skills"))]


def default_pass_dirs() -> list[str]:
    """The passes klc ships; another folder is named with ``--passes DIR``."""
    return [_shown(packaged("passes"))]
