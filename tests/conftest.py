"""Shared test configuration: async tests run on anyio's pytest plugin (asyncio backend); ``build`` is the
task-authoring tool (tools/task_authoring/build.py) loaded as a module."""

import importlib.util
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools" / "task_authoring"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def build():
    sys.path.insert(0, str(TOOLS))
    try:
        spec = importlib.util.spec_from_file_location("task_authoring_build", TOOLS / "build.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(TOOLS))
