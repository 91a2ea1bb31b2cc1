"""Where a rule's rewrite writes its metavariables, measured against the statement runs of its
anchor (``$$$X``, and the dots' ``$$$__dots<i>``).

A run written back by a rewrite keeps its declarations: ``int n = B * T;`` skipped by a
``...`` still declares ``n`` for the code after it. A metavariable whose code reads such a
name (``$ROWS`` bound to ``n``) stays correct where the rewrite writes it in the scope of the
run's own copy (after it, in its block, or nested in a later statement there): the
declaration precedes the use and the run's statements, written back byte for byte, leave
the value the use reads as it was. Written anywhere else (above the run, after its block, by
an edit that writes outside the matched code, by a template that drops the run) the name is
undeclared there or names something else. ``klc.match.dots.scope_refusal`` reads the sets
this module derives, at each match.

Derived from the templates' syntax (tree-sitter, with the metavariables, runs and holes read
as identifiers), once per rule: nothing here reads code or judges a match."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from tree_sitter import Node

from klc.rule.code import code_refs
from klc.rule.dots import as_runs
from klc.rule.fresh import WORDS, parse_as_words, walk

if TYPE_CHECKING:
    from klc.rule.model import Rule

_BLOCKS = frozenset({"compound_statement", "translation_unit"})


@dataclass(frozen=True)
class RunScopes:
    """For each statement run of the anchor: the metavariables some edit of the rule writes
    outside the scope of the run's copy (``outside``); and for each ``rewrite within $X``
    target, the rule's metavariables its sub-rules write into that code (``carried``: they
    land where ``$X``'s code lands)."""

    outside: dict[str, frozenset[str]]
    carried: dict[str, frozenset[str]]


def anchor_runs(rule: Rule) -> frozenset[str]:
    """The runs the anchor's own text binds: ``$$$X`` by name, the i-th statement dots as
    ``__dots<i>`` (a ``within`` block's rule also knows its outer rule's runs, which its
    own rewrite does not write back)."""
    return frozenset(r.name for a in (rule.anchors or (rule.anchor,))
                     for r in code_refs(as_runs(a)) if r.kind == "sequence")


@lru_cache(maxsize=1024)
def run_scopes(rule: Rule) -> RunScopes:
    runs = anchor_runs(rule)
    names = frozenset(rule.metavars) | runs
    outside: dict[str, set[str]] = {r: set() for r in runs}
    carried: dict[str, set[str]] = {}
    for e in rule.edits:
        target = e.written_at()
        if target is not None:  # its sub-rules write inside the target's code
            carried.setdefault(target, set()).update(
                r.name for sub in e.subrules() for t in _all_templates(sub)
                for r in code_refs(t) if r.kind != "hole" and r.name in names)
            continue
        if not e.writes_code:
            continue
        for text in e.templates():
            written = {r.name for r in code_refs(as_runs(text)) if r.kind != "hole"}
            if not e.in_place:  # code written elsewhere: outside every run's scope
                for r in runs:
                    outside[r] |= written - {r}
                continue
            for r, out in _outside_in_template(as_runs(text), runs).items():
                outside[r] |= out & names
    for target, inner in carried.items():  # the target's code carries its sub-rules' writes
        for r, out in outside.items():
            if target in out:
                out |= inner - {r}
    return RunScopes({r: frozenset(o) for r, o in outside.items()},
                     {t: frozenset(c) for t, c in carried.items()})


def _all_templates(rule: Rule) -> Iterator[str]:
    for e in rule.edits:
        yield from e.templates()
        for sub in e.subrules():
            yield from _all_templates(sub)


@lru_cache(maxsize=2048)
def _outside_in_template(text: str, runs: frozenset[str]) -> dict[str, frozenset[str]]:
    """For each run: the metavariables (and other runs) the template writes outside the
    scope of every statement of its own that writes the run back (all of them when it writes
    the run nowhere, or does not parse)."""
    tree, src = parse_as_words(text, ("hole", "sequence", "metavar"))
    occurrences: list[tuple[str, Node]] = []
    for node in walk(tree.root_node):
        if node.child_count == 0 and node.type != "comment":
            word = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
            for kind in ("sequence", "metavar"):
                if word.startswith(WORDS[kind]):
                    occurrences.append((word[len(WORDS[kind]):], node))
    broken = tree.root_node.has_error
    out: dict[str, frozenset[str]] = {}
    for r in runs:
        copies = [] if broken else [s for name, n in occurrences if name == r
                                    and (s := _statement_of(n)) is not None]
        out[r] = frozenset(name for name, n in occurrences
                           if name != r and not any(_in_scope(n, s) for s in copies))
    return out


def _statement_of(word: Node) -> Node | None:
    """The statement ``klc_run__X;`` that writes a run back, straight inside a block."""
    stmt = word.parent
    if word.type != "identifier" or stmt is None or stmt.type != "expression_statement" \
            or stmt.parent is None or stmt.parent.type not in _BLOCKS:
        return None
    return stmt


def _in_scope(node: Node, stmt: Node) -> bool:
    """Whether ``node`` lies after the statement, inside the block that holds it."""
    block = stmt.parent
    assert block is not None
    return stmt.end_byte <= node.start_byte and node.end_byte <= block.end_byte
