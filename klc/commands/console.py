"""The commands' two consoles: stdout and stderr, with no highlighting, no emoji codes
(``f.cu:100:5`` is no emoji), lines never wrapped (a path stays whole), and no terminal
command in what they print."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from klc.errors import terminal_safe


class SafeConsole(Console):
    """A console whose text never carries a terminal command: a control character (ESC of an
    escape sequence, a carriage return) or a bidi override in what it prints, from a file
    name or a file's text, is shown escaped (``klc.errors.terminal_safe``); newlines and tabs
    are kept. (Paths in messages go through ``klc.errors.shown``, which escapes newlines
    too.)"""

    def print(self, *objects: Any, **kw: Any) -> None:
        super().print(*(terminal_safe(o) if isinstance(o, str) else o for o in objects), **kw)


out = SafeConsole(highlight=False, soft_wrap=True, emoji=False)
err = SafeConsole(stderr=True, highlight=False, soft_wrap=True, emoji=False)
