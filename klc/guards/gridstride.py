"""Guard predicate for giving each thread several elements through a grid-stride loop
(skills/grid_stride.rule, the inverse of passes/grid_stride.rule): ``grid_additive``.

The skill turns a kernel's one-element block ``{ int i = blockIdx.x * B + threadIdx.x;
if (i < n) BODY }`` into ``for (int i = ...; i < n; i += B * gridDim.x) BODY`` and divides
the grid. Every element still runs BODY once, but a thread now runs it for several elements,
and the code around the block runs for fewer threads. That keeps the kernel's meaning only
when nothing the kernel leaves in memory depends on how elements are dealt to threads:

- BODY carries no value from one element to the next but sums: a local declared outside it
  is only updated as ``v += e`` (zero-started, read nowhere else in BODY); its memory updates
  into ``__shared__`` arrays are atomic adds; it reads no thread or block coordinate but
  through the element index;
- the code outside the block never names blockIdx or gridDim (no per-block output:
  ``partial[blockIdx.x] = s`` counts blocks) and writes global memory only by atomic adds;
- after the block, values flow from those sums only through additions: copies, ``+=``,
  ``__shfl*_sync`` of a sum, a ternary with a zero arm, a ``__shared__`` array; no condition
  reads a sum but ``v != 0`` (an add of zero changes nothing), and every global atomic add
  adds such a value (not a constant, not a thread count). A global add made by one thread
  (under a condition on the thread) adds a value that went through a ``__shared__`` array or
  a shuffle: the block's threads were combined first.

What no static check here sees: that the combination weighs every thread once (a correct
tree). A kernel whose tree drops threads was already wrong before the change; the gate's
verification compares the results.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from klc.analysis.tree import binding_node, names_in, quoted, snippet, text_of
from klc.analysis.writes import helper_call_unsafe
from klc.guards.lanes import _ZERO, _not_zero_at
from klc.guards.launch import top_level_statement
from klc.guards.registry import (
    ArgSpec,
    GuardContext,
    Verdict,
    _kernel_region,
    _no,
    _region_arg,
    _yes,
    predicate,
)
from klc.guards.writes import _STORING_CALL
from klc.match import Binding

_COORDS = ("blockIdx", "gridDim")
_ABS_CALLS = frozenset({"fabsf", "fabs"})
_INT_LIMIT = re.compile(r"^[(\s]*-?\s*(?:INT|UINT|LLONG)_M(?:IN|AX)|^[(\s]*0x", re.I)
_FLOAT_BITS = frozenset({"__float_as_int", "__float_as_uint"})
_ALLOWED_CALLS = re.compile(r"^(__syncthreads|__syncwarp|__shfl(_down|_up|_xor)?_sync|atomicAdd)$")


def _walk(node: Node):  # type: ignore[no-untyped-def]
    yield node
    for c in node.named_children:
        yield from _walk(c)


def _shared_arrays(body: Node, src: bytes) -> set[str]:
    out = set()
    for n in _walk(body):
        if n.type == "declaration" and "__shared__" in text_of(src, n):
            for d in n.children_by_field_name("declarator"):
                ids = names_in(d, src)
                if ids:
                    out.add(ids[0][0])
    return out


def _callee(node: Node, src: bytes) -> str:
    fn = node.child_by_field_name("function")
    return text_of(src, fn).strip() if fn is not None else ""


def _base(node: Node, src: bytes) -> str:
    """The variable a store target or an atomic's address is based on (``s`` for ``s[i]``,
    ``&s[i]``, ``s + i``; ``v`` for ``v``)."""
    while node.type in ("parenthesized_expression", "pointer_expression", "cast_expression",
                        "subscript_expression", "binary_expression", "field_expression"):
        nxt = (node.child_by_field_name("argument") or node.child_by_field_name("value")
               or node.child_by_field_name("left"))
        if nxt is None:
            break
        node = nxt
    return text_of(src, node).strip() if node.type == "identifier" else ""


def _names(node: Node, src: bytes) -> set[str]:
    return {name for name, _ in names_in(node, src)}


@dataclass(frozen=True)
class Fold:
    """The operator that combines what the threads carry: ``+`` (sums), or a function of two
    values (``fmaxf``, ``min``, ...; klc/guards/gridfold.py). ``calls``: the spellings that
    combine two values with it; ``atomics``: the global atomics that combine with it;
    ``identity``: whether a literal's text is the operator's identity (``0`` for sums)."""

    name: str
    calls: frozenset[str]
    atomics: frozenset[str]
    identity: Callable[[str], bool]
    noun: str = "sum"  # what a value folded from elements is called in the reasons
    verb: str = "add"  # what the atomic does

    @property
    def is_sum(self) -> bool:
        return self.name == "+"


SUM = Fold("+", frozenset(), frozenset({"atomicAdd"}), lambda t: bool(_ZERO.match(t)))


class _Check:
    """One kernel's walk: the sums BODY carries, then the code after the block. With a
    ``fold`` other than ``SUM``, the values the threads carry are combined by that operator
    instead: "sum" below then means a value folded from elements with it."""

    def __init__(self, ctx: GuardContext, body: Node, anchor: Node, stmts: list[Node],
                 once: str | None, fold: Fold = SUM) -> None:
        # anchor: the braced block, or the element's if (a run of top-level statements:
        # stmts[0] declares the index, stmts[-1] is the if, declarations between them)
        self.ctx, self.src, self.body, self.anchor = ctx, ctx.unit.source, body, anchor
        self.stmts, self.once, self.fold = stmts, once, fold
        self.nonneg = False  # a fold's values are known >= 0 (set by the element's code)
        self.shared = _shared_arrays(body, self.src)
        self.defined = {f.name for f in ctx.unit.functions}  # helpers that may store
        self.sums: set[str] = set()  # locals and shared arrays that hold sums of elements
        self.combined: set[str] = set()  # sums that went through shared memory or a shuffle

    def no(self, why: str, node: Node) -> Verdict:
        return _no(self.ctx, f"{why}: `{snippet(text_of(self.src, node))}` "
                   f"({self.ctx.unit.where(node.start_byte)})", node.start_byte)

    # -- the element block -----------------------------------------------------------

    def element_body(self) -> Verdict | None:
        stmts = self.stmts
        if len(stmts) < 2 or stmts[0].type != "declaration" or \
                stmts[-1].type != "if_statement" or \
                any(s.type != "declaration" for s in stmts[1:-1]):
            return self.no("the element's code is not an index declaration, declarations and "
                           "one if", self.anchor)
        decl = stmts[0].child_by_field_name("declarator") or stmts[0]
        index = {name for name, _ in names_in(decl, self.src)[:1]}
        for mid in stmts[1:-1]:
            if _names(mid, self.src) & index:
                return self.no("a declaration between the index and its if reads the index",
                               mid)
        body = stmts[-1].child_by_field_name("consequence")
        if body is None or stmts[-1].child_by_field_name("alternative") is not None:
            return self.no("the element's if has an else", stmts[-1])
        declared = {name for n in _walk(body) if n.type == "declaration"
                    for d in n.children_by_field_name("declarator")
                    for name, _ in names_in(d, self.src)[:1]}
        for n in _walk(body):
            if n.type == "identifier" and text_of(self.src, n) in (*_COORDS, "threadIdx"):
                return self.no("the element's code reads the thread's coordinates, not only "
                               "the element's index", n)
            if n.type in ("return_statement", "break_statement", "continue_statement",
                          "goto_statement"):
                return self.no("the element's code jumps", n)
            if n.type == "call_expression":
                callee = _callee(n, self.src)
                args = n.child_by_field_name("arguments")
                first = args.named_children[0] if args is not None and args.named_children \
                    else None
                if callee == "atomicAdd" and first is not None and \
                        _base(first, self.src) in self.shared:
                    self.sums.add(_base(first, self.src))
            if n.type == "update_expression":
                target = _base(n.named_children[0], self.src) if n.named_children else ""
                if target in index:
                    return self.no("the element's code moves the element's index", n)
                if target and target not in declared:
                    return self.no("the element's code counts in a variable it does not own", n)
            if n.type != "assignment_expression":
                continue
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            if left is None or right is None:
                continue
            target = _base(left, self.src)
            op = text_of(self.src, n.child_by_field_name("operator") or n).strip()
            if left.type == "identifier" and target in index:
                return self.no("the element's code moves the element's index", n)
            if target in self.shared:
                return self.no("the element's code stores into shared memory (a thread's "
                               "slot keeps only its last element)", n)
            if left.type != "identifier" or target in declared:
                continue  # a store into global memory, once per element; or its own local
            if op == "=" and target == self.once and target not in _names(right, self.src):
                self.sums.add(target)  # run once from zero: the rewrite makes it a +=
                continue
            if op != "+=" or target in _names(right, self.src) or not self.fold.is_sum:
                return self.no("the element's code carries a value from one element to the "
                               f"next that is not a {self.fold.noun}", n)
            self.sums.add(target)
        if not self.fold.is_sum:
            return self.fold_start(body)
        for name in list(self.sums - self.shared):
            for n in _walk(body):
                if n.type == "identifier" and text_of(self.src, n) == name:
                    parent = n.parent
                    if parent is None or parent.type != "assignment_expression" or \
                            parent.child_by_field_name("left") != n:
                        return self.no(f"the element's code reads the running sum `{name}`", n)
            why = _not_zero_at(self.ctx, name, self.anchor.start_byte, self.anchor.end_byte)
            if why:
                return self.no(f"the sum `{name}` does not start at zero before the block "
                               f"({why})", self.anchor)
        return None

    def fold_start(self, body: Node) -> Verdict | None:
        """A fold's element code: its one value, the ``once`` local, is assigned once and
        declared among the anchor's statements (its start, the identity, is for
        ``fold_identity`` to judge); the value is known >= 0 when the element's term is an
        absolute value and the start a zero (or, for a minimum, a float infinity)."""
        if self.sums != ({self.once} if self.once else set()):
            return self.no(f"the element's code carries no single {self.fold.noun} of elements",
                           body)
        start = None
        for s in self.stmts[1:-1]:
            for d in s.children_by_field_name("declarator"):
                v = d.child_by_field_name("value")
                if names_in(d, self.src)[:1] and names_in(d, self.src)[0][0] == self.once \
                        and v is not None:
                    start = text_of(self.src, v).strip()
        if start is None:
            return self.no(f"`{self.once}` is not declared with its start among the element's "
                           "statements", self.anchor)
        terms = [n.child_by_field_name("right") for n in _walk(body)
                 if n.type == "assignment_expression"
                 and text_of(self.src, n.child_by_field_name("left") or n).strip() == self.once]
        inf_min = self.fold.name == "min" and self.fold.identity(start) and \
            not _INT_LIMIT.match(start)
        self.nonneg = (bool(_ZERO.match(start)) or inf_min) and bool(terms) and all(
            t is not None and t.type == "call_expression"
            and _callee(t, self.src) in _ABS_CALLS for t in terms)
        return None

    # -- everything outside the block ------------------------------------------------

    def outside(self) -> Verdict | None:
        for stmt in self.body.named_children:
            if stmt.start_byte in (self.anchor.start_byte, self.stmts[0].start_byte):
                continue  # the element's own statements
            after = stmt.start_byte >= self.anchor.end_byte
            for n in _walk(stmt):
                found = self.outside_node(n, after)
                if found is not None:
                    return found
        return None

    def outside_node(self, n: Node, after: bool) -> Verdict | None:
        t = n.type
        if t == "identifier" and text_of(self.src, n) in _COORDS:
            return self.no("code outside the element block depends on the block or the grid "
                           "(fewer blocks run it)", n)
        if t in ("return_statement", "goto_statement"):
            return self.no("the kernel leaves early outside the element block", n)
        if t == "call_expression":
            callee = _callee(n, self.src)
            if callee in self.fold.atomics:
                return self.atomic(n, after)
            name = callee.split("<")[0].strip()
            if (not _ALLOWED_CALLS.match(callee) or callee.startswith("atomic")) and (
                    _STORING_CALL.fullmatch(name) or (name in self.defined
                    and helper_call_unsafe(self.ctx, n, self.body.start_byte,
                                           self.body.end_byte))):
                return self.no(f"code outside the element block calls `{callee}`, which may "
                               "store to memory", n)
            if callee.startswith("__shfl") and after:
                args = n.child_by_field_name("arguments")
                if args is not None and len(args.named_children) > 1 and \
                        self.reads_sum(args.named_children[1]):
                    self.combined.add("__shfl")
        if t in ("assignment_expression", "init_declarator", "update_expression"):
            return self.assignment(n, after)
        if t in ("if_statement", "while_statement", "for_statement", "conditional_expression",
                 "do_statement") and after:
            cond = n.child_by_field_name("condition")
            if cond is not None and not self.zero_tests_only(cond):
                return self.no("a condition after the element block reads a sum", cond)
        return None

    def zero_tests_only(self, cond: Node) -> bool:
        """Every sum the condition reads is read in a ``sum != 0`` test (skipping an add of
        zero changes no sum); a fold's values are read by no condition."""
        if not self.fold.is_sum:
            return not self.reads_sum(cond)
        tests = [(b.start_byte, b.end_byte) for b in _walk(cond)
                 if b.type == "binary_expression"
                 and text_of(self.src, b.child_by_field_name("operator") or b).strip() == "!="
                 and any(side is not None and side.type == "number_literal"
                         and _ZERO.match(text_of(self.src, side))
                         for side in (b.child_by_field_name("left"),
                                      b.child_by_field_name("right")))]
        return all(any(a <= node.start_byte and node.end_byte <= b for a, b in tests)
                   for name, node in names_in(cond, self.src) if name in self.sums)

    def identity(self, text: str) -> bool:
        """The literal is the fold's identity (zero for a sum; zero too for a maximum of
        values known to be >= 0)."""
        return self.fold.identity(text) or (self.nonneg and self.fold.name == "max"
                                            and bool(_ZERO.match(text)))

    def reads_sum(self, node: Node) -> bool:
        return bool(_names(node, self.src) & self.sums)

    def atomic(self, call: Node, after: bool) -> Verdict | None:
        args = call.child_by_field_name("arguments")
        if args is None or len(args.named_children) != 2:
            return self.no(f"an atomic {self.fold.verb} without two arguments", call)
        addr, value = args.named_children
        base = _base(addr, self.src)
        if base in self.shared:
            if after and self.reads_sum(value):
                self.sums.add(base)
            return None if self.additive(value) or not self.reads_sum(value) else \
                self.no(f"an atomic {self.fold.verb} of a {self.fold.noun} that is not a "
                        f"{self.fold.noun}", call)
        if not after:
            return self.no(f"a global atomic {self.fold.verb} before the element block", call)
        if not self.reads_sum(value) or not self.additive(value):
            return self.no(f"a global atomic {self.fold.verb} of a value that is not a "
                           f"{self.fold.noun} of the elements (it would count threads or "
                           "blocks)", call)
        if self.under_thread_condition(call) and not (
                self.combined & (_names(value, self.src) | {"__shfl"})
                or self.combined & self.shared):
            return self.no("one thread adds its own sum: the block's threads were not "
                           "combined first", call)
        return None

    def under_thread_condition(self, node: Node) -> bool:
        """Whether ``node`` runs under an ``if`` (any: a condition on the thread, or on a
        value that differs between threads)."""
        p = node.parent
        while p is not None and p != self.body:
            if p.type in ("if_statement", "conditional_expression"):
                return True
            p = p.parent
        return False

    def assignment(self, n: Node, after: bool) -> Verdict | None:
        if n.type == "update_expression":
            target = _base(n.named_children[0], self.src) if n.named_children else ""
            if target in self.sums:
                return self.no("a sum is counted up or down", n)
            if target in self.shared or not target:
                return self.no("an update of memory outside the element block", n)
            return None
        if n.type == "init_declarator":
            left, right = n.child_by_field_name("declarator"), n.child_by_field_name("value")
        else:
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if left is None or right is None:
            return None
        target = _base(left, self.src) if n.type != "init_declarator" else \
            (names_in(left, self.src)[:1] or [("", left)])[0][0]
        if n.type != "init_declarator" and left.type != "identifier" and \
                target not in self.shared:
            return self.no("a store into global memory outside the element block", n)
        if not after:
            return None
        sum_in = self.reads_sum(right)
        if target in self.sums and not (sum_in and self.additive(right)) and \
                not self.identity(text_of(self.src, right)):
            return self.no(f"the {self.fold.noun} `{target}` is given a value that is not a "
                           f"{self.fold.noun}", n)
        if sum_in:
            if not self.additive(right):
                return self.no(f"a {self.fold.noun} goes into a value that is not a "
                               f"{self.fold.noun}", n)
            self.sums.add(target)
            if target in self.shared or _names(right, self.src) & self.shared or \
                    "__shfl" in text_of(self.src, right) or _names(right, self.src) & self.combined:
                self.combined.add(target)
        return None

    def additive(self, node: Node) -> bool:
        """``node`` adds sums and zeros only: sums (locals, cells of shared arrays that hold
        sums), zeros, ``+``, casts, parentheses, a shuffle's value, a ternary between such
        values on a condition that reads no sum."""
        t = node.type
        if t == "identifier":
            name = text_of(self.src, node)
            return name in self.sums or (not self.fold.is_sum and self.identity(name))
        if t == "number_literal" or (not self.fold.is_sum and t == "unary_expression"):
            return self.identity(text_of(self.src, node))
        if t in ("parenthesized_expression", "cast_expression"):
            inner = node.child_by_field_name("value") or (node.named_children[-1]
                                                           if node.named_children else None)
            return inner is not None and self.additive(inner)
        if t == "subscript_expression":
            return _base(node, self.src) in self.sums
        if t == "binary_expression":
            if text_of(self.src, node.child_by_field_name("operator") or node).strip() != "+":
                return False
            return all(self.additive(node.child_by_field_name(s)) for s in ("left", "right")
                       if node.child_by_field_name(s) is not None)
        if t == "conditional_expression":
            cond = node.child_by_field_name("condition")
            if cond is not None and self.reads_sum(cond):
                return False
            return all(self.additive(node.child_by_field_name(s))
                       for s in ("consequence", "alternative")
                       if node.child_by_field_name(s) is not None)
        if t == "call_expression" and _callee(node, self.src).startswith("__shfl"):
            args = node.child_by_field_name("arguments")
            return args is not None and len(args.named_children) > 1 and \
                self.additive(args.named_children[1])
        if t == "call_expression" and _callee(node, self.src) in self.fold.calls:
            args = node.child_by_field_name("arguments")
            return args is not None and len(args.named_children) == 2 and \
                all(self.additive(a) for a in args.named_children)
        if t == "call_expression" and _callee(node, self.src) in _FLOAT_BITS and self.nonneg:
            # the bits of a float >= 0 order as the float does (an integer atomicMax of them)
            args = node.child_by_field_name("arguments")
            return args is not None and len(args.named_children) == 1 and \
                self.additive(args.named_children[0])
        return False


@predicate("grid_additive", _region_arg(), ArgSpec("$ACC", frozenset({"metavar"}),
                                                   optional=True),
           reads=("position", "arguments"))
def grid_additive(ctx: GuardContext, region: str = "anchor", acc: Binding | None = None
                  ) -> Verdict:
    """REGION (default ``anchor``) is a kernel's one element per thread at the top level of
    its body: a braced block ``{ int i = ...; if (i < n) BODY }``, or a run of statements
    ``int i = ...; <declarations>; if (i < n) BODY``; and the kernel's memory effects do not
    depend on how elements are dealt to threads and blocks (module doc): BODY carries only
    zero-started sums from one element to the next; the code around it never names blockIdx
    or gridDim, writes global memory only by atomic adds of sums, and passes the sums on
    only through additions. A grid-stride loop over the element, with fewer blocks, then
    leaves the same results (sums reassociated). With $ACC, BODY's plain ``$ACC = e`` (run
    at most once, from zero) counts as the sum the rewrite makes of it (``$ACC += e``)."""
    return judge(ctx, region, acc, SUM)


def judge(ctx: GuardContext, region: str, acc: Binding | None, fold: Fold) -> Verdict:
    """``grid_additive`` for the operator ``fold`` (``SUM``, or one of klc/guards/gridfold.py):
    the kernel's results do not depend on how elements are dealt to threads and blocks when
    every value they carry is combined by ``fold`` alone."""
    span = _kernel_region(ctx, region)
    if isinstance(span, Verdict):
        return span
    start, end, label, fn = span
    if re.search(rb"\basm\b|__asm__", ctx.unit.source[fn.body_start:fn.body_end]):
        return _no(ctx, f"`{fn.name}` holds inline asm", start)
    top = top_level_statement(ctx.unit, fn, start)
    if top is None:
        return _no(ctx, f"{label} is not at the top level of `{fn.name}`'s body", start)
    first, body = top
    if first.type == "compound_statement" and first.end_byte >= end:
        anchor, stmts = first, [c for c in first.named_children if c.type != "comment"]
    else:
        stmts = [c for c in body.named_children if c.type != "comment"
                 and start <= c.start_byte and c.end_byte <= end]
        if not stmts:
            return _no(ctx, f"{label} holds no whole statement of `{fn.name}`'s body", start)
        anchor = stmts[-1]
    once = None
    if acc is not None:
        node = binding_node(acc)
        if node is None or node.type != "identifier":
            return _no(ctx, f"{quoted(acc)} is not a plain name", acc.start)
        once = acc.text.strip()
    check = _Check(ctx, body, anchor, stmts, once, fold)
    found = check.element_body() or check.outside()
    if found is not None:
        return found
    if not fold.is_sum:
        return _yes(f"the {fold.noun} {', '.join(sorted(check.sums))} reaches global memory "
                    f"through {fold.name} and {' or '.join(sorted(fold.atomics))} alone; "
                    "nothing outside it names blockIdx or gridDim", start)
    what = (f"the sums {', '.join(sorted(check.sums))} reach global memory by atomic adds"
            if check.sums else "the element's code is all the kernel leaves in memory")
    return _yes(f"{what}; nothing outside it names blockIdx or gridDim", start)
