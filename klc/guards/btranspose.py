"""Guard predicates for a batched transpose staged through a shared tile
(passes/batched_transpose.rule): the offsets that the naive kernel computes per element are
pure functions of its row, column and batch indices, and they transpose (the source is
contiguous along the column, the destination along the row)."""

from __future__ import annotations

import random
import re

from tree_sitter import Node

from klc.errors import KlcError
from klc.guards.registry import ArgSpec, GuardContext, Verdict, _metavar, _no, _yes, predicate
from klc.match import Binding
from klc.safe_eval import C_CONSTANT, evaluate

_SEQ = frozenset({"metavar", "sequence"})
# node kinds that read memory, call, write, or name a member (blockIdx.x, blockDim.x, s.n)
_REFUSED = {"call_expression": "calls a function", "assignment_expression": "assigns",
            "update_expression": "increments", "subscript_expression": "reads memory",
            "pointer_expression": "dereferences or takes an address",
            "field_expression": "reads a member or a built-in (threadIdx, blockDim, ...)",
            "compound_literal_expression": "builds a value", "lambda_expression": "is a lambda",
            "conditional_expression": "selects", "comma_expression": "sequences"}
_CAST = re.compile(r"\(\s*(?:const\s+)?(?:unsigned\s+|signed\s+)?"
                   r"(?:size_t|ptrdiff_t|u?int(?:32|64)_t|long\s+long|long|int|unsigned)\s*\)")


def _walk(node: Node):
    yield node
    for ch in node.children:
        yield from _walk(ch)


def _nodes_of(b: Binding) -> list[Node]:
    if b.nodes:
        return list(b.nodes)
    node = getattr(b, "node", None)
    return [node] if node is not None else []


def _written_names(body: Node, src: bytes) -> set[str]:
    """Names that an assignment or increment anywhere in BODY writes."""
    out: set[str] = set()
    for n in _walk(body):
        target = None
        if n.type == "assignment_expression":
            target = n.child_by_field_name("left")
        elif n.type == "update_expression":
            target = n.child_by_field_name("argument")
        if target is not None and target.type == "identifier":
            out.add(src[target.start_byte:target.end_byte].decode())
    return out


def _declared_names(body: Node, src: bytes) -> set[str]:
    out: set[str] = set()
    for n in _walk(body):
        if n.type in ("init_declarator", "declaration"):
            d = n.child_by_field_name("declarator")
            while d is not None and d.type not in ("identifier",):
                d = d.child_by_field_name("declarator")
            if d is not None:
                out.add(src[d.start_byte:d.end_byte].decode())
    return out


def _py(expr: str) -> str | None:
    """The C integer expression as Python (casts dropped),
    or None when it holds anything but names, numbers, + - * / % and parentheses."""
    e = _CAST.sub(" ", expr)
    if not re.fullmatch(r"[\w\s+\-*/%()]*", e):
        return None
    e = re.sub(r"\b(\d+)(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU]?)\b", r"\1", e)
    return e


@predicate("transposed_offsets", ArgSpec("$$$D", _SEQ), _metavar("$SI"), _metavar("$DI"),
           _metavar("$COLS"), _metavar("$P"), _metavar("$C"), _metavar("$B"),
           ArgSpec("$$$PRE", _SEQ, optional=True), reads=("arguments", "declarations"))
def transposed_offsets(ctx: GuardContext, decls: Binding, si: Binding, di: Binding,
                       cols: Binding, p: Binding, c: Binding, b: Binding,
                       pre: Binding | None = None) -> Verdict:
    """The code bound to $$$D (and to $$$PRE, declarations before the bounds check, which
    come first) is declarations only, and they, the offsets $SI (read) and
    $DI (written) and the bound $COLS read no memory and no built-in, call nothing, write
    nothing, and name only $P (column), $C (row), $B (batch), the names $$$D declares,
    kernel parameters the kernel never assigns and #define'd integer literals: each offset is a
    function of (batch, row, column) alone, the same in whichever thread computes it. And
    they transpose: evaluated at random parameter values, $SI grows by 1 with the column
    and $DI by 1 with the row (so a tile read along columns and written along rows is
    coalesced both ways)."""
    fn = ctx.function
    if fn is None:
        return _no(ctx, "the match is not inside a function")
    src = ctx.unit.source
    fbody = None
    n = (_nodes_of(si) or [None])[0]
    while n is not None:
        if n.type == "function_definition":
            fbody = n.child_by_field_name("body")
            break
        n = n.parent
    if fbody is None:
        return _no(ctx, "the offsets are not inside a function body")
    names = {x.text.strip() for x in (p, c, b)}
    if len(names) != 3:
        return _no(ctx, "the row, column and batch indices are not three distinct names")
    dnodes = (_nodes_of(pre) if pre is not None else []) + _nodes_of(decls)
    local: list[tuple[str, str]] = []
    for d in dnodes:
        if d.type == "comment":
            continue
        if d.type != "declaration":
            return _no(ctx, f"`{src[d.start_byte:d.end_byte].decode()[:40]}` is not a declaration",
                       d.start_byte)
        for ch in d.children:
            if ch.type == "init_declarator":
                nm = ch.child_by_field_name("declarator")
                val = ch.child_by_field_name("value")
                if nm is None or nm.type != "identifier" or val is None:
                    return _no(ctx, "a declaration is not `T name = value`", d.start_byte)
                local.append((src[nm.start_byte:nm.end_byte].decode(),
                              src[val.start_byte:val.end_byte].decode()))
            elif ch.type in ("identifier", "array_declarator", "pointer_declarator",
                             "reference_declarator", "function_declarator"):
                return _no(ctx, "a declaration has no initialiser", d.start_byte)
        if re.search(r"\b(__shared__|static|extern|__device__|__constant__)\b",
                     src[d.start_byte:d.end_byte].decode()):
            return _no(ctx, "a declaration is not a plain local", d.start_byte)
    declared_here = {k for k, _ in local}
    params = {q.name for q in fn.params}
    written = _written_names(fbody, src)
    declared_fn = _declared_names(fbody, src)
    text = src.decode(errors="replace")
    allowed = names | declared_here
    for what, nodes in (("the declarations", dnodes), ("the read offset", _nodes_of(si)),
                        ("the written offset", _nodes_of(di)), ("the bound", _nodes_of(cols))):
        for node in nodes:
            for x in _walk(node):
                if x.type in _REFUSED:
                    return _no(ctx, f"{what} {_REFUSED[x.type]} "
                               f"(`{src[x.start_byte:x.end_byte].decode()[:40]}`)", x.start_byte)
                if x.type != "identifier":
                    continue
                w = src[x.start_byte:x.end_byte].decode()
                if w in allowed:
                    continue
                if w in params and w not in written and w not in declared_fn:
                    continue
                if w not in params and w not in declared_fn and re.search(
                        rf"^\s*#\s*define\s+{re.escape(w)}\s+\(?\s*\d+\s*\)?\s*$", text, re.M):
                    continue
                return _no(ctx, f"{what} name `{w}`, which is neither the indices, a local "
                           "they declare, an unassigned kernel parameter nor a #define of a number",
                           x.start_byte)
    return _strides(ctx, local, si, di, (p, c, b), params, text)


def _strides(ctx: GuardContext, local: list[tuple[str, str]], si: Binding, di: Binding,
             pcb: tuple[Binding, Binding, Binding], params: set[str], text: str) -> Verdict:
    """transposed_offsets' second half: evaluated at sample values, the read offset $SI
    grows by 1 with the column, the written offset $DI by 1 with the row."""
    p, c, b = pcb
    # the transpose: unit stride of the read along the column, of the write along the row
    exprs = [(k, _py(v)) for k, v in local]
    sip, dip = _py(si.text), _py(di.text)
    if sip is None or dip is None or any(v is None for _, v in exprs):
        return _no(ctx, "an offset is not plain integer arithmetic that can be evaluated")
    rng = random.Random(18)
    pn, cn, bn = (x.text.strip() for x in (p, c, b))
    macros = dict(re.findall(r"^\s*#\s*define\s+(\w+)\s+\(?\s*(\d+)\s*\)?\s*$", text, re.M))

    def at(env0: dict[str, int], pv: int, cv: int, bv: int) -> tuple[int, int] | None:
        env = {k: int(v) for k, v in macros.items()}
        env.update(env0)
        env.update({pn: pv, cn: cv, bn: bv})
        try:
            for k, v in exprs:
                env[k] = evaluate(v, env, C_CONSTANT)
            return (evaluate(sip, env, C_CONSTANT), evaluate(dip, env, C_CONSTANT))
        except KlcError:
            return None

    for _ in range(4):
        env0 = {q: rng.randint(40, 97) for q in params}
        pv, cv, bv = rng.randint(1, 30), rng.randint(1, 30), rng.randint(1, 5)
        base, dp, dc = at(env0, pv, cv, bv), at(env0, pv + 1, cv, bv), at(env0, pv, cv + 1, bv)
        if base is None or dp is None or dc is None:
            return _no(ctx, "the offsets could not be evaluated at sample sizes")
        if dp[0] - base[0] != 1:
            return _no(ctx, f"the read offset `{si.text}` is not contiguous along the column "
                       f"`{pn}`: no transpose to stage", si.start)
        if dc[1] - base[1] != 1:
            return _no(ctx, f"the written offset `{di.text}` is not contiguous along the row "
                       f"`{cn}`: the inner dimensions are not swapped", di.start)
        if dp[1] - base[1] == 1 or dc[0] - base[0] == 1:
            return _no(ctx, "the offsets do not swap the row and the column")
    return _yes(f"`{si.text}` is contiguous along `{pn}`, `{di.text}` along `{cn}`, both "
                f"functions of ({bn}, {cn}, {pn}) and unassigned parameters only", si.start)
