"""The rule model: what a compiled rule is (``Rule``, its ``Card``, a simplification's
``Inverse`` block), the vocabularies of the rule language, and ``Edit``, the base of the typed
rewrite clauses.

Each rewrite kind is one small frozen dataclass that subclasses ``Edit`` and lives with its
behaviour in ``klc/edits/<kind>.py`` (compile, plan, invert, describe, print, groupable); a
rule only holds them. Nothing here reads code, matches or judges a guard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from klc.errors import KlcError
from klc.rule.code import code_refs
from klc.rule.guard import GuardExpr
from klc.rule.holes import HoleDecl

KINDS = ("simplification", "skill")
CONTEXTS = ("global", "device", "any", "loop", "kernel_scope")
HOLE_TYPES = ("int", "enum", "ident", "expr", "stmts")
QUALIFIERS = ("const", "volatile", "__restrict__", "__restrict", "restrict")
CARD_FIELDS = ("intent", "where", "conditions", "precision", "effect", "pitfalls", "provenance",
               "verdict")
# a learned skill's measured verdict (klc/reverse.py): faster somewhere, never beyond the
# noise either way, slower wherever measured ("when not" knowledge: never recommended), or
# not measured yet (a compile-only walk)
VERDICTS = ("faster", "neutral", "slower", "unmeasured")
REPEATED_CARD_FIELDS = ("effect", "pitfalls", "provenance")
SINGLE_FIELDS = ("kind", "description", "context", "anchor", "guard", "card", "inverse",
                 "isomorphisms")


class RuleError(KlcError):
    """One or more problems in rule files, each a complete ``file:line:col: message``."""

    def __init__(self, errors: list[str]):
        self.errors = tuple(errors)
        super().__init__("\n".join(self.errors))


# what ``metavar $X: KIND`` may say: the node types a kind allows (None: a type kind, checked
# by the guards on each match: ``klc.analysis.types.has_type_kind``)
METAVAR_KINDS: dict[str, frozenset[str] | None] = {
    "identifier": frozenset({"identifier"}),
    "constant": frozenset({"number_literal", "char_literal", "true", "false"}),
    "pointer": None,
    "scalar": None,
    "int_expr": None,  # an expression of integer type
    # a type specifier (``float``, ``T``, ``unsigned int``, ``half2``, ``thrust::pair<int, int>``)
    "type": frozenset({"primitive_type", "type_identifier", "sized_type_specifier",
                       "template_type", "qualified_identifier", "type_descriptor",
                       "placeholder_type_specifier"}),
}
TYPE_KINDS = frozenset(k for k, v in METAVAR_KINDS.items() if v is None)
# the isomorphisms the matcher applies (klc.match.iso, which says what each covers); a rule
# turns some off with ``isomorphisms: -NAME, ...`` (``-all``: every one)
ISOMORPHISMS = ("commutative", "comparison", "compound_assign", "increment", "braces",
                "parentheses", "max_idiom", "global_index", "early_return",
                "address_of_element", "const_local", "decl_order", "integer_bounds",
                "chain_order", "read_through", "nested_if")


@dataclass(frozen=True)
class Edit:
    """One ``rewrite`` clause. Each kind subclasses this (``klc/edits/<kind>.py``) with its
    own fields and behaviour; ``kind`` is the clause's keyword (``replace``, ``launch``, ...).
    The defaults below say what a kind that does not override them does."""

    line: int = field(default=0, compare=False, kw_only=True)
    col: int = field(default=0, compare=False, kw_only=True)

    kind: ClassVar[str] = ""  # the keyword: ``replace``, ``add_qualifier``, ``launch``, ...
    groupable: ClassVar[bool] = False  # several sites of one rule may be applied at once
    changes_launch: ClassVar[bool] = False  # it edits the host launch, not the kernel text
    leads: ClassVar[bool] = False  # its inverse comes first (the anchor swap: replace)
    # its templates are code it writes (False: code it looks for to delete, remove_statement);
    # what they declare is read by ``klc.rule.fresh``
    writes_code: ClassVar[bool] = True
    # its templates stand in the place of the matched code, writing the anchor's runs back
    # (a replace): where a template writes a metavariable, relative to the runs, is where
    # its code lands (``klc.rule.scopes``); other edits write elsewhere (a body's start, a
    # declaration, the launch)
    in_place: ClassVar[bool] = False

    def templates(self) -> tuple[str, ...]:
        """The code templates this edit writes into the kernel's code, with their
        metavariables and holes (what the execution-space check reads: a rule that writes
        ``__expf`` rewrites device code only)."""
        return ()

    def subrules(self) -> tuple[Rule, ...]:
        """Rules nested in this edit (a ``within`` block's)."""
        return ()

    def written_at(self) -> str | None:
        """The metavariable (no ``$``) whose code this edit's sub-rules rewrite in place (a
        ``within`` block's target); None for an edit that writes its own templates."""
        return None

    def holes_used(self) -> set[str]:
        """The names of the holes this edit's text uses (its templates, by default)."""
        return {r.name for t in self.templates() for r in code_refs(t) if r.kind == "hole"}

    def declaration_target(self) -> str | None:
        """The metavariable whose declaration this edit changes, when that is all it changes
        (a qualifier edit); None for an edit of the code itself."""
        return None

    def lines(self, rule: Rule) -> list[str]:
        """The clause in the rule language, indented for a rule body."""
        raise NotImplementedError

    def describe(self) -> list[str]:
        """The clause in words, for a prompt (``klc.fill.llm``)."""
        return []


@dataclass(frozen=True)
class Card:
    """What a rule means, in words. A skill learned from several lineages lists each
    measured effect, pitfall and provenance."""

    intent: str = ""
    where: str = ""
    conditions: str = ""
    effect: tuple[str, ...] = ()
    pitfalls: tuple[str, ...] = ()
    provenance: tuple[str, ...] = ()
    verdict: str = ""  # one of VERDICTS, or "" (a hand-written rule)
    # how the rewrite changes results (fast-math intrinsics: the last bits of a value), ""
    # when it keeps them exactly: such a rule is applied only under the gate, or when named
    precision: str = ""


@dataclass(frozen=True)
class Inverse:
    """A simplification's ``inverse { ... }`` block: what its inverse skill needs beyond the
    mechanical swap (klc/reverse.py): a name, a skill file, a description, the forward-only
    conditions (``guard``, conjoined with the pass guards that still hold on the skill's
    anchor), and hole declarations for values the simplification erases (named after the
    metavariable, lower case: ``$$$THREADS`` -> ``hole threads``)."""

    name: str = ""
    description: str = ""
    guard: GuardExpr | None = None
    holes: dict[str, HoleDecl] = field(default_factory=dict)
    family: str = ""  # the skill file (skills/<family>.rule); default: the pass file's stem
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Rule:
    """A compiled rule: what the matcher, the guards and the rewriter run."""

    name: str
    kind: str
    description: str
    path: str = field(compare=False)
    line: int = field(compare=False)
    col: int = field(compare=False)
    anchor: str
    anchor_line: int = field(compare=False)
    anchor_col: int = field(compare=False)
    context: tuple[str, ...]
    guard: GuardExpr | None
    edits: tuple[Edit, ...]
    holes: dict[str, HoleDecl]
    card: Card
    metavars: frozenset[str]  # bound by the anchor, without "$" ($_ binds nothing)
    sequence_metavars: frozenset[str] = frozenset()  # those written $$$X
    inverse: Inverse | None = None  # a simplification's inverse block
    # ``metavar $X: identifier`` lines: (name without "$", kind), sorted by name
    metavar_kinds: tuple[tuple[str, str], ...] = ()
    # ``isomorphisms: -commutative, ...``: the isomorphisms this rule's anchors do without
    isos_off: tuple[str, ...] = ()
    # ``anchor any { ... }``: every branch (``anchor`` is the first), () for one anchor; a
    # match of any branch is a match, binding the metavariables common to all (``metavars``)
    anchors: tuple[str, ...] = ()

    def __hash__(self) -> int:  # holes is a dict: hash what identifies a rule
        return hash((self.name, self.kind, self.anchor))

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def changes_launch(self) -> bool:
        """Whether a rewrite edits the host launch (``rewrite launch``), not only the
        kernel's text."""
        return any(e.changes_launch for e in self.edits)

