"""Reading one kernel for ``klc spec init``: its locals, loops, guards and buffer accesses as
spec expressions (``Kernel``), the thread indices and the bounds their guards give
(``thread_vars``), and the launch geometry those suggest (``guess_geometry``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tree_sitter import Node

from klc.cuda.macros import definitions_of
from klc.cuda.model import Function, Unit
from klc.errors import KlcError
from klc.spec_draft.exprs import evaluate_or_none, tidy

DEFAULT_BLOCK = 256
_BUILTINS = {"blockIdx", "threadIdx", "blockDim", "gridDim"}
_CMP = {"<", "<=", ">", ">="}


class DraftError(KlcError):
    """A kernel ``klc spec init`` cannot draft a spec for (the message says why)."""



class Unknown(Exception):
    """An expression the drafter cannot turn into a spec expression."""


# the step of a loop counting down: i--, --i, i -= k, i >>= k, i /= k
_DOWN = re.compile(r"(--\s*\w+|\w+\s*--|\w+\s*(-|>>|/)=\s*.+)")


_REGIONS = ("compound_statement", "for_statement", "while_statement", "do_statement",
            "if_statement", "switch_statement", "conditional_expression", "case_statement")


def _scope(node: Node) -> Node | None:
    """What runs a write whenever it runs: the block it is a statement of (a declaration's
    name is visible there), or the statement or expression that runs it under a condition
    (``if (c) x = 1;``, ``c ? x = 1 : 0``, ``c && (x = 1)``) or in a loop."""
    n = node.parent
    while n is not None and n.type not in _REGIONS and not (
            n.type == "binary_expression" and _op(n) in ("&&", "||")):
        n = n.parent
    return n


def _encloses(scope: Node | None, at: int) -> bool:
    return scope is not None and scope.start_byte <= at < scope.end_byte


def _op(node: Node) -> str:
    op = node.child_by_field_name("operator")
    return op.type if op is not None else ""


def _strip(node: Node) -> Node:
    while node.type in ("parenthesized_expression", "cast_expression"):
        inner = node.named_children[-1] if node.type == "cast_expression" else \
            node.named_children[0]
        node = inner
    return node


@dataclass
class Access:
    buffer: str
    index: str  # spec expression, free variables still in it
    write: bool
    read: bool
    node: Node


class Kernel:
    """One function's locals, loops, guards and buffer accesses, as spec expressions."""

    def __init__(self, unit: Unit, fn: Function):
        self.unit = unit
        self.fn = fn
        self.params = {p.name: p for p in fn.params}
        self.pointers = {p.name for p in fn.params if p.pointer and not p.array}
        self.defs: dict[str, list[Node]] = {}
        self.assigned: set[str] = set()
        self.loops: dict[str, tuple[Node | None, Node, str]] = {}  # var: (init, bound, op)
        self.free: dict[str, tuple[str, str]] = {}  # free variable: (min expr, max expr)
        self.data_index: dict[str, str] = {}  # free var standing for a buffer's values: buffer
        self.accesses: list[Access] = []
        self.keep: set[str] = set()  # guarded thread indices: free variables, not expanded
        # every write of a local: (its node, the value a plain one gives or None), in order
        self.writes: dict[str, list[tuple[Node, Node | None]]] = {}
        self.macros = definitions_of(unit.source)
        self._collect(fn.node)

    def text(self, node: Node) -> str:
        return self.unit.text(node)

    # -- walking --------------------------------------------------------------------------

    def walk(self, node: Node) -> Iterator[Node]:
        stack = [node]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(n.named_children))

    def _collect(self, root: Node) -> None:
        body = root.child_by_field_name("body")
        if body is None:
            raise DraftError(f"{self.unit.where(self.fn.start)}: {self.fn.name} has no body")
        whiles = []
        for n in self.walk(body):
            if n.type == "init_declarator":
                name = n.child_by_field_name("declarator")
                value = n.child_by_field_name("value")
                while name is not None and name.type in ("pointer_declarator",
                                                         "reference_declarator"):
                    name = name.child_by_field_name("declarator")
                if name is not None and name.type == "identifier" and value is not None:
                    self.defs.setdefault(self.text(name), []).append(value)
                    self.writes.setdefault(self.text(name), []).append((n, value))
            elif n.type == "declaration":  # "int x;": a new variable, no value yet
                for d in n.children_by_field_name("declarator"):
                    if d.type == "identifier":
                        self.writes.setdefault(self.text(d), []).append((n, None))
            elif n.type in ("assignment_expression", "update_expression"):
                target = n.child_by_field_name("left") or n.child_by_field_name("argument")
                if target is not None and target.type == "identifier":
                    self.assigned.add(self.text(target))
                    plain = n.type == "assignment_expression" and _op(n) == "="
                    self.writes.setdefault(self.text(target), []).append(
                        (n, n.child_by_field_name("right") if plain else None))
            elif n.type == "for_statement":
                self._loop(n)
            elif n.type == "while_statement":
                whiles.append(n)
        for n in whiles:
            self._while(n)

    def _loop(self, n: Node) -> None:
        init = n.child_by_field_name("initializer")
        cond = n.child_by_field_name("condition")
        if init is None or cond is None:
            return
        var, start = None, None
        for d in self.walk(init):
            if d.type == "init_declarator":
                v = d.child_by_field_name("declarator")
                var, start = (self.text(v) if v is not None else None), \
                    d.child_by_field_name("value")
                break
            if d.type == "assignment_expression":
                left = d.child_by_field_name("left")
                var, start = self.text(left) if left is not None else None, \
                    d.child_by_field_name("right")
                break
        cond = _strip(cond)
        if var is None or cond.type != "binary_expression" or _op(cond) not in _CMP:
            return
        left = _strip(cond.child_by_field_name("left"))
        if left.type != "identifier" or self.text(left) != var:
            return
        if _op(cond) in (">", ">="):  # a loop counting down: from its start to the bound
            step = n.child_by_field_name("update")
            if step is None or not _DOWN.fullmatch(" ".join(self.text(step).split()),
                                                   ) or var not in self.text(step):
                return
        self.loops[var] = (start, cond.child_by_field_name("right"), _op(cond))

    def _while(self, n: Node) -> None:
        """``while (v < bound) { ... v += step; }`` (a grid-stride loop): ``v`` ranges from
        the value it enters with to the bound, when the loop's body only ever adds to it and
        nothing else writes it but its one definition before the loop."""
        cond = n.child_by_field_name("condition")
        body = n.child_by_field_name("body")
        if cond is not None and cond.type == "condition_clause":
            cond = cond.child_by_field_name("value")
        if cond is None or body is None:
            return
        cond = _strip(cond)
        if cond.type != "binary_expression" or _op(cond) not in ("<", "<="):
            return
        left = _strip(cond.child_by_field_name("left"))
        var = self.text(left)
        writes = self.writes.get(var, [])
        if left.type != "identifier" or var in self.loops or not writes:
            return
        first, value = writes[0]
        if value is None or first.type != "init_declarator" or first.start_byte > n.start_byte:
            return
        for w, _ in writes[1:]:
            inside = body.start_byte <= w.start_byte < body.end_byte
            step = " ".join(self.text(w).split())
            if not inside or not re.fullmatch(rf"(\+\+{var}|{var}\+\+|{var} \+= [^-].*)",
                                              step):
                return
        self.loops[var] = (value, cond.child_by_field_name("right"), _op(cond))

    # -- expressions ----------------------------------------------------------------------

    def expr(self, node: Node, depth: int = 0) -> str:
        """A C integer expression as a spec expression: locals defined once are replaced by
        their definition, loop and thread variables stay as free variables."""
        if depth > 40:
            raise Unknown("too deep")
        node = _strip(node)
        t = node.type
        if t == "number_literal":
            txt = self.text(node).rstrip("uUlLfF")
            if not re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+(\.\d*)?([eE][-+]?\d+)?)", txt):
                raise Unknown(txt)
            return f"({txt})" if txt.startswith("-") else txt
        if t == "identifier":
            return self.name(self.text(node), depth, node.start_byte)
        if t == "field_expression":
            arg = node.child_by_field_name("argument")
            fld = node.child_by_field_name("field")
            if arg is not None and fld is not None and self.text(arg) in _BUILTINS:
                return f"_{self.text(arg)}_{self.text(fld)}"
            raise Unknown(self.text(node))
        if t == "binary_expression":
            op = _op(node)
            a = self.expr(node.child_by_field_name("left"), depth + 1)
            b = self.expr(node.child_by_field_name("right"), depth + 1)
            if op == "/":
                op = "//"
            if op not in ("+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^"):
                raise Unknown(op)
            return f"({a} {op} {b})"
        if t == "unary_expression" and _op(node) in ("-", "+"):
            return f"({_op(node)}{self.expr(node.named_children[0], depth + 1)})"
        if t == "subscript_expression":
            base = _strip(node.child_by_field_name("argument"))
            resolved = self.pointer_base(base)
            if resolved is not None:
                buf = resolved[0]
                var = f"_v_{buf}"
                self.data_index[var] = buf
                return var
            raise Unknown(self.text(node))
        raise Unknown(self.text(node))

    def name(self, name: str, depth: int, at: int | None = None) -> str:
        """A name's spec expression where it is read (``at``): a parameter, a loop or thread
        variable, a local's definition that reaches there (``reaching``), or a constant
        ``#define``."""
        if name in self.params or name in self.loops or name in self.keep:
            return name
        defs = self.defs.get(name, [])
        if len(defs) == 1 and name not in self.assigned:
            return f"({self.expr(defs[0], depth + 1)})"
        value = self.reaching(name, at) if at is not None else None
        if value is not None:
            return f"({self.expr(value, depth + 1)})"
        if name not in self.writes:
            constant = self.constant_macro(name)
            if constant is not None:
                return constant
        raise Unknown(name)

    def reaching(self, name: str, at: int) -> Node | None:
        """The value of the one write of a local that reaches a read of it at ``at``: the
        last write before it, a declaration in a block that holds the read or a plain
        assignment in such a block (so it runs whenever the read does), with no write of it
        after the read in a loop around the read (which would reach the read on the next
        trip). None where that is not so (a write under a condition, a compound one)."""
        writes = self.writes.get(name, [])
        shadowed = [(w, v) for w, v in writes if w.start_byte < at
                    and (w.type not in ("init_declarator", "declaration")
                         or _encloses(_scope(w), at))]
        if not shadowed:
            return None
        last, value = shadowed[-1]
        if value is None or not _encloses(_scope(last), at):
            return None
        n = self.unit.tree.root_node.descendant_for_byte_range(at, at)
        while n is not None and n != self.fn.node:
            if n.type in ("for_statement", "while_statement", "do_statement") and any(
                    n.start_byte <= w.start_byte < n.end_byte and w.start_byte > at
                    for w, _ in writes):
                return None
            n = n.parent
        return value

    def constant_macro(self, name: str, depth: int = 0) -> str | None:
        """An object-like ``#define`` of the file whose value is an integer constant (``#define
        SEGM 4``, ``#define N (1 << 10)``, through other such macros), as that number."""
        macro = self.macros.get(name)
        if depth > 20 or macro is None or macro[0] is not None or not macro[1]:
            return None
        text = macro[1]
        for word in set(re.findall(r"[A-Za-z_]\w*", text)):
            inner = self.constant_macro(word, depth + 1)
            if inner is None:
                return None
            text = re.sub(rf"\b{word}\b", inner, text)
        text = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", text).replace("/", "//")
        value = evaluate_or_none(text, {}) if re.fullmatch(r"[\d\s()+\-*/%<>&|^xXa-fA-F]+",
                                                           text) else None
        return str(value) if value is not None and value >= 0 else None

    def pointer_base(self, node: Node) -> tuple[str, str] | None:
        """(buffer parameter, offset expression) for ``p``, ``q`` where ``q = p + off``
        (or ``&p[off]``), else None."""
        node = _strip(node)
        if node.type != "identifier":
            return None
        name = self.text(node)
        if name in self.pointers:
            return name, "0"
        defs = self.defs.get(name, [])
        if len(defs) != 1 or name in self.assigned:
            return None
        value = _strip(defs[0])
        if value.type == "binary_expression" and _op(value) == "+":
            left = self.pointer_base(value.child_by_field_name("left"))
            if left is not None:
                return left[0], f"({left[1]} + {self.expr(value.child_by_field_name('right'))})"
        if value.type == "pointer_expression" and _op(value) == "&":
            inner = _strip(value.named_children[0])
            if inner.type == "subscript_expression":
                base = self.pointer_base(inner.child_by_field_name("argument"))
                idx = inner.child_by_field_name("indices")
                if base is not None and idx is not None and idx.named_children:
                    return base[0], f"({base[1]} + {self.expr(idx.named_children[0])})"
        return self.pointer_base(value) if value.type == "identifier" else None

    # -- accesses -------------------------------------------------------------------------

    def collect_accesses(self) -> list[str]:
        """Every subscript of a buffer; returns what could not be read (for the TODO)."""
        problems = []
        body = self.fn.node.child_by_field_name("body")
        for n in self.walk(body):
            if n.type in ("call_expression", "pointer_expression"):
                self._address_access(n)
                continue
            if n.type != "subscript_expression":
                continue
            try:
                base = self.pointer_base(n.child_by_field_name("argument"))
            except Unknown as e:
                problems.append(f"{self.unit.where(n.start_byte)}: the pointer "
                                f"{self.text(n.child_by_field_name('argument'))} is an offset "
                                f"klc cannot read ({e})")
                continue
            if base is None:
                continue
            buf, off = base
            idx = n.child_by_field_name("indices")
            if idx is None or not idx.named_children:
                continue
            write, read = self._use(n)
            try:
                index = f"({off} + {self.expr(idx.named_children[0])})"
            except Unknown as e:
                problems.append(f"{self.unit.where(n.start_byte)}: the index of {buf} "
                                f"({self.text(idx.named_children[0])}) uses {e}")
                continue
            self.accesses.append(Access(buf, index, write, read, n))
        return problems

    def _address_access(self, n: Node) -> None:
        """A buffer reached without a subscript: ``*p`` (or ``*(p + i)``), and ``p`` (or
        ``p + i``) as the address an atomic updates (``atomicAdd(c, v)``): the element at
        that offset, read and written as an atomic does, or as the dereference is used."""
        if n.type == "call_expression":
            fn, args = n.child_by_field_name("function"), n.child_by_field_name("arguments")
            if fn is None or args is None or not args.named_children or \
                    not re.fullmatch(r"atomic[A-Z]\w*", self.text(fn)):
                return
            target, use = args.named_children[0], (True, True)
        elif _op(n) == "*" and n.named_children:
            target, use = n.named_children[0], self._use(n)
        else:
            return
        target = _strip(target)
        try:
            if target.type == "binary_expression" and _op(target) == "+":
                base = self.pointer_base(target.child_by_field_name("left"))
                off = self.expr(target.child_by_field_name("right")) if base else "0"
            else:
                base, off = self.pointer_base(target), "0"
        except Unknown:
            return  # (an offset it cannot read: the buffer's other accesses decide)
        if base is not None:
            self.accesses.append(Access(base[0], f"({base[1]} + {off})", *use, n))

    def _use(self, n: Node) -> tuple[bool, bool]:
        """(written, read) for one subscript node."""
        parent = n.parent
        while parent is not None and parent.type == "parenthesized_expression":
            n, parent = parent, parent.parent
        if parent is None:
            return False, True
        if parent.type == "assignment_expression" and parent.child_by_field_name("left") == n:
            return True, _op(parent) != "="
        if parent.type == "update_expression":
            return True, True
        if parent.type == "pointer_expression" and _op(parent) == "&":
            return True, True  # an address taken (an atomic's, or any call's): assume both
        return False, True


# --------------------------------------------------------------------------------------
# Ranges and guards


def read_guards(k: Kernel) -> dict[str, tuple[str, str]]:
    """Bounds on variables from the kernel's conditions: ``if (i < n)``, ``if (i >= n)
    return;``, ``i < n ? ... : ...``, joined with ``&&``; var -> (op, bound expr). A bound
    holds for every access of the variable only where it is its one bound: a variable that
    two conditions bound differently (``if (i < n - 32) s[k] = in[i + 32];`` then ``if (i >=
    n - 4) return;``) keeps none, so that no access is drafted under another's guard."""
    out: dict[str, tuple[str, str]] = {}
    seen: dict[str, set[tuple[str, str]]] = {}
    body = k.fn.node.child_by_field_name("body")

    def conjuncts(node: Node) -> Iterator[Node]:
        node = _strip(node)
        if node.type == "binary_expression" and _op(node) == "&&":
            yield from conjuncts(node.child_by_field_name("left"))
            yield from conjuncts(node.child_by_field_name("right"))
        else:
            yield node

    def record(cmp: Node, negate: bool) -> None:
        if cmp.type != "binary_expression" or _op(cmp) not in _CMP:
            return
        left, right, op = _strip(cmp.child_by_field_name("left")), \
            _strip(cmp.child_by_field_name("right")), _op(cmp)
        flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
        if left.type != "identifier":
            left, right, op = right, left, flip[op]
        if left.type != "identifier":
            return
        if negate:
            op = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[op]
        if op not in ("<", "<="):
            return
        name = k.text(left)
        try:
            bound = k.expr(right)
        except Unknown:
            return
        out.setdefault(name, (op, bound))
        seen.setdefault(name, set()).add((op, bound))

    for n in k.walk(body):
        if n.type == "if_statement":
            cond = n.child_by_field_name("condition")
            if cond is None or not cond.named_children:
                continue
            value = cond.named_children[-1]
            cons = n.child_by_field_name("consequence")
            early = cons is not None and (cons.type == "return_statement" or (
                cons.type == "compound_statement" and len(cons.named_children) == 1
                and cons.named_children[0].type == "return_statement"))
            if early:
                v = _strip(value)
                if v.type == "binary_expression" and _op(v) == "||":
                    parts = [v.child_by_field_name("left"), v.child_by_field_name("right")]
                else:
                    parts = [v]
                for p in parts:
                    record(_strip(p), negate=True)
            else:
                for c in conjuncts(value):
                    record(c, negate=False)
        elif n.type == "conditional_expression":
            cond = n.child_by_field_name("condition")
            if cond is not None:
                for c in conjuncts(cond):
                    record(c, negate=False)
    return {name: bound for name, bound in out.items() if len(seen[name]) == 1}


@dataclass
class ThreadVar:
    name: str
    axis: int
    linear: bool  # blockIdx * B + threadIdx (else blockIdx alone)
    block_literal: int | None
    extent: str | None  # the guard's bound (exclusive)


def thread_vars(k: Kernel, guards: dict[str, tuple[str, str]]) -> list[ThreadVar]:
    found = []
    for name, defs in k.defs.items():
        if len(defs) != 1 or name in k.assigned:
            continue
        text = k.text(defs[0])
        axes = re.findall(r"blockIdx\.([xyz])", text)
        if len(set(axes)) != 1:
            continue
        axis = "xyz".index(axes[0])
        linear = "threadIdx" in text or bool(re.search(r"\btid\b", text))
        lit = re.search(r"blockIdx\.[xyz]\s*\*\s*(\d+)|(\d+)\s*\*\s*blockIdx\.[xyz]", text)
        block_literal = int(lit.group(1) or lit.group(2)) if lit else None
        extent = None
        if name in guards:
            op, bound = guards[name]
            extent = bound if op == "<" else f"({bound} + 1)"
        found.append(ThreadVar(name, axis, linear, block_literal, extent))
    return found



def same_position(var: str, k: Kernel, ranges: dict[str, tuple[str, str]]) -> str | None:
    """A loop (or thread) variable that indexes the same buffer in the same place as the
    data-dependent index ``var`` does elsewhere (``row[labels[r]]`` and ``row[c]``)."""
    for a in k.accesses:
        if not re.search(rf"\b{re.escape(var)}\b", a.index):
            continue
        for b in k.accesses:
            if b.buffer != a.buffer or "_v_" in b.index:
                continue
            for w in ranges:
                if w.startswith("_") or not re.search(rf"\b{re.escape(w)}\b", b.index):
                    continue
                if re.sub(rf"\b{re.escape(var)}\b", w, a.index) == b.index:
                    return w
    return None


def guess_geometry(k: Kernel, tvars: list[ThreadVar]) -> tuple[Any, Any, str]:
    by_axis: dict[int, ThreadVar] = {}
    for tv in tvars:
        if tv.extent is not None and tv.axis not in by_axis:
            by_axis[tv.axis] = tv
    if not by_axis or 0 not in by_axis:
        return None, None, ""
    block_x = None
    for tv in by_axis.values():
        if tv.block_literal:
            block_x = tv.block_literal
    if block_x is None:
        for sh in k.fn.shared:
            if len(sh.dims) == 1 and sh.dims[0].isdigit():
                size = int(sh.dims[0])
                if re.search(rf"\b{re.escape(sh.name)}\s*\[\s*(tid|threadIdx\.x)\s*\]",
                             k.text(k.fn.node)):
                    block_x = size
    two = 1 in by_axis
    if two:
        block = [block_x or 32, 8] + ([1] if 2 in by_axis else [])
    else:
        block = [block_x or DEFAULT_BLOCK]
    grid = []
    for axis in range(len(block)):
        tv = by_axis.get(axis)
        if tv is None:
            grid.append("1")
        elif tv.linear:
            grid.append(f"ceil_div({tidy(tv.extent)}, {block[axis]})")
        else:
            grid.append(tidy(tv.extent))
    why = ", ".join(f"{tv.name} < {tidy(tv.extent)} on {'xyz'[a]}"
                    for a, tv in sorted(by_axis.items()))
    return grid, [str(b) for b in block], f"the guarded thread index ({why})"

