"""The wiring: what the rule loader needs from the layers above it, gathered in one place.

The rule language names rewrite kinds (``klc.edits``: each kind's file lists its
``KINDS``), guard predicates (``klc.guards``: the families of ``klc.guards.table``, each
call checked against a predicate's signature) and anchors (``klc.match``: what the matcher
cannot compile is refused at load time). ``klc.rule`` imports none of them; this module does,
by plain imports, and ``load()`` hands them to the rule loader the first time it is called
(``klc.rule.registry.install``; cheap after). Importing it changes nothing.

Every entry point calls ``load()`` before it reads a rule: the command line (``klc.cli``),
the Python API (``klc.api``), the batch's worker processes, the test suite's set-up and the
bench scripts. A new rewrite kind is one file of ``klc/edits/`` and its module in
``EDIT_KIND_MODULES``; a new guard family, one file of ``klc/guards/`` and its module in
``klc.guards.table.FAMILIES``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from klc.edits import attribute, insert, launch, qualifier, replace, within
from klc.guards import FAMILIES, PREDICATES, check_call
from klc.match import compile_pattern
from klc.match.anchor import compiled_anchors, seed_anchors
from klc.rule import Rule
from klc.rule.registry import EditKind, Plugins, install
from klc.site_keys import facts_table, seed_facts

# the modules of klc.edits that define rewrite kinds, in the order docs/rules.md lists them
EDIT_KIND_MODULES = (replace, insert, qualifier, attribute, launch, within)
GUARD_FAMILIES = FAMILIES


def edit_kinds() -> dict[str, EditKind]:
    """Every rewrite kind by its grammar keyword; a ValueError when two modules define one
    keyword."""
    kinds: dict[str, EditKind] = {}
    for module in EDIT_KIND_MODULES:
        for kind in module.KINDS:
            if kind.name in kinds:
                raise ValueError(f"rewrite kind {kind.name!r} is defined twice")
            kinds[kind.name] = kind
    return kinds


def _compiled(rules: Sequence[Rule]) -> tuple[object, object]:
    """What is stored beside a compiled library: its anchors and what the listing reads of
    each rule (``klc.site_keys.rule_facts``)."""
    return compiled_anchors(rules), facts_table(list(rules))


def _seed(table: object) -> None:
    """Take ``_compiled``'s table back: a TypeError when it is not one (its facts are taken
    only once its anchors are)."""
    if not isinstance(table, tuple) or len(table) != 2:
        raise TypeError("not a compiled library's table")
    seed_anchors(table[0])  # (checked before anything is taken from the table's facts)
    seed_facts(table[1])


@cache
def load() -> Plugins:
    """The rule loader's vocabulary, installed on the first call."""
    plugins = Plugins(edit_kinds(), check_call, compile_pattern, frozenset(PREDICATES),
                      _compiled, _seed)
    install(plugins)
    return plugins
