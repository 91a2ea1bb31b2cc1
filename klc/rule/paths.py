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


def default_skill_dirs() -> list[str]:
    """The skills library: ./skills when run from a checkout, else the installed copy."""
    local = Path("skills")
    return [str(local if local.is_dir() else packaged("skills"))]


def default_pass_dirs() -> list[str]:
    local = Path("passes")
    return [str(local if local.is_dir() else packaged("passes"))]
