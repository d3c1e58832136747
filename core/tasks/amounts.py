"""Objective against verifier on amounts: an objective that asks for an exact amount ("exactly 3 logs",
"in the amounts it asked for", "2 of the tin ore") checked by an at-least check lets a team over-deliver
instead of finding out the amount (issue 28: a no-communication team won a communication task that way).

An exact word ("exactly", "the amounts it asked for") speaks of the clause it stands in: when that clause names
the items of some checks ("exactly the bronze_bar the sword needs, and the smith forges a bronze_sword"), only
those checks are asked exactly; a clause that names no check's item ("exactly what it ordered") may mean any.

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
# where one clause of an objective ends and the next begins (a plain comma may list items: "of trout, torch")
_CLAUSE_END = re.compile(r";|\.(?=\s|$)|,\s+(?:and|but|then|while)\b")


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS.index(word)


def _item_words(item: str) -> list[str]:
    words = item.replace("_", " ")
    return [item, words, words + "s", words + "es"]


def _names(text: str, item: str) -> bool:
    return any(re.search(r"\b" + re.escape(w) + r"\b", text) for w in _item_words(item))


def _exact_words_for(objective: str, items: list[str]) -> dict[str, str]:
    """item -> the exact word that asks for it exactly: each clause's exact word covers the items the clause
    names, or every item when it names none of them."""
    said: dict[str, str] = {}
    for clause in _CLAUSE_END.split(objective):
        word = _EXACT_WORDS.search(clause)
        if word is None:
            continue
        named = [i for i in items if _names(clause, i)] or items
        for item in named:
            said.setdefault(item, f"'{word.group(0)}'")
    return said


def amount_warnings(task: "Task") -> list[Problem]:
    """One problem per at-least check of an amount the objective asks for exactly (see the module docstring)."""
    if task.verifier is None or not task.verifier.checks:
        return []
    objective = " ".join([task.objectives.primary, *task.objectives.secondary]).lower()
    if _AT_LEAST.search(objective):
        return []  # the objective itself says "at least": it and an at-least check agree
    amount_checks = [(i, spec) for i, spec in enumerate(task.verifier.checks)
                     if spec.check in EXACT_CHECKS and isinstance(spec.params.get("item"), str)]
    exact_for = _exact_words_for(objective, sorted({spec.params["item"] for _, spec in amount_checks}))
    n_of = [(_number(m.group(1)), objective[m.end():m.end() + 40]) for m in _N_OF.finditer(objective)]
    out = []
    for i, spec in amount_checks:
        p = spec.params
        if p.get("exact"):
            continue
        count = p.get("count", 1)
        item = p["item"]
        said = exact_for.get(item)
        if said is None:
            for n, after in n_of:
                if n == count and _names(after, item):
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
