"""Step 2 of loading: a rule spec (``klc.rule.syntax``) checked and compiled into the
``Rule`` the engine runs.

Everything the grammar cannot know is checked here: known kinds, contexts and predicates;
metavariables bound by the anchor; holes declared, used and with a domain; anchors and
rewrite templates that parse as CUDA. Every error names the file, line and column of what is
wrong, down to a token inside a code block, and all errors of a file are reported together.
Each rewrite clause is compiled by its kind (``klc/edits/<kind>.py``, found in
``klc.rule.registry``), which reports to the same ``CompileContext``.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from klc.errors import KlcError, where
from klc.rule.checks import (
    Errors,
    card_of,
    check_predicate,
    holes_of,
    inverse_of,
    isos_off_of,
    metavar_kinds_of,
)
from klc.rule.code import code_refs, for_parsing, parse_problem
from klc.rule.dots import DotsError, dots_lines, has_dots, without_dots
from klc.rule.fresh import contradictions
from klc.rule.guard import GuardExpr, calls
from klc.rule.holes import HoleDecl
from klc.rule.model import CONTEXTS, KINDS, SINGLE_FIELDS, Card, Edit, Rule, RuleError
from klc.rule.registry import installed
from klc.rule.syntax import (
    CodeBlock,
    EditSpec,
    FieldSpec,
    RuleSpec,
    grammar,
    guard_expr,
    syntax_error,
)

# use_metavar(ref kind, name, line, col, what): report a metavariable used where it is not bound
UseMetavar = Callable[[str, str, int, int, str], None]


class CompileContext:
    """What a rule's parts are checked against while it compiles: its holes, what its anchor
    binds, and the errors so far. Each rewrite kind's compile reports here."""

    def __init__(self, spec: RuleSpec, errs: Errors, holes: dict[str, HoleDecl]) -> None:
        self.spec = spec
        self.errs = errs
        self.holes = holes
        self.used_holes: set[str] = set()
        self.metavars: set[str] = set()
        self.sequences: set[str] = set()
        # ``anchor any``: metavariables some branches bind and others not -> (line, col) of
        # a branch that does not (using one is an error)
        self.partial: dict[str, tuple[int, int]] = {}
        self.index = 0  # the clause being compiled, from 1 (names a within block's sub-rule)
        self.isos_off: tuple[str, ...] = ()  # the rule's ``isomorphisms:`` line

    def use_hole(self, name: str, line: int, col: int, what: str) -> None:
        self.used_holes.add(name)
        if name not in self.holes:
            hint = " (a conditional needs a space after `?`: `c ? a : b`)" \
                if what.startswith("rewrite") else ""
            self.errs.add(line, col, f"hole ?{name} is used in {what} but not declared "
                          f"(declare it: `hole {name}: ...`){hint}")

    def use_metavar(self, ref_kind: str, name: str, line: int, col: int, what: str) -> None:
        shown = ("$$$" if ref_kind == "sequence" else "$") + name
        metavars, sequences = self.metavars, self.sequences
        if name == "_":
            self.errs.add(line, col, f"{shown} in {what}: the wildcard binds nothing, so it "
                          "cannot be used here")
        elif name in self.partial and name not in metavars:
            line_b, col_b = self.partial[name]
            self.errs.add(line, col, f"{shown} is used in {what} but only some branches of "
                          f"`anchor any` bind it (not the branch at {line_b}:{col_b}); "
                          "use only the metavariables every branch binds")
        elif name not in metavars:
            bound = ", ".join("$" + ("$$" if m in sequences else "") + m
                              for m in sorted(metavars)) or "none"
            self.errs.add(line, col, f"{shown} is used in {what} but the anchor never binds "
                          f"it (the anchor binds: {bound})")
        elif (ref_kind == "sequence") != (name in sequences):
            bound_as = "$$$" + name if name in sequences else "$" + name
            self.errs.add(line, col, f"{shown} is used in {what} but the anchor binds "
                          f"{bound_as}")

    def use_refs(self, text: str, position: Callable[[int], tuple[int, int]], what: str,
                 use_metavar: UseMetavar | None = None) -> None:
        """Every metavariable and hole a code text names must be bound or declared."""
        for ref in code_refs(text):
            line, col = position(ref.start)
            if ref.kind == "hole":
                self.use_hole(ref.name, line, col, what)
            else:
                (use_metavar or self.use_metavar)(ref.kind, ref.name, line, col, what)

    def check_guard(self, guard: GuardExpr, use_metavar: UseMetavar, metavar_what: str,
                    hole_what: str) -> None:
        """Known predicates, bound metavariables and declared holes in a guard."""
        for call in calls(guard):
            check_predicate(call, self.errs)
            for arg in call.args:
                if arg.kind in ("metavar", "sequence"):
                    use_metavar(arg.kind, str(arg.value), arg.line, arg.col, metavar_what)
                elif arg.kind == "hole":
                    self.use_hole(str(arg.value), arg.line, arg.col, hole_what)

    def check_anchor(self, anchor: CodeBlock, metavars: set[str], sequences: set[str],
                     dots: bool = False) -> None:
        """An anchor's metavariables (added to ``metavars``/``sequences``), and that it parses
        and the matcher can use it. ``dots``: statement dots may stand in it (a rule's own
        anchor; not a ``within`` block's)."""
        errs = self.errs
        if has_dots(anchor.text) and not dots:
            errs.add(*anchor.position(anchor.text.find("...")), "statement dots (`...`) are "
                     "not supported in a within block's anchor")
            return
        for ref in code_refs(without_dots(anchor.text)):
            line, col = anchor.position(ref.start)
            if ref.kind == "hole":
                if ref.name in self.holes:
                    errs.add(line, col, f"hole ?{ref.name} cannot be used in the anchor (holes "
                             "belong to rewrites and guards)")
                continue
            if not ref.name[0].isupper() and ref.name != "_":
                errs.add(line, col, f"metavariable ${ref.name}: metavariable names are upper "
                         f"case (${ref.name.upper()})")
                continue
            if ref.name == "_":
                continue
            if ref.kind == "sequence":
                if ref.name in metavars and ref.name not in sequences:
                    errs.add(line, col, f"$$${ref.name} is also used as ${ref.name} in the "
                             "anchor")
                sequences.add(ref.name)
            elif ref.name in sequences:
                errs.add(line, col, f"${ref.name} is also used as $$${ref.name} in the anchor")
            metavars.add(ref.name)
        if not self._check_dots(anchor, metavars):
            return
        text = anchor.text
        for ref in reversed([r for r in code_refs(text)
                             if r.kind == "hole" and r.name in self.holes]):
            text = text[:ref.start] + "$" + text[ref.start + 1:]  # already reported above
        problem = parse_problem(for_parsing(text))
        if problem is not None:
            line, col = anchor.position(problem[0])
            errs.add(line, col, f"the anchor {problem[1]}")
            return
        # the matcher compiles anchors itself: what it refuses is refused here, at load time
        check_anchor = installed().check_anchor
        assert check_anchor is not None, "klc.plugins.load() installs the matcher's check"
        try:
            check_anchor(text, where(errs.path, anchor.line, anchor.col))
        except KlcError as e:
            message = str(e).split(": ", 1)[-1]
            errs.add(*anchor.position(0), f"the anchor cannot be used as a pattern: {message}")

    def _check_dots(self, anchor: CodeBlock, metavars: set[str]) -> bool:
        """Each dots line's when clauses read, and name metavariables the anchor binds."""
        try:
            found = dots_lines(anchor.text)
        except DotsError as e:
            self.errs.add(*anchor.position(e.offset), e.message)
            return False
        ok = True
        for d in found:
            line_text = anchor.text[d.offset:d.end]
            for name in (*d.writes, *d.mentions):
                if name.startswith("$") and name[1:] not in metavars:
                    at = d.offset + line_text.find(name)
                    self.errs.add(*anchor.position(at), f"`...` when clause: {name} is not "
                                  "bound by the anchor")
                    ok = False
        return ok

    def check_anchors(self, branches: tuple[CodeBlock, ...]) -> None:
        """The anchor, or each branch of ``anchor any``: the metavariables every branch binds
        are the rule's (``metavars``); the others are remembered in ``partial``."""
        found: list[tuple[CodeBlock, set[str], set[str]]] = []
        for b in branches:
            mv: set[str] = set()
            seq: set[str] = set()
            if not b.text.strip():
                self.errs.add(b.line, b.col, "the anchor is empty")
                continue
            self.check_anchor(b, mv, seq, dots=True)
            found.append((b, mv, seq))
        if not found:
            return
        common = set.intersection(*(mv for _, mv, _ in found))
        for b, mv, seq in found:
            for name in sorted(mv & common):
                if (name in seq) != (name in found[0][2]):
                    self.errs.add(b.line, b.col, f"anchor any: ${name} is bound as a run "
                                  "($$$) in one branch and as one node in another")
        for name in sorted(set.union(*(mv for _, mv, _ in found)) - common):
            lacking = next(b for b, mv, _ in found if name not in mv)
            self.partial[name] = (lacking.line, lacking.col)
        self.metavars |= common
        self.sequences |= common & found[0][2]
        counts = {len(dots_lines(b.text)) for b, _, _ in found if self._dots_read(b.text)}
        if len(counts) > 1:
            self.errs.add(branches[0].line, branches[0].col, "anchor any: the branches have "
                          "different numbers of `...` lines")

    @staticmethod
    def _dots_read(text: str) -> bool:
        try:
            dots_lines(text)
        except DotsError:
            return False
        return True

    def check_template_dots(self, edits: tuple[Edit, ...], anchor: str) -> None:
        """A replace template writes back each of the anchor's dots (the i-th ``...`` line
        of the template is what the i-th of the anchor skipped); no other template has dots."""
        want = len(dots_lines(anchor)) if self._dots_read(anchor) else 0
        for e in edits:
            for t in e.templates():
                if not self._dots_read(t):
                    continue
                n = len(dots_lines(t))
                if e.kind == "replace" and n != want:
                    self.errs.add(e.line, e.col, f"rewrite replace: the template has {n} `...` "
                                  f"line(s) and the anchor {want}: each `...` of the anchor is "
                                  "written back by the template's `...` of the same rank (else "
                                  "what it skipped would be deleted)")
                elif e.kind != "replace" and n:
                    self.errs.add(e.line, e.col, f"rewrite {e.kind}: `...` keeps what the "
                                  "anchor's dots skipped, which only a replace template can do")
            for sub in e.subrules():
                self.check_template_dots(sub.edits, "")


def compile_spec(spec: RuleSpec, errors: Errors | None = None) -> Rule | None:
    """Step 2: check a spec and build its Rule. Problems go to ``errors`` (then None is
    returned); without ``errors``, the first problems raise RuleError."""
    installed()  # a KlcError before anything is read when no vocabulary is installed
    own = errors is None
    errs = errors if errors is not None else Errors(spec.path)
    before = len(errs.items)
    rule = _compile(spec, errs)
    if len(errs.items) > before:
        if own:
            raise RuleError(errs.messages())
        return None
    return rule


def _compile(spec: RuleSpec, errs: Errors) -> Rule:
    single = _single_fields(spec, errs)
    kind = _kind(single, errs)
    context = _context(single, errs)
    cx = CompileContext(spec, errs, holes_of([f.value for f in spec.fields
                                              if f.name == "hole"], errs))
    anchor = CodeBlock("", spec.line, spec.col, ())
    branches: tuple[CodeBlock, ...] = ()
    if "anchor" in single:
        value = single["anchor"].value
        branches = value if isinstance(value, tuple) else (value,)
        anchor = branches[0]
        cx.check_anchors(branches)
    # before the edits: a ``rewrite within`` block's sub-anchor matches with the same
    # isomorphisms as the rule's anchor
    isos_off = cx.isos_off = isos_off_of(single.get("isomorphisms"), errs)
    edits = _edits([f.value for f in spec.fields if f.name == "rewrite"], cx)
    cx.check_template_dots(edits, anchor.text)
    guard = None
    if "guard" in single:
        guard = single["guard"].value
        cx.check_guard(guard, cx.use_metavar, "the guard", "the guard")
    for line, col, message in contradictions(edits, guard, cx.holes):
        errs.add(line, col, message)
    for name, decl in cx.holes.items():
        if name not in cx.used_holes:
            errs.add(decl.line, decl.col, f"hole ?{name} is declared but never used in a "
                     "rewrite or the guard")
    metavar_kinds = metavar_kinds_of([f for f in spec.fields if f.name == "metavar"],
                                     cx.metavars, cx.sequences, errs)
    card = card_of(single["card"].value, errs) if "card" in single else Card()
    description = single["description"].value.value if "description" in single else ""
    inverse = inverse_of(single["inverse"], kind, cx.metavars, cx.sequences, errs) \
        if "inverse" in single else None
    return Rule(
        name=spec.name, kind=kind, description=description, path=spec.path, line=spec.line,
        col=spec.col, anchor=anchor.text,
        anchor_line=anchor.starts[0][0] if anchor.starts else anchor.line,
        anchor_col=anchor.starts[0][1] if anchor.starts else anchor.col,
        context=context, guard=guard, edits=edits, holes=cx.holes, card=card,
        metavars=frozenset(cx.metavars), sequence_metavars=frozenset(cx.sequences),
        inverse=inverse, metavar_kinds=metavar_kinds, isos_off=isos_off,
        anchors=tuple(b.text for b in branches) if len(branches) > 1 else (),
    )


def _single_fields(spec: RuleSpec, errs: Errors) -> dict[str, FieldSpec]:
    """The fields a rule has at most once (a second is an error), and the required ones."""
    rule_where = f"rule {spec.name}"
    single: dict[str, FieldSpec] = {}
    for f in spec.fields:
        if f.name in SINGLE_FIELDS:
            if f.name in single:
                first = single[f.name]
                errs.add(f.line, f.col, f"{rule_where}: duplicate field `{f.name}` (first at "
                         f"line {first.line}:{first.col})")
                continue
            single[f.name] = f
    for required in ("kind", "anchor"):
        if required not in single:
            errs.add(spec.line, spec.col, f"{rule_where}: missing `{required}`")
    if not any(f.name == "rewrite" for f in spec.fields):
        errs.add(spec.line, spec.col, f"{rule_where}: missing `rewrite` (at least one edit)")
    return single


def _kind(single: dict[str, FieldSpec], errs: Errors) -> str:
    if "kind" not in single:
        return ""
    tok = single["kind"].value
    kind = str(tok)
    if kind not in KINDS:
        errs.add(tok.line, tok.column, f"unknown kind {kind!r}; a rule is one of: "
                 f"{', '.join(KINDS)}")
    return kind


def _context(single: dict[str, FieldSpec], errs: Errors) -> tuple[str, ...]:
    if "context" not in single:
        return ("any",)
    toks = single["context"].value
    context = tuple(str(t) for t in toks)
    for t in toks:
        if str(t) not in CONTEXTS:
            close = difflib.get_close_matches(str(t), CONTEXTS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            errs.add(t.line, t.column, f"unknown context {str(t)!r}{hint}; contexts are: "
                     f"{', '.join(CONTEXTS)}")
    if "global" in context and "device" in context:
        errs.add(toks[0].line, toks[0].column, "context: a match cannot be inside both a "
                 "__global__ and a __device__ function")
    if len(set(context)) != len(context):
        errs.add(toks[0].line, toks[0].column, "context: a context is listed twice")
    return context


def _edits(specs: list[EditSpec], cx: CompileContext) -> tuple[Edit, ...]:
    """Each rewrite clause compiled by its kind; a kind a rule may hold once, held twice,
    is an error at the second."""
    kinds = installed().edit_kinds
    edits: list[Edit] = []
    for k, e in enumerate(specs, start=1):
        cx.index = k
        edit = kinds[e.kind].compile(e, cx)
        if edit is not None:
            edits.append(edit)
    seen: set[str] = set()
    for e in specs:
        once = kinds[e.kind].once_per_rule
        if once and e.kind in seen:
            cx.errs.add(e.line, e.col, once)
        seen.add(e.kind)
    return tuple(edits)


def parse_guard(text: str, path: str = "<guard>") -> GuardExpr:
    """A guard expression on its own (``is_restrict($X) and not in_loop``), checked against
    the predicate vocabulary: for tools and tests that evaluate guards without a rule."""
    from lark import Tree
    from lark.exceptions import UnexpectedInput

    check_call = installed().check_call
    prefix = "rule __guard__ { guard: "
    try:
        tree = grammar().parse(prefix + text + "\n}")
    except UnexpectedInput as e:
        raise syntax_error(e, prefix + text, path) from None
    fields = [f for f in tree.children[0].children[1:] if isinstance(f, Tree)]
    if len(fields) != 1 or fields[0].data != "guard_field":
        raise KlcError(f"{path}: not one guard expression: {text!r}")
    guard = guard_expr(fields[0].children[0])
    assert check_call is not None, "klc.plugins.load() installs the guards' check"
    problems = [m for c in calls(guard) for _, _, m in check_call(c)]
    if problems:
        raise KlcError(f"{path}: {'; '.join(problems)}")
    return guard

