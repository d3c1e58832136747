"""Model specs shared by every framework plugin (the team factories are in teams.py, re-exported here).

A model spec string is ``provider:model``:

- ``openai:gpt-4.1-mini``: the OpenAI API; the key is read from ``OPENAI_API_KEY`` (or ``api_key_env``).
- ``openai-compatible:qwen2.5-7b`` with ``base_url="http://127.0.0.1:8000/v1"``: vLLM, Ollama, llama.cpp and
  anything else that speaks Chat Completions. The key variable is optional (local servers rarely check it).
- ``scripted:oracle`` / ``scripted:random``: a scripted policy (``core/play/policies.py``) wrapped in each
  framework's own model interface, so every framework runs its real code path offline.

The API key itself is never stored in a spec, a manifest or a log: only the *name* of the environment
variable is kept, and the key is read at the moment a client is built (:meth:`ModelSpec.api_key`).

Request options (every framework applies them the same way; ``docs/models.md``): ``temperature``,
``max_tokens``, ``seed``, ``timeout`` (seconds per request), ``tool_choice`` (``auto``/``required``/``none``;
default ``required`` for the OpenAI API, as the paper forces a call, and ``auto`` for OpenAI-compatible servers,
which often support nothing else), and the history budget: ``context_budget`` in characters, or derived
from ``context_window`` (tokens; read from the server's ``/v1/models`` where it says) minus the system
prompt, the tool schemas and the answer (:meth:`ModelSpec.history_budget`).
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

# the team factories and the scripted policies' names live in teams.py (a run of a scripted team needs them,
# not ModelSpec); re-exported here, where they were first
from .teams import SCRIPTED_POLICIES
from .teams import TeamFactory as TeamFactory, TeamFactoryError as TeamFactoryError
from .teams import load_team_factory as load_team_factory, resolve_team_factory as resolve_team_factory

Provider = Literal["openai", "openai-compatible", "scripted"]
PROVIDERS: tuple[str, ...] = ("openai", "openai-compatible", "scripted")
# Short names people type for OpenAI-compatible local servers; they mean the same provider.
PROVIDER_ALIASES: dict[str, str] = {"vllm": "openai-compatible", "ollama": "openai-compatible",
                                    "llamacpp": "openai-compatible", "local": "openai-compatible"}
ToolChoice = Literal["auto", "required", "none"]
TOOL_CHOICES: tuple[str, ...] = ("auto", "required", "none")

# The history budget when neither context_budget nor a context window is known (hosted models: 100K+ tokens).
DEFAULT_CONTEXT_BUDGET = 24_000
# Characters per token of our prompts (English, JSON, coordinates), on the low side so the estimate of a
# prompt's tokens errs high: a first turn of task_01 (9,976 characters with the tool schemas) was 2,496
# prompt tokens for SmolLM2 behind llama-cpp-python (4.0 a token; other templates spell tools out more).
CHARS_PER_TOKEN = 3.0


class ModelSpecError(ValueError):
    """A model spec that cannot work; the message names the field and the fix."""


class ModelSpec(BaseModel):
    """Which model a team uses and how it is called."""

    # built on first validation: a run of a scripted team imports this module (team factories) but never
    # makes a model spec
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    provider: Provider
    model: str = Field(min_length=1)
    base_url: str | None = None  # required for openai-compatible; optional override for openai
    api_key_env: str | None = None  # NAME of the environment variable holding the key, never the key
    temperature: float | None = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(None, ge=1)
    seed: int | None = None  # passed to the model service where supported (and to scripted policies)
    tool_choice: ToolChoice | None = None  # None: the provider's default (effective_tool_choice)
    # History budget per agent, in characters of prompt text (system prompt and tools excluded). The paper's
    # prompts grew past 70 KB; old turns beyond this are folded into a one-line summary. None: derived from
    # the context window (history_budget), else DEFAULT_CONTEXT_BUDGET.
    context_budget: int | None = Field(None, ge=1_000)
    context_window: int | None = Field(None, ge=512)  # the model's context length in tokens, when known
    timeout: float = Field(60.0, gt=0)  # seconds per model request
    retries: int = Field(3, ge=0, le=20)  # extra attempts after a failed model request
    backoff: float = Field(1.0, ge=0.0)  # first retry delay in seconds; doubles each attempt
    backoff_max: float = Field(30.0, ge=0.0)

    @field_validator("api_key_env")
    @classmethod
    def _looks_like_a_name(cls, v: str | None) -> str | None:
        # Guard against a key pasted where the variable name belongs (it would end up in manifests).
        if v is not None and (not v.replace("_", "").isalnum() or v.startswith(("sk-", "sk_"))):
            raise ValueError("api_key_env takes the NAME of an environment variable (e.g. OPENAI_API_KEY), "
                             "not the key itself")
        return v

    @model_validator(mode="after")
    def _provider_needs(self) -> "ModelSpec":
        if self.provider == "openai-compatible" and not self.base_url:
            raise ValueError(f"model 'openai-compatible:{self.model}' needs a base URL: pass --base-url "
                             "http://HOST:PORT/v1 (base_url=...)")
        if self.provider == "scripted" and self.model not in SCRIPTED_POLICIES:
            raise ValueError(f"unknown scripted policy {self.model!r}; use one of "
                             f"{', '.join('scripted:' + p for p in SCRIPTED_POLICIES)}")
        return self

    # ------------------------------------------------------------------ construction

    @classmethod
    def parse(cls, text: "str | ModelSpec", **overrides: Any) -> "ModelSpec":
        """``ModelSpec.parse("openai:gpt-4.1-mini", temperature=0.2)``; ``None`` overrides are ignored.

        A ``ModelSpec`` may stand for the text: its settings, with the overrides, are validated again."""
        if isinstance(text, ModelSpec):
            fields = text.model_dump()
            text = text.label
        elif not isinstance(text, str) or ":" not in text:
            raise ModelSpecError(
                f"model spec {text!r} must be 'provider:model', e.g. 'openai:gpt-4.1-mini', "
                f"'openai-compatible:qwen2.5-7b' (with --base-url) or 'scripted:oracle'; providers: "
                f"{', '.join(PROVIDERS)}")
        else:
            provider, model = text.split(":", 1)
            provider = provider.strip().lower()
            provider = PROVIDER_ALIASES.get(provider, provider)
            if provider not in PROVIDERS:
                raise ModelSpecError(f"model spec {text!r}: unknown provider {provider!r}; use one of "
                                     f"{', '.join(PROVIDERS)} (local servers: openai-compatible with --base-url)")
            fields = {"provider": provider, "model": model.strip()}
        fields.update({k: v for k, v in overrides.items() if v is not None})
        unknown = sorted(set(fields) - set(cls.model_fields))
        if unknown:
            raise ModelSpecError(f"model spec {text!r}: unknown option(s) {', '.join(unknown)}; "
                                 f"known: {', '.join(cls.model_fields)}")
        try:
            return cls(**fields)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'spec'}: {e['msg']}" for e in exc.errors())
            raise ModelSpecError(f"model spec {text!r}: {problems}") from None

    @classmethod
    def from_team_spec(cls, team_spec: Any) -> "ModelSpec":
        """The spec a framework uses: ``TeamSpec.model`` plus model options from ``TeamSpec.options``.

        The runner passes ``--base-url``, ``--api-key-env`` and friends as options with the field names
        (``base_url``, ``api_key_env``, ``temperature``, ``max_tokens``, ``tool_choice``, ``context_budget``,
        ``context_window``, ``timeout``, ``retries``, ``backoff``); the episode seed is used when no model
        seed is given."""
        options = dict(getattr(team_spec, "options", {}) or {})
        overrides = {k: options.get(k) for k in cls.model_fields if k not in ("provider", "model")}
        if overrides.get("seed") is None:
            overrides["seed"] = getattr(team_spec, "seed", None)
        return cls.parse(team_spec.model, **overrides)

    # ------------------------------------------------------------------ use

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def is_scripted(self) -> bool:
        return self.provider == "scripted"

    def key_variable(self) -> str | None:
        if self.api_key_env:
            return self.api_key_env
        return "OPENAI_API_KEY" if self.provider == "openai" else None

    def api_key(self) -> str:
        """Read the key from the environment now. Local OpenAI-compatible servers get a dummy key."""
        var = self.key_variable()
        if var is None:
            return "none"
        key = os.environ.get(var)
        if not key:
            raise ModelSpecError(f"model {self.label}: environment variable {var} is not set; export it, or "
                                 f"name another variable with --api-key-env")
        return key

    def sampling(self) -> dict[str, Any]:
        """The request settings the user set (temperature, max_tokens, seed), in the Chat Completions names
        every framework's OpenAI client takes; unset ones are left to the provider's defaults."""
        return {k: v for k, v in (("temperature", self.temperature), ("max_tokens", self.max_tokens),
                                  ("seed", self.seed)) if v is not None}

    def effective_tool_choice(self) -> str:
        """The ``tool_choice`` sent: the user's, else ``required`` for the OpenAI API (the paper forces one
        call a turn) and ``auto`` for OpenAI-compatible servers (llama.cpp's function-calling handler accepts
        nothing else; a server that refuses a value gets the next weaker one, once, see plugins/agents/compat.py)."""
        if self.tool_choice is not None:
            return self.tool_choice
        return "auto" if self.provider == "openai-compatible" else "required"

    def history_budget(self, *, system_chars: int, tools_chars: int, window: int | None = None) -> int:
        """Characters of history an agent may keep: ``context_budget`` when given; else what the context
        window (``context_window``, or ``window`` as read from the server) leaves after the system prompt,
        the tool schemas and the answer (``max_tokens``, else a quarter of the window up to 1,024 tokens);
        else DEFAULT_CONTEXT_BUDGET."""
        if self.context_budget is not None:
            return self.context_budget
        window = self.context_window or window
        if not window:
            return DEFAULT_CONTEXT_BUDGET
        answer = self.max_tokens or min(1024, window // 4)
        framing = 100  # chat-template tokens around each message
        chars = int((window - answer - framing) * CHARS_PER_TOKEN) - system_chars - tools_chars
        return max(chars, 0)

    def redacted(self) -> dict[str, Any]:
        """For manifests and logs: every setting, the key variable's name, whether it is set, never the key."""
        out = self.model_dump()
        var = self.key_variable()
        out["api_key_env"] = var
        out["api_key_set"] = bool(var and os.environ.get(var))
        return out
