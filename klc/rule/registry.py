"""What the rule loader needs to know from the layers above it, handed over by ``klc.plugins``.

The rule language names things that other layers define: rewrite kinds (``klc.edits``, one
file per kind), guard predicates (``klc.guards``: a call is checked against a predicate's
signature) and anchors (``klc.match``: what the matcher cannot compile is refused at load
time). ``klc.rule`` never imports them. ``klc.plugins`` builds one ``Plugins`` from them, by
plain imports, and installs it here (``install``) the first time it is asked for it
(``klc.plugins.load()``: klc's command line, its API, its worker processes and the test
suite's set-up call it before they load a rule). Loading a rule before that is a KlcError
that says so, never a silent empty vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from klc.errors import KlcError

if TYPE_CHECKING:
    from klc.rule.guard import GuardCall
    from klc.rule.model import Edit, Rule

# a kind's compile: (klc.rule.syntax.EditSpec, klc.rule.compile.CompileContext) -> the edit, or
# None after reporting its problems to the context (typed loosely: both modules import this)
CompileEdit = Callable[[Any, Any], "Edit | None"]
# a predicate call's problems: [(line, col, message)]
CheckCall = Callable[["GuardCall"], list[tuple[int, int, str]]]
# raises KlcError when the matcher cannot use an anchor text (text, where)
CheckAnchor = Callable[[str, str], Any]
# the matcher's compiled anchors of some rules (picklable, stored beside them by
# klc.rule.cache), and its taking them back (a TypeError or ValueError when they are not)
CompileAnchors = Callable[[Sequence["Rule"]], Any]
SeedAnchors = Callable[[Any], None]


@dataclass(frozen=True)
class EditKind:
    """A rewrite kind as the loader sees it: its keyword, the function that checks a clause
    of it and builds the edit (None after reporting problems to the context), the edit class
    (``make_edit``), and the message when a rule holds more than one of it ('' when it may
    hold several)."""

    name: str
    compile: CompileEdit
    cls: Callable[..., Edit]
    once_per_rule: str = ""


@dataclass(frozen=True)
class Plugins:
    """The rewrite kinds by keyword, the guards' check of a predicate call, the matcher's
    check of an anchor, the predicates' names, and the matcher's compiled anchors as the
    rule library's cache stores and restores them."""

    edit_kinds: Mapping[str, EditKind] = field(default_factory=dict)
    check_call: CheckCall | None = None
    check_anchor: CheckAnchor | None = None
    predicates: frozenset[str] = frozenset()  # the predicates' names (a named guard's differ)
    compile_anchors: CompileAnchors | None = None
    seed_anchors: SeedAnchors | None = None

    def make_edit(self, kind: str, **fields: Any) -> Edit:
        """An edit of a kind from its fields (``make_edit("launch", dim="grid", axis="x",
        op="/", factor=2)``)."""
        if kind not in self.edit_kinds:
            raise KlcError(f"no rewrite kind {kind!r} (kinds: {', '.join(self.edit_kinds)})")
        return self.edit_kinds[kind].cls(**fields)


_INSTALLED: list[Plugins] = []


def install(plugins: Plugins) -> None:
    """Called by ``klc.plugins.load`` (the one caller): the vocabulary rules compile against."""
    _INSTALLED[:] = [plugins]


def installed() -> Plugins:
    """The installed vocabulary; a KlcError when nothing installed one."""
    if not _INSTALLED:
        raise KlcError("the rule loader has no rewrite kinds or guard predicates: "
                       "klc.plugins.load() installs them (klc's commands and API do)")
    return _INSTALLED[0]


def make_edit(kind: str, **fields: Any) -> Edit:
    """An edit of a kind from its fields: for tools and tests that build rules without rule
    text."""
    return installed().make_edit(kind, **fields)
