"""Declarations: what a name is, from the tree-sitter model (``klc.analysis`` layer 1).

``lookup`` resolves a use of a name as C does: the closest preceding local of the enclosing
function, else its parameter, else a global. Every declaration of the unit is read once
(``_declarations``), grouped by name in source order."""

from __future__ import annotations

import bisect
import functools
import operator
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from klc.analysis.tree import Place, in_span, nodes_of, text_of, unit_memo
from klc.cuda.parse import parse_bytes
from klc.cuda.syntax import (
    F_DECLARATOR,
    F_SIZE,
    F_TYPE,
    F_VALUE,
    sort_doc_order,
    word_occurrences,
)

if TYPE_CHECKING:
    from klc.cuda.model import Function, Param, Unit


@dataclass(unsafe_hash=True)  # immutable by convention: a frozen __init__ costs 3x
class _Decl:
    """A variable as declared: the facts the type predicates ask about."""

    name: str
    base: str  # the type without qualifiers and declarator: "float", "float4", "T"
    pointer: int  # levels of indirection; an array counts as one
    const: bool  # the pointee (or the value) is const
    restrict: bool
    qualifiers: frozenset[str]  # "__shared__", "constexpr", "static", ...
    dims: tuple[str, ...]  # array sizes as written
    init: Node | None
    start: int
    end: int
    origin: str  # "parameter" | "local" | "global"
    align: int | None = None  # from __align__(N)
    reference: bool = False  # declared `T& r = ...`: another name for what it is bound to

    @property
    def signature(self) -> tuple[object, ...]:
        """What a declaration says about its variable's type and layout (not where it is)."""
        return (self.base, self.pointer, self.dims, self.align, tuple(sorted(self.qualifiers)))


_ALIGN_RE = re.compile(r"__align__\s*\(\s*(\d+)\s*\)")


def _declarations_named(unit: Unit, name: str) -> list[_Decl]:
    """The declarations of one name (locals and globals), in source order: those of the
    unit's table (``_declarations``) where it is made, else read from the declarations that
    spell the name (a declaration spells the name it declares), kept per name. A file asks
    for a few names (a rule's targets, a guard's lookups); once the names asked are spelled
    in more places than the file has declarations (``_BUDGET``), the table is made and read."""
    whole = unit.memo.get(_TABLE)
    if whole is not None:
        return whole.get(name, [])  # type: ignore[no-any-return]
    named = unit.memo.get(_NAMED)
    if named is None:
        named = unit.memo[_NAMED] = {}
    got = named.get(name)
    if got is None:
        budget = unit.memo.get(_BUDGET)
        if budget is None:
            budget = len(nodes_of(unit, "declaration"))
        around = _around(unit, name.encode(), budget)
        if around is None:
            return _declarations(unit).get(name, [])
        nodes, places = around
        unit.memo[_BUDGET] = budget - places
        got = named[name] = [d for d in declarations_of(unit, nodes) if d.name == name]
    return got  # type: ignore[no-any-return]


def _around(unit: Unit, word: bytes, limit: int) -> tuple[list[Node], int] | None:
    """The declarations that may declare a name spelled ``word``: at each place it stands
    as a word, the first declaration above the tree's node there (a declaration's name is
    in its own declarator, under no other declaration or block), in source order, and the
    number of places. None when the name stands in more than ``limit`` places (the unit's
    declarations, read at once, cost less), or is empty."""
    src, size, root = unit.source, len(word), unit.root
    places = []
    for at in word_occurrences(src, word, 0, len(src)) if word else ():
        if len(places) >= limit:
            return None
        places.append(at)
    if not word:
        return None
    found: dict[int, Node] = {}
    for at in places:
        node = root.named_descendant_for_byte_range(at, at + size)
        while node is not None and node.type not in _NO_DECLARATOR:
            if node.type == "declaration":
                found.setdefault(node.id, node)
                break
            node = node.parent
    nodes = list(found.values())
    sort_doc_order(nodes)
    return nodes, len(places)


# what no declarator is inside: a name found under one of these is not declared by a
# declaration above it (a lambda's body in an initialiser declares its own)
_NO_DECLARATOR = frozenset({"compound_statement", "function_definition", "translation_unit",
                            "field_declaration_list", "expression_statement"})


_TABLE = "declarations"  # (``unit_memo``'s key of the table)
_NAMED = "klc.analysis.declarations: by name"
# the places the names read one by one may still climb from before the table costs less:
# the unit's declarations, less the places climbed from so far (a large generated kernel
# asks for hundreds of names, each spelled a few times)
_BUDGET = "klc.analysis.declarations: places left"


def declarations_named(unit: Unit, name: str) -> list[Any]:
    """The declarations of ``name`` in the unit (locals and globals; parameters are not
    declarations here), each with ``start``/``end`` byte offsets, in source order."""
    return _declarations_named(unit, name)


def _declarations(unit: Unit) -> dict[str, list[_Decl]]:
    """Every declared variable of the unit by name (locals and globals), in source order."""
    return unit_memo(unit, _TABLE,
                     lambda: _group(declarations_of(unit, nodes_of(unit, "declaration"))))


def function_declarations(unit: Unit, fn: Function) -> list[_Decl]:
    """The variables declared in ``fn``'s body, in the order of ``_declarations``: by name
    (in the order of the unit's first declaration of each), then in source order. A slice of
    the unit's declarations sorted by start, found by bisection: not a scan of them all for
    every function."""
    by_start, rank = unit_memo(unit, "declarations_by_start", lambda: _by_start_and_rank(unit))
    lo = bisect.bisect_left(by_start, fn.body_start, key=_decl_start)
    hi = bisect.bisect_left(by_start, fn.body_end, key=_decl_start)
    return sorted(by_start[lo:hi], key=lambda d: rank[d.name])  # (stable: source order)


def _by_start_and_rank(unit: Unit) -> tuple[list[_Decl], dict[str, int]]:
    whole = _declarations(unit)
    rank = {name: i for i, name in enumerate(whole)}
    return sorted((d for decls in whole.values() for d in decls), key=_decl_start), rank


def _group(decls: list[_Decl]) -> dict[str, list[_Decl]]:
    out: dict[str, list[_Decl]] = {}
    for d in decls:
        out.setdefault(d.name, []).append(d)
    return out


@functools.lru_cache(maxsize=1024)
def _signatures_of(text: str) -> tuple[tuple[str, tuple[object, ...]], ...]:
    unit = parse_bytes(f"void __klc_decl__() {{\n{text}\n}}\n".encode(), "<declaration>")
    return tuple((d.name, d.signature)
                 for d in declarations_of(unit, list(unit.nodes_of_type("declaration"))))


def declaration_signatures(text: str) -> dict[str, tuple[object, ...]]:
    """The variables that declaration code (a statement, or a rewrite's text) declares, each
    with its type and layout (``_Decl.signature``)."""
    return dict(_signatures_of(text))


def declarations_of(unit: Unit, nodes: list[Node]) -> list[_Decl]:
    """The variables the given declaration nodes declare, in order."""
    src = unit.source
    out: list[_Decl] = []
    for node in nodes:
        quals: set[str] = set()
        for c in node.children:
            if c.type in ("type_qualifier", "storage_class_specifier",
                          "attribute_specifier"):
                quals.add(text_of(src, c))
        type_node = node.child_by_field_id(F_TYPE)
        base = _base_type(text_of(src, type_node)) if type_node is not None else ""
        align = None
        masks = unit.masks
        i = bisect.bisect_left(unit._mask_starts, node.start_byte)  # (masks sorted by start)
        while i < len(masks) and masks[i].start < node.end_byte:
            am = _ALIGN_RE.match(unit.text(masks[i].start, masks[i].end))
            if am:
                align = int(am.group(1))
            i += 1
        for d in node.children_by_field_id(F_DECLARATOR):
            decl = _declarator(src, d, base, quals, node, align)
            if decl is not None:
                out.append(decl)
    return out


def _declarator(src: bytes, d: Node, base: str, quals: set[str], node: Node,
                align: int | None) -> _Decl | None:
    pointer, restrict, dims, init, reference = 0, False, [], None, False
    while d is not None and d.type != "identifier":
        if d.type == "reference_declarator":
            reference = True
        if d.type == "init_declarator":
            init = d.child_by_field_id(F_VALUE)
        elif d.type == "pointer_declarator":
            pointer += 1
            restrict |= any(c.type == "type_qualifier" and text_of(src, c) in
                            ("__restrict__", "__restrict", "restrict") for c in d.children)
        elif d.type == "array_declarator":
            size = d.child_by_field_id(F_SIZE)
            dims.append(text_of(src, size) if size is not None else "")
        nxt = d.child_by_field_id(F_DECLARATOR)
        if nxt is None:
            nxt = next((c for c in d.named_children if c.type in (
                "identifier", "pointer_declarator", "array_declarator", "init_declarator",
                "parenthesized_declarator", "reference_declarator")), None)
        d = nxt
    if d is None:
        return None
    return _Decl(text_of(src, d), base, pointer + (1 if dims else 0), "const" in quals, restrict,
                 frozenset(quals), tuple(reversed(dims)), init, node.start_byte, node.end_byte,
                 "local", align, reference)


_TYPE_WORDS = re.compile(r"\b(?:const|volatile|__restrict__|__restrict|restrict|struct|"
                         r"typename|class|__shared__|__constant__|__device__)\b")


@functools.lru_cache(maxsize=4096)
def _base_type(text: str) -> str:
    text = _TYPE_WORDS.sub(" ", text).replace("std::", "")
    return " ".join(text.replace("*", " ").replace("&", " ").split())


def _param_decl(p: Param) -> _Decl:
    return _Decl(p.name, _base_type(p.base_type), p.pointer + (1 if p.array else 0), p.const,
                 p.restrict, frozenset(), (), None, p.start, p.end, "parameter")


def lookup(ctx: Place, name: str, at: int) -> _Decl | None:
    """The declaration a use of ``name`` at offset ``at`` refers to: the closest preceding
    local of the enclosing function, else a parameter, else a global."""
    fn = ctx.function
    unit = ctx.unit
    decls = _declarations_named(unit, name)
    if fn is not None and decls:
        # the last declaration that starts before the use, if it is in this function's
        # body (declarations are in source order: found by bisection)
        i = bisect.bisect_left(decls, at, key=_decl_start) - 1
        if i >= 0 and decls[i].start >= fn.body_start:
            return decls[i]
    # the parameter, else the global: the same for every use in the function (once each)
    known = unit_memo(unit, "lookups", dict)
    key = (fn.start, fn.end, name) if fn is not None else (None, None, name)
    if key not in known:
        known[key] = _lookup_outside(unit, fn, name, decls)
    return known[key]


_decl_start = operator.attrgetter("start")


def _lookup_outside(unit: Unit, fn: Function | None, name: str, decls: list[_Decl]
                    ) -> _Decl | None:
    if fn is not None:
        p = fn.param(name)
        if p is not None:
            return _param_decl(p)
    inside = [(f.start, f.end) for f in unit.functions]
    glob = [d for d in decls if not any(s <= d.start < e for s, e in inside)]
    if glob:
        return _Decl(**{**glob[-1].__dict__, "origin": "global"})
    return None


def declared_names_in(unit: Unit, start: int, end: int) -> set[str]:
    return {d.name for d in declarations_of(unit, list(in_span(nodes_of(unit, "declaration"),
                                                              start, end)))}
