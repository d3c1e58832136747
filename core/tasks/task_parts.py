"""The parts of a task file that the loaded :class:`~agentworld.core.tasks.task.Task` keeps (its stacks,
objectives, verifier checks and reference steps), with the YAML's own field names. The file's other models,
used only while a file is parsed, are in task_file.py."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..world.factories import empty_list

Category = Literal["combat", "crafting", "gathering", "trading", "exploration", "survival", "construction",
                   "coordination"]


class _Yaml(BaseModel):
    # The task's models are built on first use (defer_build): a run of a cached task (taskcache.py) unpickles its
    # Task and never validates or dumps one, so neither these nor Task, AgentDef and CheckSpec are built then
    model_config = ConfigDict(extra="forbid", defer_build=True)


class YamlStack(_Yaml):
    item: str
    count: int = Field(1, ge=1)
    enchant: int = 0


class Objectives(_Yaml):
    primary: str
    secondary: list[str] = Field(default_factory=empty_list)


class CheckSpec(BaseModel):
    """One verifier check: ``check`` names a registered check, the other keys are its parameters."""

    model_config = ConfigDict(extra="allow", defer_build=True)
    check: str
    name: str | None = None
    guard: bool | None = None  # a constraint (fails the task when broken, never counts as progress); default: the check's own

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class VerifierSpec(_Yaml):
    checks: list[CheckSpec] = Field(default_factory=empty_list)
    python: str | None = None  # a registered custom verifier (plugin), evaluated after the checks
    python_args: dict[str, Any] = Field(default_factory=dict)


class Step(_Yaml):
    """One turn of the reference solution: the tool call that agent makes on its next turn."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    note: str = ""
