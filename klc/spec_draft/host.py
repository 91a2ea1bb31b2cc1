"""Reading a kernel's host launch (``kernel<<<grid, block>>>(args)``) for ``klc spec init``:
the host's size variables set from constants, and each argument and launch dimension as an
expression of them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from klc.cuda.model import Function, Unit
from klc.spec import parse_ctype
from klc.spec_draft.exprs import evaluate_or_none, subst


@dataclass
class Host:
    sizes: dict[str, int]  # host size variable: value
    args: list[str]  # each kernel argument as an expression of the host sizes
    grid: list[str]
    block: list[str]
    shared: str | None
    where: str


def host_launch(unit: Unit, kernel: str) -> Host | None:
    """The first launch of ``kernel`` in host code, resolved to the host's size variables:
    locals of the launching function and, when that function is called from another
    (``main``), its parameters replaced by the caller's arguments."""
    launch = next((ln for ln in unit.launches if ln.kernel == kernel), None)
    if launch is None:
        return None
    host = unit.function_at(launch.start)
    if host is None:
        return None
    env: dict[str, str] = {}  # host name -> spec expression text
    order: list[str] = []
    _scan(unit, host, env, order)
    _launcher_params(unit, host, env, order)
    # size variables: host integers set from a constant expression
    literals: dict[str, int] = {}
    for name in order:
        v = evaluate_or_none(env[name], {})
        if v is not None and isinstance(v, int) and v > 0:
            literals[name] = v
    try:
        args = [_resolve(_c_to_spec(a), env, literals) for a in launch.args]
        config = [_resolve(_c_to_spec(c), env, literals) for c in launch.config]
    except RecursionError:  # pragma: no cover - a self-referencing host variable
        return None
    body = unit.text(host.node)
    grid = _dim3(launch.config[0], body, env, literals) if launch.config else ["1"]
    block = _dim3(launch.config[1], body, env, literals) if len(launch.config) > 1 else ["1"]
    shared = config[2] if len(config) > 2 else None
    used = set()
    for t in [*args, *grid, *block, *([shared] if shared else [])]:
        used |= set(re.findall(r"\b[A-Za-z_]\w*\b", t))
    sizes = {n: v for n, v in literals.items() if n in used}
    # block sizes and other constants only in the launch config are written as numbers
    config_only = {n for n in sizes if not any(re.search(rf"\b{n}\b", a) for a in args)}
    numbers = {n: str(sizes[n]) for n in config_only}
    grid = [subst(g, numbers) for g in grid]
    block = [subst(b, numbers) for b in block]
    if shared:
        shared = subst(shared, numbers)
    for n in config_only:
        del sizes[n]
    return Host(sizes, args, grid, block, shared, unit.where(launch.start))


def _c_to_spec(text: str) -> str:
    """A host C expression in spec spelling: casts dropped, ``sizeof`` as a number, the
    usual ceiling-division macros as ``ceil_div``, ``/`` as ``//``."""
    t = re.sub(r"\(\s*(?:size_t|int|long|unsigned|long long|unsigned int|int64_t)\s*\)",
               "", text)
    t = re.sub(r"sizeof\s*\(\s*([\w\s]+?)\s*\)", lambda m: _sizeof(m.group(1)), t)
    t = re.sub(r"\bCEIL_DIV\b|\bceil_div\b|\bcdiv\b|\bdiv_up\b|\bDIV_UP\b", "ceil_div", t)
    t = re.sub(r"(\d)[fF]\b", r"\1", t)
    return t.replace("/", "//").replace("////", "//")


def _scan(unit: Unit, fn: Function, env: dict[str, str], order: list[str]) -> None:
    """The locals ``fn`` initializes (the first definition of each name wins)."""
    body = fn.node.child_by_field_name("body")
    if body is None:
        return
    stack = [body]
    while stack:
        n = stack.pop()
        if n.type == "init_declarator":
            name = n.child_by_field_name("declarator")
            value = n.child_by_field_name("value")
            if name is not None and value is not None and name.type == "identifier":
                nm = unit.text(name)
                if nm not in env:
                    env[nm] = _c_to_spec(unit.text(value))
                    order.append(nm)
        stack.extend(reversed(n.named_children))


def _launcher_params(unit: Unit, host: Function, env: dict[str, str], order: list[str]
                     ) -> None:
    """The launcher's parameters, from its first call in another host function (whose
    locals are read too)."""
    params = [p.name for p in host.params]
    if not params:
        return
    for caller in unit.functions:
        if caller is host or caller.kind != "host":
            continue
        call = next(_calls(unit, caller, host.name), None)
        if call is None:
            continue
        args = call.child_by_field_name("arguments")
        values = [unit.text(a) for a in (args.named_children if args else [])]
        _scan(unit, caller, env, order)
        for p, v in zip(params, values, strict=False):
            if p not in env:
                env[p] = _c_to_spec(v)
        return


def _resolve(text: str, env: dict[str, str], literals: dict[str, int], depth: int = 0) -> str:
    """Host names in ``text`` replaced by their definitions, down to the size variables."""
    if depth > 20:
        return text
    names = set(re.findall(r"\b[A-Za-z_]\w*\b", text)) - {"ceil_div", "min", "max"}
    out = text
    for nm in sorted(names, key=len, reverse=True):
        if nm in literals:
            continue
        if nm in env:
            out = re.sub(rf"\b{re.escape(nm)}\b",
                         f"({_resolve(env[nm], env, literals, depth + 1)})", out)
    return out


def _dim3(text: str, body: str, env: dict[str, str], literals: dict[str, int]) -> list[str]:
    """A launch dimension's axes: of a ``dim3 grid(a, b)`` variable declared in the
    launcher, of ``dim3(a, b)`` written in place, or the one expression."""
    name = text.strip("() ")
    m = re.search(rf"dim3\s+{re.escape(name)}\s*\(([^;]*)\)\s*;", body)
    if m:
        return [_resolve(_c_to_spec(d.strip()), env, literals) for d in _split_args(m.group(1))]
    m = re.fullmatch(r"\s*\(?\s*dim3\s*\((.*)\)\s*\)?\s*", text)
    axes = [d.strip() for d in m.group(1).split(",")] if m else [text]
    return [_resolve(_c_to_spec(d), env, literals) for d in axes]


def _sizeof(type_name: str) -> str:
    """``sizeof(T)`` of a type the gate knows (float: 4, __half: 2, float4: 16), else the
    text as it was (and the draft will not check: a person gives the number)."""
    import numpy as np

    parsed = parse_ctype(type_name)
    if parsed is None or parsed[1]:
        return f"sizeof({type_name})"
    ct = parsed[0]
    item = 2 if ct.dtype == "bfloat16" else np.dtype(ct.dtype).itemsize
    return str(item * ct.lanes)


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch in "([{"
        depth -= ch in ")]}"
        cur += ch
    if cur.strip():
        out.append(cur)
    return out


def _calls(unit: Unit, fn: Function, name: str) -> Iterator[Node]:
    stack = [fn.node]
    while stack:
        n = stack.pop()
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            if f is not None and unit.text(f) == name:
                yield n
        stack.extend(reversed(n.named_children))
