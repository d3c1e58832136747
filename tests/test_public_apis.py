"""Dependencies are used through their public APIs (DESIGN section 11, issue 30): no writes to pydantic's
private slots or modules, collector settings only in the agentworld program's entry point, and every reach
into the MCP SDK's internals in its one version-checked module (``mcp_server/transport.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [p for d in ("core", "mcp_server", "plugins") for p in (ROOT / d).rglob("*.py")]


def _offenders(pattern: str, allowed: tuple[str, ...] = ()) -> list[str]:
    found = []
    for path in SOURCES:
        rel = path.relative_to(ROOT).as_posix()
        if rel in allowed:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if re.search(pattern, code):
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


def test_the_sources_are_scanned():
    assert len(SOURCES) > 50 and any(p.name == "transport.py" for p in SOURCES)


def test_no_private_pydantic_module_or_slot_is_used():
    assert not _offenders(r"pydantic\.plugin\._loader|pydantic\._internal|from pydantic\._")
    assert not _offenders(r"__pydantic_(fields_set|extra|private|on_complete)__")


def test_the_collector_is_set_only_in_the_programs_entry_point():
    assert not _offenders(r"\bgc\.(freeze|unfreeze|set_threshold|disable|enable)\b|atexit\.register\(gc",
                          allowed=("core/cli/collector.py",))


# what reaches into the MCP SDK beyond its public API: private attributes, private modules (mcp_types' too),
# the streamable HTTP transport's and session manager's classes and constants, the server's request context
# variable (1.x), the server runner and message dispatchers (2.x)
SDK_INTERNALS = (r"\._mcp_server\b|\._session_manager\b|_server_instances|\brequest_ctx\b|from mcp[.\w]*\._|"
                 r"SessionMessage|REQUEST_STREAM_BUFFER_SIZE|StreamableHTTPSessionManager|"
                 r"StreamableHTTPServerTransport|mcp\.server\.lowlevel\.server|mcp\.server\.runner|"
                 r"mcp\.shared\.\w*dispatcher")


def test_the_mcp_sdks_internals_are_reached_only_in_the_transport_module():
    assert not _offenders(SDK_INTERNALS, allowed=("mcp_server/transport.py",))
    assert _offenders(SDK_INTERNALS)  # the pattern finds what it is for (in the transport module)


def test_the_transport_knows_the_installed_sdk_and_refuses_others_with_the_fix():
    """An SDK outside the versions agentworld was written against (1.x from 1.30, 2.x from 2.2) is refused at import
    with the installed version and the pip command (this file's import of the server fails loudly the same
    way); each known version maps to its major, which picks the server's app (app_v1 or app_v2)."""
    from agentworld.mcp_server.transport import KNOWN_SDK, SDK_MAJOR, UnknownSdk, check_sdk, sdk_version

    assert check_sdk(sdk_version()) == SDK_MAJOR in (1, 2)  # the installed one is known
    for known, major in (("1.30.0", 1), ("1.30.1.post1", 1), ("1.31", 1), ("1.99", 1), ("2.2.0", 2), ("2.3.0", 2),
                         ("2.3.1rc1", 2), ("2.99", 2)):
        assert check_sdk(known) == major, known
    for unknown in ("1.29.1", "1.24.0", "0.9.1", "2.0.0", "2.1.1", "3.0", "3.0.0a1", "10.1"):
        with pytest.raises(UnknownSdk, match=rf"mcp {re.escape(unknown)} is installed: pip install "
                                             rf"'mcp>=1\.30,!=2\.0\.\*,!=2\.1\.\*,<3'"):
            check_sdk(unknown)
    assert KNOWN_SDK == (((1, 30), (2, 0)), ((2, 2), (3, 0)))


def test_the_pip_range_is_the_packages_own_and_admits_exactly_the_known_sdks():
    """pyproject.toml's core range for mcp is the one the refusal's fix names, and it admits a version
    exactly when the gate knows it (so pip never installs an SDK the server then refuses)."""
    import tomllib

    from packaging.specifiers import SpecifierSet

    from agentworld.core.play.mcp_sdk import PIP_RANGE, UnknownSdk, check_sdk

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert [d for d in deps if d.startswith("mcp")] == [PIP_RANGE]
    spec = SpecifierSet(PIP_RANGE[len("mcp"):])
    for version in ("1.24.0", "1.29.1", "1.30.0", "1.31.2", "2.0.1", "2.1.1", "2.2.0", "2.3.0", "2.9.1", "3.0.0"):
        try:
            check_sdk(version)
            known = True
        except UnknownSdk:
            known = False
        assert (version in spec) == known, version


def test_the_server_is_built_on_the_installed_majors_public_server_api():
    """The app module of the other major is never imported (it would fail: FastMCP is gone from 2.x, the
    constructor-registered low-level Server is not in 1.x), and neither app module reaches SDK internals."""
    import sys

    from agentworld.mcp_server import server
    from agentworld.mcp_server.transport import SDK_MAJOR

    mine, other = ("app_v2", "app_v1") if SDK_MAJOR == 2 else ("app_v1", "app_v2")
    assert server.game_app.__module__ == f"agentworld.mcp_server.{mine}"
    assert f"agentworld.mcp_server.{other}" not in sys.modules
