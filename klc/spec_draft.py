"""``klc spec init``: draft a kernel's klc-spec block from what the file already says.

What is read, and what each drafted field comes from (each one is marked in the draft with a
``# guessed: ...`` comment saying so; a field that cannot be found is a ``TODO`` and the draft
is refused until a person fills it in):

- **args and roles**: the signature. A pointer is a buffer: ``const`` or never written is
  ``in``; written and never read is ``out``; written and read (``+=``, an atomic, read
  before the write) is ``inout``. Any other parameter is a scalar.
- **sizes**: the integer parameters that bound an index, a guard or a loop. With a host
  launch in the file (``kernel<<<grid, block>>>(args)``, in ``main`` or in a launcher that
  ``main`` calls), the sizes are the host's integer variables set from constants
  (``int B = 8;``), with their values, and each scalar argument is the host's expression
  of them. Without one, sizes get values that make the largest buffer about 2^24 elements,
  the sizes that bound a per-thread loop 64.
- **shapes**: from the index expressions. Every access ``p[e]`` of a buffer (directly, or
  through a local pointer ``q = p + off``) has its largest index computed: the guarded
  thread index (``i < n``), loop variables (``c < cols``) and locals are substituted, and
  each free variable is set to its smallest or largest value. The shape is that largest
  index plus one, written as the simplest expression of the sizes equal to it at several
  sizes (``[rows, cols]``, ``["n - k + 1"]``), else as computed. An index read from another
  buffer (``table[ids[t] * dim + c]``) makes a new size for the range of those values, and
  the index buffer's init ``randint(0, that size)``; an 8-bit index ranges over 256.
- **grid and block**: the host launch where there is one; else the thread index: a block of
  256 threads (or the size of a ``__shared__`` array indexed by the thread, or the literal
  that multiplies ``blockIdx``), 32 x 8 for two dimensions, and a grid of
  ``ceil_div(extent, block)`` over the guard's extent, or the guard's extent itself for an
  index that is ``blockIdx`` alone (a block per row).
- **inits**: ``normal`` for inputs (``randint`` for index buffers), poison for outputs (the
  gate's default), ``uniform(0.5, 2)`` for float scalars, 3 for an integer scalar that is
  not a size.

The draft is checked by loading it and binding it to the signature (the gate's own
``check_spec``) before it is shown or written.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tree_sitter import Node

from klc.errors import KlcError
from klc.frontend import Function, Unit
from klc.spec import ExprError, evaluate, parse_ctype

TARGET_ELEMENTS = 1 << 24  # the largest buffer at the drafted profiling sizes
LOOP_SIZE = 64  # a size that bounds a per-thread loop
RANGE_SIZE = 1024  # the range of values an index buffer holds
DEFAULT_BLOCK = 256
_BUILTINS = {"blockIdx", "threadIdx", "blockDim", "gridDim"}
_ATOMICS = re.compile(r"^atomic[A-Z]\w*$")
_CMP = {"<", "<=", ">", ">="}


class DraftError(KlcError):
    pass


@dataclass
class Draft:
    """A drafted spec block: its text (the whole ``/* klc-spec ... */`` comment), what each
    field was guessed from, and what could not be found (TODO)."""

    kernel: str
    text: str
    guessed: list[str] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    host_launch: bool = False


# --------------------------------------------------------------------------------------
# C expressions to spec expressions


class _Unknown(Exception):
    """An expression the drafter cannot turn into a spec expression."""


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
class _Access:
    buffer: str
    index: str  # spec expression, free variables still in it
    write: bool
    read: bool
    node: Node


class _Kernel:
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
        self.accesses: list[_Access] = []
        self.keep: set[str] = set()  # guarded thread indices: free variables, not expanded
        self._collect(fn.node)

    def text(self, node: Node) -> str:
        return self.unit.text(node)

    # -- walking --------------------------------------------------------------------------

    def _walk(self, node: Node) -> Iterator[Node]:
        stack = [node]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(n.named_children))

    def _collect(self, root: Node) -> None:
        body = root.child_by_field_name("body")
        if body is None:
            raise DraftError(f"{self.unit.where(self.fn.start)}: {self.fn.name} has no body")
        for n in self._walk(body):
            if n.type == "init_declarator":
                name = n.child_by_field_name("declarator")
                value = n.child_by_field_name("value")
                while name is not None and name.type in ("pointer_declarator",
                                                         "reference_declarator"):
                    name = name.child_by_field_name("declarator")
                if name is not None and name.type == "identifier" and value is not None:
                    self.defs.setdefault(self.text(name), []).append(value)
            elif n.type in ("assignment_expression", "update_expression"):
                target = n.child_by_field_name("left") or n.child_by_field_name("argument")
                if target is not None and target.type == "identifier":
                    self.assigned.add(self.text(target))
            elif n.type == "for_statement":
                self._loop(n)

    def _loop(self, n: Node) -> None:
        init = n.child_by_field_name("initializer")
        cond = n.child_by_field_name("condition")
        if init is None or cond is None:
            return
        var, start = None, None
        for d in self._walk(init):
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
        if var is None or cond.type != "binary_expression" or _op(cond) not in ("<", "<="):
            return
        left = _strip(cond.child_by_field_name("left"))
        if left.type != "identifier" or self.text(left) != var:
            return
        self.loops[var] = (start, cond.child_by_field_name("right"), _op(cond))

    # -- expressions ----------------------------------------------------------------------

    def expr(self, node: Node, depth: int = 0) -> str:
        """A C integer expression as a spec expression: locals defined once are replaced by
        their definition, loop and thread variables stay as free variables."""
        if depth > 40:
            raise _Unknown("too deep")
        node = _strip(node)
        t = node.type
        if t == "number_literal":
            txt = self.text(node).rstrip("uUlLfF")
            if not re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+(\.\d*)?([eE][-+]?\d+)?)", txt):
                raise _Unknown(txt)
            return f"({txt})" if txt.startswith("-") else txt
        if t == "identifier":
            return self.name(self.text(node), depth)
        if t == "field_expression":
            arg = node.child_by_field_name("argument")
            fld = node.child_by_field_name("field")
            if arg is not None and fld is not None and self.text(arg) in _BUILTINS:
                return f"_{self.text(arg)}_{self.text(fld)}"
            raise _Unknown(self.text(node))
        if t == "binary_expression":
            op = _op(node)
            a = self.expr(node.child_by_field_name("left"), depth + 1)
            b = self.expr(node.child_by_field_name("right"), depth + 1)
            if op == "/":
                op = "//"
            if op not in ("+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^"):
                raise _Unknown(op)
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
            raise _Unknown(self.text(node))
        if t == "conditional_expression":
            raise _Unknown(self.text(node))
        raise _Unknown(self.text(node))

    def name(self, name: str, depth: int) -> str:
        if name in self.params or name in self.loops or name in self.keep:
            return name
        defs = self.defs.get(name, [])
        if len(defs) == 1 and name not in self.assigned:
            return f"({self.expr(defs[0], depth + 1)})"
        raise _Unknown(name)

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
        for n in self._walk(body):
            if n.type != "subscript_expression":
                continue
            try:
                base = self.pointer_base(n.child_by_field_name("argument"))
            except _Unknown as e:
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
            except _Unknown as e:
                problems.append(f"{self.unit.where(n.start_byte)}: the index of {buf} "
                                f"({self.text(idx.named_children[0])}) uses {e}")
                continue
            self.accesses.append(_Access(buf, index, write, read, n))
        return problems

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
            call = parent.parent
            while call is not None and call.type == "argument_list":
                call = call.parent
            if call is not None and call.type == "call_expression":
                fname = self.text(call.child_by_field_name("function"))
                if _ATOMICS.match(fname):
                    return True, True
            return True, True  # an address taken: assume both
        return False, True


# --------------------------------------------------------------------------------------
# Ranges and guards


def _guards(k: _Kernel) -> dict[str, tuple[str, str]]:
    """Bounds on variables from the kernel's conditions: ``if (i < n)``, ``if (i >= n)
    return;``, ``i < n ? ... : ...``, joined with ``&&``; var -> (op, bound expr)."""
    out: dict[str, tuple[str, str]] = {}
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
        except _Unknown:
            return
        out.setdefault(name, (op, bound))

    for n in k._walk(body):
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
    return out


@dataclass
class _ThreadVar:
    name: str
    axis: int
    linear: bool  # blockIdx * B + threadIdx (else blockIdx alone)
    block_literal: int | None
    extent: str | None  # the guard's bound (exclusive)


def _thread_vars(k: _Kernel, guards: dict[str, tuple[str, str]]) -> list[_ThreadVar]:
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
        found.append(_ThreadVar(name, axis, linear, block_literal, extent))
    return found


# --------------------------------------------------------------------------------------
# Evaluating shapes


def _eval(expr: str, env: dict[str, int]) -> int | None:
    try:
        v = evaluate(expr, env)
    except (ExprError, ZeroDivisionError, KlcError, OverflowError, ValueError):
        return None
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):
        return None


def _subst(expr: str, values: dict[str, str]) -> str:
    for name in sorted(values, key=len, reverse=True):
        expr = re.sub(rf"\b{re.escape(name)}\b", f"({values[name]})", expr)
    return expr


def _monomials(names: list[str], degree: int = 4) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [()]
    for d in range(1, degree + 1):
        out.extend(itertools.combinations_with_replacement(names, d))
    return out


def _product(m: tuple[str, ...], env: dict[str, int]) -> int:
    p = 1
    for n in m:
        p *= env[n]
    return p


def _clean_shape(targets: list[tuple[dict[str, int], int]], names: list[str]
                 ) -> list[str] | None:
    """The simplest shape (a list of size names, a coefficient, or one expression like
    ``n - k + 1``) equal to every target."""
    if len({t for _, t in targets}) == 1 and targets:
        return [str(targets[0][1])]
    monos = _monomials(names)
    for m in monos[1:]:
        for c in (1, 2, 3, 4):
            if all(c * _product(m, env) == t for env, t in targets):
                dims = list(m)
                if c != 1:
                    dims[-1] = f"{c} * {dims[-1]}"
                return dims
    for m in monos[1:]:
        for d in (-3, -2, -1, 1, 2, 3):
            if all(_product(m, env) + d == t for env, t in targets):
                return [" * ".join(m) + (f" + {d}" if d > 0 else f" - {-d}")]
    for m1, m2 in itertools.product(monos[1:], monos[1:]):
        for sign in (1, -1):
            for d in range(-3, 4):
                if all(_product(m1, env) + sign * _product(m2, env) + d == t
                       for env, t in targets):
                    text = " * ".join(m1)
                    if m2:
                        text += (" + " if sign > 0 else " - ") + " * ".join(m2)
                    if d:
                        text += f" + {d}" if d > 0 else f" - {-d}"
                    return [text]
    return None


# --------------------------------------------------------------------------------------
# Host launches


@dataclass
class _Host:
    sizes: dict[str, int]  # host size variable: value
    args: list[str]  # each kernel argument as an expression of the host sizes
    grid: list[str]
    block: list[str]
    shared: str | None
    where: str


def _host_launch(unit: Unit, kernel: str) -> _Host | None:
    """The first launch of ``kernel`` in host code, resolved to the host's size variables:
    locals of the launching function and, when that function is called from another
    (``main``), its parameters replaced by the caller's arguments."""
    launch = next((ln for ln in unit.launches if ln.kernel == kernel), None)
    if launch is None:
        return None
    host = unit.function_at(launch.start)
    if host is None:
        return None
    env: dict[str, str] = {}  # host name -> spec expression text
    literals: dict[str, int] = {}
    order: list[str] = []

    def c_to_spec(text: str) -> str:
        t = re.sub(r"\(\s*(?:size_t|int|long|unsigned|long long|unsigned int|int64_t)\s*\)",
                   "", text)
        t = re.sub(r"sizeof\s*\(\s*([\w\s]+?)\s*\)", lambda m: _sizeof(m.group(1)), t)
        t = re.sub(r"\bCEIL_DIV\b|\bceil_div\b|\bcdiv\b|\bdiv_up\b|\bDIV_UP\b", "ceil_div", t)
        t = re.sub(r"(\d)[fF]\b", r"\1", t)
        t = t.replace("/", "//").replace("////", "//")
        return t

    def scan(fn: Function) -> None:
        body = fn.node.child_by_field_name("body")
        if body is None:
            return
        stack = [body]
        while stack:
            n = stack.pop()
            if n.type == "init_declarator":
                name = n.child_by_field_name("declarator")
                value = n.child_by_field_name("value")
                if name is not None and value is not None and name.type == "identifier":
                    nm = unit.text(name)
                    txt = c_to_spec(unit.text(value))
                    if nm not in env:
                        env[nm] = txt
                        order.append(nm)
            elif n.type == "declaration":
                dims = [c for c in n.named_children if c.type == "call_expression"]
                _ = dims
            stack.extend(reversed(n.named_children))

    scan(host)
    # the launcher's parameters, from a call in another host function
    params = [p.name for p in host.params]
    if params:
        for caller in unit.functions:
            if caller is host or caller.kind != "host":
                continue
            m = None
            for node in _calls(unit, caller, host.name):
                m = node
                break
            if m is None:
                continue
            args = m.child_by_field_name("arguments")
            values = [unit.text(a) for a in (args.named_children if args else [])]
            scan(caller)
            for p, v in zip(params, values, strict=False):
                if p not in env:
                    env[p] = c_to_spec(v)
            break
    # size variables: host integers set from a constant expression
    for name in order:
        v = _eval(env[name], {})
        if v is not None and isinstance(v, int) and v > 0:
            literals[name] = v

    def resolve(text: str, depth: int = 0) -> str:
        if depth > 20:
            return text
        names = set(re.findall(r"\b[A-Za-z_]\w*\b", text)) - {"ceil_div", "min", "max"}
        out = text
        for nm in sorted(names, key=len, reverse=True):
            if nm in literals:
                continue
            if nm in env:
                out = re.sub(rf"\b{re.escape(nm)}\b", f"({resolve(env[nm], depth + 1)})", out)
        return out

    try:
        args = [resolve(c_to_spec(a)) for a in launch.args]
        config = [resolve(c_to_spec(c)) for c in launch.config]
    except RecursionError:  # pragma: no cover - a self-referencing host variable
        return None

    def dims(text: str) -> list[str]:
        m = re.fullmatch(r"\s*\(?\s*dim3\s*\((.*)\)\s*\)?\s*", text)
        if m:
            return [d.strip() for d in m.group(1).split(",")]
        return [text]

    def dim3_var(text: str) -> list[str]:
        # a dim3 variable: `dim3 grid(a, b)` declared in the launcher
        name = text.strip("() ")
        for fn in (host,):
            body = unit.text(fn.node)
            m = re.search(rf"dim3\s+{re.escape(name)}\s*\(([^;]*)\)\s*;", body)
            if m:
                return [resolve(c_to_spec(d.strip())) for d in _split_args(m.group(1))]
        return [resolve(c_to_spec(d)) for d in dims(text)]

    grid = dim3_var(launch.config[0]) if launch.config else ["1"]
    block = dim3_var(launch.config[1]) if len(launch.config) > 1 else ["1"]
    shared = config[2] if len(config) > 2 else None
    used = set()
    for t in [*args, *grid, *block, *([shared] if shared else [])]:
        used |= set(re.findall(r"\b[A-Za-z_]\w*\b", t))
    sizes = {n: v for n, v in literals.items() if n in used}
    # block sizes and other constants only in the launch config are written as numbers
    config_only = {n for n in sizes if not any(re.search(rf"\b{n}\b", a) for a in args)}
    grid = [_subst(g, {n: str(sizes[n]) for n in config_only}) for g in grid]
    block = [_subst(b, {n: str(sizes[n]) for n in config_only}) for b in block]
    if shared:
        shared = _subst(shared, {n: str(sizes[n]) for n in config_only})
    for n in config_only:
        del sizes[n]
    return _Host(sizes, args, grid, block, shared, unit.where(launch.start))


def _sizeof(type_name: str) -> str:
    """``sizeof(T)`` of a type the gate knows (float: 4, __half: 2, float4: 16), else the
    text as it was (and the draft will not check: a person gives the number)."""
    import numpy as np

    parsed = parse_ctype(type_name)
    if parsed is None or parsed[1]:
        return f"sizeof({type_name})"
    ct = parsed[0]
    item = 2 if ct.dtype == "bfloat16" else np.dtype(ct.dtype).itemsize
    return str(item * ct.lanes)


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch in "([{"
        depth -= ch in ")]}"
        cur += ch
    if cur.strip():
        out.append(cur)
    return out


def _calls(unit: Unit, fn: Function, name: str) -> Iterator[Node]:
    stack = [fn.node]
    while stack:
        n = stack.pop()
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            if f is not None and unit.text(f) == name:
                yield n
        stack.extend(reversed(n.named_children))


# --------------------------------------------------------------------------------------
# The draft


def draft_spec(unit: Unit, kernel: str | None = None) -> Draft:
    """Draft the klc-spec block of one kernel of ``unit`` (see the module doc)."""
    try:
        return _draft(unit, kernel)
    except _Unknown as e:
        raise DraftError(f"{unit.path}: klc spec init cannot read an expression of the "
                         f"kernel ({e}); write the spec by hand (docs/spec.md)") from None


def _draft(unit: Unit, kernel: str | None) -> Draft:
    kernels = [f for f in unit.kernels]
    if not kernels:
        raise DraftError(f"{unit.path}: no __global__ kernel in the file")
    if kernel is None:
        if len(kernels) > 1:
            raise DraftError(f"{unit.path}: {len(kernels)} kernels ("
                             f"{', '.join(k.name for k in kernels)}): name one with --kernel")
        fn = kernels[0]
    else:
        fn = next((k for k in kernels if k.name == kernel), None)
        if fn is None:
            raise DraftError(f"{unit.path}: no kernel {kernel!r} (kernels: "
                             f"{', '.join(k.name for k in kernels)})")
    if fn.template_params:
        raise DraftError(f"{unit.where(fn.start)}: {fn.name} is a template: klc spec init "
                         "drafts plain kernels (write template: {...} by hand, docs/spec.md)")
    k = _Kernel(unit, fn)
    guessed: list[str] = []
    guards = _guards(k)
    tvars = _thread_vars(k, guards)
    k.keep = {tv.name for tv in tvars if tv.extent is not None}
    todo = k.collect_accesses()
    grid_guess, block_guess, why_geometry = _geometry(k, tvars)
    block_dims = [int(b) for b in block_guess] if block_guess else [DEFAULT_BLOCK]

    # free variables: loops, guarded thread indices, data-dependent indices
    ranges: dict[str, tuple[str, str]] = {}
    for var, (start, bound, op) in k.loops.items():
        try:
            lo = k.expr(start) if start is not None else "0"
            hi = k.expr(bound)
        except _Unknown:
            continue
        ranges[var] = (lo, hi if op == "<=" else f"({hi} - 1)")
    for tv in tvars:
        if tv.extent is not None:
            ranges[tv.name] = ("0", f"({tv.extent} - 1)")
    for axis, b in zip("xyz", block_dims, strict=False):
        ranges[f"_threadIdx_{axis}"] = ("0", str(b - 1))

    # the scalar parameters: sizes or values
    sig = []
    for p in fn.params:
        parsed = parse_ctype(p.type)
        if parsed is None:
            raise DraftError(f"{unit.where(p.start)}: parameter {p.name} has type {p.type!r}, "
                             "which the gate cannot make data for")
        sig.append((p, parsed[0], parsed[1] > 0 or p.array))

    host = _host_launch(unit, fn.name)
    if host is not None:  # usable only where the launch is a function of constant sizes
        exprs = [*host.grid, *host.block, *([host.shared] if host.shared else []),
                 *(a for (p, ct, ptr), a in zip(sig, host.args, strict=False)
                   if not ptr and not ct.dtype.startswith("float"))]
        unknown = sorted({n for e in exprs for n in re.findall(r"\b[A-Za-z_]\w*\b", e)}
                         - set(host.sizes) - {"ceil_div", "min", "max", "int", "abs"})
        if unknown or len(host.args) != len(sig):
            guessed.append(f"the launch at {host.where} is not used: " + (
                f"{', '.join(unknown)} not set from constants" if unknown else
                "its arguments do not match the parameters"))
            host = None
    int_scalars = [p.name for p, ct, ptr in sig if not ptr and not ct.dtype.startswith("float")
                   and ct.dtype != "bool" and ct.dtype != "bfloat16"]
    texts = [a.index for a in k.accesses] + [r for lo_hi in ranges.values() for r in lo_hi]
    texts += [tv.extent for tv in tvars if tv.extent]
    size_params = [n for n in int_scalars if any(re.search(rf"\b{n}\b", t) for t in texts)]
    loop_bounded = {n for n in size_params
                    if any(re.search(rf"\b{n}\b", hi) for v, (_, hi) in ranges.items()
                           if v in k.loops)}

    # data-dependent index ranges
    range_sizes: dict[str, tuple[str, int]] = {}  # index buffer -> (size name or "", value)
    same_place: dict[str, str] = {}  # index buffer -> the bound of the loop it stands in for
    for var, buf in k.data_index.items():
        ct = next(c for p, c, _ in sig if p.name == buf)
        w = _same_position(var, k, ranges)
        if w is not None:  # row[labels[r]] beside row[c], c < classes: labels in [0, classes)
            ranges[var] = ranges[w]
            hi = ranges[w][1]
            m = re.fullmatch(r"\((.*) - 1\)", hi)
            same_place[buf] = _tidy(m.group(1) if m and _balanced(m.group(1)) else
                                    f"{hi} + 1")
        elif ct.dtype in ("uint8", "int8", "bool"):
            range_sizes[buf] = ("", 256 if ct.dtype == "uint8" else 128)
            ranges[var] = ("0", str(range_sizes[buf][1] - 1))
        else:
            target = next((a.buffer for a in k.accesses if f"_v_{buf}" in a.index), buf)
            name = f"{target}_rows"
            range_sizes[buf] = (name, RANGE_SIZE)
            ranges[var] = ("0", f"({name} - 1)")

    # size values
    if host is not None:
        sizes = dict(host.sizes)
        param_value = {p.name: host.args[i] for i, (p, _, _) in enumerate(sig)
                       if i < len(host.args)}
    else:
        sizes = {}
        param_value = {n: n for n in size_params}
    for name, value in range_sizes.values():
        if name:
            sizes[name] = value

    # thread-variable free ranges unguarded but still needed: [0, blocks*threads)
    def env_for(values: dict[str, int]) -> dict[str, int] | None:
        env: dict[str, int] = dict(values)
        for axis, b in zip("xyz", [*block_dims, 1, 1], strict=False):
            env[f"_blockDim_{axis}"] = b
        for p in size_params:
            v = _eval(param_value.get(p, p), values)
            if v is None:
                return None
            env[p] = v
        return env

    def corners(expr: str, env: dict[str, int]) -> tuple[int | None, str]:
        free = [v for v in ranges if re.search(rf"\b{re.escape(v)}\b", expr)]
        best, best_expr = None, expr
        for choice in itertools.product((0, 1), repeat=len(free)):
            sub = {}
            e2 = dict(env)
            ok = True
            for v, c in zip(free, choice, strict=True):
                r = ranges[v][c]
                r = _resolve_free(r, ranges, env)
                val = _eval(r, e2)
                if val is None:
                    ok = False
                    break
                e2[v] = val
                sub[v] = r
            got = _eval(expr, e2) if ok else None
            if got is None:  # a corner that cannot be evaluated (too large): no bound at all
                return None, expr
            if best is None or got > best:
                best, best_expr = got, _subst(expr, sub)
        return best, best_expr

    if host is None:
        sizes = {**_choose_sizes(size_params, loop_bounded, k, ranges, corners, env_for,
                                 sizes), **sizes}
        for n in size_params:
            guessed.append(f"sizes.{n}: {sizes[n]} (" + (
                "bounds a per-thread loop" if n in loop_bounded and len(size_params) > 1
                else f"the largest buffer about {TARGET_ELEMENTS} elements") + ")")
    for buf, (name, value) in range_sizes.items():
        if name:
            guessed.append(f"sizes.{name}: {value} (the range of the values of {buf}, which "
                           "index another buffer)")

    # shapes
    shapes: dict[str, list[str]] = {}
    roles: dict[str, str] = {}
    inits: dict[str, str] = {}
    names = list(sizes)
    env0 = env_for(sizes)
    if env0 is None:
        raise DraftError(f"{unit.where(fn.start)}: cannot evaluate the sizes of {fn.name}")
    rnd = random.Random(1)
    samples = []
    # near the drafted sizes (so that their order of magnitude, k << n, holds), odd, even
    # and mixed: a shape like 2 * (d // 2) shows itself
    for parity in (1, 0, None):
        vals = {}
        for n in names:
            v = sizes[n] + rnd.randrange(1, 38)
            if parity is not None and v % 2 != parity:
                v += 1
            vals[n] = v
        env = env_for(vals)
        if env is not None:
            samples.append((vals, env))
    for p, ct, ptr in sig:
        if not ptr:
            continue
        acc = [a for a in k.accesses if a.buffer == p.name]
        written = any(a.write for a in acc)
        read_any = any(a.read for a in acc)
        if p.const or parse_ctype(p.type)[2] or not written:  # (the spec's notion of const)
            roles[p.name] = "in"
        else:
            roles[p.name] = "inout" if read_any else "out"
        if not acc:
            todo.append(f"{unit.where(p.start)}: buffer {p.name} is never indexed in "
                        f"{fn.name}: its shape is unknown")
            shapes[p.name] = ["TODO"]
            continue
        use = [a for a in acc if a.write] if roles[p.name] == "out" else acc
        targets = []
        raw = None
        for vals, env in samples:
            best = None
            for a in use:
                got, text = corners(a.index, env)
                if got is not None and (best is None or got > best[0]):
                    best = (got, text)
            if best is None:
                break
            targets.append((vals, best[0] + 1))
        best0 = None
        for a in use:
            got, text = corners(a.index, env0)
            if got is not None and (best0 is None or got > best0[0]):
                best0 = (got, text)
        if best0 is None or len(targets) < len(samples):
            todo.append(f"{unit.where(acc[0].node.start_byte)}: cannot bound the index of "
                        f"{p.name}: {k.text(acc[0].node)}")
            shapes[p.name] = ["TODO"]
            continue
        raw = best0[1]
        if host is not None:  # the kernel's size parameters as the host's expressions
            raw = _subst(raw, {q: param_value[q] for q in size_params if q in param_value
                               and param_value[q] != q})
        clean = _clean_shape(targets, names)
        if clean is not None and all(_eval(" * ".join(f"({d})" for d in clean), vals) == t
                                     for vals, t in targets):
            shapes[p.name] = clean
            guessed.append(f"args.{p.name}.shape: {clean} (the largest index + 1 of "
                           f"{k.text(use[0].node)})")
        else:
            shapes[p.name] = [_tidy(f"{raw} + 1")]
            guessed.append(f"args.{p.name}.shape: the largest index + 1 of "
                           f"{k.text(use[0].node)}, as computed")
        lanes = ct.lanes
        if lanes > 1:
            pass  # a vector type's shape counts vectors, as the index does
        if p.name in same_place:
            bound = same_place[p.name]
            if host is not None:
                bound = _tidy(_subst(bound, {q: param_value[q] for q in size_params
                                             if q in param_value and param_value[q] != q}))
            inits[p.name] = f"randint(0, {bound})"
            guessed.append(f"args.{p.name}.init: its values index where a loop variable "
                           f"does, so they range over [0, {bound})")
        elif p.name in range_sizes:
            name, value = range_sizes[p.name]
            inits[p.name] = f"randint(0, {name or value})"
        elif roles[p.name] != "out":
            inits[p.name] = "normal"
    guessed.append("args.*.role: " + ", ".join(f"{n} {r}" for n, r in roles.items())
                   + " (const-ness and writes)")

    # launch geometry
    grid: list[str]
    block: list[str]
    shared = None
    if host is not None:
        grid, block, shared = host.grid, host.block, host.shared
        guessed.append(f"grid, block: the launch at {host.where}")
    else:
        grid, block, why = grid_guess, block_guess, why_geometry
        if grid is None:
            todo.append(f"{unit.where(fn.start)}: no guarded thread index (like "
                        "`int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n)`) in "
                        f"{fn.name}: grid and block are unknown")
            grid, block = ["TODO"], ["TODO"]
        else:
            guessed.append(f"grid, block: {why}")

    dynamic = next((sh for sh in fn.shared if sh.extern), None)
    if dynamic is not None and not (shared and shared.strip() not in ("0", "")):
        todo.append(f"{unit.where(dynamic.start)}: {fn.name} uses dynamic shared memory "
                    f"(extern __shared__ {dynamic.name}) and no launch in the file says how "
                    "much: give shared: (bytes)")
        shared = "TODO"

    # the block
    lines = ["/* klc-spec", f"kernel: {fn.name}"]
    lines.append("sizes: {" + ", ".join(f"{n}: {v}" for n, v in sizes.items()) + "}"
                 + ("  # from the host code" if host else "  # guessed: see below"))
    lines.append("args:")
    for p, ct, ptr in sig:
        if ptr:
            shape = ", ".join(_quote(d) for d in shapes[p.name])
            entry = f"  - {{name: {p.name}, shape: [{shape}], role: {roles[p.name]}"
            if p.name in inits:
                entry += f", init: {_quote(inits[p.name])}"
            lines.append(entry + "}")
        elif p.name in param_value and p.name in (size_params if host is None else
                                                    param_value):
            value = param_value[p.name]
            if host is not None and p.name not in size_params and \
                    _eval(value, dict(sizes)) is None:
                lines.append(f"  - {{name: {p.name}, init: \"uniform(0.5, 2)\"}}  # guessed: "
                             f"the launch passes {value}, which klc cannot evaluate")
                guessed.append(f"args.{p.name}: uniform(0.5, 2)")
            elif host is not None and p.name not in size_params:
                lines.append(f"  - {{name: {p.name}, value: {_quote(_tidy(value))}}}  "
                             "# from the launch")
            else:
                lines.append(f"  - {{name: {p.name}, value: {_quote(_tidy(value))}}}")
        elif ct.dtype.startswith("float") or ct.dtype == "bfloat16":
            lines.append(f"  - {{name: {p.name}, init: \"uniform(0.5, 2)\"}}  # guessed: any "
                         "value in range")
            guessed.append(f"args.{p.name}: uniform(0.5, 2)")
        else:
            lines.append(f"  - {{name: {p.name}, value: 3}}  # guessed: not a size")
            guessed.append(f"args.{p.name}: 3 (an integer that bounds nothing)")
    lines.append(f"grid: [{', '.join(_quote(_tidy(g)) for g in grid)}]")
    lines.append(f"block: [{', '.join(_quote(_tidy(b)) for b in block)}]")
    if shared and shared.strip() not in ("0", ""):
        lines.append(f"shared: {_quote(_tidy(shared))}")
    lines.append("# klc spec init drafted this block; review it, then remove this line.")
    for g in guessed:
        lines.append(f"# guessed: {g}")
    for t in todo:
        lines.append(f"# TODO: {t}")
    lines.append("*/")
    return Draft(fn.name, "\n".join(lines) + "\n", guessed, todo, sizes, host is not None)


def _same_position(var: str, k: _Kernel, ranges: dict[str, tuple[str, str]]) -> str | None:
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


def _resolve_free(expr: str, ranges: dict[str, tuple[str, str]], env: dict[str, int]
                  ) -> str:
    """A range bound that mentions another free variable takes that variable's lowest
    value (``c`` from ``tid`` to ``cols``: ``tid`` at 0)."""
    for _ in range(5):
        names = [v for v in ranges if v not in env and re.search(rf"\b{re.escape(v)}\b", expr)]
        if not names:
            break
        expr = _subst(expr, {v: ranges[v][0] for v in names})
    expr = re.sub(r"\b_(threadIdx|blockIdx)_[xyz]\b", "0", expr)
    return expr


def _choose_sizes(size_params: list[str], loop_bounded: set[str], k: _Kernel,
                  ranges: dict[str, tuple[str, str]], corners: Any, env_for: Any,
                  fixed: dict[str, int]) -> dict[str, int]:
    """Values for the sizes: a loop bound 64 (when there are other sizes), the others one
    value, the largest that keeps every buffer at or under TARGET_ELEMENTS."""
    if not size_params:
        return {}
    loop = {n for n in loop_bounded if len(size_params) > 1}
    if loop == set(size_params):
        loop = set()
    best: dict[str, int] = {}
    for e in range(24, 0, -1):
        v = 1 << e
        vals = {**fixed, **{n: (LOOP_SIZE if n in loop else v) for n in size_params}}
        env = env_for(vals)
        if env is None:
            continue
        biggest = 0
        ok = True
        for a in k.accesses:
            got, _ = corners(a.index, env)
            if got is None:
                ok = False
                break
            biggest = max(biggest, got + 1)
        for var, (_, hi) in ranges.items():
            if var.startswith("_v_"):
                continue
            x = _eval(_resolve_free(hi, ranges, env), env)
            if x is not None and x < 0:
                ok = False
        if ok and 0 < biggest <= TARGET_ELEMENTS:
            best = {n: vals[n] for n in size_params}
            break
    return best or {n: 1024 for n in size_params}


def _geometry(k: _Kernel, tvars: list[_ThreadVar]) -> tuple[Any, Any, str]:
    by_axis: dict[int, _ThreadVar] = {}
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
            grid.append(f"ceil_div({_tidy(tv.extent)}, {block[axis]})")
        else:
            grid.append(_tidy(tv.extent))
    why = ", ".join(f"{tv.name} < {_tidy(tv.extent)} on {'xyz'[a]}"
                    for a, tv in sorted(by_axis.items()))
    return grid, [str(b) for b in block], f"the guarded thread index ({why})"


def _tidy(expr: str) -> str:
    """Drop the parentheses the substitution added where they are not needed."""
    e = expr.strip()
    for _ in range(10):
        new = re.sub(r"\(0 \+ ", "(", e)
        new = re.sub(r"\(\(([^()]*)\)\)", r"(\1)", new)
        new = re.sub(r"\((\w+)\)", r"\1", new)
        # a whole function argument needs no parentheses of its own
        new = re.sub(r"([(,]\s*)\(([^()]*)\)(\s*[,)])", r"\1\2\3", new)
        new = re.sub(r"^\((.*)\)$", lambda m: m.group(1) if _balanced(m.group(1)) else
                     m.group(0), new)
        if new == e:
            break
        e = new
    return e


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _quote(text: str) -> str:
    t = str(text)
    if re.fullmatch(r"[A-Za-z_][\w]*|\d+(\.\d+)?", t):
        return t
    return '"' + t.replace('"', '\\"') + '"'
