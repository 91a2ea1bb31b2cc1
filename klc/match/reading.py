"""Reading code as what it stands for: a local by the value it was given once, and a call of
a small helper by the helper's body (``Reader``, one per unit, kept in ``Unit.memo``).

Public kernels keep a warp's lane and index in locals (``int lane = tid % 32; int warp = tid
/ 32;``) and write a warp's shuffles in a ``__device__`` helper (``sum = warpReduceSum(sum);``)
where an anchor spells them inline. The matcher (``klc.match.engine``) reads, where a
pattern's expression meets such a local, the local's initialiser in its place, and where a
pattern's statement meets such a call, the helper's statement with the helper's parameter
read as the call's variable:

- a **stable local** is declared once in its function, with an initialiser, never assigned,
  incremented or taken the address of, of a plain (no pointer, no reference) type; its
  initialiser calls, assigns and increments nothing, reads no memory, and names only
  built-in index variables, ``warpSize``, the file's ``#define`` constants, the function's
  template parameters and its parameters and stable locals that are never assigned either
  (so that evaluated again at a use it gives the value it gave at the declaration). A use
  reads it only after the declaration and inside its block.
- an **inlinable helper** is a function of the file, not the caller, with one by-value
  parameter of a plain type (or a template type parameter) and a body of one statement and
  ``return p;`` (``p`` the parameter); ``x = f(x);`` (the same variable on both sides, its
  type the parameter's where that is not a template parameter) then reads as that statement
  with ``p`` read as ``x``: the helper works on a copy of ``x`` and the call stores the copy
  back. A binding made inside the helper to the parameter itself binds the caller's
  variable (an anchor that is the loop alone then matches the call where it stands); one
  made to more code must not name the parameter (the rewrite would write the helper's name,
  not the caller's) nor any name but the helper's own locals, built-ins and the file's
  ``#define`` constants (``Reader.foreign_names``).
- a **misread comparison** (``klc.cuda.repair``): the matcher reads the comparisons that
  tree-sitter-cuda took for a template's arguments as the comparisons they are.

Nothing here changes a byte: a match that read through a local or a helper binds the code's
own spans (inside the declaration, inside the helper), and a rewrite renders them by text.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tree_sitter import Node

from klc.cuda.model import Function, Unit
from klc.cuda.repair import rereadings
from klc.match.engine import _Matcher, _significant, block_statements
from klc.match.iso_checks import _BUILTINS, _safe, split_obligations
from klc.match.model import Binding, Match
from klc.match.pattern import Pattern

if TYPE_CHECKING:
    from klc.rule import Rule

_MEMO = "klc.match.reading"
_PLAIN_TYPES = frozenset({"primitive_type", "sized_type_specifier", "type_identifier"})
_ALLOWED_BUILTINS = _BUILTINS | {"warpSize"}


_CALLED = re.compile(rb"([A-Za-z_]\w*) ?\(")  # a name called, `f(` or `f (`


@dataclass
class _Locals:
    """A function's stable locals: name -> (its declarator, its initialiser)."""

    stable: dict[bytes, tuple[Node, Node]] = field(default_factory=dict)
    declared: frozenset[bytes] = frozenset()  # every name the function declares
    # the plain names it declares: name -> (where, the declaration's type, spacing aside),
    # in the order a walk of its tree meets them
    typed: dict[bytes, list[tuple[int, str]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Inlined:
    """A call statement read as its helper's statement: ``stmt`` (in the helper's body),
    the helper's parameter name, the call's variable (its name and its node, the left side
    of ``x = f(x);``)."""

    stmt: Node
    param: bytes
    arg: bytes
    helper: Function
    arg_node: Node


class Reader:
    """What a unit's locals and helpers stand for (built on first use, per function)."""

    def __init__(self, unit: Unit) -> None:
        self.unit = unit
        self.src = unit.source
        self._locals: dict[int, _Locals] = {}
        self._helpers: dict[str, Function | None] = {}
        self._called: dict[tuple[int, int], frozenset[bytes]] = {}
        self._one_statement: frozenset[bytes] | None = None
        self._names_stable: dict[tuple[int, int], bool] = {}
        self._readable: dict[tuple[int, int, int], bytes] = {}
        self.defines = frozenset(n.encode() for n in unit._defines)
        # significant children by node id, those of a comparison tree-sitter misread as a
        # template's arguments read again (klc.cuda.repair): the reading matcher's
        self.kids: dict[int, list[Node]] = rereadings(unit, _significant)
        self.fitted: dict[tuple[int, int], bool] = {}
        self.reread_spans = sorted((k[0].start_byte if k else 0, k[-1].end_byte if k else 0)
                                   for k in self.kids.values())
        # names that stand for a number: warpSize (32 on every GPU CUDA targets) and the
        # file's object-like #defines of a decimal literal (read_text writes the number)
        self.numbers: dict[bytes, str] = {b"warpSize": "32"}
        for name, (params, body) in unit._defines.items():
            if params is None and body.strip().isdigit():
                self.numbers[name.encode()] = str(int(body.strip()))

    # ----------------------------------------------------------------- stable locals

    def _function(self, at: int) -> Function | None:
        return self.unit.function_at(at)

    def locals_of(self, fn: Function) -> _Locals:
        got = self._locals.get(fn.start)
        if got is None:
            got = self._locals[fn.start] = self._scan(fn)
        return got

    def _scan(self, fn: Function) -> _Locals:
        body = fn.node.child_by_field_name("body")
        out = _Locals()
        if body is None:
            return out
        declared: dict[bytes, list[tuple[Node, Node | None, Node]]] = {}
        changed: set[bytes] = set()
        stack = [body]
        while stack:
            n = stack.pop()
            t = n.type
            if t == "declaration":
                kind = n.child_by_field_name("type")
                spelled = " ".join((kind.text or b"").decode().split()) if kind is not None \
                    else ""  # (no type: never the same)
                for d in n.named_children:
                    if d == kind or d.type in ("type_qualifier", "storage_class_specifier",
                                               "comment"):
                        continue
                    name_node = d.child_by_field_name("declarator") \
                        if d.type == "init_declarator" else d
                    if name_node is None:
                        continue
                    if name_node.type == "identifier":
                        out.typed.setdefault(name_node.text or b"", []).append(
                            (n.start_byte, spelled))
                    if name_node.type != "identifier":
                        # (a pointer, reference or array: never stable; its name is found)
                        inner = _first_identifier(name_node)
                        if inner is not None:
                            declared.setdefault(inner.text or b"", []).append(
                                (name_node, None, n))
                        continue
                    value = d.child_by_field_name("value") if d.type == "init_declarator" \
                        else None
                    plain = kind is not None and kind.type in _PLAIN_TYPES
                    declared.setdefault(name_node.text or b"", []).append(
                        (name_node, value if plain else None, n))
            elif t == "assignment_expression":
                _add_base(changed, n.child_by_field_name("left"))
            elif t == "update_expression" or (t == "pointer_expression" and n.child_count == 2
                                               and n.children[0].type == "&"):
                _add_base(changed, n.child_by_field_name("argument"))
            elif t == "init_declarator" and (d := n.child_by_field_name("declarator")) \
                    is not None and d.type == "reference_declarator":
                _add_base(changed, n.child_by_field_name("value"))  # (int& r = lane;)
            elif t == "call_expression" and not self._by_value(n):
                args = n.child_by_field_name("arguments")
                for a in args.named_children if args is not None else ():
                    _add_base(changed, a)  # (a callee that may take it by reference)
            stack.extend(n.children)
        params = {p.name.encode(): p for p in fn.params}
        templates = {t.name.encode() for t in fn.template_params}
        unchanged_params = {n for n, p in params.items()
                            if n not in changed and n not in declared and not p.reference}
        candidates = {name: entries[0] for name, entries in declared.items()
                      if len(entries) == 1 and name not in changed and name not in params
                      and entries[0][1] is not None and _safe(entries[0][1])}
        # a candidate's initialiser may name only what stays put: resolved to a fixed point
        stable = dict(candidates)
        while True:
            drop = [name for name, (_, value, _) in stable.items()
                    if name in _identifiers(value)  # type: ignore[arg-type]
                    or not all(self._fixed_name(w, stable, unchanged_params, templates)
                               for w in _identifiers(value))]  # type: ignore[arg-type]
            if not drop:
                break
            for name in drop:
                del stable[name]
        out.declared = frozenset(declared)
        out.stable = {name: (decl, value) for name, (decl, value, _) in stable.items()}  # type: ignore[misc]
        return out

    def _by_value(self, call: Node) -> bool:
        """Whether the call takes its arguments by value: an intrinsic (``__shfl_down_sync``),
        a C math function, a cast, or a function of this file none of whose parameters is a
        reference."""
        fn = call.child_by_field_name("function")
        name = (fn.text or b"").decode() if fn is not None and fn.type == "identifier" else ""
        if not name:
            return False
        if name.startswith("__") or name in _MATH:
            return True
        helper = self.helper(name)
        return helper is not None and not any(p.reference for p in helper.params)

    def _fixed_name(self, name: bytes, stable: dict[bytes, object], params: set[bytes],
                    templates: set[bytes]) -> bool:
        return name in stable or name in params or name in templates \
            or name.decode() in _ALLOWED_BUILTINS or name in self.defines

    def local_value(self, ident: Node) -> Node | None:
        """The initialiser that a use of a stable local stands for (None: not one)."""
        fn = self._function(ident.start_byte)
        if fn is None:
            return None
        got = self.locals_of(fn).stable.get(ident.text or b"")
        if got is None:
            return None
        decl, value = got
        if ident.start_byte < value.end_byte:
            return None  # (the declaration itself, or before it)
        scope = decl.parent
        while scope is not None and scope.type != "compound_statement":
            scope = scope.parent
        if scope is None or not (scope.start_byte <= ident.start_byte < scope.end_byte):
            return None
        return value

    def read_text(self, start: int, end: int, depth: int = 0) -> str | None:
        """The code of the span with each use of a stable local written as its initialiser
        (parenthesised unless it is a name, a member or a literal), whitespace squeezed: two
        spans that read the same are the same value (``tid`` and ``threadIdx.x`` after
        ``unsigned tid = threadIdx.x;``). None where the span is not one node's."""
        node = self.unit.root.descendant_for_byte_range(start, end)
        while node is not None and (node.start_byte != start or node.end_byte != end):
            node = node.parent if node.parent is not None and node.parent.start_byte == start \
                and node.parent.end_byte == end else None
        if node is None or depth > 8:
            return None
        parts: list[str] = []
        pos = start
        for ident in _identifier_nodes(node, start, end):
            number = self.numbers.get(ident.text or b"")
            if number is not None and self.local_value(ident) is None \
                    and self._undeclared(ident):
                parts.append(self.src[pos:ident.start_byte].decode("utf-8", "replace"))
                parts.append(number)
                pos = ident.end_byte
                continue
            value = self.local_value(ident)
            if value is None:
                continue
            inner = self.read_text(value.start_byte, value.end_byte, depth + 1)
            if inner is None:
                return None
            if value.type not in ("identifier", "field_expression", "number_literal"):
                inner = f"({inner})"
            parts.append(self.src[pos:ident.start_byte].decode("utf-8", "replace"))
            parts.append(inner)
            pos = ident.end_byte
        parts.append(self.src[pos:end].decode("utf-8", "replace"))
        return " ".join("".join(parts).split())

    def _undeclared(self, ident: Node) -> bool:
        """Whether no parameter or local of the function declares the name (then a
        ``#define`` or the built-in is what it names)."""
        fn = self._function(ident.start_byte)
        if fn is None:
            return True
        name = ident.text or b""
        if any(p.name.encode() == name for p in fn.params):
            return False
        return name not in self.locals_of(fn).declared

    def rereads(self, start: int, end: int) -> bool:
        """Whether the span holds an expression read again (klc.cuda.repair)."""
        spans = self.reread_spans  # (sorted by start)
        for i in range(bisect.bisect_left(spans, (start, -1)), len(spans)):
            s, e = spans[i]
            if s >= end:
                return False
            if e <= end:
                return True
        return False

    def stable_names(self, start: int, end: int) -> bool:
        """Whether the span names some stable local of its function after its declaration
        (the matcher reads through locals only in such spans)."""
        fn = self._function(start)
        if fn is None:
            return False
        stable = self.locals_of(fn).stable
        if not stable:
            return False
        key = (start, end)
        got = self._names_stable.get(key)
        if got is None:
            text = self.src[start:end]
            got = self._names_stable[key] = any(name in text for name in stable)
        return got

    def readable_text(self, fn: Function, start: int, end: int, helpers: list[bytes]
                      ) -> bytes:
        """What the span may read as, for the words an anchor requires: its own text, the
        initialisers of the stable locals it names (and of those these name, in turn), the
        numbers it names (warpSize, a #define), the helpers it calls, and the text of its
        function's own header (parameters the read code names)."""
        key = (start, end, len(helpers))
        got = self._readable.get(key)
        if got is not None:
            return got
        stable = self.locals_of(fn).stable
        parts = [self.src[start:end], self.src[fn.start:fn.body_start], *helpers]
        seen: set[bytes] = set()
        grew = True
        while grew:
            grew = False
            text = b"".join(parts)
            for name, (_decl, value) in stable.items():
                if name not in seen and name in text:
                    seen.add(name)
                    parts.append(b" " + (value.text or b""))
                    grew = True
        text = b" ".join(parts)
        extra = [v.encode() for n, v in self.numbers.items() if n in text]
        got = self._readable[key] = text + b" " + b" ".join(extra)
        return got

    # ----------------------------------------------------------------- helpers

    def helper(self, name: str) -> Function | None:
        if name not in self._helpers:
            found = [f for f in self.unit.functions if f.name == name]
            self._helpers[name] = found[0] if len(found) == 1 else None
        return self._helpers[name]

    def helper_texts(self, caller: Function, start: int, end: int) -> list[bytes]:
        """The text of each other function of the file whose name the span calls (the
        names followed by ``(``, read once per span: many rules ask of the same nodes)."""
        called = self._called.get((start, end))
        if called is None:
            called = self._called[(start, end)] = frozenset(
                _CALLED.findall(self.src[start:end]))
        if not called or not (called & self.one_statement_helpers()):
            return []
        return [self.src[fn.start:fn.end] for fn in self.unit.functions
                if fn is not caller and fn.name.encode() in called]

    def one_statement_helpers(self) -> frozenset[bytes]:
        """The names of the file's functions that ``inlined`` may read a call of as their
        statement: one parameter taken by value, a body of one statement and ``return`` of
        the parameter (read once per unit: a span that calls none has nothing to read)."""
        if self._one_statement is None:
            self._one_statement = frozenset(
                fn.name.encode() for fn in self.unit.functions if _helper_shape(fn))
        return self._one_statement

    def inlined(self, stmt: Node) -> Inlined | None:
        """``x = f(x);`` read as the one statement of the helper ``f`` (None: not one)."""
        if stmt.type != "expression_statement" or stmt.named_child_count != 1:
            return None
        a = stmt.named_children[0]
        if a.type != "assignment_expression":
            return None
        op = a.child_by_field_name("operator")
        left, call = a.child_by_field_name("left"), a.child_by_field_name("right")
        if op is None or op.type != "=" or left is None or left.type != "identifier" \
                or call is None or call.type != "call_expression":
            return None
        fname, args = call.child_by_field_name("function"), call.child_by_field_name("arguments")
        if fname is None or fname.type != "identifier" or args is None \
                or args.named_child_count != 1 or args.named_children[0].text != left.text:
            return None
        caller = self._function(stmt.start_byte)
        fn = self.helper((fname.text or b"").decode())
        if fn is None or caller is None or fn is caller or fn.node.start_byte <= \
                stmt.start_byte < fn.node.end_byte:
            return None
        stmts = _helper_shape(fn)
        if stmts is None:
            return None
        p = fn.params[0]
        templated = p.base_type in {t.name for t in fn.template_params if t.kind == "type"}
        if not templated and not self._same_type(caller, left, p.base_type):
            return None
        return Inlined(stmts[0], p.name.encode(), left.text or b"", fn, left)

    def _same_type(self, caller: Function, var: Node, base: str) -> bool:
        """Whether the caller's ``var`` is declared (a local or a parameter) with the plain
        type ``base``."""
        name = var.text or b""
        for p in caller.params:
            if p.name.encode() == name:
                return not p.pointer and not p.reference and p.base_type == base
        for at, kind in self._declarations(caller).get(name, ()):
            if at < var.start_byte:
                return kind == base
        return False

    def _declarations(self, caller: Function) -> dict[bytes, list[tuple[int, str]]]:
        """The plain names the function's body declares: name -> (where, the declaration's
        type, spacing aside) in the order a walk of its tree meets them (``_scan``'s, read
        once per function)."""
        return self.locals_of(caller).typed

    def foreign_names(self, node_span: tuple[int, int], inl: Inlined) -> bool:
        """Whether text bound inside the helper names something the caller may read
        otherwise: the parameter, or a name that is not the helper's own local, a built-in
        or a ``#define`` constant."""
        start, end = node_span
        body = inl.helper.node.child_by_field_name("body")
        node = body.descendant_for_byte_range(start, end) if body is not None else None
        if node is None:
            return True
        own = _declared_in(inl.stmt)
        for ident in _identifier_nodes(node, start, end):
            word = ident.text or b""
            if word == inl.param:
                return True
            if word in own or word.decode() in _ALLOWED_BUILTINS or word in self.defines:
                continue
            return True
        return False


# C math and conversion functions that take their arguments by value
_MATH = frozenset({
    "min", "max", "abs", "fabs", "fabsf", "fminf", "fmaxf", "fmin", "fmax", "sqrt", "sqrtf",
    "rsqrtf", "exp", "expf", "exp2f", "log", "logf", "log2f", "pow", "powf", "floor", "floorf",
    "ceil", "ceilf", "round", "roundf", "sin", "sinf", "cos", "cosf", "tan", "tanf", "tanh",
    "tanhf", "erf", "erff", "fma", "fmaf", "float", "int", "static_cast"})


def _add_base(out: set[bytes], n: Node | None) -> None:
    """The variable an lvalue changes (``x``, ``s.f``, ``a[i]``, ``(x)``): its name."""
    while n is not None and n.type in ("field_expression", "subscript_expression",
                                       "parenthesized_expression"):
        n = n.child_by_field_name("argument") if n.type != "parenthesized_expression" \
            else (n.named_children[0] if n.named_children else None)
    if n is not None and n.type == "identifier":
        out.add(n.text or b"")


def _first_identifier(n: Node) -> Node | None:
    stack = [n]
    while stack:
        c = stack.pop(0)
        if c.type == "identifier":
            return c
        stack.extend(c.children)
    return None


def _identifiers(n: Node) -> list[bytes]:
    return [i.text or b"" for i in _identifier_nodes(n, n.start_byte, n.end_byte)]


def _identifier_nodes(n: Node, start: int, end: int) -> list[Node]:
    """The identifiers inside [start, end) of ``n`` that name variables, in source order."""
    out, stack = [], [n]
    while stack:
        c = stack.pop()
        if c.end_byte <= start or c.start_byte >= end:
            continue
        if c.type == "identifier":
            out.append(c)
        elif c.type == "field_expression":
            arg = c.child_by_field_name("argument")
            if arg is not None:
                stack.append(arg)  # (a field's name is no variable)
            continue
        stack.extend(reversed(c.children))
    return out


def _declared_in(stmt: Node) -> set[bytes]:
    out: set[bytes] = set()
    stack = [stmt]
    while stack:
        n = stack.pop()
        if n.type in ("init_declarator",):
            d = n.child_by_field_name("declarator")
            if d is not None and d.type == "identifier":
                out.add(d.text or b"")
        stack.extend(n.children)
    return out


def _outside(spans: list[tuple[int, int]], start: int, end: int) -> tuple[tuple[int, int], ...]:
    """The spans read that lie outside the match [start, end), each once, in order."""
    return tuple(sorted({(s, e) for s, e in spans if e <= start or s >= end}))


def reader(unit: Unit) -> Reader:
    """The unit's reader (one per unit)."""
    got = unit.memo.get(_MEMO)
    if got is None:
        got = unit.memo[_MEMO] = Reader(unit)
    return got  # type: ignore[no-any-return]


def _helper_shape(fn: Function) -> list[Node] | None:
    """The body's two statements of a helper ``inlined`` may read (one parameter taken by
    value; one statement, not a declaration, then ``return`` of the parameter), else None."""
    params = fn.params
    if len(params) != 1 or params[0].pointer or params[0].reference or params[0].array:
        return None
    body = fn.node.child_by_field_name("body")
    stmts = [c for c in body.named_children if c.type != "comment"] if body else []
    if len(stmts) != 2 or stmts[1].type != "return_statement":
        return None
    ret = [c for c in stmts[1].named_children if c.type != "comment"]
    if len(ret) != 1 or ret[0].type != "identifier" or ret[0].text != params[0].name.encode():
        return None
    if stmts[0].type in ("declaration", "return_statement"):
        return None
    return stmts


def read_matches(pattern: Pattern, unit: Unit, rule: Rule | None,
                 candidates: list[Node], done: set[int]) -> Iterator[Match]:
    """The matches of ``pattern`` found only by reading through stable locals and helpers,
    at the candidates (not in ``done``: those matched as written) whose function has
    something to read: ``klc.match.find`` asks after the plain matches."""
    r = reader(unit)
    m = _Matcher(unit.source, r.kids, r)
    m.reading = True
    full = m.through = pattern.reads is True  # (else the misread comparisons alone)
    if not full and not r.reread_spans:
        return
    for node in candidates:
        if node.id in done:
            continue
        s, e = node.start_byte, node.end_byte
        fn = unit.function_at(s)
        if fn is None:
            continue
        if not full:
            if not r.rereads(s, e):
                continue
            helpers: list[bytes] = []
        else:
            helpers = r.helper_texts(fn, s, e)
            if not helpers and not r.stable_names(s, e) and not r.rereads(s, e):
                continue
        if any(w not in r.readable_text(fn, s, e, helpers) for w in pattern.words):
            continue
        if pattern.is_sequence:
            kids = block_statements(node)
            fitted = r.fitted  # (whether a fixed statement fits a block's, read through)
            held = True
            for f in pattern.fixed:
                key = (id(f), node.id)
                held = fitted.get(key)  # type: ignore[assignment]
                if held is None:
                    held = fitted[key] = any(m.fits(f, k) for k in kids)
                if not held:
                    break
            if not held:
                continue
            for j in range(len(kids)):
                b: dict[str, Binding] = {}
                m.read_spans = []
                end = m.seq(pattern.elements, 0, kids, j, b, anchored=False)
                if end is None or end == j:
                    continue
                nodes = tuple(kids[j:end])
                yield Match(rule, unit, fn, nodes[0].start_byte,  # type: ignore[arg-type]
                            nodes[-1].end_byte, nodes, b, obligations=split_obligations(b),
                            reads=_outside(m.read_spans, nodes[0].start_byte,
                                           nodes[-1].end_byte))
        else:
            b = {}
            m.read_spans = []
            if m.node(pattern.elements[0], node, b):
                yield Match(rule, unit, fn, s, e, (node,), b,  # type: ignore[arg-type]
                            obligations=split_obligations(b),
                            reads=_outside(m.read_spans, s, e))
    if pattern.is_sequence or not pattern.root_type.endswith("statement") \
            or pattern.root_type == "expression_statement":
        return
    # a statement anchor (a shuffle loop) meets a helper's call where it stands
    for node in unit.nodes_by_type(["expression_statement"]).get("expression_statement", []):
        inl = r.inlined(node)
        fn = unit.function_at(node.start_byte)
        if inl is None or fn is None or any(
                w not in unit.source[inl.helper.start:inl.helper.end] for w in pattern.words):
            continue
        b = {}
        m.read_spans = []
        if m.node(pattern.elements[0], node, b):
            yield Match(rule, unit, fn, node.start_byte, node.end_byte,  # type: ignore[arg-type]
                        (node,), b, obligations=split_obligations(b),
                        reads=_outside(m.read_spans, node.start_byte, node.end_byte))
