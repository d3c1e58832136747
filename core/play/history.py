"""An agent's earlier turns, as a team taking over mid-episode is handed them (``agentworld fork``).

A fork (``core/play/fork.py``) replays an episode's first rounds exactly and hands the rest to another team.
Its agents did not play those rounds, so that they continue honestly rather than start afresh, each is given
the turns it would have had: per turn, the observation it was shown (which carries the chat it received and
the result of its previous call), the call it made and the result it read back. ``Team.prime`` receives them
(``core/play/protocol.py``); the framework teams put :func:`render_history` in front of each agent's first
prompt (``plugins/agents/common.py``), within the agent's context budget.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence


@dataclass(frozen=True)
class HistoryTurn:
    """One earlier turn of one agent, as that agent saw it."""

    round: int
    observation: str  # the observation text it was shown (chat received, last result, surroundings)
    tool: str | None  # the call it made (None: no call that turn)
    call: str  # the call as text, ``tool(k=v, ...)`` ("(no call)" when there was none)
    result: str  # what it read back (the gate's answer: ok or FAILED with the reason)


TeamHistory = Mapping[str, Sequence[HistoryTurn]]  # agent id -> its earlier turns, oldest first

HEAD = ("[Earlier in this episode. You take over in round {round}: below are your own {n} earlier turn(s) as you "
        "played them: what you observed (with the chat you received), the call you made and its result.]")
FOLDED = ("[{n} earlier turn(s) left out to fit your context budget; the calls you made in them: {calls}.]")
TAIL = "[End of your earlier turns. Your turn in round {round} follows.]"


def render_turn(t: HistoryTurn) -> str:
    return f"--- Round {t.round} ---\n{t.observation.strip()}\nYour call: {t.call}\nResult: {t.result.strip()}"


def render_history(turns: Sequence[HistoryTurn], at_round: int, budget: int | None = None) -> str:
    """The agent's earlier turns as one text, newest kept whole when they do not all fit ``budget`` characters
    (the oldest are then summarised as a count of the calls made); "" when there are none."""
    if not turns:
        return ""
    blocks = [render_turn(t) for t in turns]
    kept = len(blocks)
    if budget is not None:
        room = budget - len(HEAD) - len(TAIL) - 200  # the head, the tail and the folded line
        size, kept = 0, 0
        for block in reversed(blocks):
            if size + len(block) + 2 > room:
                break
            size += len(block) + 2
            kept += 1
    parts = [HEAD.format(round=at_round, n=len(turns))]
    folded = turns[:len(turns) - kept]
    if folded:
        used = Counter(t.tool or "no call" for t in folded)
        parts.append(FOLDED.format(n=len(folded), calls=", ".join(f"{k} x{v}" for k, v in used.most_common())))
    parts += blocks[len(blocks) - kept:]
    parts.append(TAIL.format(round=at_round))
    return "\n\n".join(parts)
