"""libclang, set up to read CUDA with no toolkit, and its types as plain data.

Parsing a unit never imports ``clang.cindex``: ``load`` imports it on the first fact asked
(``klc.cuda.facts``). No CUDA toolkit is needed. The flags (``CLANG_ARGS``) make clang parse
the device side of CUDA with no CUDA installation and no clang resource directory (the pip
``libclang`` wheel ships neither):

- ``-x cuda --cuda-device-only --cuda-gpu-arch=sm_90``: the semantics of the device
  compilation, the one kernels live in: ``__CUDA_ARCH__`` is defined (so ``#if __CUDA_ARCH__``
  branches are the ones nvcc would compile for the GPU) and sizes are the nvptx64 target's.
  Host functions are still parsed and type-checked, so launches in host code are seen too.
- ``-nocudainc -nocudalib --cuda-path=<virtual dir>``: never look for a toolkit, not even an
  installed one, so that the facts are the same on every machine.
- ``-include klc_cuda_stub.h``: ``klc/cuda/cuda_stub.h`` declares what CUDA code uses
  (attributes, built-in variables, vector types, intrinsics, atomics, cooperative groups),
  and the usual CUDA headers (``<cuda_runtime.h>``, ``<cooperative_groups.h>``, ...) resolve
  to empty unsaved files in an ``-isystem`` directory that is searched before the system's.
- ``-idirafter <virtual dir>``: small stand-ins for the compiler's own headers (``stddef.h``,
  ``stdarg.h``, ``limits.h``, ``float.h``, ``stdbool.h``) that the system's C and C++ headers
  expect next to them; searched last, so a real clang resource directory wins when present.

Constant values come from clang's evaluator (``clang_Cursor_Evaluate``, which the 18.x Python
bindings do not wrap, so it is bound here through ctypes).

Beside the model in ``klc.cuda`` (``docs/architecture.md``, "klc.cuda"): it gives clang's
types as the model's ``TypeFact``.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from klc.cuda.model import TypeFact, Value
from klc.errors import KlcError

VIRTUAL = "/__klc__"
CUDA_DIR = f"{VIRTUAL}/cuda-include"
BUILTIN_DIR = f"{VIRTUAL}/builtin-include"
STUB = f"{CUDA_DIR}/klc_cuda_stub.h"

# Headers of the CUDA toolkit that kernels include; each resolves to an empty file because
# klc/cuda/cuda_stub.h, force-included, already declares what they would.
CUDA_HEADERS = (
    "cuda.h", "cuda_runtime.h", "cuda_runtime_api.h", "device_launch_parameters.h",
    "device_functions.h", "vector_types.h", "vector_functions.h", "cuda_fp16.h", "cuda_bf16.h",
    "cuda_fp16.hpp", "cuda_bf16.hpp", "sm_60_atomic_functions.h", "cooperative_groups.h",
    "cooperative_groups/reduce.h", "cooperative_groups/scan.h",
    "cooperative_groups/memcpy_async.h",
)

CLANG_ARGS = (
    "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_90",
    "-nocudainc", "-nocudalib", f"--cuda-path={VIRTUAL}/toolkit",
    "-std=c++17", "-Wno-unknown-cuda-version", "-ferror-limit=0",
    "-isystem", CUDA_DIR, "-idirafter", BUILTIN_DIR, "-include", STUB,
)

# The compiler's own headers, which the pip libclang wheel lacks; the system's headers
# include them (glibc's <stdio.h> includes <stddef.h> for size_t).
BUILTIN_HEADERS = {
    "stddef.h": """#ifndef __KLC_STDDEF_H
#define __KLC_STDDEF_H
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
#ifndef __cplusplus
typedef __WCHAR_TYPE__ wchar_t;
#endif
typedef struct { long long __a __attribute__((aligned(8)));
                 long double __b __attribute__((aligned(16))); } max_align_t;
#define offsetof(t, d) __builtin_offsetof(t, d)
#endif
#ifndef NULL
#ifdef __cplusplus
#define NULL __null
#else
#define NULL ((void*)0)
#endif
#endif
#undef __need_size_t
#undef __need_ptrdiff_t
#undef __need_wchar_t
#undef __need_NULL
#undef __need_wint_t
""",
    "stdarg.h": """#ifndef __KLC_STDARG_H
#define __KLC_STDARG_H
typedef __builtin_va_list va_list;
#define va_start(ap, param) __builtin_va_start(ap, param)
#define va_end(ap) __builtin_va_end(ap)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_copy(dest, src) __builtin_va_copy(dest, src)
#endif
#ifndef __GNUC_VA_LIST
#define __GNUC_VA_LIST
typedef __builtin_va_list __gnuc_va_list;
#endif
#undef __need___va_list
""",
    "stdbool.h": """#ifndef __cplusplus
#define bool _Bool
#define true 1
#define false 0
#endif
#define __bool_true_false_are_defined 1
""",
    "limits.h": """#ifndef __KLC_LIMITS_H
#define __KLC_LIMITS_H
#define _GCC_LIMITS_H_
#define CHAR_BIT __CHAR_BIT__
#define SCHAR_MAX __SCHAR_MAX__
#define SCHAR_MIN (-__SCHAR_MAX__ - 1)
#define UCHAR_MAX (__SCHAR_MAX__ * 2 + 1)
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MAX __SHRT_MAX__
#define SHRT_MIN (-__SHRT_MAX__ - 1)
#define USHRT_MAX (__SHRT_MAX__ * 2 + 1)
#define INT_MAX __INT_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define UINT_MAX (__INT_MAX__ * 2U + 1U)
#define LONG_MAX __LONG_MAX__
#define LONG_MIN (-__LONG_MAX__ - 1L)
#define ULONG_MAX (__LONG_MAX__ * 2UL + 1UL)
#define LLONG_MAX __LONG_LONG_MAX__
#define LLONG_MIN (-__LONG_LONG_MAX__ - 1LL)
#define ULLONG_MAX (__LONG_LONG_MAX__ * 2ULL + 1ULL)
#ifndef MB_LEN_MAX
#define MB_LEN_MAX 16
#endif
#endif
""",
    "float.h": """#ifndef __KLC_FLOAT_H
#define __KLC_FLOAT_H
#define FLT_RADIX __FLT_RADIX__
#define FLT_MANT_DIG __FLT_MANT_DIG__
#define DBL_MANT_DIG __DBL_MANT_DIG__
#define FLT_DIG __FLT_DIG__
#define DBL_DIG __DBL_DIG__
#define FLT_EPSILON __FLT_EPSILON__
#define DBL_EPSILON __DBL_EPSILON__
#define FLT_MAX __FLT_MAX__
#define DBL_MAX __DBL_MAX__
#define FLT_MIN __FLT_MIN__
#define DBL_MIN __DBL_MIN__
#define FLT_MAX_EXP __FLT_MAX_EXP__
#define DBL_MAX_EXP __DBL_MAX_EXP__
#define FLT_MIN_EXP __FLT_MIN_EXP__
#define DBL_MIN_EXP __DBL_MIN_EXP__
#endif
""",
}


# --------------------------------------------------------------------------------------
# libclang, imported on first use


@dataclass
class Clang:
    """The ``clang.cindex`` module and the evaluator entry points its bindings lack."""

    ci: Any
    evaluate: Callable[..., Any]
    kind: Callable[[Any], int]
    as_long_long: Callable[[Any], int]
    is_unsigned: Callable[[Any], int]
    as_unsigned: Callable[[Any], int]
    as_double: Callable[[Any], float]
    dispose: Callable[[Any], None]
    macro_function_like: Callable[[Any], int]


_loaded: Clang | None = None

EVAL_INT, EVAL_FLOAT = 1, 2  # CXEvalResultKind


def load() -> Clang:
    """Import libclang and bind ``clang_Cursor_Evaluate`` (exported by libclang since 3.9)."""
    global _loaded
    if _loaded is None:
        try:
            from clang import cindex as ci

            lib = ci.conf.lib
        except Exception as e:  # ImportError, or LibclangError when the .so cannot load
            raise KlcError(f"libclang is not usable ({e}); install the 'libclang' package") \
                from None

        def bind(name: str, argtypes: list[Any], restype: Any) -> Callable[..., Any]:
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, restype
            return fn  # type: ignore[no-any-return]

        ptr = ctypes.c_void_p
        _loaded = Clang(
            ci=ci,
            evaluate=bind("clang_Cursor_Evaluate", [ci.Cursor], ptr),
            kind=bind("clang_EvalResult_getKind", [ptr], ctypes.c_int),
            as_long_long=bind("clang_EvalResult_getAsLongLong", [ptr], ctypes.c_longlong),
            is_unsigned=bind("clang_EvalResult_isUnsignedInt", [ptr], ctypes.c_uint),
            as_unsigned=bind("clang_EvalResult_getAsUnsigned", [ptr], ctypes.c_ulonglong),
            as_double=bind("clang_EvalResult_getAsDouble", [ptr], ctypes.c_double),
            dispose=bind("clang_EvalResult_dispose", [ptr], None),
            macro_function_like=bind("clang_Cursor_isMacroFunctionLike", [ci.Cursor],
                                     ctypes.c_uint),
        )
    return _loaded


def stub_text() -> str:
    """The text of ``klc/cuda/cuda_stub.h``, force-included in every translation unit."""
    return resources.files("klc.cuda").joinpath("cuda_stub.h").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------
# clang's types as plain data


def type_fact(t: Any) -> TypeFact | None:
    """A clang type as the model's ``TypeFact``; None for an invalid type."""
    ci = load().ci
    if t.kind == ci.TypeKind.INVALID:
        return None
    canon = t.get_canonical()
    is_pointer = canon.kind == ci.TypeKind.POINTER
    pointee = None
    if is_pointer:
        p = t.get_pointee()
        pointee = type_fact(p if p.kind != ci.TypeKind.INVALID else canon.get_pointee())
    size, align = t.get_size(), t.get_align()
    return TypeFact(
        spelling=t.spelling,
        canonical=canon.spelling,
        is_pointer=is_pointer,
        pointee=pointee,
        const=t.is_const_qualified() or canon.is_const_qualified(),
        volatile=t.is_volatile_qualified() or canon.is_volatile_qualified(),
        restrict=t.is_restrict_qualified() or canon.is_restrict_qualified(),
        size_bytes=size if size > 0 else None,
        align_bytes=align if align > 0 else None,
    )


_INT_KINDS = frozenset({
    "BOOL", "CHAR_U", "UCHAR", "CHAR16", "CHAR32", "USHORT", "UINT", "ULONG", "ULONGLONG",
    "UINT128", "CHAR_S", "SCHAR", "WCHAR", "SHORT", "INT", "LONG", "LONGLONG", "INT128", "ENUM",
})
_FLOAT_KINDS = frozenset({"HALF", "FLOAT16", "FLOAT", "DOUBLE", "LONGDOUBLE", "FLOAT128"})


def conversion(t: Any) -> str | None:
    """The evaluator's conversion function for a cast to type ``t``."""
    kind = t.get_canonical().kind.name
    if kind == "BOOL":
        return "_bool"
    if kind in _INT_KINDS:
        return "_int"
    if kind in _FLOAT_KINDS:
        return "_float"
    return None


def as_type(value: Value, t: Any) -> Value:
    """Give a value the Python type of its C type: bool for ``bool``, int for integers."""
    kind = t.get_canonical().kind.name
    if kind == "BOOL":
        return bool(value)
    if kind in _INT_KINDS and isinstance(value, float):
        return int(value)
    return value


BUILTIN_SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "short": 2,
    "unsigned short": 2, "int": 4, "unsigned": 4, "unsigned int": 4, "long": 8,
    "unsigned long": 8, "long long": 8, "unsigned long long": 8, "float": 4, "double": 8,
    "size_t": 8, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4,
    "uint32_t": 4, "int64_t": 8, "uint64_t": 8,
}
