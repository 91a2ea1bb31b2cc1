"""Guard predicates about code that a rewrite hands from one thread to the 32 lanes of a warp
(thread_per_row_to_warp_per_row): which in-place updates of memory stay applied once.

Such a rewrite runs a row's body on every lane of a warp, with the same values, and strides
the body's sequential loops by lane (``for (int c = A; c < n; c++)`` becomes ``for (int c = A
+ lane; c < n; c += 32)``, passes/row_kernels.rule's sub-rules). Code outside those loops runs
32 times; an iteration of a strided loop runs once, on the lane (c - A) % 32."""

from __future__ import annotations

import re

from tree_sitter import Node

from klc.analysis.declarations import function_declarations, lookup
from klc.analysis.loops import LOOP_TYPES
from klc.analysis.tree import (
    cited,
    in_span,
    nodes_of,
    nodes_within,
    operator_of,
    pointer_roots,
    quoted,
    snippet,
    text_of,
    unparen,
)
from klc.analysis.types import has_type_kind
from klc.analysis.writes import (
    address_taken,
    aliases_of,
    helper_call_unsafe,
    index_value,
    is_assigned,
    passes_pointer,
)
from klc.cuda.model import Function, Unit
from klc.cuda.syntax import F_ARGUMENT, F_ARGUMENTS, F_BODY, F_INDICES, F_LEFT, F_RIGHT
from klc.guards.loops import no_jumps
from klc.guards.registry import ArgSpec, GuardContext, Verdict, _no, _yes, predicate
from klc.guards.writes import _STORING_CALL, assigns_only_locals
from klc.match import Binding

_SEQUENTIAL = re.compile(  # for (int C = A; C < N; C++), in the spellings the isomorphisms
    r"^\s*int\s+(\w+)\s*=\s*(.+?)\s*;\s*(?:\1\s*<=?\s*(?:.+?)|(?:.+?)\s*>=?\s*\1)\s*;\s*"
    r"(?:\1\s*\+\+|\+\+\s*\1|\1\s*\+=\s*1|\1\s*=\s*\1\s*\+\s*1|\1\s*=\s*1\s*\+\s*\1)\s*$",
    re.S)
_ACCUMULATE = re.compile(r"^(\w+)\s*(?:\+=\s*(.+)|=\s*fmaxf\s*\(\s*\1\s*,\s*(.+)\))\s*;$", re.S)
# the other spellings of a maximum that the matcher's max_idiom isomorphism takes for
# `m = fmaxf(m, a);` (groups: m, a): only for a float m and an `a` without side effects
_MAX_SPELLINGS = tuple(re.compile(p, re.S) for p in (
    r"^(\w+)\s*=\s*fmaxf\s*\(\s*(.+?)\s*,\s*\1\s*\)\s*;$",
    r"^(\w+)\s*=\s*max\s*\(\s*\1\s*,\s*(.+?)\s*\)\s*;$",
    r"^(\w+)\s*=\s*max\s*\(\s*(.+?)\s*,\s*\1\s*\)\s*;$",
    r"^(\w+)\s*=\s*(.+?)\s*>\s*\1\s*\?\s*\2\s*:\s*\1\s*;$",
    r"^(\w+)\s*=\s*\1\s*<\s*(.+?)\s*\?\s*\2\s*:\s*\1\s*;$",
))
_IF_MAX = (re.compile(r"^if\s*\(\s*(.+?)\s*>\s*(\w+)\s*\)\s*(\{)?\s*\2\s*=\s*\1\s*;\s*(?(3)\})$",
                      re.S),
           re.compile(r"^if\s*\(\s*(\w+)\s*<\s*(.+?)\s*\)\s*(\{)?\s*\1\s*=\s*\2\s*;\s*(?(3)\})$",
                      re.S))
_EFFECT = re.compile(r"\w\s*\(|\+\+|--|[^=!<>]=[^=]|^=|,")


def _accumulation(ctx: GuardContext, stmt: Node) -> tuple[str, str | None, str | None] | None:
    """(variable, summed expression or None, maximized expression or None) of a statement
    that the sub-rules' accumulations match: ``acc += e;``, ``acc = fmaxf(acc, e);``, and,
    for a ``float`` acc and an ``e`` without calls, assignments or increments, the other
    spellings the max_idiom isomorphism takes for the latter (``if (e > acc) acc = e;``,
    ``acc = fmaxf(e, acc);``, ``acc = max(acc, e);``, ``acc = e > acc ? e : acc;``, ...).
    None for any other statement."""
    text = text_of(ctx.unit.source, stmt)
    m = _ACCUMULATE.match(text)
    if m is not None:
        return m.group(1), m.group(2), m.group(3)
    found = None
    for p in _MAX_SPELLINGS:
        m = p.match(text)
        if m is not None:
            found = (m.group(1), m.group(2))
            break
    if found is None:
        m = _IF_MAX[0].match(text)
        if m is not None:
            found = (m.group(2), m.group(1))
        else:
            m = _IF_MAX[1].match(text)
            found = (m.group(1), m.group(2)) if m is not None else None
    if found is None or _EFFECT.search(found[1]):
        return None
    fn = ctx.function
    decls = [d for d in function_declarations(ctx.unit, fn) if d.name == found[0]
             and d.start < stmt.start_byte] if fn is not None else []
    if not decls or decls[-1].base != "float" or decls[-1].pointer or decls[-1].dims \
            or decls[-1].reference:
        return None  # (fmaxf would convert an int or a double: the matcher takes no such m)
    return found[0], None, found[1]


def _header(unit: Unit, loop: Node) -> tuple[str, str] | None:
    """(variable, start) of ``for (int C = A; C < N; C++) ...``, in the spellings the matcher's
    isomorphisms take for it (``++C``, ``C += 1``, ``N > C``, a bare body): a loop that the
    rewrite's sub-rules may stride by lane; None for any other loop, which no sub-rule
    matches and every lane runs whole."""
    body = loop.child_by_field_id(F_BODY)
    if loop.type != "for_statement" or body is None:
        return None
    src = unit.source
    header = src[loop.start_byte:body.start_byte].decode("utf-8", "replace")
    m = re.match(r"^for\s*\((.*)\)\s*$", header, re.S)
    inner = _SEQUENTIAL.match(m.group(1)) if m else None
    if inner is None or "," in inner.group(2):
        return None
    return inner.group(1), inner.group(2)


def _span(unit: Unit, nodes: list[Node], name: str) -> Binding:
    start = nodes[0].start_byte if nodes else 0
    end = nodes[-1].end_byte if nodes else 0
    return Binding(name, start, end, unit.text(start, end), tuple(nodes), unit.source)


def _strided(ctx: GuardContext, loop: Node) -> str:
    """Why the rewrite may leave ``loop`` sequential ('' when one of its sub-rules strides
    it): its header is not ``for (int C = A; C < N; C++)`` with a braced body, or its body is
    neither statements that assign only their own variables and memory, nor such statements
    followed by one or two accumulations (``acc += e;``, ``acc = fmaxf(acc, e);`` or, for a
    float, its max_idiom spellings) of variables that the accumulated expressions and the
    statements before do not mention, a sum's starting at 0 (``starts_at_zero``) or, a single
    sum, into a ``private_scalar`` of any start (the header and loop not naming it and
    ``partial`` not used in the loop: a zero partial strided, reduced, added once), or by a
    maximum and then statements of the first kind that do not mention it. The bound may be
    ``c < n`` or ``c <= n``. Those are the shapes and guards that
    row_kernels.rule's sub-rules stride, mirrored here: a loop they would not stride runs on
    every lane."""
    unit = ctx.unit
    where = f"`{snippet(text_of(unit.source, loop), 50)}` ({unit.where(loop.start_byte)})"
    if _header(unit, loop) is None:
        return f"{where} is not a loop `for (int c = a; c < n; c++) {{ ... }}` that the rewrite " \
               "strides by lane"
    body = loop.child_by_field_id(F_BODY)
    assert body is not None
    stmts = [c for c in body.named_children if c.type != "comment"] \
        if body.type == "compound_statement" else [body]
    if not stmts:
        return f"{where} is empty"
    whole = _span(unit, stmts, "$$$S")
    if not no_jumps(ctx, whole).ok:
        return f"{where} may leave its body early: the rewrite would not stride it"
    if assigns_only_locals(ctx, whole).ok:
        return ""
    for tail in (1, 2):
        if len(stmts) < tail:
            continue
        accs = [_accumulation(ctx, s) for s in stmts[-tail:]]
        if not all(accs):
            continue
        if tail == 2 and any(a is not None and a[1] is None for a in accs):
            continue  # (two accumulators: sums only)
        names = {a[0] for a in accs if a is not None}
        if len(names) != tail:
            continue  # (the same variable summed twice: the sub-rules refuse it)
        exprs = " ".join((a[1] or a[2] or "") for a in accs if a is not None)
        if any(re.search(rf"(?<![\w.]){re.escape(n)}\b", exprs) for n in names):
            continue
        pre = stmts[:-tail]
        if pre and not assigns_only_locals(ctx, _span(unit, pre, "$$$PRE")).ok:
            continue
        if any(a is not None and a[1] is not None and _inexact_sum_at(ctx, a[0], s)
               for a, s in zip(accs, stmts[-tail:], strict=True)):
            continue  # (an integer sum of floats: the sub-rules refuse it)
        if any(re.search(rf"(?<![\w.]){re.escape(n)}\b", text_of(unit.source, p))
               for n in names for p in pre):
            continue  # (the statements before read the accumulator)
        zero = [_not_zero_at(ctx, a[0], loop.start_byte, loop.end_byte)
                for a in accs if a is not None and a[1] is not None]
        if not any(zero):
            return ""
        if tail == 1 and _sums_from_any_start(ctx, loop, accs[0][0]):
            return ""
        return f"{where} sums into a variable that does not start at 0 there: the rewrite " \
               f"would not stride it ({next(z for z in zero if z)})"
    # a maximum with statements after it: the first statement that is an accumulation is a
    # maximum of a variable that the expression, the statements before and those after do
    # not mention, and both runs write only their own variables and memory
    first = next((i for i, st in enumerate(stmts) if _accumulation(ctx, st) is not None), None)
    if first is not None and first < len(stmts) - 1:
        acc = _accumulation(ctx, stmts[first])
        assert acc is not None
        name = re.compile(rf"(?<![\w.]){re.escape(acc[0])}\b")
        pre, post = stmts[:first], stmts[first + 1:]
        if acc[1] is None and acc[2] is not None and not name.search(acc[2]) \
                and not any(name.search(text_of(unit.source, p)) for p in pre + post) \
                and (not pre or assigns_only_locals(ctx, _span(unit, pre, "$$$PRE")).ok) \
                and assigns_only_locals(ctx, _span(unit, post, "$$$POST")).ok:
            return ""
    if _scanned(ctx, loop, stmts):
        return ""
    return f"{where} assigns variables declared outside it other than as the sum or maximum " \
           "it accumulates last: the rewrite would not stride it"


def _sums_from_any_start(ctx: GuardContext, loop: Node, acc: str) -> bool:
    """Does the rule's sub-rule for a sum of any start stride ``loop`` (its body's last
    statement sums into ``acc``)? A fresh zero ``partial`` strides the row and is added
    once to ``acc``: ``acc`` a ``private_scalar``, not in the loop's header, and the name
    ``partial`` nowhere in the loop."""
    unit = ctx.unit
    body = loop.child_by_field_id(F_BODY)
    if body is None or re.search(r"(?<![\w.])partial\b", text_of(unit.source, loop)):
        return False
    head = unit.source[loop.start_byte:body.start_byte].decode("utf-8", "replace")
    if re.search(rf"(?<![\w.]){re.escape(acc)}\b", head):
        return False
    return _private_scalar_why(ctx, acc, loop.start_byte) == ""


_SCAN_NAMES = re.compile(r"(?<![\w.])(?:chunk|scan|up|below|carry)\b")


def _scanned(ctx: GuardContext, loop: Node, stmts: list[Node]) -> bool:
    """Is ``loop`` the prefix-sum sweep that the rule's scan sub-rule strides (chunk by
    chunk, column chunk + lane on each lane, so element c is lane c % 32's as in the
    loops strided from 0)? ``for (int c = 0; c < n; c++) { acc += e; POST }``: a start of
    0 and a bound ``<``, ``acc`` not in ``e`` nor in the header but read by POST, POST
    writing only its own variables and memory, and none of the names the rewrite declares
    in the loop."""
    unit = ctx.unit
    header = _header(unit, loop)
    body = loop.child_by_field_id(F_BODY)
    if header is None or body is None or header[1].strip() != "0" or len(stmts) < 2:
        return False
    head = unit.source[loop.start_byte:body.start_byte].decode("utf-8", "replace")
    if re.search(r"<=|>=", head) or _SCAN_NAMES.search(text_of(unit.source, loop)):
        return False
    m = _ACCUMULATE.match(text_of(unit.source, stmts[0]))
    if m is None or m.group(2) is None:
        return False
    name = re.compile(rf"(?<![\w.]){re.escape(m.group(1))}\b")
    if name.search(m.group(2)) or name.search(head) \
            or not any(name.search(text_of(unit.source, p)) for p in stmts[1:]) \
            or _inexact_sum_at(ctx, m.group(1), stmts[0]):
        return False
    return assigns_only_locals(ctx, _span(unit, stmts[1:], "$$$POST")).ok


def _outermost_loop(node: Node, start: int, end: int) -> Node | None:
    """The outermost loop around ``node`` that lies inside [start, end)."""
    found = None
    p = node.parent
    while p is not None and p.start_byte >= start and p.end_byte <= end:
        if p.type in LOOP_TYPES:
            found = p
        p = p.parent
    return found


def _family(ctx: GuardContext, fn: Function, name: str) -> frozenset[str]:
    """What may reach the memory ``name`` reaches: its aliases and, where it is derived from
    a pointer parameter (a row pointer), that parameter's aliases."""
    names = set(aliases_of(ctx, name))
    for p in fn.params:
        if p.pointer > 0 or p.array:
            mine = aliases_of(ctx, p.name)
            if name in mine:
                names |= mine
    return frozenset(names)


def _fixed(ctx: GuardContext, fn: Function, word: str, start: int, end: int) -> bool:
    """Does the variable ``word`` keep one value throughout [start, end)? Never assigned,
    incremented or address-taken in the function, and not declared inside a loop there."""
    unit, src = ctx.unit, ctx.unit.source
    for node in in_span(nodes_of(unit, "assignment_expression", "update_expression"),
                        fn.body_start, fn.body_end):
        target = node.child_by_field_id(F_LEFT if node.type == "assignment_expression"
                                        else F_ARGUMENT)
        if target is not None and unparen(target).type == "identifier" \
                and text_of(src, unparen(target)) == word:
            return False
    if address_taken(src, word, fn.body_start, fn.body_end):
        return False
    for d in function_declarations(unit, fn):
        if d.name == word and start <= d.start < end:
            node = unit.root.descendant_for_byte_range(d.start, d.end)
            if node is not None and _outermost_loop(node, start, end) is not None:
                return False
    return True


def _access(unit: Unit, node: Node) -> tuple[str, Node] | None:
    """(base, index) of a subscript ``base[index]`` of one index; None otherwise."""
    if node.type != "subscript_expression":
        return None
    base = unparen(node.child_by_field_id(F_ARGUMENT))
    idx = node.child_by_field_id(F_INDICES)
    inner = [c for c in idx.named_children if c.type != "comment"] if idx is not None else []
    if base.type != "identifier" or len(inner) != 1:
        return None
    return text_of(unit.source, base), inner[0]


def _lane_index(unit: Unit, index: Node, var: str) -> str | None:
    """The index with the loop variable as ``@`` (spacing aside), where it is ``var`` plus
    terms that do not mention ``var`` (``c``, ``row * n + c``, ``c + off``): each iteration
    reaches a different element. None otherwise."""
    src = unit.source
    terms: list[Node] = []
    stack = [unparen(index)]
    while stack:
        n = stack.pop()
        if n.type == "binary_expression" and operator_of(n) == "+":
            stack += [unparen(c) for c in (n.child_by_field_id(F_LEFT),
                                           n.child_by_field_id(F_RIGHT)) if c is not None]
        else:
            terms.append(n)
    mine = [t for t in terms if t.type == "identifier" and text_of(src, t) == var]
    word = re.compile(rf"(?<![\w.]){re.escape(var)}\b")
    if len(mine) != 1 or any(word.search(text_of(src, t)) for t in terms if t is not mine[0]):
        return None
    return word.sub("@", "".join(text_of(src, index).split()))


@predicate("lane_owned_updates", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           reads=("arguments", "declarations", "position"))
def lane_owned_updates(ctx: GuardContext, stmts: Binding) -> Verdict:
    """Every write of memory in $$$S keeps its effect when a warp runs $$$S with its
    sequential loops strided by lane. An in-place update (``+=``-style, ``++``, ``--`` of an
    array element, or a store whose value reads the same memory, ``y[j] = a * s + b *
    y[j]``) and any store inside a loop that the rewrite strides must be ``b[i] ...`` in a
    loop ``for (int c = a; c < n; c++) {...}`` of $$$S (nested in no other loop there) that
    the rewrite strides (its body: statements writing only their own variables and memory,
    then at most the sums or maximum it accumulates), with ``i`` the loop variable plus
    terms that do not change (``c``, ``row * n + c``), and the memory of ``b`` (its aliases,
    the parameter it is a row of) reached in the whole function only as ``b[i]`` in such
    loops with the same start: the element an iteration writes is touched by that
    iteration's lane alone. A store that every lane runs (outside such loops) writes the
    same value 32 times, which holds where nothing in $$$S reads that memory before it."""
    unit, src, fn = ctx.unit, ctx.unit.source, ctx.function
    if fn is None:
        return _no(ctx, f"{quoted(stmts)} is not in a function", stmts.start)
    writes = []
    for node in in_span(nodes_of(unit, "assignment_expression", "update_expression"), stmts.start,
                        stmts.end):
        target = node.child_by_field_id(F_LEFT if node.type == "assignment_expression"
                                        else F_ARGUMENT)
        if target is None or unparen(target).type == "identifier":
            continue
        target = unparen(target)
        update = node.type == "update_expression" or operator_of(node) != "="
        if not update:  # y[j] = a * s + b * y[j]: an update spelled as a store
            right = node.child_by_field_id(F_RIGHT)
            family = frozenset().union(*(_family(ctx, fn, r) for r in pointer_roots(target, src)))
            update = right is not None and _reads(ctx, right, family) is not None
        writes.append((node, target, update))
    checked: set[str] = set()
    updates = 0
    for node, target, update in sorted(writes, key=lambda w: not w[2]):  # (updates first)
        what = f"`{snippet(text_of(src, node))}` ({unit.where(node.start_byte)})"
        doing = "updates memory in place" if update else "stores to memory"
        loop = _outermost_loop(node, stmts.start, stmts.end)
        why = _strided(ctx, loop) if loop is not None else "it is outside the loops the " \
            "rewrite strides"
        if why and not update:
            if loop is not None and _header(unit, loop) is not None:
                return _no(ctx, f"{what} stores to memory in a loop that the rewrite may or may "
                           f"not stride by lane: {why}", node.start_byte)
            why = _read_before(ctx, fn, stmts, target, loop or node)
            if why:
                return _no(ctx, f"{what} stores to memory that every lane runs, and {why}",
                           node.start_byte)
            continue  # (32 lanes store the same value)
        if loop is None:
            return _no(ctx, f"{what} updates memory in place outside the loops the rewrite "
                       "strides: every lane would apply it", node.start_byte)
        if why:
            return _no(ctx, f"{what} {doing}, and {why}", node.start_byte)
        updates += update
        access = _access(unit, target)
        header = _header(unit, loop)
        assert header is not None
        key = _lane_index(unit, index_value(ctx, stmts.start, stmts.end, access[1]),
                          header[0]) if access is not None else None
        if access is None or key is None:
            return _no(ctx, f"{what} {doing} at an element whose index is not the loop "
                       f"variable `{header[0]}` plus terms that stay fixed", node.start_byte)
        if access[0] in checked:
            continue
        checked.add(access[0])
        why = _touched_elsewhere(ctx, fn, stmts, access[0], key, header)
        if why:
            return _no(ctx, f"{what} {doing}, and {why}", node.start_byte)
    if not updates and not checked:
        return _yes(f"{quoted(stmts)} updates no memory in place and stores only what every "
                    "lane stores alike", stmts.start)
    return _yes(f"each write in the loops of {quoted(stmts)} touches the element of its "
                f"iteration, which one lane owns ({updates} in-place update"
                f"{'s' if updates != 1 else ''})", stmts.start)


_ACCESSES = frozenset({"subscript_expression", "pointer_expression"})


def _reads(ctx: GuardContext, node: Node, family: frozenset[str]) -> Node | None:
    """The first access in ``node`` to memory that ``family`` reaches (None: none)."""
    src = ctx.unit.source
    for n in nodes_within(ctx.unit, _ACCESSES, node.start_byte, node.end_byte):
        if (n.type == "subscript_expression" or operator_of(n) == "*") \
                and pointer_roots(n, src) & family:
            return n
    return None


def _read_before(ctx: GuardContext, fn: Function, stmts: Binding, target: Node, at: Node
                 ) -> str:
    """Why a store that every lane runs may race with a read ('' when it may not): code of
    $$$S before the end of ``at`` (the store, or the loop the rewrite leaves sequential
    around it) reads the memory it stores to, and may read it after another lane stored."""
    unit, src = ctx.unit, ctx.unit.source
    family = frozenset().union(*(_family(ctx, fn, r) for r in pointer_roots(target, src)))
    for n in nodes_within(unit, _ACCESSES, stmts.start, at.end_byte):
        if n.start_byte == target.start_byte and n.end_byte == target.end_byte:
            continue
        if target.start_byte <= n.start_byte < target.end_byte:
            continue  # (its own index)
        if (n.type == "subscript_expression" or operator_of(n) == "*") \
                and pointer_roots(n, src) & family:
            return f"`{snippet(text_of(src, n))}` ({unit.where(n.start_byte)}) reads that " \
                   "memory before it: a lane may read it after another lane's store"
    return ""


def _touched_elsewhere(ctx: GuardContext, fn: Function, stmts: Binding, base: str, key: str,
                       header: tuple[str, str]) -> str:
    """Why the memory of ``base`` may be touched by another lane than the one that owns the
    updated element ('' when it may not): an access to it anywhere in the function other than
    ``base[key]`` in a strided loop starting at ``start``, a call or asm that receives it, or
    a variable of the index, the start or the base that changes."""
    unit, src = ctx.unit, ctx.unit.source
    start = header[1]
    shown = f"`{base}[{key.replace('@', header[0])}]`"
    family = _family(ctx, fn, base)
    words = set(re.findall(r"[A-Za-z_]\w*", key + " " + start)) | {base}
    for w in sorted(words):
        if not _fixed(ctx, fn, w, stmts.start, stmts.end):
            return f"`{w}` (in {shown} or its loop's start `{start}`) may change between " \
                   "the loops"
    for node in in_span(nodes_of(unit, "subscript_expression", "pointer_expression",
                                 "call_expression", "gnu_asm_expression"), fn.body_start,
                    fn.body_end):
        where = f"`{snippet(text_of(src, node))}` ({unit.where(node.start_byte)})"
        if node.type in ("call_expression", "gnu_asm_expression"):
            args = node.child_by_field_id(F_ARGUMENTS)
            parts = args.named_children if args is not None else [node]
            if any(_hands_family(ctx, fn, a, family) if node.type != "gnu_asm_expression"
                   else pointer_roots(a, src) & family for a in parts if a.type != "comment"):
                return f"{where} hands the memory of `{base}` to a call"
            continue
        if node.type == "pointer_expression" and operator_of(node) == "&":
            continue  # (an address, not an access: what holds it is an alias)
        if node.type == "subscript_expression" and node.parent is not None \
                and node.parent.type == "pointer_expression" and operator_of(node.parent) == "&":
            if pointer_roots(node, src) & family and not _declares_alias(node.parent):
                return f"`{snippet(text_of(src, node.parent))}` " \
                       f"({unit.where(node.start_byte)}) takes the address of an element of " \
                       f"`{base}`"
            continue
        if not (pointer_roots(node, src) & family):
            continue
        access = _access(unit, node)
        loop = _outermost_loop(node, stmts.start, stmts.end)
        header = _header(unit, loop) if loop is not None else None
        if access is None or header is None or access[0] != base \
                or _lane_index(unit, index_value(ctx, stmts.start, stmts.end, access[1]),
                               header[0]) != key \
                or "".join(header[1].split()) != "".join(start.split()) \
                or _strided(ctx, loop):
            return f"{where} reaches the memory of `{base}` other than as {shown} in a loop " \
                   f"the rewrite strides from `{start}`: another lane may touch the element"
    return ""


def _hands_family(ctx: GuardContext, fn: Function, arg: Node, family: frozenset[str]) -> bool:
    """Does a call argument hand over an address of memory that ``family`` reaches? As
    ``passes_pointer`` says, except that a sum or difference is judged by its operands, and
    an element ``b[i]`` of a single pointer or one-dimensional array ``b`` is a loaded value
    (``expf(row[c] - m)`` hands over no address)."""
    src = ctx.unit.source
    arg = unparen(arg)
    if arg.type == "binary_expression" and operator_of(arg) in ("+", "-"):
        sides = [arg.child_by_field_id(F_LEFT), arg.child_by_field_id(F_RIGHT)]
        return any(_hands_family(ctx, fn, n, family) for n in sides if n is not None)
    if arg.type == "subscript_expression":
        base = unparen(arg.child_by_field_id(F_ARGUMENT))
        if base.type == "identifier" and _levels(ctx, fn, text_of(src, base), arg.start_byte) == 1:
            return False
    return bool(pointer_roots(arg, src) & family) and passes_pointer(arg, src)


def _levels(ctx: GuardContext, fn: Function, name: str, at: int) -> int | None:
    """Levels of indirection of the variable ``name`` declared before ``at`` in ``fn`` (or
    its parameter): pointers plus array dimensions; None where it is not declared there."""
    decls = [d for d in function_declarations(ctx.unit, fn) if d.name == name and d.start < at]
    if decls:
        d = decls[-1]
        return None if d.reference else d.pointer + max(len(d.dims) - (1 if d.pointer else 0), 0)
    for p in fn.params:
        if p.name == name:
            return None if p.reference else p.pointer + (1 if p.array and not p.pointer else 0)
    return None


def _declares_alias(node: Node) -> bool:
    """Is ``node`` (``&x[i]``) the initializer of a declaration (a row pointer)?"""
    p = node.parent
    return p is not None and p.type == "init_declarator"


_ZERO = re.compile(r"^[(\s]*(?:0+\.?0*|\.0+)(?:[eE][+-]?\d+)?[fFuUlL]*[)\s]*$")


@predicate("starts_at_zero", ArgSpec("$X", frozenset({"metavar"})),
           reads=("declarations", "position"))
def starts_at_zero(ctx: GuardContext, x: Binding) -> Verdict:
    """The local variable $X holds 0 where the match starts: declared with a zero
    initializer (``0``, ``0.0f``, ``0u``) before the match, not assigned, incremented or
    address-taken between, and in every loop around the match (a loop that does not also
    hold the declaration would reach the match again with what the match left). A sum that
    a rewrite splits across the lanes of a warp and adds back with shuffles counts its
    starting value once per lane: only 0 stays the same."""
    m = ctx.match
    name = x.text.strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return _no(ctx, f"{quoted(x)} is not a variable", x.start)
    why = _not_zero_at(ctx, name, m.start, m.end)
    if why:
        return _no(ctx, why, x.start)
    return _yes(f"`{name}` is 0 where {ctx.unit.where(m.start)} starts", x.start)


def _not_zero_at(ctx: GuardContext, name: str, start: int, end: int) -> str:
    """Why the local ``name`` may not hold 0 where the code [start, end) starts ('' when it
    does): ``starts_at_zero``'s judgement."""
    unit, src = ctx.unit, ctx.unit.source
    decl = lookup(ctx, name, start)
    if decl is None or decl.origin != "local" or decl.start >= start:
        return f"`{name}` is not a local declared before {unit.where(start)}"
    cite = cited(unit, decl.start, decl.end)
    if decl.init is None or not _ZERO.match(text_of(src, decl.init)):
        return f"`{name}` does not start at 0 ({cite}): each lane's partial sum would count " \
               "it once"
    if is_assigned(ctx, name, decl.end, start) or address_taken(src, name, decl.end, start):
        return f"`{name}` may change between its declaration ({cite}) and {unit.where(start)}"
    node = unit.root.descendant_for_byte_range(start, end)
    while node is not None and start <= node.start_byte and node.end_byte <= end:
        node = node.parent  # (from the code around [start, end))
    while node is not None:
        if node.type in LOOP_TYPES and not node.start_byte <= decl.start < node.end_byte:
            return f"the loop at {unit.where(node.start_byte)} reaches {unit.where(start)} " \
                   f"again with `{name}` no longer 0 ({cite})"
        node = node.parent
    return ""


# the scalar types __shfl_xor_sync takes (cuda_fp16.h and cuda_bf16.h add the last four)
_SHUFFLED = frozenset({"float", "double", "int", "unsigned", "unsigned int", "signed",
                       "signed int", "long", "long int", "unsigned long", "long long",
                       "long long int", "unsigned long long", "unsigned long int",
                       "unsigned long long int", "__half", "half", "__nv_bfloat16",
                       "nv_bfloat16"})


@predicate("private_scalar", ArgSpec("$X", frozenset({"metavar"})),
           reads=("declarations", "position"))
def private_scalar(ctx: GuardContext, x: Binding) -> Verdict:
    """$X is a local scalar of the enclosing function, declared before the match: not a
    parameter or a global, not ``static``, ``__shared__``, a reference, a pointer or an array,
    its address never taken, and of a type that ``__shfl_xor_sync`` takes (``float``,
    ``double``, the 32- and 64-bit integers, ``__half``, ``__nv_bfloat16``) or a type
    parameter of the function's template. Each lane of a warp then holds a copy of its own:
    a rewrite that adds a warp-reduced partial sum to it once per lane (``acc += partial;``)
    adds it once to each copy, whatever value the copies held."""
    m, unit = ctx.match, ctx.unit
    name = x.text.strip()
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return _no(ctx, f"{quoted(x)} is not a variable", x.start)
    why = _private_scalar_why(ctx, name, m.start)
    if why:
        return _no(ctx, why, x.start)
    decl = lookup(ctx, name, m.start)
    assert decl is not None
    return _yes(f"`{name}` is a local `{decl.base}` of its own on each lane "
                f"({cited(unit, decl.start, decl.end)})", x.start)


def _private_scalar_why(ctx: GuardContext, name: str, at: int) -> str:
    """Why the variable ``name`` used at ``at`` is not a ``private_scalar`` ('' when it is)."""
    unit, src = ctx.unit, ctx.unit.source
    decl = lookup(ctx, name, at)
    if decl is None or decl.origin != "local" or decl.start >= at:
        return f"`{name}` is not a local declared before {unit.where(at)}: every lane would " \
               "add its partial sum to the same variable"
    cite = cited(unit, decl.start, decl.end)
    if decl.qualifiers & {"static", "__shared__", "extern", "__device__", "__constant__"} \
            or decl.reference or decl.pointer or decl.dims:
        return f"`{name}` ({cite}) is not a plain local scalar (static, shared, a reference, " \
               "a pointer or an array)"
    fn = ctx.function
    params = {p.name for p in fn.template_params if p.kind == "type"} if fn is not None \
        else set()
    base = " ".join(decl.base.replace("const", " ").replace("volatile", " ").split())
    if base not in _SHUFFLED and base not in params:
        return f"`{name}` ({cite}) is a `{decl.base}`, which __shfl_xor_sync does not take"
    body_start = fn.body_start if fn is not None else 0
    body_end = fn.body_end if fn is not None else len(src)
    if address_taken(src, name, body_start, body_end):
        return f"the address of `{name}` ({cite}) is taken: what holds it may change it"
    return ""


_BLOCK_NAMES = re.compile(r"(?<![\w.])(?:partial2?|partials2?|maxima|warp|offset)\b")


@predicate("block_strided_shapes", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           reads=("declarations", "position"))
def block_strided_shapes(ctx: GuardContext, stmts: Binding) -> Verdict:
    """Every loop of $$$S that ``lane_owned_updates`` counts as strided (a sequential header
    ``for (int c = a; c < n; c++)``, or ``<=``, and a body the warp rewrite strides) is one
    that thread_per_row_to_block_per_row strides too: its body writes only its own variables
    and memory, or it ends with the one sum ``acc += e;``, the one maximum ``acc =
    fmaxf(acc, e);`` (or a max_idiom spelling) or the two sums that it accumulates, or it
    holds a maximum followed by statements, each ``acc`` a ``private_scalar`` in neither the
    header, the accumulated expressions nor the other statements, and none of the names the
    block rewrite declares (``partial``, ``partial2``, ``partials``, ``partials2``,
    ``maxima``, ``warp``, ``offset``) in the loop. A loop that the predicate would count as
    strided but the block rewrite runs whole on every thread (a prefix sum) would apply its
    in-place updates once per thread: refused."""
    unit, src = ctx.unit, ctx.unit.source
    for loop in in_span(nodes_of(unit, "for_statement"), stmts.start, stmts.end):
        if _header(unit, loop) is None or _strided(ctx, loop):
            continue  # (run whole by every thread: what lane_owned_updates judges so)
        where = f"`{snippet(text_of(src, loop), 50)}` ({unit.where(loop.start_byte)})"
        if _BLOCK_NAMES.search(text_of(src, loop)):
            return _no(ctx, f"{where} uses a name the block rewrite declares (partial, "
                       "partial2, partials, partials2, maxima, warp, offset)", loop.start_byte)
        body = loop.child_by_field_id(F_BODY)
        assert body is not None
        inner = [c for c in body.named_children if c.type != "comment"] \
            if body.type == "compound_statement" else [body]
        if assigns_only_locals(ctx, _span(unit, inner, "$$$S")).ok:
            continue
        head = src[loop.start_byte:body.start_byte].decode("utf-8", "replace")
        if any(_block_sums(ctx, loop, head, inner, tail) for tail in (1, 2)) \
                or _block_max_then(ctx, loop, head, inner):
            continue
        return _no(ctx, f"{where} is a loop the warp rewrite strides but the block rewrite "
                   "does not (a prefix sum): every thread would run it whole", loop.start_byte)
    return _yes(f"every strided loop of {quoted(stmts)} is a sweep, a sum or a maximum the "
                "block rewrite strides", stmts.start)


def _block_sums(ctx: GuardContext, loop: Node, head: str, inner: list[Node], tail: int
                ) -> bool:
    """Do the last ``tail`` statements of the loop body ``inner`` accumulate what one of
    thread_per_row_to_block_per_row's sub-rules reduces across the block? One sum or one
    maximum, or two sums of different variables; each a ``private_scalar`` that the header,
    the accumulated expressions and the statements before do not mention; the statements
    before write only their own variables and memory."""
    unit, src = ctx.unit, ctx.unit.source
    if len(inner) < tail:
        return False
    accs = [_accumulation(ctx, st) for st in inner[-tail:]]
    if not all(accs) or (tail == 2 and any(a is not None and a[1] is None for a in accs)):
        return False
    names = [a[0] for a in accs if a is not None]
    if len(set(names)) != len(names):
        return False
    exprs = " ".join((a[1] or a[2] or "") for a in accs if a is not None)
    pre = inner[:-tail]
    for n in names:
        word = re.compile(rf"(?<![\w.]){re.escape(n)}\b")
        if word.search(head) or word.search(exprs) \
                or any(word.search(text_of(src, p)) for p in pre) \
                or _private_scalar_why(ctx, n, loop.start_byte):
            return False
    return not pre or assigns_only_locals(ctx, _span(unit, pre, "$$$PRE")).ok


def _block_max_then(ctx: GuardContext, loop: Node, head: str, inner: list[Node]) -> bool:
    """Is the loop body ``inner`` statements, a maximum ``acc = fmaxf(acc, e);`` (or a
    max_idiom spelling) and statements after it, that thread_per_row_to_block_per_row's
    sub-rule for a maximum followed by statements strides? ``acc`` a ``private_scalar`` that
    the header, ``e`` and the statements before and after do not mention, both runs writing
    only their own variables and memory."""
    unit, src = ctx.unit, ctx.unit.source
    first = next((i for i, st in enumerate(inner) if _accumulation(ctx, st) is not None), None)
    if first is None or first == len(inner) - 1:
        return False
    acc = _accumulation(ctx, inner[first])
    if acc is None or acc[1] is not None or acc[2] is None:
        return False
    word = re.compile(rf"(?<![\w.]){re.escape(acc[0])}\b")
    pre, post = inner[:first], inner[first + 1:]
    return not word.search(head) and not word.search(acc[2]) \
        and not any(word.search(text_of(src, p)) for p in pre + post) \
        and (not pre or assigns_only_locals(ctx, _span(unit, pre, "$$$PRE")).ok) \
        and assigns_only_locals(ctx, _span(unit, post, "$$$POST")).ok \
        and _private_scalar_why(ctx, acc[0], loop.start_byte) == ""


_FLOATING = frozenset({"float", "double", "__half", "half", "__nv_bfloat16", "nv_bfloat16"})


@predicate("exact_sum", ArgSpec("$ACC", frozenset({"metavar"})),
           ArgSpec("$E", frozenset({"metavar"})), reads=("declarations", "position"))
def exact_sum(ctx: GuardContext, acc: Binding, e: Binding) -> Verdict:
    """Summing $E into $ACC piece by piece gives the sum of the pieces, whatever the order up
    to floating-point rounding: $ACC is a floating-point variable (``float``, ``double``,
    ``__half``, ``__nv_bfloat16``, or a type parameter of the function's template), or an
    integer one and $E an integer expression. An integer accumulator of a floating-point
    summand truncates at every step (``int acc; acc += 0.7f;``): partial sums truncate at
    other places than the sequential loop, and the total changes."""
    why = _inexact_sum(ctx, acc.text.strip(), e, ctx.match.start)
    if why:
        return _no(ctx, why, acc.start)
    return _yes(f"{quoted(e)} sums into `{acc.text.strip()}` exactly or by float rounding",
                acc.start)


def _inexact_sum(ctx: GuardContext, name: str, e: Binding, at: int) -> str:
    """Why summing ``e`` into the variable ``name`` in pieces may truncate differently from
    the sequential loop ('' when it cannot): ``exact_sum``'s judgement. An element of an
    array or pointer (``val[i]``) has the element type of its declaration."""
    element = re.fullmatch(r"([A-Za-z_]\w*)\s*(?:\[[^\[\]]*\]\s*)+", name)
    decl = lookup(ctx, element.group(1) if element else name, at)
    if decl is None:
        return f"the type of `{name}` is not known"
    fn = ctx.function
    params = {p.name for p in fn.template_params if p.kind == "type"} if fn is not None \
        else set()
    base = " ".join(decl.base.replace("const", " ").replace("volatile", " ").split())
    if base in _FLOATING or base in params:
        return ""
    if has_type_kind(ctx, e, "int_expr"):
        return ""
    return f"`{name}` is a `{decl.base}` and {quoted(e)} is not known to be an integer: each " \
           "step would truncate, and partial sums truncate elsewhere"


def _inexact_sum_at(ctx: GuardContext, name: str, stmt: Node) -> str:
    """``_inexact_sum`` for the statement ``name += e;`` (a reason too when it is not one)."""
    e = _summand(ctx.unit, stmt)
    if e is None:
        return f"`{snippet(text_of(ctx.unit.source, stmt))}` is not a sum `acc += e;`"
    return _inexact_sum(ctx, name, e, stmt.start_byte)


def _summand(unit: Unit, stmt: Node) -> Binding | None:
    """The summed expression of ``acc += e;`` as a binding (None for another statement)."""
    expr = stmt.named_children[0] if stmt.type == "expression_statement" \
        and stmt.named_children else None
    if expr is None or expr.type != "assignment_expression" or operator_of(expr) != "+=":
        return None
    right = expr.child_by_field_id(F_RIGHT)
    return _span(unit, [right], "$E") if right is not None else None


@predicate("no_storing_calls", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           reads=("arguments",))
def no_storing_calls(ctx: GuardContext, stmts: Binding) -> Verdict:
    """The code bound to $$$S calls nothing that may store to memory: no atomic, store
    intrinsic (``__st*``), ``memcpy``/``memset``, ``printf`` or fence, no function this file
    defines (a helper that may update memory through a pointer it is given) and no ``asm``.
    Stores that the code writes itself are judged by ``lane_owned_updates``; a call's would
    run once per lane (or thread) where a row's rewrite runs the code on many."""
    unit, src = ctx.unit, ctx.unit.source
    start, end = stmts.start, stmts.end
    if re.search(rb"\basm\b|__asm__", src[start:end]):
        return _no(ctx, f"{quoted(stmts)} holds inline asm", start)
    defined = {f.name for f in unit.functions}
    for node in in_span(nodes_of(unit, "call_expression"), start, end):
        callee = node.child_by_field_name("function")
        name = text_of(src, callee).split("<")[0].strip() if callee is not None else ""
        why = helper_call_unsafe(ctx, node, start, end) if name in defined else ""
        if _STORING_CALL.fullmatch(name) or why:
            return _no(ctx, f"`{snippet(text_of(src, node))}` ({unit.where(node.start_byte)}) "
                       f"may store to memory{f' ({why})' if why else ''}: every lane (or "
                       "thread) of the row would call it", node.start_byte)
    return _yes(f"{quoted(stmts)} calls nothing that stores", start)
