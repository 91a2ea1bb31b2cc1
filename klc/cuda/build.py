"""Building the model from the tree, and the per-type index: each built on its own, on the
unit's first question about it.

The model: the constructs it is made of (function definitions, calls that may be intrinsics,
launches, loops, shared arrays, pragmas, asm, ``__global__`` tokens) are found, and each stage
of ``build_model`` gives them to the function that holds them. What the parse could not show
is read from the masks (``klc.cuda.macros``): a masked specifier macro gives its function
specifiers or launch bounds, a masked pragma macro an unroll. What stays broken is a syntax
problem of its function, and a kernel whose definition still holds an error is reported as
not analyzable, with the reason.

Speed (the front end must cost little more than the bare parse, and a query run visits every
node of the tree: a quarter of the parse): the constructs are found from the words that start
them (``klc.cuda.scan``: scans of the bytes at C speed, then a node lookup at each place), the
function definitions by a descent through the file's outline only; a tree with a MISSING token
of those words (zero-width: no text) by one query run. A function's calls
are read on first use, from the per-type index. The per-type index is one query run for all
the types it holds; functions are found by bisection on their starts.

Above the model in ``klc.cuda`` (``docs/architecture.md``, "klc.cuda"): ``klc.cuda.parse``
hands ``build_model`` to each ``Unit`` it makes.
"""

from __future__ import annotations

import bisect
import operator
import re
import weakref
from collections.abc import Callable, Iterable, Iterator

from tree_sitter import Node, Query, QueryCursor

from klc.cuda.macros import MacroMeaning, Mask, meaning
from klc.cuda.model import (
    CONSTRUCT_GROUPS,
    Call,
    Function,
    Launch,
    LaunchBounds,
    Loop,
    Pragma,
    SharedDecl,
    TemplateParam,
    Unanalyzable,
    Unit,
)
from klc.cuda.scan import Found, by_text, function_nodes
from klc.cuda.syntax import (
    F_ARGUMENT,
    F_ARGUMENTS,
    F_BODY,
    F_CONDITION,
    F_DECLARATOR,
    F_DEFAULT_VALUE,
    F_DIRECTIVE,
    F_FUNCTION,
    F_INITIALIZER,
    F_LEFT,
    F_NAME,
    F_PARAMETERS,
    F_RIGHT,
    F_SIZE,
    F_TYPE,
    F_UPDATE,
    LANGUAGE,
    LOOP_TYPES,
    sort_doc_order,
    type_query,
)

# the node types that guards and anchors ask for most: indexed by the query run that builds
# the per-type index (``Unit.nodes_by_type``), with the types that run was asked for (a type
# asked later costs one more query run, a walk of the whole tree: casts and gotos are asked
# of most files with a kernel)
_INDEXED_TYPES = (
    "declaration", "assignment_expression", "update_expression", "return_statement",
    "break_statement", "continue_statement", "expression_statement", "compound_statement",
    "if_statement", "preproc_def",
    "function_definition", "call_expression", "gnu_asm_expression", "cast_expression",
    "goto_statement", "template_function", "template_declaration", *LOOP_TYPES,
    # (asked of a few files each by the guards: a query of their own would be compiled, at
    # 13 ms, for those few; captured with the rest, about 15 ms over 300 files)
    "init_declarator", "pointer_expression", "subscript_expression")

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


Owner = Callable[[int, int], Function | None]  # the function whose body holds a byte span


def build_model(unit: Unit, types: Iterable[str] | None = None, constructs: str | None = None
                ) -> None:
    """Fill in what the unit lacks of its model (``types`` None: the functions; with a group
    of ``constructs`` (``CONSTRUCT_GROUPS``), that group of what their bodies hold) or its
    per-type index (the common node types and ``types``). Run on the unit's first question
    about each; the index and the model need nothing of each other."""
    if constructs is not None:
        _body_constructs(unit, constructs)  # (``Unit.constructs`` asks each group once)
    elif types is None:
        if not unit._modeled:
            unit._modeled = True
            _model(unit)
    elif not unit._indexed:
        unit._indexed = True
        _index(unit, types)


def _model(unit: Unit) -> None:
    """The functions, from a descent through the file's outline; what their bodies hold is
    found on the first question about one of a group of it (``Function.constructs_of``:
    matching needs the functions, a guard one group, and most files have few matches or
    none). A tree the text cannot be read from (``_found``) gives both from one query run."""
    if unit.missing & _FOUND_FROM:
        found = _by_query(unit)
        _functions(unit, found.functions, found.function_ancestors)
        _function_problems(unit)
        unit._constructed.update(CONSTRUCT_GROUPS)
        for group in CONSTRUCT_GROUPS:
            _constructs_found(unit, found, group)
        return
    _functions(unit, *function_nodes(unit))
    _function_problems(unit)
    later = _constructs_later(weakref.ref(unit))
    for f in unit._functions:
        f.constructs_of = later


def _constructs_later(unit_ref: Callable[[], Unit | None]) -> Callable[[str], None]:
    """What finds a group of a unit's constructs on the first question about one function's
    (the unit held weakly: its functions hold this). A function asked after its unit is
    gone has no tree to read them from: an error, not an empty answer."""
    def find(group: str) -> None:
        unit = unit_ref()
        if unit is None:
            raise RuntimeError("a function's loops, calls and pragmas were asked after its "
                               "unit was let go: keep the unit while its functions are read")
        unit.constructs(group)

    return find


def _body_constructs(unit: Unit, group: str) -> None:
    """A group of what the functions' bodies hold, from the constructs ``_found`` finds of
    it (every function's ``constructs_of`` let go once every group is found)."""
    if unit._constructed.issuperset(CONSTRUCT_GROUPS):
        for f in unit._functions:
            f.constructs_of = None
    _constructs_found(unit, _found(unit, group), group)


def _constructs_found(unit: Unit, found: Found, group: str) -> None:
    owner = _owner(unit._functions)
    if group == "calls":
        _calls(unit, found, owner)
    elif group == "launches":
        _launches(unit, found, owner)
    elif group == "loops":
        _loops(unit, found, owner)
    else:
        _masked_pragmas(unit, owner)
        _rest(unit, found, owner)
        _unanalyzable(unit, found.globals)


# --------------------------------------------------------------------------------------
# The per-type index: one query run


def index_query(types: Iterable[str]) -> tuple[tuple[str, ...], Query]:
    """The node types the run that builds the per-type index captures (the common ones and
    ``types``, sorted: one compiled query per set, ``type_query``'s), and its query."""
    key = tuple(sorted(set(_INDEXED_TYPES).union(types)))
    return key, type_query(key)


def _index(unit: Unit, types: Iterable[str]) -> None:
    """The per-type index (``Unit.nodes_by_type``), from one query run over the whole tree."""
    indexed, query = index_query(types)
    caps = QueryCursor(query).captures(unit.root)
    index = unit._index
    for t in indexed:
        # a capture list need not come in document order (a call inside another's
        # arguments completes later), and lookups bisect these lists by start: sorted on
        # first use (most types are never asked for)
        index[t] = caps.get(t, [])
    unit._unsorted.update(indexed)


# --------------------------------------------------------------------------------------
# Finding the constructs: from the text where the tree has no error, by a query where it has


def _found(unit: Unit, group: str | None = None) -> Found:
    """The nodes of the model, found from the words that start them
    (``klc.cuda.scan.by_text``: a few scans of the bytes, and a node lookup at each place
    found), not by a walk over every node. That needs every token the constructs are found
    from to be its text: so does a tree whose errors are ERROR nodes (they hold the text they
    could not place) and MISSING tokens of other kinds (a ``;``, a ``)``); a tree with a
    MISSING token of those kinds (``_FOUND_FROM``: zero-width, no text) is read by one query
    run (``_by_query``). Both give the same nodes for a tree of the first kind (the text's
    without the functions, which the model has found by then (``_model``), and of one
    ``group`` of constructs where one is given)."""
    if unit.missing & _FOUND_FROM:
        return _by_query(unit)
    return by_text(unit, False, CONSTRUCT_GROUPS if group is None else (group,))


# the tokens ``by_text`` finds constructs from (and the "{" of a body, which its descent
# through the file's outline looks for)
_FOUND_FROM = frozenset({"for", "while", "do", "asm", "__asm__", "__asm", "__shared__",
                         "__global__", "<<<", "preproc_directive", "{"})


# The model's constructs by one query over the whole tree (a tree with errors)
_MODEL_PATTERNS = """
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
    "__global__" @global
"""
_MODEL_QUERY: list[Query] = []  # compiled on first use


def model_query() -> Query:
    """The query of ``_by_query``, compiled on first use."""
    if not _MODEL_QUERY:
        _MODEL_QUERY.append(Query(LANGUAGE, _MODEL_PATTERNS))
    return _MODEL_QUERY[0]


def _by_query(unit: Unit) -> Found:
    caps = QueryCursor(model_query()).captures(unit.root)
    lists = {}
    for name in ("function", "call", "launch", "loop", "declaration", "pragma", "asm",
                 "global"):
        nodes = caps.get(name, [])
        sort_doc_order(nodes)
        lists[name] = nodes
    return Found([n for n in lists["function"] if not _inside_a_body(n)], lists["call"],
                  lists["launch"], lists["loop"], lists["declaration"], lists["pragma"],
                  lists["asm"], lists["global"])


_by_start = operator.attrgetter("start_byte")


def _functions(unit: Unit, nodes: list[Node],
               ancestors: list[tuple[Node, ...]] | None = None) -> None:
    """The functions defined in the file (outside any function body: `CUDA_KERNEL_LOOP(i, n)
    { ... }` in a kernel reads as a function definition with no type, but it is a statement
    of the function around it, a loop macro, and the gate would blank it as host code),
    sorted by start. ``ancestors``: each node's parent, grandparent and great-grandparent,
    where known."""
    calls_of = _calls_of(weakref.ref(unit))
    for i, node in enumerate(nodes):
        f = _function(unit, node, ancestors[i] if ancestors is not None else None)
        if f is not None:
            f.calls_of = calls_of
            unit._functions.append(f)
    unit._functions.sort(key=lambda f: f.start)


def _calls_of(unit_ref: Callable[[], Unit | None]) -> Callable[[Function], list[Call]]:
    """What finds a function's calls on first use: the calls of the unit's index (one query
    run, shared with matching and guards) inside its body that no function defined inside
    it holds. The unit is held weakly (a function's unit holds the function)."""
    def calls_of(f: Function) -> list[Call]:
        unit = unit_ref()
        if unit is None:
            return []
        nodes = unit.nodes_by_type(("call_expression",))["call_expression"]
        owner = _owner(unit._functions)
        calls = []
        i = bisect.bisect_left(nodes, f.body_start, key=_by_start)
        while i < len(nodes) and nodes[i].start_byte < f.body_end:
            node = nodes[i]
            i += 1
            callee = node.child_by_field_id(F_FUNCTION)
            if callee is not None and owner(node.start_byte, node.end_byte) is f:
                calls.append(Call(_call_name(unit, callee), node.start_byte, node.end_byte))
        return calls

    return calls_of


def _owner(functions: list[Function]) -> Owner:
    """The lookup of the innermost function whose body holds a span, by bisection."""
    starts = [f.body_start for f in functions]
    bisect_right = bisect.bisect_right

    def owner(begin: int, end: int) -> Function | None:
        i = bisect_right(starts, begin) - 1
        while i >= 0:
            f = functions[i]
            if f.body_start <= begin and end <= f.body_end:
                return f
            i -= 1
        return None

    return owner


def _masked_pragmas(unit: Unit, owner: Owner) -> None:
    """The pragmas that masked macros stand for (``CUTE_UNROLL``): each joins its
    function's pragmas (an unroll is also the loop's that follows it: ``unroll_marks``)."""
    for m, found in _masked_meanings(unit):
        f = owner(m.start, m.end)
        if f is not None:
            f._pragmas.append(Pragma(found.pragma, m.start, m.end))  # type: ignore[arg-type]


def _masked_meanings(unit: Unit) -> Iterator[tuple[Mask, MacroMeaning]]:
    """The masks that stand for a pragma, each with what it means."""
    for m in unit.masks:
        if m.reason in ("pragma", "statement-like macro"):
            found = meaning(unit.text(m.start, m.end), unit._defines, unit._meanings)
            if found.pragma is not None:
                yield m, found


def unroll_marks(unit: Unit) -> dict[int, str]:
    """Where a masked macro that stands for ``#pragma unroll`` puts one: the start of the
    statement after it -> the unroll's argument. Found on first use."""
    marks = unit._unroll_at
    if marks is None:
        marks = unit._unroll_at = {}
        parsed = unit.parsed
        for m, found in _masked_meanings(unit):
            if found.unroll is not None:
                nxt = m.end
                while nxt < len(parsed) and parsed[nxt] in _WHITESPACE:
                    nxt += 1
                marks[nxt] = found.unroll
    return marks


def loop_unroll(unit: Unit, node: Node) -> str | None:
    """The argument of the ``#pragma unroll`` right before a loop statement (a ``#pragma``
    line, or a masked macro that stands for one), "" for none; None for no such pragma. Read
    of the one loop: the model's loops are not needed."""
    unroll = unroll_marks(unit).get(node.start_byte)
    if unroll is None:
        prev = node.prev_named_sibling
        if prev is not None and prev.type == "preproc_call":
            arg = prev.child_by_field_id(F_ARGUMENT)
            text = _text(unit.source, arg).strip() if arg is not None else ""
            if text.startswith("unroll"):
                unroll = text[len("unroll"):].strip()
    return unroll


def _function_problems(unit: Unit) -> None:
    """Each syntax problem joins the problems of every function it lies in."""
    for p in unit.problems:
        for f in unit._functions:
            if f.start <= p.start < max(f.end, f.start + 1):
                f.problems.append(p)


def _calls(unit: Unit, found: Found, owner: Owner) -> None:
    """Barriers, warp intrinsics and atomics, each given to the function that holds it."""
    for node in found.calls:
        f = owner(node.start_byte, node.end_byte)
        callee = node.child_by_field_id(F_FUNCTION) if f is not None else None
        if f is not None and callee is not None:
            name = _call_name(unit, callee)
            kind = _call_kind(name)
            if kind is not None:
                getattr(f, "_" + kind).append(Call(name, node.start_byte, node.end_byte))
    for f in unit._functions:  # (calls found from different words: in document order)
        for calls in (f._barriers, f._warp_intrinsics, f._atomics):
            if len(calls) > 1:
                calls.sort(key=_by_start_attr)


def _launches(unit: Unit, found: Found, owner: Owner) -> None:
    """The launches, the unit's and each given to the function that holds it."""
    for node in found.launches:
        launch = _launch(unit, node)
        if launch is not None:
            unit._launches.append(launch)
            f = owner(node.start_byte, node.end_byte)
            if f is not None:
                f._launches.append(launch)
    unit._launches.sort(key=_by_start_attr)
    for f in unit._functions:
        if len(f._launches) > 1:
            f._launches.sort(key=_by_start_attr)


def _loops(unit: Unit, found: Found, owner: Owner) -> None:
    """The loops, each given to the function that holds it."""
    for node in found.loops:
        f = owner(node.start_byte, node.end_byte)
        if f is not None:
            f._loops.append(_loop(unit, f, node))


def _rest(unit: Unit, found: Found, owner: Owner) -> None:
    """Shared arrays, pragmas and asm, each given to the function that holds it."""
    for node in found.shared:
        f = owner(node.start_byte, node.end_byte)
        if f is not None:
            f._shared.extend(_shared_decls(unit, node))
    src = unit.source
    for node in found.pragmas:
        start, end = node.start_byte, node.end_byte
        f = owner(start, end)
        if f is None:
            continue
        directive = node.child_by_field_id(F_DIRECTIVE)
        # (the directive token is "#", blanks and a word: no other blank to strip)
        if directive is None or src[directive.start_byte:directive.end_byte].strip() \
                != b"#pragma":
            continue
        arg = node.child_by_field_id(F_ARGUMENT)
        f._pragmas.append(Pragma(_text(src, arg).strip() if arg else "", start, end))
    for node in found.asm:
        f = owner(node.start_byte, node.end_byte)
        if f is not None:
            f._asm.append((node.start_byte, node.end_byte))
    # captures do not always come in document order (a pattern with a child constraint
    # completes later), and masked pragma macros join the "#pragma" lines: sort each list
    for f in unit._functions:
        for held in (f._shared, f._pragmas):
            if len(held) > 1:
                held.sort(key=_by_start_attr)
        f._asm.sort()


_by_start_attr = operator.attrgetter("start")


def _unanalyzable(unit: Unit, globals_: list[Node]) -> None:
    """The ``__global__`` kernels that could not be modeled, or hold a syntax problem, and
    why, in source order."""
    modeled = {f.node.start_byte for f in unit._functions}
    for tok in globals_:
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
    for f in unit._functions:
        if f.is_kernel and f.problems:
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


def _ancestors(node: Node) -> tuple[Node, ...]:
    """A node's parent, grandparent and great-grandparent (fewer at the top of the tree)."""
    out: list[Node] = []
    up = node.parent
    while up is not None and len(out) < 3:
        out.append(up)
        up = up.parent
    return tuple(out)


def _function(unit: Unit, node: Node, ancestors: tuple[Node, ...] | None = None
              ) -> Function | None:
    decl = _function_declarator(node.child_by_field_id(F_DECLARATOR))
    body = node.child_by_field_id(F_BODY)
    if decl is None or body is None:
        return None
    name_node = decl.child_by_field_id(F_DECLARATOR)
    name = _text(unit.source, name_node) if name_node is not None else "?"
    if name_node is not None and name_node.type == "template_function":
        inner = name_node.child_by_field_id(F_NAME)
        name = _text(unit.source, inner) if inner is not None else name
    specifiers: list[str] = []
    launch_bounds = None
    for c in node.children:
        if c == decl or c.start_byte >= decl.start_byte:
            break
        if c.type in FUNCTION_SPECIFIERS or c.type in ("storage_class_specifier",
                                                        "type_qualifier"):
            specifiers.append(_text(unit.source, c))
        elif c.type == "launch_bounds":
            args = [a for a in c.named_children if a.type != "comment"]
            launch_bounds = LaunchBounds(
                _text(unit.source, args[0]) if args else "",
                _text(unit.source, args[1]) if len(args) > 1 else None,
                c.start_byte, c.end_byte,
            )
    start, extern_c, template_params = node.start_byte, False, ()
    up = iter(ancestors if ancestors is not None else _ancestors(node))
    parent = next(up, None)
    if parent is not None and parent.type == "template_declaration":
        start = parent.start_byte
        plist = parent.child_by_field_id(F_PARAMETERS)
        template_params = tuple(_template_params(unit, plist)) if plist else ()
        parent = next(up, None)
    if parent is not None and parent.type == "linkage_specification":
        extern_c, start = True, parent.start_byte
    elif parent is not None and parent.type == "declaration_list":
        grand = next(up, None)
        extern_c = grand is not None and grand.type == "linkage_specification"
    params_node = decl.child_by_field_id(F_PARAMETERS)
    attributes: list[str] = []
    if unit.masks:
        for m in _declaration_masks(unit, start, body.start_byte, params_node):
            if m.reason == "test macro header":
                if name_node is not None and m.start == name_node.start_byte:
                    name = " ".join(unit.text(m.start, m.end).split())
                continue
            meant = meaning(unit.text(m.start, m.end), unit._defines, unit._meanings)
            if m.start < start:
                if not (meant.specifiers or meant.launch_bounds):
                    continue  # a statement macro that ends the previous declaration
                start = m.start  # "CUTLASS_DEVICE\nvoid f()": the macro is part of f
            attributes.append(unit.text(m.start, m.end))
            specifiers += [s for s in meant.specifiers if s not in specifiers]
            if launch_bounds is None and meant.launch_bounds is not None:
                launch_bounds = LaunchBounds(*meant.launch_bounds, m.start, m.end)
    type_node = node.child_by_field_id(F_TYPE)
    if type_node is None and _MACRO_NAME_RE.fullmatch(name) and params_node is not None:
        # "TEST_F(Suite, Name) {" parses as a function without a return type: name it by the
        # whole macro call, as a reader would
        name = " ".join(_text(unit.source, decl).split())
    return Function(
        name=name,
        specifiers=tuple(specifiers),
        return_type=_text(unit.source, type_node) if type_node is not None else "",
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


def _inside_a_body(node: Node) -> bool:
    """Is this definition inside a function's body (a block), not at file, namespace or
    class scope?"""
    parent = node.parent
    while parent is not None:
        if parent.type == "compound_statement":
            return True
        parent = parent.parent
    return False


def _template_params(unit: Unit, plist: Node) -> Iterator[TemplateParam]:
    for p in plist.named_children:
        t = p.type
        default_node = p.child_by_field_id(F_DEFAULT_VALUE) or p.child_by_field_name(
            "default_type")
        default = _text(unit.source, default_node) if default_node is not None else None
        if t in ("type_parameter_declaration", "optional_type_parameter_declaration",
                 "variadic_type_parameter_declaration"):
            ident = next((c for c in p.named_children if c.type == "type_identifier"), None)
            yield TemplateParam("type", _text(unit.source, ident) if ident else "", "typename",
                                default)
        elif t in ("parameter_declaration", "optional_parameter_declaration",
                   "variadic_parameter_declaration"):
            d = p.child_by_field_id(F_DECLARATOR)
            ty = p.child_by_field_id(F_TYPE)
            yield TemplateParam("value", _text(unit.source, d) if d else "",
                                _text(unit.source, ty) if ty else "", default)
        elif t == "template_template_parameter_declaration":
            yield TemplateParam("template", _text(unit.source, p).split()[-1], "template", default)


_LOOP_KINDS = {"for_statement": "for", "for_range_loop": "for", "while_statement": "while",
               "do_statement": "do"}


def _text(source: bytes, node: Node) -> str:
    """A node's original text (``Unit.text`` of a node, without its checks)."""
    return source[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _loop(unit: Unit, f: Function, node: Node) -> Loop:
    ntype = node.type
    kind = _LOOP_KINDS[ntype]
    start, end = node.start_byte, node.end_byte
    depth = 0
    for other in f._loops:
        if other.start < start < other.end:
            depth += 1
    src = unit.source
    init = cond = update = var = None
    if ntype == "for_range_loop":  # for (auto x : xs): x is the loop variable
        d = node.child_by_field_id(F_DECLARATOR)
        while d is not None and d.type not in ("identifier", "structured_binding_declarator"):
            d = d.child_by_field_id(F_DECLARATOR) or (d.named_children[-1]
                                                        if d.named_children else None)
        var = _text(src, d) if d is not None else None
        right = node.child_by_field_id(F_RIGHT)
        cond = _text(src, right) if right is not None else None
    elif kind == "for":
        i = node.child_by_field_id(F_INITIALIZER)
        c = node.child_by_field_id(F_CONDITION)
        u = node.child_by_field_id(F_UPDATE)
        init = _text(src, i).rstrip(";").strip() if i is not None else None
        cond = _text(src, c) if c is not None else None
        update = _text(src, u) if u is not None else None
        if i is not None:
            itype = i.type
            if itype == "declaration":
                d = i.child_by_field_id(F_DECLARATOR)
                while d is not None and d.type != "identifier":
                    d = d.child_by_field_id(F_DECLARATOR)
                var = _text(src, d) if d is not None else None
            elif itype == "assignment_expression":
                left = i.child_by_field_id(F_LEFT)
                var = _text(src, left) if left is not None else None
        if var is None and update is not None:
            m = _FIRST_WORD_RE.match(update)
            var = m.group(1) if m else None
    else:
        c = node.child_by_field_id(F_CONDITION)
        cond = _text(src, c).strip("() ") if c is not None else None
    return Loop(kind, var, init, cond, update, depth, loop_unroll(unit, node), start, end)


_FIRST_WORD_RE = re.compile(r"\W*(\w+)")


def _shared_decls(unit: Unit, node: Node) -> Iterator[SharedDecl]:
    """The ``__shared__`` variables of a declaration, one per declarator
    (``__shared__ float a[32], b[32];`` declares two)."""
    shared, extern = False, False
    for c in node.children:
        if c.type in ("type_qualifier", "storage_class_specifier", "attribute_specifier"):
            t = _text(unit.source, c)
            shared |= t == "__shared__"
            extern |= t == "extern"
    if not shared:
        return
    type_node = node.child_by_field_id(F_TYPE)
    type_text = _text(unit.source, type_node) if type_node is not None else ""
    for d in node.children_by_field_id(F_DECLARATOR):
        if d.type == "init_declarator":
            d = d.child_by_field_id(F_DECLARATOR)
        dims: list[str] = []
        while d is not None and d.type in ("array_declarator", "parenthesized_declarator",
                                           "pointer_declarator"):
            if d.type == "array_declarator":
                size = d.child_by_field_id(F_SIZE)
                dims.insert(0, _text(unit.source, size) if size is not None else "")
            d = d.child_by_field_id(F_DECLARATOR) or (d.named_children[0]
                                                        if d.named_children else None)
        name = _text(unit.source, d) if d is not None else ""
        yield SharedDecl(name, type_text, tuple(dims), extern, node.start_byte, node.end_byte)


def _call_name(unit: Unit, callee: Node) -> str:
    ctype = callee.type
    if ctype == "identifier":
        return unit.source[callee.start_byte:callee.end_byte].decode("utf-8", "replace")
    if ctype == "template_function":
        inner = callee.child_by_field_id(F_NAME)
        return _text(unit.source, inner) if inner is not None else _text(unit.source, callee)
    return "".join(_text(unit.source, callee).split())


def _call_kind(name: str) -> str | None:
    """Which of a function's lists a call of this name joins: "barriers", "warp_intrinsics",
    "atomics", or None."""
    if name in BARRIERS:
        return "barriers"
    if name.startswith("__"):
        return "warp_intrinsics" if name.startswith(WARP_INTRINSIC_PREFIXES) else None
    if name.startswith("atomic"):
        return "atomics"
    method = _METHOD_RE.search(name)
    if method is None:
        return None
    m = method.group(1)
    if m == "sync":
        return "barriers"  # block.sync(), grid.sync(), cluster.sync()
    if m in CG_WARP_METHODS or (m == "reduce" and name.endswith("::reduce")):
        return "warp_intrinsics"  # warp.shfl_down(...), cg::reduce(warp, ...)
    if m.startswith("atomic"):
        return "atomics"
    return None


_METHOD_RE = re.compile(r"(?:\.|->|::)(\w+)$")


def _launch(unit: Unit, node: Node) -> Launch | None:
    config = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
    if config is None:
        return None
    fn = node.child_by_field_id(F_FUNCTION)
    args = node.child_by_field_id(F_ARGUMENTS)
    kernel, targs = (_text(unit.source, fn) if fn is not None else "?"), None
    if fn is not None and fn.type == "template_function":
        name = fn.child_by_field_id(F_NAME)
        ta = fn.child_by_field_id(F_ARGUMENTS)
        kernel = _text(unit.source, name) if name is not None else kernel
        targs = _text(unit.source, ta).strip()[1:-1].strip() if ta is not None else None
    parts = [c for c in config.named_children if c.type != "comment"]
    return Launch(
        kernel,
        targs,
        tuple(_text(unit.source, c) for c in parts),
        tuple(_text(unit.source, a) for a in args.named_children if a.type != "comment")
        if args is not None else (),
        node.start_byte,
        node.end_byte,
        tuple((c.start_byte, c.end_byte) for c in parts),
    )
