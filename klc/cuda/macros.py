"""Macro recovery: the text tree-sitter-cuda cannot read, masked, and what it meant.

Real kernel code is macro-heavy, and tree-sitter-cuda cannot know what ``CUTE_UNROLL`` or
``CUTLASS_DEVICE`` expand to. Recovery replaces such text with blanks of the same length
(newlines kept), so byte offsets and line:column stay exact, and keeps every mask (``Mask``,
with its reason) so that the model still reads it:

1. before the first parse (``always_masks``), wherever they occur outside a directive:
   ``__align__(N)``, ``__cluster_dims__(...)``, ``__maxnreg__(...)`` (kept as function
   attributes), ``_Pragma("...")`` operators, the ``__device__`` of an extended lambda, and
   the macros that stand for nothing but specifiers, launch bounds or a pragma: those of
   CUTLASS, CuTe, PyTorch, CUB (``KNOWN_MACROS``) and the file's own ``#define MY_LB(n)
   __launch_bounds__(n)``. Masking these is always right, and it spares most files the
   re-parses of step 2;
2. only when the tree has errors (``recover``), repeatedly (at most ``MAX_RECOVERY_ROUNDS``
   re-parses, each incremental), in the lines around each ERROR/MISSING node: a gtest-style
   ``TEST(Name, 128x128) {`` header keeps its name and loses its arguments (``TEST(
   ) {``); a line that holds nothing but an ALL-CAPS macro call (``SOME_MACRO(a, b)``) is
   masked; an ALL-CAPS specifier macro inside a declaration is masked; a ``#pragma`` between
   a loop header and its body is masked. Where none of these explains an error, the ``#if``
   groups around it, and every group whose branches split braces, are flattened to the
   branch a CUDA build sees (``__CUDA_ARCH__`` is taken as 900, HIP/ROCm macros as
   undefined, an unknown condition as true; ``#if 0`` as false): directives and other
   branches masked.

A masked macro still means something: ``meaning`` reads its expansion (the file's own
``#define`` first, then ``KNOWN_MACROS``, then its name) into specifiers, launch bounds or an
unroll pragma (``MacroMeaning``), which ``klc.cuda.build`` gives the function or loop it
belongs to.

Below the model in ``klc.cuda`` (``docs/architecture.md``, "klc.cuda"): it reads bytes and
trees, and imports only ``klc.cuda.syntax``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node, Tree

from klc.cuda.syntax import (
    balanced_end,
    line_start,
    matches_at,
    parser,
    point,
    problem_nodes,
)
from klc.safe_eval import PREPROCESSOR, ExprError, evaluate

MAX_RECOVERY_ROUNDS = 12

# A file's macros: name -> (parameter names, or None for an object-like macro; body)
Definitions = dict[str, tuple[tuple[str, ...] | None, str]]


@dataclass(unsafe_hash=True)  # immutable by convention: a frozen __init__ costs 3x
class Mask:
    """Text the parser saw as blanks (same length), and why."""

    start: int
    end: int
    reason: str


_MACRO_LINE_RE = re.compile(
    rb"^[ \t]*([A-Z_][A-Z0-9_]*[A-Z0-9])[ \t]*(\((?:[^()\n]|\([^()\n]*\))*\))?[ \t]*(?://[^\n]*)?$",
    re.M,
)
_TEST_HEADER_RE = re.compile(
    rb"^[ \t]*([A-Z_][A-Z0-9_]*)[ \t]*(\((?:[^()\n]|\([^()\n]*\))*\))[ \t]*(?=\{)", re.M
)
_SPECIFIER_MACRO_RE = re.compile(
    rb"(?<![\w.>:#])([A-Z_][A-Z0-9_]*[A-Z0-9])([ \t]*\((?:[^()\n]|\([^()\n]*\))*\))?"
    rb"(?=[ \t\n]+[A-Za-z_])"
)
_PRAGMA_LINE_RE = re.compile(rb"^[ \t]*#[ \t]*pragma\b[^\n]*", re.M)
_NOT_MACROS = frozenset({b"NULL", b"TRUE", b"FALSE", b"EOF"})
_DIRECTIVE_RE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)$", re.M)


def always_masks(source: bytes, defs: Definitions) -> list[Mask]:
    """The masks made before the first parse (step 1 of the module doc), in no order."""
    masks: list[Mask] = []
    for m in _attributes(source):
        if _word_before(source, m.start()) or _in_directive(source, m.start()):
            continue  # e.g. "#define CUTLASS_PRAGMA_UNROLL _Pragma(\"unroll\")"
        end = balanced_end(source, m.end() - 1)
        if end is not None:
            masks.append(Mask(m.start(), end, "pragma" if m.group(1) == b"_Pragma"
                              else "attribute"))
    for m in _LAMBDA_RE.finditer(source):
        masks.append(Mask(m.start(1), m.end(1), "lambda specifier"))
    size = len(source)
    for name in _specifier_macros(source, defs):
        params, body = defs.get(name.decode()) or KNOWN_MACROS[name.decode()]
        reason = "pragma" if "_Pragma" in body else "specifier macro"
        at = source.find(name)
        while at >= 0:
            end = at + len(name)
            if not (_word_before(source, at) or (end < size and _WORD[source[end]])
                    or _in_directive(source, at)):
                if params is not None:  # function-like: only a use with its arguments
                    paren = end
                    while paren < size and source[paren] in b" \t":
                        paren += 1
                    close = balanced_end(source, paren) if source[paren:paren + 1] == b"(" \
                        else None
                    if close is not None:
                        masks.append(Mask(at, close, reason))
                else:
                    masks.append(Mask(at, end, reason))
            at = source.find(name, end)
    return masks


_ATTRIBUTE_WORDS = (b"__align__", b"__cluster_dims__", b"__maxnreg__", b"_Pragma")
_ATTRIBUTE_RE = re.compile(rb"(__align__|__cluster_dims__|__maxnreg__|_Pragma)[ \t]*\(")


def _attributes(source: bytes) -> list[re.Match[bytes]]:
    """The matches of ``_ATTRIBUTE_RE`` in ``source``, in order (those ``finditer`` gives):
    found word by word (``matches_at``: the words are rare, and the regular expression engine
    would try a match at every "_" of the file)."""
    found = [m for word in _ATTRIBUTE_WORDS for m in matches_at(source, word, _ATTRIBUTE_RE)]
    found.sort(key=lambda m: m.start())
    return found
_LAMBDA_RE = re.compile(rb"\][ \t]*(__(?:device|host)__(?:[ \t]+__(?:device|host)__)?)")
_WORD = tuple(chr(c).isalnum() or c == 95 for c in range(256))


def _word_before(data: bytes, offset: int) -> bool:
    return offset > 0 and _WORD[data[offset - 1]]


def _specifier_macros(source: bytes, defs: Definitions) -> list[bytes]:
    """The macros used in ``source`` that stand for nothing but specifiers, launch bounds or
    a pragma (``CUTLASS_DEVICE``, ``C10_LAUNCH_BOUNDS_1``, ``CUTE_UNROLL``, a local ``#define
    MY_LB(n) __launch_bounds__(n)``). Masking them before the first parse is always right
    and spares the error-driven recovery its re-parses."""
    present = _known_prefixes(source)  # (few scans)
    names = [n for n in _KNOWN_NAMES if n[:n.index(b"_", 1) + 1] in present
             and n in source and n.decode() not in defs] if present else []
    for name, (_params, body) in defs.items():
        if _is_specifier_body(body, defs):
            names.append(name.encode())
    return names


_SPECIFIER_BODY_RE = re.compile(
    r"__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)|_Pragma\s*\(\s*\"[^\"]*\"\s*\)"
    r"|__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)"
    r"|\b(?:__global__|__device__|__host__|__forceinline__|__noinline__|inline|static)\b"
)


def _is_specifier_body(body: str, defs: Definitions) -> bool:
    if not body:
        return False
    expanded = _expand(body, defs, 1) if _MACRO_USE_RE.search(body) else body
    return not _SPECIFIER_BODY_RE.sub("", expanded).strip() and bool(expanded.strip())


def _in_directive(data: bytes, offset: int) -> bool:
    """Whether ``offset`` lies on a preprocessor line (continuation lines included)."""
    start = line_start(data, offset)
    while start >= 2 and data[start - 2 : start] == b"\\\n":
        start = line_start(data, start - 2)
    return data[start:offset].lstrip(b" \t")[:1] == b"#"


def blank(work: bytearray, start: int, end: int) -> None:
    work[start:end] = _blanks(bytes(work[start:end]), 0, end - start)


Edit = tuple[int, int, bytes, str]  # start, end, replacement (same length), reason


def recover(source: bytes, work: bytearray, tree: Tree, masks: list[Mask]) -> Tree:
    """Mask macro text near syntax errors and re-parse (incrementally) until clean or stuck.

    Each round masks every macro-looking text in the window of every error, and flattens
    the ``#if`` groups around errors whose window holds none; most files need one round."""
    groups = None
    taken: set[int] = {m.start for m in masks}
    for _ in range(MAX_RECOVERY_ROUNDS):
        errors = problem_nodes(tree)
        if not errors:
            break
        edits: list[Edit] = []
        unexplained: list[Node] = []
        seen: set[tuple[int, int]] = set()
        for err in errors:
            window = _error_window(source, err)
            if window in seen:
                continue
            seen.add(window)
            found = _macro_edits(source, *window, taken)
            edits += found
            if not found:
                unexplained.append(err)
        if unexplained:
            if groups is None:
                groups = _conditional_groups(source)
            edits += _flatten_conditionals(source, groups, unexplained, taken)
        if not edits:
            break
        for start, end, replacement, reason in edits:
            work[start:end] = replacement
            masks.append(Mask(start, end, reason))
            tree.edit(
                start_byte=start, old_end_byte=end, new_end_byte=end,
                start_point=point(source, start), old_end_point=point(source, end),
                new_end_point=point(source, end),
            )
        tree = parser().parse(bytes(work), tree)
        if not tree.root_node.has_error:
            break
    return tree


def _error_window(source: bytes, err: Node) -> tuple[int, int]:
    """The lines where the cause of an error usually is: the line where it starts, the
    previous non-blank line (a macro line before a declaration) and the next line (a
    ``#pragma`` between a loop header and its body). An ERROR node can span a whole file;
    its cause is at its start, so its end does not widen the window."""
    size = len(source)
    at = min(err.start_byte, size)
    lo = line_start(source, at)
    back = lo
    while back > 0:
        back = line_start(source, back - 1)
        if source[back:lo].strip():
            break
    hi = at
    for _ in range(2):
        nl = source.find(b"\n", hi)
        if nl < 0:
            return back, size
        hi = nl + 1
    return back, hi - 1


def _macro_edits(source: bytes, lo: int, hi: int, taken: set[int]) -> list[Edit]:
    """The masking edits for macro text in [lo, hi): every match of the first kind found
    (test header, statement-like macro line, specifier macro, misplaced ``#pragma``)."""
    region = source[lo:hi]
    edits: list[Edit] = []
    for m in _TEST_HEADER_RE.finditer(region):
        start, end = lo + m.start(1), lo + m.end(2)
        if start in taken or m.group(1) in _NOT_MACROS or _in_directive(source, start):
            continue
        taken.add(start)
        if start == line_start(source, start):
            # at column 1: a gtest-style "TEST(Gemm, 128x128) {": keep the name where it is,
            # blank the arguments, so that it parses as the function header "TEST(   ) {"
            open_paren = lo + m.start(2)
            blanked = source[start:open_paren + 1] + _blanks(source, open_paren + 1, end - 1)
            edits.append((start, end, blanked + b")", "test macro header"))
        else:  # indented: a statement macro followed by a block, "CUDA_KERNEL_LOOP(i, n) {"
            edits.append((start, end, _blanks(source, start, end), "statement-like macro"))
    if edits:
        return edits
    for m in _MACRO_LINE_RE.finditer(region):
        start, end = lo + m.start(1), lo + (m.end(2) if m.group(2) else m.end(1))
        if start not in taken and m.group(1) not in _NOT_MACROS \
                and not _in_directive(source, start):
            taken.add(start)
            edits.append((start, end, _blanks(source, start, end), "statement-like macro"))
    if edits:
        return edits
    for m in _SPECIFIER_MACRO_RE.finditer(region):
        start, end = lo + m.start(1), lo + (m.end(2) if m.group(2) else m.end(1))
        if start in taken or m.group(1) in _NOT_MACROS or _in_directive(source, start):
            continue
        taken.add(start)
        edits.append((start, end, _blanks(source, start, end), "specifier macro"))
    if edits:
        return edits
    for m in _PRAGMA_LINE_RE.finditer(region):
        start, end = lo + m.start(), lo + m.end()
        start += len(m.group()) - len(m.group().lstrip(b" \t"))
        if start not in taken:
            # "for (...)\n#pragma unroll\n  for (...)": the grammar allows no directive
            # between a statement's header and its body; the model still reads the pragma
            taken.add(start)
            edits.append((start, end, _blanks(source, start, end), "pragma"))
    return edits


def _blanks(source: bytes, start: int, end: int) -> bytes:
    return source[start:end].translate(_BLANK_TABLE)


_BLANK_TABLE = bytes(c if c in (10, 13) else 32 for c in range(256))


@dataclass
class _Group:
    """An #if ... #endif group: its directive lines and its branches (start, end, live),
    where live is the branch's condition as far as :func:`_condition` can tell."""

    directives: list[tuple[int, int]]
    branches: list[tuple[int, int, bool | None]]
    start: int
    end: int
    unbalanced: bool = False  # a branch opens or closes more braces/parens than it closes


def _unbalanced(text: bytes) -> bool:
    text = _COMMENT_OR_STRING_RE.sub(b"", text)
    return text.count(b"{") != text.count(b"}") or text.count(b"(") != text.count(b")")


_COMMENT_OR_STRING_RE = re.compile(
    rb'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', re.S
)


def _conditional_groups(source: bytes) -> list[_Group]:
    groups: list[_Group] = []
    stack: list[tuple[_Group, int, bool | None]] = []  # group, branch start, branch live
    for m in _DIRECTIVE_RE.finditer(source):
        kind, rest = m.group(1), _strip_comment(m.group(2))
        if kind in (b"if", b"ifdef", b"ifndef"):
            g = _Group([(m.start(), m.end())], [], m.start(), m.end())
            stack.append((g, m.end(), _condition(kind, rest)))
        elif not stack:
            continue
        else:
            g, bstart, live = stack.pop()
            g.branches.append((bstart, m.start(), live))
            g.unbalanced |= _unbalanced(source[bstart:m.start()])
            g.directives.append((m.start(), m.end()))
            if kind == b"endif":
                g.end = m.end()
                groups.append(g)
            else:
                stack.append((g, m.end(), True if kind == b"else" else _condition(kind, rest)))
    return groups


def _strip_comment(text: bytes) -> bytes:
    return re.sub(rb"/\*.*?\*/|//.*", b" ", text).strip()


# What a CUDA compile of device code defines, and what only a HIP/ROCm build defines: enough
# to pick the branch of "#if __CUDA_ARCH__ >= 800" or "#ifdef USE_ROCM" that nvcc would see.
_CUDA_DEFINED = frozenset({b"__CUDACC__", b"__CUDA_ARCH__", b"__NVCC__", b"__cplusplus",
                           b"__CUDACC_VER_MAJOR__", b"CUDA_VERSION"})
_CUDA_VALUES = {b"__CUDA_ARCH__": b"900", b"__CUDACC_VER_MAJOR__": b"12",
                b"CUDA_VERSION": b"12040", b"__cplusplus": b"201703"}
_HIP_NAME_RE = re.compile(rb"HIP|ROCM|AMD|CDNA|RDNA|GFX")
_IDENT_RE = re.compile(rb"[A-Za-z_]\w*")
_DEFINED_RE = re.compile(rb"\bdefined\s*(?:\(\s*(\w+)\s*\)|(\w+))")
_SAFE_EXPR_RE = re.compile(rb"[0-9\s()<>=!&|+\-*/%]*")


def _defined(name: bytes) -> bool | None:
    if name in _CUDA_DEFINED:
        return True
    if _HIP_NAME_RE.search(name):
        return False
    return None


def _condition(kind: bytes, expr: bytes) -> bool | None:
    """The value of a directive's condition in a CUDA build, or None when it depends on
    something unknown (a project macro)."""
    if kind in (b"ifdef", b"ifndef"):
        d = _defined(expr.split()[0]) if expr.split() else None
        return d if d is None or kind == b"ifdef" else not d
    unknown = False

    def defined(m: re.Match[bytes]) -> bytes:
        nonlocal unknown
        d = _defined(m.group(1) or m.group(2))
        unknown |= d is None
        return b"1" if d else b"0"

    def ident(m: re.Match[bytes]) -> bytes:
        nonlocal unknown
        name = m.group()
        if name in _CUDA_VALUES:
            return _CUDA_VALUES[name]
        if _HIP_NAME_RE.search(name):
            return b"0"
        unknown = True
        return b"0"

    text = _DEFINED_RE.sub(defined, expr)
    text = re.sub(rb"\b(\d+)[uUlL]+\b", rb"\1", text)
    text = _IDENT_RE.sub(ident, text)
    if unknown or not _SAFE_EXPR_RE.fullmatch(text):
        return None
    py = re.sub(rb"!(?!=)", b" not ", text.replace(b"&&", b" and ").replace(b"||", b" or "))
    try:
        return bool(evaluate(py.decode().strip(), {}, PREPROCESSOR))
    except ExprError:  # malformed: nvcc would refuse it too
        return None


def _flatten_conditionals(
    source: bytes, groups: list[_Group], errors: list[Node], taken: set[int]
) -> list[Edit]:
    """Flatten every group that holds an error or splits braces (the error it causes can be
    reported far away, at the end of the enclosing block): keep the branch a CUDA build would
    see (the first whose condition is true or unknown), blank the directives and the rest."""
    edits: list[Edit] = []
    for g in groups:
        if g.start in taken:
            continue
        if not g.unbalanced and not any(
            g.start <= e.start_byte <= g.end or e.start_byte <= g.start <= e.end_byte
            for e in errors
        ):
            continue
        keep = next((i for i, b in enumerate(g.branches) if b[2] is not False), None)
        spans = list(g.directives) + [
            (b[0], b[1]) for i, b in enumerate(g.branches) if i != keep
        ]
        for start, end in spans:
            edits.append((start, end, _blanks(source, start, end), "conditional branch"))
        taken.add(g.start)
    return edits


# --------------------------------------------------------------------------------------
# What a masked macro meant


@dataclass(frozen=True)
class MacroMeaning:
    """What the front end could tell of a masked macro: the function specifiers and launch
    bounds it stands for, or the pragma it expands to ("unroll", "unroll 1")."""

    specifiers: tuple[str, ...] = ()
    launch_bounds: tuple[str, str | None] | None = None
    pragma: str | None = None

    @property
    def unroll(self) -> str | None:
        if self.pragma is None or not self.pragma.startswith("unroll"):
            return None
        return self.pragma[len("unroll"):].strip()


# The specifier and pragma macros of the libraries that kernels are written against, as their
# headers define them. A ``#define`` in the file itself takes precedence. Function-like
# macros have their parameter names; object-like ones have None.
KNOWN_MACROS: Definitions = {
    "CUTLASS_DEVICE": (None, "__forceinline__ __device__"),
    "CUTLASS_HOST_DEVICE": (None, "__forceinline__ __host__ __device__"),
    "CUTLASS_GLOBAL": (None, "__global__"),
    "CUTLASS_PRAGMA_UNROLL": (None, '_Pragma("unroll")'),
    "CUTLASS_PRAGMA_NO_UNROLL": (None, '_Pragma("unroll 1")'),
    "CUTE_DEVICE": (None, "__forceinline__ __device__"),
    "CUTE_HOST_DEVICE": (None, "__forceinline__ __host__ __device__"),
    "CUTE_HOST": (None, "__forceinline__ __host__"),
    "CUTE_UNROLL": (None, '_Pragma("unroll")'),
    "CUTE_NO_UNROLL": (None, '_Pragma("unroll 1")'),
    "C10_HOST_DEVICE": (None, "__host__ __device__"),
    "C10_DEVICE": (None, "__device__"),
    "C10_HOST": (None, "__host__"),
    "C10_LAUNCH_BOUNDS_0": (None, "__launch_bounds__(256, 4)"),
    "C10_LAUNCH_BOUNDS_1": (("max_threads",), "__launch_bounds__(max_threads)"),
    "C10_LAUNCH_BOUNDS_2": (("max_threads", "min_blocks"),
                            "__launch_bounds__(max_threads, min_blocks)"),
    "_CCCL_DEVICE": (None, "__device__"),
    "_CCCL_HOST_DEVICE": (None, "__host__ __device__"),
    "_CCCL_FORCEINLINE": (None, "__forceinline__"),
    "CUB_RUNTIME_FUNCTION": (None, "__host__ __device__"),
    "CUB_DETAIL_KERNEL_ATTRIBUTES": (None, "__global__"),
    "THRUST_HOST_DEVICE": (None, "__host__ __device__"),
    "TORCH_HOST_DEVICE": (None, "__host__ __device__"),
}
_KNOWN_NAMES = tuple(n.encode() for n in KNOWN_MACROS)
# what the known names start with (``CUTLASS_``, ``C10_``, ...): a file that holds none of
# these holds none of the names (one scan of the file each, not one per name)
_KNOWN_PREFIXES = tuple(dict.fromkeys(n[:n.index(b"_", 1) + 1] for n in _KNOWN_NAMES))
# the prefixes, found by one scan per first byte shared by several (``C`` of ``CUTLASS_``,
# ``CUTE_``, ``C10_``, ``CUB_``: a pattern that starts with one literal byte is scanned for at
# C speed), each match taking that byte only (the rest is a lookahead, so no place of a prefix
# is passed over); a prefix alone with its first byte by one ``in``
_PREFIX_GROUPS = {first: [p for p in _KNOWN_PREFIXES if p[:1] == first]
                  for first in dict.fromkeys(p[:1] for p in _KNOWN_PREFIXES)}
_PREFIX_SCANS = tuple(
    (first, re.compile(re.escape(first) + b"(?=(" + b"|".join(re.escape(p[1:]) for p in group)
                       + b"))").findall)
    for first, group in _PREFIX_GROUPS.items() if len(group) > 1)
_LONE_PREFIXES = tuple(group[0] for group in _PREFIX_GROUPS.values() if len(group) == 1)


def _known_prefixes(source: bytes) -> set[bytes]:
    """The prefixes of ``_KNOWN_PREFIXES`` that ``source`` holds."""
    found = {first + rest for first, scan in _PREFIX_SCANS for rest in scan(source)}
    found.update(p for p in _LONE_PREFIXES if p in source)
    return found


_DEFINE_RE = re.compile(
    rb"#[ \t]*define[ \t]+(\w+)(\([^)\n]*\))?[ \t]*((?:\\\r?\n|[^\n])*)", re.M
)
_MACRO_USE_RE = re.compile(r"\b([A-Z_][A-Z0-9_]*)\b(\s*\((?:[^()]|\([^()]*\))*\))?")
_SPECIFIER_WORD_RE = re.compile(
    r"\b(__global__|__device__|__host__|__forceinline__|__noinline__|inline|static)\b")
_LAUNCH_BOUNDS_RE = re.compile(r"\b__launch_bounds__\s*\(")
_PRAGMA_TEXT_RE = re.compile(r'_Pragma\s*\(\s*"([^"]*)"\s*\)|#\s*pragma\s+(.*)', re.S)


_CONTINUATION_RE = re.compile(rb"\\\r?\n")


def definitions_of(source: bytes) -> Definitions:
    """The file's own ``#define``s: name -> (parameter names or None, body)."""
    defs: Definitions = {}
    for m in _DEFINE_RE.finditer(source):
        params = m.group(2)
        names = tuple(p.strip() for p in params.decode("utf-8", "replace")[1:-1].split(",")
                      ) if params is not None else None
        body = m.group(3)
        if b"\\" in body:
            body = _CONTINUATION_RE.sub(b" ", body)
        body = body.decode("utf-8", "replace")
        defs[m.group(1).decode("utf-8", "replace")] = (names, body.strip())
    return defs


def _split_args(text: str) -> list[str]:
    """Split a parenthesised argument list at its top-level commas."""
    args, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    args.append("".join(cur).strip())
    return args


def _expand(text: str, defs: Definitions, depth: int) -> str:
    """Expand the known macros in ``text`` (a few levels; no stringizing or pasting)."""

    def one(m: re.Match[str]) -> str:
        name, call = m.group(1), m.group(2)
        d = defs.get(name) or KNOWN_MACROS.get(name)
        if d is None:
            return m.group()
        params, body = d
        if params is not None:
            if call is None:
                return m.group()
            values = _split_args(call.strip()[1:-1])
            for p, v in zip(params, values, strict=False):
                if p:
                    body = re.sub(rf"\b{re.escape(p)}\b", lambda _m, v=v: v, body)
        elif call is not None:
            body += call
        return _expand(body, defs, depth + 1) if depth < 3 else body

    return _MACRO_USE_RE.sub(one, text)


def meaning(text: str, defs: Definitions, cache: dict[str, MacroMeaning]) -> MacroMeaning:
    """What the masked text ``text`` stands for, from its expansion (by the file's macros
    ``defs``) or, for a macro nobody defines here, from its name (``*_DEVICE``,
    ``*LAUNCH_BOUNDS*(n)``, ``*_UNROLL``); remembered in ``cache`` (one per unit)."""
    if text in cache:
        return cache[text]
    expanded = _expand(text, defs, 0) if _MACRO_USE_RE.search(text) else text
    specifiers = tuple(dict.fromkeys(_SPECIFIER_WORD_RE.findall(expanded)))
    launch_bounds = None
    lb = _LAUNCH_BOUNDS_RE.search(expanded)
    if lb is not None:
        args = _split_args(expanded[lb.end():].rsplit(")", 1)[0])
        launch_bounds = (args[0], args[1] if len(args) > 1 and args[1] else None)
    pm = _PRAGMA_TEXT_RE.search(expanded)
    pragma = " ".join((pm.group(1) or pm.group(2) or "").split()) if pm else None
    if expanded == text and not (specifiers or launch_bounds or pragma):
        name = text.split("(", 1)[0].strip()
        if name.endswith("NO_UNROLL"):
            pragma = "unroll 1"
        elif name.endswith("UNROLL"):
            pragma = "unroll"
        elif "LAUNCH_BOUNDS" in name and "(" in text:
            args = _split_args(text.split("(", 1)[1].rsplit(")", 1)[0])
            launch_bounds = (args[0], args[1] if len(args) > 1 and args[1] else None)
        else:
            words = set(name.split("_"))
            specifiers = tuple(s for s, w in (("__host__", "HOST"), ("__device__", "DEVICE"),
                                              ("__global__", "GLOBAL")) if w in words)
    found = cache[text] = MacroMeaning(specifiers, launch_bounds, pragma)
    return found
