"""What a planned rewrite reads and what it changes, so that the rewrites of one run compose.

The pipeline plans every applicable site of a run against the original unit and applies them
together. That equals applying them one after another, each judged on the code the ones
before it left, only where no site's verdict reads a fact of the code that an earlier site
of the run changes: a column rewrite that makes the block 32 x 32 and ``add_launch_bounds``,
whose guard read a block of 64, do not compose, each alone does.

``reads`` is a site's footprint: the code of its match (its rewrite is planned from it), and
the facts its guards read (``klc.guards.Traits.facts``, words of ``klc.guards.registry.FACTS``:
the code of its function, the launch, the shared memory, the declarations of the names it
mentions, the file). ``changes`` is a planned rewrite's footprint: the bytes it edits, the
names the statements it touches mention, the launch (a ``rewrite launch``, a
``__launch_bounds__``), the shared memory (a ``__shared__`` declaration). ``conflict`` says,
in words, which fact of one the other changes. Both err on the side of "reads more":
a site that conflicts is judged again on the rewritten code (``klc.pipeline``), which costs a
parse, never a wrong rewrite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from klc.guards import traits
from klc.rule.guard import calls

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit
    from klc.edits.base import Rewrite
    from klc.match import Match
    from klc.rule import Rule

_WORD = re.compile(r"[A-Za-z_]\w*")
_FILE_SCOPE = -1  # the scope of a name outside every function
# the nodes whose text an edit inside them changes the meaning of (a parameter gaining
# __restrict__, a statement gaining a store); an edit straight inside a block or at a
# function's head touches only its own text
_STATEMENT = re.compile(r".*(statement|declaration|declarator)$|^(init_declarator|"
                        r"condition_clause|expression_statement)$")
_OPEN = frozenset({"compound_statement", "function_definition", "translation_unit",
                   "declaration_list", "template_declaration"})


@dataclass
class Footprint:
    """Facts of one unit: code spans (old offsets), names by function scope, and whether the
    launch, the shared memory or the rest of the file are in it."""

    spans: list[tuple[int, int]] = field(default_factory=list)
    names: set[tuple[int, str]] = field(default_factory=set)  # (function start, name)
    launch: bool = False
    shared: bool = False
    file: bool = False


@lru_cache(maxsize=512)
def rule_facts(rule: Rule) -> frozenset[str]:
    """The facts the guards of a rule and of its ``within`` sub-rules read."""
    out: set[str] = set()
    todo = [rule]
    while todo:
        r = todo.pop()
        if r.guard is not None:
            for call in calls(r.guard):
                t = traits(call.name)
                if t is not None:
                    out |= t.facts
        for e in r.edits:
            todo.extend(e.subrules())
    return frozenset(out)


def _function_at(unit: Unit, offset: int) -> Function | None:
    return next((f for f in unit.functions if f.start <= offset < f.end), None)


def reads(match: Match, rw: Rewrite, facts: frozenset[str]) -> Footprint:
    """What a site's verdict and plan read: its match's code, and ``facts`` (``rule_facts``,
    with ``code`` added by the pipeline where it judges fresh names) where it stands. A
    rewrite that changes the launch reads it (the launch is checked against
    ``__launch_bounds__`` and edited where the file records it)."""
    unit, fn = match.unit, match.function
    fp = Footprint(spans=[(match.start, match.end)], launch="launch" in facts or bool(rw.launch),
                   shared="shared" in facts, file="file" in facts)
    if "code" in facts:
        fp.spans.append((fn.start, fn.end) if fn is not None else (0, len(unit.source)))
    fp.spans.extend(match.reads)  # (a local's initialiser or a helper read in its place)
    if "declarations" in facts:
        scope = fn.start if fn is not None else _FILE_SCOPE
        for w in set(_WORD.findall(unit.text(match.start, match.end))):
            fp.names.add((scope, w))
            fp.names.add((_FILE_SCOPE, w))
    return fp


def changes(unit: Unit, rw: Rewrite) -> Footprint:
    """What a planned rewrite changes: the bytes it edits; the names its new text and the
    statements its edits fall in mention, in the scope of the function each edit is in; the
    launch when it changes the geometry or a ``__launch_bounds__``; the shared memory when
    it writes or removes a ``__shared__`` declaration; the file whenever it edits anything."""
    fp = Footprint(launch=bool(rw.launch), file=bool(rw.edits or rw.launch))
    for e in rw.edits:
        fp.spans.append((e.start, e.end))
        old = unit.source[e.start:e.end].decode("utf-8", "replace")
        touched = old + " " + e.text + " " + _statement_text(unit, e.start, e.end)
        fp.launch |= "__launch_bounds__" in touched
        fp.shared |= "__shared__" in old or "__shared__" in e.text
        fn = _function_at(unit, e.start)
        scope = fn.start if fn is not None else _FILE_SCOPE
        fp.names.update((scope, w) for w in _WORD.findall(touched))
    return fp


def _statement_text(unit: Unit, start: int, end: int) -> str:
    """The text of the innermost statement or declaration around an edit ("" when the edit
    stands straight inside a block, a function's head or the file)."""
    node = unit.tree.root_node.descendant_for_byte_range(start, max(start, end - 1))
    while node is not None and node.type not in _OPEN:
        if _STATEMENT.match(node.type) and node.end_byte - node.start_byte < 4096:
            return unit.text(node)
        node = node.parent
    return ""


def conflict(changed: Footprint, read: Footprint, unit: Unit) -> str | None:
    """Which fact that ``read`` depends on ``changed`` changes, in words; None when none."""
    for cs, ce in changed.spans:
        for rs, re_ in read.spans:
            if (cs < re_ and rs < ce) or (cs == ce and rs <= cs <= re_):
                return f"rewrites code at {unit.where(cs)} that its match or guards read"
    if changed.launch and read.launch:
        return "changes the launch (block, grid or __launch_bounds__) that its guards read"
    if changed.shared and read.shared:
        return "changes the __shared__ memory that its guards count"
    common = sorted(n for _, n in changed.names & read.names)
    if common:
        return (f"changes code that mentions `{common[0]}`, whose declaration, type or writes "
                "its guards read")
    if changed.file and read.file:
        return "rewrites the file whose callers and declarations its guards read"
    return None
