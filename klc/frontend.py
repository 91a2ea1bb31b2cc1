"""The front end: CUDA C++ source bytes -> a lossless tree-sitter tree -> a model of the unit.

The model keeps the original bytes and every node's byte span, so that a rewrite edits bytes
and leaves the rest of the file exactly as it was. Text is always sliced from the original
bytes (``Unit.text``), never from the parser's input, because the parser may have seen a
*masked* copy: real kernel code is macro-heavy, and tree-sitter-cuda cannot know what
``CUTE_UNROLL`` or ``CUTLASS_DEVICE`` expand to. The recovery step replaces such text with
blanks of the same length (newlines kept), so byte offsets and line:column stay exact, and
every mask is kept (``Unit.masks``, with its reason) so that the model still reads it:

1. before the first parse, wherever they occur outside a directive: ``__align__(N)``,
   ``__cluster_dims__(...)``, ``__maxnreg__(...)`` (kept as function attributes),
   ``_Pragma("...")`` operators, the ``__device__`` of an extended lambda, and the macros that
   stand for nothing but specifiers, launch bounds or a pragma: those of CUTLASS, CuTe,
   PyTorch, CUB (``KNOWN_MACROS``) and the file's own ``#define MY_LB(n)
   __launch_bounds__(n)``. Masking these is always right, and it spares most files the
   re-parses of step 2;
2. only when the tree has errors, repeatedly (at most ``MAX_RECOVERY_ROUNDS`` re-parses,
   each incremental), in the lines around each ERROR/MISSING node: a gtest-style ``TEST(Name,
   128x128) {`` header keeps its name and loses its arguments (``TEST(             ) {``); a
   line that holds nothing but an ALL-CAPS macro call (``SOME_MACRO(a, b)``) is masked; an
   ALL-CAPS specifier macro inside a declaration is masked; a ``#pragma`` between a loop
   header and its body is masked. Where none of these explains an error, the ``#if`` groups
   around it, and every group whose branches split braces, are flattened to the branch a
   CUDA build sees (``__CUDA_ARCH__`` is taken as 900, HIP/ROCm macros as undefined, an
   unknown condition as true; ``#if 0`` as false): directives and other branches masked;
3. a file whose last line has no newline is parsed with one appended (spans past the end
   are clamped), so no hidden MISSING node is reported for it.

A masked macro still means something: ``MacroMeaning`` reads its expansion (the file's own
``#define`` first, then ``KNOWN_MACROS``, then its name) into specifiers, launch bounds or an
unroll pragma of the function or loop it belongs to. What stays broken is reported as a
syntax problem with line:column, and a kernel whose definition still holds an error is
reported as not analyzable, with the reason.

Speed: one tree-sitter query pass collects every construct the model needs (no Python walk
over all nodes); ERROR/MISSING nodes are found by a descent into ``has_error`` subtrees only;
libclang is loaded only when ``Unit.facts`` is asked for.
"""

from __future__ import annotations

import ast
import bisect
import operator
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser, Point, Query, QueryCursor, Tree

from klc.errors import KlcError, where

if TYPE_CHECKING:
    from klc.facts import Facts

LANGUAGE = Language(tree_sitter_cuda.language())


def _field(name: str) -> int:
    fid = LANGUAGE.field_id_for_name(name)
    if fid is None:  # (a grammar without the field: fail at import, not on a file)
        raise RuntimeError(f"tree-sitter-cuda has no field {name!r}")
    return fid


# field ids of the grammar: ``child_by_field_id`` costs a third of ``child_by_field_name``,
# which looks the name up on every call
F_ARGUMENT = _field("argument")
F_ARGUMENTS = _field("arguments")
F_BODY = _field("body")
F_CONDITION = _field("condition")
F_DECLARATOR = _field("declarator")
F_DEFAULT_VALUE = _field("default_value")
F_DIRECTIVE = _field("directive")
F_FIELD = _field("field")
F_FUNCTION = _field("function")
F_INDICES = _field("indices")
F_INITIALIZER = _field("initializer")
F_LEFT = _field("left")
F_NAME = _field("name")
F_OPERATOR = _field("operator")
F_PARAMETERS = _field("parameters")
F_RIGHT = _field("right")
F_SIZE = _field("size")
F_TYPE = _field("type")
F_UPDATE = _field("update")
F_VALUE = _field("value")
MAX_RECOVERY_ROUNDS = 12
SOURCE_SUFFIXES = (".cu", ".cuh")

_local = threading.local()

# A file's macros: name -> (parameter names, or None for an object-like macro; body)
Definitions = dict[str, tuple[tuple[str, ...] | None, str]]


def parser() -> Parser:
    """One tree-sitter parser per thread (parsers are not thread-safe)."""
    p = getattr(_local, "parser", None)
    if p is None:
        p = _local.parser = Parser(LANGUAGE)
    return p


_EXPR_PREFIX = b"void __klc_expr__() {\nauto __klc_e__ = ("


@lru_cache(maxsize=4096)
def parse_expression(text: str) -> tuple[Node, bytes] | None:
    """Parse a text (a #define body, a launch configuration, a hole value) as one C++
    expression: its node (the parenthesised expression around it) and the bytes it was
    parsed from; None when it is not one expression."""
    src = _EXPR_PREFIX + text.encode() + b");\n}\n"
    root = parser().parse(src).root_node
    if root.has_error:
        return None
    node = root.descendant_for_byte_range(len(_EXPR_PREFIX) - 1, len(src) - 5)
    while node is not None and not (node.type == "parenthesized_expression"
                                    and node.start_byte == len(_EXPR_PREFIX) - 1):
        node = node.parent
    if node is None or node.end_byte != len(src) - 4:
        return None  # "a)(b": the parentheses close before the text ends
    return node, src


# One query collects everything the model needs in a single pass in C, instead of a Python
# walk over every node: the front end must cost little more than the bare parse.
# the node types that guards and anchors ask for most: indexed by the model's query run
_INDEXED_TYPES = (
    "declaration", "assignment_expression", "update_expression", "return_statement",
    "break_statement", "continue_statement", "expression_statement", "compound_statement",
    "subscript_expression", "binary_expression", "if_statement", "preproc_def")
# what ``Unit.squeezed`` takes out besides comments and line continuations: whitespace, and
# the punctuation the matcher ignores (klc.match._IGNORED_TOKENS)
SQUEEZED_OUT = b" \t\r\n\f\v;,"
LOOP_TYPES = ("for_statement", "for_range_loop", "while_statement", "do_statement")


_by_start = operator.attrgetter("start_byte")
_by_end = operator.attrgetter("end_byte")


def _sort_doc_order(nodes: list[Node]) -> None:
    """Sort in place in document order (by start, then the longer first; ties keep their
    order) with two stable sorts on C-level keys: by end descending, then by start."""
    nodes.sort(key=_by_end, reverse=True)
    nodes.sort(key=_by_start)


_MODEL_QUERY = Query(
    LANGUAGE,
    """
    (function_definition) @function
    (call_expression) @call
    (call_expression (kernel_call_syntax)) @launch
    (for_statement) @loop
    (for_range_loop) @loop
    (while_statement) @loop
    (do_statement) @loop
    (declaration (type_qualifier "__shared__")) @declaration
    (preproc_call directive: (preproc_directive)) @pragma
    (gnu_asm_expression) @asm
    (comment) @comment
    "__global__" @global
    """
    # the per-type index (Unit.nodes_by_type): the node types that guards and anchors ask for
    # most, captured in the same traversal as the model (each query run walks the whole tree)
    + "".join(f"\n    ({t}) @t.{t}" for t in _INDEXED_TYPES),
)

_PROBLEM_QUERY = Query(LANGUAGE, "(ERROR) @error (MISSING) @missing")

BARRIERS = frozenset(
    {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or",
     "__syncwarp", "__barrier_sync"}
)
WARP_INTRINSIC_PREFIXES = ("__shfl", "__ballot_sync", "__any_sync", "__all_sync", "__uni_sync",
                           "__activemask", "__match_any_sync", "__match_all_sync", "__reduce_")
CG_WARP_METHODS = frozenset({"shfl", "shfl_down", "shfl_up", "shfl_xor", "ballot", "any", "all"})
FUNCTION_SPECIFIERS = frozenset(
    {"__global__", "__device__", "__host__", "__forceinline__", "__noinline__", "inline",
     "static", "constexpr", "extern", "virtual"}
)


# --------------------------------------------------------------------------------------
# The model


@dataclass(frozen=True)
class Problem:
    """A syntax problem left after recovery, from a tree-sitter ERROR or MISSING node."""

    start: int
    end: int
    line: int
    col: int
    message: str

    def describe(self, path: str) -> str:
        return f"{where(path, self.line, self.col)}: {self.message}"


@dataclass(unsafe_hash=True)  # immutable by convention: a frozen __init__ costs 3x
class Mask:
    """Text the parser saw as blanks (same length), and why."""

    start: int
    end: int
    reason: str


@dataclass(unsafe_hash=True)  # immutable by convention: a frozen __init__ costs 3x
class Param:
    """A function parameter: its declared type, split into the facts rules ask about."""

    name: str
    type: str  # the declared type as written, without the name, e.g. "const float* __restrict__"
    base_type: str  # "float", "float4", "T"
    pointer: int  # levels of indirection
    const: bool  # the pointee (or the value, for a non-pointer) is const
    restrict: bool  # the pointer is __restrict__ / __restrict
    reference: bool
    array: bool
    start: int
    end: int
    star_end: int = -1  # just after the `*` nearest the name (where __restrict__ goes); -1: none


@dataclass(frozen=True)
class TemplateParam:
    kind: str  # "type" | "value" | "template"
    name: str
    type: str  # for a value parameter: its type; for a type parameter: "typename"
    default: str | None


@dataclass(frozen=True)
class LaunchBounds:
    max_threads: str
    min_blocks: str | None
    start: int
    end: int


@dataclass(unsafe_hash=True)  # immutable by convention: a frozen __init__ costs 3x
class SharedDecl:
    """A ``__shared__`` variable: static (sized) or ``extern`` (dynamic)."""

    name: str
    type: str
    dims: tuple[str, ...]  # array sizes as written; "" for an unsized (extern) dimension
    extern: bool
    start: int
    end: int


@dataclass(unsafe_hash=True)  # immutable by convention: a frozen __init__ costs 3x
class Call:
    name: str  # "__syncthreads", "__shfl_down_sync", "block.sync", ...
    start: int
    end: int


@dataclass(unsafe_hash=True)  # immutable by convention: a frozen __init__ costs 3x
class Pragma:
    text: str  # "unroll 4"
    start: int
    end: int


@dataclass(unsafe_hash=True)  # immutable by convention: a frozen __init__ costs 3x
class Loop:
    kind: str  # "for" | "while" | "do"
    var: str | None  # the induction variable, when the loop has a recognisable one
    init: str | None
    cond: str | None
    update: str | None
    depth: int  # loops enclosing this one inside the function
    unroll: str | None  # the argument of an immediately preceding "#pragma unroll", "" if bare
    start: int
    end: int


@dataclass(frozen=True)
class Launch:
    """A kernel launch ``name<<<grid, block[, smem[, stream]]>>>(args)`` in host code."""

    kernel: str
    template_args: str | None
    config: tuple[str, ...]
    args: tuple[str, ...]
    start: int
    end: int


@dataclass
class Function:
    """A ``__global__`` or ``__device__`` function (or a host function that launches kernels)."""

    name: str
    specifiers: tuple[str, ...]
    return_type: str
    # the parameters are read on first use (most functions of a file are never asked):
    # ``params`` is a property over the parameter list node and the source
    param_list: tuple[bytes, Node | None] = field(repr=False, compare=False)
    template_params: tuple[TemplateParam, ...]
    launch_bounds: LaunchBounds | None
    attributes: tuple[str, ...]  # masked attributes such as "__cluster_dims__(2, 1, 1)"
    extern_c: bool
    node: Node = field(repr=False)
    start: int  # the whole declaration, including "template <...>" and 'extern "C"'
    end: int
    body_start: int
    body_end: int
    shared: list[SharedDecl] = field(default_factory=list)
    pragmas: list[Pragma] = field(default_factory=list)
    barriers: list[Call] = field(default_factory=list)
    warp_intrinsics: list[Call] = field(default_factory=list)
    atomics: list[Call] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    asm: list[tuple[int, int]] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    _params: tuple[Param, ...] | None = field(default=None, init=False, repr=False,
                                              compare=False)
    _param_names: dict[str, Param] | None = field(default=None, init=False, repr=False,
                                                  compare=False)

    @property
    def params(self) -> tuple[Param, ...]:
        if self._params is None:
            src, plist = self.param_list
            self._params = tuple(_params(src, plist)) if plist is not None else ()
        return self._params

    @property
    def is_kernel(self) -> bool:
        return "__global__" in self.specifiers

    @property
    def is_device(self) -> bool:
        return "__device__" in self.specifiers

    @property
    def kind(self) -> str:
        if self.is_kernel:
            return "global"
        if self.is_device:
            return "host device" if "__host__" in self.specifiers else "device"
        return "host"

    @property
    def analyzable(self) -> bool:
        return not self.problems

    def param(self, name: str) -> Param | None:
        by_name = self._param_names
        if by_name is None:  # the first parameter of a name, as a scan in order finds it
            by_name = self._param_names = {}
            for p in self.params:
                by_name.setdefault(p.name, p)
        return by_name.get(name)


@dataclass(frozen=True)
class Unanalyzable:
    """A ``__global__`` kernel the front end could not model, and why."""

    name: str
    line: int
    col: int
    reason: str


class Unit:
    """One parsed source file: the original bytes, the tree, and the model built on it."""

    def __init__(self, path: str, source: bytes, parsed: bytes, tree: Tree, masks: list[Mask],
                 defines: Definitions | None = None):
        self.path = path
        self.source = source
        self.parsed = parsed  # what the parser saw: ``source`` with masks applied
        self.tree = tree
        self.masks = tuple(masks)
        # the masks the recovery step added (parse_bytes), which a re-parse carries over
        self.recovered: list[Mask] = []
        self._mask_starts = [m.start for m in self.masks]
        self._defines = _definitions_of(source) if defines is None else defines
        self._meanings: dict[str, MacroMeaning] = {}
        # a block's significant statements and their kinds, by node id (klc.match)
        self._statements: dict[int, tuple[list[Node], list[str]]] = {}
        self._kids: dict[int, list[Node]] = {}  # significant children by node id (klc.match)
        self.problems: list[Problem] = []
        _find_problems(self)
        # the model (functions, launches, the per-type index) is built on first use: a
        # re-parse that only checks for new syntax problems never needs it
        self._modeled = False
        self._unroll_at: dict[int, str] = {}  # loop start -> unroll argument, from a mask
        self._index: dict[str, list[Node]] = {}  # node type -> nodes in source order
        self._unsorted: set[str] = set()  # types of _index whose list is not sorted yet
        self._functions: list[Function] = []  # sorted by start
        self._function_starts: list[int] = []
        self._launches: list[Launch] = []
        self._comments: list[Node] = []
        self._squeezed: bytes | None = None
        self._unanalyzable: list[Unanalyzable] = []
        # answers the guards derive from this unit, by key (klc.guards._memo): kept on the
        # unit, so they live and die with it
        self.memo: dict[str, Any] = {}

    def _model(self) -> None:
        if not self._modeled:
            self._modeled = True
            _build_model(self)

    @property
    def functions(self) -> list[Function]:
        """The functions defined in the file, sorted by start."""
        self._model()
        return self._functions

    @property
    def launches(self) -> list[Launch]:
        """The kernel launches (``k<<<...>>>``) of the file, in source order."""
        self._model()
        return self._launches

    @property
    def unanalyzable(self) -> list[Unanalyzable]:
        """The ``__global__`` kernels the front end could not model, and why."""
        self._model()
        return self._unanalyzable

    # -- text and positions -----------------------------------------------------------

    @cached_property
    def _line_starts(self) -> list[int]:
        """Offsets of line starts, built on the first position asked (most parses ask none)."""
        return _line_starts(self.source)

    @property
    def squeezed(self) -> bytes:
        """The parser's text (``parsed``: masks blank) without its comments, line
        continuations, whitespace and the bytes of ``SQUEEZED_OUT``: what is left when
        everything the matcher skips between two tokens is taken out (``klc.match``'s
        prefilter looks for an anchor's runs of tokens in it with ``in``)."""
        squeezed = self._squeezed
        if squeezed is None:
            self._model()
            parsed, parts, pos = self.parsed, [], 0
            for c in self._comments:  # (in document order, none inside another)
                if c.start_byte >= pos:
                    parts.append(parsed[pos:c.start_byte])
                    pos = c.end_byte
            parts.append(parsed[pos:])
            squeezed = self._squeezed = b"".join(parts).replace(b"\\\r\n", b"").replace(
                b"\\\n", b"").translate(None, SQUEEZED_OUT)
        return squeezed

    @property
    def root(self) -> Node:
        return self.tree.root_node

    def text(self, node_or_start: Node | int, end: int | None = None) -> str:
        """The original text of a node or byte span (never the masked copy)."""
        if end is None:
            if isinstance(node_or_start, int):
                raise TypeError("Unit.text(start, end): the end is missing")
            return self.source[node_or_start.start_byte:node_or_start.end_byte].decode(
                "utf-8", "replace")  # slicing clamps a span past the end (no final newline)
        return self.source[node_or_start:end].decode("utf-8", "replace")

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a byte offset; the column counts bytes, like clang's."""
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1

    def where(self, offset: int) -> str:
        line, col = self.position(offset)
        return where(self.path, line, col)

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline."""
        start = self._line_starts[line - 1]
        end = self._line_starts[line] if line < len(self._line_starts) else len(self.source)
        return self.source[start:end].decode("utf-8", "replace").rstrip("\r\n")

    # -- lookups --------------------------------------------------------------------------

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.is_kernel]

    def function(self, name: str) -> Function | None:
        return next((f for f in self.functions if f.name == name), None)

    def function_at(self, offset: int) -> Function | None:
        """The innermost function whose body holds ``offset``: of those that hold it, the
        one that starts last (the last in ``functions`` on a tie), found by bisection."""
        functions = self.functions
        starts = self._function_starts
        if len(starts) != len(functions):
            starts = self._function_starts = [f.start for f in functions]
        i = bisect.bisect_right(starts, offset) - 1
        while i >= 0:
            f = functions[i]
            if offset < f.end:
                return f
            i -= 1
        return None

    def in_error(self, start: int, end: int) -> Problem | None:
        """The first syntax problem overlapping a byte span, if any."""
        for p in self.problems:
            if p.start < end and start < max(p.end, p.start + 1):
                return p
        return None

    def nodes_by_type(self, types: Iterable[str]) -> dict[str, list[Node]]:
        """Every node of each given type, in source order, by type. The common types come
        from the model's one query run; others are found by one more query for all of them,
        and remembered."""
        self._model()
        index = self._index
        unsorted = self._unsorted
        for t in types:
            if t in unsorted:  # sorted on first use: most types are never asked for
                unsorted.discard(t)
                _sort_doc_order(index[t])
        missing = sorted({t for t in types if t not in index})
        if missing:
            key = "|".join(missing)
            q = _type_queries.get(key)
            if q is None:
                q = _type_queries[key] = Query(LANGUAGE, " ".join(f"({t}) @{t}"
                                                                 for t in missing))
            found = QueryCursor(q).captures(self.root)
            for t in missing:
                nodes = found.get(t, [])
                _sort_doc_order(nodes)
                index[t] = nodes
        return {t: index[t] for t in types}

    def nodes_of_type(self, *types: str) -> Iterator[Node]:
        """Every node of the given types, in source order, found by a query (not a walk)."""
        by_type = self.nodes_by_type(types)
        if len(types) == 1:
            yield from by_type[types[0]]
            return
        nodes = [n for t in types for n in by_type[t]]
        _sort_doc_order(nodes)
        yield from nodes

    @cached_property
    def facts(self) -> Facts:
        """Semantic facts from libclang, built on first use and cached for this unit."""
        from klc.facts import Facts

        return Facts(self)


_type_queries: dict[str, Query] = {}


# --------------------------------------------------------------------------------------
# Reading and parsing


def read_source(path: str | Path) -> bytes:
    """Read a source file, or raise KlcError with a message naming the file."""
    from klc.fsutil import read_input

    data = read_input(path, "CUDA source file")  # regular files only, bounded, never blocks
    check_text(str(path), data)
    return data


def check_text(path: str, data: bytes) -> None:
    """Refuse what is not CUDA source text: empty, binary, or not UTF-8."""
    if not data.strip():
        raise KlcError(f"{path}: file is empty")
    if b"\0" in data[:8192]:
        raise KlcError(f"{path}: binary file (contains NUL bytes), not CUDA source")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise KlcError(
            f"{where(path, line, col)}: not UTF-8 text (byte 0x{data[e.start]:02x})"
        ) from None


def parse_file(path: str | Path) -> Unit:
    return parse_bytes(read_source(path), str(path))


def parse_bytes(source: bytes, path: str = "<memory>", *,
                previous: tuple[Unit, list[tuple[int, int, int]]] | None = None) -> Unit:
    """Parse CUDA source into a Unit, with the recovery step described in the module doc.

    ``previous``: (a unit, the changes that turn its source into this one: ``(start, end,
    new length)`` spans of the old source, sorted, not overlapping). Its tree is then
    reused for what did not change (tree-sitter's incremental parse), and so are the masks
    its recovery made where their text did not change (the same macro line, unchanged,
    would be found and masked again): a rewrite's re-parse costs a fraction of a whole one,
    and gives the tree and problems of a whole parse."""
    work = bytearray(source)
    if not source.endswith(b"\n"):
        work += b"\n"  # past the end of the source: no span of the original changes
    defs = _definitions_of(source) if b"define" in source else {}
    masks = _always_masks(source, defs)
    for mask in masks:
        _blank(work, mask.start, mask.end)
    always = len(masks)  # (after these: the recovery's, carried over or found again)
    if previous is not None and previous[0].recovered:
        _carry_recovered(work, masks, *previous)
    data = bytes(work)
    old = _edited_tree(*previous, data) if previous is not None else None
    tree = parser().parse(data, old) if old is not None else parser().parse(data)
    if len(source) > DEPTH_CHECK_BYTES:
        _check_depth(tree, path)
    if tree.root_node.has_error:
        tree = _recover(source, work, tree, masks)
    recovered = masks[always:]
    masks.sort(key=lambda m: m.start)
    unit = Unit(path, source, bytes(work[: len(source)]), tree, masks, defs)
    unit.recovered = recovered
    return unit


MAX_DEPTH = 8192  # syntax tree levels: real code nests a few dozen deep
DEPTH_CHECK_BYTES = 65536  # checked above this size (below, a tree cannot nest deep enough to
# slow the queries down: they slowed past 65,536 levels, and a level takes 2 bytes or more)


def _check_depth(tree: Tree, path: str) -> None:
    """Refuse a tree nested deeper than MAX_DEPTH (one expression of 70,000 terms made the
    model's queries run for minutes), with the place where it gets too deep."""
    cursor = tree.walk()
    depth = 0
    while True:
        if cursor.goto_first_child():
            depth += 1
            if depth > MAX_DEPTH:
                row, col = cursor.node.start_point
                raise KlcError(f"{where(path, row + 1, col + 1)}: code nested more than "
                               f"{MAX_DEPTH} levels deep (an expression of that many terms?); "
                               "klc does not read it")
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return
            depth -= 1


def _carry_recovered(work: bytearray, masks: list[Mask], unit: Unit,
                     changes: list[tuple[int, int, int]]) -> None:
    """Put the old unit's recovery masks into the new text (``work``), each moved by the
    changes before it, where no change touches its text or the lines around it (then a
    whole parse would see the same macro text in the same surroundings)."""
    old = unit.parsed
    size = len(unit.source)
    i, delta = 0, 0
    taken = {m.start for m in masks}
    for m in sorted(unit.recovered, key=lambda m: m.start):
        # the lines around the mask: where recovery looks for the cause of an error
        lo = _line_start(unit.source, max(0, _line_start(unit.source, m.start) - 1))
        nl = unit.source.find(b"\n", m.end)
        hi = size if nl < 0 else unit.source.find(b"\n", nl + 1)
        hi = size if hi < 0 else hi
        while i < len(changes) and changes[i][1] <= lo:
            delta += changes[i][2] - (changes[i][1] - changes[i][0])
            i += 1
        if i < len(changes) and changes[i][0] < hi:
            continue  # a change near it: recovery decides afresh
        start, end = m.start + delta, m.end + delta
        if start in taken or bytes(work[start:end]) != unit.source[m.start:m.end]:
            continue
        work[start:end] = old[m.start:m.end]
        masks.append(Mask(start, end, m.reason))
        taken.add(start)


def _edited_tree(unit: Unit, changes: list[tuple[int, int, int]], data: bytes) -> Tree | None:
    """A copy of ``unit``'s tree, edited (``Tree.edit``) to describe ``data``, the text to
    parse next: the changed spans, and between them every stretch whose masking differs (a
    mask that recovery added to the old text, one of the new text's). None when the
    changes do not account for the new length (then the parse starts from nothing)."""
    old = unit.parsed + (b"" if unit.source.endswith(b"\n") else b"\n")
    spans: list[tuple[int, int, int]] = []  # old start, old end, new length
    pos = delta = 0
    for start, end, length in [*changes, (len(old), len(old), 0)]:
        if start < pos or end < start:
            return None
        if old[pos:start] != data[pos + delta:start + delta]:
            spans.append((pos, start, start - pos))  # the same length, other masks
        if end > start or length:
            spans.append((start, end, length))
        delta += length - (end - start)
        pos = end
    if len(old) + delta != len(data):
        return None
    tree = unit.tree.copy()
    lines_at = _line_starts(old)

    def point(offset: int) -> Point:
        row = bisect.bisect_right(lines_at, offset) - 1
        return Point(row, offset - lines_at[row])

    delta = sum(length - (end - start) for start, end, length in spans)
    for start, end, length in reversed(spans):  # from the end: earlier offsets stay valid
        delta -= length - (end - start)
        begin = point(start)
        inserted = data[start + delta:start + delta + length]
        lines = inserted.count(b"\n")
        column = (len(inserted) - inserted.rfind(b"\n") - 1 if lines
                  else begin.column + len(inserted))
        tree.edit(start_byte=start, old_end_byte=end, new_end_byte=start + length,
                  start_point=begin, old_end_point=point(end),
                  new_end_point=Point(begin.row + lines, column))
    return tree


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


def _always_masks(source: bytes, defs: Definitions) -> list[Mask]:
    masks: list[Mask] = []
    for m in _ATTRIBUTE_RE.finditer(source):
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


_ATTRIBUTE_RE = re.compile(rb"(__align__|__cluster_dims__|__maxnreg__|_Pragma)[ \t]*\(")
_LAMBDA_RE = re.compile(rb"\][ \t]*(__(?:device|host)__(?:[ \t]+__(?:device|host)__)?)")
_WORD = tuple(chr(c).isalnum() or c == 95 for c in range(256))


def _word_before(data: bytes, offset: int) -> bool:
    return offset > 0 and _WORD[data[offset - 1]]


def _specifier_macros(source: bytes, defs: Definitions) -> list[bytes]:
    """The macros used in ``source`` that stand for nothing but specifiers, launch bounds or
    a pragma (``CUTLASS_DEVICE``, ``C10_LAUNCH_BOUNDS_1``, ``CUTE_UNROLL``, a local ``#define
    MY_LB(n) __launch_bounds__(n)``). Masking them before the first parse is always right
    and spares the error-driven recovery its re-parses."""
    names = [n for n in _KNOWN_NAMES if n in source and n.decode() not in defs]
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
    start = _line_start(data, offset)
    while start >= 2 and data[start - 2 : start] == b"\\\n":
        start = _line_start(data, start - 2)
    return data[start:offset].lstrip(b" \t")[:1] == b"#"


def _blank(work: bytearray, start: int, end: int) -> None:
    work[start:end] = _blanks(bytes(work[start:end]), 0, end - start)


def balanced_end(data: bytes, open_paren: int) -> int | None:
    depth = 0
    for i in range(open_paren, min(len(data), open_paren + 4096)):
        c = data[i]
        if c == 40:
            depth += 1
        elif c == 41:
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _problem_nodes(tree: Tree) -> list[Node]:
    """The ERROR and MISSING nodes, in source order. A descent that enters only subtrees
    flagged ``has_error``: a query would visit every node of the tree."""
    root = tree.root_node
    found: list[Node] = [root] if root.is_error else []
    stack = [root]
    while stack:
        node = stack.pop()
        for child in reversed(node.children):
            if child.is_error or child.is_missing:
                found.append(child)
            if child.has_error and not child.is_missing:
                stack.append(child)  # an ERROR can hold more precise ones
    if not found and root.has_error:
        # a MISSING token that is not a visible child (the newline that ends a directive
        # on a last line without one): only a query sees it
        caps = QueryCursor(_PROBLEM_QUERY).captures(root)
        found = caps.get("error", []) + caps.get("missing", [])
    found.sort(key=lambda n: n.start_byte)
    return found


Edit = tuple[int, int, bytes, str]  # start, end, replacement (same length), reason


def _recover(source: bytes, work: bytearray, tree: Tree, masks: list[Mask]) -> Tree:
    """Mask macro text near syntax errors and re-parse (incrementally) until clean or stuck.

    Each round masks every macro-looking text in the window of every error, and flattens
    the ``#if`` groups around errors whose window holds none; most files need one round."""
    groups = None
    taken: set[int] = {m.start for m in masks}
    for _ in range(MAX_RECOVERY_ROUNDS):
        errors = _problem_nodes(tree)
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
                start_point=_point(source, start), old_end_point=_point(source, end),
                new_end_point=_point(source, end),
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
    lo = _line_start(source, at)
    back = lo
    while back > 0:
        back = _line_start(source, back - 1)
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
        if start == _line_start(source, start):
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
        return bool(_evaluate(ast.parse(py.decode().strip(), mode="eval").body))
    except (SyntaxError, ValueError, ZeroDivisionError):  # malformed: nvcc would refuse it too
        return None


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Div: operator.floordiv, ast.Mod: operator.mod}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
            ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}


def _evaluate(node: ast.expr) -> int:
    """Integer arithmetic, comparisons and logic of a directive condition; nothing else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BoolOp):
        values = [_evaluate(v) for v in node.values]
        return int(all(values) if isinstance(node.op, ast.And) else any(values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.UAdd)):
        v = _evaluate(node.operand)
        return int(not v) if isinstance(node.op, ast.Not) else (-v if isinstance(
            node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if type(op) not in _COMPARE:
                raise ValueError(op)
            right = _evaluate(right_node)
            if not _COMPARE[type(op)](left, right):
                return 0
            left = right
        return 1
    raise ValueError(node)


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


def _line_start(data: bytes, offset: int) -> int:
    return data.rfind(b"\n", 0, offset) + 1


def _point(data: bytes, offset: int) -> Point:
    line = data.count(b"\n", 0, offset)
    return Point(line, offset - _line_start(data, offset))


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    find = data.find
    i = find(b"\n")
    while i >= 0:
        starts.append(i + 1)
        i = find(b"\n", i + 1)
    return starts


# --------------------------------------------------------------------------------------
# Building the model from the tree


def _find_problems(unit: Unit) -> None:
    root = unit.root
    size = len(unit.source)
    if root.has_error:
        for n in _problem_nodes(unit.tree):
            start = min(n.start_byte, size)
            line, col = unit.position(start)
            if n.is_missing:
                msg = f"syntax error: missing `{n.type}`"
            else:
                snippet = unit.text(n).strip().split("\n")[0][:40]
                msg = f"syntax error: unexpected `{snippet}`" if snippet else "syntax error"
            unit.problems.append(Problem(start, min(n.end_byte, size), line, col, msg))


def _build_model(unit: Unit) -> None:
    root = unit.root
    caps = QueryCursor(_MODEL_QUERY).captures(root)
    index = unit._index
    for name, nodes in caps.items():
        if name.startswith("t."):
            index[name[2:]] = nodes  # nested captures can come innermost first: sorted
            unit._unsorted.add(name[2:])  # on first use
    unit._comments = caps.get("comment", [])
    _sort_doc_order(unit._comments)
    index["function_definition"] = caps.get("function", [])
    index["call_expression"] = caps.get("call", [])
    index["gnu_asm_expression"] = caps.get("asm", [])  # (no_write asks for them: no 2nd query)
    unit._unsorted.add("gnu_asm_expression")
    for t in LOOP_TYPES:
        index[t] = []
    for node in caps.get("loop", []):
        index[node.type].append(node)
    for t in LOOP_TYPES:
        _sort_doc_order(index[t])
    for t in _INDEXED_TYPES:
        index.setdefault(t, [])
    for node in caps.get("function", []):
        if _inside_a_body(node):
            # `CUDA_KERNEL_LOOP(i, n) { ... }` in a kernel reads as a function definition
            # with no type: it is a statement of the function around it (a loop macro), not
            # a function of its own (the gate would blank it as host code)
            continue
        f = _function(unit, node)
        if f is not None:
            unit._functions.append(f)
    unit._functions.sort(key=lambda f: f.start)
    starts = [f.body_start for f in unit.functions]

    functions = unit.functions
    bisect_right = bisect.bisect_right

    def owner(n: Node) -> Function | None:
        begin, end = n.start_byte, n.end_byte
        i = bisect_right(starts, begin) - 1
        while i >= 0:
            f = functions[i]
            if f.body_start <= begin and end <= f.body_end:
                return f
            i -= 1
        return None

    def owner_of(begin: int, end: int) -> Function | None:
        i = bisect_right(starts, begin) - 1
        while i >= 0:
            f = functions[i]
            if f.body_start <= begin and end <= f.body_end:
                return f
            i -= 1
        return None

    for m in unit.masks:
        if m.reason not in ("pragma", "statement-like macro"):
            continue
        meaning = _meaning(unit, unit.text(m.start, m.end))
        if meaning.pragma is None:
            continue
        f = owner_of(m.start, m.end)
        if f is not None:
            f.pragmas.append(Pragma(meaning.pragma, m.start, m.end))
        if meaning.unroll is not None:
            nxt = m.end
            while nxt < len(unit.parsed) and unit.parsed[nxt] in _WHITESPACE:
                nxt += 1
            unit._unroll_at[nxt] = meaning.unroll

    for p in unit.problems:
        for f in unit.functions:
            if f.start <= p.start < max(f.end, f.start + 1):
                f.problems.append(p)

    for node in caps.get("call", []):
        f = owner(node)
        if f is not None:
            _classify_call(unit, f, node)
    for node in caps.get("launch", []):
        launch = _launch(unit, node)
        if launch is not None:
            unit._launches.append(launch)
            f = owner(node)
            if f is not None:
                f.launches.append(launch)
    unit._launches.sort(key=lambda lc: lc.start)
    loops = sorted(caps.get("loop", []), key=lambda n: n.start_byte)
    for node in loops:
        f = owner(node)
        if f is not None:
            f.loops.append(_loop(unit, f, node))
    for node in caps.get("declaration", []):
        f = owner(node)
        if f is not None:
            f.shared.extend(_shared_decls(unit, node))
    for node in caps.get("pragma", []):
        f = owner(node)
        directive = node.child_by_field_id(F_DIRECTIVE)
        if f is None or directive is None or unit.text(directive).strip() != "#pragma":
            continue
        arg = node.child_by_field_id(F_ARGUMENT)
        f.pragmas.append(Pragma(unit.text(arg).strip() if arg else "", node.start_byte,
                                node.end_byte))
    for node in caps.get("asm", []):
        f = owner(node)
        if f is not None:
            f.asm.append((node.start_byte, node.end_byte))
    # captures do not always come in document order (a pattern with a child constraint
    # completes later), and masked pragma macros join the "#pragma" lines: sort each list
    by_start = operator.attrgetter("start")
    for f in unit.functions:
        for group in (f.barriers, f.warp_intrinsics, f.atomics, f.calls, f.shared, f.pragmas,
                      f.launches):
            if len(group) > 1:
                group.sort(key=by_start)
        f.asm.sort()

    modeled = {f.node.start_byte for f in unit.functions}
    for tok in caps.get("global", []):
        parent = tok.parent
        if parent is not None and parent.type == "function_definition":
            if parent.start_byte in modeled:
                continue
            reason = "no function declarator could be parsed"
        elif parent is not None and parent.type in ("declaration", "field_declaration") \
                and not parent.has_error:
            continue  # a prototype, not a definition
        else:
            reason = "the definition did not parse"
        line, col = unit.position(tok.start_byte)
        m = _KERNEL_NAME_RE.search(unit.source, tok.end_byte, tok.end_byte + 400)
        name = m.group(1).decode("utf-8", "replace") if m else "?"
        near = unit.in_error(tok.start_byte, tok.start_byte + 400)
        if near is not None:
            reason += f" ({near.describe(unit.path)})"
        unit._unanalyzable.append(Unanalyzable(name, line, col, reason))
    for f in unit.kernels:
        if f.problems:
            line, col = unit.position(f.start)
            unit._unanalyzable.append(
                Unanalyzable(f.name, line, col, f"syntax problem inside: "
                             f"{f.problems[0].describe(unit.path)}")
            )
    unit._unanalyzable.sort(key=lambda u: (u.line, u.col))


_KERNEL_NAME_RE = re.compile(rb"(\w+)\s*(?:<[^<>(){};]*>)?\s*\(")


def _function_declarator(node: Node | None) -> Node | None:
    while node is not None and node.type != "function_declarator":
        node = node.child_by_field_id(F_DECLARATOR)
    return node


def _function(unit: Unit, node: Node) -> Function | None:
    decl = _function_declarator(node.child_by_field_id(F_DECLARATOR))
    body = node.child_by_field_id(F_BODY)
    if decl is None or body is None:
        return None
    name_node = decl.child_by_field_id(F_DECLARATOR)
    name = unit.text(name_node) if name_node is not None else "?"
    if name_node is not None and name_node.type == "template_function":
        inner = name_node.child_by_field_id(F_NAME)
        name = unit.text(inner) if inner is not None else name
    specifiers: list[str] = []
    launch_bounds = None
    for c in node.children:
        if c == decl or c.start_byte >= decl.start_byte:
            break
        if c.type in FUNCTION_SPECIFIERS or c.type in ("storage_class_specifier",
                                                        "type_qualifier"):
            specifiers.append(unit.text(c))
        elif c.type == "launch_bounds":
            args = [a for a in c.named_children if a.type != "comment"]
            launch_bounds = LaunchBounds(
                unit.text(args[0]) if args else "",
                unit.text(args[1]) if len(args) > 1 else None,
                c.start_byte, c.end_byte,
            )
    start, extern_c, template_params = node.start_byte, False, ()
    parent = node.parent
    if parent is not None and parent.type == "template_declaration":
        start = parent.start_byte
        plist = parent.child_by_field_id(F_PARAMETERS)
        template_params = tuple(_template_params(unit, plist)) if plist else ()
        parent = parent.parent
    if parent is not None and parent.type == "linkage_specification":
        extern_c, start = True, parent.start_byte
    elif parent is not None and parent.type == "declaration_list":
        grand = parent.parent
        extern_c = grand is not None and grand.type == "linkage_specification"
    params_node = decl.child_by_field_id(F_PARAMETERS)
    attributes: list[str] = []
    if unit.masks:
        for m in _declaration_masks(unit, start, body.start_byte, params_node):
            if m.reason == "test macro header":
                if name_node is not None and m.start == name_node.start_byte:
                    name = " ".join(unit.text(m.start, m.end).split())
                continue
            meaning = _meaning(unit, unit.text(m.start, m.end))
            if m.start < start:
                if not (meaning.specifiers or meaning.launch_bounds):
                    continue  # a statement macro that ends the previous declaration
                start = m.start  # "CUTLASS_DEVICE\nvoid f()": the macro is part of f
            attributes.append(unit.text(m.start, m.end))
            specifiers += [s for s in meaning.specifiers if s not in specifiers]
            if launch_bounds is None and meaning.launch_bounds is not None:
                launch_bounds = LaunchBounds(*meaning.launch_bounds, m.start, m.end)
    type_node = node.child_by_field_id(F_TYPE)
    if type_node is None and _MACRO_NAME_RE.fullmatch(name) and params_node is not None:
        # "TEST_F(Suite, Name) {" parses as a function without a return type: name it by the
        # whole macro call, as a reader would
        name = " ".join(unit.text(decl).split())
    return Function(
        name=name,
        specifiers=tuple(specifiers),
        return_type=unit.text(type_node) if type_node is not None else "",
        param_list=(unit.source, params_node),
        template_params=template_params,
        launch_bounds=launch_bounds,
        attributes=tuple(attributes),
        extern_c=extern_c,
        node=node,
        start=start,
        end=node.end_byte,
        body_start=body.start_byte,
        body_end=body.end_byte,
    )


_MACRO_NAME_RE = re.compile(r"[A-Z_][A-Z0-9_]*")
_DECLARATION_MASKS = frozenset({"attribute", "specifier macro", "statement-like macro",
                                "test macro header"})
_WHITESPACE = frozenset(b" \t\r\n")


def _declaration_masks(
    unit: Unit, start: int, body_start: int, params: Node | None
) -> Iterator[Mask]:
    """The masks that belong to a function's declaration: inside its head (not in its
    parameter list) or in the blank run just before it, where a macro on its own line
    ("CUTLASS_DEVICE", "C10_LAUNCH_BOUNDS_1(256)") left nothing but blanks."""
    parsed = unit.parsed
    lo = start
    while lo > 0 and parsed[lo - 1] in _WHITESPACE:
        lo -= 1
    i = bisect.bisect_left(unit._mask_starts, lo)
    while i < len(unit.masks) and unit.masks[i].start < body_start:
        m = unit.masks[i]
        i += 1
        if m.reason not in _DECLARATION_MASKS:
            continue
        if params is not None and params.start_byte <= m.start < params.end_byte:
            continue
        yield m


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

_DEFINE_RE = re.compile(
    rb"#[ \t]*define[ \t]+(\w+)(\([^)\n]*\))?[ \t]*((?:\\\r?\n|[^\n])*)", re.M
)
_MACRO_USE_RE = re.compile(r"\b([A-Z_][A-Z0-9_]*)\b(\s*\((?:[^()]|\([^()]*\))*\))?")
_SPECIFIER_WORD_RE = re.compile(
    r"\b(__global__|__device__|__host__|__forceinline__|__noinline__|inline|static)\b")
_LAUNCH_BOUNDS_RE = re.compile(r"\b__launch_bounds__\s*\(")
_PRAGMA_TEXT_RE = re.compile(r'_Pragma\s*\(\s*"([^"]*)"\s*\)|#\s*pragma\s+(.*)', re.S)


def _definitions_of(source: bytes) -> Definitions:
    """The file's own ``#define``s: name -> (parameter names or None, body)."""
    defs: Definitions = {}
    for m in _DEFINE_RE.finditer(source):
        params = m.group(2)
        names = tuple(p.strip() for p in params.decode("utf-8", "replace")[1:-1].split(",")
                      ) if params is not None else None
        body = re.sub(rb"\\\r?\n", b" ", m.group(3)).decode("utf-8", "replace")
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


def _meaning(unit: Unit, text: str) -> MacroMeaning:
    """What the masked text ``text`` stands for, from its expansion or, for a macro nobody
    defines here, from its name (``*_DEVICE``, ``*LAUNCH_BOUNDS*(n)``, ``*_UNROLL``)."""
    cache = unit._meanings
    if text in cache:
        return cache[text]
    expanded = _expand(text, unit._defines, 0) if _MACRO_USE_RE.search(text) else text
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
    meaning = cache[text] = MacroMeaning(specifiers, launch_bounds, pragma)
    return meaning


_CONST_RE = re.compile(rb"\bconst\b")
_RESTRICT_RE = re.compile(rb"\b(?:__restrict__|__restrict|restrict)\b")


def _inside_a_body(node: Node) -> bool:
    """Is this definition inside a function's body (a block), not at file, namespace or
    class scope?"""
    parent = node.parent
    while parent is not None:
        if parent.type == "compound_statement":
            return True
        parent = parent.parent
    return False


def _params(src: bytes, plist: Node) -> Iterator[Param]:
    for p in plist.named_children:
        ptype = p.type
        if ptype != "parameter_declaration" and ptype != "optional_parameter_declaration":
            continue
        type_node = p.child_by_field_id(F_TYPE)
        base = src[type_node.start_byte:type_node.end_byte].decode("utf-8", "replace") \
            if type_node is not None else ""
        pointer, restrict, reference, array = 0, False, False, False
        star_end = -1
        name, name_start, name_end = "", p.end_byte, p.end_byte
        d = p.child_by_field_id(F_DECLARATOR)
        # the pointee (or value) is const when "const" comes before the declarator; a
        # "* const" inside it makes the pointer const, which rules do not ask about
        const = _CONST_RE.search(src, p.start_byte, d.start_byte if d is not None
                                 else p.end_byte) is not None
        while d is not None:
            dtype = d.type
            if dtype == "identifier" or dtype == "field_identifier":
                name_start, name_end = d.start_byte, d.end_byte
                name = src[name_start:name_end].decode("utf-8", "replace")
                break
            if dtype == "pointer_declarator" or dtype == "abstract_pointer_declarator":
                pointer += 1
                inner = d.child_by_field_id(F_DECLARATOR)
                star = d.children[0] if d.child_count else None
                if star is not None and star.type == "*":
                    star_end = star.end_byte
                if _RESTRICT_RE.search(src, d.start_byte, inner.start_byte if inner is not None
                                       else d.end_byte):
                    restrict = True
                d = inner
            elif dtype == "reference_declarator" or dtype == "abstract_reference_declarator":
                reference = True
                named = d.named_children
                d = named[-1] if named else None
            else:  # array_declarator, parenthesized_declarator ("const T (&a)[N]"), ...
                array |= dtype == "array_declarator" or dtype == "abstract_array_declarator"
                inner = d.child_by_field_id(F_DECLARATOR)
                if inner is None and dtype == "parenthesized_declarator":
                    named = d.named_children
                    inner = named[0] if named else None
                d = inner
        raw = src[p.start_byte:name_start] + src[name_end:p.end_byte]
        if ptype == "optional_parameter_declaration":
            raw = raw.split(b"=", 1)[0]
        yield Param(name, b" ".join(raw.split()).decode("utf-8", "replace"), base, pointer,
                    const, restrict, reference, array, p.start_byte, p.end_byte, star_end)


def _template_params(unit: Unit, plist: Node) -> Iterator[TemplateParam]:
    for p in plist.named_children:
        t = p.type
        default_node = p.child_by_field_id(F_DEFAULT_VALUE) or p.child_by_field_name(
            "default_type")
        default = unit.text(default_node) if default_node is not None else None
        if t in ("type_parameter_declaration", "optional_type_parameter_declaration",
                 "variadic_type_parameter_declaration"):
            ident = next((c for c in p.named_children if c.type == "type_identifier"), None)
            yield TemplateParam("type", unit.text(ident) if ident else "", "typename", default)
        elif t in ("parameter_declaration", "optional_parameter_declaration",
                   "variadic_parameter_declaration"):
            d = p.child_by_field_id(F_DECLARATOR)
            ty = p.child_by_field_id(F_TYPE)
            yield TemplateParam("value", unit.text(d) if d else "",
                                unit.text(ty) if ty else "", default)
        elif t == "template_template_parameter_declaration":
            yield TemplateParam("template", unit.text(p).split()[-1], "template", default)


_LOOP_VAR_RE = re.compile(r"^\s*(?:[\w:<>]+\s+)*?(?:[\w:<>]+\s*[*&]?\s+)?(\w+)\s*(?:=|\{|\()")


_LOOP_KINDS = {"for_statement": "for", "for_range_loop": "for", "while_statement": "while",
               "do_statement": "do"}


def _loop(unit: Unit, f: Function, node: Node) -> Loop:
    kind = _LOOP_KINDS[node.type]
    depth = sum(1 for other in f.loops if other.start < node.start_byte < other.end)
    init = cond = update = var = None
    if node.type == "for_range_loop":  # for (auto x : xs): x is the loop variable
        d = node.child_by_field_id(F_DECLARATOR)
        while d is not None and d.type not in ("identifier", "structured_binding_declarator"):
            d = d.child_by_field_id(F_DECLARATOR) or (d.named_children[-1]
                                                        if d.named_children else None)
        var = unit.text(d) if d is not None else None
        right = node.child_by_field_id(F_RIGHT)
        cond = unit.text(right) if right is not None else None
    elif kind == "for":
        i = node.child_by_field_id(F_INITIALIZER)
        c = node.child_by_field_id(F_CONDITION)
        u = node.child_by_field_id(F_UPDATE)
        init = unit.text(i).rstrip(";").strip() if i is not None else None
        cond = unit.text(c) if c is not None else None
        update = unit.text(u) if u is not None else None
        if i is not None:
            if i.type == "declaration":
                d = i.child_by_field_id(F_DECLARATOR)
                while d is not None and d.type != "identifier":
                    d = d.child_by_field_id(F_DECLARATOR)
                var = unit.text(d) if d is not None else None
            elif i.type == "assignment_expression":
                left = i.child_by_field_id(F_LEFT)
                var = unit.text(left) if left is not None else None
        if var is None and update is not None:
            m = re.match(r"\W*(\w+)", update)
            var = m.group(1) if m else None
    else:
        c = node.child_by_field_id(F_CONDITION)
        cond = unit.text(c).strip("() ") if c is not None else None
    unroll = unit._unroll_at.get(node.start_byte)
    prev = node.prev_named_sibling
    if unroll is None and prev is not None and prev.type == "preproc_call":
        arg = prev.child_by_field_id(F_ARGUMENT)
        text = unit.text(arg).strip() if arg is not None else ""
        if text.startswith("unroll"):
            unroll = text[len("unroll"):].strip()
    return Loop(kind, var, init, cond, update, depth, unroll, node.start_byte, node.end_byte)


def _shared_decls(unit: Unit, node: Node) -> Iterator[SharedDecl]:
    """The ``__shared__`` variables of a declaration, one per declarator
    (``__shared__ float a[32], b[32];`` declares two)."""
    shared, extern = False, False
    for c in node.children:
        if c.type in ("type_qualifier", "storage_class_specifier", "attribute_specifier"):
            t = unit.text(c)
            shared |= t == "__shared__"
            extern |= t == "extern"
    if not shared:
        return
    type_node = node.child_by_field_id(F_TYPE)
    type_text = unit.text(type_node) if type_node is not None else ""
    for d in node.children_by_field_id(F_DECLARATOR):
        if d.type == "init_declarator":
            d = d.child_by_field_id(F_DECLARATOR)
        dims: list[str] = []
        while d is not None and d.type in ("array_declarator", "parenthesized_declarator",
                                           "pointer_declarator"):
            if d.type == "array_declarator":
                size = d.child_by_field_id(F_SIZE)
                dims.insert(0, unit.text(size) if size is not None else "")
            d = d.child_by_field_id(F_DECLARATOR) or (d.named_children[0]
                                                        if d.named_children else None)
        name = unit.text(d) if d is not None else ""
        yield SharedDecl(name, type_text, tuple(dims), extern, node.start_byte, node.end_byte)


def _call_name(unit: Unit, callee: Node) -> str:
    ctype = callee.type
    if ctype == "identifier":
        return unit.source[callee.start_byte:callee.end_byte].decode("utf-8", "replace")
    if ctype == "template_function":
        inner = callee.child_by_field_id(F_NAME)
        return unit.text(inner) if inner is not None else unit.text(callee)
    return "".join(unit.text(callee).split())


def _classify_call(unit: Unit, f: Function, node: Node) -> None:
    callee = node.child_by_field_id(F_FUNCTION)
    if callee is None:
        return
    name = _call_name(unit, callee)
    call = Call(name, node.start_byte, node.end_byte)
    f.calls.append(call)
    if name in BARRIERS:
        f.barriers.append(call)
        return
    if name.startswith("__"):
        if name.startswith(WARP_INTRINSIC_PREFIXES):
            f.warp_intrinsics.append(call)
        return
    if name.startswith("atomic"):
        f.atomics.append(call)
        return
    method = _METHOD_RE.search(name)
    if method is None:
        return
    m = method.group(1)
    if m == "sync":
        f.barriers.append(call)  # block.sync(), grid.sync(), cluster.sync()
    elif m in CG_WARP_METHODS or (m == "reduce" and name.endswith("::reduce")):
        f.warp_intrinsics.append(call)  # warp.shfl_down(...), cg::reduce(warp, ...)
    elif m.startswith("atomic"):
        f.atomics.append(call)


_METHOD_RE = re.compile(r"(?:\.|->|::)(\w+)$")


def _launch(unit: Unit, node: Node) -> Launch | None:
    config = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
    if config is None:
        return None
    fn = node.child_by_field_id(F_FUNCTION)
    args = node.child_by_field_id(F_ARGUMENTS)
    kernel, targs = (unit.text(fn) if fn is not None else "?"), None
    if fn is not None and fn.type == "template_function":
        name = fn.child_by_field_id(F_NAME)
        ta = fn.child_by_field_id(F_ARGUMENTS)
        kernel = unit.text(name) if name is not None else kernel
        targs = unit.text(ta).strip()[1:-1].strip() if ta is not None else None
    return Launch(
        kernel,
        targs,
        tuple(unit.text(c) for c in config.named_children if c.type != "comment"),
        tuple(unit.text(a) for a in args.named_children if a.type != "comment")
        if args is not None else (),
        node.start_byte,
        node.end_byte,
    )
