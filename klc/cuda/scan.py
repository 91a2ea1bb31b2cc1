"""The constructs the model is built from: found from the words that start them
(``by_text``: scans of the parsed bytes at C speed, then a node lookup at each place found),
not by a walk over every node; the function definitions by a descent through the file's
outline only. That takes every token they are found from to be its text: true of a tree
without errors, and of one whose errors are ERROR nodes (they hold the text they could not
place) and MISSING tokens of other kinds; a tree with a MISSING token of those words (zero
width: no text) is read by one query run instead (``klc.cuda.build``). Both give the same
nodes for a tree of the first kind.

Below the model's builder in ``klc.cuda`` (``docs/architecture.md``, "klc.cuda").
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from tree_sitter import Node

from klc.cuda.model import CONSTRUCT_GROUPS, Unit
from klc.cuda.syntax import F_DIRECTIVE, F_FUNCTION, WORD_BYTES, matches_at, sort_doc_order


class Found(NamedTuple):
    """The nodes the model is built from, each list in document order."""

    functions: list[Node]  # function definitions outside any function body
    calls: list[Node]  # calls that may be barriers, warp intrinsics or atomics (and others)
    launches: list[Node]  # calls with a <<<...>>> configuration
    loops: list[Node]
    shared: list[Node]  # declarations with a __shared__ qualifier
    pragmas: list[Node]  # "#pragma" lines (preproc_call)
    asm: list[Node]
    globals: list[Node]  # every "__global__" token
    # the parent, grandparent and great-grandparent of each of ``functions`` (fewer at the
    # top of the tree), where the search that found them knew them; None: ask the nodes
    function_ancestors: list[tuple[Node, ...]] | None = None


# the words that start a construct, found by scans of the text (each pattern starts with a
# literal: a scan runs at C speed), with the group of constructs they find (the model's
# ``CONSTRUCT_GROUPS``). A loop or asm statement is the named node that holds its word's
# token and starts with it (a do loop is found from its "while": it has one unless that
# token is MISSING); the other words' tokens must be the first (or only) token of their
# node. The intrinsics' names are the words of a "__" scan that are neither (below).
_KEYWORD_SCANS = tuple((group, literal, re.compile(re.escape(literal) + rest))
                       for group, literal, rest in (
    ("loops", b"for", rb"\b"), ("loops", b"while", rb"\b"), ("rest", b"asm", rb"\b"),
    ("rest", b"#pragma", rb"\b"), ("launches", b"<<<", b""),
    ("rest", b"__", rb"(?:asm__|asm\b|shared__|global__)"),
    ("calls", b"__", rb"(?:syncthreads|syncwarp|barrier_sync|shfl|ballot_sync|any_sync|"
                     rb"all_sync|uni_sync|activemask|match_a|reduce_)")))
_STATEMENTS = {b"for": ("for_statement", "for_range_loop"), b"while": ("while_statement",),
               b"asm": ("gnu_asm_expression",), b"__asm__": ("gnu_asm_expression",),
               b"__asm": ("gnu_asm_expression",)}
_TOKENS = {b"__shared__": "__shared__", b"__global__": "__global__",
           b"#pragma": "preproc_directive", b"<<<": "<<<"}
# a call may be a barrier, warp intrinsic or atomic (``klc.cuda.build``) only if its callee's
# text holds one of these: an intrinsic's name at its start (a word of the "__" scan above
# that is not a keyword, or "atomic"), or a group's method after ".", "->" or "::" at its end
# (one scan for each, from the punctuation: a literal rarer than the words; blanks may stand
# between)
_METHOD_CALLS = tuple((punctuation, re.compile(re.escape(punctuation) + rb"[ \t\n\r\f\v]*"
                                              rb"(sync\b|shfl|ballot\b|any\b|all\b|reduce\b)"))
                      for punctuation in (b".", b"->", b"::"))
_ATOMIC = (b"atomic", re.compile(rb"atomic"))


def _scan(data: bytes, literal: bytes, pattern: re.Pattern[bytes]) -> Iterator[re.Match[bytes]]:
    """A scan's matches: a literal rare in code found by ``bytes.find`` (``matches_at``), a
    frequent one by the regular expression engine (a match tried from Python at each of its
    places would cost more than the faster scan saves)."""
    return matches_at(data, literal, pattern) if literal in _RARE else pattern.finditer(data)


_RARE = frozenset({b"while", b"#pragma", b"<<<", b"->", b"atomic"})


def by_text(unit: Unit, functions: bool = True,
            groups: tuple[str, ...] = CONSTRUCT_GROUPS) -> Found:
    """The constructs of a tree, from the text: each keyword that starts one (``for``,
    ``__shared__``, ``<<<``, ...) found by a scan of the parsed bytes (masked text is blank),
    and the construct is the node its token starts; the calls that may be intrinsics found
    from the words their callees hold. Where every token is its text (no MISSING token of
    these words), these are the nodes a query over the tree gives. ``functions``: False for
    no function definitions (the model finds them first, by ``function_nodes``); ``groups``:
    the groups of constructs to find (``CONSTRUCT_GROUPS``; the others' lists left empty)."""
    parsed, root = unit.parsed, unit.root
    at, named_at = root.descendant_for_byte_range, root.named_descendant_for_byte_range
    found: dict[str, dict[tuple[int, int], Node]] = {
        k: {} for k in ("launch", "loop", "shared", "pragma", "asm", "global", "call")}
    loops, shared, pragmas = found["loop"], found["shared"], found["pragma"]
    calls = found["call"]
    for group, literal, pattern in _KEYWORD_SCANS:
        if group not in groups:
            continue
        for m in _scan(parsed, literal, pattern):
            start, end = m.span()
            word = m.group()
            statements = _STATEMENTS.get(word)
            if statements is None and word not in _TOKENS:
                _calls_at(at, start, calls)  # an intrinsic's name: "__syncthreads", ...
                continue
            # (a word glued to one before it is inside a longer token: "transform")
            if start and word[0] in WORD_BYTES and parsed[start - 1] in WORD_BYTES:
                continue
            if statements is not None:
                # the named node around the keyword's token (an anonymous token's parent; a
                # comment or string when the word is in one)
                node = named_at(start, end)
                if node is None:
                    continue
                kind = node.type
                if kind == "do_statement" and word == b"while":
                    loops[(node.start_byte, node.end_byte)] = node
                elif kind not in statements or node.start_byte != start:
                    continue
                elif word == b"for" or word == b"while":
                    loops[(start, node.end_byte)] = node
                else:
                    found["asm"][(start, node.end_byte)] = node
                continue
            if word == b"#pragma":
                # the named node around the directive token and the byte after it: the
                # "#pragma" line whose directive it is (its parent: one search, not two)
                line = named_at(start, end + 1)
                if line is not None and line.type == "preproc_call" \
                        and line.start_byte == start:
                    directive = line.child_by_field_id(F_DIRECTIVE)
                    if directive is not None and directive.type == "preproc_directive" \
                            and directive.start_byte == start and directive.end_byte == end:
                        pragmas[(start, line.end_byte)] = line
                continue
            token = at(start, end)
            if token is None or token.type != _TOKENS[word] or token.start_byte != start \
                    or token.end_byte != end:
                continue  # in a comment, a string, a longer token, a macro's text
            parent = token.parent
            if parent is None:
                continue
            kind = parent.type
            if word == b"__global__":
                found["global"][(start, end)] = token
            elif word == b"__shared__":
                grand = parent.parent
                if kind == "type_qualifier" and grand is not None \
                        and grand.type == "declaration":
                    shared[(grand.start_byte, grand.end_byte)] = grand
            else:  # "<<<"
                grand = parent.parent
                if kind == "kernel_call_syntax" and grand is not None \
                        and grand.type == "call_expression":
                    found["launch"][(grand.start_byte, grand.end_byte)] = grand
    for m in _scan(parsed, *_ATOMIC) if "calls" in groups else ():
        _calls_at(at, m.start(), calls)
    for literal, pattern in _METHOD_CALLS if "calls" in groups else ():
        for m in _scan(parsed, literal, pattern):
            start = m.start(1)
            before = parsed[max(0, start - 64):start].rstrip()
            if before.endswith((b".", b"->", b"::")):
                _calls_at(at, start, calls)
    lists = {}
    for k, nodes in found.items():
        sorted_nodes = list(nodes.values())
        sort_doc_order(sorted_nodes)
        lists[k] = sorted_nodes
    defined, ancestors = function_nodes(unit) if functions else ([], None)
    return Found(defined, lists["call"], lists["launch"], lists["loop"], lists["shared"],
                 lists["pragma"], lists["asm"], lists["global"], ancestors)


def _calls_at(at: Callable[[int, int], Node | None], offset: int,
              calls: dict[tuple[int, int], Node]) -> None:
    """Every call whose callee holds the byte at ``offset`` (``f(a)(b)``: two), up to the
    statement that holds them. (A call whose callee holds a statement has a lambda for a
    callee, which names no intrinsic; a call that may be one is found from the word at its
    callee's start or end, below any statement; never in a string or a comment: PTX text
    such as "mma.sync" is not walked up.)"""
    node = at(offset, offset + 1)
    if node is not None and node.type in _NOT_CODE:
        return
    while node is not None:
        kind = node.type
        if kind == "call_expression":
            callee = node.child_by_field_id(F_FUNCTION)
            if callee is not None and callee.start_byte <= offset < callee.end_byte:
                calls[(node.start_byte, node.end_byte)] = node
        elif kind.endswith("statement") or kind in _CALL_ENDS:
            return
        node = node.parent


_NOT_CODE = frozenset({"string_content", "comment"})
_CALL_ENDS = frozenset({"declaration", "field_declaration", "lambda_expression",
                        "function_definition", "translation_unit", "preproc_arg"})


def function_nodes(unit: Unit) -> tuple[list[Node], list[tuple[Node, ...]]]:
    """The function definitions outside any function body, in document order, and the
    parent, grandparent and great-grandparent of each (fewer at the top of the tree; a
    node's ``parent`` is a search from the root): a descent that never enters a block, nor
    a subtree without a ``{`` (a definition has a body), so it visits the file's outline,
    not its code (and only named nodes: an anonymous one is a token)."""
    find = unit.parsed.find
    out: list[tuple[int, Node, tuple[Node, ...]]] = []
    stack: list[tuple[Node, tuple[Node, ...]]] = [(unit.root, ())]
    while stack:
        node, above = stack.pop()
        chain = (node, *above[:2])  # its children's ancestors
        for child in node.named_children:
            kind = child.type
            if kind == "function_definition":
                out.append((child.start_byte, child, chain))  # (and what its head may
                # define: its body is a block)
            elif kind == "compound_statement":
                continue
            if find(b"{", child.start_byte, child.end_byte) >= 0:
                stack.append((child, chain))
    out.sort(key=_first)
    return [n for _, n, _ in out], [up for _, _, up in out]


_first = operator.itemgetter(0)
