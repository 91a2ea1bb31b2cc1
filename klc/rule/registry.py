"""What the rule loader needs to know from the layers above it, filled by those layers.

The rule language names things that other layers define: rewrite kinds (``klc.edits``, one
file per kind, each registering here when imported), guard predicates (``klc.guards``: a call
is checked against a predicate's signature) and anchors (``klc.match``: what the matcher
cannot compile is refused at load time). ``klc.rule`` never imports them; ``load_kinds``
imports the one package that fills this registry, ``klc.edits`` (which imports the matcher
and the guards in turn), by name, the way a plugin is loaded, before a rule is compiled.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from klc.rule.model import EDIT_CLASSES

if TYPE_CHECKING:
    from klc.rule.compile import CompileContext
    from klc.rule.guard import GuardCall
    from klc.rule.model import Edit
    from klc.rule.syntax import EditSpec


@dataclass(frozen=True)
class EditKind:
    """A rewrite kind as the loader sees it: its keyword, the function that checks a clause
    of it and builds the edit (None after reporting problems to the context), and the
    message when a rule holds more than one of it ('' when it may hold several)."""

    name: str
    compile: Callable[[EditSpec, CompileContext], Edit | None]
    once_per_rule: str = ""


EDIT_KINDS: dict[str, EditKind] = {}


@dataclass
class Hooks:
    """``check_call(call) -> [(line, col, message)]``: a predicate call's problems;
    ``check_anchor(code, where)``: raises KlcError when the matcher cannot use the anchor."""

    check_call: Callable[[GuardCall], list[tuple[int, int, str]]] | None = None
    check_anchor: Callable[[str, str], Any] | None = None


HOOKS = Hooks()


def register_edit(kind: str, compile_fn: Callable[[EditSpec, CompileContext], Edit | None],
                  cls: Callable[..., Edit], once_per_rule: str = "") -> None:
    """Called by each ``klc/edits/<kind>.py`` at import: the kind's compile and class."""
    EDIT_KINDS[kind] = EditKind(kind, compile_fn, once_per_rule)
    EDIT_CLASSES[kind] = cls


_PLUGINS = "klc.edits"


def load_kinds() -> None:
    """Make sure the layers that fill this registry are imported (once; cheap after)."""
    if not EDIT_KINDS:
        importlib.import_module(_PLUGINS)
