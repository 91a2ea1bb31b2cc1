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
    whatever the current folder holds: ``skills/``, learned from the walks of
    bench/lineages, and ``skills/experts/``, learned from the walks of third-party experts
    (bench/experts; the walks stay outside the repository, so ``klc learn`` over
    bench/lineages neither replaces nor removes them). Another library is named with
    ``--skills DIR``."""
    root = packaged("skills")
    experts = root / "experts"
    return [_shown(root)] + ([_shown(experts)] if experts.is_dir() else [])


def default_pass_dirs() -> list[str]:
    """The passes klc ships; another folder is named with ``--passes DIR``."""
    return [_shown(packaged("passes"))]


def default_libraries() -> list[Path]:
    """The default rule libraries, in the order a built-in name is looked up: the skills,
    then the passes."""
    return [Path(d) for d in (*default_skill_dirs(), *default_pass_dirs())]


def builtin_rule(name: str) -> tuple[str, list[str]] | None:
    """A built-in rule by name (``klc apply fast_math k.cu``): ``(rule file, [])`` for the
    name of a library's file (``fast_math``: every rule of ``fast_math.rule``), ``(rule file,
    [name])`` for the name of one rule in it (``add_restrict``); None when no default library
    has it. The skills are searched before the passes."""
    import re

    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return None
    libraries = [d for d in default_libraries() if d.is_dir()]
    for lib in libraries:
        if (lib / f"{name}.rule").is_file():
            return str(lib / f"{name}.rule"), []
    defined = re.compile(rf"^[ \t]*rule[ \t]+{re.escape(name)}\b", re.M)
    for lib in libraries:
        for path in sorted(lib.glob("*.rule")):
            if defined.search(path.read_text(encoding="utf-8", errors="replace")):
                return str(path), [name]
    return None
