"""Checks of a rule's fields that stand alone: holes, the card, metavariable kinds, the
inverse block, and a predicate call against the guards' vocabulary. Each reports problems
to ``Errors`` with their line:column and returns what it could build."""

from __future__ import annotations

import difflib
import json

from klc.errors import where
from klc.rule.guard import GuardCall, calls
from klc.rule.holes import MAX_INT_DIGITS, HoleDecl, hole_value_problem
from klc.rule.model import (
    HOLE_TYPES,
    ISOMORPHISMS,
    METAVAR_KINDS,
    REPEATED_CARD_FIELDS,
    VERDICTS,
    Card,
    Inverse,
)
from klc.rule.registry import installed
from klc.rule.syntax import FieldSpec, HoleSpec, Text


class Errors:
    """Collects a file's errors, so that ``klc check`` reports them all at once."""

    def __init__(self, path: str):
        self.path = path
        self.items: list[tuple[int, int, str]] = []

    def add(self, line: int, col: int, message: str) -> None:
        self.items.append((line, col, message))

    def messages(self) -> list[str]:
        return [f"{where(self.path, ln, c)}: {m}" for ln, c, m in sorted(set(self.items))]


def check_predicate(call: GuardCall, errs: Errors) -> None:
    """A predicate call against the guards' vocabulary (name, arity, argument kinds)."""
    check_call = installed().check_call
    assert check_call is not None, "klc.plugins.load() installs the guards' check"
    for line, col, message in check_call(call):
        errs.add(line, col, message)


def holes_of(specs: list[HoleSpec], errs: Errors) -> dict[str, HoleDecl]:
    holes: dict[str, HoleDecl] = {}
    for h in specs:
        where_ = f"hole ?{h.name}"
        if h.name in holes:
            errs.add(h.line, h.col, f"{where_} is declared twice (first at line "
                     f"{holes[h.name].line}:{holes[h.name].col})")
            continue
        if h.type not in HOLE_TYPES:
            close = difflib.get_close_matches(h.type, HOLE_TYPES, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            errs.add(*h.type_pos, f"{where_}: unknown type {h.type!r}{hint}; hole types are: "
                     f"{', '.join(HOLE_TYPES)}")
            continue
        values: tuple[int | str, ...] | None = None
        lo = hi = None
        ok = True
        if h.type == "int":
            if h.domain is None:
                errs.add(*h.type_pos, f"{where_}: an int hole needs a domain: `int in {{2, 4, 8}}`"
                         " or `int in 1..8`")
                ok = False
            elif h.domain == "enum":
                errs.add(*h.type_pos, f"{where_}: write an int domain with `in`: "
                         "`int in {2, 4, 8}`")
                ok = False
            else:
                bad = [v for v in h.values if v.type != "INT"]
                for v in bad:
                    errs.add(v.line, v.column, f"{where_}: {v} is not an integer")
                long = [v for v in h.values if v.type == "INT"
                        and len(str(v).lstrip("+-")) > MAX_INT_DIGITS]
                for v in long:
                    errs.add(v.line, v.column, f"{where_}: an integer of "
                             f"{len(str(v).lstrip('+-'))} digits is too long (a hole's "
                             f"integers have at most {MAX_INT_DIGITS})")
                ok = not bad and not long
                if ok and h.domain == "set":
                    values = tuple(int(str(v)) for v in h.values)
                    if len(set(values)) != len(values):
                        errs.add(h.line, h.col, f"{where_}: a value is listed twice")
                elif ok:
                    lo, hi = int(str(h.values[0])), int(str(h.values[1]))
                    if lo > hi:
                        errs.add(h.values[0].line, h.values[0].column,
                                 f"{where_}: the range {lo}..{hi} is empty")
                        ok = False
        elif h.type == "enum":
            if h.domain is None:
                errs.add(*h.type_pos, f"{where_}: an enum hole needs its values: "
                         "`enum {warp, block}`")
                ok = False
            elif h.domain != "enum":
                errs.add(*h.type_pos, f"{where_}: write enum values without `in`: "
                         "`enum {warp, block}`")
                ok = False
            else:
                values = tuple(str(v) for v in h.values)
                if len(set(values)) != len(values):
                    errs.add(h.line, h.col, f"{where_}: a value is listed twice")
        elif h.domain is not None:
            errs.add(*h.type_pos, f"{where_}: a {h.type} hole takes no domain (its values "
                     f"are any C {'identifier' if h.type == 'ident' else h.type})")
        default: int | str | None = None
        decl = HoleDecl(h.name, h.type, values, lo, hi, None, h.line, h.col)
        if h.default is not None and ok:
            raw = str(h.default)
            problem = hole_value_problem(decl, raw.strip())
            if problem:
                errs.add(h.default.line, h.default.column, f"{where_}: the default {problem}")
            else:
                default = int(raw) if h.type == "int" else raw.strip()
        holes[h.name] = HoleDecl(h.name, h.type, values, lo, hi, default, h.line, h.col)
    return holes


def card_of(items: tuple[tuple[str, Text, int, int], ...], errs: Errors) -> Card:
    seen: dict[str, tuple[int, int]] = {}
    single: dict[str, str] = {}
    repeated: dict[str, list[str]] = {k: [] for k in REPEATED_CARD_FIELDS}
    for key, text, line, col in items:
        if key == "verdict" and text.value not in VERDICTS:
            errs.add(line, col, f"card: verdict {json.dumps(text.value)} is not one of "
                     f"{', '.join(VERDICTS)}")
        if key in REPEATED_CARD_FIELDS:
            repeated[key].append(text.value)
            continue
        if key in seen:
            errs.add(line, col, f"card: duplicate `{key}` (first at line {seen[key][0]}:"
                     f"{seen[key][1]}); only effect, pitfalls and provenance may repeat")
            continue
        seen[key] = (line, col)
        single[key] = text.value
    return Card(single.get("intent", ""), single.get("where", ""),
                single.get("conditions", ""), tuple(repeated["effect"]),
                tuple(repeated["pitfalls"]), tuple(repeated["provenance"]),
                single.get("verdict", ""), single.get("precision", ""))


def metavar_kinds_of(fields: list[FieldSpec], metavars: set[str], sequences: set[str],
                   errs: Errors) -> tuple[tuple[str, str], ...]:
    """``metavar $X: KIND, ...`` lines: a metavariable the anchor binds as one node, known
    kinds, one line per metavariable; a (name, kind) pair per kind, in the order written."""
    found: dict[str, str] = {}
    pairs: list[tuple[str, str]] = []
    for f in fields:
        var_tok, kind_toks = f.value
        shown = str(var_tok)
        name = shown.lstrip("$")
        for kind_tok in kind_toks:
            kind = str(kind_tok)
            if kind not in METAVAR_KINDS:
                close = difflib.get_close_matches(kind, METAVAR_KINDS, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                errs.add(kind_tok.line, kind_tok.column, f"unknown metavariable kind {kind!r}"
                         f"{hint}; the kinds are: {', '.join(METAVAR_KINDS)}")
        kinds = [str(k) for k in kind_toks]
        if shown.startswith("$$$"):
            errs.add(var_tok.line, var_tok.column, f"metavar {shown}: a kind constrains a "
                     f"metavariable that binds one node (${name}), not a run")
        elif name == "_" or name not in metavars or name in sequences:
            bound = ", ".join("$" + m for m in sorted(metavars - sequences)) or "none"
            errs.add(var_tok.line, var_tok.column, f"metavar {shown}: the anchor binds no "
                     f"{shown} (it binds: {bound})")
        elif name in found:
            errs.add(var_tok.line, var_tok.column, f"metavar {shown}: its kinds are given twice "
                     f"(write them on one line: metavar {shown}: A, B)")
        elif all(k in METAVAR_KINDS for k in kinds):
            nodes = [k for k in kinds if METAVAR_KINDS[k] is not None]
            if len(set(kinds)) < len(kinds):
                errs.add(var_tok.line, var_tok.column, f"metavar {shown}: a kind is repeated")
            elif len(nodes) > 1 and not frozenset.intersection(*(METAVAR_KINDS[k] for k in nodes)):
                errs.add(var_tok.line, var_tok.column, f"metavar {shown}: no code is both "
                         f"{' and '.join(nodes)}")
            elif "pointer" in kinds and ({"scalar", "int_expr"} & set(kinds)):
                other = "a scalar" if "scalar" in kinds else "an int_expr"
                errs.add(var_tok.line, var_tok.column, f"metavar {shown}: no code is both a "
                         f"pointer and {other}")
            else:
                found[name] = kind
                pairs.extend((name, k) for k in kinds)
    return tuple(sorted(pairs, key=lambda p: p[0]))


def inverse_of(f: FieldSpec, kind: str, metavars: set[str], sequences: set[str],
             errs: Errors) -> Inverse:
    """Check an inverse block: only in a simplification, each item at most once (holes
    aside), a C-identifier-like name, a guard of known predicates over the anchor's
    metavariables (klc learn checks the skill it builds again, as a whole rule)."""
    if kind and kind != "simplification":
        errs.add(f.line, f.col, "inverse: only a simplification has an inverse block (a "
                 "skill is the inverse)")
    seen: dict[str, tuple[int, int]] = {}
    name, description, guard, family = "", "", None, ""
    for item, value, line, col in f.value:
        if item != "hole":
            if item in seen:
                errs.add(line, col, f"inverse: duplicate `{item}` (first at line "
                         f"{seen[item][0]}:{seen[item][1]})")
                continue
            seen[item] = (line, col)
        if item == "name":
            name = str(value)
        elif item == "family":
            family = str(value)
        elif item == "description":
            description = value.value
        elif item == "guard":
            guard = value
            for call in calls(guard):
                check_predicate(call, errs)
                for arg in call.args:
                    if arg.kind in ("metavar", "sequence") and str(arg.value) != "_" \
                            and str(arg.value) not in metavars:
                        errs.add(arg.line, arg.col, f"inverse guard: ${arg.value} is not "
                                 "bound by the anchor")
    holes = holes_of([v for item, v, _, _ in f.value if item == "hole"], errs)
    return Inverse(name, description, guard, holes, family, f.line, f.col)


def isos_off_of(f: FieldSpec | None, errs: Errors) -> tuple[str, ...]:
    """``isomorphisms: -NAME, ...``: known names (or ``all``), each once, sorted."""
    if f is None:
        return ()
    names: list[str] = []
    for tok in f.value:
        name = str(tok)
        if name != "all" and name not in ISOMORPHISMS:
            close = difflib.get_close_matches(name, ISOMORPHISMS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            errs.add(tok.line, tok.column, f"unknown isomorphism {name!r}{hint}; the "
                     f"isomorphisms are: {', '.join(ISOMORPHISMS)} (or all)")
        elif name in names:
            errs.add(tok.line, tok.column, f"isomorphisms: -{name} is given twice")
        else:
            names.append(name)
    return tuple(sorted(names))
