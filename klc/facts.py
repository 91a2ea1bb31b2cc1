"""SHIM(issue 20): the libclang facts moved to ``klc.cuda.facts`` (``Facts``,
``instantiations``) and ``klc.cuda.libclang`` (flags, loading, types); ``TypeFact`` and
``Value`` to ``klc.cuda.model``. This module only forwards the old names until the final
sweep rewrites the imports."""

from __future__ import annotations

from typing import Any

from klc.cuda import facts, libclang, model  # SHIM(issue 20)

# SHIM(issue 20): old private names -> (module, new name)
_RENAMED = {
    "_clang": (libclang, "load"),
    "_stub_text": (libclang, "stub_text"),
    "_type_fact": (libclang, "type_fact"),
    "_as_type": (libclang, "as_type"),
    "_conversion": (libclang, "conversion"),
    "_BUILTIN_SIZES": (libclang, "BUILTIN_SIZES"),
    "_BUILTIN_HEADERS": (libclang, "BUILTIN_HEADERS"),
    "_VIRTUAL": (libclang, "VIRTUAL"),
    "_CUDA_DIR": (libclang, "CUDA_DIR"),
    "_BUILTIN_DIR": (libclang, "BUILTIN_DIR"),
    "_STUB": (libclang, "STUB"),
}


def __getattr__(name: str) -> Any:  # SHIM(issue 20)
    if name in _RENAMED:
        module, new = _RENAMED[name]
        return getattr(module, new)
    for module in (facts, libclang, model):
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module 'klc.facts' has no attribute {name!r}")
