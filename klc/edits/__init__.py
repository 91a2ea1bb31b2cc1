"""The rewriter: a match and hole values -> byte-span edits on the original text.

One file per rewrite kind: ``replace``, ``insert`` (``insert_body_start``,
``remove_statement``), ``qualifier`` (``add_qualifier``, ``remove_qualifier``),
``attribute`` (``add_attribute``, ``remove_attribute``), ``launch``, ``within``. Each holds
the kind's dataclass (a ``klc.rule.Edit``) with its compile, plan, invert, describe, print
and whether it can be grouped, and registers the kind with ``klc.rule.registry``; nothing
else switches on a kind's name. A new kind is one file here (imported below) plus its line
in ``grammar/rule.lark`` (the package imports every kind's file it holds).

Everything outside the edits stays byte for byte (``bytes``: minimal edits, never gluing two
tokens); templates are filled by ``render``; ``plan`` asks each edit of a match's rule for
its byte edits. Importing this package also gives the rule loader the guards' and the
matcher's checks (``klc.rule.registry.HOOKS``).
"""

import importlib
import pkgutil

from klc.edits.attribute import AddAttribute, RemoveAttribute
from klc.edits.base import KindEdit, Rewrite
from klc.edits.bytes import ByteEdit, apply_edits, minimal_edit
from klc.edits.insert import InsertBodyStart, RemoveStatement
from klc.edits.launch import Launch
from klc.edits.plan import plan
from klc.edits.qualifier import AddQualifier, RemoveQualifier
from klc.edits.render import render
from klc.edits.replace import Replace
from klc.edits.within import Within
from klc.guards import check_call
from klc.match import compile_pattern
from klc.rule.registry import HOOKS

HOOKS.check_call = check_call
HOOKS.check_anchor = compile_pattern

# every other module of this package is a kind's file: importing it registers the kind
_ENGINE = frozenset({"base", "bytes", "facts", "plan", "render"})
for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _ENGINE:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "AddAttribute", "AddQualifier", "ByteEdit", "InsertBodyStart", "KindEdit", "Launch",
    "RemoveAttribute", "RemoveQualifier", "RemoveStatement", "Replace", "Rewrite", "Within",
    "apply_edits", "minimal_edit", "plan", "render",
]
