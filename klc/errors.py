"""Errors that reach the user: one clear message, no traceback, exit status 2."""

from __future__ import annotations


class KlcError(Exception):
    """A user-facing error. The message is complete (it names the file and, where there is one,
    the line:column); the CLI prints it as it is and exits with status 2."""


def where(path: str, line: int | None = None, col: int | None = None) -> str:
    """Format a location the way compilers do: ``file:line:col``."""
    if line is None:
        return path
    if col is None:
        return f"{path}:{line}"
    return f"{path}:{line}:{col}"
