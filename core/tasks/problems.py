"""A task file's problems: each names the field as written, what is wrong and how to fix it (task.py and the
mechanics checks report them; ``TaskError`` lists them all)."""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One problem of a task file: the field as written, what is wrong, and how to fix it."""

    field: str  # e.g. "agent_2.inventory_items[1].item"
    message: str  # what is wrong
    fix: str = ""  # how to fix it

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" + (f" (fix: {self.fix})" if self.fix else "")


class TaskError(ValueError):
    """A task file that cannot be used; ``problems`` lists every problem found, each with field and fix."""

    def __init__(self, file: str, problems: list[Problem]):
        self.file = file
        self.problems = problems
        lines = [f"{file}: {len(problems)} problem{'s' if len(problems) != 1 else ''}"]
        lines += [f"  - {p}" for p in problems]
        super().__init__("\n".join(lines))


def did_you_mean(word: str, choices: Any, what: str) -> str:
    """A fix hint: ``did you mean 'stick'?`` or a short list of what exists."""
    import difflib  # for error messages only: not imported by a run that has none

    choices = sorted(set(choices))
    close = difflib.get_close_matches(str(word), choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    shown = ", ".join(choices[:12]) + (", ..." if len(choices) > 12 else "")
    return f"use a known {what}: {shown}"


def excerpt(value: Any, limit: int = 60) -> str:
    """A short repr of a bad value for an error message (a hostile file's value can be megabytes)."""
    text = repr(value) if not isinstance(value, (dict, list)) else _shallow_repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shallow_repr(value: Any) -> str:
    # repr() of a nested value walks all of it (an alias bomb is gigabytes once expanded): show one level
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: ..." for k in list(value)[:4]) + (", ..." if len(value) > 4 else "") + "}"
    return f"[{len(value)} items]"
