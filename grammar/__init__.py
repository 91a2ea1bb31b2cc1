"""The lark grammar of the rule language (``rule.lark``), installed as package data.

A regular package (this file) so that ``importlib.resources.files("klc.grammar")`` works both
in an editable install, whose finder maps ``klc.grammar`` to this folder only when it holds an
``__init__.py``, and in a wheel.
"""
