"""Semantic facts about a unit from libclang: types, qualifiers, sizes, constant values.

tree-sitter gives klc a lossless tree, but not meaning: it cannot say that ``x[i]`` is a
``const float`` or that ``BLOCK * 2`` is 512. Guards need exactly that, so ``Facts`` asks
clang, lazily: parsing a unit never imports ``clang.cindex``; the first fact asked builds one
libclang translation unit for the file (from the unit's bytes, passed as an unsaved file, so
the path need not exist, with the flags of ``klc.cuda.libclang``) and every answer is
memoized on the ``Facts`` object.

Constant values come from clang's evaluator. A template-dependent expression has no value
for clang; its sub-expressions that do have one are folded, the template value parameters
are replaced by ``bindings``, and the remaining arithmetic is evaluated by ``klc.safe_eval``
(a whitelist over Python's ``ast``, never ``eval``) with C's integer semantics.

Beside the model in ``klc.cuda`` (``docs/architecture.md``, "klc.cuda"): ``Facts`` answers
the model's ``UnitFacts``, and ``klc.cuda.parse`` hands it to each ``Unit`` it makes; the
model never imports this module.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc.cuda.flags import flags_for
from klc.cuda.libclang import (
    BUILTIN_DIR,
    BUILTIN_HEADERS,
    BUILTIN_SIZES,
    CLANG_ARGS,
    CUDA_DIR,
    CUDA_HEADERS,
    EVAL_FLOAT,
    EVAL_INT,
    STUB,
    VIRTUAL,
    as_type,
    conversion,
    load,
    stub_text,
    type_fact,
)
from klc.cuda.model import TypeFact, Value
from klc.cuda.syntax import F_ARGUMENTS, F_DECLARATOR, F_NAME
from klc.errors import KlcError, where
from klc.safe_eval import C_CONSTANT, ExprError, evaluate

if TYPE_CHECKING:
    from clang import cindex
    from tree_sitter import Node

    from klc.cuda.model import Unit

_MACRO_HEAD_RE = re.compile(r"\s*[A-Za-z_]\w*(?:\([^)]*\))?")


class Facts:
    """Semantic facts about one ``Unit``: built on the first question, memoized after."""

    def __init__(self, unit: Unit, extra_args: tuple[str, ...] = (), keep_going: bool = False):
        self.unit = unit
        self.extra_args = extra_args  # clang options on top of the command's (a spec's -D)
        # past a header that is not found (a host header of the project's), so that what
        # follows it (a typedef) is still read: for the type questions of klc.spec.aliases,
        # which refuse a name clang did not know; the guards' facts stop there, as clang does
        self.keep_going = keep_going
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
        return f"{VIRTUAL}/src/{p.name or 'unit.cu'}"

    @cached_property
    def tu(self) -> cindex.TranslationUnit:
        """The libclang translation unit of this file (built once, on first use)."""
        ci = load().ci
        unsaved = [(self._main_name, self.unit.source.decode("utf-8", "replace")),
                   (STUB, stub_text())]
        unsaved += [(f"{CUDA_DIR}/{h}", "") for h in CUDA_HEADERS]
        unsaved += [(f"{BUILTIN_DIR}/{h}", text) for h, text in BUILTIN_HEADERS.items()]
        self.builds += 1
        # the command's -I/-D and the file's compile_commands.json entry (klc.cuda.flags)
        extra = [*flags_for(self.unit.path).clang_args(), *self.extra_args]
        keep_going = getattr(ci.TranslationUnit, "PARSE_KEEP_GOING", 0x200) \
            if self.keep_going else 0
        try:
            return ci.Index.create().parse(
                self._main_name, args=[*CLANG_ARGS, *extra], unsaved_files=unsaved,
                options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD | keep_going,
            )
        except ci.TranslationUnitLoadError as e:
            raise KlcError(f"{where(self.unit.path, 1, 1)}: libclang could not parse the file "
                           f"({e})") from None

    @cached_property
    def diagnostics(self) -> list[str]:
        """clang's errors, ``file:line:col: message`` (facts still hold where it recovered)."""
        ci = load().ci
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
            self._types[key] = type_fact(c.type) if c is not None else None
        return self._types[key]

    def param_type(self, function_name: str, param_name: str) -> TypeFact | None:
        """The declared type of a function parameter (from the definition when there is one)."""
        key = (function_name, param_name)
        if key not in self._params:
            self._params[key] = self._param_type(function_name, param_name)
        return self._params[key]

    def _param_type(self, function_name: str, param_name: str) -> TypeFact | None:
        ci = load().ci
        kinds = (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE)
        found = None
        for fn in self._walk(self._top, lambda c: c.kind in kinds):
            if fn.spelling != function_name:
                continue
            for p in fn.get_children():
                if p.kind == ci.CursorKind.PARM_DECL and p.spelling == param_name:
                    found = p
                    if fn.is_definition():
                        return type_fact(p.type)
        return type_fact(found.type) if found is not None else None

    def typedef(self, name: str) -> TypeFact | None:
        """What a typedef or ``using`` alias named ``name`` stands for, where the file or a
        header it includes (through -I) declares one at file or namespace scope."""
        ci = load().ci
        kinds = (ci.CursorKind.TYPEDEF_DECL, ci.CursorKind.TYPE_ALIAS_DECL)
        stack = list(self.tu.cursor.get_children())
        while stack:
            c = stack.pop(0)
            if c.kind in kinds and c.spelling == name:
                return type_fact(c.underlying_typedef_type)
            if c.kind in (ci.CursorKind.NAMESPACE, ci.CursorKind.LINKAGE_SPEC,
                          ci.CursorKind.UNEXPOSED_DECL):
                stack.extend(c.get_children())
        return None

    def _walk(self, cursors: list[Any], keep: Callable[[Any], bool]) -> Iterator[Any]:
        """Declarations of this file, into namespaces and extern "C" blocks."""
        ci = load().ci
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
                return as_type(value, c.type)
        return self.evaluate(self.unit.text(start, end), bindings)

    def _evaluate_cursor(self, cursor: Any) -> Value | None:
        """clang's own evaluation of a cursor (an expression, or a variable's initializer)."""
        c = load()
        result = c.evaluate(cursor)
        if not result:
            return None
        try:
            kind = c.kind(result)
            if kind == EVAL_INT:
                if c.is_unsigned(result):
                    return int(c.as_unsigned(result))
                return int(c.as_long_long(result))
            if kind == EVAL_FLOAT:
                return float(c.as_double(result))
            return None
        finally:
            c.dispose(result)

    def _fold(self, cursor: Any, bindings: dict[str, int]) -> str | None:
        """A Python expression for a cursor: clang's value where it has one, bindings for
        template parameters, and the source's operators in between."""
        ci = load().ci
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
            conv = conversion(cursor.type)
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
        size = BUILTIN_SIZES.get(name)
        if size is None:
            size = self._type_sizes.get(name)
        return str(size) if size is not None else "__klc_unknown__"

    @cached_property
    def _type_sizes(self) -> dict[str, int]:
        """Sizes of the named types clang knows: the file's and the stub's (``float4``)."""
        ci = load().ci
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
        ci = load().ci
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
                    values.setdefault(c.spelling, as_type(v, c.type))
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
        ci = load().ci
        function_like = load().macro_function_like
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


def _explicit_instantiations(unit: Unit) -> list[Node]:
    """The explicit instantiations of the file (``template`` followed by a declaration, not
    by ``<``), in source order, once per unit: the node whose keyword each such ``template``
    word is (the named node around the token), not a query over the whole tree."""
    found = unit.memo.get("explicit_instantiations")
    if found is None:
        src, at = unit.source, unit.root.named_descendant_for_byte_range
        found = []
        for m in _EXPLICIT_INSTANTIATION_RE.finditer(src):
            start, end = m.span()
            if (start and _WORD_BYTE[src[start - 1]]) or (end < len(src) and _WORD_BYTE[src[end]]):
                continue  # (inside a longer word)
            node = at(start, end)
            if node is not None and node.type == "template_instantiation" \
                    and (not found or found[-1].id != node.id):
                found.append(node)
        unit.memo["explicit_instantiations"] = found
    return found  # type: ignore[no-any-return]


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
    for node in _explicit_instantiations(unit):
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
# Text to constant arithmetic


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


def _safe_eval(text: str) -> Value | None:
    """Constant C arithmetic (``klc.safe_eval``'s C dialect: C's division and conversions,
    no names), or None where it is not that."""
    try:
        value: Value = evaluate(text, {}, C_CONSTANT)
    except ExprError:
        return None
    return value


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
