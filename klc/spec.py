"""The kernel spec: how the gate launches a kernel and on what data.

A kernel file carries its spec in a leading comment block, so that one ``.cu`` file stays one
unit through batch rewriting (docs/spec.md has the whole format)::

    /* klc-spec
    kernel: saxpy
    sizes: {n: 16777216}
    args:
      - {name: a, value: 2.5}
      - {name: x, shape: [n], role: in, init: normal}
      - {name: y, shape: [n], role: inout, init: normal}
      - {name: n, value: n}
    grid: ["ceil_div(n, 256)"]
    block: [256]
    bytes: 12 * n
    flops: 2 * n
    */

Loading happens in two steps, like a compiler front end: the YAML is composed into nodes that
remember their line:column, then validated into frozen dataclasses (``Spec``), refusing unknown
fields and bad values with the file:line:col of the offending node. Everything that depends on
the kernel's signature (argument types, template parameters) is checked separately by
``check_spec`` against the front end's model, because a spec can be read without parsing C++.

Expressions (shapes, grid, block, bytes, flops, scalar values) are evaluated by ``evaluate``,
a whitelist over Python's ``ast``: numbers, names, ``+ - * / // % **``, shifts, ``min``,
``max``, ``ceil_div``, ``abs``. Never ``eval``: a spec is input, and may come from anyone.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import yaml

from klc.errors import KlcError, where

if TYPE_CHECKING:
    from klc.frontend import Function, Unit

Number = int | float

_HEADER_RE = re.compile(rb"/\*[ \t]*klc-spec\b")
ROLES = ("in", "out", "inout")
DIMS = ("grid", "block")
AXES = ("x", "y", "z")
PEAKS = ("fp32", "fp16", "fp64", "tensor")
INIT_KINDS: dict[str, tuple[int, int]] = {
    # kind -> (min, max) number of arguments
    "normal": (0, 2),  # normal(mean, std)
    "uniform": (0, 2),  # uniform(low, high)
    "randint": (2, 2),  # randint(low, high): integers in [low, high)
    "range": (0, 0),  # 0, 1, 2, ... (modulo the dtype's range for small integer types)
    "ones": (0, 0),
    "zeros": (0, 0),
}
DEFAULT_TIMEOUT_S = 60.0

_TOP_FIELDS = ("kernel", "template", "sizes", "verify_sizes", "args", "grid", "block", "shared",
               "bytes", "flops", "peak", "tolerance", "timeout_s", "options")
_ARG_FIELDS = ("name", "type", "shape", "role", "init", "value")


# --------------------------------------------------------------------------------------
# Safe expressions


class ExprError(KlcError):
    """An expression that cannot be evaluated; callers prefix the location of the expression."""


def _ceil_div(a: Number, b: Number) -> int:
    if int(b) == 0:
        raise ExprError("ceil_div by zero")
    return -(-int(a) // int(b))


_FUNCS: dict[str, Callable[..., Number]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "ceil_div": _ceil_div,
    "cdiv": _ceil_div,
    "int": int,
}
_BINOPS: dict[type, Callable[[Any, Any], Number]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_MAX_MAGNITUDE = 1 << 80  # far beyond any size or byte count; stops 2**2**30 style input


def expr_names(expr: str) -> frozenset[str]:
    """The free names an expression uses (function names excluded); ExprError if unparsable."""
    _parse_expr(expr)  # (refuses what does not parse)
    return _names(expr.strip())


@lru_cache(maxsize=4096)
def _names(expr: str) -> frozenset[str]:
    tree = _parsed(expr)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return frozenset(n.id for n in ast.walk(tree)
                     if isinstance(n, ast.Name) and id(n) not in called)


def _parse_expr(expr: str) -> ast.Expression:
    if not isinstance(expr, str) or not expr.strip():
        raise ExprError("empty expression")
    return _parsed(expr.strip())


MAX_EXPR_CHARS = 2000  # a spec expression longer than this is refused (real ones: < 100)
MAX_EXPR_DEPTH = 48  # and one nested deeper (each operator and call is a level)
_ALLOWED_NODES = (ast.Expression, ast.Constant, ast.Name, ast.Load, ast.UnaryOp, ast.USub,
                  ast.UAdd, ast.BinOp, ast.Call, *_BINOPS)


@lru_cache(maxsize=4096)
def _parsed(expr: str) -> ast.Expression:
    """The tree of an expression (read only: shared by every use of the same text, as the
    spec of each file names the same few grid, block and byte expressions). What the
    evaluator would refuse (attributes, lambdas, subscripts, keywords...) is refused here, at
    load, and so is an expression too long or too deeply nested to be a real one."""
    if len(expr) > MAX_EXPR_CHARS:
        raise ExprError(f"expression of {len(expr)} characters (at most {MAX_EXPR_CHARS})")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ExprError(f"cannot parse expression {expr!r}: {e.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise ExprError(f"cannot parse expression {expr[:40]!r}...: nested too deeply"
                        ) from None
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_EXPR_DEPTH:
            raise ExprError(f"expression {expr[:40]!r}... is nested more than "
                            f"{MAX_EXPR_DEPTH} deep")
        if not isinstance(node, _ALLOWED_NODES) or (
                isinstance(node, ast.Constant) and (isinstance(node.value, bool)
                                                    or not isinstance(node.value, int | float))
        ) or (
                isinstance(node, ast.Call) and (node.keywords or not isinstance(node.func, ast.Name)
                                                or node.func.id not in _FUNCS)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id not in _FUNCS:
                raise ExprError(f"{expr!r}: unknown function {node.func.id!r} "
                                f"(allowed: {', '.join(sorted(_FUNCS))})")
            if isinstance(node, ast.Constant):
                raise ExprError(f"{expr!r}: only numbers are allowed, not {node.value!r}")
            raise ExprError(f"{expr!r}: {type(node).__name__} is not allowed in a spec "
                            "expression (only numbers, names, arithmetic, min/max/ceil_div/abs)")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


def evaluate(expr: str | Number, env: Mapping[str, Number]) -> Number:
    """Evaluate a spec expression with the names in ``env``; only arithmetic is allowed.

    ``/`` is true division (use ``//`` or ``ceil_div`` for integers), as in Python, so that a
    byte count like ``n * 4 / 2`` is what it says.
    """
    if isinstance(expr, bool):
        raise ExprError(f"expected a number or an expression, got {expr!r}")
    if isinstance(expr, int | float):
        return expr
    try:
        value = _eval(_parse_expr(expr).body, env, expr)
    except ExprError:
        raise
    except (ArithmeticError, ValueError, TypeError, RecursionError, MemoryError) as e:
        raise ExprError(f"{expr!r}: {type(e).__name__}: {e}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            isinstance(value, float) and not math.isfinite(value)):
        raise ExprError(f"{expr!r} = {value!r} is not a finite real number")
    return value


def _eval(node: ast.AST, env: Mapping[str, Number], text: str) -> Number:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ExprError(f"{text!r}: only numbers are allowed, not {node.value!r}")
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            known = ", ".join(sorted(env)) or "none"
            raise ExprError(f"{text!r}: unknown name {node.id!r} (known: {known})")
        return env[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _eval(node.operand, env, text)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _eval(node.left, env, text), _eval(node.right, env, text)
        if isinstance(node.op, ast.Pow) and (abs(b) > 128 or abs(a) > _MAX_MAGNITUDE):
            raise ExprError(f"{text!r}: exponent too large")
        if isinstance(node.op, ast.LShift | ast.RShift) and not (
                isinstance(b, int) and 0 <= b <= 80 and isinstance(a, int)):
            raise ExprError(f"{text!r}: shifts need integers and a count in 0..80")
        try:
            v = _BINOPS[type(node.op)](a, b)
        except ZeroDivisionError:
            raise ExprError(f"{text!r}: division by zero") from None
        except TypeError as e:
            raise ExprError(f"{text!r}: {e}") from None
        if abs(v) > _MAX_MAGNITUDE:
            raise ExprError(f"{text!r}: value out of range")
        return v
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        fn = _FUNCS.get(node.func.id)
        if fn is None:
            raise ExprError(f"{text!r}: unknown function {node.func.id!r} "
                            f"(allowed: {', '.join(sorted(_FUNCS))})")
        args = [_eval(a, env, text) for a in node.args]
        arity = {"ceil_div": 2, "cdiv": 2, "abs": 1, "int": 1}.get(node.func.id)
        if (arity is not None and len(args) != arity) or not args:
            raise ExprError(f"{text!r}: wrong number of arguments to {node.func.id}")
        return fn(*args)
    raise ExprError(f"{text!r}: {type(node).__name__} is not allowed in a spec expression "
                    "(only numbers, names, arithmetic, min/max/ceil_div/abs)")


def evaluate_int(expr: str | Number, env: Mapping[str, Number]) -> int:
    """Evaluate an expression that must be a whole number (a shape, a grid dimension)."""
    v = evaluate(expr, env)
    if isinstance(v, float):
        if not math.isfinite(v) or not v.is_integer():
            raise ExprError(f"{expr!r} = {v} is not a whole number (use // or ceil_div)")
        v = int(v)
    return v


# --------------------------------------------------------------------------------------
# Types


@dataclass(frozen=True)
class CType:
    """An argument's element type: a NumPy dtype name and the lanes of a CUDA vector type."""

    c_name: str  # "float", "float4", "__half"
    dtype: str  # NumPy dtype name; "bfloat16" is stored as uint16 bits
    lanes: int = 1


_SCALAR_TYPES: dict[str, str] = {
    "float": "float32", "double": "float64", "__half": "float16", "half": "float16",
    "__nv_bfloat16": "bfloat16", "nv_bfloat16": "bfloat16",
    "int": "int32", "signed": "int32", "signed int": "int32", "int32_t": "int32",
    "unsigned": "uint32", "unsigned int": "uint32", "uint32_t": "uint32", "uint": "uint32",
    "long long": "int64", "long long int": "int64", "int64_t": "int64", "long": "int64",
    "unsigned long long": "uint64", "unsigned long long int": "uint64", "uint64_t": "uint64",
    "size_t": "uint64", "unsigned long": "uint64",
    "short": "int16", "int16_t": "int16", "unsigned short": "uint16", "uint16_t": "uint16",
    "char": "int8", "signed char": "int8", "int8_t": "int8",
    "unsigned char": "uint8", "uint8_t": "uint8", "bool": "bool",
}
_VECTOR_TYPES: dict[str, tuple[str, int]] = {
    "float2": ("float32", 2), "float4": ("float32", 4), "double2": ("float64", 2),
    "int2": ("int32", 2), "int4": ("int32", 4), "uint2": ("uint32", 2), "uint4": ("uint32", 4),
    "__half2": ("float16", 2), "half2": ("float16", 2),
    "__nv_bfloat162": ("bfloat16", 2),
}
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct"}


def parse_ctype(text: str) -> tuple[CType, int, bool] | None:
    """Split a C type as written (``const float* __restrict__``) into element type, pointer
    depth and const-ness of the pointee; None for a type the gate cannot allocate."""
    pointer = text.count("*")
    words = [w for w in re.split(r"[\s*&]+", text) if w]
    const = "const" in words[: max(1, len(words))]
    words = [w for w in words if w not in _QUALIFIERS]
    base = " ".join(words)
    if base.startswith("std::"):
        base = base[5:]
    if base in _SCALAR_TYPES:
        return CType(base, _SCALAR_TYPES[base]), pointer, const
    if base in _VECTOR_TYPES:
        dtype, lanes = _VECTOR_TYPES[base]
        return CType(base, dtype, lanes), pointer, const
    return None


# --------------------------------------------------------------------------------------
# The spec model


@dataclass(frozen=True)
class Init:
    """How to fill a buffer or pick a scalar: ``normal``, ``uniform(-1, 1)``, ``randint(0, n)``."""

    kind: str
    args: tuple[str, ...] = ()

    def text(self) -> str:
        return self.kind + (f"({', '.join(self.args)})" if self.args else "")


@dataclass(frozen=True)
class ArgSpec:
    """One kernel argument: a buffer (``shape`` given) or a scalar (``value`` or ``init``)."""

    name: str
    type: str | None  # as written in the spec; None: taken from the kernel's signature
    shape: tuple[str, ...] | None  # element counts per dimension; None for a scalar
    role: str | None  # in | out | inout, for buffers
    init: Init | None
    value: str | None  # scalar value expression
    line: int
    col: int

    @property
    def is_buffer(self) -> bool:
        return self.shape is not None


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


@dataclass(frozen=True)
class Spec:
    """A validated kernel spec (positions kept for messages: ``loc[field] = (line, col)``)."""

    path: str
    kernel: str  # "saxpy", or an instantiation "reduce<256>"
    template: tuple[tuple[str, str], ...]  # (template parameter name, argument text)
    sizes: dict[str, int]
    verify_sizes: tuple[dict[str, int], ...]  # empty: derived by the gate
    args: tuple[ArgSpec, ...]
    grid: tuple[str, ...]
    block: tuple[str, ...]
    shared: str
    bytes: str | None  # None: derived from the buffers (each read once, each written once)
    flops: str | None
    peak: str
    tolerance: Tolerance | None
    timeout_s: float
    options: tuple[str, ...]
    span: tuple[int, int]
    loc: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False)

    @property
    def kernel_name(self) -> str:
        """The bare function name, without template arguments."""
        return self.kernel.split("<", 1)[0].strip()

    def where(self, key: str) -> str:
        line, col = self.loc.get(key, self.loc.get("", (None, None)))
        return where(self.path, line, col)

    def env(self, sizes: Mapping[str, int] | None = None,
            constants: Mapping[str, Number] | None = None) -> dict[str, Number]:
        """The names an expression may use: the sizes (profiling sizes unless given) and the
        template's value constants (by default those the spec writes as number literals, so
        that ``block: [BLOCK]`` with ``template: {BLOCK: 256}`` evaluates without a kernel)."""
        if constants is None:
            constants = {k: v for k, text in self.template
                         if (v := _literal_number(text)) is not None}
        return {**constants, **(self.sizes if sizes is None else sizes)}


# --------------------------------------------------------------------------------------
# Finding and reading the block


def find_spec_block(source: bytes) -> tuple[int, int] | None:
    """Byte span ``[start, end)`` of the ``/* klc-spec ... */`` comment, or None."""
    m = _HEADER_RE.search(source)
    if m is None:
        return None
    end = source.find(b"*/", m.end())
    if end < 0:
        return m.start(), len(source)  # unterminated: load_spec reports it
    return m.start(), end + 2


class _Doc:
    """The YAML text of a spec block and the mapping of its positions back to the file."""

    def __init__(self, source: bytes, path: str, span: tuple[int, int]):
        self.path = path
        self.source = source
        start, end = span
        header_end = source.find(b"\n", start)
        first_line = source.count(b"\n", 0, start) + 1
        if not source[start:end].endswith(b"*/"):
            raise KlcError(f"{where(path, first_line, 1)}: klc-spec block is not closed "
                           "with */")
        if header_end < 0 or header_end > end - 2:
            raise KlcError(f"{where(path, first_line, 1)}: put the spec's YAML on the lines "
                           "after '/* klc-spec' and close the block with '*/' on its own line")
        rest = source[_HEADER_RE.match(source, start).end():header_end]  # type: ignore[union-attr]
        if rest.strip():
            raise KlcError(f"{where(path, first_line, 1)}: put nothing after 'klc-spec' on its "
                           "line; the YAML starts on the next line")
        self.yaml_start = header_end + 1  # byte offset of the YAML text
        self.first_line = first_line + 1  # file line of YAML line 0
        self.text = source[self.yaml_start:end - 2].decode("utf-8", "replace")

    def pos(self, mark: yaml.Mark | None) -> tuple[int, int]:
        if mark is None:
            return self.first_line, 1
        return self.first_line + mark.line, mark.column + 1

    def at(self, node: yaml.Node | None) -> str:
        line, col = self.pos(node.start_mark if node is not None else None)
        return where(self.path, line, col)

    def byte_span(self, node: yaml.Node) -> tuple[int, int]:
        """The file byte span of a scalar node (YAML marks count characters)."""
        a = len(self.text[: node.start_mark.index].encode())
        b = len(self.text[: node.end_mark.index].encode())
        return self.yaml_start + a, self.yaml_start + b


# libyaml's loader (PyYAML's C extension) where it is built: the pure-Python one took 2.6 ms
# of a 3 KB kernel file's 7 ms listing. Both give the same nodes and marks; on bad YAML the
# pure one composes again, for its messages say more ("found character '\\t' that cannot
# start any token", where libyaml leaves out which character).
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)
_FAILED = object()


def _compose(doc: _Doc) -> yaml.MappingNode:
    root = _FAILED if _FAST_LOADER is None else _compose_fast(doc.text)
    if root is _FAILED:
        root = _compose_pure(doc)
    if not isinstance(root, yaml.MappingNode):
        raise KlcError(f"{doc.at(root)}: klc-spec must be a mapping of fields "
                       f"({', '.join(_TOP_FIELDS)})")
    return root


def _compose_fast(text: str) -> object:
    loader = _FAST_LOADER(text)  # type: ignore[misc]
    try:
        return loader.get_single_node()
    except yaml.YAMLError:
        return _FAILED
    finally:
        loader.dispose()


def _compose_pure(doc: _Doc) -> object:
    loader = None
    try:
        loader = yaml.SafeLoader(doc.text)  # (its reader refuses control characters)
        return loader.get_single_node()
    except yaml.MarkedYAMLError as e:
        line, col = doc.pos(e.problem_mark)
        raise KlcError(f"{where(doc.path, line, col)}: bad YAML in klc-spec: {e.problem}"
                       ) from None
    except yaml.YAMLError as e:
        raise KlcError(f"{doc.at(None)}: bad YAML in klc-spec: {e}") from None
    except RecursionError:
        raise KlcError(f"{doc.at(None)}: bad YAML in klc-spec: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def _scalar(doc: _Doc, node: yaml.Node, what: str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise KlcError(f"{doc.at(node)}: {what} must be a single value")
    # a constructor alone: a whole SafeLoader per scalar (reader, scanner, parser) cost more
    # than the document's composition
    try:
        return yaml.constructor.SafeConstructor().construct_object(node)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as e:  # a !!tag it refuses
        problem = getattr(e, "problem", None) or str(e)
        raise KlcError(f"{doc.at(node)}: {what}: {problem}") from None


def _items(doc: _Doc, node: yaml.MappingNode, known: tuple[str, ...], what: str
           ) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for k, v in node.value:
        key = _scalar(doc, k, "a field name")
        if key not in known:
            raise KlcError(f"{doc.at(k)}: unknown field {key!r} in {what} "
                           f"(known: {', '.join(known)})")
        if key in out:
            raise KlcError(f"{doc.at(k)}: field {key!r} given twice in {what}")
        out[key] = (k, v)
    return out


def _expr(doc: _Doc, node: yaml.Node, what: str) -> str:
    v = _scalar(doc, node, what)
    if isinstance(v, bool) or not isinstance(v, int | float | str):
        raise KlcError(f"{doc.at(node)}: {what} must be a number or an expression")
    text = str(v)
    try:
        _parse_expr(text)
    except ExprError as e:
        hint = ""
        if isinstance(node, yaml.ScalarNode) and not node.style and \
                text.count("(") != text.count(")"):
            hint = " (an expression with a comma inside a [...] list must be quoted)"
        raise KlcError(f"{doc.at(node)}: {what}: {e}{hint}") from None
    return text


def _expr_list(doc: _Doc, node: yaml.Node, what: str, max_len: int) -> tuple[str, ...]:
    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    if not 1 <= len(items) <= max_len:
        raise KlcError(f"{doc.at(node)}: {what} needs 1 to {max_len} values, got {len(items)}")
    return tuple(_expr(doc, n, what) for n in items)


def _sizes(doc: _Doc, node: yaml.Node, what: str) -> dict[str, int]:
    if not isinstance(node, yaml.MappingNode):
        raise KlcError(f"{doc.at(node)}: {what} must be a mapping like {{n: 1048576}}")
    out: dict[str, int] = {}
    for k, v in node.value:
        name = _scalar(doc, k, "a size name")
        if not isinstance(name, str) or not name.isidentifier():
            raise KlcError(f"{doc.at(k)}: size name {name!r} is not an identifier")
        if name in out:
            raise KlcError(f"{doc.at(k)}: size {name} given twice in {what}")
        value = _scalar(doc, v, f"size {name}")
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
            raise KlcError(f"{doc.at(v)}: size {name} must be a positive integer (at most "
                           f"2**40), got {value!r}")
        out[name] = value
    if not out:
        raise KlcError(f"{doc.at(node)}: {what} is empty")
    return out


def _init(doc: _Doc, node: yaml.Node) -> Init:
    text = _scalar(doc, node, "init")
    if isinstance(text, int | float) and not isinstance(text, bool):
        return Init("constant", (str(text),))
    if not isinstance(text, str):
        raise KlcError(f"{doc.at(node)}: init must be one of {', '.join(INIT_KINDS)}")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        tree = None
    if isinstance(tree, ast.Name):
        kind, args = tree.id, ()
    elif isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and not tree.keywords:
        kind, args = tree.func.id, tuple(ast.unparse(a) for a in tree.args)
    else:
        raise KlcError(f"{doc.at(node)}: init {text!r} is not one of "
                       f"{', '.join(INIT_KINDS)} (e.g. uniform(-1, 1), randint(0, n))")
    if kind not in INIT_KINDS:
        raise KlcError(f"{doc.at(node)}: unknown init {kind!r} (known: {', '.join(INIT_KINDS)})")
    lo, hi = INIT_KINDS[kind]
    if not lo <= len(args) <= hi:
        raise KlcError(f"{doc.at(node)}: init {kind} takes {lo} to {hi} arguments")
    for a in args:
        try:
            _parse_expr(a)
        except ExprError as e:
            raise KlcError(f"{doc.at(node)}: init {kind}: {e}") from None
    return Init(kind, args)


def _arg(doc: _Doc, node: yaml.Node, index: int) -> ArgSpec:
    what = f"args[{index}]"
    if not isinstance(node, yaml.MappingNode):
        raise KlcError(f"{doc.at(node)}: {what} must be a mapping like "
                       "{name: x, shape: [n], role: in, init: normal}")
    f = _items(doc, node, _ARG_FIELDS, what)
    line, col = doc.pos(node.start_mark)
    if "name" not in f:
        raise KlcError(f"{doc.at(node)}: {what} has no name")
    name = _scalar(doc, f["name"][1], "name")
    if not isinstance(name, str) or not name.isidentifier():
        raise KlcError(f"{doc.at(f['name'][1])}: argument name {name!r} is not an identifier")
    typ = None
    if "type" in f:
        typ = _scalar(doc, f["type"][1], "type")
        if not isinstance(typ, str) or parse_ctype(typ) is None:
            raise KlcError(f"{doc.at(f['type'][1])}: argument {name}: unknown type {typ!r} "
                           f"(known: {', '.join([*_SCALAR_TYPES, *_VECTOR_TYPES])}, "
                           "with * for a pointer)")
    shape = None
    if "shape" in f:
        shape = _expr_list(doc, f["shape"][1], f"shape of {name}", 8)
    role = None
    if "role" in f:
        role = _scalar(doc, f["role"][1], "role")
        if role not in ROLES:
            raise KlcError(f"{doc.at(f['role'][1])}: argument {name}: role must be one of "
                           f"{', '.join(ROLES)}, got {role!r}")
        if shape is None:
            raise KlcError(f"{doc.at(f['role'][1])}: argument {name}: a role needs a shape "
                           "(a scalar has a value or an init instead)")
    init = _init(doc, f["init"][1]) if "init" in f else None
    value = _expr(doc, f["value"][1], f"value of {name}") if "value" in f else None
    if shape is not None:
        if value is not None:
            raise KlcError(f"{doc.at(f['value'][1])}: argument {name} is a buffer (it has a "
                           "shape); a value is for scalars, use init")
        if role is None:
            raise KlcError(f"{doc.at(node)}: buffer argument {name} needs a role "
                           f"({', '.join(ROLES)})")
        if init is None and role != "out":
            init = Init("normal")
    elif value is not None and init is not None:
        raise KlcError(f"{doc.at(node)}: scalar argument {name}: give a value or an init, "
                       "not both")
    return ArgSpec(name, typ, shape, role, init, value, line, col)


MAX_SIZE = 1 << 40  # a size beyond this is a typo, not a buffer
MAX_SPEC_BYTES = 256 * 1024  # a spec block longer than this is refused (real ones: < 2 KB)


def load_spec(source: bytes, path: str) -> Spec | None:
    """Read the file's spec block; None when it has none, KlcError (file:line:col) if bad.

    The one place spec text is read: whatever the block holds, the outcome is a Spec, None or
    a KlcError naming the file and line (never another exception)."""
    span = find_spec_block(source)
    if span is None:
        return None
    line = source.count(b"\n", 0, span[0]) + 1
    if span[1] - span[0] > MAX_SPEC_BYTES:
        raise KlcError(f"{where(path, line, 1)}: klc-spec block of {span[1] - span[0]} bytes "
                       f"(at most {MAX_SPEC_BYTES})")
    again = _HEADER_RE.search(source, span[1])
    if again is not None:
        second = source.count(b"\n", 0, again.start()) + 1
        raise KlcError(f"{where(path, second, 1)}: a second klc-spec block (the first is at "
                       f"line {line}); a file has one")
    try:
        return _load_spec(source, path, span)
    except KlcError:
        raise
    except RecursionError:
        raise KlcError(f"{where(path, line, 1)}: klc-spec nested too deeply") from None
    except (yaml.YAMLError, ArithmeticError, ValueError, TypeError, MemoryError) as e:
        raise KlcError(f"{where(path, line, 1)}: bad klc-spec: {type(e).__name__}: {e}"
                       ) from None


def _load_spec(source: bytes, path: str, span: tuple[int, int]) -> Spec:
    doc = _Doc(source, path, span)
    root = _compose(doc)
    f = _items(doc, root, _TOP_FIELDS, "klc-spec")
    loc: dict[str, tuple[int, int]] = {"": doc.pos(root.start_mark)}
    for key, (_, v) in f.items():
        loc[key] = doc.pos(v.start_mark)
    for key in ("kernel", "sizes", "args", "grid", "block"):
        if key not in f:
            raise KlcError(f"{doc.at(root)}: klc-spec has no {key!r} field")

    kernel = _scalar(doc, f["kernel"][1], "kernel")
    if not isinstance(kernel, str) or not re.fullmatch(r"[A-Za-z_]\w*(\s*<.*>)?", kernel.strip()):
        raise KlcError(f"{doc.at(f['kernel'][1])}: kernel must be a function name, optionally "
                       f"with template arguments (reduce<256>), got {kernel!r}")
    template: list[tuple[str, str]] = []
    if "template" in f:
        node = f["template"][1]
        if not isinstance(node, yaml.MappingNode):
            raise KlcError(f"{doc.at(node)}: template must be a mapping like {{BLOCK: 256}}")
        for k, v in node.value:
            tname = _scalar(doc, k, "a template parameter")
            if not isinstance(tname, str) or not tname.isidentifier():
                raise KlcError(f"{doc.at(k)}: template parameter {tname!r} is not a name")
            val = _scalar(doc, v, f"template argument {tname}")
            if isinstance(val, bool):
                val = "true" if val else "false"
            template.append((tname, str(val)))
            loc[f"template.{tname}"] = doc.pos(v.start_mark)
        if "<" in kernel:
            raise KlcError(f"{doc.at(node)}: give template arguments either in kernel "
                           f"({kernel}) or in template, not both")

    sizes = _sizes(doc, f["sizes"][1], "sizes")
    verify: list[dict[str, int]] = []
    if "verify_sizes" in f:
        node = f["verify_sizes"][1]
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            raise KlcError(f"{doc.at(node)}: verify_sizes must be a list of size mappings")
        for item in node.value:
            s = _sizes(doc, item, "a verify size")
            if set(s) != set(sizes):
                raise KlcError(f"{doc.at(item)}: a verify size must set the same names as "
                               f"sizes ({', '.join(sizes)}), got {', '.join(s)}")
            verify.append(s)

    args_node = f["args"][1]
    if not isinstance(args_node, yaml.SequenceNode):
        raise KlcError(f"{doc.at(args_node)}: args must be a list, one entry per kernel "
                       "parameter in order")
    args = tuple(_arg(doc, n, i) for i, n in enumerate(args_node.value))
    seen: set[str] = set()
    for a, n in zip(args, args_node.value, strict=True):
        if a.name in seen:
            raise KlcError(f"{doc.at(n)}: argument {a.name} listed twice")
        seen.add(a.name)
        loc[f"arg.{a.name}"] = (a.line, a.col)

    grid = _expr_list(doc, f["grid"][1], "grid", 3)
    block = _expr_list(doc, f["block"][1], "block", 3)
    shared = _expr(doc, f["shared"][1], "shared") if "shared" in f else "0"
    nbytes = _expr(doc, f["bytes"][1], "bytes") if "bytes" in f else None
    flops = _expr(doc, f["flops"][1], "flops") if "flops" in f else None
    peak = "fp32"
    if "peak" in f:
        peak = _scalar(doc, f["peak"][1], "peak")
        if peak not in PEAKS:
            raise KlcError(f"{doc.at(f['peak'][1])}: peak must be one of {', '.join(PEAKS)}")
    tolerance = None
    if "tolerance" in f:
        node = f["tolerance"][1]
        if not isinstance(node, yaml.MappingNode):
            raise KlcError(f"{doc.at(node)}: tolerance must be a mapping {{rtol: .., atol: ..}}")
        t = _items(doc, node, ("rtol", "atol"), "tolerance")
        vals = {}
        for key in ("rtol", "atol"):
            v = _scalar(doc, t[key][1], key) if key in t else 0.0
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < 1:
                raise KlcError(f"{doc.at(t[key][1] if key in t else node)}: {key} must be a "
                               "number in [0, 1)")
            vals[key] = float(v)
        tolerance = Tolerance(vals["rtol"], vals["atol"])
    timeout = DEFAULT_TIMEOUT_S
    if "timeout_s" in f:
        timeout = _scalar(doc, f["timeout_s"][1], "timeout_s")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) \
                or not 0 < timeout <= 86400:
            raise KlcError(f"{doc.at(f['timeout_s'][1])}: timeout_s must be a number of seconds "
                           "in (0, 86400]")
        timeout = float(timeout)
    options: tuple[str, ...] = ()
    if "options" in f:
        node = f["options"][1]
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        options = tuple(str(_scalar(doc, n, "an option")) for n in items)
        for n, o in zip(items, options, strict=True):
            if not o.startswith("-") or o.split("=")[0] in ("-arch", "--gpu-architecture"):
                raise KlcError(f"{doc.at(n)}: option {o!r}: give NVRTC options starting with "
                               "'-' (the arch comes from the device or --arch)")

    spec = Spec(path=path, kernel=kernel.strip(), template=tuple(template), sizes=sizes,
                verify_sizes=tuple(verify), args=args, grid=grid, block=block, shared=shared,
                bytes=nbytes, flops=flops, peak=peak, tolerance=tolerance, timeout_s=timeout,
                options=options, span=span, loc=loc)
    if "<" not in spec.kernel:  # else the template's names are known only from the signature
        _check_names(spec, {n for n, _ in spec.template})
    return spec


def _check_names(spec: Spec, known: set[str]) -> None:
    """Every name an expression uses must be a size or a template parameter: an unknown name
    is a typo the user should hear about now, not at launch on the GPU machine."""
    checks: list[tuple[str, str, str]] = []
    for a in spec.args:
        for e in a.shape or ():
            checks.append((f"arg.{a.name}", e, f"shape of {a.name}"))
        if a.value is not None:
            checks.append((f"arg.{a.name}", a.value, f"value of {a.name}"))
        for e in a.init.args if a.init else ():
            checks.append((f"arg.{a.name}", e, f"init of {a.name}"))
    for key in ("grid", "block"):
        for e in getattr(spec, key):
            checks.append((key, e, key))
    for key in ("shared", "bytes", "flops"):
        e = getattr(spec, key)
        if e is not None:
            checks.append((key, e, key))
    for key, e, what in checks:
        unknown = sorted(expr_names(e) - known - set(spec.sizes))
        if unknown:
            others = sorted(known)
            raise KlcError(f"{spec.where(key)}: {what} refers to unknown size {unknown[0]!r} "
                           f"(sizes: {', '.join(spec.sizes)}"
                           + (f"; template constants: {', '.join(others)}" if others else "")
                           + ")")


# --------------------------------------------------------------------------------------
# Checking against the kernel's signature


@dataclass(frozen=True)
class BoundArg:
    spec: ArgSpec
    ctype: CType
    pointer: bool
    const: bool


@dataclass(frozen=True)
class Bound:
    """A spec checked against its kernel: what the gate needs to compile and launch it."""

    spec: Spec
    function_name: str
    name_expression: str  # what NVRTC instantiates and lowers: "saxpy", "reduce<256, float>"
    constants: dict[str, Number]  # value template parameters, usable in expressions
    args: tuple[BoundArg, ...]

    def env(self, sizes: Mapping[str, int] | None = None) -> dict[str, Number]:
        return self.spec.env(sizes, self.constants)


def _split_template_args(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _literal_number(text: str) -> Number | None:
    """A template argument as a number (``256``, ``4u``, ``0.5f``), or None."""
    t = text.strip()
    m = re.fullmatch(r"([-+]?(?:0x[0-9a-fA-F]+|\d+))[uUlL]*", t)
    if m:
        return int(m.group(1), 0)
    try:
        return float(t.rstrip("fF"))
    except ValueError:
        return None


def check_spec(spec: Spec, unit: Unit) -> Bound:
    """Check the spec against the kernel's signature in ``unit``: the kernel exists, every
    parameter has exactly one argument entry, in order, with a compatible type and a role that
    respects ``const``. Returns what the gate needs (the name expression, the template
    constants, each argument's element type)."""
    fn = _find_kernel(spec, unit)
    tparams = list(fn.template_params)
    given: list[tuple[str, str]]
    if "<" in spec.kernel:
        inner = spec.kernel[spec.kernel.index("<") + 1: spec.kernel.rindex(">")]
        values = _split_template_args(inner)
        if len(values) > len(tparams):
            raise KlcError(f"{spec.where('kernel')}: {spec.kernel} gives {len(values)} template "
                           f"arguments, {fn.name} has {len(tparams)}")
        given = [(tparams[i].name, v) for i, v in enumerate(values)]
    else:
        names = {t.name for t in tparams}
        for tname, _ in spec.template:
            if tname not in names:
                raise KlcError(f"{spec.where('template.' + tname)}: {fn.name} has no template "
                               f"parameter {tname!r} (it has: "
                               f"{', '.join(t.name for t in tparams) or 'none'})")
        tmap = dict(spec.template)
        given = [(t.name, tmap[t.name]) for t in tparams if t.name in tmap]
    gmap = dict(given)
    ordered: list[str] = []
    for t in tparams:
        if t.name in gmap:
            ordered.append(gmap[t.name])
        elif t.default is not None:
            ordered.append(t.default)
        else:
            raise KlcError(f"{spec.where('kernel')}: template parameter {t.name} of {fn.name} "
                           "has no value: give it in template or in kernel (name<...>)")
    constants: dict[str, Number] = {}
    types: dict[str, str] = {}
    for t, v in zip(tparams, ordered, strict=True):
        if t.kind == "type":
            types[t.name] = v
        else:
            num = _literal_number(v)
            if num is None:
                raise KlcError(f"{spec.where('kernel')}: template argument {t.name} = {v!r} is "
                               "not a number")
            constants[t.name] = int(num) if float(num).is_integer() else num
    name_expr = fn.name + (f"<{', '.join(ordered)}>" if tparams else "")

    _check_names(spec, set(constants) | set(types))

    params = fn.params
    by_name = {a.name: a for a in spec.args}
    for p in params:
        if p.name not in by_name:
            raise KlcError(f"{spec.where('args')}: the spec has no entry for parameter "
                           f"{p.name!r} ({p.type}) of {fn.name} at {unit.where(p.start)}")
    for i, a in enumerate(spec.args):
        if i >= len(params) or params[i].name != a.name:
            if a.name not in {p.name for p in params}:
                raise KlcError(f"{where(spec.path, a.line, a.col)}: argument {a.name!r} is not "
                               f"a parameter of {fn.name} (parameters: "
                               f"{', '.join(p.name for p in params)})")
            raise KlcError(f"{where(spec.path, a.line, a.col)}: argument {a.name!r} is out of "
                           f"order: list args in the order of {fn.name}'s parameters "
                           f"({', '.join(p.name for p in params)})")
    bound: list[BoundArg] = []
    for a, p in zip(spec.args, params, strict=True):
        bound.append(_bind_arg(spec, unit, fn, a, p.type, types))
    result = Bound(spec, fn.name, name_expr, constants, tuple(bound))
    _check_values(result)
    return result


MAX_BLOCK = (1024, 1024, 64)  # CUDA's limits on a block's and a grid's dimensions
MAX_GRID = ((1 << 31) - 1, 65535, 65535)
MAX_THREADS = 1024
MAX_SHARED = 256 * 1024  # dynamic shared memory bytes (228 KB on the largest GPUs today)


def _check_values(b: Bound) -> None:
    """Every expression evaluates, at the profiling sizes and at each verify size, to a value
    a launch can take: a block of 1 to 1024 threads, grid dimensions within CUDA's limits,
    shared memory in 0..256 KB, finite non-negative bytes and flops, shapes of at least one
    element. Bad values are bad input, caught here rather than as a failed trial."""
    spec = b.spec
    for sizes in (spec.sizes, *spec.verify_sizes):
        env = b.env(sizes)
        at = "" if sizes is spec.sizes else f" (at verify sizes {sizes})"

        def value(key: str, expr: str, what: str, whole: bool = True,
                  env: dict[str, Number] = env, at: str = at) -> Number:
            try:
                return evaluate_int(expr, env) if whole else evaluate(expr, env)
            except ExprError as err:
                raise KlcError(f"{spec.where(key)}: {what}{at}: {err}") from None

        for key, limits in (("block", MAX_BLOCK), ("grid", MAX_GRID)):
            dims = [value(key, e, key) for e in getattr(spec, key)]
            for axis, (v, hi) in enumerate(zip(dims, limits, strict=False)):
                if not 1 <= v <= hi:
                    raise KlcError(f"{spec.where(key)}: {key}.{AXES[axis]} = {v}{at}: must be in "
                                   f"1..{hi}")
            if key == "block" and math.prod(dims) > MAX_THREADS:
                raise KlcError(f"{spec.where(key)}: a block of {math.prod(dims)} threads{at} "
                               f"(at most {MAX_THREADS})")
        shared = value("shared", spec.shared, "shared")
        if not 0 <= shared <= MAX_SHARED:
            raise KlcError(f"{spec.where('shared')}: shared = {shared}{at}: must be in "
                           f"0..{MAX_SHARED} bytes")
        for key in ("bytes", "flops"):
            expr = getattr(spec, key)
            if expr is not None and value(key, expr, key, whole=False) < 0:
                raise KlcError(f"{spec.where(key)}: {key}{at} is negative")
        for a in spec.args:
            for e in a.shape or ():
                if value(f"arg.{a.name}", e, f"shape of {a.name}") < 1:
                    raise KlcError(f"{spec.where('arg.' + a.name)}: shape of {a.name}{at}: "
                                   f"{e} is less than 1")
            if a.value is not None:
                value(f"arg.{a.name}", a.value, f"value of {a.name}", whole=False)
            for e in a.init.args if a.init else ():
                value(f"arg.{a.name}", e, f"init of {a.name}", whole=False)


def _find_kernel(spec: Spec, unit: Unit) -> Function:
    name = spec.kernel_name
    kernels = [f for f in unit.functions if f.is_kernel and f.name == name]
    if not kernels:
        available = ", ".join(sorted({f.name for f in unit.kernels})) or "none"
        raise KlcError(f"{spec.where('kernel')}: kernel {name!r} is not defined in this file "
                       f"(kernels here: {available})")
    return kernels[-1]  # a forward declaration precedes the definition


def _bind_arg(spec: Spec, unit: Unit, fn: Function, a: ArgSpec, param_type: str,
              types: dict[str, str]) -> BoundArg:
    at = where(spec.path, a.line, a.col)
    resolved = param_type
    for tname, tval in types.items():
        resolved = re.sub(rf"\b{re.escape(tname)}\b", tval, resolved)
    parsed = parse_ctype(resolved)
    if parsed is None:
        raise KlcError(f"{at}: parameter {a.name} of {fn.name} has type {param_type!r}, "
                       "which the gate cannot allocate or pass")
    ctype, pointer, const = parsed
    if pointer > 1:
        raise KlcError(f"{at}: parameter {a.name} is a pointer to pointer ({param_type}); the "
                       "gate passes flat buffers only")
    if a.type is not None:
        want = parse_ctype(a.type)
        assert want is not None  # validated at load
        if want[0].dtype != ctype.dtype or want[0].lanes != ctype.lanes or \
                (want[1] > 0) != (pointer > 0):
            raise KlcError(f"{at}: argument {a.name}: the spec says type {a.type!r}, the "
                           f"kernel's parameter is {param_type!r}")
    if pointer and not a.is_buffer:
        raise KlcError(f"{at}: parameter {a.name} is a pointer ({param_type}): give it a shape "
                       "and a role")
    if not pointer and a.is_buffer:
        raise KlcError(f"{at}: parameter {a.name} is a scalar ({param_type}), but the spec "
                       "gives it a shape")
    if pointer and const and a.role in ("out", "inout"):
        raise KlcError(f"{at}: argument {a.name} has role {a.role}, but the kernel declares it "
                       f"const ({param_type})")
    if not pointer and a.value is None and a.init is None and a.name not in spec.sizes:
        raise KlcError(f"{at}: scalar argument {a.name} needs a value (an expression of the "
                       "sizes) or an init")
    return BoundArg(a, ctype, bool(pointer), const)


# --------------------------------------------------------------------------------------
# Editing the launch geometry


def scale_launch(source: bytes, dim: str, axis: str, op: str, factor: int) -> bytes:
    """Scale one axis of the grid or block in the spec block, editing only that expression's
    text: ``/`` wraps it as ``ceil_div(expr, factor)`` (thread coarsening divides the grid),
    ``*`` as ``(expr) * factor``. All other bytes of the file stay as they were."""
    if dim not in DIMS or axis not in AXES or op not in ("/", "*"):
        raise KlcError(f"scale_launch: dim must be grid|block, axis x|y|z, op / or *; got "
                       f"{dim} {axis} {op}")
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
        raise KlcError(f"scale_launch: factor must be a positive integer, got {factor!r}")
    span = find_spec_block(source)
    if span is None:
        raise KlcError("scale_launch: the file has no klc-spec block")
    path = "<spec>"
    doc = _Doc(source, path, span)
    root = _compose(doc)
    f = _items(doc, root, _TOP_FIELDS, "klc-spec")
    if dim not in f:
        raise KlcError(f"{doc.at(root)}: klc-spec has no {dim!r} field")
    node = f[dim][1]
    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    index = AXES.index(axis)
    if index >= len(items):
        raise KlcError(f"{doc.at(node)}: {dim} has no {axis} dimension to scale")
    target = items[index]
    old = _expr(doc, target, dim)
    new = _undo_scale(old, op, factor, source) or (
        f"ceil_div({old}, {factor})" if op == "/" else f"({old}) * {factor}")
    a, b = doc.byte_span(target)
    in_flow = isinstance(node, yaml.SequenceNode) and node.flow_style
    if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", new):
        text = new  # a bare name (an undone scaling gives back `ROWS`) needs no quotes
    elif target.style in ('"', "'"):
        q = target.style
        text = q + (new.replace("'", "''") if q == "'" else new.replace('"', '\\"')) + q
    elif in_flow and not re.fullmatch(r"[A-Za-z_0-9]+", new):
        text = f'"{new}"'  # a bare comma would split the flow list
    else:
        text = new
    out = source[:a] + text.encode() + source[b:]
    # the edit must read back as exactly the new expression
    check = _Doc(out, path, find_spec_block(out))  # type: ignore[arg-type]
    f2 = _items(check, _compose(check), _TOP_FIELDS, "klc-spec")
    n2 = f2[dim][1]
    items2 = n2.value if isinstance(n2, yaml.SequenceNode) else [n2]
    if _expr(check, items2[index], dim) != new:
        raise KlcError(f"scale_launch: editing {dim}.{axis} did not read back as {new!r}")
    return out


def _undo_scale(old: str, op: str, factor: int, source: bytes) -> str | None:
    """The expression before an earlier scaling that this one undoes, or None: ``(e) * k``
    divided by k is e; ``ceil_div(e, k)`` times k is e when e is a known multiple of k (a
    skill reversing a simplification gives back the spec's text as it was)."""
    pattern = rf"\((.*)\) \* {factor}" if op == "/" else rf"ceil_div\((.*), {factor}\)"
    m = re.fullmatch(pattern, old.strip(), re.S)
    if m is None or not _balanced(m.group(1)):
        return None
    inner = m.group(1)
    if op == "*":
        try:
            spec = load_spec(source, "<spec>")
            value = evaluate(inner, spec.env() if spec is not None else {})
        except KlcError:
            return None
        if not isinstance(value, int) or value % factor:
            return None
    return inner


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def launch_dims(exprs: tuple[str, ...], env: Mapping[str, Number]) -> tuple[int, int, int]:
    """Evaluate grid or block expressions to a 3-tuple (missing axes are 1)."""
    vals = [evaluate_int(e, env) for e in exprs]
    return tuple(vals + [1] * (3 - len(vals)))  # type: ignore[return-value]


def element_count(shape: tuple[str, ...], env: Mapping[str, Number]) -> int:
    return math.prod(evaluate_int(e, env) for e in shape)
