"""Guards: the fixed vocabulary of static predicates a rule's ``guard:`` combines, and their
evaluation.

A guard decides, before any rewrite, whether a match is a place where the rule is sound.
``registry`` holds the predicates, each registered with its parameters and its traits (what
its verdict reads; whether it may be shared per declaration); ``evaluate`` judges a guard
expression (the AST is ``klc.rule.guard``) at a match. The predicates live in family files,
each registering itself when imported here: ``declarations`` (what a name is, qualifiers),
``types``, ``constants``, ``writes`` (writes, aliases, const and restrict safety), ``launch``
(threads, blocks, shared memory), ``alignment``, ``loops`` (loops and the shape of code) and
``holes`` (relations between hole values). The facts they read come from ``klc.analysis``.

Facts come from the tree-sitter model first: cheap, so that listing a folder of kernels stays
fast. Only where the tree cannot know (the type of an arbitrary expression, a constant hidden
behind a template or a global ``constexpr``) is libclang asked, through ``unit.facts``,
lazily. When libclang is missing the predicate fails closed, saying so.

A new predicate is one function in the family file it belongs to, registered with
``@predicate(name, *params, reads=(...))``, plus its test and its line in docs/rules.md.
"""

from __future__ import annotations

from typing import Any

from klc.guards import (  # noqa: F401  (each family registers its predicates when imported)
    alignment,
    constants,
    declarations,
    holes,
    launch,
    loops,
    types,
    writes,
)
from klc.guards.evaluate import evaluate
from klc.guards.registry import (
    PREDICATES,
    READS,
    ArgSpec,
    GuardContext,
    Predicate,
    Traits,
    Verdict,
    check_call,
    predicate,
    traits,
    with_trait,
)

__all__ = ["PREDICATES", "READS", "ArgSpec", "GuardContext", "Predicate", "Traits", "Verdict",
           "check_call", "evaluate", "predicate", "traits", "with_trait"]


# SHIM(issue 20): the names klc/guards.py held, served from their new modules until the final
# sweep rewrites every import of them (the four side tables are now derived from the traits)
_SHIM_TABLES = {  # SHIM(issue 20)
    "DECLARATION_PREDICATES": lambda t: t.per_declaration,  # SHIM(issue 20)
    "LAYOUT_PREDICATES": lambda t: t.reads_layout,  # SHIM(issue 20)
    "READS_RULE": lambda t: t.reads_rule,  # SHIM(issue 20)
    "HOLE_RELATIONS": lambda t: t.hole_relation,  # SHIM(issue 20)
    "PASS_ONLY_PREDICATES": lambda t: t.pass_only,  # SHIM(issue 20)
}  # SHIM(issue 20)
_SHIM_MODULES = (  # SHIM(issue 20)
    "klc.rule.guard", "klc.guards.registry", "klc.guards.evaluate",  # SHIM(issue 20)
    "klc.analysis.tree",  # SHIM(issue 20)
    "klc.analysis.declarations", "klc.analysis.writes", "klc.analysis.types",  # SHIM(issue 20)
    "klc.analysis.constants", "klc.analysis.launch", "klc.analysis.loops",  # SHIM(issue 20)
    "klc.analysis.alignment", "klc.guards.declarations", "klc.guards.types",  # SHIM(issue 20)
    "klc.guards.constants", "klc.guards.writes", "klc.guards.launch",  # SHIM(issue 20)
    "klc.guards.alignment", "klc.guards.loops", "klc.guards.holes",  # SHIM(issue 20)
)  # SHIM(issue 20)


def __getattr__(name: str) -> Any:  # SHIM(issue 20)
    import importlib  # SHIM(issue 20)

    if name in _SHIM_TABLES:  # SHIM(issue 20)
        return with_trait(_SHIM_TABLES[name])  # SHIM(issue 20)
    for module in _SHIM_MODULES:  # SHIM(issue 20)
        found = getattr(importlib.import_module(module), name, _SHIM_MISSING)  # SHIM(issue 20)
        if found is not _SHIM_MISSING:  # SHIM(issue 20)
            return found  # SHIM(issue 20)
    raise AttributeError(f"module 'klc.guards' has no attribute {name!r}")  # SHIM(issue 20)


_SHIM_MISSING = object()  # SHIM(issue 20)
