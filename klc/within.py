"""SHIM(issue 20): ``rewrite within`` (the edit and its sub-matching) is ``klc/edits/within.py``."""

from klc.edits.within import SubResult, sub_matches, why_none, within_edits  # noqa: F401  SHIM(issue 20)
