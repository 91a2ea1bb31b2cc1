"""Guard predicates for a stencil's rows per thread (passes/stencil_rows.rule and its inverse):
``window_rows`` and ``grid_rows_cover`` (``grid_cols_cover`` along x, for the columns per
thread of passes/stencil_rows_vec4.rule).

A thread that computes several vertically adjacent output rows pays off where the rows'
windows overlap: the window of row y reads rows y - R .. y + R, the next row's window all but
one of them again, so that they come from registers or the cache. ``window_rows($$$S, $Y)``
says that the code computing one pixel holds such a window: a loop over rows around ``$Y``
whose radius is a compile-time constant R >= 1, in the spellings of first stencils:

- clipped: ``for (v = max(y - R, 0); v <= min(y + R, H - 1); v++)`` (the integer ``max`` and
  ``min``, their arguments in either order);
- constant bounds: ``for (v = y - R; v <= y + R; v++)`` (an interior fast path);
- offsets: ``for (dy = -R; dy <= R; dy++)`` whose body reads row ``y + dy``;
- corner: ``int r0 = y - R;`` (never assigned again) and ``for (i = 0; i < D; i++)`` of
  constant bounds, D >= 2 rows, whose body reads row ``r0 + i`` (a convolution in the
  spelling of course material).

A radius the kernel reads from memory or takes as a parameter is not a constant: the window
loops then run a trip count the compiler cannot unroll, and the rows per thread would only add
a loop around them (refused, with the radius named).

``grid_rows_cover($H, ?rpt)`` is the geometry's condition: the grid divided by ?rpt (rounded
up) numbers the same rows below H as the grid it divides. It does when that grid reaches every
row (grid.y * block.y >= H: both then compute every row, each once) or when ?rpt divides
grid.y (the shorter grid's threads take exactly the rows of the taller one's); a grid that
stops short of H on purpose (a kernel launched on the top of an image) and does not divide
would have rows computed that the original leaves alone.

A block that sums a partition of B elements (one partial per block) with B / k threads, each
adding k of them before the block's sum (passes/block_loads.rule and its inverse), has two
predicates: ``loads_split($B, ?k)`` (k divides the partition into whole warps of threads)
and ``block_times_loads($B, $K)`` (for the simplification: the launched block times K is the
partition). A warp per segment of that partition (passes/block_warps.rule and its inverses)
has ``segment_lanes($B, V)`` (32 lanes of whole V-element vectors), ``segment_warps($B, ?s)``
(B = 32 ?s threads) and ``block_of_warps($W)`` (for the simplification: the launched block
is W warps).
"""

from __future__ import annotations

from typing import Any

from tree_sitter import Node

from klc.analysis.constants import (
    Evaluator,
    block_dims,
    constant_of,
    describe_arg,
    kernel_spec,
    number_arg,
    spec_for,
)
from klc.analysis.loops import loop_header
from klc.analysis.tree import cited, in_span, nodes_of, operator_of, quoted, text_of, unparen
from klc.analysis.writes import set_once
from klc.guards.constants import _as_spec_expr
from klc.guards.registry import (
    ArgSpec,
    GuardContext,
    Verdict,
    _metavar,
    _no,
    _unknown,
    _yes,
    predicate,
)
from klc.match import Binding
from klc.spec import Bound, default_verify_sizes
from klc.spec.expr import evaluate, launch_dims

_MAXES = frozenset({"max"})
_MINS = frozenset({"min"})


def _call(node: Node, src: bytes, names: frozenset[str]) -> list[Node] | None:
    """The arguments of a call of one of ``names`` (``max(a, b)``), else None."""
    node = unparen(node)
    if node.type != "call_expression":
        return None
    fn = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    if fn is None or args is None or text_of(src, fn) not in names:
        return None
    return [a for a in args.named_children if a.type != "comment"]


def _offset(node: Node, src: bytes, y: str, op: str) -> Node | None:
    """R where ``node`` is ``y op R`` (``y - R``, ``y + R``; for ``+`` also ``R + y``)."""
    node = unparen(node)
    if node.type != "binary_expression":
        return None
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    oper = node.child_by_field_name("operator")
    if left is None or right is None or oper is None or text_of(src, oper) != op:
        return None
    if text_of(src, unparen(left)) == y:
        return right
    if op == "+" and text_of(src, unparen(right)) == y:
        return left
    return None


def _bound(node: Node, src: bytes, y: str, op: str, clip: frozenset[str]) -> Node | None:
    """R of a window bound around ``y``: ``y op R``, or clipped ``max(y - R, 0)`` /
    ``min(y + R, H - 1)`` (either argument order)."""
    r = _offset(node, src, y, op)
    if r is not None:
        return r
    args = _call(node, src, clip)
    if args is None or len(args) != 2:
        return None
    for a in args:
        r = _offset(a, src, y, op)
        if r is not None:
            return r
    return None


def _reads_row(loop: Node, src: bytes, y: str, d: str) -> bool:
    """The loop's body computes ``y + d`` (or ``d + y``) somewhere: the window's row."""
    body = loop.child_by_field_name("body")
    if body is None:
        return False
    stack = [body]
    while stack:
        n = stack.pop()
        if n.type == "binary_expression":
            oper = n.child_by_field_name("operator")
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            if oper is not None and left is not None and right is not None \
                    and text_of(src, oper) == "+" \
                    and {text_of(src, unparen(left)), text_of(src, unparen(right))} == {y, d}:
                return True
        stack.extend(n.named_children)
    return False


# -- the corner spelling: a window walked from its top-left corner ----------------------------
#
# Course material writes a convolution's window from its corner: ``int r0 = y - R;`` once,
# then ``for (int i = 0; i < D; i++)`` reading row ``r0 + i`` (checked against the matrix in
# nested ifs or one ``&&`` chain). The rows y - R .. y - R + D - 1 are a window around y of D
# rows whatever R is; vertically adjacent outputs share D - 1 of them when D >= 2. The corner
# must be a local initialised to ``y - R`` (R a compile-time constant) and never assigned
# again: a corner that moves walks other rows.


def _corners(loop: Node, src: bytes, var: str, row: str) -> list[tuple[str, Node]]:
    """The names c (other than ``var`` and ``row``) of the sums ``c + var`` / ``var + c``
    the loop's body computes, with the first sum of each: the candidates for a corner."""
    body = loop.child_by_field_name("body")
    found: dict[str, Node] = {}
    stack = [body] if body is not None else []
    while stack:
        n = stack.pop()
        if n.type == "binary_expression" and operator_of(n) == "+":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            if left is not None and right is not None:
                a, b = unparen(left), unparen(right)
                for one, other in ((a, b), (b, a)):
                    if one.type == "identifier" and text_of(src, one) == var \
                            and other.type == "identifier" \
                            and text_of(src, other) not in (var, row):
                        found.setdefault(text_of(src, other), n)
        stack.extend(reversed(n.named_children))
    return sorted(found.items(), key=lambda kv: kv[1].start_byte)


def _corner_window(ctx: GuardContext, loop: Node, var: str, lo: Node, hi: Node, op: str,
                   row: str, y: Binding) -> Verdict | str | None:
    """The corner spelling of a window's rows at ``loop`` (``for (var = lo; var op hi;
    ...)``, its body reading ``c + var`` for a corner ``c = row - R``): a yes, the reason a
    candidate is not one (a corner that moves, a bound or a radius that is not constant, a
    window of one row), or None where the loop reads no corner."""
    unit, src = ctx.unit, ctx.unit.source
    corners = _corners(loop, src, var, row)
    if not corners:
        return None
    body = loop.child_by_field_name("body")
    where = cited(unit, loop.start_byte, body.start_byte if body is not None else loop.end_byte)
    why = None
    for name, use in corners:
        decl, moved = set_once(ctx, name, use.start_byte)
        init = decl.init if decl is not None else None
        r = _offset(init, src, row, "-") if init is not None else None
        if r is None:
            continue  # not a corner of this row: another sum
        if moved:
            why = why or (f"the corner `{name}` of {where} is {moved}: the window's rows "
                          "are not the same for every output")
            continue
        ev = Evaluator(ctx)
        values = [ev.node(n, src) for n in (r, lo, hi)]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            bad = next(n for n, v in zip((r, lo, hi), values, strict=True)
                       if not isinstance(v, int) or isinstance(v, bool))
            why = why or (f"`{text_of(src, bad)}` of the corner window at {where} is not a "
                          f"compile-time constant{': ' + ev.why if ev.why else ''}")
            continue
        radius, first, last = values
        rows = last - first + (1 if op == "<=" else 0)
        if rows < 2:
            why = why or (f"{where} walks {max(rows, 0)} row(s) from the corner `{name}`: "
                          "no window rows shared between adjacent outputs")
            continue
        return _yes(f"{where} walks the {rows} rows of a window from the corner `{name}` = "
                    f"{quoted(y)} - {radius}", loop.start_byte)
    return why


@predicate("window_rows", ArgSpec("$$$S", frozenset({"metavar", "sequence"})), _metavar("$Y"),
           reads=("arguments", "declarations", "spec"))
def window_rows(ctx: GuardContext, stmts: Binding, y: Binding) -> Verdict:
    """The code $$$S holds a loop over the rows of a window around row $Y whose radius is a
    compile-time constant R >= 1: ``max(y - R, 0) .. min(y + R, H - 1)``, ``y - R .. y + R``,
    or offsets ``-R .. R`` added to y: vertically adjacent pixels share 2R of their window's
    rows; or D >= 2 rows (constant bounds) walked from a corner ``r0 = y - R`` (R constant,
    r0 never assigned again): adjacent pixels share D - 1 rows."""
    unit, src = ctx.unit, ctx.unit.source
    row = y.text.strip()
    seen: list[str] = []
    for loop in in_span(nodes_of(unit, "for_statement"), stmts.start, stmts.end):
        parts = loop_header(src, loop)  # for (int v = lo; v <= hi; ...), hi >= v read so
        if isinstance(parts, str) or parts[3] not in ("<=", "<"):
            continue
        var, lo, hi, op = parts
        lo_r = _bound(lo, src, row, "-", _MAXES)
        hi_r = _bound(hi, src, row, "+", _MINS)
        offsets = False
        if lo_r is not None and hi_r is not None and op == "<=":
            radius = [lo_r, hi_r]
        elif lo_r is None and hi_r is None and op == "<=" and _reads_row(loop, src, row, var):
            radius, offsets = [lo, hi], True  # offsets: -R .. R
        else:
            corner = _corner_window(ctx, loop, var, lo, hi, op, row, y)
            if isinstance(corner, Verdict):
                return corner
            if corner:
                seen.append(corner)
            continue
        where = cited(unit, loop.start_byte, loop.child_by_field_name("body").start_byte
                      if loop.child_by_field_name("body") is not None else loop.end_byte)
        values = []
        for r in radius:
            ev = Evaluator(ctx)
            v = ev.node(r, src)
            if not isinstance(v, int) or isinstance(v, bool):
                seen.append(f"the radius `{text_of(src, r)}` of {where} is not a compile-time "
                            f"constant{': ' + ev.why if ev.why else ''}")
                break
            values.append(v)
        else:
            if offsets:  # lo = -R, hi = R
                values[0] = -values[0]
            if values[0] != values[1] or values[0] < 1:
                seen.append(f"{where} walks rows {text_of(src, lo)} .. {text_of(src, hi)}: "
                            "not a window of one radius >= 1 around the row")
                continue
            return _yes(f"{where} walks the rows of a window of radius {values[0]} around "
                        f"{quoted(y)}", loop.start_byte)
    if seen:
        return _no(ctx, seen[0], stmts.start)
    return _no(ctx, f"{quoted(stmts)} holds no loop over the rows of a window around "
               f"{quoted(y)} (from max({row} - R, 0), {row} - R, offsets -R added to "
               f"{row}, or i from 0 added to a corner {row} - R)", stmts.start)


@predicate("grid_rows_cover", _metavar("$H"), ArgSpec("N", frozenset({"int", "hole"})),
           reads=("arguments", "declarations", "spec"))
def grid_rows_cover(ctx: GuardContext, h: Binding, n: Any) -> Verdict:
    """At every size the spec runs, the grid's y extent divided by N (rounded up) numbers the
    same rows below $H: the grid reaches every row (grid.y * block.y >= $H) or N divides
    grid.y. A skill that gives each thread N rows on a grid N times shorter then computes
    the rows the kernel computed, no more."""
    return _grid_covers(ctx, h, n, 1)


@predicate("grid_cols_cover", _metavar("$W"), ArgSpec("N", frozenset({"int", "hole"})),
           reads=("arguments", "declarations", "spec"))
def grid_cols_cover(ctx: GuardContext, w: Binding, n: Any) -> Verdict:
    """The columns' ``grid_rows_cover``: at every size the spec runs, the grid's x extent divided
    by N (rounded up) numbers the same columns below $W: the grid reaches every column
    (grid.x * block.x >= $W) or N divides grid.x. A skill that gives each thread N adjacent
    columns on a grid N times narrower then computes the columns the kernel computed."""
    return _grid_covers(ctx, w, n, 0)


def _grid_covers(ctx: GuardContext, h: Binding, n: Any, axis: int) -> Verdict:
    what, ax = ("rows", "y") if axis else ("columns", "x")
    name = "grid_rows_cover" if axis else "grid_cols_cover"
    k = number_arg(ctx, n)
    if not isinstance(k, int) or k <= 0:
        per = "rows per thread" if axis else "columns per thread"
        return _unknown(ctx, f"{name}: the {per} {describe_arg(n)} are not a known positive "
                        "integer")
    bound = spec_for(ctx)
    spec = kernel_spec(bound)
    if spec is None:
        return _no(ctx, f"no spec: the grid's {what} are not known to cover {quoted(h)}",
                   h.start)
    try:
        h_expr = _as_spec_expr(ctx, h.text, h.start, spec, 0)
    except ValueError as e:
        return _no(ctx, f"{quoted(h)} has no value in the spec's terms: {e}", h.start)
    try:
        runs = list(spec.verify_sizes) or default_verify_sizes(
            spec.sizes, launch_dims(spec.block, bound.env() if isinstance(bound, Bound)
                                    else spec.env())[0])
        for sizes in (spec.sizes, *runs):
            env = bound.env(sizes) if isinstance(bound, Bound) else spec.env(sizes)
            grid_n = launch_dims(spec.grid, env)[axis]
            block_n = launch_dims(spec.block, env)[axis]
            extent = evaluate(h_expr, env)
            if grid_n * block_n < extent and grid_n % k:
                shorter = "shorter" if axis else "narrower"
                return _no(ctx, f"at sizes {sizes} the grid's {grid_n} x {block_n} {what} stop "
                           f"short of {quoted(h)} = {extent} and {k} does not divide "
                           f"{grid_n}: a grid {k} times {shorter} would compute {what} the "
                           "kernel leaves alone", h.start)
    except Exception as e:  # a value the spec's sizes do not give: not proven
        return _no(ctx, f"the spec's sizes give the grid no value ({e})", h.start)
    return _yes(f"at every spec size the grid's {what} cover {quoted(h)} or {k} divides "
                f"grid.{ax}", h.start)


def _const_int(ctx: GuardContext, b: Binding) -> int | str:
    """The integer $B folds to without the launch (a literal, a ``#define``, a template
    argument), else why not: a value read from ``blockDim`` (the spec's block or the
    launches) changes when the launch edit divides the block, and the partition with it."""
    v, why, _, sources = constant_of(ctx, b)
    if not isinstance(v, int) or isinstance(v, bool):
        return f"{quoted(b)} is not a compile-time constant{': ' + why if why else ''}"
    how = block_dims(ctx)[2]
    if how in sources:
        return (f"{quoted(b)} = {v} reads the block's extent ({how}): the launch edit would "
                "change it, and the partition with it")
    return v


@predicate("loads_split", _metavar("$B"), ArgSpec("N", frozenset({"int", "hole"})),
           reads=("arguments", "declarations", "spec"))
def loads_split(ctx: GuardContext, b: Binding, n: Any) -> Verdict:
    """The partition $B (a compile-time constant: literal, ``#define``, a template argument
    the spec gives) splits into N loads per thread on whole warps: N >= 2 divides $B and $B /
    N is a multiple of 32. A block of $B / N threads then loads the partition's elements t +
    j * ($B / N), each once, a warp's 32 consecutive at every j, and a block sum by
    full-mask shuffles over its $B / N / 32 warps stays exact."""
    k = number_arg(ctx, n)
    if not isinstance(k, int) or isinstance(k, bool) or k < 2:
        return _unknown(ctx, f"loads_split: the loads per thread {describe_arg(n)} are not "
                        "a known integer >= 2")
    v = _const_int(ctx, b)
    if isinstance(v, str):
        return _no(ctx, v, b.start)
    if v % k:
        return _no(ctx, f"{k} does not divide {quoted(b)} = {v}: the threads would not load "
                   "the partition's elements once each", b.start)
    if (v // k) % 32:
        return _no(ctx, f"{quoted(b)} / {k} = {v // k} threads are not whole warps", b.start)
    return _yes(f"{quoted(b)} = {v} = {k} loads x {v // k} threads ({v // k // 32} warps)",
                b.start)


@predicate("block_times_loads", _metavar("$B"), _metavar("$K"),
           reads=("arguments", "declarations", "spec"), pass_only=True)
def block_times_loads(ctx: GuardContext, b: Binding, k: Binding) -> Verdict:
    """For simplifications: the block is one-dimensional and known exactly (spec or every
    launch), and $K of its x extent make the partition $B (both compile-time constants):
    block.x *= $K then launches one thread per element of the partition. Pass-only (the
    inverse checks ``whole_block_tree($B)`` before its launch edit divides the block)."""
    block = _flat_block(ctx, b)
    if isinstance(block, Verdict):
        return block
    x, how = block
    bv, kv = _const_int(ctx, b), _const_int(ctx, k)
    for v in (bv, kv):
        if isinstance(v, str):
            return _no(ctx, v, b.start)
    assert isinstance(bv, int) and isinstance(kv, int)
    if x * kv != bv:
        return _no(ctx, f"block.x = {x} ({how}): {kv} of it do not make {quoted(b)} = "
                   f"{bv}", b.start)
    return _yes(f"block.x = {x} ({how}), {kv} x {x} = {quoted(b)}", b.start)


def _flat_block(ctx: GuardContext, at: Binding) -> tuple[int, str] | Verdict:
    """(block.x, where it was read) of a one-dimensional block known exactly (the spec, or
    every launch), else the refusal."""
    dims, _, how = block_dims(ctx)
    if dims is None:
        return _no(ctx, f"the block is not known exactly ({how})", at.start)
    if dims[1] != 1 or dims[2] != 1:
        return _no(ctx, f"the block {list(dims)} is not one-dimensional ({how})", at.start)
    return dims[0], how


# A warp per segment (passes/block_warps.rule and its inverse): the partition of B elements
# keeps its one partial per segment, but a warp, not a block, sums a segment, W segments per
# block of 32 W threads. ``segment_lanes($B, V)`` is the segment's split over the lanes (32
# lanes, V-element vectors each: B a multiple of 32 V), ``segment_warps($B, ?s)`` names the
# block the segment had (B = 32 ?s threads), and ``block_of_warps($W)`` (for the
# simplification) says the launched block is the W warps.


@predicate("segment_lanes", _metavar("$B"), ArgSpec("V", frozenset({"int", "hole"})),
           reads=("arguments", "declarations", "spec"))
def segment_lanes(ctx: GuardContext, b: Binding, v: Any) -> Verdict:
    """The segment length $B (a compile-time constant: literal, ``#define``, a template
    argument the spec gives; not a value read from ``blockDim``) splits over a warp's 32
    lanes in whole V-element vectors: 32 V divides $B. Every lane then loads $B / 32
    elements, $B / (32 V) vectors, and the segment's start i * $B is a multiple of V
    elements (V-element vectors from an aligned buffer stay aligned)."""
    k = number_arg(ctx, v)
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        return _unknown(ctx, f"segment_lanes: the vector width {describe_arg(v)} is not a "
                        "known integer >= 1")
    n = _const_int(ctx, b)
    if isinstance(n, str):
        return _no(ctx, n, b.start)
    if n <= 0 or n % 32:
        return _no(ctx, f"{quoted(b)} = {n} is not a multiple of 32: a warp's 32 lanes would "
                   "not share the segment evenly", b.start)
    if n % (32 * k):
        return _no(ctx, f"{quoted(b)} = {n} is not a multiple of 32 lanes x {k}-element "
                   f"vectors ({32 * k}): a warp's lanes would not load the segment in whole "
                   "vectors", b.start)
    return _yes(f"{quoted(b)} = {n} = 32 lanes x {n // 32} elements ({n // (32 * k)} "
                f"vectors of {k})", b.start)


@predicate("segment_warps", _metavar("$B"), ArgSpec("S", frozenset({"int", "hole"})),
           reads=("arguments", "declarations", "spec"))
def segment_warps(ctx: GuardContext, b: Binding, s: Any) -> Verdict:
    """The segment length $B (a compile-time constant, not read from ``blockDim``) is S
    warps: $B = 32 S. The launch edits that turn a block of $B threads into one of 32 W
    (``block.x /= S``, ``block.x *= W``) and back divide exactly."""
    k = number_arg(ctx, s)
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        return _unknown(ctx, f"segment_warps: the warp count {describe_arg(s)} is not a "
                        "known integer >= 1")
    n = _const_int(ctx, b)
    if isinstance(n, str):
        return _no(ctx, n, b.start)
    if n != 32 * k:
        return _no(ctx, f"{quoted(b)} = {n} is not {k} warps ({32 * k} threads)", b.start)
    return _yes(f"{quoted(b)} = {n} = {k} warps", b.start)


@predicate("block_of_warps", _metavar("$W"), reads=("arguments", "declarations", "spec"),
           pass_only=True)
def block_of_warps(ctx: GuardContext, w: Binding) -> Verdict:
    """For simplifications: the block is one-dimensional and known exactly (spec or every
    launch), $W (a compile-time constant) warps: block.x = 32 $W. Every warp of the block
    then has a segment index of its own, blockIdx.x * $W + threadIdx.x / 32 (the inverse
    checks ``whole_block_tree`` before its launch edits make that block)."""
    block = _flat_block(ctx, w)
    if isinstance(block, Verdict):
        return block
    x, how = block
    k = _const_int(ctx, w)
    if isinstance(k, str):
        return _no(ctx, k, w.start)
    if x != 32 * k:
        return _no(ctx, f"block.x = {x} ({how}) is not {quoted(w)} = {k} warps", w.start)
    return _yes(f"block.x = {x} ({how}) = {quoted(w)} = {k} warps", w.start)
