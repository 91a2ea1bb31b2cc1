"""Guard predicates about loops and the shape of code: trip counts, ``#pragma unroll``,
being in a loop, double buffers, syntax errors, jumps out of statements, names a region
uses, fresh names (``klc.analysis.loops``)."""

from __future__ import annotations

import re
from typing import Any

from klc.analysis.constants import Evaluator
from klc.analysis.declarations import declarations_named, lookup
from klc.analysis.launch import BLOCK_BARRIER
from klc.analysis.loops import enclosing_loop, loop_node, trip_count
from klc.analysis.tree import (
    binding_node,
    cited,
    identifiers_named,
    in_span,
    leaf_texts,
    leaves_in,
    nodes_of,
    quoted,
    snippet,
    text_of,
    unparen,
)
from klc.analysis.writes import is_assigned
from klc.cuda.build import loop_unroll
from klc.cuda.syntax import F_BODY, LOOP_TYPES
from klc.guards.registry import ArgSpec, GuardContext, Verdict, _no, _region, _yes, predicate
from klc.match import Binding
from klc.rule.fresh import kept_runs, shared_scope


@predicate("trip_count_known", ArgSpec("loop", frozenset({"metavar", "name"}),
                                       frozenset({"anchor", "loop"})), reads=("position",))
def trip_count_known(ctx: GuardContext, what: Any) -> Verdict:
    """The for loop ($LOOP, the loop whose header holds $COND, ``anchor`` or ``loop``) runs
    a number of iterations known at compile time: constant start, bound and step."""
    node, why = loop_node(ctx, what)
    if node is None:
        return _no(ctx, why)
    count, why = trip_count(ctx, node)
    unit = ctx.unit  # (the reasons written when they are read)

    def header() -> str:
        return snippet(unit.text(node.start_byte, (node.child_by_field_id(F_BODY)
                                                   or node).start_byte))

    if count is None:
        return _no(ctx, lambda: f"the trip count of `{header()}` "
                   f"({unit.where(node.start_byte)}) is not known: "
                   f"{why if isinstance(why, str) else why()}", node.start_byte)
    return _yes(lambda: f"`{header()}` runs {count} iterations", node.start_byte)


@predicate("has_pragma_unroll", ArgSpec("loop", frozenset({"metavar", "name"}),
                                        frozenset({"anchor", "loop"})),
           ArgSpec("N", frozenset({"int", "hole"}), optional=True), reads=("position",))
def has_pragma_unroll(ctx: GuardContext, what: Any, factor: Any = None) -> Verdict:
    """The loop ($LOOP, ``anchor`` or ``loop``) is directly preceded by ``#pragma unroll``
    (with factor N, when N is given)."""
    node, why = loop_node(ctx, what)
    if node is None:
        return _no(ctx, why)
    unit = ctx.unit  # (the reasons written when they are read)
    # (the loop's own pragma, not the model's loops: a file's loops are found only where
    # a guard asks more of them than this)
    unroll = loop_unroll(unit, node) if ctx.function is not None else None
    if unroll is None:
        return _no(ctx, lambda: f"the loop at {unit.where(node.start_byte)} has no "
                   "#pragma unroll", node.start_byte)
    if factor is not None and str(unroll).strip() != str(factor):
        return _no(ctx, lambda: f"the loop at {unit.where(node.start_byte)} has "
                   f"#pragma unroll {unroll}, not {factor}", node.start_byte)
    return _yes(lambda: f"the loop at {unit.where(node.start_byte)} has #pragma unroll "
                f"{unroll}".rstrip(), node.start_byte)


@predicate("in_loop", reads=("position",))
def in_loop(ctx: GuardContext) -> Verdict:
    """The match is inside a loop of its function (not merely a loop itself)."""
    fn = ctx.function
    lp = enclosing_loop(fn, ctx.match.start, ctx.match.end) if fn is not None else None
    if lp is None:
        return _no(ctx, f"the match ({ctx.unit.where(ctx.match.start)}) is not inside a loop")
    return _yes(f"inside the {lp.kind} loop at {ctx.unit.where(lp.start)}", lp.start)


@predicate("not_in_error", reads=("position",))
def not_in_error(ctx: GuardContext) -> Verdict:
    """The match does not overlap a region the parser could not read (a syntax error)."""
    problem = ctx.unit.in_error(ctx.match.start, ctx.match.end)
    if problem is None:
        return _yes("the match parsed cleanly", ctx.match.start)
    return _no(ctx, f"the match overlaps a syntax error: {problem.describe(ctx.unit.path)}",
               problem.start)


@predicate("double_buffered", ArgSpec("NAME", frozenset({"hole", "name", "string"})),
           reads=("position", "layout"))
def double_buffered(ctx: GuardContext, name: Any) -> Verdict:
    """The matched barrier may become the toggle ``NAME ^= 1`` of a double buffer: it is
    the last statement of the body of the loop around it, an earlier barrier in that body
    separates the step's stores from its reads, every __shared__ array the loop touches has
    a first dimension of 2 and is subscripted first with NAME everywhere in the loop, and
    NAME is a variable declared before the loop that nothing in the loop assigns and nothing
    after it reads. Then the next step stores into the other buffer while slow warps still
    read this one, and the barrier before the reads keeps each buffer from being reused
    too early."""
    unit, src, fn = ctx.unit, ctx.unit.source, ctx.function
    word = str(name)
    if fn is None or not re.fullmatch(r"[A-Za-z_]\w*", word):
        return _no(ctx, f"`{word}` is not a variable name in a function")
    loop, why = loop_node(ctx, "loop")
    if loop is None:
        return _no(ctx, why)
    body = loop.child_by_field_id(F_BODY)
    stmts = [c for c in body.named_children if c.type != "comment"] if body is not None else []
    anchor = ctx.match.nodes[-1]
    if not stmts or (stmts[-1].start_byte, stmts[-1].end_byte) != (anchor.start_byte,
                                                                   anchor.end_byte):
        return _no(ctx, f"the barrier ({unit.where(ctx.match.start)}) does not end the body "
                   f"of the loop at {unit.where(loop.start_byte)}")
    if not any(BLOCK_BARRIER.match(b.name) and body.start_byte < b.start < ctx.match.start
               for b in fn.barriers):
        return _no(ctx, f"no other barrier in the loop at {unit.where(loop.start_byte)} "
                   "separates its stores from its reads")
    decl = lookup(ctx, word, loop.start_byte)
    if decl is None or decl.start >= loop.start_byte or decl.pointer:
        return _no(ctx, f"`{word}` is not a variable declared before the loop")
    if is_assigned(ctx, word, loop.start_byte, loop.end_byte):
        return _no(ctx, f"`{word}` is assigned in the loop at {unit.where(loop.start_byte)}")
    after = re.search(rb"(?<![\w.])" + re.escape(word.encode()) + rb"\b", src[loop.end_byte:
                                                                          fn.body_end])
    if after is not None:
        return _no(ctx, f"`{word}` is read after the loop "
                   f"({unit.where(loop.end_byte + after.start())})")
    ev, used = Evaluator(ctx), []
    for sh in fn.shared:
        uses = list(re.finditer(rb"(?<![\w.])" + re.escape(sh.name.encode()) + rb"\s*\[",
                                src[loop.start_byte:loop.end_byte]))
        if not uses:
            continue
        used.append(sh.name)
        if not sh.dims or ev.text(sh.dims[0]) != 2:
            return _no(ctx, f"__shared__ `{sh.name}` ({unit.where(sh.start)}) has no first "
                       "dimension of 2")
        for u in uses:
            at = loop.start_byte + u.end()  # just after the "["
            depth, close = 1, at
            while close < loop.end_byte and depth:
                depth += {91: 1, 93: -1}.get(src[close], 0)  # "[" and "]"
                close += 1
            index = src[at:close - 1].strip()
            if index != word.encode():
                return _no(ctx, f"`{sh.name}[{index.decode('utf-8', 'replace')}]` "
                           f"({unit.where(loop.start_byte + u.start())}) is not subscripted "
                           f"first with `{word}`")
    if not used:
        return _no(ctx, f"the loop at {unit.where(loop.start_byte)} touches no __shared__ "
                   "array")
    return _yes(f"the barrier ends the loop's step; {', '.join(used)} are double buffers "
                f"indexed by `{word}`", ctx.match.start)


# ---- predicates for sub-rewrites (``rewrite within $$$X { ... }``): what a run of statements
# does to the variables around it


def _span_of(ctx: GuardContext, what: Any) -> tuple[int, int, str] | Verdict:
    """The byte span and a description of a bound metavariable or sequence, or a region."""
    if isinstance(what, Binding):
        where_ = ctx.unit.where(what.start)
        return what.start, what.end, f"`{snippet(what.text)}` ({where_})"
    return _region(ctx, str(what))


@predicate("mentions", ArgSpec("$X|region", frozenset({"metavar", "sequence", "name"})),
           ArgSpec("NAME", frozenset({"name", "string", "hole", "metavar"})),
           reads=("arguments", "position"))
def mentions(ctx: GuardContext, what: Any, name: Any) -> Verdict:
    """The code bound to $X (or REGION: anchor, loop, kernel) uses the identifier NAME (a
    name, a string, an ident hole, or what a metavariable bound; an expression bound by a
    metavariable is looked for token by token): ``not mentions($$$BODY, threadIdx)`` says
    the statements never look at the thread index."""
    span = _span_of(ctx, what)
    if isinstance(span, Verdict):
        return span
    start, end, label = span
    word = name.text.strip() if hasattr(name, "text") else str(name)
    src = ctx.unit.source
    bound = binding_node(name) if hasattr(name, "text") else None
    if bound is not None and unparen(bound).type != "identifier":
        # an expression: its code, token for token (spacing and comments aside)
        code = "\0".join(leaf_texts(bound, src))
        if code and f"\0{code}\0" in "\0" + "\0".join(leaves_in(ctx.unit, start, end)) + "\0":
            return _yes(f"{label} uses `{snippet(word)}`", start)
        return _no(ctx, f"{label} never uses `{snippet(word)}`", start)
    for at in identifiers_named(ctx.unit, word, start, end):
        return _yes(f"{label} uses `{word}` ({ctx.unit.where(at)})", at)
    return _no(ctx, f"{label} never uses `{word}`", start)


@predicate("no_loops", ArgSpec("$$$S", frozenset({"metavar", "sequence"})), reads=("arguments",))
def no_loops(ctx: GuardContext, stmts: Binding) -> Verdict:
    """The statements bound to $$$S hold no loop (for, range-for, while, do) and no goto:
    straight-line code, a fixed amount of work, as the body of an element-wise kernel (one
    element's work; a body that loops over a row is a row kernel's)."""
    unit, src = ctx.unit, ctx.unit.source
    for node in in_span(nodes_of(unit, *LOOP_TYPES, "goto_statement"), stmts.start, stmts.end):
        return _no(ctx, f"`{snippet(text_of(src, node))}` ({unit.where(node.start_byte)}) is a "
                   "loop: not straight-line code", node.start_byte)
    return _yes(f"{quoted(stmts)} holds no loop", stmts.start)


@predicate("no_jumps", ArgSpec("$$$S", frozenset({"metavar", "sequence"})), reads=("arguments",))
def no_jumps(ctx: GuardContext, stmts: Binding) -> Verdict:
    """The code bound to $$$S has no return, goto, break or continue out of it (a break of
    a loop or switch of its own, a continue of a loop of its own, is fine): control always
    reaches its end. A continue of a loop around the code skips the rest of it, and the
    rules that re-wrap code in a loop or unwrap it (loop_of_one, trip_count_one_loop_to_block)
    would hand it to another loop."""
    loops = LOOP_TYPES
    unit = ctx.unit
    start, end = stmts.start, stmts.end
    for node in in_span(nodes_of(unit, "return_statement", "goto_statement", "break_statement",
                                 "continue_statement"), start, end):
        if node.type in ("break_statement", "continue_statement"):
            targets = (*loops, "switch_statement") if node.type == "break_statement" \
                else loops  # a continue inside a switch belongs to the loop around it
            p = node.parent
            while p is not None and p.start_byte >= start and p.type not in targets:
                p = p.parent
            if p is not None and p.start_byte >= start:
                continue
        return _no(ctx, f"{cited(unit, node.start_byte, node.end_byte)} leaves the code early",
                   node.start_byte)
    return _yes(f"no return, goto, break or continue out of the code at {unit.where(start)}",
                start)


@predicate("fresh_name", ArgSpec("NAME", frozenset({"hole", "name", "string"})),
           reads=("position",))
def fresh_name(ctx: GuardContext, name: Any) -> Verdict:
    """NAME (an ident hole's value) is not used anywhere in the enclosing function, so a
    rewrite may declare it."""
    return fresh_in_function(ctx, name)


def fresh_in_function(ctx: GuardContext, name: Any, replaced: bool = False,
                      kept: frozenset[str] = frozenset()) -> Verdict:
    """``fresh_name``'s judgement. With ``replaced`` (the freshness a rewrite's declaration
    implies, ``klc.rule.fresh``), a name that the matched code declares itself and that
    occurs nowhere else in the function is fresh too: the rewrite replaces that code (the
    loop variable `i` of the loop that vectorize_float4_loop rewrites, which the skill's
    tail loop declares again in a scope of its own). ``kept``: the runs the rewrite writes
    back inside the new variable's scope (``klc.rule.fresh.kept_runs``); a declaration of the
    name in one of them is never the matched code's own (it stays, beside the new one)."""
    fn = ctx.function
    if fn is None:
        return _no(ctx, "the match is not inside a function")
    word = str(name)
    if not re.fullmatch(r"[A-Za-z_]\w*", word):
        return _no(ctx, f"`{word}` is not an identifier")
    m = ctx.match
    decls = declarations_named(ctx.unit, word)
    if replaced and kept:
        # code the rewrite writes back as it was (a $$$ run, statement dots) inside the new
        # variable's scope keeps its declarations: the name is then declared twice, or the
        # kept code's own shadows the new one where the rewrite reads it
        runs = [b for k, b in m.bindings.items()
                if k in kept or ("..." in kept and k.startswith("__dots"))]
        kept = next((d for d in decls for b in runs if b.start <= d.start < b.end), None)
        if kept is not None:
            return _no(ctx, f"`{word}` is declared in code the rewrite keeps "
                       f"({ctx.unit.where(kept.start)})", kept.start)
    own = replaced and any(m.start <= d.start < m.end for d in decls)
    for at in identifiers_named(ctx.unit, word, fn.start, fn.body_end):
        if own and m.start <= at < m.end:
            continue  # (the matched code's own variable, which the rewrite replaces)
        return _no(ctx, f"`{word}` is already used in `{fn.name}` ({ctx.unit.where(at)})", at)
    return _yes(f"`{word}` is a fresh name in `{fn.name}`")


DECLARED_NAME = "names a variable the rewrite declares"  # the reason's words (klc.fill.search)


def evaluate_declared(names: tuple[str, ...], ctx: GuardContext) -> Verdict | None:
    """The freshness a rule's rewrite implies (``klc.rule.fresh``): ``fresh_name(?h)`` for
    each ident hole it declares, judged as the predicate judges it, except that the matched
    code's own variables (which the rewrite replaces) do not count
    (``klc.guards.loops.fresh_in_function``); pending while a hole has no value. None when
    every name is fresh (or pending), else the first refusal."""
    given: dict[str, list[str]] = {}
    for name in names:
        value = ctx.holes.get(name)
        if value is None:
            continue  # pending: judged again once the hole has a value
        before = given.setdefault(value.strip(), [])
        other = next((o for o in before if shared_scope(ctx.match.rule, o, name)), None)
        before.append(name)
        if other is not None:
            # two declarations of one name where they meet: neither is fresh for the other
            return Verdict(False, f"?{name} {DECLARED_NAME}: `{value.strip()}` is also the "
                           f"value of ?{other}, which the rewrite declares too", None)
        v = fresh_in_function(ctx, value.strip(), replaced=True,
                              kept=kept_runs(ctx.match.rule, name))
        if not v.ok:
            return Verdict(False, f"?{name} {DECLARED_NAME}: {v.reason}", v.start, v.unknown)
    return None


MAX_FRESH_SUFFIX = 99  # offset, offset_1, ..., offset_99


def fresh_variant(ctx: GuardContext, name: str, strict: bool = False, hole: str | None = None,
                  taken: frozenset[str] = frozenset()) -> str:
    """The first of ``name``, ``name_1``, ``name_2``, ... that is fresh at the match as
    :func:`evaluate_declared` judges the value of the declared hole ``hole`` (the matched
    code's own variables do not count), or with ``strict`` as the guard's own
    ``fresh_name(?h)`` judges it (they do: a rewrite that declares ``?accs`` beside the
    kernel's own ``acc``), and not in ``taken`` (the names other holes of the rewrite
    declare); ``name`` itself when none is (the site is then refused, saying why)."""
    kept = kept_runs(ctx.match.rule, hole) if hole is not None and not strict else frozenset()
    for k in range(MAX_FRESH_SUFFIX + 1):
        word = f"{name}_{k}" if k else name
        if word in taken:
            continue
        if fresh_in_function(ctx, word, replaced=not strict, kept=kept).ok:
            return word
    return name


def fresh_defaults(ctx: GuardContext, declared: tuple[tuple[str, bool], ...]
                   ) -> dict[str, str]:
    """For each ident hole a rewrite declares and the user gave no value (``declared``: the
    hole and whether the guard requires its freshness itself), whose default ``ctx.holes``
    holds and the function already uses: the default's first fresh variant
    (:func:`fresh_variant`; ``acc`` -> ``acc_1`` in a kernel with its own ``acc``), as
    Coccinelle's fresh identifiers are made. Holes whose default is fresh are left out."""
    out: dict[str, str] = {}
    for hole, strict in declared:
        value = ctx.holes.get(hole)
        if value is None:
            continue
        taken = frozenset(v for h, v in ctx.holes.items() if h != hole) | frozenset(out.values())
        word = fresh_variant(ctx, value.strip(), strict, hole, taken)
        if word != value.strip():
            out[hole] = word
    return out


def name_run_once(ctx: GuardContext, x: Binding, verb: str) -> tuple[str, Any] | Verdict:
    """(the plain name $X binds, the function), when the match runs once: in no loop of the
    function, which has no ``goto``; else the refusal (the next run of the match comes after
    it and may ``verb`` the name). What may happen to $X after the match is then a question
    of the code that follows it alone."""
    fn = ctx.function
    unit, src, m = ctx.unit, ctx.unit.source, ctx.match
    node = binding_node(x)
    if node is None or fn is None or unparen(node).type != "identifier":
        return _no(ctx, f"{quoted(x)} is not a plain name in a function", x.start)
    name = text_of(src, unparen(node))
    lp = enclosing_loop(fn, m.start, m.end)
    if lp is not None:
        return _no(ctx, f"the match is inside the {lp.kind} loop at {unit.where(lp.start)}: "
                   f"its next iteration runs after it and may {verb} `{name}`", lp.start)
    for g in in_span(nodes_of(unit, "goto_statement"), fn.body_start, fn.body_end):
        return _no(ctx, f"`{snippet(unit.text(g))}` ({unit.where(g.start_byte)}) may run the "
                   "match again", g.start_byte)
    return name, fn


@predicate("unused_after", ArgSpec("$X", frozenset({"metavar"})), reads=("arguments", "position"))
def unused_after(ctx: GuardContext, x: Binding) -> Verdict:
    """The name $X bound is used nowhere in its function after the match, the match is in no
    loop and the function has no ``goto`` (nothing runs the match again): a rewrite may leave
    other values in $X (a shared tree's elements) and no barrier after them."""
    named = name_run_once(ctx, x, "use")
    if isinstance(named, Verdict):
        return named
    name, fn = named
    unit, src, m = ctx.unit, ctx.unit.source, ctx.match
    for ident in in_span(nodes_of(unit, "identifier"), m.end, fn.body_end):
        if text_of(src, ident) == name:
            return _no(ctx, f"`{name}` is used after the match ({unit.where(ident.start_byte)})",
                       ident.start_byte)
    return _yes(f"`{name}` is not used after the match", x.start)
