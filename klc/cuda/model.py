"""The model of one CUDA unit: plain data over the tree (``Unit``, ``Function``, ``Param``,
loops, launches, shared arrays, syntax problems), built on first use.

The model keeps the original bytes and every node's byte span, so that a rewrite edits bytes
and leaves the rest of the file exactly as it was. Text is always sliced from the original
bytes (``Unit.text``), never from the parser's input, because the parser may have seen a
*masked* copy (``klc.cuda.macros``).

A ``Unit`` receives what it does not know itself: the function that builds its model from the
tree (``klc.cuda.build.build_model``, run on the first question about functions or launches,
and, for the per-type index, on the first question about node types) and the source of its
semantic facts (``klc.cuda.facts.Facts``, libclang, made on the first ``Unit.facts``). The
shape of those facts is declared here (``UnitFacts``,
``TypeFact``), so this module imports neither (``docs/architecture.md``, "klc.cuda").
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, Protocol, TypeVar, overload

from tree_sitter import Node, QueryCursor, Tree

from klc.cuda.macros import Definitions, MacroMeaning, Mask, definitions_of
from klc.cuda.syntax import (
    F_DECLARATOR,
    F_TYPE,
    SQUEEZED_OUT,
    comment_nodes,
    line_starts,
    problem_nodes,
    sort_doc_order,
    type_query,
)
from klc.errors import KlcError, where


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
    # the byte span of each ``config`` argument (grid, block, ...), for an edit of the launch
    config_spans: tuple[tuple[int, int], ...] = ()


T = TypeVar("T")

# the groups of what a function's body holds, each found on the first question about one of
# it (``Unit.constructs``; ``klc.cuda.scan`` finds each by its own scans): loops; the calls
# that may be barriers, warp intrinsics or atomics; launches; the rest (shared arrays,
# pragmas, asm, and the kernels that could not be modeled)
CONSTRUCT_GROUPS = ("loops", "calls", "launches", "rest")


class _BodyHolds(Generic[T]):
    """A list of what a function's body holds (its loops, barriers, pragmas, ...), in source
    order: the function's list of the same name with a leading ``_``, after the unit's
    constructs of its group are found (``Function.constructs_of``, on the first question
    about one of them: ``CONSTRUCT_GROUPS``)."""

    def __init__(self, group: str) -> None:
        self.group = group

    def __set_name__(self, owner: type, name: str) -> None:
        self.held = "_" + name

    @overload
    def __get__(self, f: None, owner: type) -> _BodyHolds[T]: ...
    @overload
    def __get__(self, f: Function, owner: type) -> T: ...

    def __get__(self, f: Function | None, owner: type) -> T | _BodyHolds[T]:
        if f is None:
            return self
        if f.constructs_of is not None:
            f.constructs_of(self.group)
        return getattr(f, self.held)  # type: ignore[no-any-return]


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
    problems: list[Problem] = field(default_factory=list)
    # what the body holds (``shared``, ``pragmas``, ``barriers``, ``warp_intrinsics``,
    # ``atomics``, ``loops``, ``asm``, ``launches``: properties over these lists) is found on
    # the first question about one of a group of them, for every function of the unit at
    # once (a file whose matches no guard judges by them never needs them): what finds a
    # group (klc.cuda.build), or None once every group is found
    constructs_of: Callable[[str], None] | None = field(default=None, repr=False,
                                                        compare=False)
    _shared: list[SharedDecl] = field(default_factory=list, repr=False, compare=False)
    _pragmas: list[Pragma] = field(default_factory=list, repr=False, compare=False)
    _barriers: list[Call] = field(default_factory=list, repr=False, compare=False)
    _warp_intrinsics: list[Call] = field(default_factory=list, repr=False, compare=False)
    _atomics: list[Call] = field(default_factory=list, repr=False, compare=False)
    _loops: list[Loop] = field(default_factory=list, repr=False, compare=False)
    _asm: list[tuple[int, int]] = field(default_factory=list, repr=False, compare=False)
    _launches: list[Launch] = field(default_factory=list, repr=False, compare=False)
    # every call the function makes is read on first use (``calls``, a property): what finds
    # them (klc.cuda.build), given this function
    calls_of: Callable[[Function], list[Call]] | None = field(default=None, repr=False,
                                                               compare=False)

    _calls: list[Call] | None = field(default=None, init=False, repr=False, compare=False)
    _params: tuple[Param, ...] | None = field(default=None, init=False, repr=False,
                                              compare=False)
    _param_names: dict[str, Param] | None = field(default=None, init=False, repr=False,
                                                  compare=False)

    @property
    def params(self) -> tuple[Param, ...]:
        if self._params is None:
            src, plist = self.param_list
            params = tuple(_read_params(src, plist)) if plist is not None else ()
            if len(params) == 1 and not params[0].name and params[0].type == "void":
                params = ()  # f(void): no parameter, as C++ reads it
            self._params = params
        return self._params

    shared = _BodyHolds[list[SharedDecl]]("rest")  # the ``__shared__`` declarations
    pragmas = _BodyHolds[list[Pragma]]("rest")  # ``#pragma`` lines, macros that stand for one
    barriers = _BodyHolds[list[Call]]("calls")
    warp_intrinsics = _BodyHolds[list[Call]]("calls")
    atomics = _BodyHolds[list[Call]]("calls")
    loops = _BodyHolds[list[Loop]]("loops")
    asm = _BodyHolds[list[tuple[int, int]]]("rest")  # the spans of its ``asm`` statements
    launches = _BodyHolds[list[Launch]]("launches")  # the kernel launches it makes

    @property
    def calls(self) -> list[Call]:
        """Every call the function makes (not those of a function defined inside it), in
        source order."""
        if self._calls is None:
            self._calls = self.calls_of(self) if self.calls_of is not None else []
        return self._calls

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


# --------------------------------------------------------------------------------------
# Semantic facts: their shape (klc.cuda.facts gives them, from libclang)

Value = int | float | bool


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


_QUALIFIER_RE = re.compile(r"\b(?:const|volatile|restrict|__restrict__|__restrict)\b")


class UnitFacts(Protocol):
    """What a unit's facts answer (``klc.cuda.facts.Facts`` answers it from libclang): the
    types and constant values the tree cannot tell."""

    def type_of(self, start: int, end: int) -> TypeFact | None: ...

    def param_type(self, function_name: str, param_name: str) -> TypeFact | None: ...

    def constant(self, start: int, end: int,
                 bindings: dict[str, int] | None = None) -> Value | None: ...

    def evaluate(self, text: str, bindings: dict[str, int] | None = None) -> Value | None: ...

    def define(self, name: str) -> int | float | str | None: ...

    def instantiations(self, function_name: str) -> list[dict[str, str]]: ...

    @property
    def diagnostics(self) -> list[str]: ...


# --------------------------------------------------------------------------------------
# The unit


class Unit:
    """One parsed source file: the original bytes, the tree, and the model built on it.

    ``build(unit, None, None)`` fills in the model's functions on the first question about
    them, ``build(unit, None, group)`` a group of what their bodies hold (loops, barriers,
    pragmas, launches, ...) on the first question about one; ``build(unit, types, None)``
    the per-type index (the common node types and ``types``) on the first question about
    node types (neither needs the other); ``facts`` makes the unit's semantic facts on the
    first ``facts``."""

    def __init__(self, path: str, source: bytes, parsed: bytes, tree: Tree, masks: list[Mask],
                 defines: Definitions | None = None, *,
                 build: Callable[[Unit, Iterable[str] | None, str | None], None],
                 facts: Callable[[Unit], UnitFacts] | None = None):
        self.path = path
        self.source = source
        self.parsed = parsed  # what the parser saw: ``source`` with masks applied
        self.tree = tree
        self.masks = tuple(masks)
        # the masks the recovery step added (parse_bytes), which a re-parse carries over
        self.recovered: list[Mask] = []
        self._mask_starts = [m.start for m in self.masks]
        self._defines = definitions_of(source) if defines is None else defines
        self._meanings: dict[str, MacroMeaning] = {}
        # a block's significant statements and their kinds, by node id (klc.match)
        self._statements: dict[int, tuple[list[Node], list[str]]] = {}
        self._kids: dict[int, list[Node]] = {}  # significant children by node id (klc.match)
        # offsets whose line was counted (``position``), sorted, and their 0-based lines
        self._known_offsets: list[int] = [0]
        self._known_lines: list[int] = [0]
        self.problems: list[Problem] = []
        self.missing: frozenset[str] = frozenset()  # the types of its MISSING tokens
        _find_problems(self)
        # the model (functions, launches) and the per-type index are built on first use,
        # each on its own: a re-parse that only checks for new syntax problems needs
        # neither, ``klc parse`` no index, a matcher whose anchors are not in the file no model
        self._modeled = False
        # the groups of what the functions' bodies hold that are found (``constructs``)
        self._constructed: set[str] = set()
        self._indexed = False
        self._build = build
        self._make_facts = facts
        # loop start -> unroll argument, from a mask (``klc.cuda.build.unroll_marks``)
        self._unroll_at: dict[int, str] | None = None
        self._index: dict[str, list[Node]] = {}  # node type -> nodes in source order
        self._unsorted: set[str] = set()  # types of _index whose list is not sorted yet
        self._functions: list[Function] = []  # sorted by start
        self._function_starts: list[int] = []
        self._function_outer: list[int] = []  # (``function_at``'s chain)
        self._launches: list[Launch] = []
        self._squeezed: bytes | None = None
        self._unanalyzable: list[Unanalyzable] = []
        # answers the guards derive from this unit, by key (klc.analysis.tree._memo): kept on the
        # unit, so they live and die with it
        self.memo: dict[str, Any] = {}

    def _model(self) -> None:
        if not self._modeled:
            self._build(self, None, None)

    def constructs(self, group: str | None = None) -> None:
        """Find a group of what the functions' bodies hold (``CONSTRUCT_GROUPS``: loops;
        barriers, warp intrinsics and atomics; launches; the rest, with the kernels that
        could not be modeled), or every group, where not found yet: asked by the first
        question about one (``Function.loops``, ``Unit.launches``, ...)."""
        self._model()
        for g in (group,) if group is not None else CONSTRUCT_GROUPS:
            if g not in self._constructed:
                self._constructed.add(g)
                self._build(self, None, g)

    @property
    def functions(self) -> list[Function]:
        """The functions defined in the file, sorted by start."""
        self._model()
        return self._functions

    @property
    def launches(self) -> list[Launch]:
        """The kernel launches (``k<<<...>>>``) of the file, in source order."""
        self.constructs("launches")
        return self._launches

    @property
    def unanalyzable(self) -> list[Unanalyzable]:
        """The ``__global__`` kernels the front end could not model, and why."""
        self.constructs("rest")
        return self._unanalyzable

    # -- text and positions -----------------------------------------------------------

    @cached_property
    def _line_starts(self) -> list[int]:
        """Offsets of line starts, built on the first position asked (most parses ask none)."""
        return line_starts(self.source)

    @property
    def squeezed(self) -> bytes:
        """The parser's text (``parsed``: masks blank) without its comments, line
        continuations, whitespace and the bytes of ``SQUEEZED_OUT``: what is left when
        everything the matcher skips between two tokens is taken out (``klc.match``'s
        prefilter looks for an anchor's runs of tokens in it with ``in``)."""
        squeezed = self._squeezed
        if squeezed is None:
            parsed, parts, pos = self.parsed, [], 0
            for c in comment_nodes(self.root, parsed):  # (in document order, apart)
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
        """1-based (line, column) of a byte offset; the column counts bytes, like clang's.

        The first positions asked are counted (the newlines between the offset and the
        nearest one asked before it: most commands ask a few dozen, in source order, and a
        table of every line start costs an object per line); past ``_COUNTED_POSITIONS``,
        or once the table is made, looked up in the table of line starts."""
        starts = self.__dict__.get("_line_starts")
        if starts is None:
            known = self._known_offsets
            if len(known) <= _COUNTED_POSITIONS:
                source = self.source
                i = bisect.bisect_right(known, offset) - 1
                line = self._known_lines[i] + source.count(b"\n", known[i], offset)
                known.insert(i + 1, offset)
                self._known_lines.insert(i + 1, line)
                return line + 1, offset - source.rfind(b"\n", 0, offset)
            starts = self._line_starts
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line] + 1

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
            self._function_outer = _previous_greater([f.end for f in functions])
        i = bisect.bisect_right(starts, offset) - 1
        outer = self._function_outer
        while i >= 0:  # (of the functions that start before it, the last that ends after it:
            # one that ends no later than a function after it cannot be that one)
            f = functions[i]
            if offset < f.end:
                return f
            i = outer[i]
        return None

    def in_error(self, start: int, end: int) -> Problem | None:
        """The first syntax problem overlapping a byte span, if any."""
        for p in self.problems:
            if p.start < end and start < max(p.end, p.start + 1):
                return p
        return None

    def nodes_by_type(self, types: Iterable[str]) -> dict[str, list[Node]]:
        """Every node of each given type, in source order, by type. The first question finds
        the common types and these in one query run; a type asked later is found by one more
        query run, and remembered."""
        types = tuple(types)  # (read more than once)
        if not self._indexed:
            self._build(self, types, None)
        index = self._index
        unsorted = self._unsorted
        for t in types:
            if t in unsorted:  # sorted on first use: most types are never asked for
                unsorted.discard(t)
                sort_doc_order(index[t])
        missing = sorted({t for t in types if t not in index})
        if missing:
            for t in missing:  # (one query per type: each compiled once for every unit)
                nodes = QueryCursor(type_query((t,))).captures(self.root).get(t, [])
                sort_doc_order(nodes)
                index[t] = nodes
        return {t: index[t] for t in types}

    def nodes_of_type(self, *types: str) -> Iterator[Node]:
        """Every node of the given types, in source order, found by a query (not a walk)."""
        by_type = self.nodes_by_type(types)
        if len(types) == 1:
            yield from by_type[types[0]]
            return
        nodes = [n for t in types for n in by_type[t]]
        sort_doc_order(nodes)
        yield from nodes

    @cached_property
    def facts(self) -> UnitFacts:
        """Semantic facts (from libclang), made on first use and cached for this unit."""
        if self._make_facts is None:
            raise KlcError(f"{self.path}: this unit was parsed without a source of facts")
        return self._make_facts(self)


def _previous_greater(values: list[int]) -> list[int]:
    """For each index, the last index before it whose value is greater, or -1."""
    out: list[int] = []
    stack: list[int] = []
    for i, v in enumerate(values):
        while stack and values[stack[-1]] <= v:
            stack.pop()
        out.append(stack[-1] if stack else -1)
        stack.append(i)
    return out


# positions counted from the text before the table of line starts is made (``Unit.position``)
_COUNTED_POSITIONS = 256


def _find_problems(unit: Unit) -> None:
    """The syntax problems of the unit's tree (every ERROR and MISSING node), with the text."""
    root = unit.root
    size = len(unit.source)
    if root.has_error:
        nodes = problem_nodes(unit.tree)
        unit.missing = frozenset(n.type for n in nodes if n.is_missing)
        for n in nodes:
            start = min(n.start_byte, size)
            line, col = unit.position(start)
            if n.is_missing:
                msg = f"syntax error: missing `{n.type}`"
            else:
                snippet = unit.text(n).strip().split("\n")[0][:40]
                msg = f"syntax error: unexpected `{snippet}`" if snippet else "syntax error"
            unit.problems.append(Problem(start, min(n.end_byte, size), line, col, msg))


_CONST_RE = re.compile(rb"\bconst\b")
_RESTRICT_RE = re.compile(rb"\b(?:__restrict__|__restrict|restrict)\b")


def _read_params(src: bytes, plist: Node) -> Iterator[Param]:
    """The parameters of a parameter list node, each split into what rules ask of it."""
    const_in, restrict_in = _CONST_RE.search, _RESTRICT_RE.search
    for p in plist.named_children:
        ptype = p.type
        if ptype != "parameter_declaration" and ptype != "optional_parameter_declaration":
            continue
        p_start, p_end = p.start_byte, p.end_byte
        type_node = p.child_by_field_id(F_TYPE)
        base = src[type_node.start_byte:type_node.end_byte].decode("utf-8", "replace") \
            if type_node is not None else ""
        pointer, restrict, reference, array = 0, False, False, False
        star_end = -1
        name, name_start, name_end = "", p_end, p_end
        d = p.child_by_field_id(F_DECLARATOR)
        # the pointee (or value) is const when "const" comes before the declarator; a
        # "* const" inside it makes the pointer const, which rules do not ask about
        const = const_in(src, p_start, d.start_byte if d is not None else p_end) is not None
        while d is not None:
            dtype = d.type
            if dtype == "identifier" or dtype == "field_identifier":
                name_start, name_end = d.start_byte, d.end_byte
                name = src[name_start:name_end].decode("utf-8", "replace")
                break
            if dtype == "pointer_declarator" or dtype == "abstract_pointer_declarator":
                pointer += 1
                inner = d.child_by_field_id(F_DECLARATOR)
                star = d.child(0) if d.child_count else None
                if star is not None and star.type == "*":
                    star_end = star.end_byte
                if restrict_in(src, d.start_byte, inner.start_byte if inner is not None
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
        raw = src[p_start:name_start] + src[name_end:p_end]
        if ptype == "optional_parameter_declaration":
            raw = raw.split(b"=", 1)[0]
        yield Param(name, b" ".join(raw.split()).decode("utf-8", "replace"), base, pointer,
                    const, restrict, reference, array, p_start, p_end, star_end)
