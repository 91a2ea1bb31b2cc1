"""The commands' two consoles: stdout and stderr, with no highlighting, no emoji codes
(``f.cu:100:5`` is no emoji), lines never wrapped (a path stays whole), and no terminal
command in what they print.

Each is made on first use (rich takes tens of milliseconds to import: a command that prints
JSON, or nothing, never pays them)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from klc.errors import terminal_safe


@cache
def _console_class() -> type:
    from rich.console import Console
    from rich.markup import render as render_markup
    from rich.text import Text

    class SafeConsole(Console):
        """A console whose text never carries a terminal command: a control character (ESC
        of an escape sequence, a carriage return) or a bidi override in what it prints, from
        a file name or a file's text, is shown escaped (``klc.errors.terminal_safe``);
        newlines and tabs are kept. (Paths in messages go through ``klc.errors.shown``,
        which escapes newlines too.)"""

        def print(self, *objects: Any, **kw: Any) -> None:
            super().print(*(terminal_safe(o) if isinstance(o, str) else o for o in objects),
                          **kw)

        @property
        def writes_plain(self) -> bool:
            """Whether what this console prints is written as it is: no styles (no colour
            system: not a terminal), soft wrapping (a line is never broken), nothing recorded
            or held back. (A tab is still expanded: see ``print_plain``.)"""
            return not (self.color_system is not None or not self.soft_wrap or self.record
                        or self.quiet or self.is_jupyter or self._buffer_index)

        def print_plain(self, text: str) -> None:
            """Print ``text`` as text, not markup (``print(Text(text))``): where the console
            ``writes_plain`` and the text holds no tab, written at once, without rich's layout
            pass (the same bytes)."""
            text = terminal_safe(text)
            if not self.writes_plain or "\t" in text:
                self.print(Text(text))
                return
            self._write(text, lambda: self.print(Text(text)))

        def print_markup(self, markup: str) -> None:
            """``print(markup, emoji=False)``. Where that writes no styles and its layout pass
            changes nothing (``writes_plain``; only a tab would be expanded), the text rich's
            markup renderer gives is written at once: the same bytes, without the layout
            pass's cost per line."""
            if not self.writes_plain:
                self.print(markup, emoji=False)
                return
            text = render_markup(terminal_safe(markup), emoji=False).plain
            if "\t" in text:
                self.print(markup, emoji=False)
                return
            self._write(text, lambda: self.print(markup, emoji=False))

        def _write(self, text: str, fallback: Callable[[], None]) -> None:
            try:
                self.file.write(text + "\n")
                self.file.flush()
            except UnicodeEncodeError:  # rich's message for it
                fallback()
            except BrokenPipeError:
                self.on_broken_pipe()

    return SafeConsole


class _LazyConsole:
    """A ``SafeConsole`` made on the first attribute asked of it."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Any = None

    def __getattr__(self, name: str) -> Any:
        console = self._console
        if console is None:
            console = self._console = _console_class()(
                stderr=self._stderr, highlight=False, soft_wrap=True, emoji=False)
        return getattr(console, name)


out: Any = _LazyConsole(stderr=False)
err: Any = _LazyConsole(stderr=True)
