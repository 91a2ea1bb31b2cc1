"""Semantic facts about a unit from libclang: types, qualifiers, sizes, constant values.

tree-sitter gives klc a lossless tree, but not meaning: it cannot say that ``x[i]`` is a
``const float`` or that ``BLOCK * 2`` is 512. Guards need exactly that, so this module asks
clang, lazily: parsing a unit never imports ``clang.cindex``; the first fact asked builds one
libclang translation unit for the file (from the unit's bytes, passed as an unsaved file, so
the path need not exist) and every answer is memoized on the ``Facts`` object.

No CUDA toolkit is needed. The flags (``CLANG_ARGS``) make clang parse the device side of
CUDA with no CUDA installation and no clang resource directory (the pip ``libclang`` wheel
ships neither):

- ``-x cuda --cuda-device-only --cuda-gpu-arch=sm_90``: the semantics of the device
  compilation, the one kernels live in: ``__CUDA_ARCH__`` is defined (so ``#if __CUDA_ARCH__``
  branches are the ones nvcc would compile for the GPU) and sizes are the nvptx64 target's.
  Host functions are still parsed and type-checked, so launches in host code are seen too.
- ``-nocudainc -nocudalib --cuda-path=<virtual dir>``: never look for a toolkit, not even an
  installed one, so that the facts are the same on every machine.
- ``-include klc_cuda_stub.h``: ``klc/cuda_stub.h`` declares what CUDA code uses (attributes,
  built-in variables, vector types, intrinsics, atomics, cooperative groups), and the usual
  CUDA headers (``<cuda_runtime.h>``, ``<cooperative_groups.h>``, ...) resolve to empty
  unsaved files in an ``-isystem`` directory that is searched before the system's.
- ``-idirafter <virtual dir>``: small stand-ins for the compiler's own headers (``stddef.h``,
  ``stdarg.h``, ``limits.h``, ``float.h``, ``stdbool.h``) that the system's C and C++ headers
  expect next to them; searched last, so a real clang resource directory wins when present.

Constant values come from clang's evaluator (``clang_Cursor_Evaluate``, which the 18.x Python
bindings do not wrap, so it is bound here through ctypes). A template-dependent expression has
no value for clang; its sub-expressions that do have one are folded, the template value
parameters are replaced by ``bindings``, and the remaining arithmetic is evaluated by a small
evaluator over Python's ``ast`` with C's integer semantics and a whitelist of operators.
"""

from __future__ import annotations

import ast
import ctypes
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc.errors import KlcError, where
from klc.frontend import F_ARGUMENTS, F_DECLARATOR, F_NAME

if TYPE_CHECKING:
    from clang import cindex

    from klc.frontend import Unit

Value = int | float | bool

_VIRTUAL = "/__klc__"
_CUDA_DIR = f"{_VIRTUAL}/cuda-include"
_BUILTIN_DIR = f"{_VIRTUAL}/builtin-include"
_STUB = f"{_CUDA_DIR}/klc_cuda_stub.h"

# Headers of the CUDA toolkit that kernels include; each resolves to an empty file because
# klc/cuda_stub.h, force-included, already declares what they would.
CUDA_HEADERS = (
    "cuda.h", "cuda_runtime.h", "cuda_runtime_api.h", "device_launch_parameters.h",
    "device_functions.h", "vector_types.h", "vector_functions.h", "cuda_fp16.h", "cuda_bf16.h",
    "cuda_fp16.hpp", "cuda_bf16.hpp", "sm_60_atomic_functions.h", "cooperative_groups.h",
    "cooperative_groups/reduce.h", "cooperative_groups/scan.h",
    "cooperative_groups/memcpy_async.h",
)

CLANG_ARGS = (
    "-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_90",
    "-nocudainc", "-nocudalib", f"--cuda-path={_VIRTUAL}/toolkit",
    "-std=c++17", "-Wno-unknown-cuda-version", "-ferror-limit=0",
    "-isystem", _CUDA_DIR, "-idirafter", _BUILTIN_DIR, "-include", _STUB,
)

# The compiler's own headers, which the pip libclang wheel lacks; the system's headers
# include them (glibc's <stdio.h> includes <stddef.h> for size_t).
_BUILTIN_HEADERS = {
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
class _Clang:
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


_clang_singleton: _Clang | None = None

_EVAL_INT, _EVAL_FLOAT = 1, 2  # CXEvalResultKind


def _clang() -> _Clang:
    """Import libclang and bind ``clang_Cursor_Evaluate`` (exported by libclang since 3.9)."""
    global _clang_singleton
    if _clang_singleton is None:
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
        _clang_singleton = _Clang(
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
    return _clang_singleton


def _stub_text() -> str:
    return resources.files("klc").joinpath("cuda_stub.h").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------
# Facts


@dataclass(frozen=True)
class TypeFact:
    """A type as clang sees it: what guards about element type, qualifiers and size ask."""

    spelling: str  # "const float *__restrict"
    canonical: str  # typedefs resolved
    is_pointer: bool
    pointee: TypeFact | None
    const: bool
    volatile: bool
    restrict: bool
    size_bytes: int | None  # None for dependent or incomplete types
    align_bytes: int | None

    @property
    def element_type(self) -> str:
        """The unqualified type of what a pointer points at, or of the value itself."""
        t = self.pointee if self.pointee is not None else self
        return " ".join(_QUALIFIER_RE.sub(" ", t.spelling).split())


_MACRO_HEAD_RE = re.compile(r"\s*[A-Za-z_]\w*(?:\([^)]*\))?")
_QUALIFIER_RE = re.compile(r"\b(?:const|volatile|restrict|__restrict__|__restrict)\b")


class Facts:
    """Semantic facts about one ``Unit``: built on the first question, memoized after."""

    def __init__(self, unit: Unit):
        self.unit = unit
        self.builds = 0  # how many times a translation unit was built (memoization check)
        self._types: dict[tuple[int, int], TypeFact | None] = {}
        self._params: dict[tuple[str, str], TypeFact | None] = {}
        self._constants: dict[tuple[int, int, tuple[tuple[str, int], ...]], Value | None] = {}
        self._cursors: dict[tuple[int, int], Any] = {}
        self._file_is_main: dict[int, bool] = {}  # by libclang file handle

    # -- the translation unit ------------------------------------------------------------

    @cached_property
    def _main_name(self) -> str:
        """The name clang knows the file by: its real path when it exists, so that quoted
        includes next to it resolve; a virtual one otherwise."""
        p = Path(self.unit.path)
        try:
            if p.is_file():
                return str(p.resolve())
        except OSError:
            pass
        return f"{_VIRTUAL}/src/{p.name or 'unit.cu'}"

    @cached_property
    def tu(self) -> cindex.TranslationUnit:
        """The libclang translation unit of this file (built once, on first use)."""
        ci = _clang().ci
        unsaved = [(self._main_name, self.unit.source.decode("utf-8", "replace")),
                   (_STUB, _stub_text())]
        unsaved += [(f"{_CUDA_DIR}/{h}", "") for h in CUDA_HEADERS]
        unsaved += [(f"{_BUILTIN_DIR}/{h}", text) for h, text in _BUILTIN_HEADERS.items()]
        self.builds += 1
        try:
            return ci.Index.create().parse(
                self._main_name, args=list(CLANG_ARGS), unsaved_files=unsaved,
                options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD,
            )
        except ci.TranslationUnitLoadError as e:
            raise KlcError(f"{where(self.unit.path, 1, 1)}: libclang could not parse the file "
                           f"({e})") from None

    @cached_property
    def diagnostics(self) -> list[str]:
        """clang's errors, ``file:line:col: message`` (facts still hold where it recovered)."""
        ci = _clang().ci
        out = []
        for d in self.tu.diagnostics:
            if d.severity < ci.Diagnostic.Error:
                continue
            loc = d.location
            name = loc.file.name if loc.file is not None else None
            if name is None:
                out.append(f"{self.unit.path}: {d.spelling}")
                continue
            path = self.unit.path if name == self._main_name else name
            out.append(f"{where(path, loc.line, loc.column)}: {d.spelling}")
        return out

    @cached_property
    def _top(self) -> list[Any]:
        """The top-level cursors that come from this file (not from the stub)."""
        return [c for c in self.tu.cursor.get_children() if self._in_main(c)]

    def _in_main(self, cursor: Any) -> bool:
        f = cursor.extent.start.file
        if f is None:
            return False
        # a file's name, asked once per file handle (libclang gives each file of the
        # translation unit one handle): a cursor's file is compared by its handle
        ptr = ctypes.cast(f.obj, ctypes.c_void_p).value
        known = self._file_is_main.get(ptr)
        if known is None:
            known = self._file_is_main[ptr] = f.name == self._main_name
        return known

    def _cursor(self, start: int, end: int) -> Any:
        """The innermost cursor whose extent is exactly [start, end), or None.

        Innermost, so that ``x`` is the reference to ``x`` (an lvalue ``const float *``), not
        the implicit conversion clang wraps around it with the same extent."""
        key = (start, end)
        if key not in self._cursors:
            self._cursors[key] = self._find(self._top, start, end)
        return self._cursors[key]

    def _find(self, cursors: Iterator[Any] | list[Any], start: int, end: int) -> Any:
        for c in cursors:
            ext = c.extent
            cs, ce = ext.start.offset, ext.end.offset
            if not (cs <= start and end <= ce) or not self._in_main(c):
                continue
            inner = self._find(c.get_children(), start, end)
            if inner is not None:
                return inner
            if (cs, ce) == (start, end):
                return c
        return None

    # -- types ---------------------------------------------------------------------------

    def type_of(self, start: int, end: int) -> TypeFact | None:
        """The type of the expression or declaration spanning exactly [start, end)."""
        key = (start, end)
        if key not in self._types:
            c = self._cursor(start, end)
            self._types[key] = _type_fact(c.type) if c is not None else None
        return self._types[key]

    def param_type(self, function_name: str, param_name: str) -> TypeFact | None:
        """The declared type of a function parameter (from the definition when there is one)."""
        key = (function_name, param_name)
        if key not in self._params:
            self._params[key] = self._param_type(function_name, param_name)
        return self._params[key]

    def _param_type(self, function_name: str, param_name: str) -> TypeFact | None:
        ci = _clang().ci
        kinds = (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE)
        found = None
        for fn in self._walk(self._top, lambda c: c.kind in kinds):
            if fn.spelling != function_name:
                continue
            for p in fn.get_children():
                if p.kind == ci.CursorKind.PARM_DECL and p.spelling == param_name:
                    found = p
                    if fn.is_definition():
                        return _type_fact(p.type)
        return _type_fact(found.type) if found is not None else None

    def _walk(self, cursors: list[Any], keep: Callable[[Any], bool]) -> Iterator[Any]:
        """Declarations of this file, into namespaces and extern "C" blocks."""
        ci = _clang().ci
        scopes = (ci.CursorKind.NAMESPACE, ci.CursorKind.LINKAGE_SPEC,
                  ci.CursorKind.UNEXPOSED_DECL)
        for c in cursors:
            if keep(c):
                yield c
            if c.kind in scopes:
                yield from self._walk(list(c.get_children()), keep)

    # -- constants -----------------------------------------------------------------------

    def constant(self, start: int, end: int,
                 bindings: dict[str, int] | None = None) -> Value | None:
        """The constant value of the expression spanning [start, end), or None.

        ``bindings`` gives template value parameters their values (``{"BLOCK": 256}``)."""
        frozen = tuple(sorted((bindings or {}).items()))
        key = (start, end, frozen)
        if key not in self._constants:
            self._constants[key] = self._constant(start, end, dict(frozen))
        return self._constants[key]

    def _constant(self, start: int, end: int, bindings: dict[str, int]) -> Value | None:
        c = self._cursor(start, end)
        if c is not None:
            value = self._evaluate_cursor(c)
            if value is None:
                folded = self._fold(c, bindings)
                value = _safe_eval(folded) if folded is not None else None
            if value is not None:
                return _as_type(value, c.type)
        return self.evaluate(self.unit.text(start, end), bindings)

    def _evaluate_cursor(self, cursor: Any) -> Value | None:
        """clang's own evaluation of a cursor (an expression, or a variable's initializer)."""
        c = _clang()
        result = c.evaluate(cursor)
        if not result:
            return None
        try:
            kind = c.kind(result)
            if kind == _EVAL_INT:
                if c.is_unsigned(result):
                    return int(c.as_unsigned(result))
                return int(c.as_long_long(result))
            if kind == _EVAL_FLOAT:
                return float(c.as_double(result))
            return None
        finally:
            c.dispose(result)

    def _fold(self, cursor: Any, bindings: dict[str, int]) -> str | None:
        """A Python expression for a cursor: clang's value where it has one, bindings for
        template parameters, and the source's operators in between."""
        ci = _clang().ci
        k = ci.CursorKind
        value = self._evaluate_cursor(cursor)
        if value is not None:
            return repr(value)
        if cursor.kind == k.DECL_REF_EXPR:
            name = cursor.spelling
            return repr(bindings[name]) if name in bindings else None
        children = list(cursor.get_children())
        if cursor.kind == k.CONDITIONAL_OPERATOR and len(children) == 3:
            a, b, c = (self._fold(x, bindings) for x in children)
            if a is None or b is None or c is None:
                return None
            return f"(({b}) if ({a}) else ({c}))"
        if cursor.kind in (k.CSTYLE_CAST_EXPR, k.CXX_STATIC_CAST_EXPR,
                           k.CXX_FUNCTIONAL_CAST_EXPR) and children:
            inner = self._fold(children[-1], bindings)
            conv = _conversion(cursor.type)
            return f"{conv}({inner})" if inner is not None and conv is not None else None
        # splice: the cursor's own text, each child replaced by its folded value
        src = self.unit.source
        cs, ce = cursor.extent.start.offset, cursor.extent.end.offset
        parts: list[str] = []
        pos = cs
        for child in children:
            s, e = child.extent.start.offset, child.extent.end.offset
            if s < pos or e > ce:
                return None  # overlapping extents (macro expansions): no faithful splice
            inner = self._fold(child, bindings)
            if inner is None:
                return None
            parts.append(_c_operators(src[pos:s].decode("utf-8", "replace")))
            parts.append(f"({inner})")
            pos = e
        parts.append(_c_operators(src[pos:ce].decode("utf-8", "replace")))
        return "".join(parts)

    def evaluate(self, text: str, bindings: dict[str, int] | None = None) -> Value | None:
        """The constant value of an expression *text* in this file's scope, or None.

        For text that is no span of the file, such as a template argument at an
        instantiation: literals, bindings, ``#define`` macros, ``constexpr`` variables and
        enumerators of the file, ``sizeof(type)``, and arithmetic on these."""
        return self._evaluate_text(text, bindings or {}, depth=0)

    def _evaluate_text(self, text: str, bindings: dict[str, int], depth: int) -> Value | None:
        if depth > 16:
            return None  # a macro that expands to itself
        text = _SIZEOF_RE.sub(lambda m: self._sizeof(m.group(1)), text)
        out: list[str] = []
        for tok in _TOKEN_RE.findall(text):
            if tok.isspace():
                continue
            if tok[0].isdigit() or (tok[0] == "." and len(tok) > 1):
                lit = _c_literal(tok)
                if lit is None:
                    return None
                out.append(repr(lit))
            elif tok[0].isalpha() or tok[0] == "_":
                value = self._name_value(tok, bindings, depth)
                if value is None:
                    return None
                out.append(f"({value!r})")
            elif tok in ("?", ":", "!", "=", "[", "]", "{", "}", ";", ",", "."):
                return None  # not expressible as plain arithmetic without a parse
            else:
                out.append(_c_operators(tok))
        ops = set(out)
        if ops & {"&", "|", "^"} and ops & {"<", ">", "<=", ">=", "==", "!="}:
            return None  # C and Python disagree on the precedence of these two groups
        return _safe_eval(" ".join(out))

    def _name_value(self, name: str, bindings: dict[str, int], depth: int) -> Value | None:
        if name in bindings:
            return bindings[name]
        if name in ("true", "false"):
            return name == "true"
        if name in self._named_constants:
            return self._named_constants[name]
        macro = self._macros.get(name)
        if macro is not None and not macro[0]:
            return self._evaluate_text(macro[1], bindings, depth + 1)
        return None

    def _sizeof(self, type_text: str) -> str:
        """``sizeof(type)`` as a number, by asking clang the size of the named type."""
        name = " ".join(type_text.split())
        size = _BUILTIN_SIZES.get(name)
        if size is None:
            size = self._type_sizes.get(name)
        return str(size) if size is not None else "__klc_unknown__"

    @cached_property
    def _type_sizes(self) -> dict[str, int]:
        """Sizes of the named types clang knows: the file's and the stub's (``float4``)."""
        ci = _clang().ci
        k = ci.CursorKind
        kinds = (k.STRUCT_DECL, k.CLASS_DECL, k.UNION_DECL, k.TYPEDEF_DECL,
                 k.TYPE_ALIAS_DECL, k.ENUM_DECL)
        sizes: dict[str, int] = {}
        for c in self.tu.cursor.get_children():
            if c.kind in kinds and c.spelling and c.spelling not in sizes:
                size = c.type.get_size()
                if size > 0:
                    sizes[c.spelling] = size
        return sizes

    @cached_property
    def _named_constants(self) -> dict[str, Value]:
        """``constexpr``/``const`` variables and enumerators of the file, by name.

        File and namespace scope win over function scope; inside functions the first
        declaration wins (``constexpr int B = 128; k<B><<<...>>>`` in a host function)."""
        ci = _clang().ci
        k = ci.CursorKind
        scopes = (k.NAMESPACE, k.LINKAGE_SPEC, k.UNEXPOSED_DECL, k.ENUM_DECL)
        outer: dict[str, Value] = {}
        inner: dict[str, Value] = {}

        leave = (k.PARM_DECL, k.CALL_EXPR)  # whose insides are not looked at

        def note(c: Any, values: dict[str, Value]) -> Any:
            kind = c.kind
            if kind == k.VAR_DECL and c.type.is_const_qualified():
                v = self._evaluate_cursor(c)
                if v is not None:
                    values.setdefault(c.spelling, _as_type(v, c.type))
            elif kind == k.ENUM_CONSTANT_DECL:
                values.setdefault(c.spelling, c.enum_value)
            return kind

        def visit(cursors: Iterator[Any]) -> None:  # file and namespace scope
            for c in cursors:
                if not self._in_main(c):
                    continue
                kind = note(c, outer)
                if kind in scopes:
                    visit(c.get_children())
                elif kind not in leave:
                    visit_inner(c)

        tu = self.tu

        failed: list[BaseException] = []

        def inner_visitor(child: Any, _parent: Any, _data: Any) -> int:
            # every cursor below, in the order of a recursive walk (libclang recurses): one
            # Python call per cursor, no list of children per cursor
            child._tu = tu
            try:
                if not self._in_main(child):
                    return 1  # CXChildVisit_Continue: not its insides either
                return 1 if note(child, inner) in leave else 2  # 2: CXChildVisit_Recurse
            except BaseException as e:  # raised here as the recursive walk raised it
                failed.append(e)
                return 0  # CXChildVisit_Break

        callback = ci.callbacks["cursor_visit"](inner_visitor)

        def visit_inner(c: Any) -> None:
            ci.conf.lib.clang_visitChildren(c, callback, None)
            if failed:
                raise failed[0]

        visit(iter(self._top))
        return {**inner, **outer}

    # -- macros --------------------------------------------------------------------------

    @cached_property
    def _macros(self) -> dict[str, tuple[bool, str]]:
        """Object-like and function-like macros by name: (function_like, replacement text).

        The file's own definitions win over the stub's; the last definition in the file wins,
        as it would at the end of the file."""
        ci = _clang().ci
        function_like = _clang().macro_function_like
        macros: dict[str, tuple[bool, str]] = {}
        for c in self.tu.cursor.get_children():
            if c.kind != ci.CursorKind.MACRO_DEFINITION or c.location.file is None:
                continue
            in_main = self._in_main(c)
            if not in_main and c.spelling in macros:
                continue
            is_function = bool(function_like(c))
            tokens = [t.spelling for t in c.get_tokens()][1:]
            if is_function:  # drop the parameter list
                tokens = tokens[tokens.index(")") + 1:] if ")" in tokens else []
            if in_main:  # the replacement as written, not re-spaced tokens
                text = self.unit.text(c.extent.start.offset, c.extent.end.offset)
                m = _MACRO_HEAD_RE.match(text) if tokens else None
                body = " ".join(text[m.end():].split()) if m else ""
            else:
                body = " ".join(tokens)
            macros[c.spelling] = (is_function, body)
        return macros

    def define(self, name: str) -> int | float | str | None:
        """A macro's value: a number when its replacement evaluates to one, else its text."""
        macro = self._macros.get(name)
        if macro is None:
            return None
        function_like, body = macro
        if not function_like:
            value = self._evaluate_text(body, {}, depth=1)
            if value is not None:
                return int(value) if isinstance(value, bool) else value
        return body

    # -- template instantiations --------------------------------------------------------

    def instantiations(self, function_name: str) -> list[dict[str, str]]:
        """``instantiations(self.unit, function_name)``: read from the tree, no clang."""
        return instantiations(self.unit, function_name)


# (the pattern starts with its literal, so that the regex engine scans for it quickly; the
# word boundaries are checked on the few hits)
_EXPLICIT_INSTANTIATION_RE = re.compile(rb"template(?![ \t\r\n]*<)")


def _spells_explicit_instantiation(unit: Unit) -> bool:
    """Whether the file spells ``template`` followed by anything but ``<`` (once per unit)."""
    found = unit.memo.get("spells_explicit_instantiation")
    if found is None:
        src = unit.source
        found = any((m.start() == 0 or not _WORD_BYTE[src[m.start() - 1]])
                    and (m.end() == len(src) or not _WORD_BYTE[src[m.end()]])
                    for m in _EXPLICIT_INSTANTIATION_RE.finditer(src))
        unit.memo["spells_explicit_instantiation"] = found
    return found


_WORD_BYTE = [i < 128 and (chr(i).isalnum() or chr(i) == "_") for i in range(256)]


def instantiations(unit: Unit, function_name: str) -> list[dict[str, str]]:
    """Template argument bindings (parameter name -> argument text) of a function, from
    launches ``k<256, float><<<...>>>`` and explicit instantiations in this file (the
    tree-sitter tree: no libclang parse).

    Parameters left out take their default, when they have one. Each binding appears
    once, in source order."""
    f = unit.function(function_name)
    if f is None or not f.template_params:
        return []
    found: list[tuple[int, list[str]]] = []
    for launch in unit.launches:
        if launch.kernel == function_name and launch.template_args is not None:
            found.append((launch.start, _split_args(launch.template_args)))
    # an explicit instantiation is ``template`` followed by a declaration, not by ``<``: a
    # file without that spelling has none, and is spared a query over its whole tree
    explicit = _spells_explicit_instantiation(unit)
    for node in unit.nodes_of_type("template_instantiation") if explicit else ():
        decl = node.child_by_field_id(F_DECLARATOR)
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_id(F_DECLARATOR)
        target = decl.child_by_field_id(F_DECLARATOR) if decl is not None else None
        if target is None or target.type != "template_function":
            continue
        name = target.child_by_field_id(F_NAME)
        args = target.child_by_field_id(F_ARGUMENTS)
        if name is None or args is None or unit.text(name) != function_name:
            continue
        found.append((node.start_byte, [" ".join(unit.text(a).split())
                                        for a in args.named_children
                                        if a.type != "comment"]))
    result: list[dict[str, str]] = []
    for _, args in sorted(found, key=lambda x: x[0]):
        binding: dict[str, str] = {}
        for i, tp in enumerate(f.template_params):
            if i < len(args):
                binding[tp.name] = args[i]
            elif tp.default is not None:
                binding[tp.name] = tp.default
        if binding not in result:
            result.append(binding)
    return result


# --------------------------------------------------------------------------------------
# Types


def _type_fact(t: Any) -> TypeFact | None:
    ci = _clang().ci
    if t.kind == ci.TypeKind.INVALID:
        return None
    canon = t.get_canonical()
    is_pointer = canon.kind == ci.TypeKind.POINTER
    pointee = None
    if is_pointer:
        p = t.get_pointee()
        pointee = _type_fact(p if p.kind != ci.TypeKind.INVALID else canon.get_pointee())
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


def _conversion(t: Any) -> str | None:
    """The evaluator's conversion function for a cast to type ``t``."""
    kind = t.get_canonical().kind.name
    if kind == "BOOL":
        return "_bool"
    if kind in _INT_KINDS:
        return "_int"
    if kind in _FLOAT_KINDS:
        return "_float"
    return None


def _as_type(value: Value, t: Any) -> Value:
    """Give a value the Python type of its C type: bool for ``bool``, int for integers."""
    kind = t.get_canonical().kind.name
    if kind == "BOOL":
        return bool(value)
    if kind in _INT_KINDS and isinstance(value, float):
        return int(value)
    return value


_BUILTIN_SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "short": 2,
    "unsigned short": 2, "int": 4, "unsigned": 4, "unsigned int": 4, "long": 8,
    "unsigned long": 8, "long long": 8, "unsigned long long": 8, "float": 4, "double": 8,
    "size_t": 8, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4,
    "uint32_t": 4, "int64_t": 8, "uint64_t": 8,
}


# --------------------------------------------------------------------------------------
# The safe evaluator


_SIZEOF_RE = re.compile(r"\bsizeof\s*\(\s*([A-Za-z_][\w\s:]*?)\s*\)")
_TOKEN_RE = re.compile(
    r"\s+|0[xX][0-9a-fA-F]+[uUlL]*|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFuUlL]*"
    r"|[A-Za-z_]\w*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^~()<>?:!=\[\]{};,.]"
)


def _c_literal(tok: str) -> int | float | None:
    """A C numeric literal as a Python number (suffixes dropped, octal understood)."""
    t = tok.rstrip("uUlL")
    try:
        if t.lower().startswith("0x"):
            return int(t, 16)
        if re.fullmatch(r"\d+", t):
            return int(t, 8) if len(t) > 1 and t[0] == "0" else int(t)
        return float(t.rstrip("fF"))
    except ValueError:
        return None


def _c_operators(text: str) -> str:
    """C's logical operators in Python spelling; the rest of C's arithmetic is the same."""
    text = text.replace("&&", " and ").replace("||", " or ")
    return re.sub(r"!(?!=)", " not ", text)


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: _c_div(a, b),
    ast.Mod: lambda a, b: a - b * _c_div(a, b),
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b,
}
_CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}
_CONVERSIONS: dict[str, Callable[[Any], Value]] = {"_int": int, "_float": float, "_bool": bool}


def _c_div(a: Value, b: Value) -> Value:
    """C division: integers truncate toward zero."""
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


class _NotConstant(Exception):
    """The expression is not plain constant arithmetic."""


def _safe_eval(text: str) -> Value | None:
    """Evaluate constant arithmetic without ``eval``: only whitelisted ``ast`` nodes."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
        return _eval_node(tree.body)
    except (SyntaxError, _NotConstant, ZeroDivisionError, TypeError, ValueError,
            OverflowError, RecursionError):
        return None


def _eval_node(node: ast.AST) -> Value:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.UnaryOp):
        v = _eval_node(node.operand)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Not):
            return not v
        if isinstance(node.op, ast.Invert) and isinstance(v, int):
            return ~v
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _eval_node(node.left), _eval_node(node.right)
        if isinstance(node.op, ast.LShift | ast.RShift | ast.BitAnd | ast.BitOr | ast.BitXor) \
                and (isinstance(a, float) or isinstance(b, float)):
            raise _NotConstant
        if isinstance(node.op, ast.LShift) and b > 4096:
            raise _NotConstant  # no giant integers from a typo
        return _BINOPS[type(node.op)](a, b)  # type: ignore[no-any-return]
    elif isinstance(node, ast.BoolOp):
        values = [_eval_node(v) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMPOPS:
        return _CMPOPS[type(node.ops[0])](_eval_node(node.left), _eval_node(node.comparators[0]))
    elif isinstance(node, ast.IfExp):
        return _eval_node(node.body) if _eval_node(node.test) else _eval_node(node.orelse)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in _CONVERSIONS and len(node.args) == 1 and not node.keywords:
        return _CONVERSIONS[node.func.id](_eval_node(node.args[0]))
    raise _NotConstant


def _split_args(text: str) -> list[str]:
    """Split template arguments at top-level commas (not inside <>, (), [] or {})."""
    args, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            args.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    args.append("".join(cur))
    return [" ".join(a.split()) for a in args if a.strip()]
