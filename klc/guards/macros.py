"""Guard predicate about function-like macros that wrap a load: ``load_hint_macro``; and
the file's functions and macros by name (``file_definitions``), which the guards that
follow a kernel into its helpers and macros share.

Real code often spells a cache-hinted load through a macro of its own (``#define LDG(p)
__ldg(p)``), so that another build can define it as a plain load. A rule that takes the hint
apart (passes/cache_hints.rule) then has to see through the macro: every definition of it in
the file must be a load of its one argument, hinted or plain."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from klc.analysis.tree import quoted, unit_memo
from klc.guards.registry import GuardContext, Verdict, _metavar, _no, _yes, predicate
from klc.match import Binding

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit

_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)",
                     re.M)
_OBJECT_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)(?:[ \t]|$)", re.M)
_ANY_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)((?:[^\n]*\\\n)*[^\n]*)", re.M)


def file_definitions(unit: Unit) -> tuple[dict[str, list[Function]], dict[str, bytes]]:
    """The unit's functions by name, and each macro's definition (what follows its name,
    continued lines included; the last one of a name) by name: read once per file."""

    def build() -> tuple[dict[str, list[Function]], dict[str, bytes]]:
        defs: dict[str, list[Function]] = {}
        for f in unit.functions:
            defs.setdefault(f.name, []).append(f)
        macros = {m.group(1).decode(): m.group(2) for m in _define_lines(unit.source)}
        return defs, macros

    return unit_memo(unit, "klc.guards.macros: functions and macros by name", build)  # type: ignore[no-any-return]


def _define_lines(src: bytes) -> list[re.Match[bytes]]:
    """``_ANY_DEFINE.finditer(src)``'s matches, tried only at the starts of the lines that
    spell ``define`` (a match's first line does; the regex alone tries every line of the
    file), each past the lines the one before took in."""
    out = []
    end = 0
    at = src.find(b"define")
    while at >= 0:
        start = src.rfind(b"\n", 0, at) + 1
        if start >= end:
            m = _ANY_DEFINE.match(src, start)
            if m is not None:
                out.append(m)
                end = m.end()
        at = src.find(b"define", at + 1)
    return out


# the loads a definition may be: a hinted load of the argument, or the plain load
_HINTS = ("__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv")


def _definitions(src: bytes) -> tuple[dict[str, list[tuple[str, str]]], set[str]]:
    fns: dict[str, list[tuple[str, str]]] = {}
    for m in _DEFINE.finditer(src):
        body = re.sub(r"\\\n", " ", m.group(3).decode("utf-8", "replace"))
        body = re.sub(r"//.*|/\*.*?\*/", "", body).strip()
        fns.setdefault(m.group(1).decode(), []).append((m.group(2).decode().strip(), body))
    objs = {m.group(1).decode() for m in _OBJECT_DEFINE.finditer(src)}
    return fns, objs


def _is_load_of(param: str, body: str) -> str | None:
    """The hint ``body`` loads ``param`` with (``""``: a plain load), None if it is no load."""
    p = re.escape(param)
    b = body
    while b.startswith("(") and b.endswith(")"):
        b = b[1:-1].strip()
    m = re.fullmatch(r"(__ld\w+)\s*\(\s*\(?\s*" + p + r"\s*\)?\s*\)", b)
    if m and m.group(1) in _HINTS:
        return m.group(1)
    if re.fullmatch(r"\*\s*\(?\s*" + p + r"\s*\)?", b):
        return ""
    return None


@predicate("load_hint_macro", _metavar("$M"), reads=("arguments", "file"))
def load_hint_macro(ctx: GuardContext, m: Binding) -> Verdict:
    """$M names a function-like macro of one parameter, every definition of which in the
    file is a load of that parameter: a cache-hinted one (``__ldg``, ``__ldcg``, ``__ldca``,
    ``__ldcs``, ``__ldlu``, ``__ldcv``) in at least one of them, or the plain ``*(p)``. Its
    call then reads the element its argument points to, whichever definition the build
    takes."""
    name = m.text.strip()
    fns, objs = unit_memo(ctx.unit, "function_macros", lambda: _definitions(ctx.unit.source))
    defs = fns.get(name)
    if not defs:
        return _no(ctx, f"{quoted(m)} is not a function-like macro defined in this file")
    if name in objs:
        return _no(ctx, f"`{name}` is also defined as an object-like macro")
    hints = set()
    for params, body in defs:
        if "," in params or not params or params == "...":
            return _no(ctx, f"`{name}({params})` does not take one parameter")
        hint = _is_load_of(params, body)
        if hint is None:
            return _no(ctx, f"`#define {name}({params}) {body}` is not a load of `{params}`")
        hints.add(hint)
    if not hints - {""}:
        return _no(ctx, f"`{name}` is a plain load in every definition: no cache hint")
    return _yes(f"`{name}(p)` is {' or '.join(sorted(h or '*(p)' for h in hints))}(p)", m.start)
