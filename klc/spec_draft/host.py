"""Reading a kernel's host launch (``kernel<<<grid, block>>>(args)``) for ``klc spec init``:
each argument and launch dimension as an expression of host *sizes*.

A host name in a launch is resolved where the compiler would find it:

- a local of the launching function (its initializer; a later assignment is noted, the
  initial value kept), a ``dim3`` variable (``block``, ``block.x``), a file-scope constant,
  an object-like ``#define`` (``#define N (1 << 20)``); a function-like macro is expanded
  (``CEIL_DIV(n, bs)``), and the usual ceiling-division helpers (``divUp``, ``cdiv``,
  ``DIV_UP``...) read as ``ceil_div``;
- a parameter of the launching function: replaced by what its first caller passes, resolved
  in the caller (down to ``main``);
- ``sizeof`` of a type, casts dropped, float literals as numbers.

A name set from a constant becomes a size with that value (``int B = 8;``). A name whose
value the file does not give (a parameter of a launcher nothing calls, ``atoi(argv[1])``,
``p->dim``) becomes a *free* size: the launch is still used, its value is chosen by the
drafter, and the draft says why (``Host.free``). A free size passed straight to a kernel
parameter takes that parameter's name (the launcher's ``n`` is the kernel's ``N``)."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from klc import safe_eval
from klc.cuda.macros import definitions_of
from klc.cuda.model import Function, Unit
from klc.spec import CType, parse_ctype
from klc.spec_draft.exprs import evaluate_or_none, subst

# float scalars at the call site (``1.0f / sqrtf(HS)``, ``1e-5f``): evaluated to a number
FLOAT_DIALECT = dataclasses.replace(
    safe_eval.SPEC, what="a host float expression",
    functions={**safe_eval.SPEC.functions, "sqrt": (math.sqrt, 1), "exp": (math.exp, 1),
               "log": (math.log, 1), "pow": (math.pow, 2), "fabs": (abs, 1)})
_MATH = {"sqrtf": "sqrt", "sqrt": "sqrt", "rsqrtf": None, "expf": "exp", "exp": "exp",
         "logf": "log", "log": "log", "powf": "pow", "pow": "pow", "fabsf": "fabs",
         "fabs": "fabs", "min": "min", "max": "max", "std::min": "min", "std::max": "max",
         "fminf": "min", "fmaxf": "max", "abs": "abs"}
_CEIL_DIV = re.compile(r"(?i)^(ceil_?div|cdiv|i?div_?up|div_?round_?up|round_?up_?div|"
                       r"ceildiv|get_?blocks?|n_?blocks)$")
_KEEP = {"ceil_div", "min", "max", "abs", "int", "sqrt", "exp", "log", "pow", "fabs"}
_TOKEN = re.compile(r"[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*")
_INT_CASTS = re.compile(
    r"\(\s*(?:const\s+)?(?:size_t|int|long|unsigned|long long|unsigned int|unsigned long|"
    r"int64_t|int32_t|uint32_t|uint64_t|float|double)\s*\)")


_ARG_LISTS = ("argument_list", "initializer_list", "parameter_list")


class _Unresolved(Exception):
    """A host name or call whose value the file does not say."""


@dataclass
class Host:
    sizes: dict[str, int]  # host size set from constants: value
    free: dict[str, str]  # host size the file does not give a value: why
    args: list[str]  # each kernel argument as an expression of the sizes ("" : unreadable)
    grid: list[str]
    block: list[str]
    shared: str | None
    where: str
    notes: list[str] = field(default_factory=list)  # what was assumed, and why
    unreadable: list[str] = field(default_factory=list)  # launch config it could not read


def host_launch(unit: Unit, kernel: str, params: list[str | None],
                sizeof: Callable[[str], CType | None] | None = None) -> Host | None:
    """The first launch of ``kernel`` in host code, resolved to host sizes (module doc);
    ``params`` are the kernel's scalar parameter names, None for a buffer (free sizes passed
    straight to one take its name), ``sizeof`` resolves a type name the spec model does not
    know (a typedef)."""
    launch = next((ln for ln in unit.launches if ln.kernel == kernel), None)
    if launch is None:
        return None
    host = unit.function_at(launch.start)
    if host is None:
        return None
    r = _Resolver(unit, sizeof)
    args = []
    for i, a in enumerate(launch.args):
        if i < len(params) and params[i] is None:  # a buffer: passed, never a size
            args.append("")
            continue
        try:
            args.append(r.expr(a, host))
        except _Unresolved as e:
            name = params[i] or f"arg{i}" if i < len(params) else f"arg{i}"
            args.append(r.make_free(name, f"the launch passes {a.strip()}, which {e}"))
            r.spelled[" ".join(a.split())] = name  # the same text in the grid is this size
    unreadable: list[str] = []
    dims: list[list[str]] = []
    for c in launch.config[:2]:
        try:
            dims.append(r.dim3(c, host))
        except _Unresolved as e:
            unreadable.append(f"{c.strip()} ({e})")
            dims.append(["1"])
    while len(dims) < 2:
        dims.append(["1"])
    shared = None
    if len(launch.config) > 2:
        try:
            shared = r.expr(launch.config[2], host)
        except _Unresolved as e:
            unreadable.append(f"{launch.config[2].strip()} ({e})")
    out = Host(dict(r.sizes), dict(r.free), args, dims[0], dims[1], shared,
               unit.where(launch.start), r.notes, unreadable)
    _name_after_params(out, params)
    _numbers_for_block_constants(out)
    return out


def _name_after_params(h: Host, params: list[str | None]) -> None:
    """A free size passed straight to a kernel parameter takes the parameter's name."""
    rename: dict[str, str] = {}
    for p, a in zip(params, h.args, strict=False):
        a = a.strip("() ")
        if p is not None and a in h.free and a != p and p not in h.free and p not in h.sizes and \
                p not in rename.values() and a not in rename:
            rename[a] = p
    if not rename:
        return

    def ren(t: str) -> str:
        return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: rename.get(m.group(0), m.group(0)), t)

    h.free = {rename.get(k, k): v for k, v in h.free.items()}
    h.args = [ren(a) for a in h.args]
    h.grid = [ren(g) for g in h.grid]
    h.block = [ren(b) for b in h.block]
    h.shared = ren(h.shared) if h.shared else h.shared


def _names(text: str) -> set[str]:
    return set(re.findall(r"\b[A-Za-z_]\w*\b", text)) - _KEEP


def _numbers_for_block_constants(h: Host) -> None:
    """Sizes that only the launch's block (and maybe its grid or shared memory) uses are
    written as numbers: a block size is not a problem size. Sizes no expression uses go."""
    in_args = set().union(*(_names(a) for a in h.args)) if h.args else set()
    in_block = set().union(*(_names(b) for b in h.block))
    used = in_args | in_block | set().union(*(_names(g) for g in h.grid)) | \
        (_names(h.shared) if h.shared else set())
    numbers = {n: str(v) for n, v in h.sizes.items() if n in in_block and n not in in_args}
    h.grid = [subst(g, numbers) for g in h.grid]
    h.block = [subst(b, numbers) for b in h.block]
    if h.shared:
        h.shared = subst(h.shared, numbers)
    h.sizes = {n: v for n, v in h.sizes.items() if n in used and n not in numbers}
    h.free = {n: v for n, v in h.free.items() if n in used}


class _Resolver:
    """Host names resolved to spec expressions of sizes; what it found is kept on it."""

    def __init__(self, unit: Unit, sizeof: Callable[[str], CType | None] | None):
        self.unit = unit
        self.sizeof_type = sizeof
        self.macros = definitions_of(unit.source)
        self.sizes: dict[str, int] = {}
        self.free: dict[str, str] = {}
        self.notes: list[str] = []
        self._memo: dict[tuple[str, str], str] = {}
        self._busy: set[tuple[str, str]] = set()
        self._globals = self._file_scope()
        # an argument the file gives no value (x.numel()), by its text: the free size it is
        self.spelled: dict[str, str] = {}

    # -- names -----------------------------------------------------------------------------

    def make_free(self, name: str, why: str) -> str:
        if name not in self.free and name not in self.sizes:
            self.free[name] = why
        return name

    def _file_scope(self) -> dict[str, str]:
        """File-scope variables with an initializer (``const int BLOCK = 256;``)."""
        out: dict[str, str] = {}
        for n in self.unit.root.named_children:
            if n.type != "declaration":
                continue
            for d in n.named_children:
                if d.type == "init_declarator":
                    name, value = d.child_by_field_name("declarator"), \
                        d.child_by_field_name("value")
                    if name is not None and value is not None and name.type == "identifier":
                        out.setdefault(self.unit.text(name), self.unit.text(value))
        return out

    def _constant_or_expr(self, name: str, value: str) -> str:
        """A resolved initializer: a size where it is a positive whole constant, else the
        expression in parentheses."""
        if not _names(value):
            v = evaluate_or_none(value, {})
            if v is not None and v > 0 and _is_whole(value):
                if name in self.sizes and self.sizes[name] != v:
                    return str(v)  # the same name with another value elsewhere: a number
                self.sizes[name] = v
                return name
        return f"({value})"

    def name(self, name: str, fn: Function | None, depth: int) -> str:
        key = (fn.name if fn is not None else "", name)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy or depth > 40:
            raise _Unresolved(f"{name} refers to itself")
        self._busy.add(key)
        try:
            got = self._name(name, fn, depth)
        finally:
            self._busy.discard(key)
        self._memo[key] = got
        return got

    def _name(self, name: str, fn: Function | None, depth: int) -> str:
        if name in self.spelled.values():
            return name
        if fn is not None:
            local = _local(self.unit, fn, name)
            if local is not None:
                decl, value = local
                if value is None:
                    return self.make_free(name, f"{name} is declared in {fn.name} without a "
                                          "value")
                if value.type in _ARG_LISTS:  # dim3 block(256)
                    parts = [self.expr(self.unit.text(c), fn, depth + 1)
                             for c in value.named_children]
                    return parts[0] if parts else "1"
                again = _assigned_again(self.unit, fn, name, decl)
                try:
                    resolved = self.expr(self.unit.text(value), fn, depth + 1)
                except _Unresolved as e:
                    return self.make_free(name, f"{name} is set from "
                                          f"{_short(self.unit.text(value))}, which {e}")
                if again is not None:
                    self.notes.append(f"{name} is assigned again at {again}; the draft takes "
                                      f"its first value, {_short(self.unit.text(value))}")
                return self._constant_or_expr(name, resolved)
            param = next((p for p in fn.params if p.name == name), None)
            if param is not None:
                return self._param(name, fn, depth)
        if name in self._globals:
            return self._constant_or_expr(name, self.expr(self._globals[name], None, depth + 1))
        macro = self.macros.get(name)
        if macro is not None and macro[0] is None and macro[1]:
            return self._constant_or_expr(name, self.expr(macro[1], None, depth + 1))
        raise _Unresolved(f"{name} is not set in the file")

    def _param(self, name: str, fn: Function, depth: int) -> str:
        """A launcher's parameter: what its first caller passes, resolved in the caller."""
        index = [p.name for p in fn.params].index(name)
        if fn.name == "main":
            return self.make_free(name, f"{name} is a parameter of main")
        for caller in self.unit.functions:
            if caller is fn or caller.kind != "host":
                continue
            call = next(_calls(self.unit, caller, fn.name), None)
            if call is None:
                continue
            args = call.child_by_field_name("arguments")
            values = [self.unit.text(a) for a in (args.named_children if args else [])]
            if index >= len(values):
                break
            try:
                return self.expr(values[index], caller, depth + 1)
            except _Unresolved as e:
                return self.make_free(name, f"{name} is a parameter of {fn.name}, and "
                                      f"{caller.name} passes {_short(values[index])}, "
                                      f"which {e}")
        return self.make_free(name, f"{name} is a parameter of {fn.name}, which nothing in "
                              "the file calls")

    # -- expressions -----------------------------------------------------------------------

    def expr(self, text: str, fn: Function | None, depth: int = 0) -> str:
        """A host C expression as a spec expression of sizes (raises _Unresolved)."""
        if depth > 40:
            raise _Unresolved("nests too deep")
        text = " ".join(text.split())
        for spelled, name in self.spelled.items():  # whole names only (n, not min's n)
            text = re.sub(rf"(?<![\w.]){re.escape(spelled)}(?![\w(])", f" {name} ", text)
        t = _c_to_spec(text, self._sizeof)
        out, pos = [], 0
        for m in _TOKEN.finditer(t):
            if m.start() < pos:
                continue
            out.append(t[pos:m.start()])
            word = re.sub(r"\s+", "", m.group(0))
            rest = t[m.end():]
            call = re.match(r"\s*\(", rest)
            member = re.match(r"\s*(\.|->)\s*([A-Za-z_]\w*)", rest)
            pos = m.end()
            if re.fullmatch(r"\d", t[m.start() - 1:m.start()] or "x"):
                out.append(m.group(0))  # a suffix of a number (1e5)
                continue
            if call:
                args, end = _call_args(t, m.end() + call.end() - 1)
                pos = end
                out.append(self._call(word, args, fn, depth))
            elif member:
                pos = m.end() + member.end()
                if re.match(r"\s*\(", t[pos:]):  # a method's value (x.numel()): not in the file
                    raise _Unresolved(f"calls {word}{member.group(1)}{member.group(2)}()")
                out.append(self._member(word, member.group(1), member.group(2), fn, depth))
            elif word in _KEEP:
                out.append(word)
            else:
                out.append(self.name(word, fn, depth))
        out.append(t[pos:])
        result = "".join(out)
        if re.search(r"[?:;{}\[\]\"'!=<>&|]", result.replace("<<", "").replace(">>", "")):
            raise _Unresolved(f"{_short(text)} is not arithmetic klc reads")
        return result

    def _call(self, word: str, args: list[str], fn: Function | None, depth: int) -> str:
        if _CEIL_DIV.match(word) and len(args) == 2:  # (a macro or a helper function)
            a, b = (self.expr(x, fn, depth + 1) for x in args)
            return f"ceil_div({a}, {b})"
        macro = self.macros.get(word)
        if macro is not None and macro[0] is not None and len(macro[0]) == len(args):
            by_param = dict(zip(macro[0], args, strict=True))  # one pass: no re-substitution
            body = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: f"({by_param[m.group(0)]})"
                          if m.group(0) in by_param else m.group(0), macro[1])
            return f"({self.expr(body, fn, depth + 1)})"
        if word in _MATH and _MATH[word] is not None:
            inner = ", ".join(self.expr(x, fn, depth + 1) for x in args)
            return f"{_MATH[word]}({inner})"
        if word in ("static_cast", "int", "float", "size_t") and len(args) == 1:
            return f"({self.expr(args[0], fn, depth + 1)})"
        raise _Unresolved(f"calls {word}")

    def _member(self, var: str, op: str, member: str, fn: Function | None,
                depth: int) -> str:
        """``block.x`` of a ``dim3 block(a, b)`` declared in ``fn``."""
        if op == "." and member in ("x", "y", "z") and fn is not None:
            dims = self._dim3_var(var, fn, depth)
            if dims is not None:
                i = "xyz".index(member)
                axis = dims[i] if i < len(dims) else "1"  # (an operand: grid.x / 2)
                return axis if re.fullmatch(r"\w+", axis.strip()) else f"({axis})"
            raise _Unresolved(f"{var}{op}{member} is not set in the file")
        # a field of a configuration read at run time (p->dim, cfg.hidden): a free size,
        # one name for every place that reads it
        return self.make_free(member, f"{var}{op}{member} is read at run time")

    def _dim3_var(self, name: str, fn: Function, depth: int) -> list[str] | None:
        local = _local(self.unit, fn, name)
        if local is None or local[1] is None:
            return None
        value = local[1]
        if value.type in _ARG_LISTS:
            return [self.expr(self.unit.text(c), fn, depth + 1) for c in value.named_children]
        m = re.fullmatch(r"\s*dim3\s*\((.*)\)\s*", self.unit.text(value), re.S)
        if m:
            return [self.expr(a, fn, depth + 1) for a in _split_args(m.group(1))]
        return None

    def dim3(self, text: str, fn: Function) -> list[str]:
        """A launch dimension's axes: a ``dim3`` variable, ``dim3(a, b)`` in place, or one
        expression."""
        name = text.strip().strip("()").strip()
        if re.fullmatch(r"[A-Za-z_]\w*", name):
            dims = self._dim3_var(name, fn, 0)
            if dims is not None:
                return dims
        m = re.fullmatch(r"\s*\(?\s*dim3\s*[({](.*)[)}]\s*\)?\s*", text, re.S)
        if m:
            return [self.expr(a, fn) for a in _split_args(m.group(1))]
        return [self.expr(text, fn)]

    def _sizeof(self, type_name: str) -> str:
        return _sizeof(type_name, self.sizeof_type)


def _is_whole(value: str) -> bool:
    return not re.search(r"\d\.\d*|\d[eE][-+]?\d|(?<![/])/(?!/)", value)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _c_to_spec(text: str, sizeof: Callable[[str], str]) -> str:
    """A host C expression in spec spelling: casts dropped, ``sizeof`` as a number, float
    suffixes dropped, ``/`` as ``//`` (C's integer division; floats are evaluated apart)."""
    t = " ".join(text.split())
    t = re.sub(r"sizeof\s*\(\s*([\w\s:]+?)\s*\)", lambda m: sizeof(m.group(1)), t)
    t = _INT_CASTS.sub("", t)
    t = re.sub(r"\bstatic_cast\s*<[^<>]*>", "static_cast", t)
    t = re.sub(r"(?<![\w.])(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)[fFuUlL]+\b", r"\1", t)
    t = re.sub(r"(?<![\w.])(\d+\.)(?![\w])", r"\g<1>0", t)
    return t.replace("/", "//").replace("////", "//")


def float_value(expr: str, env: dict[str, int]) -> float | None:
    """A float argument's value at the host sizes (true division, the math functions)."""
    try:
        v = safe_eval.evaluate(expr.replace("//", "/"), env, FLOAT_DIALECT)
    except safe_eval.ExprError:
        return None
    return float(v) if isinstance(v, int | float) and math.isfinite(v) else None


def _sizeof(type_name: str, resolve: Callable[[str], CType | None] | None) -> str:
    """``sizeof(T)`` of a type the gate knows (float: 4, __half: 2, float4: 16, a typedef
    ``resolve`` knows), else the text as it was."""
    import numpy as np

    parsed = parse_ctype(type_name)
    ct = parsed[0] if parsed is not None and not parsed[1] else \
        (resolve(type_name) if resolve is not None else None)
    if ct is None:
        return f"sizeof({type_name})"
    item = 2 if ct.dtype == "bfloat16" else np.dtype(ct.dtype).itemsize
    return str(item * ct.lanes)


def _call_args(text: str, open_at: int) -> tuple[list[str], int]:
    """The arguments of the call whose ``(`` is at ``open_at``, and the index after ``)``."""
    depth, i = 0, open_at
    while i < len(text):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return [a.strip() for a in _split_args(text[open_at + 1:i])], i + 1
        i += 1
    raise _Unresolved("has unbalanced parentheses")


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch in "([{<" and ch != "<"
        depth -= ch in ")]}" and ch != ">"
        cur += ch
    if cur.strip():
        out.append(cur)
    return out


def _local(unit: Unit, fn: Function, name: str) -> tuple[Node, Node | None] | None:
    """The first declaration of ``name`` in ``fn``'s body: (declarator node, initializer or
    None)."""
    body = fn.node.child_by_field_name("body")
    if body is None:
        return None
    stack = [body]
    while stack:
        n = stack.pop()
        if n.type == "init_declarator":
            d = n.child_by_field_name("declarator")
            if d is not None and d.type == "identifier" and unit.text(d) == name:
                return d, n.child_by_field_name("value")
        elif n.type == "declaration":
            for d in n.named_children:
                if d.type == "identifier" and unit.text(d) == name and \
                        n.child_by_field_name("declarator") is not None:
                    return d, None
                if d.type == "function_declarator":  # dim3 block(bx, by): C++'s vexing parse
                    inner = d.child_by_field_name("declarator")
                    plist = d.child_by_field_name("parameters")
                    if inner is not None and plist is not None and \
                            unit.text(inner) == name:
                        return inner, plist
        stack.extend(reversed(n.named_children))
    return None


def _assigned_again(unit: Unit, fn: Function, name: str, decl: Node) -> str | None:
    """Where ``name`` is assigned after its declaration in ``fn``, if anywhere."""
    stack = [fn.node]
    while stack:
        n = stack.pop()
        if n.type == "assignment_expression" and n.start_byte > decl.start_byte:
            left = n.child_by_field_name("left")
            if left is not None and left.type == "identifier" and unit.text(left) == name:
                line, col = unit.position(n.start_byte)
                return f"{line}:{col}"
        stack.extend(reversed(n.named_children))
    return None


def _calls(unit: Unit, fn: Function, name: str) -> Iterator[Node]:
    stack = [fn.node]
    while stack:
        n = stack.pop()
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            if f is not None and unit.text(f) == name:
                yield n
        stack.extend(reversed(n.named_children))
