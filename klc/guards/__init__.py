"""Guards: the fixed vocabulary of static predicates a rule's ``guard:`` combines, and their
evaluation.

A guard decides, before any rewrite, whether a match is a place where the rule is sound.
``registry`` says what a predicate is (its parameters and its traits: what its verdict reads;
whether it may be shared per declaration) and declares one (``@predicate``); ``table`` names
the families (``FAMILIES``) and collects their predicates (``PREDICATES``); ``evaluate``
judges a guard expression (the AST is ``klc.rule.guard``) at a match. The predicates live in
family files: ``declarations`` (what a name is, qualifiers),
``types``, ``constants``, ``writes`` (writes, aliases, const and restrict safety), ``launch``
(threads, blocks, shared memory), ``alignment``, ``loops`` (loops and the shape of code),
``lanes`` (code a rewrite hands from a thread to a warp's lanes), ``reductions`` (who reads
a block reduction's result, spare shared arrays), ``gridstride`` (whether several elements
per thread keep a kernel's results), ``gridred``, ``columns``, ``gemm``, ``regblock``,
``btranspose`` (one kind of rewrite each) and ``holes`` (relations between hole values). The
facts they read come from ``klc.analysis``.

Facts come from the tree-sitter model first: cheap, so that listing a folder of kernels stays
fast. Only where the tree cannot know (the type of an arbitrary expression, a constant hidden
behind a template or a global ``constexpr``) is libclang asked, through ``unit.facts``,
lazily. When libclang is missing the predicate fails closed, saying so.

A new predicate is one function in the family file it belongs to, declared with
``@predicate(name, *params, reads=(...))``, plus its test and its line in docs/rules.md; a new
family is one file and its name in ``table.FAMILIES``.
"""

from __future__ import annotations

from klc.guards.evaluate import evaluate, lets_through
from klc.guards.registry import (
    READS,
    ArgSpec,
    GuardContext,
    Predicate,
    Traits,
    Verdict,
    predicate,
)
from klc.guards.table import FAMILIES, PREDICATES, check_call, traits, with_trait

__all__ = ["FAMILIES", "PREDICATES", "READS", "ArgSpec", "GuardContext", "Predicate", "Traits",
           "Verdict", "check_call", "evaluate", "lets_through", "predicate", "traits",
           "with_trait"]
