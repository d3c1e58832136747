"""The one rich console every command prints through.

Rich falls back to 80 columns when output is piped (a file, a CI log, ``| less``), which squeezes the
benchmark and report tables into wrapped cells. Piped output therefore gets 200 columns, unless ``$COLUMNS``
says otherwise; a terminal keeps its own width. Rich is imported on the first call: commands that print
nothing (``--json``) never pay for it.
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
    piped = not stream.isatty() and "COLUMNS" not in os.environ
    return Console(stderr=stderr, width=PIPED_WIDTH if piped else None)
