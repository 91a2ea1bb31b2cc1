"""The checks on the code an isomorphism's alternative matched (``klc.match.iso``): each
answers True, False, or obligations (kind, node) on a type that the pipeline checks from the
declarations and libclang. ``run_check`` is what the matcher calls; an obligation travels in
a match's bindings under ``OBLIGATION`` until ``split_obligations`` takes it out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tree_sitter import Node

_BUILTINS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})


Obligation = tuple[str, Node]
_EFFECTS = frozenset({"call_expression", "update_expression", "assignment_expression",
                      "new_expression", "delete_expression"})
_READS = frozenset({"subscript_expression", "pointer_expression"})


def _has(node: Node, types: frozenset[str], allow_calls: frozenset[bytes] = frozenset()) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in types and (n.type != "call_expression"
                                or n.children[0].text not in allow_calls):
            return True
        if n.type == "field_expression" and any(c.type == "->" for c in n.children) \
                and "pointer_expression" in types:
            return True
        stack.extend(n.children)
    return False


def _pure(node: Node | None) -> bool:
    return node is not None and not _has(node, _EFFECTS)


def _safe(node: Node | None) -> bool:
    return node is not None and not _has(node, _EFFECTS | _READS)


_PARTIAL = frozenset({"/", "%", "<<", ">>"})  # undefined for some right operands


def _partial_by_variable(node: Node) -> bool:
    """Whether ``node`` divides, takes a remainder or shifts by anything but a non-zero
    number literal (``x / d`` is undefined where d is 0, ``x << s`` where s is out of range:
    a term that a short-circuit guards may hold such an operation)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "binary_expression":
            op = n.child_by_field_name("operator")
            right = n.child_by_field_name("right")
            if op is not None and op.type in _PARTIAL and (
                    right is None or right.type != "number_literal"
                    or (right.text or b"").strip(b"uUlL") in (b"0", b"0x0", b"00")):
                return True
        stack.extend(n.children)
    return False


def _assignment(t: Node) -> Node | None:
    """The first assignment in ``t`` (a statement, an if's body, an expression)."""
    stack = [t]
    while stack:
        n = stack.pop(0)
        if n.type == "assignment_expression":
            return n
        stack.extend(n.children)
    return None


def _check_safe_operands(t: Node) -> bool | list[Obligation]:
    return _safe(t.child_by_field_name("left")) and _safe(t.child_by_field_name("right"))


def _check_safe_chain(t: Node) -> bool | list[Obligation]:
    """A chain of ``&&`` (or ``||``) whose terms may be evaluated in any order: both sides of
    the code's top operator (so every term) call, assign and increment nothing, read no
    memory, and divide, take remainders and shift only by non-zero constants. ``&&`` skips
    its right side where the left is false, so an order that puts a term first must not
    evaluate anything the code's own order kept from running (``i < n && x[i] > 0``,
    ``d != 0 && s / d > 1``)."""
    left, right = t.child_by_field_name("left"), t.child_by_field_name("right")
    return _safe(left) and _safe(right) and not _partial_by_variable(left) \
        and not _partial_by_variable(right)  # type: ignore[arg-type]


def _check_pure_lhs(t: Node) -> bool | list[Obligation]:
    a = _assignment(t)
    return a is not None and _pure(a.child_by_field_name("left"))


def _check_pure_max(t: Node) -> bool | list[Obligation]:
    """The if and ?: spellings read a twice: no side effects in the statement (but the
    max/min call itself)."""
    return not _has(t, _EFFECTS - {"assignment_expression", "call_expression"}) \
        and not _has(t, frozenset({"call_expression"}),
                     frozenset({b"fmaxf", b"fminf", b"max", b"min"}))


def _check_call_max(t: Node) -> bool | list[Obligation]:
    """A call spelling read as another (``fmaxf(m, a)``, ``max(a, m)``): each reads a once,
    so a may call (a warp shuffle), but nothing in the statement increments, and its only
    assignment is the statement's own."""
    a = _assignment(t)
    return a is not None and _pure(a.child_by_field_name("left")) and not _has(
        t, frozenset({"update_expression", "new_expression", "delete_expression"})) \
        and sum(1 for _ in _assignments(t)) == 1


def _check_float_call_max(t: Node) -> bool | list[Obligation]:
    if _check_call_max(t) is not True:
        return False
    a = _assignment(t)
    left = a.child_by_field_name("left") if a is not None else None
    return False if left is None else [("float", left)]


def _assignments(t: Node) -> list[Node]:
    out, stack = [], [t]
    while stack:
        n = stack.pop()
        if n.type == "assignment_expression":
            out.append(n)
        stack.extend(n.children)
    return out


def _check_int_operands(t: Node) -> bool | list[Obligation]:
    """The early return's negated comparison equals the wrapped one's only for integers
    (``!(a < b)`` is not ``a >= b`` for a NaN): both operands must be integers."""
    n = t.child_by_field_name("condition")
    stack = [n] if n is not None else []
    found: list[Obligation] = []
    while stack:  # the comparisons inside the condition clause (through its parentheses, a
        c = stack.pop()  # !, and the || or && that joins them)
        if c.type == "binary_expression":
            left, right = c.child_by_field_name("left"), c.child_by_field_name("right")
            if left is None or right is None:
                return False
            if c.child_by_field_name("operator") is not None and \
                    c.child_by_field_name("operator").type in ("||", "&&"):
                stack += [left, right]
                continue
            found += [("int_expr", left), ("int_expr", right)]
            continue
        stack.extend(c.named_children)
    return found or False


def _check_int_comparison(t: Node) -> bool | list[Obligation]:
    """``i > -1`` read as ``i >= 0``, ``i < n + 1`` as ``i <= n``: both operands integers."""
    left, right = t.child_by_field_name("left"), t.child_by_field_name("right")
    return False if left is None or right is None else [("int_expr", left), ("int_expr", right)]


def _check_float_max(t: Node) -> bool | list[Obligation]:
    if _check_pure_max(t) is not True:
        return False
    a = _assignment(t)
    left = a.child_by_field_name("left") if a is not None else None
    return False if left is None else [("float", left)]


def _check_pointer_left(t: Node) -> bool | list[Obligation]:
    """``a + i`` read as ``&a[i]``: ``a`` must be a pointer or an array."""
    left = t.child_by_field_name("left")
    return False if left is None else [("pointer", left)]


def _check_index_init(t: Node) -> bool | list[Obligation]:
    """Every declarator of the declaration is a plain name (on ``const float* p`` the const
    is the pointee's, which the template's spelling would drop) and every initialiser reads
    threadIdx, blockIdx, blockDim or gridDim (so the const local it declares is no constant
    expression anything needs)."""
    kind = t.child_by_field_name("type")
    decls = [c for c in t.named_children if c != kind and c.type != "type_qualifier"]
    return bool(decls) and all(
        d.type == "init_declarator"
        and (d.child_by_field_name("declarator") or d).type == "identifier"
        and (v := d.child_by_field_name("value")) is not None and _reads_builtin(v)
        for d in decls)


def _reads_builtin(node: Node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier" and n.text is not None \
                and n.text.decode() in _BUILTINS:
            return True
        stack.extend(n.children)
    return False


def _declared(decl: Node) -> list[Node]:
    """The init declarators of a declaration, each of a plain name (none if one is not)."""
    kind = decl.child_by_field_name("type")
    out = [c for c in decl.named_children if c != kind and c.type not in (
        "type_qualifier", "storage_class_specifier", "comment")]
    ok = all(d.type == "init_declarator" and (d.child_by_field_name("declarator") or d).type
             == "identifier" and d.child_by_field_name("value") is not None for d in out)
    return out if ok else []


def _names_in(node: Node) -> set[bytes]:
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier" and n.text is not None:
            out.add(n.text)
        stack.extend(n.children)
    return out


def _check_independent_declarations(t: Node) -> bool | list[Obligation]:
    """``t`` and the declaration just before it (the pair ``decl_order`` matched in the
    other order) may trade places: each declares plain names from initialisers that read a
    built-in index variable and call, assign and increment nothing, and neither initialiser
    names a variable the other declares (``int c = ...; int r = c / 4;`` keeps its order:
    written the other way round, r would read another c)."""
    prev = t.prev_named_sibling
    while prev is not None and prev.type == "comment":
        prev = prev.prev_named_sibling
    if prev is None or prev.type != "declaration" or t.type != "declaration":
        return False
    first, second = _declared(prev), _declared(t)
    if not first or not second:
        return False
    for d in (*first, *second):
        value = d.child_by_field_name("value")
        if not (_pure(value) and _reads_builtin(value)):  # (checked by _declared: a value)
            return False
    for mine, other in ((first, second), (second, first)):
        names = {(d.child_by_field_name("declarator") or d).text for d in mine}
        if any(names & _names_in(d.child_by_field_name("value")) for d in other):
            return False
    return True


def run_check(name: str, t: Node) -> bool | list[Obligation]:
    """The check ``name`` on the code node ``t``: ``EMPTY_RUNS`` + "A,B" binds the runs
    ``$$$A``, ``$$$B`` to nothing (a braced body's runs around its one statement, the body
    bare in the code); an obligation of kind ``$$$A`` says so to the matcher."""
    if name.startswith(EMPTY_RUNS):
        return [("$$$" + r, t) for r in name[len(EMPTY_RUNS):].split(",") if r]
    return CHECKS[name](t)


EMPTY_RUNS = "empty:"
CHECKS: dict[str, Callable[[Node], bool | list[Obligation]]] = {
    "safe_operands": _check_safe_operands,
    "safe_chain": _check_safe_chain,
    "pure_lhs": _check_pure_lhs,
    "pure_max": _check_pure_max,
    "float_max": _check_float_max,
    "call_max": _check_call_max,
    "float_call_max": _check_float_call_max,
    "int_operands": _check_int_operands,
    "int_comparison": _check_int_comparison,
    "pointer_left": _check_pointer_left,
    "index_init": _check_index_init,
    "independent_declarations": _check_independent_declarations,
}
# the bindings' key prefix of an obligation (no metavariable's name starts with it)
OBLIGATION = "\0iso:"


def split_obligations(b: dict[str, Any]) -> tuple[Any, ...]:
    """Take the obligations out of a match's bindings: (Binding(kind, span), ...)."""
    keys = [k for k in b if k.startswith(OBLIGATION)]
    return tuple(b.pop(k) for k in keys)
