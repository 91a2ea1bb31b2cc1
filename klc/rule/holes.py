"""Holes: a rule's declared unknowns (``hole tile: int in {16, 32}``) and the check of an
untrusted value (from search, a user or an LLM) against a hole's type and domain."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from klc.cuda.syntax import F_BODY, F_DECLARATOR, F_VALUE, parser
from klc.errors import KlcError
from klc.rule.code import IDENT_RE as _IDENT_RE

MAX_INT_DIGITS = 40  # a hole's (and a rule file's) integers: far beyond any CUDA integer type

# A hole value must be one expression on its own: no newline before the closing parenthesis,
# so that a trailing // comment (which would swallow the rest of a template line) is refused.
_HOLE_EXPR_WRAP = ("void __klc_anchor__() {\nauto __klc_e__ = (", ");\n}\n")
# Statements likewise end right before the closing brace: a trailing // comment, which would
# swallow the rest of the template's line, is refused.
_HOLE_STMTS_WRAP = ("void __klc_anchor__() {\n", "}\n")


@dataclass(frozen=True)
class HoleDecl:
    """A declared hole: ``int`` with a set (``values``) or range (``lo``..``hi``), ``enum``
    with ``values``, or an open category (``ident``, ``expr``, ``stmts``)."""

    name: str
    type: str
    values: tuple[int | str, ...] | None = None
    lo: int | None = None
    hi: int | None = None
    default: int | str | None = None
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)

    def domain(self) -> Sequence[int | str] | None:
        """Every value of a finite domain, or None when open. A range stays a ``range``
        (``0..10^26`` is never materialised): index it, test membership (``contains``),
        count it (``size``: ``len`` of a range overflows past 2^63), never list it whole."""
        if self.values is not None:
            return self.values
        if self.lo is not None and self.hi is not None:
            return range(self.lo, self.hi + 1)
        return None

    def size(self) -> int | None:
        """How many values a finite domain has (None when open)."""
        if self.values is not None:
            return len(self.values)
        if self.lo is not None and self.hi is not None:
            return max(0, self.hi - self.lo + 1)
        return None

    def contains(self, value: object) -> bool:
        """Whether ``value`` (an int, or its text) is in a finite domain (False when open)."""
        if self.values is not None:
            return str(value) in {str(v) for v in self.values}
        if self.lo is None or self.hi is None:
            return False
        text = str(value).strip()
        if not re.fullmatch(rf"[+-]?[0-9]{{1,{MAX_INT_DIGITS}}}", text):
            return False
        return self.lo <= int(text) <= self.hi

    def domain_text(self) -> str:
        if self.values is not None:
            return "{" + ", ".join(str(v) for v in self.values) + "}"
        if self.lo is not None:
            return f"{self.lo}..{self.hi}"
        return f"a C {'identifier' if self.type == 'ident' else self.type}"

    def validate(self, value: str) -> str:
        """Check an untrusted value (from search, a user or an LLM) against the declared type
        and domain; return it normalised, or raise KlcError saying why not."""
        text = str(value).strip()
        problem = hole_value_problem(self, text)
        if problem:
            raise KlcError(f"hole ?{self.name}: {problem}")
        return str(int(text, 10)) if self.type == "int" else text


_KEYWORD_WORDS = (
    "alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t "
    "char16_t char32_t class compl concept const consteval constexpr constinit const_cast "
    "continue co_await co_return co_yield decltype default delete do double dynamic_cast else "
    "enum explicit export extern false float for friend goto if inline int long mutable "
    "namespace new noexcept not not_eq nullptr operator or or_eq private protected public "
    "register reinterpret_cast requires return short signed sizeof static static_assert "
    "static_cast struct switch template this thread_local throw true try typedef typeid "
    "typename union unsigned using virtual void volatile wchar_t while xor xor_eq restrict "
    "__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ "
    "__restrict __forceinline__ __noinline__ __launch_bounds__ __align__ __asm__ __asm "
    "__syncthreads threadIdx blockIdx blockDim gridDim warpSize"
)
_KEYWORDS = frozenset(_KEYWORD_WORDS.split())
_FORBIDDEN = re.compile(r"\b(?:asm|__asm__|__asm|_Pragma|__pragma)\b|^[ \t]*(?:#|%:)|\?\?=",
                        re.M)
_CONTINUATION = re.compile(r"\\[ \t]*(?:\n|$)")  # a line splice would join template lines
# Names a hole value may not use: host-only, allocation, process and file functions (a hole
# is a piece of kernel arithmetic; printf too, whose output nothing verifies), and the
# CUDA runtime API (cudaMalloc, cudaMemcpy, ...). Member names (p.free, p->open) are fine.
_HOST_WORDS = (
    "malloc calloc realloc free aligned_alloc posix_memalign memalign valloc new delete "
    "system popen pclose fork vfork execl execlp execle execv execvp execve exit _exit "
    "quick_exit abort atexit getenv setenv putenv fopen freopen fclose fread fwrite fflush "
    "fprintf printf sprintf snprintf vprintf puts fputs putchar fputc fgets fgetc fscanf "
    "scanf sscanf remove rename unlink tmpfile mmap munmap dlopen dlsym kill"
)
_HOST_NAMES = frozenset(_HOST_WORDS.split())
_NAME_SCAN = re.compile(r"""//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'
    | (?P<member>(?:\.|->)\s*)?(?P<name>[A-Za-z_]\w*)""", re.X)


def _host_name(text: str) -> str | None:
    """The first host-only name a value uses (outside comments and literals), if any."""
    for m in _NAME_SCAN.finditer(text):
        name = m.group("name")
        if name and not m.group("member") and (name in _HOST_NAMES
                                               or re.fullmatch(r"cuda[A-Z]\w*", name)):
            return name
    return None


def hole_value_problem(decl: HoleDecl, text: str) -> str:
    """Why a value is not in a hole's domain ('' when it is)."""
    shown = json.dumps(text) if len(text) <= 200 else json.dumps(text[:200]) + "..."
    if decl.type == "int":
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            return f"{shown} is not an integer"
        if len(text.lstrip("+-")) > MAX_INT_DIGITS:
            return (f"an integer of {len(text.lstrip('+-'))} digits is too long (a hole's "
                    f"integers have at most {MAX_INT_DIGITS})")
        v = int(text, 10)
        if decl.values is not None and v not in decl.values:
            return f"{v} is not in {decl.domain_text()}"
        if decl.lo is not None and decl.hi is not None and not decl.lo <= v <= decl.hi:
            return f"{v} is not in {decl.domain_text()}"
        return ""
    if decl.type == "enum":
        if decl.values is not None and text not in [str(v) for v in decl.values]:
            return f"{shown} is not one of {decl.domain_text()}"
        return ""
    host = _host_name(text) if decl.type in ("ident", "expr", "stmts") else None
    if decl.type == "ident":
        if not _IDENT_RE.fullmatch(text):
            return f"{shown} is not a C identifier"
        if text in _KEYWORDS:
            return f"{shown} is a keyword, not a free identifier"
        return f"{shown} is a host function's name, which a hole value may not use" \
            if host else ""
    if not text:
        return f"an empty {decl.type} is not allowed"
    bad = _FORBIDDEN.search(text)
    if bad:
        what = "inline asm" if "asm" in bad.group(0) else "a pragma operator" \
            if "ragma" in bad.group(0) else "a preprocessor line"
        return f"{shown} contains {what}, which a hole value may not"
    if _CONTINUATION.search(text):
        return f"{shown} contains a line continuation (a backslash at the end of a line)"
    if host:
        return f"{shown} uses {host}, a host or allocation function, which a hole value may not"
    if decl.type == "expr":
        return "" if _is_expression(text) else f"{shown} does not parse as one CUDA expression"
    return "" if _is_statements(text) else f"{shown} does not parse as CUDA statements"


def _is_expression(text: str) -> bool:
    """Exactly one expression: the wrapper's parenthesis must hold all of it (so a value
    such as ``1); evil(); (0`` is refused, not spliced in)."""
    prefix, suffix = _HOLE_EXPR_WRAP
    src = (prefix + text + suffix).encode()
    root = parser().parse(src).root_node
    if root.has_error:
        return False
    fns = [c for c in root.named_children if c.type != "comment"]
    body = fns[0].child_by_field_id(F_BODY) if len(fns) == 1 else None
    stmts = [c for c in body.named_children if c.type != "comment"] if body else []
    if len(stmts) != 1 or stmts[0].type != "declaration":
        return False
    decl = stmts[0].child_by_field_id(F_DECLARATOR)
    value = decl.child_by_field_id(F_VALUE) if decl is not None else None
    start = len(prefix.encode()) - 1
    if value is None or value.type != "parenthesized_expression" or value.start_byte != start \
            or value.end_byte != start + len(text.encode()) + 2:
        return False
    # a top-level comma would put two arguments where the template has one: f(?e) -> f(a, b)
    inner = [c for c in value.named_children if c.type != "comment"]
    return len(inner) == 1 and inner[0].type != "comma_expression"


def _is_statements(text: str) -> bool:
    """Statements that stay inside the one function body they are put in."""
    prefix, suffix = _HOLE_STMTS_WRAP
    src = (prefix + text + suffix).encode()
    root = parser().parse(src).root_node
    if root.has_error:
        return False
    fns = [c for c in root.named_children if c.type != "comment"]
    if len(fns) != 1 or fns[0].type != "function_definition":
        return False
    body = fns[0].child_by_field_id(F_BODY)
    return body is not None and body.end_byte == len(src) - 1

