"""The seats file: who plays which character of an episode served over MCP, and how to reach each seat.

``agentworld serve`` writes it (``mcp_server/seats.py``); players read it (``agentworld seat``, any MCP
client). A seat is one agent slot of the task; an external seat has the URL of the server and a bearer token
that acts as that character and no other. Seats played in process are listed without a token, so a reader
sees the whole team.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel


class Seat(BaseModel):
    agent_id: str  # the task's YAML key, e.g. "agent_1"
    username: str  # the name other players see and transfer_items takes
    role: str = ""  # one-line role summary from the task
    player: str = "external"  # "external" (an MCP client) or the in-process framework playing it
    url: str = ""  # the MCP endpoint (external seats)
    token: str = ""  # bearer token (external seats)

    @property
    def external(self) -> bool:
        return self.player == "external"


class SeatsFile(BaseModel):
    """The JSON written by ``agentworld serve --seats FILE``."""

    task_id: str
    url: str
    turn_timeout_s: float
    seats: list[Seat]

    def seat(self, agent_id: str) -> Seat:
        for s in self.seats:
            if s.agent_id == agent_id:
                return s
        known = ", ".join(s.agent_id for s in self.seats)
        raise KeyError(f"no seat {agent_id!r} in the seats file (seats: {known})")

    def find(self, name: str) -> Seat | None:
        """The seat of an agent id or a username (``agent_1`` or ``lumberjack``), or None."""
        return next((s for s in self.seats if name in (s.agent_id, s.username)), None)


def read_seats_file(path: str | Path) -> SeatsFile:
    p = Path(path)
    try:
        return SeatsFile.model_validate(json.loads(p.read_text()))
    except FileNotFoundError:
        raise FileNotFoundError(f"seats file {p} not found: start the server with `agentworld serve --task ID "
                                f"--seats {p}`") from None
    except (ValueError, json.JSONDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"seats file {p} is not a seats file written by `agentworld serve` ({first})") from None
