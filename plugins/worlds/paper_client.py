"""HTTP client of the paper's game server API (``/ai/*``, see docs/paper-server.md).

Retries the way the paper's own client did, and no further: connection errors and 5xx answers are retried
with backoff (``retries`` times), a 4xx never is. What is left after the retries is an infrastructure
problem (:class:`~agentworld.core.world.api.WorldUnavailable`), kept apart from the game's refusals
(:class:`PaperRefusal`, HTTP 400, whose ``body`` carries the server's structured details) and from a bad
token (:class:`PaperAuthError`, HTTP 401, which the backend answers by logging in again once).
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from agentworld.core.world.api import WorldUnavailable


class PaperRefusal(Exception):
    """The server refused a call (HTTP 4xx): ``message`` says why, ``body`` holds the details."""

    def __init__(self, status: int, body: dict[str, Any]):
        self.status = status
        self.body = body
        self.message = str(body.get("message") or body.get("error") or f"HTTP {status}")
        super().__init__(f"HTTP {status}: {self.message}")


class PaperAuthError(PaperRefusal):
    """HTTP 401: the token is not (or no longer) valid."""


class PaperClient:
    def __init__(self, base_url: str, *, timeout_s: float = 10.0, retries: int = 3, backoff_s: float = 1.0,
                 transport: httpx.BaseTransport | None = None):
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.backoff_s = backoff_s
        self.http = httpx.Client(base_url=self.base_url, timeout=timeout_s, transport=transport)
        self.retried = 0  # requests repeated after a 5xx or connection error (for the record)

    def close(self) -> None:
        self.http.close()

    def post(self, path: str, body: dict[str, Any] | None = None, *, retries: int | None = None) -> dict[str, Any]:
        return self._request("POST", path, retries=retries, json=body or {})

    def get(self, path: str, params: dict[str, Any]) -> dict[str, Any]:
        return self._request("GET", path, params=params)

    def _request(self, method: str, path: str, retries: int | None = None, **kwargs: Any) -> dict[str, Any]:
        last = ""
        tries = (self.retries if retries is None else retries) + 1
        for attempt in range(tries):
            if attempt:
                self.retried += 1
                time.sleep(self.backoff_s * attempt)
            try:
                resp = self.http.request(method, path, **kwargs)
            except httpx.TransportError as exc:  # refused, reset, timed out: the server may come back
                last = f"{type(exc).__name__}: {exc}"
                continue
            if resp.status_code >= 500:
                last = f"HTTP {resp.status_code}: {_body(resp).get('message', resp.text[:200])}"
                continue
            body = _body(resp)
            if resp.status_code == 401:
                raise PaperAuthError(401, body)
            if resp.status_code >= 400:
                raise PaperRefusal(resp.status_code, body)
            if body.get("status") == "error":  # a 200 that says it failed: the game refused
                raise PaperRefusal(400, body)
            return body
        raise WorldUnavailable(f"paper server {self.base_url}: {method} {path} failed after "
                               f"{tries} attempt{'s' if tries > 1 else ''} ({last}); is the server running?")


def _body(resp: httpx.Response) -> dict[str, Any]:
    try:
        data = resp.json()
    except ValueError:
        return {"message": resp.text[:200]}
    return data if isinstance(data, dict) else {"message": str(data)[:200]}
