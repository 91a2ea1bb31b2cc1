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

if TYPE_CHECKING:
    from klc.rule.guard import GuardCall
    from klc.rule.model import Edit

# a kind's compile: (klc.rule.syntax.EditSpec, klc.rule.compile.CompileContext) -> the edit, or
# None after reporting its problems to the context (typed loosely: both modules import this)
CompileEdit = Callable[[Any, Any], "Edit | None"]


@dataclass(frozen=True)
class EditKind:
    """A rewrite kind as the loader sees it: its keyword, the function that checks a clause
    of it and builds the edit (None after reporting problems to the context), and the
    message when a rule holds more than one of it ('' when it may hold several)."""

    name: str
    compile: CompileEdit
    once_per_rule: str = ""


EDIT_KINDS: dict[str, EditKind] = {}
# kind -> the edit class that builds it from keyword fields (``make_edit``)
EDIT_CLASSES: dict[str, Callable[..., Edit]] = {}


@dataclass
class Hooks:
    """``check_call(call) -> [(line, col, message)]``: a predicate call's problems;
    ``check_anchor(code, where)``: raises KlcError when the matcher cannot use the anchor."""

    check_call: Callable[[GuardCall], list[tuple[int, int, str]]] | None = None
    check_anchor: Callable[[str, str], Any] | None = None


HOOKS = Hooks()


def register_edit(kind: str, compile_fn: CompileEdit, cls: Callable[..., Edit],
                  once_per_rule: str = "") -> None:
    """Called by each ``klc/edits/<kind>.py`` at import: the kind's compile and class."""
    EDIT_KINDS[kind] = EditKind(kind, compile_fn, once_per_rule)
    EDIT_CLASSES[kind] = cls


_PLUGINS = "klc.edits"


def load_kinds() -> None:
    """Make sure the layers that fill this registry are imported (once; cheap after)."""
    if not EDIT_KINDS:
        importlib.import_module(_PLUGINS)


def make_edit(kind: str, **fields: Any) -> Edit:
    """An edit of a kind from its fields, ``make_edit("launch", dim="grid", axis="x", op="/",
    factor=2)``: for tools and tests that build rules without rule text."""
    load_kinds()
    return EDIT_CLASSES[kind](**fields)
