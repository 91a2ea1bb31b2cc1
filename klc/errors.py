"""Errors that reach the user: one clear message, no traceback, exit status 2."""

from __future__ import annotations


class KlcError(Exception):
    """A user-facing error. The message is complete (it names the file and, where there is one,
    the line:column); the CLI prints it as it is and exits with status 2."""


def shown(path: object) -> str:
    """A path (or any name from outside) as a message shows it: a control character (a
    newline, an escape sequence's ESC, a tab) or an invisible format character (a bidi
    override) in it is written as a Python escape (``\\n``, ``\\x1b``, ``\\u202e``), so a
    one-line message stays one line and nothing in a file name reaches the terminal as a
    command. A name without such characters is shown as it is."""
    text = str(path)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in text)


def _escape(c: str) -> str:
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(c)
    if named:
        return named
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"


def terminal_safe(message: str) -> str:
    """A message for the terminal: its lines kept, every other control or format character
    escaped (see ``shown``): the last guard, for text that did not pass through ``shown``."""
    if message.isprintable() or all(map(str.isprintable,
                                        message.replace("\t", " ").split("\n"))):
        return message
    return "".join(c if c.isprintable() or c in " \n\t" else _escape(c) for c in message)


def where(path: str, line: int | None = None, col: int | None = None) -> str:
    """Format a location the way compilers do: ``file:line:col`` (the path ``shown``)."""
    path = shown(path)
    if line is None:
        return path
    if col is None:
        return f"{path}:{line}"
    return f"{path}:{line}:{col}"
