"""Objective against verifier on amounts: an objective that asks for an exact amount ("exactly 3 logs",
"in the amounts it asked for", "2 of the tin ore") checked by an at-least check lets a team over-deliver
instead of finding out the amount (issue 28: a no-communication team won a communication task that way).

``amount_warnings(task)`` lists each such check. ``agentworld tasks validate`` prints them as warnings
(``--strict`` makes them errors). The fix is ``exact: true`` on the check (``item_count``, ``crafted``,
``delivered``: plugins/verifiers/checks.py) or an objective that says "at least".
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .problems import Problem

if TYPE_CHECKING:  # pragma: no cover
    from .task import Task

EXACT_CHECKS = ("item_count", "crafted", "delivered")  # the checks that take exact: true
_NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
                 "twenty"]
# words that make every amount in the objective exact
_EXACT_WORDS = re.compile(r"\b(?:exactly|precisely|no more(?: and no (?:less|fewer))?|amounts? (?:\w+ ){0,2}ask(?:ed|s)"
                          r"|amounts? (?:\w+ ){0,2}(?:ordered|wanted|named))\b")
# "N of" an item: that amount of it
_N_OF = re.compile(r"\b(\d+|" + "|".join(_NUMBER_WORDS) + r") of\b")
_AT_LEAST = re.compile(r"\b(?:at least|or more|no fewer|no less|a minimum of)\b")


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS.index(word)


def _item_words(item: str) -> list[str]:
    words = item.replace("_", " ")
    return [item, words, words + "s", words + "es"]


def amount_warnings(task: "Task") -> list[Problem]:
    """One problem per at-least check of an amount the objective asks for exactly (see the module docstring)."""
    if task.verifier is None or not task.verifier.checks:
        return []
    objective = " ".join([task.objectives.primary, *task.objectives.secondary]).lower()
    if _AT_LEAST.search(objective):
        return []  # the objective itself says "at least": it and an at-least check agree
    every = _EXACT_WORDS.search(objective)
    n_of = [(_number(m.group(1)), objective[m.end():m.end() + 40]) for m in _N_OF.finditer(objective)]
    out = []
    for i, spec in enumerate(task.verifier.checks):
        p = spec.params
        if spec.check not in EXACT_CHECKS or p.get("exact") or not isinstance(p.get("item"), str):
            continue
        count = p.get("count", 1)
        item = p["item"]
        said = None
        if every:
            said = f"'{every.group(0)}'"
        else:
            for n, after in n_of:
                if n == count and any(re.search(r"\b" + re.escape(w) + r"\b", after) for w in _item_words(item)):
                    said = f"'{n} of ... {item.replace('_', ' ')}'"
                    break
        if said is None:
            continue
        name = spec.name or spec.check
        out.append(Problem(f"verifier.checks[{i}]", (
            f"the objective asks for an exact amount ({said}), but check '{name}' ({spec.check} {count} {item}) "
            f"passes at {count} or more: a team can over-deliver instead of finding out the amount"),
            "add exact: true to the check, or say 'at least' in the objective"))
    return out
