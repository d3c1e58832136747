"""Which team plays: a framework plugin by name or a user's ``--team-factory module:function``, and the names of
the scripted policies (``scripted:oracle``). Apart from models.py (ModelSpec) so that a run of a scripted team,
which never makes a model spec, does not create that class."""

from __future__ import annotations

import importlib
from typing import Any, Callable

SCRIPTED_POLICIES: tuple[str, ...] = ("oracle", "random", "idle")

TeamFactory = Callable[[Any], Any]  # factory(TeamSpec) -> Team


class TeamFactoryError(ValueError):
    """``--team-factory`` names something that cannot be loaded or called."""


def load_team_factory(ref: str) -> TeamFactory:
    """Load ``"package.module:function"`` (``module:Class.method`` also works) as a team factory."""
    if not isinstance(ref, str) or ref.count(":") != 1 or not all(ref.split(":")):
        raise TeamFactoryError(f"--team-factory {ref!r}: expected 'module:function', e.g. 'my_team.graph:make_team'")
    module_name, attr_path = ref.split(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise TeamFactoryError(f"--team-factory {ref!r}: cannot import module {module_name!r} ({exc}); is it "
                               "installed or on PYTHONPATH?") from None
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            raise TeamFactoryError(f"--team-factory {ref!r}: {module_name} has no attribute {attr_path!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TeamFactoryError(f"--team-factory {ref!r}: {attr_path} is not callable; it must take a TeamSpec "
                               "and return a Team")
    return obj


def resolve_team_factory(framework: str | None, team_factory: str | None = None) -> TeamFactory:
    """The factory the runner calls with a TeamSpec: a user's ``--team-factory`` wins over ``--framework``."""
    if team_factory:
        return load_team_factory(team_factory)
    if not framework:
        raise TeamFactoryError("give --framework NAME (see `agentworld plugins`) or --team-factory module:function")
    from .. import plugins

    return plugins.get("framework", framework)
