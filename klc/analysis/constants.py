"""The C constant evaluator (``klc.analysis`` layer 4, over declarations and types).

``Evaluator`` folds tree-sitter expressions with C's integer semantics (division by
``klc.safe_eval.c_div``); names resolve to ``#define``s, ``const``/``constexpr`` variables,
template arguments (the spec's, or the one instantiation in the file) and, at run time, the
spec's sizes. ``blockDim.x`` is the block's extent where it is known: ``block_dims`` (the
spec's ``block``, every launch of the kernel in the file agreeing, or ``__launch_bounds__`` as
an upper bound) lives here with the evaluator, since each needs the other (a launch's block
is a constant expression; ``blockDim`` in one is the block's extent)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from tree_sitter import Node

from klc.analysis.declarations import declarations_named, lookup
from klc.analysis.tree import (
    Place,
    binding_node,
    cast_target,
    cited,
    clang_facts,
    in_span,
    nodes_of,
    operator_of,
    quoted,
    snippet,
    text_of,
    unit_memo,
    unparen,
)
from klc.analysis.types import SIZES, norm_type
from klc.analysis.writes import address_taken, is_assigned
from klc.cuda.facts import instantiations
from klc.cuda.syntax import (
    F_ARGUMENT,
    F_ARGUMENTS,
    F_CONDITION,
    F_DECLARATOR,
    F_FIELD,
    F_FUNCTION,
    F_LEFT,
    F_NAME,
    F_PARAMETERS,
    F_RIGHT,
    F_TYPE,
    F_VALUE,
    parse_expression,
)
from klc.safe_eval import c_div
from klc.spec import Bound, Spec, launch_dims

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit
    from klc.match.model import Binding


COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b,
}


class Evaluator:
    """Constant folding over tree-sitter nodes with C's integer semantics.

    Names resolve to ``#define``s, ``const``/``constexpr`` variables with constant
    initialisers, template arguments given by the spec, and (``runtime=True``) the spec's
    sizes. When a value is unknown, ``why`` says which sub-expression stopped it and
    ``definite`` whether it is certainly not a compile-time constant (a kernel parameter,
    a plain variable) or merely unknown to the tree (then clang may be asked)."""

    def __init__(self, ctx: Place, runtime: bool = False):
        self.ctx = ctx
        self.unit = ctx.unit
        self.runtime = runtime
        self._why: str | Callable[[], str] = ""
        self.definite = False
        # unknown for good: it needs a template parameter no spec or instantiation binds,
        # which clang cannot evaluate either (a value-dependent expression), so not asked
        self.settled = False
        self.sources: list[str] = []  # where names got their values, for reasons

    @property
    def why(self) -> str:
        """Why the last value asked was unknown (written when first read)."""
        why = self._why
        if why.__class__ is not str:
            why = self._why = why()  # type: ignore[operator]
        return why  # type: ignore[return-value]

    @why.setter
    def why(self, why: str | Callable[[], str]) -> None:
        self._why = why

    def text(self, text: str, depth: int = 0) -> int | float | None:
        parsed = parse_expression(text)
        if parsed is None:
            self.why = f"`{snippet(text)}` does not parse as an expression"
            return None
        node, src = parsed
        return self.node(node, src, depth)

    def node(self, node: Node, src: bytes, depth: int = 0) -> int | float | None:
        if depth > 24:
            self.why = "the definitions are too deeply nested"
            return None
        node = unparen(node)
        t = node.type
        if t == "number_literal":
            return _c_number(text_of(src, node))
        if t in ("true", "false"):
            return int(t == "true")
        if t == "char_literal":
            body = text_of(src, node)[1:-1]
            return ord(body) if len(body) == 1 else None
        if t == "unary_expression":
            v = self.node(node.child_by_field_id(F_ARGUMENT), src, depth)
            return None if v is None else _unary(operator_of(node), v)
        if t == "binary_expression":
            a = self.node(node.child_by_field_id(F_LEFT), src, depth)
            if a is None:
                return None
            b = self.node(node.child_by_field_id(F_RIGHT), src, depth)
            if b is None:
                return None
            v = _binary(operator_of(node), a, b)
            if v is None:
                self.why = f"`{snippet(text_of(src, node))}` cannot be folded (division by zero?)"
            return v
        if t == "conditional_expression":
            c = self.node(node.child_by_field_id(F_CONDITION), src, depth)
            if c is None:
                return None
            return self.node(node.child_by_field_name("consequence" if c else "alternative"),
                             src, depth)
        if t == "sizeof_expression":
            ty = node.child_by_field_id(F_TYPE)
            size = SIZES.get(norm_type(text_of(src, ty))) if ty is not None else None
            if size is None:
                self.why = f"`{snippet(text_of(src, node))}`: size unknown to the tree"
            return size
        if t == "identifier":
            return self.name(text_of(src, node), node.start_byte if src is self.unit.source
                             else self.ctx.match.start, depth)
        if t == "field_expression":
            arg = node.child_by_field_id(F_ARGUMENT)
            fld = node.child_by_field_id(F_FIELD)
            if arg is not None and fld is not None and text_of(src, arg) == "blockDim":
                exact, how = _exact_extent(self.ctx)
                axis = "xyz".find(text_of(src, fld))
                if exact is not None and axis >= 0:
                    self.sources.append(how)
                    return exact[axis]
            self.why = f"`{snippet(text_of(src, node))}` is not a compile-time constant"
            self.definite = True
            return None
        ty, operand = cast_target(node, src)
        if operand is not None:
            v = self.node(operand, src, depth)
            if v is not None and ty is not None and norm_type(text_of(src, ty)) in (
                    "int", "unsigned int", "long", "long long", "size_t", "unsigned long long"):
                v = int(v)
            return v
        self.why = f"`{snippet(text_of(src, node))}` is not a constant expression the tree knows"
        return None

    def name(self, name: str, at: int, depth: int) -> int | float | None:
        defines = _defines(self.unit)
        if name in defines:
            v = self.text(defines[name], depth + 1)
            if v is not None:
                self.sources.append(f"#define {name} {defines[name]}")
            return v
        fn = self.ctx.function
        if fn is not None and any(t.name == name and t.kind == "value"
                                  for t in fn.template_params):
            values, how = _template_values(self.ctx)
            if name in values:
                self.sources.append(f"template argument {name} = {values[name]} ({how})")
                return values[name]
            self.why = f"`{name}` is a template parameter of {fn.name}"
            self.settled = True
            return None
        decl = lookup(self.ctx, name, at)
        if name == "warpSize" and decl is None:
            # the built-in: 32 threads on every NVIDIA GPU CUDA targets
            self.sources.append("warpSize = 32")
            return 32
        if decl is not None and decl.origin == "parameter":
            if self.runtime and (sizes := spec_sizes(self.ctx, name)) is not None \
                    and len(set(sizes)) == 1:
                self.sources.append(f"{name} = {sizes[0]} (spec)")
                return sizes[0]
            self.why = f"`{name}` is a parameter (a run-time value)"
            self.definite = True
            return None
        if decl is not None:
            if decl.init is not None and decl.pointer == 0 and (
                    "const" in decl.qualifiers or "constexpr" in decl.qualifiers):
                v = self.node(decl.init, self.unit.source, depth + 1)
                if v is not None:
                    self.sources.append(f"{snippet(self.unit.text(decl.start, decl.end))}")
                return v
            unit = self.unit  # (the citation written when the reason is read)
            self.why = lambda: (f"`{name}` is a variable, not a constant "
                                f"({cited(unit, decl.start, decl.end)})")
            self.definite = True
            return None
        self.why = f"`{name}` is not defined in this file as a constant"
        return None


def _c_number(text: str) -> int | float | None:
    t = text.strip().lower().replace("'", "")
    try:
        if t.startswith(("0x", "-0x")):
            return int(t.rstrip("ul"), 16)
        if "." in t or "e" in t or t.endswith("f"):
            return float(t.rstrip("fl"))
        t = t.rstrip("ul")
        if len(t) > 1 and t.startswith("0") and t.isdigit():
            return int(t, 8)
        return int(t)
    except ValueError:
        return None


def _unary(op: str, v: int | float) -> int | float | None:
    if op == "-":
        return -v
    if op == "+":
        return v
    if op == "!":
        return int(not v)
    if op == "~" and isinstance(v, int):
        return ~v
    return None


def _binary(op: str, a: int | float, b: int | float) -> int | float | None:
    both_int = isinstance(a, int) and isinstance(b, int)
    if op in ("/", "%"):
        if b == 0:
            return None
        if op == "/":
            return c_div(a, b)  # (C truncates an integer quotient toward zero)
        return a - b * c_div(a, b) if both_int else None
    simple: dict[str, Callable[[Any, Any], Any]] = {
        "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
        "<": lambda x, y: int(x < y), "<=": lambda x, y: int(x <= y),
        ">": lambda x, y: int(x > y), ">=": lambda x, y: int(x >= y),
        "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y),
        "&&": lambda x, y: int(bool(x) and bool(y)), "||": lambda x, y: int(bool(x) or bool(y)),
    }
    if op in simple:
        return simple[op](a, b)
    if both_int:
        bits: dict[str, Callable[[int, int], int]] = {
            "<<": lambda x, y: x << y, ">>": lambda x, y: x >> y, "&": lambda x, y: x & y,
            "|": lambda x, y: x | y, "^": lambda x, y: x ^ y}
        if op in bits and (op not in ("<<", ">>") or 0 <= b < 64):
            return bits[op](a, b)  # type: ignore[arg-type]
    return None


def _defines(unit: Unit) -> dict[str, str]:
    """Object-like ``#define NAME value`` of the unit (the last one wins)."""

    def build() -> dict[str, str]:
        out: dict[str, str] = {}
        for node in nodes_of(unit, "preproc_def"):
            name = node.child_by_field_id(F_NAME)
            value = node.child_by_field_id(F_VALUE)
            if name is not None and value is not None:
                out[unit.text(name)] = unit.text(value).strip()
        return out

    return unit_memo(unit, "defines", build)


@overload
def kernel_spec(spec: Spec | Bound) -> Spec: ...


@overload
def kernel_spec(spec: None) -> None: ...


def kernel_spec(spec: Spec | Bound | None) -> Spec | None:
    """The spec itself: a ``klc.spec.Bound`` (a spec checked against its kernel) wraps one."""
    return spec.spec if isinstance(spec, Bound) else spec


def spec_for(ctx: Place) -> Spec | Bound | None:
    """The spec, if there is one and it describes the enclosing kernel."""
    spec = ctx.spec
    if spec is None:
        return None
    fn = ctx.function
    if fn is not None and kernel_spec(spec).kernel_name != fn.name:
        return None
    return spec


def _spec_template(ctx: Place) -> dict[str, str]:
    spec = spec_for(ctx)
    inner = kernel_spec(spec)
    return dict(inner.template) if inner is not None else {}


def _template_values(ctx: Place) -> tuple[dict[str, int | float], str]:
    """The numeric template arguments of the enclosing function, and where they come from:
    the spec's ``template:`` values when it gives any, else the function's one
    instantiation in the file (``k<256><<<...>>>``); none when it has several or none."""
    fn = ctx.function
    spec_t = _spec_template(ctx)
    values = {k: n for k, v in spec_t.items() if (n := _c_number(v)) is not None}
    if values or fn is None or not fn.template_params:
        return values, "spec"

    def build() -> list[dict[str, str]]:
        return instantiations(ctx.unit, fn.name)

    inst = unit_memo(ctx.unit, f"instantiations:{fn.name}", build)
    if len(inst) != 1:
        return values, "spec"
    found = {k: n for k, v in inst[0].items() if (n := _c_number(v)) is not None}
    return found, "its one instantiation in the file"


def spec_sizes(ctx: Place, name: str) -> tuple[int, ...] | None:
    """Every value the spec gives a size parameter: its profiling size and each verification
    size. None when the spec does not fix it (the gate then derives sizes, including ones
    that are not multiples of the block size, so nothing may be assumed)."""
    spec = spec_for(ctx)
    inner = kernel_spec(spec)
    if inner is None:
        return None
    sizes, verify = inner.sizes, inner.verify_sizes
    if name not in sizes or not verify:
        return None
    values = [sizes[name]] + [v[name] for v in verify if name in v]
    if len(values) != 1 + len(verify):
        return None
    return tuple(int(v) for v in values)


def constant_of(ctx: Place, b: Binding, runtime: bool = False
                ) -> tuple[int | float | None, str, bool, list[str]]:
    """(value, why not, definitely not constant, sources) of a bound expression: the tree
    first, then clang for what the tree cannot resolve (template arguments, globals)."""
    node = binding_node(b)
    ev = Evaluator(ctx, runtime)
    if node is None:  # a fragment of a token (a metavariable in a #pragma line) or a run
        v = ev.text(b.text) if b.text.strip() else None
        return v, ev.why or f"{quoted(b)} is not one expression", ev.definite, ev.sources
    v = ev.node(node, ctx.unit.source)
    if v is not None or ev.definite or ev.settled:
        return v, ev.why, ev.definite, ev.sources
    facts, why = clang_facts(ctx)
    if facts is None:
        return None, f"{ev.why}; {why}", False, []
    bindings = {k: v2 for k, v2 in _template_values(ctx)[0].items() if isinstance(v2, int)}
    value = facts.constant(b.start, b.end, bindings or None)
    if value is None or isinstance(value, str):
        return None, ev.why, False, []
    return value, "", False, ["clang"]


def from_note(sources: list[str]) -> str:
    return f" (from {'; '.join(dict.fromkeys(sources))})" if sources else ""


def number_arg(ctx: Place, n: Any) -> int | float | None:
    if isinstance(n, int | float):
        return n
    if isinstance(n, str):
        return _c_number(n)
    v, _, _, _ = constant_of(ctx, n, runtime=True)
    return v


def describe_arg(n: Any) -> str:
    return quoted(n) if hasattr(n, "text") else repr(n)


# --------------------------------------------------------------------------------------
# The block's extent: what ``blockDim`` is in a constant


def block_dims(ctx: Place) -> tuple[tuple[int, int, int] | None, int | None, str]:
    """(exact block dimensions, upper bound on threads per block, how known).

    Exact: from the spec's ``block``, or from every launch of the kernel in this file
    agreeing on a constant block. Upper bound: ``__launch_bounds__`` (a launch with more
    threads fails, so it bounds the block; it does not fix it).

    Remembered per function and spec when nothing of the match was read: launches are
    judged where they stand; a spec's block or a ``__launch_bounds__`` expression is text
    whose names resolve where the match is."""
    fn = ctx.function
    if fn is None:
        return None, None, "the match is not inside a function"
    spec = spec_for(ctx)
    key = f"block_dims:{fn.start}:{fn.end}"
    found = ctx.unit.memo.get(key)
    if found is not None and found[0] is spec:  # (the spec object itself: no id reuse)
        return found[1]  # type: ignore[no-any-return]
    result = _find_block_dims(ctx, fn, spec)
    inner = kernel_spec(spec)
    lb = fn.launch_bounds
    if not (inner is not None and inner.block) and (
            result[0] is not None or lb is None or lb.max_threads.strip().isdigit()):
        ctx.unit.memo[key] = (spec, result)
    return result


def _find_block_dims(ctx: Place, fn: Function, spec: Spec | Bound | None
                     ) -> tuple[tuple[int, int, int] | None, int | None, str]:
    unit = ctx.unit
    inner = kernel_spec(spec)
    block = inner.block if inner is not None else ()
    if block:
        dims = spec_dims(ctx, tuple(block))
        if dims is not None:
            return dims, math.prod(dims), f"the spec's block {list(block)}"
    launches = [lc for lc in unit.launches if lc.kernel == fn.name and len(lc.config) >= 2]
    launch_why = ""
    if launches:
        blocks = [launch_block(ctx, lc.config[1], lc.start) for lc in launches]
        found = set(blocks)
        if len(found) == 1 and None not in found:
            dims = found.pop()
            assert dims is not None
            return dims, math.prod(dims), f"the launch at {unit.where(launches[0].start)}"
        unknown = next((lc for lc, b in zip(launches, blocks, strict=True) if b is None), None)
        if unknown is not None:
            launch_why = (f"the launch at {unit.where(unknown.start)} gives block "
                          f"`{' '.join(unknown.config[1].split())}`, not a constant")
        else:
            launch_why = (f"the launches of `{fn.name}` give different blocks: "
                          + ", ".join(sorted({str(list(b or ())) for b in blocks})))
    lb = fn.launch_bounds
    if lb is not None:
        ev = Evaluator(ctx)
        v = ev.text(lb.max_threads)
        if isinstance(v, int):
            return None, v, f"__launch_bounds__({lb.max_threads}) ({unit.where(lb.start)})"
        return None, None, (f"__launch_bounds__({lb.max_threads}) has no known value: "
                            f"{ev.why}")
    if launch_why:
        return None, None, f"no spec block, {launch_why}, and no __launch_bounds__"
    return None, None, (f"no spec block, no launch of `{fn.name}` in this file and no "
                        "__launch_bounds__")


def spec_dims(ctx: Place, exprs: tuple[Any, ...]) -> tuple[int, int, int] | None:
    try:
        spec = spec_for(ctx)
        env = spec.env() if spec is not None else {}
        return launch_dims(tuple(str(e) for e in exprs), env)
    except Exception:  # an expression the spec cannot evaluate without sizes: not known
        return None


def launch_block(ctx: Place, text: str, at: int | None = None) -> tuple[int, int, int] | None:
    m = re.fullmatch(r"\s*dim3\s*\((.*)\)\s*", text, re.S)
    parts = [p for p in m.group(1).split(",")] if m else [text]
    name = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*", text)
    if name is not None and at is not None:
        dim3 = _dim3_variable(ctx, name.group(1), at)
        if dim3 is not None:
            parts = dim3
    values = []
    for p in parts:
        # the launching function's own names first: a local there hides a constant of
        # the file with the same name
        v = _with_host_constants(ctx, p, at) if at is not None else None
        if v is None:
            v = Evaluator(ctx).text(p)
        if not isinstance(v, int):
            return None
        values.append(v)
    values += [1] * (3 - len(values))
    return values[0], values[1], values[2]


def _dim3_variable(ctx: Place, name: str, at: int) -> list[str] | None:
    """The extents a launch's block variable ``name`` holds at offset ``at``: the function
    around the launch declares it once (``dim3_declarations``: ``dim3 name(a, b)``, ``{a, b}``,
    ``= dim3(a, b)``, or one declarator of several, ``dim3 grid(...), name(a, b);``), before
    the launch, and uses it nowhere but in launch configurations (``<<<...>>>``): no
    assignment, no field set, no address taken, no call that could take it by reference.
    None otherwise."""
    unit = ctx.unit
    fn = next((f for f in unit.functions if f.body_start <= at < f.body_end), None)
    if fn is None:
        return None
    decls = dim3_declarations(unit, fn.body_start, fn.body_end, name)
    if len(decls) != 1 or not decls[0].extents:
        return None
    decl = decls[0]
    src = unit.source
    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    if word.search(src, fn.body_start, decl.start) or decl.end > at:
        return None
    if word.search(re.sub(rb"<<<.*?>>>", b" ", src[decl.end:fn.body_end], flags=re.S)):
        return None
    return list(decl.extents)


def _with_host_constants(ctx: Place, text: str, at: int, depth: int = 4) -> object:
    """The value of a launch argument ``text`` that names locals of the function that
    launches (at offset ``at``): ``const int block_size = 256;`` then ``<<<g,
    block_size>>>``. Each such name is replaced by its initialiser (``_host_constant``),
    ``depth`` times at most, and the rest evaluated as the kernel's constants are. None
    when the text names no local of that function (the caller evaluates it as it is);
    ``_HIDDEN`` when one it names is no constant (its value is not known: a global of the
    same name is another variable)."""
    for round_ in range(depth):
        names = [n for n in dict.fromkeys(_NAME.findall(text)) if n not in _NOT_NAMES]
        found = {n: _host_constant(ctx, n, at) for n in names}
        if any(v is _HIDDEN for v in found.values()):
            return _HIDDEN
        if not any(found.values()):
            return None if round_ == 0 else Evaluator(ctx).text(text)
        text = _NAME.sub(lambda m, known=found: f"({known[m.group(0)]})"  # type: ignore[misc]
                         if known.get(m.group(0)) else m.group(0), text)
    return _HIDDEN


_HIDDEN = object()  # a launcher's local that is no constant: its value is not known
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
_NOT_NAMES = frozenset({"sizeof", "int", "unsigned", "long", "short", "char", "size_t",
                        "static_cast", "const"})


def _host_constant(ctx: Place, name: str, at: int) -> object:
    """The initialiser of ``name`` where it is a constant of the function around offset
    ``at`` (a launch): declared once in that function, before ``at``, with an initialiser,
    ``const``/``constexpr`` or never assigned, incremented or handed by address after it.
    ``_HIDDEN`` when the function declares it otherwise (a local that may change, or more
    than one); None when it declares no local of that name (a parameter, a global, a
    macro: the caller's evaluator reads those)."""
    unit = ctx.unit
    fn = next((f for f in unit.functions if f.body_start <= at < f.body_end), None)
    if fn is None or any(p.name == name for p in fn.params):
        return None
    found = [d for d in declarations_named(unit, name)
             if fn.body_start <= d.start < fn.body_end]
    if not found:
        return None
    d = found[0]
    if len(found) != 1 or d.init is None or d.end > at or d.init.type in (
            "argument_list", "initializer_list"):
        return _HIDDEN
    if not d.qualifiers & {"const", "constexpr"} and (
            is_assigned(ctx, name, d.end, fn.body_end)
            or address_taken(unit.source, name, d.end, fn.body_end)):
        return _HIDDEN
    return text_of(unit.source, d.init)


class Dim3Declaration(NamedTuple):
    """One ``dim3`` variable's declaration: the declaration's span (all its declarators),
    the text of each extent its declarator gives, and the span of the extents (between the
    brackets: where a rewrite writes new ones; None when it gives none, ``dim3 b;``)."""

    start: int
    end: int
    extents: tuple[str, ...]
    inner: tuple[int, int] | None


def dim3_declarations(unit: Unit, start: int, end: int, name: str) -> list[Dim3Declaration]:
    """The declarations of the ``dim3`` variable ``name`` in [start, end), in source order,
    read from the tree: ``dim3 b(x, y);``, ``dim3 b{x};``, ``dim3 b = dim3(x, y);``,
    ``dim3 b = {x, y};``, ``const dim3 b(x);`` and one declarator of several
    (``dim3 grid(g), b(x, y);``)."""
    src = unit.source
    out = []
    for node in in_span(nodes_of(unit, "declaration"), start, end):
        ty = node.child_by_field_id(F_TYPE)
        if ty is None or text_of(src, ty) != "dim3":
            continue
        for d in node.children_by_field_id(F_DECLARATOR):
            value = None
            if d.type == "init_declarator":
                value = d.child_by_field_id(F_VALUE)
                d = d.child_by_field_id(F_DECLARATOR)
            elif d.type == "function_declarator":  # the vexing parse of `dim3 b(TILE, ROWS)`:
                # each extent a bare name read as a parameter's type (a local function
                # declaration that no launch could take)
                value = d.child_by_field_id(F_PARAMETERS)
                d = d.child_by_field_id(F_DECLARATOR)
                if value is None or not all(
                        a.type == "parameter_declaration" and a.named_child_count == 1
                        and a.named_children[0].type == "type_identifier"
                        for a in value.named_children if a.type != "comment"):
                    continue
            if d is None or d.type != "identifier" or text_of(src, d) != name:
                continue
            if value is not None and value.type == "call_expression":
                callee = value.child_by_field_id(F_FUNCTION)
                value = value.child_by_field_id(F_ARGUMENTS) if callee is not None \
                    and text_of(src, callee) == "dim3" else None
            if value is None or value.type not in ("argument_list", "initializer_list",
                                                   "parameter_list"):
                out.append(Dim3Declaration(node.start_byte, node.end_byte, (), None))
                continue
            extents = tuple(text_of(src, a) for a in value.named_children
                            if a.type != "comment")
            out.append(Dim3Declaration(node.start_byte, node.end_byte, extents,
                                       (value.start_byte + 1, value.end_byte - 1)))
    return out


def _exact_extent(place: Place) -> tuple[tuple[int, int, int] | None, str]:
    exact, _, how = block_dims(place)
    return exact, how

