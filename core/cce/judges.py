"""CCE judges: who answers the questions of a CCE method, plus the on-disk cache and call accounting.

A judge implements :class:`Judge`: ``answer(messages, schema, question) -> JudgeReply``. ``messages`` are
chat messages (what an LLM reads), ``schema`` a small JSON schema of the expected answer, ``question`` the
same question as data (what a scripted judge reads). A judge never raises for a bad answer: it retries, then
returns a reply with ``data=None`` and an ``error``, which the method records and works around.

Judges shipped here: :class:`OpenAIJudge` (any OpenAI-compatible Chat Completions endpoint, over httpx) and
:class:`ScriptedJudge` (answers from a function, a label set or a named rule; for tests and offline
studies). The grounded judge (engine facts) lives in :mod:`agentworld.core.cce.grounded`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, runtime_checkable

from .graph import JudgeCall, file_safe
from .prompts import action_names

# ---------------------------------------------------------------------------------------------------------------
# Protocol and replies


@dataclass
class JudgeReply:
    data: dict[str, Any] | None  # the parsed, shape-checked JSON answer; None when the judge failed
    tokens_in: int = 0
    tokens_out: int = 0
    attempts: int = 1
    error: str | None = None
    raw: str = ""  # the last raw text (kept in memory only, for debugging)


@runtime_checkable
class Judge(Protocol):
    name: str
    model: str
    method: str  # "paper" (the backward sweep asks this judge) or "grounded"

    def answer(self, messages: list[dict[str, str]], schema: dict[str, Any],
               question: dict[str, Any]) -> JudgeReply: ...


class JudgeConfigError(ValueError):
    """A judge that cannot be built from the given options (the message names the option and the fix)."""


# ---------------------------------------------------------------------------------------------------------------
# Tolerant JSON parsing and shape checks

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def extract_json(text: str) -> dict[str, Any]:
    """The JSON object in a model's answer: bare, in a code fence, or inside prose. Raises ValueError."""
    text = text.strip()
    candidates = [text, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for cand in candidates:
        try:
            obj = json.loads(cand)
            if isinstance(obj, dict):
                return obj
        except ValueError:
            pass
    # the first balanced {...} that parses, scanning past braces inside strings
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        depth, in_str, esc = 0, False, False
        for j in range(start, len(text)):
            ch = text[j]
            if in_str:
                if esc:
                    esc = False
                elif ch == "\\":
                    esc = True
                elif ch == '"':
                    in_str = False
                continue
            if ch == '"':
                in_str = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    try:
                        obj = json.loads(text[start:j + 1])
                    except ValueError:
                        break
                    if isinstance(obj, dict):
                        return obj
                    break
    raise ValueError(f"no JSON object in the answer: {text[:120]!r}")


def check_shape(data: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Check the parts of the answer the methods rely on; ids may be given as numbers (made strings).

    Supports the subset of JSON schema our questions use: required keys, arrays of strings, objects of
    strings or of arrays of strings, arrays of objects. Raises ValueError naming the field.
    """
    for key in schema.get("required", []):
        if key not in data:
            raise ValueError(f"answer lacks the field {key!r}")
    out = dict(data)
    for key, spec in schema.get("properties", {}).items():
        if key not in data or data[key] is None:
            if key in schema.get("required", []):
                raise ValueError(f"field {key!r} is null")
            out.pop(key, None)
            continue
        out[key] = _coerce(key, data[key], spec)
    return out


def _coerce(key: str, value: Any, spec: dict[str, Any]) -> Any:
    kind = spec.get("type")
    if kind == "string":
        if not isinstance(value, (str, int, float)):
            raise ValueError(f"field {key!r} must be a string")
        return str(value)
    if kind == "array":
        if not isinstance(value, list):
            raise ValueError(f"field {key!r} must be a list")
        item = spec.get("items", {})
        return [_coerce(f"{key}[{i}]", v, item) for i, v in enumerate(value)]
    if kind == "object":
        if not isinstance(value, dict):
            raise ValueError(f"field {key!r} must be an object")
        if "properties" in spec:
            return check_shape(value, spec)
        extra = spec.get("additionalProperties")
        if isinstance(extra, dict):
            return {str(k): _coerce(f"{key}.{k}", v, extra) for k, v in value.items()}
        return value
    return value


# ---------------------------------------------------------------------------------------------------------------
# Cache and accounting


def prompt_key(judge: str, model: str, messages: list[dict[str, str]], schema: dict[str, Any]) -> str:
    blob = json.dumps({"messages": messages, "schema": schema}, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]
    return f"{judge_file_part(judge)}/{judge_file_part(model or 'none')}/{digest}"


def judge_file_part(s: str) -> str:
    return file_safe(s)[:80] or "x"


def default_cache_dir() -> Path:
    """A cache shared across runs: $AGENTWORLD_JUDGE_CACHE, else ~/.cache/agentworld/judge."""
    return Path(os.environ.get("AGENTWORLD_JUDGE_CACHE") or Path.home() / ".cache" / "agentworld" / "judge")


class JudgeCache:
    """Answers on disk, one JSON file per key (judge/model/prompt-hash). Only good answers are stored."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        p = self._path(key)
        if not p.is_file():
            return None
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except ValueError:  # a torn write: ask again
            return None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        p = self._path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps(entry, ensure_ascii=False), encoding="utf-8")
        tmp.replace(p)  # atomic: concurrent scorers never read half a file


class Asker:
    """Asks a judge through the cache and records every question as a :class:`JudgeCall`."""

    def __init__(self, judge: Judge, cache: JudgeCache | None = None):
        self.judge = judge
        self.cache = cache
        self.calls: list[JudgeCall] = []

    def ask(self, kind: str, rounds: list[int], messages: list[dict[str, str]], schema: dict[str, Any],
            question: dict[str, Any]) -> dict[str, Any] | None:
        key = prompt_key(self.judge.name, getattr(self.judge, "model", ""), messages, schema)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.calls.append(JudgeCall(kind=kind, rounds=rounds, key=key, cached=True, ok=True,
                                            tokens_in=hit.get("tokens_in", 0), tokens_out=hit.get("tokens_out", 0),
                                            answer=hit["data"]))
                return hit["data"]
        try:
            reply = self.judge.answer(messages, schema, question)
        except Exception as exc:  # a judge plugin that raises is recorded, never allowed to crash scoring
            reply = JudgeReply(data=None, error=f"judge raised {type(exc).__name__}: {exc}")
        if reply.data is not None:
            try:
                reply.data = check_shape(reply.data, schema)
            except ValueError as exc:
                reply = JudgeReply(data=None, tokens_in=reply.tokens_in, tokens_out=reply.tokens_out,
                                   attempts=reply.attempts, error=f"answer of the wrong shape: {exc}")
        self.calls.append(JudgeCall(kind=kind, rounds=rounds, key=key, cached=False, ok=reply.data is not None,
                                    attempts=reply.attempts, tokens_in=reply.tokens_in, tokens_out=reply.tokens_out,
                                    error=reply.error, answer=reply.data))
        if reply.data is not None and self.cache is not None:
            self.cache.put(key, {"data": reply.data, "tokens_in": reply.tokens_in, "tokens_out": reply.tokens_out})
        return reply.data


# ---------------------------------------------------------------------------------------------------------------
# OpenAI-compatible judge


LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")
HOSTED_TIMEOUT_S = 120.0
LOCAL_TIMEOUT_S = 600.0  # a local CPU server can take minutes for a long sweep prompt


def is_local_url(url: str) -> bool:
    """A base URL on this machine (loopback): such servers rarely check a key and may be slow."""
    from urllib.parse import urlparse

    host = (urlparse(url).hostname or "").lower()
    return host in LOCAL_HOSTS or host.startswith("127.") or host.endswith(".localhost")


class OpenAIJudge:
    """Any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, llama.cpp, OpenRouter, a local stub).

    The API key is read from the environment variable named by ``api_key_env`` at call time: it is never
    stored in results, caches or logs; a local base URL (loopback) needs none. Temperature 0, JSON answers
    (``response_format`` json_object unless ``json_mode=False``), tolerant parsing, ``retries`` extra attempts
    with exponential backoff on network errors and HTTP 429/5xx; then a failed reply (never an exception).
    An unusable answer is asked again with the reason appended (the same prompt at temperature 0 would get
    the same answer); an answer repeated word for word ends the attempts. ``timeout_s`` defaults to 120 s
    for hosted endpoints and 600 s for local ones; ``max_tokens`` bounds each answer.
    """

    method = "paper"

    def __init__(self, model: str = "gpt-4.1", *, base_url: str = "https://api.openai.com/v1",
                 api_key_env: str | None = "OPENAI_API_KEY", name: str = "openai", timeout_s: float | None = None,
                 retries: int = 3, backoff_s: float = 1.0, json_mode: bool = True, max_tokens: int = 2048,
                 client: Any = None):
        if not model:
            raise JudgeConfigError("the openai judge needs --model (e.g. --model gpt-4.1)")
        if max_tokens < 1 or (timeout_s is not None and timeout_s <= 0):
            raise JudgeConfigError("judge options max_tokens and timeout_s must be positive")
        self.name, self.model, self.base_url = name, model, base_url.rstrip("/")
        self.api_key_env = api_key_env
        local = is_local_url(self.base_url)
        self.timeout_s = timeout_s if timeout_s is not None else (LOCAL_TIMEOUT_S if local else HOSTED_TIMEOUT_S)
        self.retries, self.backoff_s = max(0, retries), backoff_s
        self.json_mode, self.max_tokens = json_mode, max_tokens
        self._client = client
        if api_key_env and not os.environ.get(api_key_env) and not local:
            raise JudgeConfigError(f"the environment variable {api_key_env} (named by --api-key-env) is not set; "
                                   f"export it with your key (a local base URL such as http://127.0.0.1:8000/v1 "
                                   f"needs none)")

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=self.timeout_s)
        return self._client

    def answer(self, messages: list[dict[str, str]], schema: dict[str, Any],
               question: dict[str, Any]) -> JudgeReply:
        import httpx

        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body: dict[str, Any] = {"model": self.model, "messages": list(messages), "temperature": 0,
                                "max_tokens": self.max_tokens}
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        tokens_in = tokens_out = 0
        error = "no attempt made"
        raw = ""
        unusable: list[str] = []  # the unusable answers so far, word for word
        attempts = 0
        for attempt in range(self.retries + 1):
            attempts = attempt + 1
            if attempt:
                time.sleep(self.backoff_s * (2 ** (attempt - 1)))
            try:
                resp = self._http().post(f"{self.base_url}/chat/completions", json=body, headers=headers)
            except httpx.HTTPError as exc:
                error = f"{type(exc).__name__}: {exc}"
                continue
            if resp.status_code != 200:
                # the body is kept for diagnosis, with the key masked in case the server echoes it back
                body_text = resp.text[:200].replace(key, "***") if key else resp.text[:200]
                error = f"HTTP {resp.status_code}: {body_text}"
                if resp.status_code in (429,) or resp.status_code >= 500:
                    continue
                break  # 4xx other than 429: asking again will not help (bad model name, bad key)
            try:
                payload = resp.json()
                usage = payload.get("usage") or {}
                tokens_in += int(usage.get("prompt_tokens") or 0)
                tokens_out += int(usage.get("completion_tokens") or 0)
                raw = payload["choices"][0]["message"].get("content") or ""
                data = check_shape(extract_json(raw), schema)
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                error = f"unusable answer: {exc}"
                if raw in unusable:
                    error += " (the same answer again: not asked further)"
                    break
                unusable.append(raw)
                # Ask again with the reason: at temperature 0 the same prompt gets the same answer.
                body["messages"] = [*messages, {"role": "assistant", "content": raw},
                                    {"role": "user", "content": f"That answer could not be used ({exc}). Answer "
                                                                f"with one JSON object only, in the format asked."}]
                continue
            return JudgeReply(data=data, tokens_in=tokens_in, tokens_out=tokens_out, attempts=attempts, raw=raw)
        return JudgeReply(data=None, tokens_in=tokens_in, tokens_out=tokens_out, attempts=attempts,
                          error=error, raw=raw)


# ---------------------------------------------------------------------------------------------------------------
# Scripted judge


Answerer = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class ScriptedJudge:
    """Answers from ``fn(question) -> dict`` (the parsed JSON a model would have given).

    Build one from a function, from labels (:meth:`from_labels`) or from a named rule (:data:`RULES`).
    ``calls`` counts the questions it really answered (tests use it to check caching and batching).
    """

    fn: Answerer
    name: str = "scripted"
    model: str = "rules"
    method: str = "paper"
    calls: int = 0
    questions: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, messages: list[dict[str, str]], schema: dict[str, Any],
               question: dict[str, Any]) -> JudgeReply:
        self.calls += 1
        self.questions.append(question)
        data = self.fn(question)
        prompt_chars = sum(len(m.get("content", "")) for m in messages)
        return JudgeReply(data=data, tokens_in=prompt_chars // 4, tokens_out=len(json.dumps(data)) // 4)

    @classmethod
    def from_labels(cls, success: set[str] | list[str], contributing: set[str] | list[str],
                    chat_links: dict[str, list[str]] | None = None, **kw: Any) -> "ScriptedJudge":
        """A judge that knows the answer: success ids, contributing ids, chat message -> actions it led to."""
        return cls(fn=labels_answerer(set(success), set(contributing), chat_links or {}), **{"model": "labels", **kw})

    @classmethod
    def from_rule(cls, rule: str, **kw: Any) -> "ScriptedJudge":
        if rule not in RULES:
            raise JudgeConfigError(f"unknown scripted rule {rule!r}; known: {', '.join(sorted(RULES))}")
        return cls(fn=RULES[rule], **{"model": rule, **kw})


def labels_answerer(success: set[str], contributing: set[str], chat_links: dict[str, list[str]]) -> Answerer:
    def fn(q: dict[str, Any]) -> dict[str, Any]:
        cand = [c["id"] for c in q.get("candidates", [])]
        if q["kind"] == "success":
            return {"success_action_ids": [c for c in cand if c in success]}
        if q["kind"] == "round":
            return {"contributing_ids": [c for c in cand if c in contributing],
                    "not_contributing_ids": [c for c in cand if c not in contributing]}
        return {"links": [{"message_id": m["id"], "action_ids": [a for a in chat_links.get(m["id"], [])
                                                                  if a in {t["id"] for t in m["targets"]}],
                           "reason": "label"} for m in q.get("messages", [])]}
    return fn


def _touched(action: dict[str, Any]) -> set[str]:
    """Item keys, instance ids and usernames an action names (see ``prompts.action_names``)."""
    return set(action["names"] if "names" in action else action_names(action))


def message_class_rule(q: dict[str, Any]) -> dict[str, Any]:
    """The offline stand-in for an LLM: a class from the facts each message carries.

    A claim the sender's inventory contradicts is a false self claim; a message that reached nobody, or
    names a teammate it did not reach, has a wrong or missing recipient; a repeat is stale or redundant;
    anything else is ok (missing information and contradicting the plan need reading the text: an LLM).
    """
    out = []
    for m in q.get("messages", []):
        f = m.get("facts", {})
        if f.get("claims_not_held"):
            cls, why = "false_self_claim", f"sender lacks {', '.join(f['claims_not_held'])}"
        elif not f.get("delivered", True) or not m.get("recipients") or f.get("names_unreached"):
            cls, why = "wrong_or_missing_recipient", "did not reach " + (", ".join(f.get("names_unreached", []))
                                                                           or "anyone")
        elif f.get("repeats"):
            cls, why = "stale_or_redundant", f"repeats {f['repeats']}"
        else:
            cls, why = "ok", "no error the log shows"
        out.append({"message_id": m["id"], "class": cls if cls in q.get("taxonomy", {cls: ""}) else "ok",
                    "reason": why})
    return {"labels": out}


def effects_rule(q: dict[str, Any]) -> dict[str, Any]:
    """A deterministic stand-in for an LLM that reads only what a question shows.

    success: the successful actions that moved or made items (or killed) in the last round that has any;
    if none, every successful action of the final round. round: a candidate contributes when it
    succeeded and shares an item, instance or player with a later contributing action (including one of
    its own round it marked), or is a successful move of an agent with a later contributing action. chat: a message led to a target when the
    target names an item, instance or player the message mentions. comms: :func:`message_class_rule`.
    """
    if q["kind"] == "comms":
        return message_class_rule(q)
    if q["kind"] == "success":
        cands = [c for c in q.get("candidates", []) if c["ok"]]
        made = [c for c in cands if c.get("items") or c["tool"] == "attack_entity"]
        last = max((c["round"] for c in made or cands), default=0)
        return {"success_action_ids": [c["id"] for c in made or cands if c["round"] == last]}
    if q["kind"] == "round":
        # the latest step of a target naming each word, and of each agent's targets: "some later target
        # shares a word" is then one lookup per word (linear in the question, however many targets it lists)
        word_last: dict[str, int] = {}
        agent_last: dict[str, int] = {}

        def add(t: dict[str, Any], words: set[str]) -> None:
            step = t["step"]
            for w in words:
                if step > word_last.get(w, -1):
                    word_last[w] = step
            if step > agent_last.get(t["agent"], -1):
                agent_last[t["agent"]] = step

        for t in q.get("targets", []):
            add(t, _touched(t))
        yes, no = [], []
        # latest first: a candidate marked here becomes a target for earlier candidates of the same round
        for c in sorted(q.get("candidates", []), key=lambda c: -c["step"]):
            mine = _touched(c)
            shares = any(word_last.get(w, -1) > c["step"] for w in mine)
            walks = c["tool"] == "move_character" and agent_last.get(c["agent"], -1) > c["step"]
            if c["ok"] and (shares or walks):
                yes.append(c["id"])
                add(c, mine)
            else:
                no.append(c["id"])
        return {"contributing_ids": yes, "not_contributing_ids": no}
    links = []
    for m in q.get("messages", []):
        text = m.get("message", "").lower()
        hits = [t["id"] for t in m["targets"] if any(w in text for w in _touched(t) if len(w) > 2)]
        links.append({"message_id": m["id"], "action_ids": hits, "reason": "names what the action used"})
    return {"links": links}


def inclusive_rule(q: dict[str, Any]) -> dict[str, Any]:
    """Everything counts: all final-round successes are success actions, every candidate contributes (and
    every message is ok)."""
    if q["kind"] == "comms":
        return {"labels": [{"message_id": m["id"], "class": "ok", "reason": "all"} for m in q.get("messages", [])]}
    if q["kind"] == "success":
        cands = q.get("candidates", [])
        last = max((c["round"] for c in cands), default=0)
        return {"success_action_ids": [c["id"] for c in cands if c["round"] == last and c["ok"]]}
    if q["kind"] == "round":
        return {"contributing_ids": [c["id"] for c in q.get("candidates", [])], "not_contributing_ids": []}
    return {"links": [{"message_id": m["id"], "action_ids": [t["id"] for t in m["targets"]], "reason": "all"}
                      for m in q.get("messages", [])]}


def malformed_rule(q: dict[str, Any]) -> dict[str, Any]:
    """Always answers with the wrong shape (to exercise failure recording)."""
    return {"unexpected": True}


RULES: dict[str, Answerer] = {"effects": effects_rule, "inclusive": inclusive_rule, "malformed": malformed_rule}
