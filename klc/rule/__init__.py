"""The rule model and language: ``.rule`` text -> lark tree -> spec dataclasses -> ``Rule``.

Two steps, like ast-grep's rule configs: ``syntax`` (the grammar, ``grammar/rule.lark``, and
the specs: what the file says, with line:column) and ``compile`` (with ``checks``: what the
grammar cannot know, every error with its file:line:col, all errors of a file together).
``model`` is what a rule is (``Rule``, ``Card``, ``HoleDecl``, the base ``Edit`` of the typed
rewrite clauses), ``guard`` the guard AST, ``code`` the checks of code blocks, ``printer``
the way back to text, ``ruleset`` the one loader (``RuleSet.load``).

This layer imports only the base modules and the CUDA syntax (tree-sitter, to check that code
blocks parse). What it needs from the layers above (each rewrite kind's compile, the guard
predicates' signatures, the matcher's anchor check) they register in ``registry``.
"""

from klc.rule.code import CodeRef, code_refs, parse_problem
from klc.rule.compile import CompileContext, compile_spec, parse_guard
from klc.rule.guard import (
    GuardAnd,
    GuardArg,
    GuardCall,
    GuardExpr,
    GuardNot,
    GuardOr,
    calls,
    guard_text,
)
from klc.rule.holes import HoleDecl
from klc.rule.model import (
    CARD_FIELDS,
    CONTEXTS,
    HOLE_TYPES,
    KINDS,
    METAVAR_KINDS,
    QUALIFIERS,
    TYPE_KINDS,
    VERDICTS,
    Card,
    Edit,
    Inverse,
    Rule,
    RuleError,
)
from klc.rule.paths import builtin_rule, default_libraries, default_pass_dirs, default_skill_dirs
from klc.rule.printer import rule_to_text
from klc.rule.registry import make_edit
from klc.rule.ruleset import RuleSet, load_rule_dir, load_rules, load_rules_text, select_rules
from klc.rule.syntax import CodeBlock, EditSpec, Text, grammar, parse_specs

__all__ = [
    "CARD_FIELDS",
    "CONTEXTS",
    "HOLE_TYPES",
    "KINDS",
    "METAVAR_KINDS",
    "QUALIFIERS",
    "TYPE_KINDS",
    "VERDICTS",
    "Card",
    "CodeBlock",
    "CodeRef",
    "CompileContext",
    "Edit",
    "EditSpec",
    "GuardAnd",
    "GuardArg",
    "GuardCall",
    "GuardExpr",
    "GuardNot",
    "GuardOr",
    "HoleDecl",
    "Inverse",
    "Rule",
    "RuleError",
    "RuleSet",
    "Text",
    "builtin_rule",
    "calls",
    "code_refs",
    "compile_spec",
    "default_libraries",
    "default_pass_dirs",
    "default_skill_dirs",
    "grammar",
    "guard_text",
    "load_rule_dir",
    "load_rules",
    "load_rules_text",
    "make_edit",
    "parse_guard",
    "parse_problem",
    "parse_specs",
    "rule_to_text",
    "select_rules",
]
