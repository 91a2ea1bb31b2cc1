"""Ident holes that a rule's rewrite declares, and the freshness they imply.

A rewrite that writes ``for (int ?o = 16; ...)``, ``float4 ?v = ...;`` or
``__shared__ float ?s[32];`` declares the variable its ``ident`` hole names. Such a value
must be fresh in the enclosing function (``fresh_name(?o)``): a name the function already
uses would shadow a parameter or a local (changing what later code reads) or collide with
one (not compiling). The rule need not say so: the requirement is read from the templates'
syntax (tree-sitter, the holes read as identifiers) when the rule is used, and judged with
the ``fresh_name`` predicate at each site after the rule's own guard (``klc.pipeline``,
``klc.edits.within`` for a ``rewrite within`` block's template). It is derived, so the
printer does not write it and ``klc learn``'s skills stay as they are.

A hole that only names an existing variable (``?cache[$K] = $V;``, guarded ``not
fresh_name(?cache)``) is not declared and not affected. A guard whose top-level conjunct is
``fresh_name(?h)`` already requires it (judged once, by the guard); a guard whose top-level
conjunct is ``not fresh_name(?h)`` for a declared hole can never hold with the rewrite, and
``klc check`` reports it (``contradictions``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from klc.cuda.syntax import F_DECLARATOR, parser
from klc.rule.code import code_refs
from klc.rule.guard import GuardAnd, GuardCall, GuardExpr, GuardNot

if TYPE_CHECKING:
    from klc.rule.holes import HoleDecl
    from klc.rule.model import Edit, Rule

_HOLE_WORD = "klc_hole__"  # a hole read as an identifier: klc_hole__o for ?o
_WRAPS = (("void __klc_template__() {\n", "\n}\n"), ("", "\n"))
# declarator nodes around the declared name: int ?a = 0, ?b[4], *?c, &?d
_WRAPPING = frozenset({"init_declarator", "array_declarator", "pointer_declarator",
                       "reference_declarator", "parenthesized_declarator",
                       "attributed_declarator"})
# nodes whose ``declarator`` children declare variables (a for loop's initializer is a
# declaration; a range for declares its element; a condition may declare one too)
_DECLARING = frozenset({"declaration", "for_range_loop", "condition_clause"})


@lru_cache(maxsize=2048)
def declared_in(template: str) -> tuple[str, ...]:
    """The holes whose values a code template declares as a variable, an array or a loop
    variable, in order of first declaration: from the template's parse (statements in a
    function body, else top-level code), never from its text."""
    pieces: list[str] = []
    last = 0
    for ref in code_refs(template):
        if ref.kind == "hole":
            pieces += [template[last:ref.start], _HOLE_WORD + ref.name]
            last = ref.end
    if not pieces:
        return ()
    text = "".join(pieces) + template[last:]
    trees = []
    for prefix, suffix in _WRAPS:
        src = (prefix + text + suffix).encode()
        tree = parser().parse(src)
        trees.append((tree, src))
        if not tree.root_node.has_error:
            break
    tree, src = next(((t, s) for t, s in trees if not t.root_node.has_error), trees[0])
    found: dict[str, None] = {}
    for node in walk(tree.root_node):
        if node.type not in _DECLARING:
            continue
        for decl in node.children_by_field_id(F_DECLARATOR):
            name = _declared_name(decl)
            if name is not None:
                word = src[name.start_byte:name.end_byte].decode("utf-8", "replace")
                if word.startswith(_HOLE_WORD):
                    found[word[len(_HOLE_WORD):]] = None
    return tuple(found)


_DOTS_LINE = re.compile(r"^([ \t]*)\.\.\.(?:[ \t].*)?$", re.M)
_RUN_WORD = "klc_run__"  # a $$$X run read as a statement: klc_run__X; dots: klc_run__dots__
# the identifier each kind of reference is read as (``parse_as_words``)
WORDS = {"hole": _HOLE_WORD, "sequence": _RUN_WORD, "metavar": "klc_var__"}
_STATEMENT_END = re.compile(r"[ \t]*(?:\n|\}|$)")  # nothing more of the statement follows


def parse_as_words(text: str, kinds: tuple[str, ...]) -> tuple[Any, bytes]:
    """The template's parse with its holes (and, with "sequence", its runs; with
    "metavar", its metavariables) read as identifiers (klc_hole__h, klc_run__X,
    klc_var__X; a metavariable that stands for a whole statement, ``for (...) $BODY``, with
    the ``;`` it lacks): as statements of a function body, else as top-level code."""
    pieces: list[str] = []
    last = 0
    for ref in code_refs(text):
        if ref.kind in kinds:
            word = WORDS[ref.kind] + ref.name
            if ref.kind == "metavar" and _STATEMENT_END.match(text, ref.end):
                word += ";"
            pieces += [text[last:ref.start], word]
            last = ref.end
    text = "".join(pieces) + text[last:]
    tree, src = None, b""
    for prefix, suffix in _WRAPS:
        src = (prefix + text + suffix).encode()
        tree = parser().parse(src)
        if not tree.root_node.has_error:
            break
    assert tree is not None
    return tree, src


@lru_cache(maxsize=2048)
def kept_in_scope(template: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """(hole, runs) for each hole the template declares: the runs it writes back as they
    were (``$$$X`` by name X, statement dots as ``...``) inside the scope of that declaration
    (the rest of the block it is declared in; the for statement whose initialiser declares
    it). Kept code's own declarations of the same name would collide with the new variable
    or shadow it there; outside that scope (``for (int ?j ...) {...}`` before the kept run)
    they are harmless."""
    text = _DOTS_LINE.sub(lambda m: f"{m.group(1)}{_RUN_WORD}dots__;", template)
    tree, src = parse_as_words(text, ("hole", "sequence"))
    found: dict[str, set[str]] = {}
    for node in walk(tree.root_node):
        if node.type not in _DECLARING:
            continue
        for decl in node.children_by_field_id(F_DECLARATOR):
            name = _declared_name(decl)
            word = src[name.start_byte:name.end_byte].decode("utf-8", "replace") \
                if name is not None else ""
            if not word.startswith(_HOLE_WORD):
                continue
            parent = node.parent
            end = (parent.end_byte if parent is not None and node.type != "for_range_loop"
                   else node.end_byte)
            runs = found.setdefault(word[len(_HOLE_WORD):], set())
            for m in re.finditer(rb"klc_run__(\w+)", src[node.start_byte:end]):
                run = m.group(1).decode()
                runs.add("..." if run == "dots__" else run)
    return tuple((h, frozenset(r)) for h, r in found.items())


@lru_cache(maxsize=2048)
def declaration_scopes(template: str) -> tuple[tuple[str, int, int], ...]:
    """(hole, start, end) for each declaration of a hole in the template: from the
    declaration to the end of its scope (the rest of its block; the for statement whose
    initialiser declares it), in offsets of the template's parse."""
    tree, src = parse_as_words(template, ("hole",))
    out: list[tuple[str, int, int]] = []
    for node in walk(tree.root_node):
        if node.type not in _DECLARING:
            continue
        for decl in node.children_by_field_id(F_DECLARATOR):
            name = _declared_name(decl)
            word = src[name.start_byte:name.end_byte].decode("utf-8", "replace") \
                if name is not None else ""
            if word.startswith(_HOLE_WORD):
                parent = node.parent
                end = (parent.end_byte if parent is not None and node.type != "for_range_loop"
                       else node.end_byte)
                out.append((word[len(_HOLE_WORD):], node.start_byte, end))
    return tuple(out)


def shared_scope(rule: Rule, a: str, b: str) -> bool:
    """Could the declarations of holes ``a`` and ``b`` meet in one scope (one the other's
    redeclaration)? Yes when one template declares both and the scope of one holds the
    declaration of the other, and whenever different templates declare them (the code they
    write may land in one block); not for two loops' own variables side by side."""
    seen: dict[str, set[int]] = {a: set(), b: set()}
    k = 0
    for e in rule.edits:
        if not e.writes_code:
            continue
        for text in e.templates():
            k += 1
            scopes = declaration_scopes(text)
            for h, _, _ in scopes:
                if h in seen:
                    seen[h].add(k)
            for h1, s1, e1 in scopes:
                for h2, s2, _ in scopes:
                    if {h1, h2} == {a, b} and h1 != h2 and s1 <= s2 < e1:
                        return True
    return bool(seen[a] and seen[b] and seen[a] != seen[b])


def kept_runs(rule: Rule, hole: str) -> frozenset[str]:
    """The runs (``$$$X`` names, ``...`` for statement dots) that the rule's templates write
    back inside the scope of their declaration of ``hole``."""
    out: set[str] = set()
    for e in rule.edits:
        if not e.writes_code:
            continue
        for text in e.templates():
            for h, runs in kept_in_scope(text):
                if h == hole:
                    out |= runs
    return frozenset(out)


def walk(node: Node) -> Iterator[Node]:
    """Every node under ``node`` (itself first), in document order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _declared_name(node: Node | None) -> Node | None:
    """The identifier a declarator declares (None for a function declarator, an operator,
    a structured binding)."""
    while node is not None and node.type in _WRAPPING:
        inner = node.child_by_field_id(F_DECLARATOR)
        if inner is None:  # (a reference declarator names no field: its last named child)
            named = [c for c in node.named_children if c.type != "attribute_declaration"]
            inner = named[-1] if named else None
        node = inner
    return node if node is not None and node.type == "identifier" else None


def declared_holes(edits: Iterable[Edit], holes: Mapping[str, HoleDecl]) -> tuple[str, ...]:
    """The ident holes that the code the edits write declares (their own templates; not a
    ``within`` block's, which is a rule of its own, nor what ``remove_statement`` deletes)."""
    out: dict[str, None] = {}
    for e in edits:
        if not e.writes_code:
            continue
        for text in e.templates():
            for name in declared_in(text):
                decl = holes.get(name)
                if decl is not None and decl.type == "ident":
                    out[name] = None
    return tuple(out)


def _conjuncts(guard: GuardExpr | None) -> Iterator[GuardExpr]:
    if guard is None:
        return
    if isinstance(guard, GuardAnd):
        for e in guard.operands:
            yield from _conjuncts(e)
    else:
        yield guard


def _fresh_hole(expr: GuardExpr) -> str | None:
    if isinstance(expr, GuardCall) and expr.name == "fresh_name" and len(expr.args) == 1 \
            and expr.args[0].kind == "hole":
        return str(expr.args[0].value)
    return None


def required_fresh(guard: GuardExpr | None) -> frozenset[str]:
    """The holes whose freshness the guard requires itself: ``fresh_name(?h)`` as a top-level
    conjunct."""
    return frozenset(h for c in _conjuncts(guard) if (h := _fresh_hole(c)) is not None)


def required_not_fresh(guard: GuardExpr | None) -> list[tuple[str, GuardNot]]:
    """(hole, the ``not fresh_name(?h)`` conjunct) for each top-level ``not fresh_name``."""
    out = []
    for c in _conjuncts(guard):
        if isinstance(c, GuardNot) and (h := _fresh_hole(c.operand)) is not None:
            out.append((h, c))
    return out


@lru_cache(maxsize=1024)
def declared_idents(rule: Rule) -> tuple[str, ...]:
    """The ident holes whose values the rule's rewrites (``within`` blocks included) declare
    as new variables (:func:`declared_holes`): each must be a name the function does not use."""
    out = dict.fromkeys(declared_holes(rule.edits, rule.holes))
    for e in rule.edits:
        for sub in e.subrules():
            out.update(dict.fromkeys(declared_holes(sub.edits, rule.holes)))
    return tuple(out)


@lru_cache(maxsize=1024)
def implied_fresh(rule: Rule, outer: Rule | None = None) -> tuple[str, ...]:
    """The ident holes whose values must be fresh at a site of ``rule`` beyond what its guard
    says: those its own rewrites declare, less those its guard (or, for a ``within`` block's
    rule, the outer rule's guard or implied check) already requires fresh."""
    covered = required_fresh(rule.guard)
    if outer is not None:
        covered |= required_fresh(outer.guard) | frozenset(implied_fresh(outer))
    return tuple(h for h in declared_holes(rule.edits, rule.holes) if h not in covered)


def contradictions(edits: Iterable[Edit], guard: GuardExpr | None,
                   holes: Mapping[str, HoleDecl]) -> list[tuple[int, int, str]]:
    """(line, col, message) for each guard conjunct ``not fresh_name(?h)`` of a hole that the
    rewrite declares (the rule's guard against every template, a ``within`` block's guard
    against its own and the rule's): no site could ever pass it."""
    edits = tuple(edits)
    own = declared_holes(edits, holes)
    subs = [r for e in edits for r in e.subrules()]
    everywhere = set(own) | {h for r in subs for h in declared_holes(r.edits, holes)}
    out: list[tuple[int, int, str]] = []

    def report(g: GuardExpr | None, declared: set[str], where: str) -> None:
        for h, node in required_not_fresh(g):
            if h in declared:
                out.append((node.line, node.col, f"{where} requires `not fresh_name(?{h})`, "
                            f"but the rewrite declares ?{h} as a new variable, which needs "
                            f"a fresh name: no site can pass both (a hole that names an "
                            "existing variable must not be declared by the rewrite)"))

    report(guard, everywhere, "the guard")
    for r in subs:
        report(r.guard, set(own) | set(declared_holes(r.edits, holes)),
               "the guard of a `rewrite within` block")
    return out
