"""Registers the embedded world under the name ``embedded`` (the default world backend)."""

from __future__ import annotations

from typing import Any

from ..hookspecs import hookimpl


def make_embedded_world(rules_overrides: dict | None = None, *, seed: int = 0, loaded: Any = None,
                        mechanics: Any = None):
    """factory(rules_overrides) -> World, as ``register_worlds`` expects; ``seed``, ``loaded`` and the task's
    ``mechanics`` (core/world/events.py) are optional."""
    from .engine import EmbeddedWorld

    return EmbeddedWorld(loaded, seed=seed, rules=rules_overrides, mechanics=mechanics)


@hookimpl
def register_worlds(register):
    register("embedded", make_embedded_world,
             description="Built-in deterministic 2D RPG world (pure Python, in process, data pack in core/world/data)")
