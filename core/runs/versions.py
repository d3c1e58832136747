"""The three versions a result depends on, each read from the one place that holds it:

- the harness: ``agentworld.__version__`` (``__init__.py``; the package metadata is built from it);
- the world: the embedded world's data pack version (``version:`` in ``core/world/data/world.yaml``);
- the suite: ``agentworld.tasks.SUITE_VERSION`` (the shipped task suites).

``agentworld --version`` prints them and every run's manifest records them (``environment.versions``).
"""

from __future__ import annotations

import re

from ..world.datapack import DATA_DIR

_VERSION_LINE = re.compile(r"""^version:[ \t]*(["']?)([0-9A-Za-z.+-]+)\1[ \t]*(?:#.*)?$""", re.M)


def harness_version() -> str:
    from ... import __version__

    return __version__


def world_version() -> str:
    """The embedded world's version, from its world.yaml's top-level ``version:`` line (not the data pack:
    ``--version`` and a run's manifest need the number, not the world; and a run of a cached world imports
    no YAML parser). A line this reading does not recognise is parsed as YAML instead."""
    text = (DATA_DIR / "world.yaml").read_text(encoding="utf-8")
    found = _VERSION_LINE.search(text)
    if found:
        return found.group(2)
    from ..yamlio import load_yaml

    return str(load_yaml(text, checked=False)["version"])


def suite_version() -> str:
    from ...tasks import SUITE_VERSION

    return SUITE_VERSION


def versions() -> dict[str, str]:
    return {"harness": harness_version(), "world": world_version(), "suite": suite_version()}


def version_text() -> str:
    """What ``agentworld --version`` prints: one ``name version`` line each."""
    v = versions()
    return f"agentworld {v['harness']}\nworld {v['world']}\nsuite {v['suite']}"
