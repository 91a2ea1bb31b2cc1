"""The matcher: a compiled anchor pattern against a unit's tree -> matches with bindings.

``pattern`` compiles anchors, ``iso`` expands a pattern by the isomorphisms, ``anchor`` is a
rule's anchor as the matcher runs it (both, once per process), ``engine`` matches one
pattern node against one tree node (or a run of statements), ``specialise`` makes per-node
Python code for the common case, ``find`` walks a unit's candidates, ``model`` holds what
comes out (``Binding``, ``Match``)."""

from __future__ import annotations

from klc.match.anchor import pattern_of
from klc.match.engine import _Matcher, _significant, block_statements
from klc.match.find import find_matches, index_nodes
from klc.match.model import Binding, Match
from klc.match.pattern import Pattern, PNode, compile_pattern
from klc.match.specialise import _specialise

__all__ = ["Binding", "Match", "PNode", "Pattern", "_Matcher", "_significant", "_specialise",
           "block_statements", "compile_pattern", "find_matches", "index_nodes", "pattern_of"]
