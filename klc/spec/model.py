"""The spec model: the validated, frozen dataclasses a spec block reads into, and the C
element types the gate can allocate."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from klc.errors import where
from klc.safe_eval import Number

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


@dataclass(frozen=True)
class CType:
    """An argument's element type: a NumPy dtype name and the lanes of a CUDA vector type."""

    c_name: str  # "float", "float4", "__half"
    dtype: str  # NumPy dtype name; "bfloat16" is stored as uint16 bits
    lanes: int = 1


SCALAR_TYPES: dict[str, str] = {
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
VECTOR_TYPES: dict[str, tuple[str, int]] = {
    "float2": ("float32", 2), "float4": ("float32", 4), "double2": ("float64", 2),
    "int2": ("int32", 2), "int4": ("int32", 4), "uint2": ("uint32", 2), "uint4": ("uint32", 4),
    "__half2": ("float16", 2), "half2": ("float16", 2),
    "__nv_bfloat162": ("bfloat16", 2),
}
# the dtype names a spec may give an alias (``dtype: {floatX: bfloat16}``), as C types
DTYPE_C_NAMES: dict[str, str] = {
    "float32": "float", "float64": "double", "float16": "__half", "bfloat16": "__nv_bfloat16",
    "int32": "int", "uint32": "unsigned int", "int64": "long long",
    "uint64": "unsigned long long", "int16": "short", "uint16": "unsigned short",
    "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
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
    if base in SCALAR_TYPES:
        return CType(base, SCALAR_TYPES[base]), pointer, const
    if base in VECTOR_TYPES:
        dtype, lanes = VECTOR_TYPES[base]
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
    # element types by the name the source spells them with (``floatX: bfloat16``): what a
    # typedef, a ``using`` alias or a macro stands for where the text cannot tell
    dtype: tuple[tuple[str, str], ...] = ()

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
                         if (v := literal_number(text)) is not None}
        return {**constants, **(self.sizes if sizes is None else sizes)}


def default_verify_sizes(sizes: dict[str, int], block_x: int) -> list[dict[str, int]]:
    """Two sizes per spec: one a multiple of the block, one odd (never a multiple of an even
    block), each capped so that verification stays quick whatever the profiling size."""
    k = len(sizes)
    cap = {1: 1 << 20, 2: 1 << 10}.get(k, 1 << 7)
    aligned, ragged = {}, {}
    for i, (name, p) in enumerate(sizes.items()):
        base = min(p, cap)
        m = max(block_x, 32) if i == 0 else 32
        aligned[name] = base // m * m or p
        r = max(1, base * 3 // 4) | 1
        while block_x > 1 and r % block_x == 0:
            r += 2
        ragged[name] = min(r + 2 * i, p) if p > 2 else p
    return [aligned, ragged] if aligned != ragged else [aligned]


def literal_number(text: str) -> Number | None:
    """A template argument as a number (``256``, ``4u``, ``0.5f``), or None."""
    t = text.strip()
    m = re.fullmatch(r"([-+]?(?:0x[0-9a-fA-F]+|\d+))[uUlL]*", t)
    if m:
        return int(m.group(1), 0)
    try:
        return float(t.rstrip("fF"))
    except ValueError:
        return None
