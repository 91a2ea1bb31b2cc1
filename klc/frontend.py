"""SHIM(issue 20): the CUDA front end moved to ``klc.cuda`` (syntax, macros, model, build,
parse); this module only forwards the old names until the final sweep rewrites the imports."""

from __future__ import annotations

from typing import Any

from klc.cuda import build, macros, model, parse, syntax  # SHIM(issue 20)

# SHIM(issue 20): old private names -> (module, new name)
_RENAMED = {
    "_sort_doc_order": (syntax, "sort_doc_order"),
    "_problem_nodes": (syntax, "problem_nodes"),
    "_line_start": (syntax, "line_start"),
    "_line_starts": (syntax, "line_starts"),
    "_point": (syntax, "point"),
    "_definitions_of": (macros, "definitions_of"),
    "_always_masks": (macros, "always_masks"),
    "_recover": (macros, "recover"),
    "_blank": (macros, "blank"),
    "_meaning": (macros, "meaning"),
    "_params": (model, "_read_params"),
    "_build_model": (build, "build_model"),
}


def __getattr__(name: str) -> Any:  # SHIM(issue 20)
    if name in _RENAMED:
        module, new = _RENAMED[name]
        return getattr(module, new)
    for module in (parse, build, model, macros, syntax):
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module 'klc.frontend' has no attribute {name!r}")
