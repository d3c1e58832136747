"""The task file's own layout, used only while a file is parsed (task.parse_task): a run of a task from the
task cache (taskcache.py) unpickles its Task and never imports this module, so these classes are not even
created then (pydantic's class creation is about 1 ms a class)."""

import re
from typing import Any

from pydantic import Field, field_validator

from ..world.events import EventSpec, HiddenSpec, JointSpec
from ..world.factories import empty_list
from .mobs import TaskMob, TaskNode
from .task_parts import Category, Objectives, Step, VerifierSpec, YamlStack, _Yaml


# a design id: the scenario a task is built from (a family's file name in tools/task_authoring/families/)
DESIGN_ID = re.compile(r"^[a-z][a-z0-9_]*$")


def snake_case(text: str) -> str:
    """``text`` as a snake_case id (the fix a bad design id is offered): "Wolf Hunt-2" -> "wolf_hunt_2"."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(text))
    out = re.sub(r"[^a-z0-9]+", "_", words.lower()).strip("_")
    return out if out[:1].isalpha() else f"design_{out}".rstrip("_")


class YamlLocation(_Yaml):
    x: int
    y: int


class YamlAgent(_Yaml):
    username: str = Field(min_length=1)
    # the paper's character password: accepted so that its files load, never used, kept or written
    password: str | None = Field(None, repr=False)
    new_character: bool = True
    location: YamlLocation
    skill_levels: dict[str, int] = Field(default_factory=dict)
    inventory_items: list[YamlStack] = Field(default_factory=empty_list)
    equipped_items: list[YamlStack] = Field(default_factory=empty_list)
    role: str = ""  # short role name shown to the agent ("lumberjack")
    guideline: str = ""  # the role's own guideline document


class YamlTaskHead(_Yaml):
    name: str = Field(min_length=1)
    description: str = ""


class YamlTask(_Yaml):
    id: str | None = None
    # the paper's id of the task this one ports (task_<digits>): the paper-format export writes it as task_id
    paper_id: str | None = Field(None, pattern=r"^task_\d+$")
    category: Category | None = None
    # the design (scenario) the task is built from; shipped tasks all name one, a user's own file may not
    design: str | None = None
    needs_communication: bool = False  # an agent needs a fact only a teammate can tell it (tasks prove checks this)
    task: YamlTaskHead
    objectives: Objectives
    relevant_game_context: str = ""
    max_action_steps: int = Field(25, ge=1)
    rounds: int = Field(55, ge=1)
    shared_plan: str | None = None
    success_criteria: list[str] = Field(default_factory=empty_list)
    world_rules: dict[str, Any] = Field(default_factory=dict)
    mobs: dict[str, TaskMob] = Field(default_factory=dict)  # moving mobs (tasks/mobs.py)
    nodes: dict[str, TaskNode] = Field(default_factory=dict)  # finite nodes (tasks/mobs.py)
    verifier: VerifierSpec | None = None
    reference_solution: dict[str, list[Step]] | None = None
    # the task's world mechanics (core/world/events.py; docs/tasks.md "Events, joint actions, hidden information")
    events: list[EventSpec] = Field(default_factory=empty_list)
    joint_actions: list[JointSpec] = Field(default_factory=empty_list)
    hidden: list[HiddenSpec] = Field(default_factory=empty_list)

    @field_validator("design")
    @classmethod
    def _design_id(cls, v: str | None) -> str | None:
        if v is not None and not DESIGN_ID.match(v):
            raise ValueError(f"design {v!r} is not a snake_case id (lower-case letters, digits and '_', starting "
                             "with a letter)")
        return v
