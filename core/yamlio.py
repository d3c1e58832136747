"""YAML reading shared by the world data pack, task files and run specs.

libyaml's C loader is about five times faster than the pure-Python one (a task file: ~10 ms instead of
~50 ms); it is used wherever PyYAML was built with it.
"""

from __future__ import annotations

from typing import Any

import yaml

YAML_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """Parse YAML safely (no arbitrary objects). Raises ``yaml.YAMLError`` with line/column marks."""
    return yaml.load(text, Loader=YAML_LOADER)
