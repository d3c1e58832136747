"""Seats: who may act as which character, and the seats file handed to external players.

A seat is one agent slot of the task. External seats get a bearer token: an MCP client that presents it in
``Authorization: Bearer <token>`` acts as that character and no other. Seats played in process (a framework
team or a scripted policy) are listed too, without a token, so a reader of the file sees the whole team.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path
from typing import Any, Iterable

from ..core.play.seats import Seat, SeatsFile, read_seats_file

__all__ = ["Seat", "SeatsFile", "read_seats_file", "new_token", "make_seats", "parse_seat_options",
           "write_seats_file", "default_seats_path"]


def new_token() -> str:
    """A fresh unguessable bearer token (not derived from the seed: tokens must not be predictable)."""
    return "aw_" + secrets.token_urlsafe(24)


def role_summary(agent: Any) -> str:
    """First line of an agent's role from the task (tasks may give ``role`` as text or a mapping)."""
    role = getattr(agent, "role", "") or ""
    if isinstance(role, dict):
        role = role.get("summary") or role.get("name") or role.get("description") or ""
    text = str(role).strip()
    return text.splitlines()[0][:200] if text else ""


def make_seats(task: Any, players: dict[str, str], url: str = "") -> list[Seat]:
    """One seat per task agent, in turn order. ``players`` maps agent_id -> "external" or a framework name
    (missing agents are external). External seats get fresh tokens."""
    agents = list(getattr(task, "agents", []) or [])
    ids = [a.agent_id for a in agents]
    unknown = sorted(set(players) - set(ids))
    if unknown:
        raise ValueError(f"--seat names unknown agent(s) {', '.join(unknown)}; task {getattr(task, 'id', '?')} "
                         f"has agents: {', '.join(ids)}")
    seats = []
    for a in agents:
        player = players.get(a.agent_id, "external")
        ext = player == "external"
        seats.append(Seat(agent_id=a.agent_id, username=a.username, role=role_summary(a), player=player,
                          url=url if ext else "", token=new_token() if ext else ""))
    return seats


def parse_seat_options(values: Iterable[str]) -> dict[str, str]:
    """``--seat agent_2=oracle`` options -> {"agent_2": "oracle"}; names the bad option and the fix."""
    out: dict[str, str] = {}
    for v in values:
        agent, sep, player = v.partition("=")
        if not sep or not agent.strip() or not player.strip():
            raise ValueError(f"--seat {v!r}: expected AGENT_ID=PLAYER, e.g. --seat agent_2=oracle "
                             f"(PLAYER: external, or a framework name such as oracle or random)")
        out[agent.strip()] = player.strip()
    return out


def write_seats_file(path: str | Path, seats: SeatsFile) -> Path:
    """Write the seats file readable only by its owner (it holds bearer tokens).

    The file is created with mode 0600 from the start (never world-readable, not even for an instant) as a
    temporary file next to ``path``, then renamed over it; a folder it creates is 0700."""
    p = Path(path)
    if not p.parent.exists():
        p.parent.mkdir(parents=True, mode=0o700)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(seats.model_dump_json(indent=2) + "\n")
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return p


def default_seats_path(task_id: str, seed: int) -> Path:
    """Where ``agentworld serve`` writes the seats file unless told (--seats): a private folder of this user,
    outside the run folder (run folders get copied and shared; the tokens must not travel with them).
    ``$XDG_RUNTIME_DIR/agentworld`` where the system has one, else ``<tmp>/agentworld-<uid>``; tokens are
    new at every start, so a folder cleared at reboot is the right home for them."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "agentworld" if runtime and Path(runtime).is_dir() else \
        Path(tempfile.gettempdir()) / f"agentworld-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    if not base.exists():
        base.mkdir(parents=True, mode=0o700, exist_ok=True)
    if hasattr(os, "getuid") and (base.stat().st_uid != os.getuid() or base.stat().st_mode & 0o077):
        raise ValueError(f"{base} is not a private folder of this user: pass --seats FILE to choose where the "
                         f"seats file (it holds the tokens) goes")
    return base / f"seats-{task_id}-s{seed}.json"
