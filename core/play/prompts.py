"""Prompts as Jinja2 templates (``core/play/templates/*.j2``): the system prompt and the per-turn user prompt.

The system prompt is rendered once per agent per episode from the task (name, description, objective,
the agent's guideline document, team size, usernames, the world rules that matter); the user prompt is
rendered every turn around the observation. Templates are compiled once per process.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import jinja2

if TYPE_CHECKING:  # pragma: no cover
    from ..tasks.task import AgentDef, Task
    from ..world.models import Rules


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("agentworld.core.play", "templates"),
        undefined=jinja2.StrictUndefined,  # a missing variable is a bug, not an empty string
        keep_trailing_newline=False, trim_blocks=False, lstrip_blocks=False, autoescape=False)


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
    teammates = [a.username for a in task.agents if a.agent_id != agent.agent_id]
    return template("system.j2").render(
        username=agent.username, team_size=len(task.agents), teammates=teammates,
        role=agent.role, task_name=task.name, description=task.description.strip(),
        objective=task.objectives.primary.strip(), secondary=task.objectives.secondary,
        rules=rules, can_chat=can_chat, max_action_steps=task.max_action_steps, max_rounds=task.rounds,
        guideline=guideline_document(task, agent),
        shared_plan=(shared_plan or "").strip()).strip() + "\n"


def render_user(observation_text: str, *, username: str, round: int, max_rounds: int) -> str:
    return template("user.j2").render(observation=observation_text, username=username, round=round,
                                      max_rounds=max_rounds).strip() + "\n"
