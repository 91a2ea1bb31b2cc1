"""Writes, aliases and escapes (``klc.analysis`` layer 2, over declarations).

``_write_entries`` lists once per function every place that may write memory (stores,
atomics, calls that receive a pointer, method calls, asm) with the variables the written
memory may be reached through (``writes_to``, asked about some buffers, reads only the
statements that spell one of them); ``_address_holders`` lists what may come to hold an address
taken from another variable (local pointers, references, ``auto``, assignments, aggregates),
whose closure ``aliases_of`` gives. ``kernel_type_pinned`` says where a kernel's name escapes
(a use that fixes its type, a second declaration, a header that names it)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from tree_sitter import Node

from klc.analysis.declarations import function_declarations, lookup
from klc.analysis.tree import (
    Place,
    binding_node,
    cast_target,
    cited,
    in_span,
    names_in,
    nodes_of,
    operator_of,
    pointer_roots,
    text_of,
    unit_memo,
    unparen,
)
from klc.cuda.syntax import (
    F_ARGUMENT,
    F_ARGUMENTS,
    F_DECLARATOR,
    F_FUNCTION,
    F_LEFT,
    word_occurrences,
)
from klc.errors import KlcError
from klc.fsutil import read_input

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit
    from klc.match.model import Binding


_READ_ONLY_CALLS = re.compile(r"^(?:__ld\w*|__ldg|min|max|fminf?|fmaxf?|make_\w+|printf|"
                              r"static_cast|reinterpret_cast|const_cast|__shfl\w*|sizeof)$")
_SCOPE_SEPARATORS = re.compile(r"::|\.|->")
_STORE_CALLS = re.compile(r"^(?:__st\w+|memcpy|memset|cuda::memcpy_async|__pipeline_memcpy_async"
                          r"|cp_async\w*)$")


def aliases_of(ctx: Place, name: str) -> frozenset[str]:
    """``name`` and the local pointers initialised from it (``float* p = x + off``); once
    per function and name."""
    fn = ctx.function
    if fn is None:
        return frozenset({name})
    return unit_memo(ctx.unit, f"aliases:{fn.start}:{fn.end}:{name}",
                     lambda: frozenset(_find_aliases(ctx, fn, name)))


def _find_aliases(ctx: Place, fn: Function, name: str) -> set[str]:
    names = {name}
    src = ctx.unit.source
    # what may hold an address taken from another variable, found once per function (each
    # one's roots read on first need, once): the closure over them is the same in any order
    pointers = unit_memo(ctx.unit, f"pointers:{fn.start}:{fn.end}",
                         lambda: _address_holders(ctx.unit, fn))
    changed = True
    while changed:
        changed = False
        for entry in pointers:
            other = entry[0]
            if other in names:
                continue
            if entry[2] is None:
                entry[2] = pointer_roots(entry[1], src)
            if entry[2] & names:
                names.add(other)
                changed = True
    return names


def _address_holders(unit: Unit, fn: Function) -> list[list[Any]]:
    """[holder, the expression it takes an address from, None] for each place in ``fn``
    where a variable may come to reach memory through another: an initialised local pointer
    (``float *d_Src = d_Input + base;``), reference (``Node &node = nodes[i];``) or ``auto``;
    an assignment of an address to a variable (``p = x + off;``); an address stored into an
    aggregate or array (``s.ptr = x;``, ``Params p = {x, n};``: then ``p`` reaches ``x``).
    Over-approximate on purpose: a write through any holder counts as a write."""
    src = unit.source
    decls = function_declarations(unit, fn)
    levels = {p.name: p.pointer + (1 if p.array else 0) for p in fn.params}
    for d in decls:
        levels[d.name] = max(levels.get(d.name, 0), d.pointer)
    out: list[list[Any]] = []
    for d in decls:
        if d.init is None:
            continue
        if d.pointer > 0 or d.reference:
            out.append([d.name, d.init, None])
        elif d.init.type in ("initializer_list", "argument_list") or d.base == "auto":
            for part in (d.init.named_children if d.base != "auto" else [d.init]):
                if part.type != "comment" and _pointer_valued(part, src, levels):
                    out.append([d.name, part, None])
    for node in in_span(nodes_of(unit, "assignment_expression"), fn.body_start, fn.body_end):
        if operator_of(node) != "=":
            continue
        left, right = node.child_by_field_id(F_LEFT), node.child_by_field_name("right")
        if left is None or right is None or not _pointer_valued(right, src, levels):
            continue
        holder = unparen(left)
        if holder.type == "identifier":
            out.append([text_of(src, holder), right, None])
        else:
            for root in pointer_roots(holder, src):
                out.append([root, right, None])
    return out


def _pointer_valued(node: Node, src: bytes, levels: Mapping[str, int], depth: int = 0) -> bool:
    """Is this expression an address (not a value loaded through one)? ``levels``: the
    pointer levels of the function's parameters and locals by name."""
    node = unparen(node)
    t = node.type
    if depth > 50:
        return True  # (deeper than real code: count it as an address, which is the safe side)
    if t == "identifier":
        return levels.get(text_of(src, node), 0) > 0
    if t == "pointer_expression":
        if operator_of(node) == "&":
            return True
        arg = node.child_by_field_id(F_ARGUMENT)
        return arg is not None and _pointer_level(arg, src, levels) > 1
    if t == "subscript_expression":
        return _pointer_level(node.child_by_field_id(F_ARGUMENT), src, levels) > 1
    if t == "binary_expression" and operator_of(node) in ("+", "-"):
        return any(_pointer_valued(c, src, levels, depth + 1) for c in
                   (node.child_by_field_name("left"), node.child_by_field_name("right"))
                   if c is not None)
    if t == "conditional_expression":
        return any(_pointer_valued(c, src, levels, depth + 1) for c in
                   (node.child_by_field_name("consequence"),
                    node.child_by_field_name("alternative")) if c is not None)
    ty, _ = cast_target(node, src)
    return ty is not None and "*" in text_of(src, ty)


def _pointer_level(node: Node | None, src: bytes, levels: Mapping[str, int]) -> int:
    node = unparen(node) if node is not None else None
    if node is None:
        return 0
    if node.type == "identifier":
        return levels.get(text_of(src, node), 0)
    if node.type == "subscript_expression":
        return max(0, _pointer_level(node.child_by_field_id(F_ARGUMENT), src, levels) - 1)
    return 0


def is_assigned(ctx: Place, name: str, start: int, end: int) -> bool:
    """Is the variable ``name`` itself assigned or incremented in [start, end)?"""
    src = ctx.unit.source
    for node in in_span(nodes_of(ctx.unit, "assignment_expression", "update_expression"), start,
                        end):
        target = node.child_by_field_name("left" if node.type == "assignment_expression"
                                          else "argument")
        if target is not None and unparen(target).type == "identifier" \
                and text_of(src, unparen(target)) == name:
            return True
    return False


def set_once(ctx: Place, name: str, at: int) -> tuple[Any, str]:
    """The declaration of ``name`` that a use at ``at`` reads, when that variable holds its
    initialiser's value wherever it is read: a local with an initialiser, neither a pointer
    nor a reference, never assigned, incremented or decremented after its declaration in the
    function. (declaration, '') then; else (the declaration or None, why not: a phrase to
    follow "`name` is" or "but"). The guards that accept "X itself, or a local initialised
    to X" test the initialiser themselves and word their refusals."""
    decl = lookup(ctx, name, at)
    fn = ctx.function
    if decl is None:
        return None, "not declared before its use"
    where = cited(ctx.unit, decl.start, decl.end)
    if decl.origin != "local" or decl.init is None:
        return decl, f"not a local with an initialiser ({where})"
    if decl.pointer or decl.reference:
        return decl, f"a pointer or a reference ({where})"
    if fn is not None and is_assigned(ctx, name, decl.end, fn.body_end):
        return decl, f"reassigned later ({where})"
    return decl, ""


def index_value(ctx: Place, start: int, end: int, index: Node) -> Node:
    """The index itself, or, where it is a local declared once in [start, end) before it with
    an initialiser and never assigned, written to through a pointer or redeclared there, its
    initialiser (``const int64_t at = row * n + c; ... b[at]``): the element an access reaches,
    spelled in the variables it is computed from."""
    unit, src = ctx.unit, ctx.unit.source
    index = unparen(index)
    if index.type != "identifier":
        return index
    name = text_of(src, index)
    found = []
    for node in in_span(nodes_of(unit, "init_declarator"), start, end):
        decl = node.child_by_field_name("declarator")
        if decl is not None and text_of(src, decl) == name:
            found.append(node)
    if len(found) != 1 or found[0].start_byte > index.start_byte \
            or is_assigned(ctx, name, start, end) or address_taken(src, name, start, end):
        return index
    value = found[0].child_by_field_name("value")
    return unparen(value) if value is not None else index


def writes_to(ctx: Place, names: frozenset[str], start: int, end: int
              ) -> Iterator[tuple[int, int, str]]:
    """Places in [start, end) that may write memory reached through one of ``names``: the
    write entries (``_node_entries``) of the statements in the span that spell one of the
    names (every name an entry gives is spelled inside its node), each read once per unit:
    a large function's other writes are never analysed for a question about one buffer."""
    unit = ctx.unit
    src = unit.source
    words = [n.encode() for n in names]
    for node in in_span(nodes_of(unit, *_WRITING_TYPES), start, end):
        s, e = node.start_byte, node.end_byte
        if not any(src.find(w, s, e) >= 0 for w in words):
            continue
        for es, ee, roots, what in _entries_at(unit, node):
            if not roots.isdisjoint(names):
                yield es, ee, what


REASSIGNS = "reassigns the pointer"  # (an assignment or ++/-- of the variable itself)


def memory_writes(ctx: Place, name: str, start: int, end: int, own: bool = True
                  ) -> Iterator[tuple[int, int, str]]:
    """``writes_to`` through ``name`` and its aliases, less what only moves a pointer: an
    assignment or ``++``/``--`` of a local pointer derived from ``name`` (a row pointer
    advanced, ``y += cols``, ``x++`` in a loop header) changes where that pointer points,
    never the memory of ``name``. A reference's assignment (``float& r = out[i]; r = v;``)
    stays a write, and so does a reassignment of ``name`` itself unless ``own`` is False
    (a load through ``name`` then reads other memory: ``no_write`` keeps it)."""
    names = aliases_of(ctx, name)
    fn = ctx.function
    for s, e, what in writes_to(ctx, names, start, end):
        if what == REASSIGNS and fn is not None:
            var = text_of(ctx.unit.source, _unwrap_target(ctx, s, e))
            if (var != name or not own) and not _is_reference(ctx, fn, var):
                continue
        yield s, e, what


def _unwrap_target(ctx: Place, s: int, e: int) -> Node:
    """The variable an assignment or ++/-- spanning [s, e) assigns."""
    node = ctx.unit.root.descendant_for_byte_range(s, e)
    while node is not None and node.type not in ("assignment_expression", "update_expression"):
        node = node.parent
    assert node is not None
    target = node.child_by_field_id(F_LEFT if node.type == "assignment_expression"
                                    else F_ARGUMENT)
    assert target is not None
    return unparen(target)


def _is_reference(ctx: Place, fn: Function, var: str) -> bool:
    """Is ``var`` declared a reference in ``fn`` (a local or a parameter)? Unknown names
    count as references (the safe side)."""
    decls = [d for d in function_declarations(ctx.unit, fn) if d.name == var]
    if decls:
        return any(d.reference for d in decls)
    param = fn.param(var)
    return param is None or param.reference


def writes_around(ctx: Place, start: int, end: int
                  ) -> list[tuple[int, int, frozenset[str], str]]:
    """``_write_entries`` of the enclosing function's body when it holds [start, end), else
    of the whole unit: found once per function."""
    fn = ctx.function
    lo, hi = (fn.body_start, fn.body_end) if fn is not None and \
        fn.body_start <= start and end <= fn.body_end else (0, len(ctx.unit.source) + 1)
    return unit_memo(ctx.unit, f"write_entries:{lo}:{hi}", lambda: _write_entries(ctx.unit, lo, hi))


_WRITING_TYPES = ("assignment_expression", "update_expression", "call_expression",
                  "gnu_asm_expression")
_Entry = tuple[int, int, frozenset[str], str]


def _write_entries(unit: Unit, lo: int, hi: int) -> list[_Entry]:
    """Every place in [lo, hi) (a function body) that may write memory, once: (start, end,
    the variables the written memory may be reached through, how), in source order (what
    ``writes_around`` gives each guard's region)."""
    out: list[_Entry] = []
    for node in in_span(nodes_of(unit, *_WRITING_TYPES), lo, hi):
        out += _entries_at(unit, node)
    return out


def _entries_at(unit: Unit, node: Node) -> list[_Entry]:
    """``_node_entries`` of one node, read once per unit (``writes_to`` and
    ``_write_entries`` share them)."""
    known = unit_memo(unit, "write_entries_by_node", dict)
    key = (node.start_byte, node.end_byte, node.type)
    entries = known.get(key)
    if entries is None:
        entries = known[key] = _node_entries(unit, node, _defined(unit))
    return entries  # type: ignore[no-any-return]


def _defined(unit: Unit) -> set[str]:
    return unit_memo(unit, "defined_functions", lambda: {f.name for f in unit.functions})


def _node_entries(unit: Unit, node: Node, defined: set[str]) -> list[_Entry]:
    """The write entries of one assignment, ++/--, call or asm statement (``_write_entries``).
    Every variable an entry names is spelled inside the node (``writes_to`` relies on it)."""
    src = unit.source
    out: list[_Entry] = []
    t = node.type
    s, e = node.start_byte, node.end_byte
    if t in ("assignment_expression", "update_expression"):
        target = node.child_by_field_id(F_LEFT if t == "assignment_expression"
                                        else F_ARGUMENT)
        if target is None:
            return out
        target = unparen(target)
        if target.type == "identifier":
            out.append((s, e, frozenset({text_of(src, target)}), REASSIGNS))
            return out
        roots = pointer_roots(target, src)
        if roots:
            out.append((s, e, frozenset(roots), "stores through it"))
    elif t == "gnu_asm_expression":
        out.append((s, e, frozenset(n for n, _ in names_in(node, src)),
                    "passes it to inline asm"))
    else:
        fn_node = node.child_by_field_id(F_FUNCTION)
        args = node.child_by_field_id(F_ARGUMENTS)
        if fn_node is None or args is None:
            return out
        callee = "".join(text_of(src, fn_node).split())
        method = _SCOPE_SEPARATORS.split(callee)[-1]
        method = method.split("<", 1)[0] if method.endswith(">") else method  # casts
        if fn_node.type == "field_expression":  # obj.f(...): the object may change
            obj = fn_node.child_by_field_id(F_ARGUMENT)
            roots = pointer_roots(obj, src) if obj is not None else set()
            if roots:
                out.append((s, e, frozenset(roots),
                            f"calls its method {method}, which may write to it"))
        if _READ_ONLY_CALLS.match(method) or src.find(b"<<<", s, e) >= 0:
            return out
        if method == callee.split("<", 1)[0] and method in defined \
                and helper_stores(unit, method) is None:
            return out  # a function of this file that stores nothing
        for k, arg in enumerate(a for a in args.named_children if a.type != "comment"):
            roots = pointer_roots(arg, src)
            if not roots or not passes_pointer(arg, src):
                continue
            if method.startswith("atomic") or _STORE_CALLS.match(callee):
                if k == 0:
                    out.append((s, e, frozenset(roots), f"writes it with {callee}"))
            else:
                out.append((s, e, frozenset(roots),
                            f"passes it to {callee}, which may write through it"))
    return out


def passes_pointer(arg: Node, src: bytes) -> bool:
    """Does this call argument hand over an address (not a loaded value)?"""
    arg = unparen(arg)
    if arg.type == "identifier":
        return True
    if arg.type == "pointer_expression":
        return operator_of(arg) == "&"
    if arg.type == "binary_expression":  # p + k hands over an address; a[i] - b[i] values
        return operator_of(arg) in ("+", "-") and any(
            side is not None and passes_pointer(side, src)
            for side in (arg.child_by_field_name("left"), arg.child_by_field_name("right")))
    _, operand = cast_target(arg, src)
    return operand is not None and passes_pointer(operand, src)


def buffer_name(ctx: Place, x: Binding) -> str | None:
    node = binding_node(x)
    if node is None:
        return None
    roots = pointer_roots(node, ctx.unit.source)
    return next(iter(roots)) if len(roots) == 1 else None


def address_taken(src: bytes, name: str, start: int, end: int) -> bool:
    """``&name`` in [start, end): something may write the variable through a pointer."""
    return re.search(rb"&\s*" + re.escape(name.encode()) + rb"\b(?!\s*\[)",
                     src[start:end]) is not None


def kernel_type_pinned(ctx: Place, fn: Function, calls_too: bool = False) -> str:
    """Why the function's parameter types may not change ('' when they may): its name used
    other than as a callee or a launch (any use, with ``calls_too``), declared elsewhere in
    the file, or in a header the file includes with quotes. Found once per function (every
    parameter's guard asks)."""
    return unit_memo(ctx.unit, f"kernel_type_pinned:{fn.start}:{calls_too}",  # type: ignore[no-any-return]
                     lambda: _kernel_type_pinned(ctx.unit, fn, calls_too))


def _kernel_type_pinned(unit: Unit, fn: Function, calls_too: bool) -> str:
    src = unit.source
    declarator = fn.node.child_by_field_id(F_DECLARATOR)
    own = (declarator.start_byte, declarator.end_byte) if declarator is not None else (0, 0)
    word = fn.name.encode()
    root = unit.tree.root_node
    for at in word_occurrences(src, word, 0, len(src)):  # (a look-behind regex scans
        # at Python's pace where ``bytes.find`` does not)
        if own[0] <= at < own[1]:
            continue
        node = root.descendant_for_byte_range(at, at + len(word))
        if node is None or node.type != "identifier" \
                or node.start_byte != at:
            continue  # (in a comment or a string)
        parent = node.parent
        if parent is not None and parent.type == "template_function":
            node, parent = parent, parent.parent
        if parent is not None and parent.type == "call_expression" \
                and parent.child_by_field_id(F_FUNCTION) == node:
            if calls_too:
                where = cited(unit, parent.start_byte, parent.end_byte)
                return f"`{fn.name}` is called or launched at {where}"
            continue
        if parent is not None and parent.type == "function_declarator":
            where = cited(unit, parent.start_byte, parent.end_byte)
            return f"`{fn.name}` is declared again at {where}: the declarations would disagree"
        where = cited(unit, node.start_byte, node.end_byte)
        return f"the name `{fn.name}` is used at {where}, where the kernel's type matters"
    folder = os.path.dirname(unit.path)
    for m in re.finditer(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', src, re.M):
        header = os.path.join(folder, m.group(1).decode("utf-8", "replace"))
        if not os.path.lexists(header):
            continue  # (on the build's include path, which the file does not say)
        try:
            text = read_input(header, "header")  # regular files only, never blocks
        except KlcError as e:
            return f"cannot read the included {m.group(1).decode()} to check it: {e}"
        if re.search(rb"(?<![\w])" + re.escape(fn.name.encode()) + rb"(?![\w])", text):
            return (f"`{fn.name}` is named in the included {m.group(1).decode()}: a declaration "
                    "there would no longer agree")
    return ""


# calls that may store to memory whatever this file defines (atomics, store intrinsics,
# copies, printf, fences)
STORING_CALL = re.compile(r"atomic\w*|__st\w*|mem(cpy|set|move)|printf|__threadfence\w*")


def helper_stores(unit: Unit, name: str) -> tuple[int, str] | None:
    """Where and why a call of ``name``, a function this file defines, may store to memory;
    None when no definition of that name does: every assignment or ``++``/``--`` in its body
    targets a local variable of its own or a parameter passed by value (not ``*p``, ``a[i]``,
    ``s.f``, a reference, a ``__shared__``, ``static`` or file-scope variable), it holds no
    ``asm`` and calls nothing that may store (the file's functions judged the same way; a
    call back into a function being judged counts as storing). A read-only helper (a pad
    check, an index computation) may then run once per lane where a rewrite spreads a loop
    over many."""
    memo = unit_memo(unit, "helper_stores", dict)
    if name not in memo:
        memo[name] = _helper_stores(unit, name, memo)
    return memo[name]


def helper_call_unsafe(ctx: Place, call: Node, start: int, end: int) -> str:
    """Why a call of a helper this file defines may not run once per lane in [start, end)
    ('' when it may): the helper may store (``helper_stores``), or it is handed a pointer
    to memory that the code in [start, end) writes (its reads would then see other lanes'
    stores, or miss them)."""
    unit, src = ctx.unit, ctx.unit.source
    callee = call.child_by_field_id(F_FUNCTION)
    name = text_of(src, callee).split("<")[0].strip() if callee is not None else ""
    found = helper_stores(unit, name)
    if found is not None:
        return found[1]
    args = call.child_by_field_id(F_ARGUMENTS)
    for arg in args.named_children if args is not None else ():
        if not passes_pointer(arg, src):
            continue
        for root in sorted(pointer_roots(arg, src)):
            w = next(memory_writes(ctx, root, start, end, own=False), None)
            if w is not None:
                return (f"`{name}` is handed `{root}`, which the code writes "
                        f"({unit.where(w[0])})")
    return ""


_JUDGING = (-1, "calls itself")


def _helper_stores(unit: Unit, name: str, memo: dict[str, Any]) -> tuple[int, str] | None:
    memo[name] = _JUDGING
    src = unit.source
    defined = {f.name for f in unit.functions}
    for fn in unit.functions:
        if fn.name != name:
            continue
        if fn.asm:
            return fn.asm[0][0], f"`{name}` holds inline asm"
        params = {p.name: p for p in fn.params}
        local = function_declarations(unit, fn)
        for node in in_span(nodes_of(unit, "assignment_expression", "update_expression"),
                            fn.body_start, fn.body_end):
            target = node.child_by_field_id(F_LEFT if node.type == "assignment_expression"
                                            else F_ARGUMENT)
            why = _stored_target(src, target, node.start_byte, local, params)
            if why:
                return node.start_byte, \
                    f"`{name}` {why}: {cited(unit, node.start_byte, node.end_byte)}"
        for node in in_span(nodes_of(unit, "call_expression"), fn.body_start, fn.body_end):
            callee = node.child_by_field_id(F_FUNCTION)
            called = text_of(src, callee).split("<")[0].strip() if callee is not None else ""
            if STORING_CALL.fullmatch(called):
                return node.start_byte, (f"`{name}` calls `{called}`: "
                                         f"{cited(unit, node.start_byte, node.end_byte)}")
            if called in defined:
                inner = memo[called] if called in memo else helper_stores(unit, called)
                if inner is not None:
                    return node.start_byte, (f"`{name}` calls `{called}`, which may store "
                                             f"({unit.where(node.start_byte)})")
                continue
            if callee is not None and callee.type == "field_expression":
                return node.start_byte, (f"`{name}` calls the method `{called}`, which may "
                                         f"change its object ({unit.where(node.start_byte)})")
            args = node.child_by_field_id(F_ARGUMENTS)
            if not _READ_ONLY_CALLS.match(called) and args is not None and any(
                    _hands_address(src, a, local, params)
                    for a in args.named_children if a.type != "comment"):
                return node.start_byte, (f"`{name}` hands an address to `{called}`, which may "
                                         f"write through it ({unit.where(node.start_byte)})")
    return None


def _hands_address(src: bytes, arg: Node, local: list[Any], params: Mapping[str, Any]
                   ) -> bool:
    """Does a call argument in a helper hand over an address: ``&x``, a pointer or array
    variable (the helper's parameter or local, or a name it does not declare), an offset of
    one, or a cast of one to a pointer type (a value of arithmetic type does not)?"""
    arg = unparen(arg)
    if arg.type == "pointer_expression":
        return operator_of(arg) == "&"
    if arg.type == "identifier":
        word = text_of(src, arg)
        decls = [d for d in local if d.name == word and d.start < arg.start_byte]
        if decls:
            d = max(decls, key=lambda d: d.start)
            return bool(d.pointer or d.dims or d.reference)
        p = params.get(word)
        if p is not None:
            return bool(p.pointer or p.array or p.reference)
        return True  # (a file-scope name: an array, perhaps)
    if arg.type == "binary_expression" and operator_of(arg) in ("+", "-"):
        return any(side is not None and _hands_address(src, side, local, params)
                   for side in (arg.child_by_field_id(F_LEFT), arg.child_by_field_name("right")))
    target, operand = cast_target(arg, src)
    if operand is not None:
        return (target is not None and "*" in text_of(src, target)) \
            or _hands_address(src, operand, local, params)
    return False


def _stored_target(src: bytes, target: Node | None, at: int, local: list[Any],
                   params: Mapping[str, Any]) -> str:
    """Why writing ``target`` at ``at`` stores to memory ('' when it writes a variable of
    the function's own)."""
    if target is None:
        return "writes what it cannot name"
    target = unparen(target)
    if target.type != "identifier":
        return "stores to memory"
    word = text_of(src, target)
    decl = None
    for d in local:
        if d.name == word and d.start < at and (decl is None or d.start > decl.start):
            decl = d
    if decl is not None:
        if decl.reference:
            return f"writes through the reference `{word}`"
        kept = sorted(decl.qualifiers & {"__shared__", "static"})
        if kept:
            return f"writes the {' '.join(kept)} `{word}`"
        return ""
    p = params.get(word)
    if p is not None:
        return f"writes through the reference parameter `{word}`" if p.reference else ""
    return f"writes `{word}`, declared outside it"


def memory_updates(unit: Unit, start: int, end: int) -> tuple[list[Node], list[int]]:
    """The in-place memory updates in [start, end) (an assignment other than ``=``, or an
    increment, of anything but a plain name), in order, and where an atomic is called
    there: kept per span (``Unit.memo``), as every loop of a kernel asks."""
    memo = unit.memo.setdefault(_UPDATES, {})
    got = memo.get((start, end))
    if got is None:
        updates = []
        for node in in_span(nodes_of(unit, "assignment_expression", "update_expression"),
                            start, end):
            if node.type == "assignment_expression":
                if operator_of(node) == "=":
                    continue
                target = node.child_by_field_name("left")
            else:
                target = node.child_by_field_name("argument")
            if target is not None and unparen(target).type != "identifier":
                updates.append(node)
        got = memo[(start, end)] = (updates, [m.start() for m in ATOMIC_CALL.finditer(
            unit.source, start, end)])
    return got  # type: ignore[no-any-return]


_UPDATES = "klc.analysis.writes: in-place updates"
ATOMIC_CALL = re.compile(rb"\batomic\w+\s*\(")  # (an atomic call's name and its parenthesis)
