"""Prompts as Jinja2 templates (``core/play/templates/*.j2``): the system prompt and the per-turn user prompt.

The system prompt says, per agent, what the task says (name, description, objective, the agent's guideline
document, team size, usernames, the world rules that matter); an episode keeps it as a :class:`Brief` of
plain values and renders it when a team reads it. The user prompt is rendered around the observation of a
turn. Templates are compiled once per process, and their compiled code is kept in the user cache directory
beside the built worlds (``core/world/buildcache.py``), so a fresh process skips compiling them; Jinja2 keys
each entry by the template's source checksum and its own format.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from .view import BriefRules

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

    from ..tasks.task import AgentDef, Task
    from ..world.models import Rules


@lru_cache(maxsize=1)
def _code_cache_class() -> type:
    """``TemplateCodeCache``, defined on first use: Jinja2 is imported when a prompt is first rendered, never
    by a run whose team reads no prompt (the scripted teams)."""
    import jinja2.bccache

    class TemplateCodeCache(jinja2.FileSystemBytecodeCache):
        """Jinja2's file cache of compiled templates, made harmless: an unreadable or corrupt entry is compiled
        anew, and an unwritable directory only means nothing is kept (the cache never fails a render). Jinja2
        writes each entry to a temporary file and renames it into place, so concurrent processes are safe."""

        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            try:
                super().load_bytecode(bucket)
            except Exception:  # noqa: BLE001 - truncated or foreign bytes: compile from the source instead
                bucket.reset()

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            try:
                os.makedirs(self.directory, exist_ok=True)
                super().dump_bytecode(bucket)
            except OSError:
                pass

    return TemplateCodeCache


def template_cache() -> jinja2.BytecodeCache | None:
    """Where compiled templates are kept: ``templates/`` in the world cache's directory (None when that cache
    is turned off with ``AGENTWORLD_WORLD_CACHE=0``)."""
    from ..world.buildcache import cache_dir

    root = cache_dir()
    return _code_cache_class()(str(root / "templates")) if root is not None else None


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("agentworld.core.play", "templates"),
        undefined=jinja2.StrictUndefined,  # a missing variable is a bug, not an empty string
        keep_trailing_newline=False, trim_blocks=False, lstrip_blocks=False, autoescape=False,
        bytecode_cache=template_cache())


@lru_cache(maxsize=None)
def template(name: str) -> jinja2.Template:
    return _env().get_template(name)


def guideline_document(task: "Task", agent: "AgentDef") -> str:
    """The agent's guideline: its role's own document, then the task's relevant_game_context.

    Variants that take documents or roles away (no_documentation, no_roles) clear these fields in the task
    they give the episode, so nothing here depends on the variant."""
    parts = []
    if agent.guideline.strip():
        parts.append(agent.guideline.strip())
    if task.relevant_game_context.strip():
        parts.append(task.relevant_game_context.strip())
    return "\n\n".join(parts)


def render_system(task: "Task", agent: "AgentDef", rules: "Rules", *, can_chat: bool = True,
                  shared_plan: str | None = None) -> str:
    return team_briefs(task, rules, can_chat=can_chat, shared_plan=shared_plan)[agent.agent_id].render()


@dataclass(frozen=True)
class BriefTeam:
    """What every brief of one team says alike (plain values: no task, no world), kept once for the team."""

    usernames: tuple[str, ...]  # every agent's username, in turn order
    task_name: str
    description: str
    objective: str
    secondary: tuple[str, ...]
    rules: BriefRules  # the rules the brief states (the team's view hands agents the same object)
    shared_plan: str


@dataclass(frozen=True)
class Brief:
    """One agent's system prompt, rendered when read: every prompt lists every teammate, so a team's
    rendered prompts take memory in the square of its size; these take it in proportion."""

    team: BriefTeam
    index: int  # the agent's place in ``team.usernames``
    role: str
    guideline: str
    note: str = ""  # text appended after the template (e.g. the coordinator's note of a variant)

    def render(self) -> str:
        t = self.team
        teammates = [u for i, u in enumerate(t.usernames) if i != self.index]
        return template("system.j2").render(
            username=t.usernames[self.index], team_size=len(t.usernames), teammates=teammates,
            turn_order=t.usernames,
            role=self.role, task_name=t.task_name, description=t.description, objective=t.objective,
            secondary=t.secondary, rules=t.rules, can_chat=t.rules.can_chat,
            max_action_steps=t.rules.max_action_steps, max_rounds=t.rules.max_rounds, guideline=self.guideline,
            shared_plan=t.shared_plan).strip() + "\n" + self.note


def team_briefs(task: "Task", rules: "Rules", *, can_chat: bool = True,
                shared_plan: str | None = None) -> dict[str, Brief]:
    """agent id -> its :class:`Brief` (nothing rendered yet)."""
    team = BriefTeam(usernames=tuple(a.username for a in task.agents), task_name=task.name,
                     description=task.description.strip(), objective=task.objectives.primary.strip(),
                     secondary=tuple(task.objectives.secondary), rules=BriefRules.of(rules, task, can_chat),
                     shared_plan=(shared_plan or "").strip())
    return {a.agent_id: Brief(team=team, index=i, role=a.role, guideline=guideline_document(task, a))
            for i, a in enumerate(task.agents)}


TURN_NAMES = 6  # teammates named on each side of an agent in its turn line (a crowd is counted, not listed)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def turn_order_text(names: "list[str]", pos: int, gone: "list[str] | None" = None) -> str | None:
    """Where the agent at ``pos`` of this round's turn order (``names``, the usernames of the players in play
    when the round began) acts: "you act 2nd of 3 this round; before you: lumberjack; after you: wizard", and
    who is out of the episode (``gone``: "prospector (died in round 20)"), so that a teammate who died is not
    taken for one who is silent. None for a player alone from the start."""
    n = len(names)
    out = ""
    if gone:
        shown = ", ".join(gone[:TURN_NAMES])
        out = f"; out of the episode: {shown}{f', and {len(gone) - TURN_NAMES} more' if len(gone) > TURN_NAMES else ''}"
    if n < 2:
        return f"you are the only one left in play{out}" if out else None
    text = f"you act {_ordinal(pos + 1)} of {n} this round"
    if pos:  # the nearest ones named (a crowd's line stays short: only TURN_NAMES on each side)
        shown = ", ".join(names[max(0, pos - TURN_NAMES):pos])
        text += f"; before you: {f'{pos - TURN_NAMES} more, then ' if pos > TURN_NAMES else ''}{shown}"
    if pos < n - 1:
        after = n - 1 - pos
        shown = ", ".join(names[pos + 1:pos + 1 + TURN_NAMES])
        text += f"; after you: {shown}{f', then {after - TURN_NAMES} more' if after > TURN_NAMES else ''}"
    return text + out


def render_user(observation_text: str, *, username: str, round: int, max_rounds: int) -> str:
    return template("user.j2").render(observation=observation_text, username=username, round=round,
                                      max_rounds=max_rounds).strip() + "\n"
