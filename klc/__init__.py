"""klc, the kernel lineage compiler.

Learns *when* a GPU optimization is sound from expert CUDA kernels, stores that knowledge as
structural rewrite rules, and applies the rules to new kernels under a compile / verify /
profile gate. See README.md and the design notes for the data flow.
"""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    """``klc.__version__``, read from the installed distribution on first use: the package
    metadata reader costs a command that never asks (``klc list``) tens of milliseconds."""
    if name != "__version__":
        raise AttributeError(f"module 'klc' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("klc-cuda")  # the distribution (pyproject: name)
    except PackageNotFoundError:  # running from a checkout that was not installed
        found = "0.0.0+checkout"
    globals()["__version__"] = found
    return found
