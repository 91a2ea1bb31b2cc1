"""Named guards: ``define guard row_local($X): not mentions($X, threadIdx) and ...``.

A rule file may define guards by name and call them like predicates, in a rule's ``guard:``,
an ``inverse`` block's and a ``within`` block's; ``use "FILE"`` brings in the definitions of
another file (its path relative to the using file's folder, else a library klc ships beside
its grammar: ``use "guards.rule"``). A call stands for the definition's body with each
parameter replaced by the call's argument, expanded when the file loads: what is judged at a
match, and why it refuses, is exactly what the body's predicates say, so a rule reads the
same whether it spells the conditions out or names them (a call in a list of ``and``
conditions adds the body's conditions to that list, in order).

Refused, each at its file:line:col: a name defined twice or that a predicate already has, a
parameter given twice, a metavariable or a hole in a body that is not a parameter (a hole is
passed as an argument), a definition that calls itself (directly or through others), a call
with the wrong number of arguments, a ``use`` whose file is not found or that leads back to
the file itself.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from klc.errors import KlcError, where
from klc.rule.checks import Errors
from klc.rule.guard import (
    GuardAnd,
    GuardArg,
    GuardCall,
    GuardExpr,
    GuardNot,
    GuardOr,
    calls,
    guard_text,
)
from klc.rule.model import RuleError
from klc.rule.paths import packaged
from klc.rule.registry import installed
from klc.rule.syntax import EditSpec, FieldSpec, FileSpec, GuardDefSpec, RuleSpec, UseSpec

MAX_USE_DEPTH = 16  # files a chain of ``use`` may pass through


# a named guard by its name and its number of parameters: one name may have several
# arities (``none_mention(w, $A, $B)``, ``none_mention(w, $A, $B, $C)``), each its own
Key = tuple[str, int]


@dataclass(frozen=True)
class Definitions:
    """The named guards a file may call: its own and those of the files it uses. ``broken``
    holds the definitions refused (a call to one is refused, pointing at it)."""

    guards: dict[Key, GuardDefSpec]
    broken: frozenset[Key] = frozenset()

    @property
    def names(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.guards)


def library(target: str, from_path: str) -> Path | None:
    """The file ``use "target"`` names: beside the using file, else in klc's libraries."""
    for folder in (Path(from_path).parent, packaged("grammar")):
        candidate = folder / target
        if candidate.is_file():
            return candidate
    return None


def definitions(spec: FileSpec, errs: Errors, chain: tuple[str, ...] = ()) -> Definitions:
    """The definitions a file may call, every problem of its own in ``errs``; a used file's
    problems raise RuleError (with that file's positions)."""
    guards: dict[Key, GuardDefSpec] = {}
    broken: set[Key] = set()
    for use in spec.uses:
        used = _use(use, errs, (*chain, _key(use.path)))
        if used is None:
            continue
        broken |= used.broken
        for key, d in used.guards.items():
            first = guards.get(key)
            if first is not None and first is not d:
                errs.add(use.line, use.col, f'use "{use.target}": guard {key[0]} with '
                         f"{key[1]} parameters is also defined at "
                         f"{where(first.path, first.line, first.col)}")
            guards.setdefault(key, d)
    predicates = installed().predicates
    own: dict[Key, GuardDefSpec] = {}
    for d in spec.defines:
        key = (d.name, len(d.params))
        first = own.get(key) or guards.get(key)
        if first is not None:
            errs.add(d.line, d.col, f"guard {d.name} with {key[1]} parameters is defined twice"
                     f" (first at {where(first.path, first.line, first.col)})")
            continue
        if d.name in predicates:
            errs.add(d.line, d.col, f"{d.name} is a guard predicate: a named guard needs a "
                     "name of its own")
            continue
        own[key] = d
        if not _body_ok(d, errs):
            broken.add(key)
    guards.update(own)
    names = {name for name, _ in guards}
    for key, d in own.items():
        for call in calls(d.body):
            if call.name in names and (call.name, len(call.args)) not in guards:
                errs.add(call.line, call.col, f"guard {d.name}: {_arity_problem(call, guards)}")
                broken.add(key)
            elif call.name not in names and call.name not in predicates:
                close = difflib.get_close_matches(call.name, [*names, *predicates], n=3,
                                                  cutoff=0.6)
                hint = f"; did you mean {' or '.join(close)}?" if close else ""
                errs.add(call.line, call.col, f"guard {d.name}: unknown guard predicate or "
                         f"named guard {call.name!r}{hint}")
                broken.add(key)
        cycle = _cycle(key, guards, (key,))
        if cycle:
            errs.add(d.line, d.col, f"guard {d.name} calls itself: "
                     f"{' -> '.join(name for name, _ in cycle)}")
            broken.add(key)
    return Definitions(guards, frozenset(broken))


def _arity_problem(call: GuardCall, guards: dict[Key, GuardDefSpec]) -> str:
    counts = sorted(n for name, n in guards if name == call.name)
    takes = " or ".join(str(n) for n in counts)
    shapes = "; ".join(f"{call.name}({', '.join(str(p) for p in guards[(call.name, n)].params)})"
                       for n in counts)
    noun = "argument" if counts == [1] else "arguments"
    return f"{call.name} takes {takes} {noun} ({shapes}), got {len(call.args)}"


def _key(path: str) -> str:
    try:
        return str(Path(path).resolve())
    except OSError:
        return path


def _use(use: UseSpec, errs: Errors, chain: tuple[str, ...]) -> Definitions | None:
    from klc.fsutil import read_input
    from klc.rule.syntax import parse_file

    found = library(use.target, use.path)
    if found is None:
        errs.add(use.line, use.col, f'use "{use.target}": no such file beside this one or '
                 "in klc's libraries")
        return None
    if _key(str(found)) in chain:
        errs.add(use.line, use.col, f'use "{use.target}": it leads back to a file that uses it')
        return None
    if len(chain) > MAX_USE_DEPTH:
        errs.add(use.line, use.col, f'use "{use.target}": more than {MAX_USE_DEPTH} files deep')
        return None
    data = read_input(found, "rule file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise KlcError(f"{found}: not UTF-8 text") from None
    inner = Errors(str(found))
    result = definitions(parse_file(text, str(found)), inner, chain)
    if inner.items:
        raise RuleError(inner.messages())
    return result


def _body_ok(d: GuardDefSpec, errs: Errors) -> bool:
    params: set[tuple[str, object]] = set()
    ok = True
    for p in d.params:
        if (p.kind, p.value) in params:
            errs.add(p.line, p.col, f"guard {d.name}: parameter {p} is given twice")
            ok = False
        params.add((p.kind, p.value))
    for call in calls(d.body):
        for a in call.args:
            if a.kind in ("metavar", "sequence") and (a.kind, a.value) not in params:
                names = ", ".join(str(p) for p in d.params) or "none"
                errs.add(a.line, a.col, f"guard {d.name}: {a} is not one of its parameters "
                         f"({names})")
                ok = False
            elif a.kind == "hole":
                errs.add(a.line, a.col, f"guard {d.name}: a hole is passed as an argument, "
                         f"not named in a definition ({a})")
                ok = False
    return ok


def _cycle(key: Key, guards: dict[Key, GuardDefSpec], path: tuple[Key, ...]
           ) -> tuple[Key, ...] | None:
    for call in calls(guards[key].body):
        callee = (call.name, len(call.args))
        if callee not in guards:
            continue
        if callee == path[0]:
            return (*path, callee)
        if callee in path:
            continue  # a cycle that does not pass through path[0]: its own definition says so
        found = _cycle(callee, guards, (*path, callee))
        if found:
            return found
    return None


# --------------------------------------------------------------------------------------
# Expansion


def expand(expr: GuardExpr, defs: Definitions, errs: Errors) -> GuardExpr:
    """The guard with every call of a named guard replaced by its body."""
    if isinstance(expr, GuardCall):
        return _call(expr, defs, errs)
    if isinstance(expr, GuardNot):
        return GuardNot(expand(expr.operand, defs, errs), expr.line, expr.col)
    kind = type(expr)
    operands: list[GuardExpr] = []
    for op in expr.operands:
        new = expand(op, defs, errs)
        named = isinstance(op, GuardCall) and op.name in defs.names
        if named and isinstance(new, kind):  # (GuardAnd in GuardAnd, GuardOr in GuardOr)
            operands.extend(new.operands)
        else:
            operands.append(new)
    return kind(tuple(operands), expr.line, expr.col)


def _call(call: GuardCall, defs: Definitions, errs: Errors) -> GuardExpr:
    if call.name not in defs.names:
        return call
    # a refused call stands for nothing more (the file does not load: nothing is judged)
    refused = GuardAnd((), call.line, call.col)
    key = (call.name, len(call.args))
    d = defs.guards.get(key)
    if d is None:
        errs.add(call.line, call.col, _arity_problem(call, defs.guards))
        return refused
    if key in defs.broken:
        errs.add(call.line, call.col, f"guard {call.name} is refused where it is defined "
                 f"({where(d.path, d.line, d.col)})")
        return refused
    binding = {(p.kind, p.value): a for p, a in zip(d.params, call.args, strict=True)}
    return expand(_substitute(d.body, binding), defs, errs)


def _substitute(expr: GuardExpr, binding: dict[tuple[str, object], GuardArg]) -> GuardExpr:
    if isinstance(expr, GuardCall):
        args = tuple(binding.get((a.kind, a.value), a) for a in expr.args)
        return GuardCall(expr.name, args, expr.line, expr.col)
    if isinstance(expr, GuardNot):
        return GuardNot(_substitute(expr.operand, binding), expr.line, expr.col)
    ops = tuple(_substitute(e, binding) for e in expr.operands)
    return (GuardAnd if isinstance(expr, GuardAnd) else GuardOr)(ops, expr.line, expr.col)


_GUARDS = (GuardCall, GuardNot, GuardAnd, GuardOr)


def expand_spec(spec: RuleSpec, defs: Definitions, errs: Errors) -> RuleSpec:
    """A rule's spec with the named guards of its guard, inverse and within blocks
    expanded."""
    if not defs.guards:
        return spec
    fields = tuple(FieldSpec(f.name, _expand_value(f.value, defs, errs), f.line, f.col)
                   for f in spec.fields)
    return RuleSpec(spec.name, spec.path, spec.line, spec.col, fields)


def _expand_value(value: object, defs: Definitions, errs: Errors) -> object:
    if isinstance(value, _GUARDS):
        return expand(value, defs, errs)
    if isinstance(value, EditSpec):
        return EditSpec(value.kind, tuple(_expand_value(c, defs, errs) for c in value.args),
                        value.line, value.col)
    if type(value) is tuple:
        return tuple(_expand_value(v, defs, errs) for v in value)
    return value


# --------------------------------------------------------------------------------------
# Folding: the inverse of expansion


def library_definitions(target: str) -> Definitions:
    """The definitions of one of klc's guard libraries (``"guards.rule"``), as ``use`` reads
    them."""
    found = library(target, str(packaged("grammar") / target))
    if found is None:
        raise KlcError(f'no guard library "{target}" beside klc\'s grammar')
    used = _use(UseSpec(target, str(found), 0, 0), Errors(str(found)), ())
    assert used is not None  # (found, and a library never leads back to itself)
    return used


def fold(expr: GuardExpr, defs: Definitions) -> GuardExpr:
    """The guard with each run of ``and`` operands that is a definition's body, its
    parameters bound to the run's arguments, written back as the call (``not mentions($E,
    $ACC) and not mentions($N, $ACC)`` as ``absent_from($ACC, $E, $N)``): the longest
    definition that matches at each place, the first by name and arity on a tie. Expanding
    the result gives ``expr`` back."""
    if isinstance(expr, GuardCall):
        return expr
    if isinstance(expr, GuardNot):
        return GuardNot(fold(expr.operand, defs), expr.line, expr.col)
    operands = [fold(op, defs) for op in expr.operands]
    if isinstance(expr, GuardAnd):
        operands = _fold_run(operands, defs)
    return type(expr)(tuple(operands), expr.line, expr.col)


def _fold_run(ops: list[GuardExpr], defs: Definitions) -> list[GuardExpr]:
    bodies = [(d, d.body.operands) for _, d in sorted(defs.guards.items())
              if isinstance(d.body, GuardAnd) and len(d.body.operands) > 1]
    out: list[GuardExpr] = []
    i = 0
    while i < len(ops):
        best: tuple[GuardDefSpec, dict[tuple[str, object], GuardArg], int] | None = None
        for d, body in bodies:
            k = len(body)
            if i + k > len(ops) or (best is not None and k <= best[2]):
                continue
            binding: dict[tuple[str, object], GuardArg] = {}
            params = {(p.kind, p.value) for p in d.params}
            if all(_unify(b, o, params, binding) for b, o in zip(body, ops[i:i + k],
                                                                 strict=True)) \
                    and params <= binding.keys():
                best = (d, binding, k)
        if best is None:
            out.append(ops[i])
            i += 1
            continue
        d, binding, k = best
        out.append(GuardCall(d.name, tuple(binding[(p.kind, p.value)] for p in d.params)))
        i += k
    return out


def _unify(body: GuardExpr, expr: GuardExpr, params: set[tuple[str, object]],
           binding: dict[tuple[str, object], GuardArg]) -> bool:
    """Whether ``expr`` is ``body`` with its parameters replaced (``binding`` gains them)."""
    if isinstance(body, GuardCall):
        if not isinstance(expr, GuardCall) or expr.name != body.name \
                or len(expr.args) != len(body.args):
            return False
        for b, a in zip(body.args, expr.args, strict=True):
            key = (b.kind, b.value)
            if key not in params:
                if b != a:
                    return False
            elif binding.setdefault(key, a) != a:
                return False
        return True
    if isinstance(body, GuardNot):
        return isinstance(expr, GuardNot) and _unify(body.operand, expr.operand, params, binding)
    return type(expr) is type(body) and len(expr.operands) == len(body.operands) and all(
        _unify(b, e, params, binding) for b, e in zip(body.operands, expr.operands, strict=True))


_GUARD_LINE = re.compile(r"^(\s*(?:inverse )?guard: )(.+)$")


def with_named_guards(text: str, target: str = "guards.rule") -> str:
    """Rule text as ``klc.rule.printer`` writes it, each ``guard:`` line outside the code
    blocks folded with the definitions of klc's guard library ``target`` (``fold``), and
    ``use "target"`` at its end when a line calls one: the file loads to the same rules,
    in the words the hand-written rule files use."""
    from klc.rule.compile import parse_guard

    defs = library_definitions(target)
    lines = text.split("\n")
    in_code, used = False, False
    for i, line in enumerate(lines):
        m = None if in_code else _GUARD_LINE.match(line)
        if line.count("```") % 2:
            in_code = not in_code
        if m is None:
            continue
        folded = fold(parse_guard(m.group(2)), defs)
        if any(c.name in defs.names for c in calls(folded)):
            lines[i] = m.group(1) + guard_text(folded)
            used = True
    out = "\n".join(lines)
    return out.rstrip("\n") + f'\n\nuse "{target}"\n' if used else out
