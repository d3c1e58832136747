"""`agentworld bench ...`: every command runs on tiny sizes and its --json form has the documented shape.

No figure is asserted (timings are for benchmarks, never for tests); only that each is there and sane."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentworld.core.cli import _load_commands, cli

STAFF = str(Path(__file__).parent / "data" / "task_01_staff.yaml")  # the harness's fixture task, played by path

_load_commands()


def run_json(*args: str) -> dict:
    res = CliRunner().invoke(cli, ["bench", *args, "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_scale_json_is_rows_of_the_issues_four_figures_and_the_cpu_time():
    out = run_json("scale", "--agents", "2,3", "--rounds", "2")
    assert list(out) == ["rows"]
    assert [r["agents"] for r in out["rows"]] == [2, 3]
    for r in out["rows"]:
        assert list(r) == ["agents", "ms_per_round", "ms_per_agent_turn", "rss_mb", "cpu_ms_per_round"]
        assert r["ms_per_round"] > 0 and r["rss_mb"] > 0 and r["cpu_ms_per_round"] > 0
        assert r["ms_per_agent_turn"] == pytest.approx(r["ms_per_round"] / r["agents"], rel=1e-2)


def test_bad_sizes_are_refused_naming_the_option():
    res = CliRunner().invoke(cli, ["bench", "scale", "--agents", "10,lots"])
    assert res.exit_code != 0 and "--agents" in res.output and "10,100,1000" in res.output


def test_harness_json_and_table():
    out = run_json("harness", "--task", STAFF, "--rounds", "2", "--seeds", "1")
    assert out["turns"] > 0 and out["world_tool_ms"] > 0 and out["world_observe_ms"] > 0 and out["layer_ms"] >= 0
    assert out["ratio"] == pytest.approx(out["layer_ms"] / out["world_tool_ms"])
    res = CliRunner().invoke(cli, ["bench", "harness", "--task", STAFF, "--rounds", "2", "--seeds", "1"],
                             terminal_width=200, catch_exceptions=False)
    assert res.exit_code == 0 and "ratio to floor" in res.output and "floor" in res.output


def test_concurrency_json():
    out = run_json("concurrency", "--episodes", "2", "--latency", "0.002,0.001")
    assert out["single_s"] > 0 and [r["episodes"] for r in out["rows"]] == [2]
    assert set(out["rows"][0]) == {"episodes", "wall_s", "speedup", "efficiency"}
    assert [r["latency_s"] for r in out["runs"]] == [0.002, 0.001]  # every latency, the first the headline
    assert out["latency_s"] == 0.002 and out["rows"] == out["runs"][0]["rows"]


def test_concurrency_refuses_bad_latencies_naming_the_option():
    res = CliRunner().invoke(cli, ["bench", "concurrency", "--latency", "0.2,soon"])
    assert res.exit_code != 0 and "--latency" in res.output and "1.0,0.2" in res.output


def test_startup_json():
    out = run_json("startup", "--repeat", "1")
    names = [r["command"] for r in out["rows"]]
    assert names[0].startswith("python -c pass") and "agentworld --help" in names
    assert out["floor_ms"] == out["rows"][0]["ms"] and all(r["ms"] > 0 for r in out["rows"])
    episode = names.index("agentworld run --task task_205_goldfield_two_forges --framework oracle")
    assert names[episode + 1].strip().startswith("of which the episode itself")
    assert out["rows"][episode + 1]["ms"] < out["rows"][episode]["ms"]
    assert out["floor_cpu_ms"] == out["rows"][0]["cpu_ms"] > 0  # CPU time of each command beside its wall time
    assert out["rows"][episode]["cpu_ms"] > out["floor_cpu_ms"] and out["rows"][episode + 1]["cpu_ms"] is None
    assert len(out["load_average"]) == 2
    mode = out["mode"]
    assert mode["install"] in ("editable", "regular") and mode["install"] in mode["text"]
    assert isinstance(mode["pyc_agentworld"], bool) and isinstance(mode["pyc_dependencies"], bool)
    assert mode["distributions"] > 10 and f"{mode['distributions']} installed distributions" in mode["text"]


def test_startup_mode_tells_cached_bytecode_from_none(tmp_path, monkeypatch):
    """The mode says whether a module would start from a .pyc: here a module with and without one."""
    import importlib.util
    import py_compile
    import sys as _sys

    from agentworld.core.runs import bench_play

    src = tmp_path / "aw_mode_probe.py"
    src.write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    real_find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: real_find("aw_mode_probe") if name == "click" else real_find(name, *a))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert bench_play.startup_mode()["pyc_dependencies"] is False
    assert "compiled from source at every start" in bench_play.startup_mode()["text"]
    py_compile.compile(str(src), cfile=importlib.util.cache_from_source(str(src)))
    assert bench_play.startup_mode()["pyc_dependencies"] is True
    _sys.modules.pop("aw_mode_probe", None)


def test_mcp_load_json_over_real_clients():
    out = run_json("mcp-load", "--clients", "2", "--rounds", "2")
    assert out["mcp"]["calls"] == out["in_process"]["calls"] == 4
    assert out["mcp"]["client_rc"] == 0 and out["ratio"] > 0
    assert out["mcp"]["server_cpu_ms_per_call"] > 0 and out["mcp"]["server_capacity_calls_per_s"] > 0
    bare = out["bare_fastmcp"]  # the client-side floor: the same clients against a bare FastMCP server
    assert bare["calls"] == 4 and bare["client_rc"] == 0 and bare["calls_per_s"] > 0
    assert out["ratio_to_bare"] == pytest.approx(out["mcp"]["calls_per_s"] / bare["calls_per_s"])
    chain = out["bare_fastmcp_serial"]  # the chain floor: the same turn contract, nothing to play
    assert chain["calls"] == 4 and chain["client_rc"] == 0 and chain["calls_per_s"] > 0
    assert out["ratio_to_serial_bare"] == pytest.approx(out["mcp"]["calls_per_s"] / chain["calls_per_s"])
    assert out["loop"] in ("uvloop", "asyncio")
