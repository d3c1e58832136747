"""Registers the ``paper-server`` world backend (a client of the paper's game server, docs/paper-server.md).

``--world paper-server --server-url URL`` on ``run``, ``serve`` and ``tasks validate`` selects it. The
factory takes the task's world rule overrides and the backend's options (``PaperOptions``); its
``validate_task`` checks what only the server can tell: which item keys, skills and spawns it accepts.
"""

from __future__ import annotations

import secrets
from typing import Any

from pydantic import ValidationError

from agentworld.core.hookspecs import hookimpl


def _options(server_url: str | None, options: dict[str, Any]) -> Any:
    from .paper_world import PaperOptions

    if not server_url:
        raise ValueError("the paper-server world needs the server's address: --server-url http://HOST:PORT "
                         "(the paper's default was http://localhost:7031)")
    try:
        return PaperOptions(server_url=server_url, **options)
    except ValidationError as exc:
        bad = "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors())
        known = ", ".join(k for k in PaperOptions.model_fields if k != "server_url")
        raise ValueError(f"paper-server world option(s): {bad} (known options: {known})") from None


def make_paper_world(rules_overrides: dict | None = None, *, seed: int = 0, server_url: str | None = None,
                     **options: Any):
    """factory(rules_overrides, server_url=..., **PaperOptions) -> PaperServerWorld. ``seed`` is unused: the
    server's world is real-time and not seeded by us."""
    from .paper_world import PaperServerWorld

    return PaperServerWorld(_options(server_url, options), rules_overrides)


def validate_task(task: Any, *, server_url: str | None = None, **options: Any) -> list[Any]:
    """Problems the server reports for the task's agents (unknown items or skills, refused spawns), found by
    setting up a scratch character per agent; plus the task's own structure (rules, checks, plan tools)."""
    from agentworld.core.tasks.task import Problem, structure_problems
    from agentworld.core.world.api import WorldUnavailable

    problems: list[Any] = list(structure_problems(task))
    world = make_paper_world(dict(task.world_rules) if not problems else None, server_url=server_url,
                             **{**options, "prefix": f"awv{secrets.token_hex(3)}_"})
    try:
        for a in task.agents:
            try:
                world.add_player(a.player_spec())
            except ValueError as exc:
                text = str(exc).removeprefix(f"player {a.agent_id}: ").removeprefix("the server refused its setup: ")
                for part in text.split("; "):
                    problems.append(Problem(a.agent_id, part, "use the server's item keys, skill names and a "
                                                              "spawn on its map"))
    except WorldUnavailable as exc:
        problems.append(Problem("(server)", str(exc), "start the server or fix --server-url"))
    finally:
        world.close()
    return problems


make_paper_world.validate_task = validate_task  # type: ignore[attr-defined]


@hookimpl
def register_worlds(register):
    register("paper-server", make_paper_world,
             description="Client of a running paper game server's /ai/* API (--server-url); for users licensed to run it")
