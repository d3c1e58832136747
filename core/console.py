"""The one rich console every command prints through.

Rich falls back to 80 columns when output is piped (a file, a CI log, ``| less``), which squeezes the
benchmark and report tables into wrapped cells. Piped output therefore gets at least 200 columns (more if
``$COLUMNS`` asks for more: test runners and CI wrappers export ``COLUMNS=80`` on their own); a terminal
keeps its own width. Rich is imported on the first call: commands that print nothing (``--json``) never
pay for it.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

PIPED_WIDTH = 200


def make_console(stderr: bool = False) -> "Console":
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    asked = os.environ.get("COLUMNS", "")
    console = Console(stderr=stderr, width=max(PIPED_WIDTH, int(asked) if asked.isdigit() else 0))
    if console.color_system is None:  # no styles reach a pipe (unless FORCE_COLOR): nothing to highlight
        from rich.highlighter import NullHighlighter

        console.highlighter = NullHighlighter()
    return console
