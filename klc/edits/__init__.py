"""The rewriter: a match and hole values -> byte-span edits on the original text.

One file per rewrite kind: ``replace``, ``insert`` (``insert_body_start``,
``remove_statement``), ``qualifier`` (``add_qualifier``, ``remove_qualifier``),
``attribute`` (``add_attribute``, ``remove_attribute``), ``launch``, ``within``. Each holds
the kind's dataclass (a ``klc.rule.Edit``) with its compile, plan, invert, describe, print
and whether it can be grouped, and names the kinds it defines in ``KINDS`` (``klc.plugins``
hands them to the rule loader); nothing else switches on a kind's name. A new kind is one
file here, its module in ``klc.plugins.EDIT_KIND_MODULES`` and its line in
``grammar/rule.lark``.

Everything outside the edits stays byte for byte (``bytes``: minimal edits, never gluing two
tokens); templates are filled by ``render``; ``plan`` asks each edit of a match's rule for
its byte edits.
"""

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

__all__ = [
    "AddAttribute", "AddQualifier", "ByteEdit", "InsertBodyStart", "KindEdit", "Launch",
    "RemoveAttribute", "RemoveQualifier", "RemoveStatement", "Replace", "Rewrite", "Within",
    "apply_edits", "minimal_edit", "plan", "render",
]
