"""ModelSpec parsing, key handling and --team-factory loading (core/play/models.py)."""

import json
import sys
import textwrap

import pytest

from agentworld.core.play.models import (ModelSpec, ModelSpecError, TeamFactoryError, load_team_factory,
                                    resolve_team_factory)
from agentworld.core.play.protocol import TeamSpec


def test_parse_providers_and_overrides():
    spec = ModelSpec.parse("openai:gpt-4.1-mini", temperature=0.3, max_tokens=None)
    assert (spec.provider, spec.model, spec.temperature, spec.max_tokens) == ("openai", "gpt-4.1-mini", 0.3, None)
    local = ModelSpec.parse("openai-compatible:qwen2.5-7b", base_url="http://127.0.0.1:8000/v1")
    assert local.base_url == "http://127.0.0.1:8000/v1" and local.key_variable() is None
    assert ModelSpec.parse("vllm:qwen", base_url="http://x/v1").provider == "openai-compatible"
    assert ModelSpec.parse("scripted:oracle").is_scripted
    # the model name may itself contain colons (ollama tags)
    assert ModelSpec.parse("openai-compatible:qwen2.5:7b", base_url="http://x/v1").model == "qwen2.5:7b"


@pytest.mark.parametrize("text, fragment", [
    ("gpt-4", "must be 'provider:model'"),
    ("anthropic:claude", "unknown provider 'anthropic'"),
    ("openai-compatible:qwen", "needs a base URL"),
    ("scripted:genius", "unknown scripted policy 'genius'"),
    ("openai:", "model"),
])
def test_parse_errors_name_the_fix(text, fragment):
    with pytest.raises(ModelSpecError) as exc:
        ModelSpec.parse(text)
    assert fragment in str(exc.value)


def test_bad_override_values_are_named():
    with pytest.raises(ModelSpecError, match="temperature"):
        ModelSpec.parse("openai:gpt-4.1", temperature=5)
    with pytest.raises(ModelSpecError, match="unknown option"):
        ModelSpec.parse("openai:gpt-4.1", colour="red")
    with pytest.raises(ModelSpecError, match="NAME of an environment variable"):
        ModelSpec.parse("openai:gpt-4.1", api_key_env="sk-live-abc123")


def test_a_spec_given_for_the_text_is_validated_with_its_overrides():
    spec = ModelSpec.parse("openai:gpt-4.1", max_tokens=64)
    again = ModelSpec.parse(spec, temperature=0.5)
    assert (again.model, again.max_tokens, again.temperature) == ("gpt-4.1", 64, 0.5)
    assert ModelSpec.parse(spec) == spec
    with pytest.raises(ModelSpecError, match="temperature"):
        ModelSpec.parse(spec, temperature=5)
    with pytest.raises(ModelSpecError, match="NAME of an environment variable"):  # a key never slips in
        ModelSpec.parse(spec, api_key_env="sk-live-abc123")


def test_key_is_read_at_use_and_never_serialised(monkeypatch):
    monkeypatch.setenv("MY_KEY", "s3cr3t-value")
    spec = ModelSpec.parse("openai:gpt-4.1-mini", api_key_env="MY_KEY")
    assert spec.api_key() == "s3cr3t-value"
    red = spec.redacted()
    assert red["api_key_env"] == "MY_KEY" and red["api_key_set"] is True
    for dumped in (json.dumps(red), spec.model_dump_json(), repr(spec)):
        assert "s3cr3t-value" not in dumped
    monkeypatch.delenv("MY_KEY")
    with pytest.raises(ModelSpecError, match="MY_KEY is not set"):
        spec.api_key()
    assert ModelSpec.parse("openai-compatible:x", base_url="http://h/v1").api_key() == "none"


def test_from_team_spec_uses_options_and_episode_seed():
    ts = TeamSpec(view=None, model="openai-compatible:qwen", seed=7,
                  options={"base_url": "http://127.0.0.1:9/v1", "context_budget": 5000, "tools": "inproc", "retries": 1})
    spec = ModelSpec.from_team_spec(ts)
    assert (spec.base_url, spec.context_budget, spec.seed, spec.retries) == ("http://127.0.0.1:9/v1", 5000, 7, 1)


def test_load_team_factory(tmp_path, monkeypatch):
    (tmp_path / "my_team_mod.py").write_text(textwrap.dedent("""
        def make_team(spec):
            return ("team for", spec.model)
        class Builders:
            @staticmethod
            def build(spec):
                return "built"
        not_callable = 3
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    factory = load_team_factory("my_team_mod:make_team")
    assert factory(TeamSpec(view=None, model="scripted:oracle")) == ("team for", "scripted:oracle")
    assert load_team_factory("my_team_mod:Builders.build")(None) == "built"
    assert resolve_team_factory("openai", "my_team_mod:make_team") is factory  # --team-factory wins
    with pytest.raises(TeamFactoryError, match="expected 'module:function'"):
        load_team_factory("my_team_mod.make_team")
    with pytest.raises(TeamFactoryError, match="cannot import module 'no_such_mod_xyz'"):
        load_team_factory("no_such_mod_xyz:make")
    with pytest.raises(TeamFactoryError, match="no attribute 'missing'"):
        load_team_factory("my_team_mod:missing")
    with pytest.raises(TeamFactoryError, match="not callable"):
        load_team_factory("my_team_mod:not_callable")
    sys.modules.pop("my_team_mod", None)


def test_resolve_framework_by_name():
    from agentworld.plugins.agents.openai_agent import make_team

    assert resolve_team_factory("openai", None) is make_team
    with pytest.raises(KeyError, match="unknown framework 'nope'"):
        resolve_team_factory("nope", None)
    with pytest.raises(TeamFactoryError, match="--framework"):
        resolve_team_factory(None, None)
