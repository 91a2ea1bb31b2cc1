"""Geometry holes: the hole values a site's own launch and constants fix.

A skill learned at one block or tile shape applies at any shape that keeps its conditions.
Its extents are holes (``?tile``, ``?threads``, ``?tm``) whose relations to the launch the
guard states: ``block_dim(x, ==, ?tile)``, ``block_size(<=, ?threads)``,
``block_dim_product(x, ?t, ?t)`` (the block's x extent is ``?t * ?t``), ``equals($T, ?t)``
(a constant of the code), ``is_product(?a, ?b, ?c)`` between holes, ``vector_elems($X, ?w,
16)`` (the elements of $X's type in 16 bytes); and one that is not an
extent, the operator a reduction combines with (``grid_folded(anchor, $ACC, ?op)``: the
spelling of the maximum or minimum the code after the site uses, klc/guards/gridfold.py), and
the element type of a buffer (``elem_type($SRC, ?t)``: a tile of the input's type).
:func:`site_holes` reads those relations as equations and solves them at a site from the
site's own launch (the spec's block, or every launch of the kernel in the file) and
constants, so that a matrix product
learned at 16 x 16 takes ``?tile = 32`` on a 32 x 32 block instead of being refused by its
default (``block.x is 32, and not 32 == 16``). ``klc.pipeline.find_sites`` judges a site at
these values where no value was given, ``klc.fill.search`` proposes them first, and the
guards still judge every value (a value outside the hole's declared domain is left out).
"""

from __future__ import annotations

import contextlib
import math
import re
from typing import TYPE_CHECKING, Any

from klc.errors import KlcError

if TYPE_CHECKING:
    from klc.match import Match
    from klc.rule import Rule


# relations a guard conjunct states between a hole and the launch: predicate -> how to read
_EXTENT_OPS = ("==", "<=", ">=")


def _conjuncts(expr: Any) -> list[Any]:
    from klc.rule.guard import GuardAnd

    if expr is None:
        return []
    if isinstance(expr, GuardAnd):
        return [c for e in expr.operands for c in _conjuncts(e)]
    return [expr]


def geometry_relations(rule: Rule) -> list[Any]:
    """The guard conjuncts of a rule that tie a hole to the site's geometry or constants
    (module doc), in the order written; memoised on the rule."""
    cached = _RELATIONS.get(id(rule))
    if cached is not None and cached[0] is rule:
        return cached[1]
    from klc.rule.guard import GuardCall

    out = []
    for c in _conjuncts(rule.guard):
        if not isinstance(c, GuardCall):
            continue
        kinds = [a.kind for a in c.args]
        if "hole" not in kinds:
            continue
        if c.name in ("block_dim", "block_size", "block_dim_product", "equals",
                      "const_value", "is_product", "grid_folded", "elem_type", "vector_elems"):
            out.append(c)
    _RELATIONS[id(rule)] = (rule, out)
    return out


_RELATIONS: dict[int, tuple[Any, list[Any]]] = {}


def _in_domain(rule: Rule, name: str, value: int) -> str | None:
    decl = rule.holes.get(name)
    if decl is None or value < 1:
        return None
    try:
        return decl.validate(str(value))
    except KlcError:  # a value the declaration refuses is no proposal
        return None


def _elements_in(ctx: Any, b: Any, nbytes: Any) -> int | None:
    """How many elements of the buffer ``b`` binds make ``nbytes`` bytes (vector_elems)."""
    from klc.guards.types import element_bytes

    size = element_bytes(ctx, b) if b is not None else None
    if size and isinstance(nbytes, int) and nbytes % size == 0:
        return nbytes // size
    return None


def _solve_product(rule: Rule, names: list[str], known: dict[str, int],
                   put: Any) -> bool:
    """``?p = ?q * ?r``: the third value once two are known; where only the product is (a
    tile edge of 16 the site's block fixes), one factor at its default where it divides the
    product (?factor 4 of 16 gives ?r 4), else the other's. Whether a value was put."""
    p, q, r = names
    if q in known and r in known:
        return bool(put(p, known[q] * known[r]))
    if p in known and q in known and known[q] and known[p] % known[q] == 0:
        return bool(put(r, known[p] // known[q]))
    if p in known and r in known and known[r] and known[p] % known[r] == 0:
        return bool(put(q, known[p] // known[r]))
    if p in known and q not in known and r not in known:
        for a, b in ((q, r), (r, q)):
            d = _int_default(rule, a)
            if d and known[p] % d == 0 and _in_domain(rule, b, known[p] // d) is not None:
                return bool(put(a, d) | put(b, known[p] // d))
    return False


def _int_default(rule: Rule, name: str) -> int | None:
    decl = rule.holes.get(name)
    d = decl.default if decl is not None else None
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    return int(d) if isinstance(d, str) and d.isdigit() else None


def site_holes(rule: Rule, match: Match, spec: Any | None, given: dict[str, str] | None = None,
               clang: bool = False) -> dict[str, str]:
    """Hole name -> the value the site's own launch and constants give it, for each hole of
    ``rule`` that a guard relation fixes (module doc) and ``given`` does not name. A value
    outside the hole's declared domain is left out (the guard then refuses the site at the
    default, saying which extent it met). Nothing is judged here: the guards still are."""
    relations = geometry_relations(rule)
    if not relations:
        return {}
    from klc.analysis.constants import block_dims, constant_of
    from klc.guards.registry import GuardContext

    given = given or {}
    ctx = GuardContext(match, {}, spec, clang)
    exact: Any = _UNSET_DIMS
    known: dict[str, int] = {k: int(v) for k, v in given.items() if str(v).isdigit()}
    out: dict[str, str] = {}

    def put(name: str, value: int) -> bool:
        if name in given or name in out:
            return False
        v = _in_domain(rule, name, value)
        if v is None:
            return False
        out[name] = v
        known[name] = value
        return True

    def block() -> tuple[int, int, int] | None:
        nonlocal exact
        if exact is _UNSET_DIMS:
            exact = block_dims(ctx)[0]
        return exact  # type: ignore[no-any-return]

    for _ in range(3):  # a relation may need a value another one found
        progress = False
        for c in relations:
            a = c.args
            if c.name == "block_dim" and len(a) == 3 and a[2].kind == "hole" \
                    and a[1].value in _EXTENT_OPS:
                dims = block()
                if dims is not None:
                    progress |= put(str(a[2].value), dims["xyz".index(str(a[0].value))])
            elif c.name == "block_size" and len(a) == 2 and a[1].kind == "hole" \
                    and a[0].value in _EXTENT_OPS:
                dims = block()
                if dims is not None:
                    progress |= put(str(a[1].value), dims[0] * dims[1] * dims[2])
            elif c.name == "block_dim_product" and len(a) == 3:
                dims = block()
                if dims is None:
                    continue
                have = dims["xyz".index(str(a[0].value))]
                p, q = str(a[1].value), str(a[2].value)
                if p == q:
                    root = round(have ** 0.5)
                    if root * root == have:
                        progress |= put(p, root)
                elif p in known and known[p] and have % known[p] == 0:
                    progress |= put(q, have // known[p])
                elif q in known and known[q] and have % known[q] == 0:
                    progress |= put(p, have // known[q])
            elif c.name in ("equals", "const_value") and a[0].kind == "metavar":
                hole = a[-1]
                if hole.kind != "hole" or (c.name == "const_value" and a[1].value != "=="):
                    continue
                b = match.bindings.get(str(a[0].value))
                if b is None:
                    continue
                v = constant_of(ctx, b)[0]
                if isinstance(v, int) and not isinstance(v, bool):
                    progress |= put(str(hole.value), v)
            elif c.name == "grid_folded" and a[-1].kind == "hole":
                from klc.guards.gridfold import fold_operator_at

                name, op = str(a[-1].value), fold_operator_at(ctx)
                decl = rule.holes.get(name)
                if op is not None and decl is not None and name not in given \
                        and name not in out:
                    with contextlib.suppress(KlcError):  # an operator outside the domain
                        out[name] = decl.validate(op)
            elif c.name == "elem_type" and a[0].kind == "metavar" and a[-1].kind == "hole":
                name = str(a[-1].value)
                decl = rule.holes.get(name)
                if decl is None or name in given or name in out:
                    continue
                for have in _element_types(ctx, match.bindings.get(str(a[0].value))):
                    with contextlib.suppress(KlcError):  # a type outside the domain
                        out[name] = decl.validate(have)
                        break
            elif c.name == "vector_elems" and a[0].kind == "metavar" and a[1].kind == "hole":
                per = _elements_in(ctx, match.bindings.get(str(a[0].value)), a[2].value)
                progress |= per is not None and put(str(a[1].value), per)
            elif c.name == "is_product" and all(x.kind == "hole" for x in a):
                progress |= _solve_product(rule, [str(x.value) for x in a], known, put)
        if not progress:
            break
    return out


_UNSET_DIMS = object()


def _element_types(ctx: Any, b: Any) -> tuple[str, ...]:
    """The element type of the pointer or array a metavariable bound (or the type of the
    variable it names), from its declaration, qualifiers aside: as the declaration spells
    it, then in the one spelling of ``norm_type`` (``unsigned`` and ``unsigned int``), so
    that a type hole whose domain has the declaration's own spelling takes it and a rewrite
    writes the type as the code did (``const unsigned row`` gives ``unsigned``). Empty
    where the tree does not say, or where it is a parameter of the function's template."""
    from klc.analysis.tree import binding_node
    from klc.analysis.types import norm_type, type_of

    node = binding_node(b) if b is not None else None
    typ = type_of(ctx, node) if node is not None else None
    if typ is None:
        return ()
    fn = ctx.function
    have = norm_type(typ.base)
    if fn is not None and any(t.name == have for t in fn.template_params):
        return ()
    spelled = " ".join(str(typ.base).split())
    return (spelled, have) if spelled != have else (have,)


def learned_relation(name: str, rows: list[tuple[int, tuple[int, ...]]], template: str
                     ) -> Any | None:
    """The geometry relation ``klc learn`` writes for the hole ``name`` (``klc.reverse``):
    ``rows`` holds its observed value and the block of the code the skill rewrites at each
    observed site, ``template`` the skill's rewrite. A hole that is a tile's extent in the
    rewrite (``_tile_extent``) and equals the block's extent along an axis at every site is
    ``block_dim(axis, ==, ?h)``; its threads, ``block_size(==, ?h)``; whose square is an
    extent, ``block_dim_product(axis, ?h, ?h)``. None otherwise (a value of 1 proves
    nothing)."""
    from klc.rule.guard import GuardArg, GuardCall

    if not rows or any(v <= 1 for v, _ in rows) or not _tile_extent(template, name):
        return None
    hole = GuardArg("hole", name)
    for i, axis in enumerate("xyz"):
        if all(len(b) > i and b[i] == v for v, b in rows):
            return GuardCall("block_dim", (GuardArg("name", axis), GuardArg("op", "=="), hole))
    if all(math.prod(b) == v for v, b in rows):
        return GuardCall("block_size", (GuardArg("op", "=="), hole))
    for i, axis in enumerate("xyz"):
        if all(len(b) > i and b[i] == v * v for v, b in rows):
            return GuardCall("block_dim_product", (GuardArg("name", axis), hole, hole))
    return None


def _tile_extent(text: str, name: str) -> bool:
    """The rewrite declares a ``__shared__`` array with ``?name`` in an extent and indexes it
    by ``threadIdx`` directly: a tile whose shape is the block's (a value that only scales a
    loop or a launch, a coarsening factor of 16 on a 256-thread block, or a histogram's 256
    bins walked by a block-strided loop, may equal an extent by chance)."""
    for m in _SHARED_DECL.finditer(text):
        array, extents = m.group(1), m.group(2)
        if re.search(r"\?" + re.escape(name) + r"\b", extents) and \
                re.search(re.escape(array) + r"\s*\[\s*threadIdx\.", text):
            return True
    return False


# a __shared__ array declaration in a template: its name (a hole or a metavariable) and extents
_SHARED_DECL = re.compile(r"__shared__[^;\[]*?([?$]?\w+)\s*((?:\[[^\]]*\]\s*)+);")
