"""Guard predicates about writes and aliasing: no write through a buffer, const and
__restrict__ safety, in-place updates, what statements assign, whether code may move
(``klc.analysis.writes``)."""

from __future__ import annotations

import re

from tree_sitter import Node

from klc.analysis.constants import kernel_spec, spec_for
from klc.analysis.declarations import (
    declarations_named,
    declarations_of,
    declared_names_in,
    function_declarations,
    lookup,
)
from klc.analysis.tree import (
    base_identifier,
    cast_target,
    cited,
    in_span,
    names_in,
    nodes_of,
    nodes_within,
    operator_of,
    pointer_roots,
    quoted,
    snippet,
    text_of,
    unit_memo,
    unparen,
)
from klc.analysis.writes import (
    REASSIGNS,
    STORING_CALL,
    aliases_of,
    buffer_name,
    helper_call_unsafe,
    kernel_type_pinned,
    memory_writes,
    writes_around,
)
from klc.cuda.model import Unit
from klc.cuda.syntax import F_ARGUMENT, F_LEFT
from klc.guards.registry import (
    ArgSpec,
    GuardContext,
    Verdict,
    _metavar,
    _no,
    _region,
    _region_arg,
    _yes,
    predicate,
)
from klc.match import Binding


@predicate("no_write", _metavar(), _region_arg(optional=False),
           reads=("declarations",), per_declaration=True)
def no_write(ctx: GuardContext, x: Binding, region: str = "kernel") -> Verdict:
    """Nothing in REGION (anchor, loop, kernel) writes memory through buffer $X or a local
    pointer derived from it (a row pointer ``float* y = out + row * cols;``, ``&out[i]``,
    ``auto``): no assignment, ++/--, atomic, store intrinsic, asm, or call that receives
    the pointer, and $X itself is not reassigned. Advancing a pointer derived from $X
    (``y += cols``) writes no memory."""
    return _no_write(ctx, x, region, own=True)


def _no_write(ctx: GuardContext, x: Binding, region: str, own: bool) -> Verdict:
    span = _region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    name = buffer_name(ctx, x)
    if name is None:
        return _no(ctx, f"{quoted(x)} is not a single buffer ({ctx.unit.where(x.start)})",
                   x.start)
    for s, e, what in memory_writes(ctx, name, start, end, own):
        return _no(ctx, f"`{name}` is written in {label}: {cited(ctx.unit, s, e)} {what}", s)
    return _yes(f"no write through `{name}` in {label}", x.start)


@predicate("const_safe", _metavar(), reads=("declarations", "file"))
def const_safe(ctx: GuardContext, x: Binding) -> Verdict:
    """Kernel pointer parameter $X can point to const: the kernel writes nothing through it
    or anything derived from it (``no_write($X, kernel)``: aliases, references, escapes into
    aggregates, member calls, calls that receive it); nothing derived from it is a non-const
    pointer or reference (``float *p = x + off;``) or a ``reinterpret_cast``/``static_cast``
    to one, which would not compile with a const source; and the kernel's type may change:
    its name is used only where it is called or launched, and the file declares it once
    (``kernel = &copy;`` with a ``void (*)(float*)``, a prototype or an explicit
    instantiation would no longer match). Advancing $X or a pointer derived from it
    (``x += row * cols``) is no write. Where the file cannot tell, no."""
    verdict = _no_write(ctx, x, "kernel", own=False)
    if not verdict.ok:
        return verdict
    fn, unit, src = ctx.function, ctx.unit, ctx.unit.source
    name = buffer_name(ctx, x)
    if fn is None or name is None:
        return _no(ctx, f"{quoted(x)} is not a buffer of a function", x.start)
    names = aliases_of(ctx, name)
    for d in function_declarations(unit, fn):
        if d.init is not None and (d.pointer > 0 or d.reference) and not d.const \
                and pointer_roots(d.init, src) & names:
            return _no(ctx, f"`{d.name}` ({cited(unit, d.start, d.end)}) is a non-const "
                       f"{'reference' if d.reference else 'pointer'} into `{name}`", d.start)
    for node in in_span(nodes_of(unit, "call_expression", "cast_expression"), fn.body_start,
                        fn.body_end):
        ty, operand = cast_target(node, src)
        if ty is None or operand is None or node.type == "cast_expression":
            continue  # (a C-style cast may drop const: it compiles)
        target = text_of(src, ty)
        if ("*" in target or "&" in target) and "const" not in target \
                and pointer_roots(operand, src) & names:
            return _no(ctx, f"{cited(unit, node.start_byte, node.end_byte)} casts `{name}` to "
                       f"the non-const `{' '.join(target.split())}`", node.start_byte)
    why = kernel_type_pinned(ctx, fn)
    if why:
        return _no(ctx, why, x.start)
    return _yes(f"`{name}` is only read in `{fn.name}`, through const views, and the type "
                f"of `{fn.name}` is free to change", x.start)


@predicate("const_removable", _metavar(), reads=("file",), pass_only=True)
def const_removable(ctx: GuardContext, x: Binding) -> Verdict:
    """Removing const from kernel pointer parameter $X's pointee keeps the file compiling:
    the kernel's name is used nowhere else in the file (a launch or a call could pass a
    const pointer, which no longer converts), is declared once, and no header the file
    includes with quotes names it. For simplifications (the inverse, adding const, needs
    ``const_safe`` instead)."""
    fn = ctx.function
    if fn is None:
        return _no(ctx, f"{quoted(x)} is not in a function", x.start)
    why = kernel_type_pinned(ctx, fn, calls_too=True)
    if why:
        return _no(ctx, why, x.start)
    return _yes(f"`{fn.name}` is not called, launched or declared elsewhere in this file",
                x.start)


@predicate("writes_in", _metavar(), _region_arg(optional=False),
           reads=("declarations",), per_declaration=True)
def writes_in(ctx: GuardContext, x: Binding, region: str = "kernel") -> Verdict:
    """Something in REGION writes memory through buffer $X (the negation of no_write, for
    rules that read better with ``not``)."""
    v = no_write(ctx, x, region)
    if v.unknown:
        return v
    return Verdict(not v.ok, v.reason, v.start)


@predicate("no_alias", _metavar("$X"), _metavar("$Y"), reads=("declarations", "spec"))
def no_alias(ctx: GuardContext, x: Binding, y: Binding) -> Verdict:
    """Buffers $X and $Y cannot overlap in a way that matters: both are __restrict__, or
    neither is written in the kernel, or the spec allocates them as distinct arguments."""
    a, b = buffer_name(ctx, x), buffer_name(ctx, y)
    if a is None or b is None:
        return _no(ctx, f"{quoted(x if a is None else y)} is not a single buffer", x.start)
    if a == b:
        return _no(ctx, f"{quoted(x)} and {quoted(y)} are the same buffer `{a}`", x.start)
    da, db = lookup(ctx, a, x.start), lookup(ctx, b, y.start)
    if da is not None and db is not None and da.restrict and db.restrict:
        return _yes(f"`{a}` and `{b}` are both __restrict__", x.start)
    fn = ctx.function
    written: list[str] = []
    if fn is not None:
        for name in (a, b):
            for s, e, what in memory_writes(ctx, name, fn.body_start, fn.body_end, False):
                written.append(f"`{name}` is written ({cited(ctx.unit, s, e)} {what})")
                break
        if not written:
            return _yes(f"neither `{a}` nor `{b}` is written in `{fn.name}`", x.start)
    spec = spec_for(ctx)
    inner = kernel_spec(spec)
    buffers = {arg.name for arg in inner.args if arg.shape} if inner is not None else set()
    if da is not None and db is not None and da.origin == db.origin == "parameter" \
            and {a, b} <= buffers:
        return _yes(f"`{a}` and `{b}` are distinct buffers allocated by the spec", x.start)
    missing = [n for n, d in ((a, da), (b, db)) if d is None or not d.restrict]
    return _no(ctx, f"`{a}` and `{b}` may alias: {', '.join(f'`{n}`' for n in missing)} "
               f"not __restrict__, and {'; '.join(written) or 'no spec says otherwise'}",
               x.start)


@predicate("no_memory_update", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           reads=("arguments",))
def no_memory_update(ctx: GuardContext, stmts: Binding) -> Verdict:
    """The code bound to $$$S updates no memory in place: no compound assignment (``+=``,
    ``|=``, ...), ``++`` or ``--`` on an array element, a field or through a pointer. Run by
    several threads at once with the same values (a row's body given to a whole warp), such
    code leaves memory as one run does; an update in place would be applied once per
    thread."""
    unit, src = ctx.unit, ctx.unit.source
    for node in in_span(nodes_of(unit, "assignment_expression", "update_expression"), stmts.start,
                        stmts.end):
        if node.type == "assignment_expression":
            if operator_of(node) == "=":
                continue
            target = node.child_by_field_id(F_LEFT)
        else:
            target = node.child_by_field_id(F_ARGUMENT)
        if target is not None and unparen(target).type != "identifier":
            return _no(ctx, f"`{snippet(text_of(src, node))}` ({unit.where(node.start_byte)}) "
                       "updates memory in place", node.start_byte)
    return _yes(f"{quoted(stmts)} updates no memory in place", stmts.start)


_READING_TYPES = frozenset({"subscript_expression", "call_expression", "pointer_expression",
                            "field_expression"})


@predicate("reads_no_memory", ArgSpec("$E", frozenset({"metavar"})), reads=("arguments",))
def reads_no_memory(ctx: GuardContext, expr: Binding) -> Verdict:
    """The code bound to $E reads no memory and calls nothing: no subscript, no ``*p``, no
    ``p->f``, no call. Its value then changes only where a variable in it is assigned, so
    a rewrite may evaluate it again later (a loop bound tested at every iteration)."""
    unit, src = ctx.unit, ctx.unit.source
    for node in nodes_within(unit, _READING_TYPES, expr.start, expr.end):
        if node.type == "field_expression" and b"->" not in src[node.start_byte:node.end_byte]:
            continue  # a member of a value (blockDim.x, a struct argument)
        return _no(ctx, f"`{snippet(text_of(src, node))}` ({unit.where(node.start_byte)}) "
                   "reads memory or calls", node.start_byte)
    return _yes(f"{quoted(expr)} reads no memory and calls nothing", expr.start)


@predicate("moves_before", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           ArgSpec("$$$MID", frozenset({"metavar", "sequence"})), reads=("arguments",))
def moves_before(ctx: GuardContext, stmts: Binding, mid: Binding) -> Verdict:
    """The code bound to $$$S may run before the code bound to $$$MID with the same effect
    (a rewrite that hoists it): $$$S uses no variable that $$$MID declares or assigns and no
    memory it writes, and assigns nothing, writes no memory, that $$$MID uses. An empty
    $$$MID always holds."""
    unit, src = ctx.unit, ctx.unit.source
    if mid.start >= mid.end or not mid.text.strip():
        return _yes(f"{quoted(mid)} is empty", mid.start)

    def names(b: Binding) -> set[str]:
        return {n for node in b.nodes for n, _ in names_in(node, src)}

    def changes(b: Binding) -> tuple[set[str], set[str]]:
        """(variables declared or assigned, buffers whose memory is written) in b."""
        declared = {d.name for d in declarations_of(unit, [n for n in b.nodes
                                                               if n.type == "declaration"])}
        assigned: set[str] = set()
        memory: set[str] = set()
        for s, e, roots, what in writes_around(ctx, b.start, b.end):
            if b.start <= s and e <= b.end:
                (assigned if what == REASSIGNS else memory).update(roots)
        return declared | assigned, memory

    mid_vars, mid_memory = changes(mid)
    s_vars, s_memory = changes(stmts)
    s_names, mid_names = names(stmts), names(mid)
    if clash := sorted(s_names & mid_vars):
        return _no(ctx, f"{quoted(stmts)} uses `{clash[0]}`, which {quoted(mid)} declares or "
                   f"assigns ({unit.where(mid.start)})", stmts.start)
    if clash := sorted(s_names & mid_memory):
        return _no(ctx, f"{quoted(stmts)} reads memory through `{clash[0]}`, which "
                   f"{quoted(mid)} writes ({unit.where(mid.start)})", stmts.start)
    if clash := sorted(mid_names & (s_vars | s_memory)):
        return _no(ctx, f"{quoted(mid)} ({unit.where(mid.start)}) uses `{clash[0]}`, which "
                   f"{quoted(stmts)} changes", stmts.start)
    return _yes(f"{quoted(stmts)} and {quoted(mid)} touch nothing the other changes",
                stmts.start)


@predicate("elementwise_only", _metavar(), reads=("declarations", "layout"))
def elementwise_only(ctx: GuardContext, x: Binding) -> Verdict:
    """Array $X is only used element by element in its function: every use is subscripted
    as many times as the array has dimensions (``t[i][j]`` of ``float t[32][32]``) and its
    address is not taken (``&t[i][j]``). No row pointer, cast or call sees its layout, so a
    change of the layout (a padded row) cannot break an access that assumed the old one."""
    name = buffer_name(ctx, x)
    fn = ctx.function
    if name is None or fn is None:
        return _no(ctx, f"{quoted(x)} is not an array in a function", x.start)
    decl = lookup(ctx, name, x.start)
    if decl is None or not decl.dims:
        return _no(ctx, f"`{name}` is not declared as an array here", x.start)
    unit, src = ctx.unit, ctx.unit.source
    want = len(decl.dims)
    uses = 0
    word = re.compile(rb"(?<![\w.>])" + re.escape(name.encode()) + rb"\b")
    for found in word.finditer(src, fn.body_start, fn.body_end):  # (the few uses, not a query)
        if decl.start <= found.start() < decl.end:
            continue
        node = unit.root.descendant_for_byte_range(found.start(), found.end())
        if node is None or node.type != "identifier" or node.start_byte != found.start():
            continue  # in a comment, a string, a member name
        uses += 1
        depth, top = 0, node
        parent = top.parent
        while parent is not None:
            if parent.type == "parenthesized_expression":
                top = parent
            elif parent.type == "subscript_expression" \
                    and parent.child_by_field_id(F_ARGUMENT) == top:
                depth, top = depth + 1, parent
            else:
                break
            parent = top.parent
        if depth != want:
            return _no(ctx, f"`{snippet(text_of(src, top))}` ({unit.where(top.start_byte)}) uses "
                       f"`{name}` with {depth} of its {want} subscripts: its layout is "
                       "seen there", top.start_byte)
        if parent is not None and parent.type == "pointer_expression" and \
                operator_of(parent) == "&":
            return _no(ctx, f"`{snippet(text_of(src, parent))}` ({unit.where(parent.start_byte)}) "
                       f"takes the address of an element of `{name}`", parent.start_byte)
    return _yes(f"all {uses} uses of `{name}` in `{fn.name}` are single elements", x.start)


@predicate("restrict_safe", _metavar(), reads=("declarations", "layout", "spec"))
def restrict_safe(ctx: GuardContext, x: Binding) -> Verdict:
    """Declaring kernel pointer parameter $X __restrict__ promises nothing the code does not
    already keep: for every other pointer parameter, that one is __restrict__ itself (its own
    promise already rules out an overlap with written memory), or neither it nor $X is
    written in the kernel (read-only buffers may share memory), or the spec allocates both as
    distinct buffers (the caller's contract). Otherwise a caller that passes overlapping
    buffers (an in-place call, ``k(x, x)``) would get wrong results."""
    name = buffer_name(ctx, x)
    fn = ctx.function
    if name is None or fn is None:
        return _no(ctx, f"{quoted(x)} is not a single buffer in a function", x.start)
    mine = fn.param(name)
    if mine is None or (mine.pointer == 0 and not mine.array):
        return _no(ctx, f"`{name}` is not a pointer parameter of `{fn.name}`", x.start)
    if mine.star_end < 0:
        return _no(ctx, f"`{name}` is declared as an array (`{ctx.unit.text(mine.start, mine.end)}`"
                   f"): __restrict__ qualifies a pointer declarator", x.start)
    others = [p for p in fn.params if p.name != name and (p.pointer > 0 or p.array)]
    if not others:
        return _yes(f"`{name}` is the only pointer parameter of `{fn.name}`", x.start)
    spec = spec_for(ctx)
    inner = kernel_spec(spec)
    buffers = {arg.name for arg in inner.args if arg.shape} if inner is not None else set()

    def written(param: str) -> str:  # (once per function and parameter)
        def first() -> str:
            for s, e, what in memory_writes(ctx, param, fn.body_start, fn.body_end, False):
                return f"`{param}` is written ({cited(ctx.unit, s, e)} {what})"
            return ""

        return str(unit_memo(ctx.unit, f"written:{fn.start}:{fn.end}:{param}", first))

    why: list[str] = []
    for p in others:
        if p.restrict:
            why.append(f"`{p.name}` is __restrict__")
            continue
        if {name, p.name} <= buffers:
            why.append(f"`{p.name}` is another buffer of the spec")
            continue
        written_by = written(name) or written(p.name)
        if not written_by:
            why.append(f"neither `{name}` nor `{p.name}` is written")
            continue
        return _no(ctx, f"`{name}` may share memory with `{p.name}` (not __restrict__, not a "
                   f"distinct spec buffer): {written_by}", x.start)
    return _yes(f"no other pointer parameter of `{fn.name}` can overlap `{name}` in a way "
                f"that matters: {'; '.join(why)}", x.start)


_STORING_CALL = STORING_CALL


@predicate("stores_nothing", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           reads=("arguments",))
def stores_nothing(ctx: GuardContext, stmts: Binding) -> Verdict:
    """The statements bound to $$$S have no effect but on their thread's variables: every
    assignment, ``++`` or ``--`` targets a plain variable (no ``a[i] =``, ``*p =``,
    ``p->f =``), they call no atomic, store intrinsic (``__st*``), ``memcpy``/``memset``,
    ``printf`` or fence, no function this file defines (it might store), and hold no
    ``asm``. Run by fewer threads (or more), they leave memory as it was. An element of a
    register array the statements declare themselves (``unsigned char res[4];`` then
    ``res[k] = ...``: not ``__shared__``, not ``static``, not a pointer) is a variable of
    the thread too."""
    unit, src = ctx.unit, ctx.unit.source
    start, end = stmts.start, stmts.end
    if re.search(rb"\basm\b|__asm__", src[start:end]):
        return _no(ctx, f"{quoted(stmts)} holds inline asm", start)
    own_arrays = _own_register_arrays(unit, start, end)
    for node in in_span(nodes_of(unit, "assignment_expression", "update_expression"), start, end):
        target = node.child_by_field_id(F_LEFT if node.type == "assignment_expression"
                                        else F_ARGUMENT)
        if target is not None and unparen(target).type == "subscript_expression":
            base = base_identifier(unparen(target))
            if base is not None and text_of(src, base) in own_arrays:
                continue
        if target is not None and unparen(target).type != "identifier":
            return _no(ctx, f"`{snippet(text_of(src, node))}` ({unit.where(node.start_byte)}) "
                       "stores to memory", node.start_byte)
    defined = {f.name for f in unit.functions}
    for node in in_span(nodes_of(unit, "call_expression"), start, end):
        callee = node.child_by_field_name("function")
        name = text_of(src, callee).split("<")[0].strip() if callee is not None else ""
        why = helper_call_unsafe(ctx, node, start, end) if name in defined else ""
        if _STORING_CALL.fullmatch(name) or why:
            return _no(ctx, f"`{snippet(text_of(src, node))}` ({unit.where(node.start_byte)}) "
                       f"may store to memory{f' ({why})' if why else ''}", node.start_byte)
    return _yes(f"{quoted(stmts)} stores nothing", start)


def _write_targets(unit: Unit, start: int, end: int) -> list[tuple[Node, Node]]:
    """(the assignment or update, what it writes) for each in [start, end): assignments
    first, then updates, each in source order."""
    targets: list[tuple[Node, Node]] = []
    for node in in_span(nodes_of(unit, "assignment_expression"), start, end):
        left = node.child_by_field_id(F_LEFT)
        if left is not None:
            targets.append((node, left))
    for node in in_span(nodes_of(unit, "update_expression"), start, end):
        arg = node.child_by_field_id(F_ARGUMENT)
        if arg is not None:
            targets.append((node, arg))
    return targets


@predicate("written_before_read", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           ArgSpec("$E", frozenset({"metavar"})), reads=("arguments", "declarations"))
def written_before_read(ctx: GuardContext, stmts: Binding, expr: Binding) -> Verdict:
    """The statements bound to $$$S carry no value from one run to the next: what they
    assign is memory, a variable they declare, or a plain local scalar declared before them
    (not an array, a reference, `static` or `__shared__`, its address never taken in the
    function) that they first meet as the target of a `v = e;` statement of their own top
    level, `e` not reading it, and that the code bound to $E (the loop's bound, tested
    between the runs) does not read. Each run then sets such a temporary before it reads it
    (the temporaries a first kernel declares before its bounds check: `float x, t;`)."""
    unit, src = ctx.unit, ctx.unit.source
    start, end = stmts.start, stmts.end
    inner = declared_names_in(unit, start, end)
    top = {n.start_byte for n in stmts.nodes}
    targets = _write_targets(unit, start, end)
    fn = ctx.function
    idents = [n for n in in_span(nodes_of(unit, "identifier"), start, end)]
    for node, lvalue in sorted(targets, key=lambda t: t[0].start_byte):
        base = base_identifier(lvalue)
        if base is None:
            continue  # *p = ..., a write through a pointer expression: memory
        name = text_of(src, base)
        if name in inner:
            continue
        outer = [d for d in declarations_named(unit, name) if d.start < start
                 and (fn is None or fn.body_start <= d.start)]
        decl = outer[-1] if outer else None
        direct = lvalue.type == "identifier" or unparen(lvalue).type == "identifier"
        if decl is None and not direct:
            continue  # x[i] = ... through a parameter or global pointer: memory
        why = f"{cited(unit, node.start_byte, node.end_byte)} writes `{name}`, declared " \
              "outside the statements"
        if decl is None or not direct or decl.dims or decl.reference or decl.origin != "local" \
                or {"static", "__shared__"} & decl.qualifiers:
            if decl is not None and not direct and not decl.dims:
                continue  # p[i] = ... through a local pointer: memory
            return _no(ctx, why + ": not a plain local scalar", node.start_byte)
        if fn is not None and re.search(rb"&\s*" + re.escape(name.encode()) + rb"\b",
                                        src[fn.body_start:fn.body_end]):
            return _no(ctx, why + f": its address may be taken (`&{name}`)", node.start_byte)
        if any(text_of(src, n) == name for n in in_span(nodes_of(unit, "identifier"), expr.start,
                                                        expr.end)):
            return _no(ctx, why + f", and {quoted(expr)} reads it", node.start_byte)
        first = next(n for n in idents if text_of(src, n) == name)
        stmt = first.parent.parent if first.parent is not None else None
        assign = first.parent
        if assign is None or assign.type != "assignment_expression" or \
                assign.child_by_field_id(F_LEFT) != first or operator_of(assign) != "=" or \
                stmt is None or stmt.type != "expression_statement" or \
                stmt.start_byte not in top or \
                any(text_of(src, n) == name for n in in_span(nodes_of(unit, "identifier"),
                                                     first.end_byte, assign.end_byte)):
            return _no(ctx, why + f", and `{name}` is not first set by a `{name} = ...;` of "
                       f"their own level ({unit.where(first.start_byte)}): its value may "
                       "carry from one run to the next", first.start_byte)
    return _yes(f"the statements at {unit.where(start)} write memory, their own variables, "
                "and temporaries they set before reading", start)


def _own_register_arrays(unit: Unit, start: int, end: int) -> set[str]:
    """The arrays declared in [start, end) that live in the thread's registers or local
    memory: with dimensions, of no pointer element type (an array counts as one level of
    indirection), not ``__shared__``, ``static`` or ``extern``; a name declared there
    again in another form is left out."""
    decls = declarations_of(unit, list(in_span(nodes_of(unit, "declaration"), start, end)))
    arrays = {d.name for d in decls if d.dims and d.pointer <= len(d.dims) and not d.reference
              and not {"__shared__", "static", "extern"} & set(d.qualifiers)}
    return {n for n in arrays if all(d.dims for d in decls if d.name == n)}


@predicate("assigns_only_locals", ArgSpec("$$$S", frozenset({"metavar", "sequence"})),
           reads=("arguments", "declarations"))
def assigns_only_locals(ctx: GuardContext, stmts: Binding) -> Verdict:
    """The statements bound to $$$S assign no variable declared outside them: every
    assignment, compound assignment, ++ or -- writes a variable the statements declare
    themselves, or memory through a pointer or a parameter array. A write to a scalar or a
    register array of the enclosing code (an accumulator) makes it false: split across
    threads, such a write would need a reduction."""
    unit, src = ctx.unit, ctx.unit.source
    start, end = stmts.start, stmts.end
    inner = declared_names_in(unit, start, end)
    targets = _write_targets(unit, start, end)
    for node, lvalue in sorted(targets, key=lambda t: t[0].start_byte):
        base = base_identifier(lvalue)
        if base is None:
            continue  # *p = ..., a write through a pointer expression: memory
        name = text_of(src, base)
        if name in inner:
            continue
        outer = [d for d in declarations_named(unit, name) if d.start < start
                 and (ctx.function is None or ctx.function.body_start <= d.start)]
        decl = outer[-1] if outer else None
        direct = lvalue.type == "identifier" or unparen(lvalue).type == "identifier"
        if decl is None:
            if direct:  # a parameter or a global assigned as a whole
                return _no(ctx, f"{cited(unit, node.start_byte, node.end_byte)} assigns "
                           f"`{name}`, which the statements do not declare", node.start_byte)
            continue  # x[i] = ... through a parameter or global pointer: memory
        if direct or (decl.dims and "__shared__" not in decl.qualifiers):
            return _no(ctx, f"{cited(unit, node.start_byte, node.end_byte)} writes `{name}`, "
                       f"declared outside the statements ({unit.where(decl.start)})",
                       node.start_byte)
    return _yes(f"the statements at {unit.where(start)} write only their own variables and "
                "memory", start)
