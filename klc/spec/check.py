"""Checking a spec against its kernel's signature (``check_spec``): everything that needs the
front end's model (argument types, template parameters), kept apart from loading because a
spec can be read without parsing C++."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from klc.errors import KlcError, where
from klc.spec.expr import ExprError, Number, evaluate, evaluate_int
from klc.spec.load import check_names
from klc.spec.model import (
    AXES,
    ArgSpec,
    CType,
    Spec,
    default_verify_sizes,
    literal_number,
    parse_ctype,
)

if TYPE_CHECKING:
    from klc.cuda.model import Function, Unit


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
            num = literal_number(v)
            if num is None:
                raise KlcError(f"{spec.where('kernel')}: template argument {t.name} = {v!r} is "
                               "not a number")
            constants[t.name] = int(num) if float(num).is_integer() else num
    name_expr = fn.name + (f"<{', '.join(ordered)}>" if tparams else "")

    check_names(spec, set(constants) | set(types))

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
MAX_SHARED = 256 * 1024  # dynamic shared memory bytes (228 KB on the largest GPUs of sm_90)


def _check_values(b: Bound) -> None:
    """Every expression evaluates, at the profiling sizes and at each verify size, to a value
    a launch can take: a block of 1 to 1024 threads, grid dimensions within CUDA's limits,
    shared memory in 0..256 KB, finite non-negative bytes and flops, shapes of at least one
    element. Bad values are bad input, caught here rather than as a failed trial."""
    spec = b.spec
    for sizes in _checked_sizes(b):
        env = b.env(sizes)
        at = "" if sizes is spec.sizes else f" (at verify sizes {sizes})" \
            if spec.verify_sizes else f" (at the verify sizes the gate derives, {sizes})"

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


def _checked_sizes(b: Bound) -> Iterator[dict[str, int]]:
    """The profiling sizes, then the sizes the gate verifies at: the spec's verify_sizes, or
    those it derives from sizes and the block (``default_verify_sizes``), so that an
    expression whole at the profiling sizes but not at a derived one (``n ** 0.5``) is
    caught here, not as a failed verify."""
    spec = b.spec
    yield spec.sizes
    if spec.verify_sizes:
        yield from spec.verify_sizes
        return
    block_x = evaluate_int(spec.block[0], b.env(spec.sizes)) if spec.block else 1
    yield from default_verify_sizes(spec.sizes, block_x)


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
    if parsed is None or spec.dtype:  # an alias: as the compiler (or the spec) says
        parsed = _resolve_alias(spec, unit, fn, a, resolved, parsed)
    if parsed is None:
        raise KlcError(f"{at}: parameter {a.name} of {fn.name} has type {param_type!r}, "
                       "which the gate cannot allocate or pass (name its element type: "
                       "dtype: {NAME: float32|float16|bfloat16|...} or the argument's type)")
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


def _resolve_alias(spec: Spec, unit: Unit, fn: Function, a: ArgSpec, type_text: str,
                   parsed: tuple[CType, int, bool] | None) -> tuple[CType, int, bool] | None:
    """A parameter type the spec model does not know by name (``floatX*``): the spec's
    ``dtype`` for it, else the compiler's view (klc.spec.aliases), else the argument's own
    ``type``; a spec's dtype the compiler contradicts is an error."""
    from klc.spec.aliases import resolve_param

    at = where(spec.path, a.line, a.col)
    got = resolve_param(unit, fn.name, a.name, type_text, spec.dtype, spec.options)
    if got is not None and got[1] == "the spec's dtype":
        seen = resolve_param(unit, fn.name, a.name, type_text, (), spec.options)
        if seen is not None and seen[1] and (seen[0][0].dtype, seen[0][0].lanes) != \
                (got[0][0].dtype, got[0][0].lanes):
            raise KlcError(f"{at}: the spec's dtype makes {a.name} {got[0][0].c_name}, but the "
                           f"compiler sees {type_text} as {seen[0][0].c_name} ({seen[1]}): "
                           "give the option that selects it (options: [-DNAME])")
    if got is not None:
        return got[0]
    if parsed is None and a.type is not None:
        return parse_ctype(a.type)
    return parsed


# --------------------------------------------------------------------------------------
# Editing the launch geometry
