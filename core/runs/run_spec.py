"""The run spec: what `agentworld run` runs, from CLI flags or a YAML file.

A spec selects tasks (ids, a suite, categories, a team-size range), and a grid of frameworks x models x
variants x trials. Every episode of the grid has a deterministic id built from (task, framework, model,
variant, seed), so that ``--resume`` can tell which episodes of a run are already done.

Secrets never live in a spec: an API key is named by the environment variable that holds it
(``api_key_env``); a spec that carries a literal key is refused.
"""

import hashlib
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..world.factories import empty_list

# Frameworks that need no model: their teams are scripted.
SCRIPTED_FRAMEWORKS = ("oracle", "random", "idle")
DEFAULT_LLM_MODEL = "scripted:oracle"

_SECRET_KEY_NAMES = re.compile(r"(api[_-]?key|secret|token|password)$", re.IGNORECASE)


class RunSpecError(ValueError):
    """A run spec (file or flags) that cannot run; the message names the field and the fix."""


class RunSpec(BaseModel):
    """Everything a run needs. Field names are the YAML keys of a spec file."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, description="Run name; the run folder is runs/<name or generated id>.")
    # --- task selection (union of ids and suite, then filtered by category and team size) ---
    tasks: list[str] = Field(default_factory=empty_list, description="Task ids or task YAML paths.")
    suite: Literal["main", "augmented"] | None = None
    categories: list[str] = Field(default_factory=empty_list)
    agents: str | None = Field(None, description="Team-size range like '10-20', '5', '10-' or '-8'.")
    # --- the grid ---
    frameworks: list[str] = Field(default_factory=lambda: ["oracle"])
    models: list[str] = Field(default_factory=empty_list, description="Model specs; empty = none for scripted frameworks.")
    variants: list[str] = Field(default_factory=lambda: ["vanilla"])
    trials: int = Field(1, ge=1)
    seed: int = Field(0, description="Trial k runs with seed + k (unless `seeds` lists them).")
    seeds: list[int] | None = None
    # --- how the team is built ---
    base_url: str | None = None
    api_key_env: str | None = Field(None, description="Name of the environment variable holding the API key.")
    tools: Literal["inproc", "mcp"] = "inproc"
    team_factory: str | None = Field(None, description="'module:function' building a Team from a TeamSpec.")
    options: dict[str, Any] = Field(default_factory=dict, description="Extra framework options (TeamSpec.options).")
    obs_format: str = "text"
    turn_timeout: float | None = None
    # --- the world ---
    world: str = Field("embedded", description="World backend: embedded, or paper-server (docs/paper-server.md).")
    world_options: dict[str, Any] = Field(default_factory=dict,
                                          description="Options of the world backend: server_url, poll_s, ...")
    # --- scoring ---
    cce_judge: str | None = Field(None, description="Judge that writes cce.json after each episode (e.g. grounded).")
    cce_options: dict[str, Any] = Field(default_factory=dict, description="Judge options: model, base_url, ...")
    # --- execution ---
    concurrency: int = Field(4, ge=1)
    rate_limits: dict[str, float] = Field(
        default_factory=dict, description="Per-provider limit on model turns per second, e.g. {openai: 5}.")
    provider_concurrency: dict[str, int] = Field(
        default_factory=dict, description="Per-provider limit on episodes running at once.")
    max_tokens_total: int | None = Field(None, ge=1)
    max_cost: float | None = Field(None, gt=0)
    prices: dict[str, list[float]] = Field(
        default_factory=dict, description="USD per million tokens [input, output] per model spec (for cost).")
    executor: Literal["local", "dask"] = "local"
    dask_workers: int = Field(2, ge=1)
    dask_scheduler: str | None = Field(None, description="Address of an existing Dask scheduler (tcp://host:port).")
    max_attempts: int = Field(3, ge=1, description="An episode that errors the same way this many times is marked "
                                                 "failed for good and no longer retried by --resume.")

    @field_validator("agents")
    @classmethod
    def _check_agents(cls, v: str | None) -> str | None:
        if v is not None:
            parse_size_range(v)
        return v

    @field_validator("team_factory")
    @classmethod
    def _check_factory(cls, v: str | None) -> str | None:
        if v is not None and (v.count(":") != 1 or not all(v.split(":"))):
            raise ValueError(f"team_factory {v!r} must look like 'package.module:function'")
        return v

    @field_validator("base_url")
    @classmethod
    def _no_credentials_in_url(cls, v: str | None) -> str | None:
        if v is not None:
            _refuse_credentials_in_url(v)
        return v

    @field_validator("api_key_env")
    @classmethod
    def _check_env_name(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError(f"api_key_env must be the NAME of an environment variable (like OPENAI_API_KEY), "
                             f"not {'a key' if len(v) > 20 else repr(v)}")
        return v

    @field_validator("options", "cce_options", "world_options")
    @classmethod
    def _no_secrets(cls, v: dict[str, Any]) -> dict[str, Any]:
        for key in v:
            if _SECRET_KEY_NAMES.search(str(key)):
                raise ValueError(f"{key} looks like a secret; put the key in an environment variable "
                                 f"and name it with api_key_env (secrets are never written to a run)")
        for url_key in ("base_url", "server_url"):  # e.g. the judge's endpoint: written to the manifest too
            if isinstance(v.get(url_key), str):
                _refuse_credentials_in_url(v[url_key])
        return v

    @field_validator("prices")
    @classmethod
    def _check_prices(cls, v: dict[str, list[float]]) -> dict[str, list[float]]:
        for model, price in v.items():
            if len(price) != 2 or any(p < 0 for p in price):
                raise ValueError(f"prices.{model} must be [USD per 1M input tokens, USD per 1M output tokens], "
                                 f"e.g. [0.4, 1.6]")
        return v

    @model_validator(mode="after")
    def _check_selection(self) -> "RunSpec":
        if not self.tasks and not self.suite:
            raise ValueError("no tasks selected: give tasks (--task ID or a task YAML path) or suite "
                             "(--suite main|augmented)")
        if not self.frameworks:
            raise ValueError("frameworks is empty: name at least one (e.g. oracle)")
        if self.world != "embedded" and any(v.split(":")[0] == "random_spawn" for v in self.variants):
            raise ValueError(f"variant random_spawn draws spawns from the embedded world's map; it does not apply "
                             f"to world {self.world} (docs/paper-server.md)")
        if not self.variants:
            raise ValueError("variants is empty: use [vanilla] for the standard protocol")
        if self.seeds is not None and len(self.seeds) == 0:
            raise ValueError("seeds is empty: drop it (seed + trial is used) or list at least one")
        if self.max_cost is not None:
            unpriced = sorted({m for f in self.frameworks for m in self.models_for(f)
                               if m and not m.startswith("scripted:") and m not in self.prices})
            if unpriced:
                raise ValueError(f"max_cost needs the price of every model; add prices for {', '.join(unpriced)} "
                                 f"(--price MODEL=IN,OUT in USD per million tokens, e.g. {unpriced[0]}=0.4,1.6)")
        return self

    def price_of(self, model: str) -> tuple[float, float] | None:
        """(USD per input token, USD per output token), or None when the model has no price."""
        if model in self.prices:
            p_in, p_out = self.prices[model]
            return p_in / 1e6, p_out / 1e6
        return None

    # ------------------------------------------------------------------ grid
    def seed_list(self) -> list[int]:
        return list(self.seeds) if self.seeds is not None else [self.seed + k for k in range(self.trials)]

    def models_for(self, framework: str) -> list[str]:
        """Models crossed with one framework: none for scripted frameworks (unless a team factory is given
        models), else the list, or the default scripted:oracle."""
        if framework in SCRIPTED_FRAMEWORKS:
            return list(self.models) if self.team_factory and self.models else [""]
        return list(self.models) or [DEFAULT_LLM_MODEL]

    def public_dict(self) -> dict[str, Any]:
        """The spec as written into manifest.json (it holds no secrets by construction)."""
        return self.model_dump(mode="json")


def _refuse_credentials_in_url(url: str) -> None:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.password or parts.username or re.search(r"(key|token|secret)=", parts.query, re.I):
        raise ValueError("base_url carries credentials (user:password@ or ?key=); put the key in an "
                         "environment variable and name it with api_key_env (runs never store secrets)")


def parse_size_range(text: str) -> tuple[int, int | None]:
    """'10-20' -> (10, 20); '5' -> (5, 5); '10-' -> (10, None); '-8' -> (0, 8)."""
    m = re.fullmatch(r"\s*(\d*)\s*-\s*(\d*)\s*|\s*(\d+)\s*", text)
    if not m or (m.group(3) is None and not (m.group(1) or m.group(2))):
        raise ValueError(f"agents range {text!r} must look like '10-20', '5', '10-' or '-8'")
    if m.group(3) is not None:
        n = int(m.group(3))
        return n, n
    lo = int(m.group(1)) if m.group(1) else 0
    hi = int(m.group(2)) if m.group(2) else None
    if hi is not None and hi < lo:
        raise ValueError(f"agents range {text!r} is empty (lower bound above upper)")
    return lo, hi


def load_run_spec(path: str | Path, **overrides: Any) -> RunSpec:
    """Read a YAML run spec; ``overrides`` (from CLI flags) replace its fields. Errors name field and fix."""
    import yaml  # a spec file only: a run from flags parses no YAML

    from ..yamlio import YamlInputError, load_yaml, read_yaml_file

    p = Path(path)
    try:
        data = load_yaml(read_yaml_file(p)) or {}
    except FileNotFoundError:
        raise RunSpecError(f"{p}: run spec not found; pass a YAML file or use --task/--suite flags") from None
    except YamlInputError as e:
        raise RunSpecError(f"{p}: {e}") from None
    except yaml.YAMLError as e:
        raise RunSpecError(f"{p}: not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise RunSpecError(f"{p}: a run spec is a YAML mapping (keys like tasks, frameworks, models)")
    # Singular conveniences: `framework: oracle`, `model: x`, `variant: y`, `task: id`, `category: c`.
    for single, plural in (("framework", "frameworks"), ("model", "models"), ("variant", "variants"),
                           ("task", "tasks"), ("category", "categories")):
        if single in data:
            v = data.pop(single)
            data.setdefault(plural, [])
            data[plural] = list(data[plural]) + ([v] if not isinstance(v, list) else v)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return build_spec(data, source=str(p))


def build_spec(data: dict[str, Any], source: str = "command line") -> RunSpec:
    try:
        return RunSpec.model_validate(data)
    except ValidationError as e:
        raise RunSpecError(format_validation_error(e, source)) from None


# Spec fields whose command-line flag is not simply --field-name.
_FLAGS = {"tasks": "--task", "categories": "--category", "frameworks": "--framework", "models": "--model",
          "variants": "--variant", "dask_workers": "--workers", "dask_scheduler": "--scheduler",
          "cce_judge": "--cce", "rate_limits": "--rate-limit", "prices": "--price"}


def format_validation_error(e: ValidationError, source: str) -> str:
    lines = [f"{source}: invalid run spec ({e.error_count()} problem{'s' * (e.error_count() > 1)}):"]
    for err in e.errors():
        field = ".".join(str(x) for x in err["loc"]) or "(spec)"
        if source == "command line" and err["loc"]:
            name = str(err["loc"][0])
            field = _FLAGS.get(name, "--" + name.replace("_", "-"))
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            known = ", ".join(RunSpec.model_fields)
            msg = f"unknown field; known fields: {known}"
        elif err["type"] == "literal_error":
            msg = f"{msg} (got {err.get('input')!r})"
        lines.append(f"  - {field}: {msg}")
    return "\n".join(lines)


# ---------------------------------------------------------------------- episode ids
def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "none"


def episode_id(task_id: str, framework: str, model: str, variant: str, seed: int) -> str:
    """A readable, filesystem-safe id of one grid cell; a short hash keeps ids distinct when slugs collide.

    Deterministic (no clock, no randomness), so that resume matches episodes across processes."""
    raw = f"{task_id}|{framework}|{model}|{variant}|{seed}"
    digest = hashlib.sha256(raw.encode()).hexdigest()[:6]
    model_part = _slug(model)[-40:] if model else "none"
    return f"{_slug(task_id)}.{_slug(framework)}.{model_part}.{_slug(variant)}.s{seed}.{digest}"
