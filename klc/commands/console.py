"""The commands' two consoles: stdout and stderr, with no highlighting, no emoji codes
(``f.cu:100:5`` is no emoji) and lines never wrapped (a path stays whole)."""

from __future__ import annotations

from rich.console import Console

out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
