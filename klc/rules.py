"""SHIM(issue 20): ``klc/rules.py`` became the package ``klc/rule/`` (model, syntax, checks,
compile, printer, ruleset). Old imports keep working until the final sweep rewrites them:
``Edit(kind, **fields)`` is ``klc.rule.make_edit``; ``load_rule_dir`` and
``check_rule_paths`` are ``klc.rule.RuleSet.load``; every other name is served from the
module of klc/rule that holds it now."""

from __future__ import annotations

import importlib
from typing import Any

from klc.rule import *  # noqa: F403  SHIM(issue 20)
from klc.rule import make_edit as Edit  # noqa: F401  SHIM(issue 20)
from klc.rule.ruleset import check_rule_paths  # noqa: F401  SHIM(issue 20)

_MODULES = ("model", "syntax", "compile", "checks", "code", "holes", "printer", "ruleset",
            "paths", "registry", "guard")  # SHIM(issue 20)


def __getattr__(name: str) -> Any:  # SHIM(issue 20)
    for module in _MODULES:
        mod = importlib.import_module(f"klc.rule.{module}")
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module 'klc.rules' has no attribute {name!r}")
