"""Element types as the compiler sees them: a parameter spelled ``floatX*`` (``typedef float
floatX;``, ``using floatX = __nv_bfloat16;``, ``#define floatX float``, a ``-D`` switch that
picks one, a header found through ``-I``) resolves to the type the gate allocates.

In order: the spec's ``dtype`` names (``dtype: {floatX: bfloat16}``, for what the text cannot
tell), the names the spec model knows, the file's and the command's object-like macros, then
libclang's canonical type of the parameter (or of the typedef), with the command's include
paths and macros and the spec's own ``-D``/``-I`` options."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from klc.spec.model import CType, parse_ctype

if TYPE_CHECKING:
    from klc.cuda.model import Unit

Parsed = tuple[CType, int, bool]


def _substitute(text: str, names: dict[str, str]) -> str:
    for _ in range(8):
        new = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: names.get(m.group(0), m.group(0)), text)
        if new == text:
            break
        text = new
    return text


def _macros(unit: Unit) -> dict[str, str]:
    from klc.cuda.flags import flags_for
    from klc.cuda.macros import definitions_of

    out = {n: body for n, (params, body) in definitions_of(unit.source).items()
           if params is None and body}
    out.update(flags_for(unit.path).macro_values())
    return out


def compiler_args(options: Iterable[str]) -> tuple[str, ...]:
    """The ``-D``/``-U``/``-I`` options among a spec's NVRTC options, as clang's."""
    return tuple(o for o in options if re.match(r"-[DUI]\S", o))


def resolve_param(unit: Unit, function: str, param: str, type_text: str,
                  dtypes: Iterable[tuple[str, str]] = (),
                  options: Iterable[str] = ()) -> tuple[Parsed, str] | None:
    """A parameter's (element type, pointer depth, const), and where it came from ("" for
    the text as written); None where even the compiler's view is no type the gate knows."""
    dmap = dict(dtypes)
    if dmap:
        got = parse_ctype(_substitute(type_text, dmap))
        if got is not None and _substitute(type_text, dmap) != type_text:
            return got, "the spec's dtype"
    got = parse_ctype(type_text)
    if got is not None:
        return got, ""
    got = parse_ctype(_substitute(type_text, _macros(unit)))
    if got is not None:
        return got, "a macro"
    facts = _facts(unit, options)
    fact = facts.param_type(function, param)
    if fact is not None and not _unknown_to_clang(facts, type_text):
        got = parse_ctype(fact.canonical)
        if got is not None:
            const = got[2] or "const" in type_text.split("*")[0].split()
            return (got[0], got[1], const), f"the compiler ({fact.canonical})"
    return None


def resolve_name(unit: Unit, name: str, dtypes: Iterable[tuple[str, str]] = (),
                 options: Iterable[str] = ()) -> CType | None:
    """The element type a type name stands for (``sizeof(floatX)``), or None."""
    dmap = dict(dtypes)
    for text in (_substitute(name, dmap), _substitute(name, _macros(unit))):
        got = parse_ctype(text)
        if got is not None and not got[1]:
            return got[0]
    try:
        facts = _facts(unit, options)
        fact = facts.typedef(name.strip())
    except Exception:  # libclang missing: the name stays unknown
        return None
    if fact is None:
        return None
    got = parse_ctype(fact.canonical)
    return got[0] if got is not None and not got[1] else None


def _unknown_to_clang(facts, type_text: str) -> bool:  # type: ignore[no-untyped-def]
    """clang could not resolve a name of the type (a header not found): it recovered with
    ``int``, which is no answer."""
    words = set(re.findall(r"[A-Za-z_]\w*", type_text))
    return any(f"unknown type name '{w}'" in d for d in facts.diagnostics for w in words)


def _facts(unit: Unit, options: Iterable[str]):  # type: ignore[no-untyped-def]
    """The unit's facts for type questions: with the spec's -D/-I, and read on past a header
    that is not found (what clang then did not know is refused, ``_unknown_to_clang``)."""
    from klc.cuda.facts import Facts

    extra = compiler_args(options)
    key = f"type facts:{' '.join(extra)}"
    if key not in unit.memo:
        unit.memo[key] = Facts(unit, extra, keep_going=True)
    return unit.memo[key]
