"""SHIM(issue 20): the rewriter became the package ``klc/edits/`` (one file per rewrite kind;
``plan``, ``Rewrite``, ``ByteEdit``, ``apply_edits``, ``minimal_edit``, ``render``)."""

from klc.edits import ByteEdit, Rewrite, apply_edits, minimal_edit, plan, render  # noqa: F401  SHIM(issue 20)
from klc.edits.render import line_indent  # noqa: F401  SHIM(issue 20)
