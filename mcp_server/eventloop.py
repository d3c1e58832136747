"""The event loop MCP processes run on: uvloop (libuv, written in C) when installed, else asyncio's own.

An MCP call's cost is mostly event-loop work on both ends (tasks, futures, socket callbacks of the SDK's
anyio streams, uvicorn and httpx), and uvloop does that work for less CPU; everything that runs on asyncio
runs on it unchanged. ``AGENTWORLD_LOOP=asyncio`` keeps asyncio's loop.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Coroutine, TypeVar

T = TypeVar("T")
LOOPS = ("auto", "uvloop", "asyncio")


def loop_name(choice: str | None = None) -> str:
    """The loop ``choice`` (``auto``, ``uvloop``, ``asyncio``; default ``$AGENTWORLD_LOOP`` or ``auto``) means here."""
    choice = choice or os.environ.get("AGENTWORLD_LOOP") or "auto"
    if choice not in LOOPS:
        raise ValueError(f"unknown event loop {choice!r} (AGENTWORLD_LOOP or --loop): use one of {', '.join(LOOPS)}")
    if choice == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        if choice == "uvloop":
            raise ValueError("uvloop is not installed: pip install uvloop, or use the asyncio loop") from None
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[Any, Any, T], choice: str | None = None) -> T:
    """``asyncio.run(main)`` on the loop ``choice`` names (see :func:`loop_name`)."""
    if loop_name(choice) == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
