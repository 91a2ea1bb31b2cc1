"""Isomorphisms: the equivalent spellings one anchor covers (Coccinelle's standard.iso).

An anchor is compiled to a ``PNode`` tree; ``expand`` rewrites that tree bottom-up so that
where the code could spell a node another, equivalent way, the node becomes an
*alternation* (``PNode.alts``: the anchor's own spelling first, then the others). The
matcher (``klc.match.engine``) tries the alternatives in order. Metavariables bind the
code's own subtrees whatever the spelling, so a rewrite edits only the matched bytes and
renders a bound metavariable with the code's text.

Each isomorphism has a name (``ISOMORPHISMS``) and a rule may turn it off (``isomorphisms:
-commutative``). Some alternatives hold only for some code: each carries a check on the
code node it matched (``klc.match.iso_checks``): side-effect free operands, or an *obligation* on a
type (the pipeline checks it from the declarations and libclang, as for ``metavar $X:
int_expr``; a type that is not known is no match). docs/rules.md lists them with their
soundness notes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from itertools import permutations

from klc.match.iso_checks import _BUILTINS, EMPTY_RUNS
from klc.match.pattern import EARLY, Pattern, PNode, _make_pattern, _names
from klc.rule.model import ISOMORPHISMS as _NAMES

# name -> what it covers (docs/rules.md has the table with the soundness notes)
ISOMORPHISMS: dict[str, str] = {
    "commutative": "a + b / b + a for + * == != & | ^ (and && || when both sides are "
                   "side-effect free and read no memory)",
    "comparison": "a < b / b > a, a <= b / b >= a",
    "compound_assign": "x = x + e / x = e + x / x += e (and - * / % & | ^ << >>), for a "
                       "side-effect free x",
    "increment": "i++ / ++i / i += 1 / i = i + 1 where the value is unused (a loop step, "
                 "a statement); the same for --",
    "braces": "a braced single statement / the bare statement, as the body of if, else, "
              "for, while, do",
    "parentheses": "e / (e): an operand the code wraps in parentheses; (a + b) < n / "
                   "a + b < n: an arithmetic operand of a comparison the anchor wraps",
    "max_idiom": "m = fmaxf(m, a) / fmaxf(a, m) / max(m, a) / if (a > m) m = a; / "
                 "m = a > m ? a : m (and min); fmaxf spellings only for float m",
    "global_index": "blockIdx.x * blockDim.x + threadIdx.x with its terms and factors in "
                    "any order",
    "early_return": "if (i >= n) return; rest / if (i < n) { rest } as the last statement "
                    "of a run that ends a kernel body, for integer i and n (and for a chain "
                    "of such comparisons: if (r >= m || c >= n) return; / if (r < m && c < n))",
    "address_of_element": "&a[i] / a + i, for a pointer or array a",
    "const_local": "T x = e; / const T x = e; / T const x = e; (T a type or a type "
                   "metavariable) for a local whose initialiser reads threadIdx, blockIdx, "
                   "blockDim or gridDim (never a constant expression)",
    "decl_order": "T a = e1; T b = e2; / T b = e2; T a = e1; for two adjacent "
                  "declarations of a run whose initialisers read threadIdx, blockIdx, "
                  "blockDim or gridDim, call, assign and increment nothing, and name neither "
                  "variable the other declares (a row and a column index in either order)",
    "integer_bounds": "i >= 0 / i > -1, i <= n / i < n + 1, for integer i and n",
    "read_through": "a local declared once and never changed, whose initialiser is pure and "
                    "reads no memory, read as that initialiser (lane / tid % 32); x = f(x); "
                    "read as the one statement of a helper f whose body is that statement "
                    "and return p; (klc.match.reading)",
    "chain_order": "a && b && c / c && a && b ... (and ||): a chain of up to four terms in "
                   "any order, when every term is side-effect free, reads no memory and "
                   "divides or shifts only by a non-zero constant (a && b alone is commutative's)",
    "nested_if": "if (a) { if (b) S } / if (a && b) S / if ((a) && (b)) S, neither with an "
                 "else (the chain's terms in any order under chain_order's conditions)",
}
# on unless a rule turns them off (all of them: see docs/rules.md for why each is sound)
DEFAULT_ON = frozenset(ISOMORPHISMS)
assert frozenset(_NAMES) == DEFAULT_ON, "klc.rule.model.ISOMORPHISMS names the same ones"

_COMMUTATIVE = frozenset({"+", "*", "==", "!=", "&", "|", "^"})
_SHORT_CIRCUIT = frozenset({"&&", "||"})
_MIRROR = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
_NEGATE = {"<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "&=": "&", "|=": "|",
             "^=": "^", "<<=": "<<", ">>=": ">>"}
_MAX_FUNCS = {"max": ("fmaxf", "max"), "min": ("fminf", "min")}
_STATEMENT_BODY = {"for_statement": -1, "while_statement": -1, "for_range_loop": -1,
                   "else_clause": -1, "if_statement": 2, "do_statement": 1}


# --------------------------------------------------------------------------------------
# Building pattern nodes


def _tok(text: str, type_: str | None = None) -> PNode:
    return PNode(type_ or text, text=text)


def _bin(left: PNode, op: str, right: PNode) -> PNode:
    return PNode("binary_expression", children=(left, _tok(op), right))


def _assign(left: PNode, op: str, right: PNode) -> PNode:
    return PNode("assignment_expression", children=(left, _tok(op), right))


def _stmt(expr: PNode) -> PNode:
    return PNode("expression_statement", children=(expr,))


def _block(stmt: PNode) -> PNode:
    return PNode("compound_statement", children=(_tok("{"), stmt, _tok("}")))


def _call(name: str, *args: PNode) -> PNode:
    return PNode("call_expression", children=(
        _tok(name, "identifier"),
        PNode("argument_list", children=(_tok("("), *args, _tok(")")))))


def _if(cond: PNode, body: PNode) -> PNode:
    return PNode("if_statement", children=(
        _tok("if"), PNode("condition_clause", children=(_tok("("), cond, _tok(")"))), body))


def _one() -> PNode:
    return PNode("number_literal", text="1")


def base(p: PNode) -> PNode:
    """The anchor's own spelling of a node that may be an alternation."""
    return p.alts[0] if p.alts else p


def _op(p: PNode) -> str | None:
    """The operator token of a binary or assignment node (its middle child)."""
    p = base(p)
    if p.type in ("binary_expression", "assignment_expression") and len(p.children) == 3:
        return base(p.children[1]).text
    return None


def _leaf_text(p: PNode) -> str | None:
    p = base(p)
    return p.text if not p.children and p.metavar is None else None


def _mentions_builtin(p: PNode) -> bool:
    p = base(p)
    if p.text in _BUILTINS:
        return True
    return any(_mentions_builtin(c) for c in p.children)


# --------------------------------------------------------------------------------------
# The isomorphisms: each (node, its slot) -> [(alternative, check name or None)]

Variants = list[tuple[PNode, str | None]]


def _commutative(p: PNode, on: frozenset[str]) -> Variants:
    op = _op(p)
    if p.type != "binary_expression" or op is None:
        return []
    left, tok, right = p.children
    swapped = PNode(p.type, children=(right, tok, left))
    if op in _COMMUTATIVE and ("commutative" in on or (
            "global_index" in on and op in ("+", "*") and _mentions_builtin(p))):
        return [(swapped, None)]
    if op in _SHORT_CIRCUIT and "commutative" in on:
        return [(swapped, "safe_chain")]
    if op in _MIRROR and "comparison" in on:
        return [(PNode(p.type, children=(right, _tok(_MIRROR[op]), left)), None)]
    return []


def _compound(p: PNode, on: frozenset[str]) -> Variants:
    if "compound_assign" not in on or p.type != "assignment_expression":
        return []
    op = _op(p)
    left, _, right = p.children
    if op in _COMPOUND:
        bop = _COMPOUND[op]
        out = [(_assign(left, "=", _bin(left, bop, right)), "pure_lhs")]
        if bop in _COMMUTATIVE:
            out.append((_assign(left, "=", _bin(right, bop, left)), "pure_lhs"))
        return out
    r = base(right)
    if op == "=" and r.type == "binary_expression" and f"{_op(r)}=" in _COMPOUND:
        bl, _, br = r.children
        out = []
        if bl == left:
            out.append((_assign(left, f"{_op(r)}=", br), "pure_lhs"))
        if br == left and _op(r) in _COMMUTATIVE:
            out.append((_assign(left, f"{_op(r)}=", bl), "pure_lhs"))
        return out
    return []


def _increment(p: PNode, on: frozenset[str]) -> Variants:
    """In a slot whose value is unused: i++ / ++i / i += 1 / i = i + 1 / i = 1 + i."""
    if "increment" not in on:
        return []
    q = base(p)
    var = step = None
    if q.type == "update_expression" and len(q.children) == 2:
        a, b = q.children
        if _leaf_text(b) in ("++", "--"):
            var, step = a, _leaf_text(b)
        elif _leaf_text(a) in ("++", "--"):
            var, step = b, _leaf_text(a)
    elif q.type == "assignment_expression" and _op(q) in ("+=", "-=") \
            and _leaf_text(q.children[2]) == "1":
        var, step = q.children[0], "++" if _op(q) == "+=" else "--"
    if var is None or step is None:
        return []
    op = step[0]
    forms = [PNode("update_expression", children=(var, _tok(step))),
             PNode("update_expression", children=(_tok(step), var)),
             _assign(var, op + "=", _one())]
    out: Variants = [(f, None) for f in forms if f != q]
    out.append((_assign(var, "=", _bin(var, op, _one())), "pure_lhs"))
    if op == "+":
        out.append((_assign(var, "=", _bin(_one(), op, var)), "pure_lhs"))
    return out


def _braces(p: PNode, on: frozenset[str]) -> Variants:
    """A statement in a body slot: { S } / S."""
    if "braces" not in on:
        return []
    q = base(p)
    if q.type == "compound_statement" and len(q.children) == 3:
        inner = q.children[1]
        if inner.seq is not None:
            return [(PNode("statement", metavar=inner.seq), None)]
        if base(inner).type != "declaration":
            return [(inner, None)]
        return []
    if q.type == "compound_statement" and len(q.children) > 3:
        # { $$$PRE; S; $$$POST; } with one statement: the bare S, the runs bound empty
        inner = q.children[1:-1]
        fixed = [c for c in inner if c.seq is None]
        runs = [c.seq for c in inner if c.seq is not None]
        if len(fixed) == 1 and base(fixed[0]).type != "declaration" and "_" not in runs:
            return [(fixed[0], EMPTY_RUNS + ",".join(runs))]
        return []
    if q.type != "compound_statement" and q.type != "declaration" and q.seq is None:
        return [(_block(p), None)]
    return []


def _parentheses(p: PNode, on: frozenset[str]) -> Variants:
    if "parentheses" not in on or p.type not in ("binary_expression", "conditional_expression",
                                                 "call_expression", "field_expression",
                                                 "subscript_expression", "cast_expression"):
        return []
    return [(PNode("parenthesized_expression", children=(_tok("("), p, _tok(")"))), None)]


_RELATIONAL = frozenset({"<", "<=", ">", ">=", "==", "!="})
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "<<", ">>"})


def _bare_operand(k: PNode) -> PNode:
    """An operand of a comparison that the anchor wraps in parentheses, ``(r0 + i) >= 0``,
    also without them, ``r0 + i >= 0``, where the wrapped code is arithmetic: it binds tighter
    than any comparison, so the code without the parentheses has the same tree."""
    q = base(k)
    if q.type != "parenthesized_expression" or len(q.children) != 3:
        return k
    inner = q.children[1]
    if base(inner).type != "binary_expression" or _op(inner) not in _ARITHMETIC:
        return k
    if k.alts:
        return replace(k, alts=(*k.alts, inner), alt_checks=(*k.alt_checks, None))
    return alternation(k, [(inner, None)])


def _max_parts(p: PNode) -> tuple[str, PNode, PNode, bool] | None:
    """(max or min, M, A, whether it is spelled with fmaxf/fminf) of a statement in one of
    the max/min spellings, else None."""
    q = base(p)
    if q.type == "expression_statement" and len(q.children) == 1 \
            and _op(q.children[0]) == "=":
        m, _, rhs = base(q.children[0]).children
        rhs = base(rhs)
        if rhs.type == "call_expression" and len(rhs.children) == 2:
            name = _leaf_text(rhs.children[0])
            args = base(rhs.children[1]).children
            for kind, funcs in _MAX_FUNCS.items():
                if name in funcs and len(args) == 4:
                    x, y = args[1], args[2]
                    if x == m:
                        return kind, m, y, name.startswith("f")
                    if y == m:
                        return kind, m, x, name.startswith("f")
        if rhs.type == "conditional_expression" and len(rhs.children) == 5:
            cond, _, a, _, b = rhs.children
            kind = _compare_kind(cond, a, m)
            if kind and b == m:
                return kind, m, a, False
        return None
    if q.type == "if_statement" and len(q.children) == 3:
        cond = base(base(q.children[1]).children[1]) if len(base(q.children[1]).children) == 3 \
            else None
        body = base(q.children[2])
        if body.type == "compound_statement" and len(body.children) == 3:
            body = base(body.children[1])
        if cond is None or body.type != "expression_statement" or len(body.children) != 1 \
                or _op(body.children[0]) != "=":
            return None
        m, _, a = base(body.children[0]).children
        kind = _compare_kind(cond, a, m)
        if kind:
            return kind, m, a, False
    return None


def _compare_kind(cond: PNode, a: PNode, m: PNode) -> str | None:
    """``a > m`` or ``m < a``: max; ``a < m`` or ``m > a``: min."""
    cond = base(cond)
    op = _op(cond)
    if op not in ("<", ">"):
        return None
    x, _, y = cond.children
    if x == a and y == m:
        return "max" if op == ">" else "min"
    if x == m and y == a:
        return "min" if op == ">" else "max"
    return None


def _max_idiom(p: PNode, on: frozenset[str]) -> Variants:
    if "max_idiom" not in on:
        return []
    parts = _max_parts(p)
    if parts is None:
        return []
    kind, m, a, fast = parts
    gt = ">" if kind == "max" else "<"
    lt = _MIRROR[gt]
    fname, plain = _MAX_FUNCS[kind]
    spellings: list[tuple[PNode, bool]] = [
        (_stmt(_assign(m, "=", _call(fname, m, a))), True),
        (_stmt(_assign(m, "=", _call(fname, a, m))), True),
        (_stmt(_assign(m, "=", _call(plain, m, a))), False),
        (_stmt(_assign(m, "=", _call(plain, a, m))), False),
    ]
    for cond in (_bin(a, gt, m), _bin(m, lt, a)):
        body = _stmt(_assign(m, "=", a))
        spellings += [(_if(cond, body), False), (_if(cond, _block(body)), False),
                      (_stmt(_assign(m, "=", PNode("conditional_expression", children=(
                          cond, _tok("?"), a, _tok(":"), m)))), False)]
    own = base(p)
    own_call = base(own.children[0]).type == "assignment_expression" and base(
        base(own.children[0]).children[2]).type == "call_expression" \
        if own.type == "expression_statement" and own.children else False
    # the fmaxf spellings differ from the others for non-float m (fmaxf converts an int or a
    # double to float): matching across them obliges m to be a float. A call spelling met by
    # a call spelling reads a once either way: a may call (a shuffle: fmaxf(m, shfl(m, o)));
    # the if and ?: spellings read a twice, so a must then be free of calls and effects
    out: Variants = []
    for k, (sp, f) in enumerate(spellings):
        if sp == own:
            continue
        if own_call and k < 4:
            out.append((sp, "float_call_max" if (f or fast) else "call_max"))
        else:
            out.append((sp, "float_max" if (f or fast) else "pure_max"))
    return out


def _address_of_element(p: PNode, on: frozenset[str]) -> Variants:
    """``&a[i]`` / ``a + i``: the same address (C's definition of ``a[i]``) where ``a`` is a
    pointer or an array (an obligation; a class's ``operator[]`` is another thing). Not
    ``i + a``: its first spelling ``a + i`` always matches a sum (an alternation keeps the
    first spelling that matches), and its obligation would then refuse the match."""
    if "address_of_element" not in on or p.type != "pointer_expression" \
            or len(p.children) != 2 or _leaf_text(p.children[0]) != "&":
        return []
    sub = base(p.children[1])
    if sub.type != "subscript_expression" or len(sub.children) != 2:
        return []
    a, idx = sub.children
    idx = base(idx)
    if idx.type != "subscript_argument_list" or len(idx.children) != 3:
        return []
    i = idx.children[1]
    return [(_bin(a, "+", i), "pointer_left")]


def _integer_bounds(p: PNode, on: frozenset[str]) -> Variants:
    """``i >= 0`` / ``i > -1`` and ``i <= n`` / ``i < n + 1``: the same test on integers
    (an obligation on both operands; for a float ``i`` between -1 and 0 they differ), which
    first image kernels write (``curRow > -1``, ``blurRow < BLUR_SIZE + 1``). ``n + 1`` would
    overflow only at the type's largest value, where the code itself is undefined."""
    op = _op(p)
    if "integer_bounds" not in on or p.type != "binary_expression" or op not in (">=", "<="):
        return []
    left, _, right = p.children
    if op == ">=":
        if _leaf_text(right) != "0":
            return []
        return [(_bin(left, ">", PNode("number_literal", text="-1")), "int_comparison")]
    return [(_bin(left, "<", _bin(right, "+", _one())), "int_comparison")]


def _const_local(p: PNode, on: frozenset[str]) -> Variants:
    """``T x = e;`` / ``const T x = e;`` / ``T const x = e;``: a const local can only be
    read, and code that matches the anchor reads it the same way. A template that declares
    the name again keeps the const where it never assigns it (``klc.edits.render``), and
    writes its own spelling (without the const) where it does, which is sound unless the
    name must be a constant expression (an array bound, a template argument): the check
    asks that the initialiser read a built-in index variable, which no constant expression
    does.

    The same for a type metavariable (``$TY x = e;``): it binds the type without the const
    (``int`` of ``const int i = ...``), so a template that writes ``$TY`` elsewhere (a cast,
    another index) writes the plain type, and one that assigns ``x`` afterwards (a
    grid-stride step) assigns a variable its rewrite declared without const; ``$TY x = ...``
    written back unassigned is ``const int x = ...`` again. (``unsigned
    const i``, which tree-sitter reads as one type holding the const, is no match at all:
    ``klc.match.find.binds_qualified_type``.)"""
    if "const_local" not in on or p.type != "declaration" or not p.children:
        return []
    first = base(p.children[0])
    if first.type in ("type_qualifier", "storage_class_specifier") or first.seq is not None:
        return []
    if not any(base(c).type == "init_declarator" for c in p.children):
        return []
    const = PNode("type_qualifier", children=(_tok("const"),))
    head, *rest = p.children  # ``const int i`` and ``int const i``
    return [(PNode(p.type, children=(const, *p.children)), "index_init"),
            (PNode(p.type, children=(head, const, *rest)), "index_init")]


def _chain_terms(p: PNode, op: str) -> list[PNode]:
    """The terms of a chain of ``op`` (``a && b && c`` is ``(a && b) && c``), in order: the
    anchor's own spelling of each link (the terms keep their own alternatives)."""
    if _op(p) == op and base(p).type == "binary_expression":
        left, _, right = base(p).children
        return [*_chain_terms(left, op), *_chain_terms(right, op)]
    return [p]


_MAX_CHAIN = 4  # terms: 4! = 24 orders at most per chain


def _chain_order(p: PNode, on: frozenset[str]) -> Variants:
    """``a && b && c`` in every other order of its terms (and ``||``): bounds checks written
    ``y < H && x < W && c < C`` or ``x < W && c < C && y < H``. ``&&`` and ``||`` short-circuit,
    so an order is the same test only where every term may be evaluated whatever the others
    gave: the check ``safe_chain`` asks that each term of the code's chain call, assign and
    increment nothing, read no memory (``i < n && x[i] > 0`` guards the read with the bound)
    and divide or shift only by a non-zero constant (``d != 0 && s / d > 1`` guards the
    division). Two terms are ``commutative``'s swap; this adds the orders of three and four."""
    op = _op(p)
    if "chain_order" not in on or p.type != "binary_expression" or op not in _SHORT_CIRCUIT:
        return []
    terms = _chain_terms(p, op)
    if not 3 <= len(terms) <= _MAX_CHAIN:
        return []
    out: Variants = []
    for order in permutations(range(len(terms))):
        if order == tuple(range(len(terms))):
            continue
        chain = terms[order[0]]
        for k in order[1:]:
            chain = _bin(chain, op, terms[k])
        out.append((chain, "safe_chain"))
    return out


def _nested_if(p: PNode, on: frozenset[str]) -> Variants:
    """``if (A) { if (B) S }`` as ``if (A && B) S``: bounds checked one axis per ``if`` in an
    anchor, one chain in the code (``if (r >= 0 && r < H && c >= 0 && c < W)``). Neither
    ``if`` may have an else; then the two are the same test, whatever A and B do: ``&&``
    evaluates B only where A held, as the inner ``if`` does. The chain is the terms of A then
    those of B (``a1 && a2 && b1 && b2`` is ``((a1 && a2) && b1) && b2``), in any other order
    under ``chain_order``'s check, or ``(A) && (B)``; S keeps its own spellings (braces)."""
    if "nested_if" not in on or p.type != "if_statement" or len(p.children) != 3:
        return []
    clause, body = p.children[1], base(p.children[2])
    inner = body.children[1] if body.type == "compound_statement" and len(
        body.children) == 3 else body
    inner = base(inner)
    if inner.type != "if_statement" or len(inner.children) != 3 or inner.seq is not None \
            or inner.metavar is not None:
        return []
    if len(clause.children) != 3 or len(inner.children[1].children) != 3:
        return []
    outer_cond, inner_cond = clause.children[1], inner.children[1].children[1]
    terms = _chain_terms(outer_cond, "&&") + _chain_terms(inner_cond, "&&")
    chain = terms[0]
    for t in terms[1:]:
        chain = _bin(chain, "&&", t)
    left, right = (PNode("parenthesized_expression", children=(_tok("("), c, _tok(")")))
                   for c in (outer_cond, inner_cond))
    grouped = _bin(left, "&&", right)
    cond = alternation(chain, [*_chain_order(chain, on), (grouped, None)])
    return [(_if(cond, inner.children[2]), None)]


_NODE_ISOS: tuple[Callable[[PNode, frozenset[str]], Variants], ...] = (
    _commutative, _compound, _parentheses, _address_of_element, _const_local, _integer_bounds,
    _chain_order)


def expand(p: PNode, on: frozenset[str], slot: str = "") -> PNode:
    """``p`` with the alternatives of every isomorphism in ``on`` (bottom-up). ``slot``:
    "unused" where the node's value is not used (a statement's expression, a loop step),
    "body" where it is the body of if/else/for/while/do, "root" for a single-node anchor's
    root (whose alternatives must keep its node type: candidates are found by it)."""
    if p.metavar is not None or p.seq is not None or not p.children or p.alts:
        return p
    kids = list(p.children)
    body_at = _STATEMENT_BODY.get(p.type)
    n = len(kids)
    for i, c in enumerate(kids):
        child_slot = ""
        if body_at is not None and (i == body_at % n) and c.type != "else_clause":
            child_slot = "body"
        elif (p.type == "expression_statement" and n == 1) or (
                p.type == "for_statement" and i + 1 < n and kids[i + 1].text == ")"
                and kids[i].text != "("):
            child_slot = "unused"  # (a loop step: the child before the ")")
        kids[i] = expand(c, on, child_slot)
    if "parentheses" in on and p.type == "binary_expression" and n == 3 \
            and _leaf_text(kids[1]) in _RELATIONAL:
        kids[0], kids[2] = _bare_operand(kids[0]), _bare_operand(kids[2])
    q = replace(p, children=tuple(kids)) if tuple(kids) != p.children else p
    variants: Variants = []
    for iso in _NODE_ISOS:
        variants += iso(q, on)
    if slot == "unused":
        variants += _increment(q, on)
    if q.type in ("expression_statement", "if_statement"):
        variants += [(expand(v, on - {"max_idiom"}), c) for v, c in _max_idiom(q, on)]
    if q.type == "if_statement":
        variants += _nested_if(q, on)
    if slot == "body":
        variants += _braces(q, on)
    if slot == "root":
        variants = [(v, c) for v, c in variants if v.type == q.type]
    return alternation(q, variants)


def alternation(own: PNode, variants: Variants) -> PNode:
    """``own`` or any of ``variants`` (their duplicates and ``own`` itself dropped)."""
    seen = [own]
    alts, checks = [own], [None]
    for v, c in variants:
        if v in seen:
            continue
        seen.append(v)
        alts.append(v)
        checks.append(c)  # type: ignore[arg-type]
    if len(alts) == 1:
        return own
    types = {a.type for a in alts}
    return PNode(own.type if len(types) == 1 else "", alts=tuple(alts), alt_checks=tuple(checks))


def expand_elements(elements: tuple[PNode, ...], on: frozenset[str]) -> tuple[PNode, ...]:
    """A pattern's elements with their isomorphisms: a single node keeps its root type; the
    statements of a run are each in a statement slot, and the last may be an early return
    (``if (C) { $$$BODY; }``, or any body that holds a run: ``{ $$$PRE; S; $$$POST; }``,
    which the rest of the kernel body after ``if (!C) return;`` then matches whole)."""
    if not on:
        return elements
    if len(elements) == 1:
        return (expand(elements[0], on, "root"),)
    out = [expand(e, on, "") for e in elements]
    early = None
    if "early_return" in on:  # (a body of runs and statements in any order: matched whole)
        early = _early_return(elements[-1], on) or _early_return(elements[-1], on, whole=True)
    if early is not None:
        last = out[-1]
        alts = last.alts or (last,)
        checks = last.alt_checks or (None,)
        out[-1] = PNode("", alts=(*alts, early), alt_checks=(*checks, "int_operands"))
    return tuple(out)


def _early_return(p: PNode, on: frozenset[str], whole: bool = False) -> PNode | None:
    """``if (C) { $$$BODY; }`` as a run's last statement: the spelling ``if (!C) return;``
    followed by the rest of a kernel body (``_Matcher.seq`` matches it: the rest is bound to
    ``$$$BODY``). The body may also be ``{ $$$BODY; S1; ... Sk; }``: the rest then ends with
    statements that match S1 ... Sk, and what comes before them is bound to ``$$$BODY``.
    ``whole``: any body of statements and runs (``{ S1; ...; $$$POST; }``, an anchor that
    is one if statement: ``single_early_return``), the rest matched against all of it
    (the node's text None says so). None when the statement is not of that shape."""
    if p.type != "if_statement" or len(p.children) != 3:
        return None
    clause, body = p.children[1], p.children[2]
    if body.type != "compound_statement" or len(body.children) < 3 or len(clause.children) != 3:
        return None
    if whole:
        stmts = body.children[1:-1]
        if any(c.dots is not None for c in stmts) or all(c.seq is None for c in stmts):
            return None
        run: str | None = None
        tail = stmts
    else:
        if body.children[1].seq is None:
            return None
        run, tail = body.children[1].seq, body.children[2:-1]
        if any(c.seq is not None or c.metavar is not None or c.dots is not None for c in tail):
            return None
    cond = clause.children[1]
    neg = _negated(cond)
    if neg is None:
        return None
    neg = expand(neg, on - {"early_return"}, "")  # (a chain's || commutes: safe_chain)
    spellings = alternation(neg, [(PNode("unary_expression", children=(_tok("!"), PNode(
        "parenthesized_expression", children=(_tok("("), cond, _tok(")"))))), None)])
    ret = PNode("return_statement", children=(_tok("return"),))
    guard = expand(_if(spellings, ret), on - {"early_return"}, "")
    rest = tuple(expand(c, on - {"early_return"}, "") for c in tail)
    return PNode(EARLY, text=run, children=(guard, *rest))


def single_early_return(pattern: Pattern, made: Pattern, on: frozenset[str],
                        where_: str) -> Pattern | None:
    """An anchor that is one if statement whose body holds a run (``if (r < m && c < n) {
    S; ...; $$$POST; }``) as a run of one statement, the early return among its spellings:
    ``if (r >= m || c >= n) return;`` and the rest of the kernel body matched against the
    body (``_Matcher.early_return``); ``made``: the anchor with its other isomorphisms.
    None when the anchor is not of that shape."""
    if pattern.is_sequence or "early_return" not in on:
        return None
    early = _early_return(pattern.elements[0], on, whole=True)
    if early is None:
        return None
    own = made.elements[0]
    slot = PNode("", alts=(*(own.alts or (own,)), early),
                 alt_checks=(*(own.alt_checks or (None,)), "int_operands"))
    made = _make_pattern(pattern.code, (slot,), where_)
    return replace(made, is_sequence=True, root_type="compound_statement", fixed=(), runs=(),
                   key=pattern.key + "\0early")


def _negated(cond: PNode) -> PNode | None:
    """The negation of a comparison (``i >= n``, or mirrored ``n <= i``), or of a chain of
    them joined by ``&&`` (De Morgan: ``r < m && c < n`` is false where ``r >= m || c >= n``
    is true, with the same operands evaluated in the same order); None for anything else."""
    op = _op(cond)
    if cond.type != "binary_expression":
        return None
    left, _, right = cond.children
    if op in _NEGATE:
        return alternation(_bin(left, _NEGATE[op], right),
                           [(_bin(right, _MIRROR[_NEGATE[op]], left), None)])
    if op == "&&":
        a, b = _negated(base(left)), _negated(base(right))
        return None if a is None or b is None else _bin(a, "||", b)
    return None


def alt_words(p: PNode, words_of: Callable[[PNode], set[str]]) -> set[str]:
    """The words every alternative of ``p`` holds (what an early reject may ask for)."""
    sets = [words_of(a) for a in p.alts]
    return set.intersection(*sets) if sets else set()


# --------------------------------------------------------------------------------------
# Anchors compiled with their isomorphisms


def _index_declaration(p: PNode) -> bool:
    """An anchor's declaration that ``decl_order`` may move: ``T x = e;`` (a type
    metavariable or not, each declarator with an initialiser) whose initialisers name a
    built-in index variable."""
    p = base(p)
    return p.type == "declaration" and p.metavar is None and p.seq is None and any(
        base(c).type == "init_declarator" for c in p.children) and _mentions_builtin(p)


def declaration_swaps(raw: tuple[PNode, ...], elements: tuple[PNode, ...]
                      ) -> list[tuple[PNode, ...]]:
    """``decl_order``: for each two adjacent index declarations of a run (``raw``, the
    anchor as written; ``elements``, with its other isomorphisms), the run with the two in
    the other order, the one that comes second in the code checked to be independent of
    the one before it (``_check_independent_declarations``)."""
    out = []
    for i in range(len(raw) - 1):
        if _index_declaration(raw[i]) and _index_declaration(raw[i + 1]):
            later = PNode(base(raw[i]).type, alts=(elements[i],),
                          alt_checks=("independent_declarations",))
            out.append((*elements[:i], elements[i + 1], later, *elements[i + 2:]))
    return out


def with_isomorphisms(pattern: Pattern, on: frozenset[str], where_: str) -> Pattern:
    """``pattern`` with the alternatives of the isomorphisms in ``on`` (its words, token
    runs and fixed statements made again: an alternative may lack a word of the anchor)."""
    elements = expand_elements(pattern.elements, on)
    swaps = declaration_swaps(pattern.elements, elements) \
        if "decl_order" in on and pattern.is_sequence else []
    if elements == pattern.elements and not swaps:
        return pattern
    made = _make_pattern(pattern.code, elements, where_)
    made = replace(made, key=pattern.key + "\0iso:" + ",".join(sorted(on)))
    if swaps:
        # the anchor's own order first, then each swapped pair (one match per span, the
        # first branch's; every branch binds the same metavariables and keeps the dots)
        # (a swapped branch's fixed statements are the anchor's own: the prefilter, which
        # asks each to fit some statement of a block in any order, is then answered once
        # for all branches: ``klc.match.find``'s memo of fitted statements)
        branches = (replace(made, dots=pattern.dots), *(
            replace(_make_pattern(pattern.code, s, where_), dots=pattern.dots,
                    key=f"{made.key}\0swap:{k}", fixed=made.fixed)
            for k, s in enumerate(swaps)))
        return replace(made, words=tuple(sorted(set.intersection(
            *(set(b.words) for b in branches)))), runs=(), tokens=(),
            key="\0|".join(b.key for b in branches), alternatives=branches,
            common=frozenset(_names(made.elements)), dots=())
    early = single_early_return(pattern, made, on, where_)
    if early is None:
        return made
    # one if statement: the anchor's own spellings, then the early return's run (``anchor
    # any``: one match per span, the first branch's; both bind the same metavariables)
    return replace(made, words=tuple(sorted(set(made.words) & set(early.words))), runs=(),
                   tokens=(),
                   key=made.key + "\0|" + early.key, alternatives=(made, early),
                   common=frozenset(_names(made.elements)), dots=())


def expand_isomorphisms(pattern: Pattern, isos_off: tuple[str, ...], where_: str) -> Pattern:
    """The hook ``klc.match.pattern`` calls on a rule's compiled anchor: its isomorphisms on
    but those in ``isos_off`` (``isomorphisms: -NAME`` in the rule; ``-all``: none)."""
    on = enabled(isos_off)
    made = with_isomorphisms(pattern, on, where_) if on else pattern
    # without read_through, the comparisons tree-sitter misread (klc.cuda.repair) are still
    # read again: a parse's repair, not a reading of the code as something else
    reads: bool | str = True if "read_through" in on else "rereads"
    tag = "\0read" if reads is True else "\0reread"
    return replace(made, reads=reads, key=made.key + tag, alternatives=tuple(
        replace(b, reads=reads, key=b.key + tag) for b in made.alternatives))


def enabled(isos_off: tuple[str, ...]) -> frozenset[str]:
    """The isomorphisms on for a rule that turns ``isos_off`` off."""
    return frozenset() if "all" in isos_off else DEFAULT_ON - set(isos_off)

