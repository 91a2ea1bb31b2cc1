"""SHIM(issue 20): rule libraries moved into ``klc.rule``: ``default_skill_dirs``,
``default_pass_dirs`` (``klc.rule.paths``), ``select_rules`` and ``load_rule_paths``
(= ``RuleSet.load(paths).rules``, ``klc.rule.ruleset``)."""

from klc.rule.paths import default_pass_dirs, default_skill_dirs  # noqa: F401  SHIM(issue 20)
from klc.rule.paths import packaged as _packaged  # noqa: F401  SHIM(issue 20)
from klc.rule.ruleset import load_rule_paths, select_rules  # noqa: F401  SHIM(issue 20)
