"""The MCP SDK's two majors, through their public APIs only: which one is installed, whether agentworld knows
it, and the few names in which 1.x and 2.x differ for a client of the game's server.

agentworld's MCP server and clients run on the SDK 1.x (from 1.30) and 2.x (from 2.2). The server is built on
each major's own server API (``mcp_server/app_v1.py``: FastMCP; ``mcp_server/app_v2.py``: the low-level
``Server`` with its handlers passed to the constructor). A client differs only in details, gathered here:

- the HTTP client the SDK's streamable HTTP client takes: ``httpx`` on 1.x, ``httpx2`` on 2.x (:data:`http`;
  the same API under another name);
- result and tool fields: 1.x names them as on the wire (``structuredContent``, ``isError``, ``inputSchema``),
  2.x in snake_case (``structured_content`` ...): :func:`structured_content`, :func:`is_error`,
  :func:`input_schema` read either;
- the protocol error: ``McpError`` on 1.x, ``MCPError`` on 2.x (:data:`McpError`);
- a request's read timeout: a ``timedelta`` on 1.x, seconds on 2.x (:func:`read_timeout`).

An SDK outside :data:`KNOWN_SDK` is refused at import with the installed version and the fix (the server's
transport module, the one place that reads SDK internals, was written against exactly these versions).
"""

from __future__ import annotations

from datetime import timedelta
from importlib import metadata
from typing import Any

# The MCP SDK versions agentworld was written and tested against, per major: >= first, < beyond. 1.30: the
# floor pyproject.toml states (FastMCP's max_sessions, REQUEST_STREAM_BUFFER_SIZE); 2.2: the first 2.x whose
# streamable_http_app takes max_sessions (2.0 and 2.1 have no session cap: the server's limits need one).
KNOWN_SDK: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = (((1, 30), (2, 0)), ((2, 2), (3, 0)))
PIP_RANGE = "mcp>=1.30,!=2.0.*,!=2.1.*,<3"  # the union of KNOWN_SDK as pip reads it (pyproject.toml's range)


class UnknownSdk(ImportError):
    """The installed MCP SDK is not one agentworld knows (see :data:`KNOWN_SDK`)."""


def sdk_version() -> str:
    return metadata.version("mcp")


def version_tuple(version: str) -> tuple[int, int]:
    """(major, minor) of a version string; a part that does not start with a digit reads as -1."""
    parts = []
    for part in (version.split(".") + ["0"])[:2]:
        digits = "".join(c for c in part if c.isdigit()) if part[:1].isdigit() else ""
        parts.append(int(digits) if digits else -1)
    return parts[0], parts[1]


def known_ranges() -> str:
    return " or ".join(f">={a[0]}.{a[1]},<{b[0]}" + (f".{b[1]}" if b[1] else "") for a, b in KNOWN_SDK)


def check_sdk(version: str) -> int:
    """The major of ``version`` if agentworld knows that SDK; else :class:`UnknownSdk` naming it and the fix."""
    found = version_tuple(version)
    if not any(first <= found < beyond for first, beyond in KNOWN_SDK):
        raise UnknownSdk(f"agentworld's MCP server and clients run on the MCP SDK (package 'mcp') {known_ranges()}, "
                         f"and mcp {version} is installed: pip install '{PIP_RANGE}' (see docs/mcp.md, "
                         "\"Which MCP SDK\")")
    return found[0]


SDK_VERSION = sdk_version()
SDK_MAJOR = check_sdk(SDK_VERSION)

if SDK_MAJOR >= 2:
    import httpx2 as http  # noqa: F401 - the SDK 2.x client's HTTP library (httpx's API)
    from mcp.shared.exceptions import MCPError as McpError  # noqa: F401
else:
    import httpx as http  # noqa: F401
    from mcp.shared.exceptions import McpError  # noqa: F401


def _field(model: Any, wire: str, snake: str) -> Any:
    return getattr(model, snake if SDK_MAJOR >= 2 else wire)


def structured_content(result: Any) -> Any:
    """A ``CallToolResult``'s ``structuredContent`` (None when it has none)."""
    return _field(result, "structuredContent", "structured_content")


def is_error(result: Any) -> bool:
    """A ``CallToolResult``'s ``isError``."""
    return bool(_field(result, "isError", "is_error"))


def input_schema(tool: Any) -> dict[str, Any]:
    """A listed ``Tool``'s ``inputSchema``."""
    return _field(tool, "inputSchema", "input_schema")


def read_timeout(seconds: float) -> Any:
    """A per-request read timeout as this SDK's ``ClientSession`` takes it."""
    return seconds if SDK_MAJOR >= 2 else timedelta(seconds=seconds)
