"""The on-disk cache of built worlds: missing, stale and corrupt entries are rebuilt; writers never collide."""

import json
import pickle
import shutil
import subprocess
import sys
import textwrap

import pytest

from agentworld.core.world import buildcache, datapack


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("AGENTWORLD_CACHE_DIR", str(root))
    monkeypatch.delenv("AGENTWORLD_WORLD_CACHE", raising=False)
    return root


@pytest.fixture
def pack(tmp_path):
    dst = tmp_path / "pack"
    shutil.copytree(datapack.DATA_DIR, dst)
    return dst


def counting_builder(value):
    calls = []

    def build():
        calls.append(1)
        return value

    return build, calls


def test_a_missing_entry_is_built_once_then_read_from_disk(cache, pack):
    build, calls = counting_builder({"world": 1})
    assert buildcache.cached_build(pack, True, build) == {"world": 1}
    assert buildcache.cached_build(pack, True, build) == {"world": 1}
    assert len(calls) == 1
    entries = list(cache.glob("world-*.pickle"))
    assert len(entries) == 1 and entries[0].name.startswith("world-" + buildcache.pinned_hashes(pack)["tiles_sha256"][:12])


def test_an_edited_pack_file_makes_the_entry_stale(cache, pack):
    build, calls = counting_builder("v1")
    buildcache.cached_build(pack, True, build)
    items = pack / "items.yaml"
    items.write_text(items.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    build2, calls2 = counting_builder("v2")
    assert buildcache.cached_build(pack, True, build2) == "v2"  # not the stale v1
    assert len(calls2) == 1


def test_a_new_pinned_hash_makes_the_entry_stale(cache, pack):
    key = buildcache.world_key(pack, True)
    text = (pack / "map.yaml").read_text(encoding="utf-8")
    old = buildcache.pinned_hashes(pack)["tiles_sha256"]
    (pack / "map.yaml").write_text(text.replace(old, "0" * 64), encoding="utf-8")
    assert buildcache.pinned_hashes(pack)["tiles_sha256"] == "0" * 64
    assert buildcache.world_key(pack, True) != key


def test_a_corrupt_or_truncated_entry_is_rebuilt(cache, pack):
    build, calls = counting_builder(list(range(1000)))
    buildcache.cached_build(pack, True, build)
    entry = next(cache.glob("world-*.pickle"))
    entry.write_bytes(entry.read_bytes()[:100])
    assert buildcache.cached_build(pack, True, build) == list(range(1000))
    assert len(calls) == 2
    with entry.open("rb") as f:
        assert pickle.load(f) == list(range(1000))  # rewritten whole


def test_the_cache_can_be_turned_off(cache, pack, monkeypatch):
    monkeypatch.setenv("AGENTWORLD_WORLD_CACHE", "0")
    build, calls = counting_builder(1)
    buildcache.cached_build(pack, True, build)
    buildcache.cached_build(pack, True, build)
    assert len(calls) == 2 and not cache.exists()


def test_an_unwritable_cache_directory_never_fails_a_load(tmp_path, pack, monkeypatch):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    monkeypatch.setenv("AGENTWORLD_CACHE_DIR", str(blocker / "sub"))
    build, calls = counting_builder("ok")
    assert buildcache.cached_build(pack, True, build) == "ok"


def test_concurrent_writers_and_readers_see_whole_entries(cache, pack):
    """Six processes build and store the same key at once while reading it: every one gets the whole value."""
    script = textwrap.dedent(f"""
        import random, sys, time
        from pathlib import Path
        from agentworld.core.world import buildcache
        value = [list(range(200)) for _ in range(2000)]  # a few MB: writes take long enough to overlap
        def build():
            time.sleep(random.random() * 0.05)
            return value
        for _ in range(5):
            got = buildcache.cached_build(Path({str(pack)!r}), True, build)
            assert got == value, "partial or foreign entry"
            path = buildcache.entry_path(Path({str(pack)!r}), True, buildcache.cache_dir())
            buildcache.store(path, value)  # keep writing while the others read
        print("ok")
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(6)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "ok", err
    assert len(list(cache.glob("world-*.pickle"))) == 1
    assert not list(cache.glob("*.tmp"))  # no temporary file left behind


def test_load_world_reads_a_warm_entry_without_building(cache, pack, monkeypatch):
    datapack._load_cached.cache_clear()
    try:
        cold = datapack.load_world(pack)
        assert list(cache.glob("world-*.pickle"))
        datapack._load_cached.cache_clear()
        monkeypatch.setattr(datapack, "_build", lambda *a, **k: pytest.fail("a warm cache must not rebuild the world"))
        warm = datapack.load_world(pack)
        assert warm is not cold
        assert warm.map.tiles_sha256() == cold.map.tiles_sha256()
        assert warm.stats() == cold.stats()
        assert warm.pack_dir == pack.resolve()
    finally:
        datapack._load_cached.cache_clear()


def test_a_warm_load_imports_no_numpy(cache, pack):
    """The cached map keeps its grids as bytes and flat arrays: a fresh process loads the world, answers tile,
    component and path queries, and never imports numpy (the generator and the regions' builder need it)."""
    datapack._load_cached.cache_clear()
    try:
        cold = datapack.load_world(pack)
    finally:
        datapack._load_cached.cache_clear()
    x, y = cold.data.landmarks[0].x, cold.data.landmarks[0].y
    script = textwrap.dedent(f"""
        import json, sys
        from agentworld.core.world.datapack import load_world
        from agentworld.core.world.pathing import route
        w = load_world({str(pack)!r})
        g = w.map
        start = g.nearest_walkable({x}, {y})
        path = route(g, start, (start[0] + 40, start[1] + 40), reach=1)
        print(json.dumps({{"numpy": "numpy" in sys.modules, "sha": g.tiles_sha256(), "biome": g.biome_at({x}, {y}),
                          "road": g.is_road({x}, {y}), "component": g.component(*start), "path": path,
                          "regions": g._regions is not None}}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert not got["numpy"], "a warm load_world() imported numpy"
    assert got["regions"]
    assert got["sha"] == cold.map.tiles_sha256() == cold.data.map.tiles_sha256
    assert got["biome"] == cold.map.biome_at(x, y) and got["road"] == cold.map.is_road(x, y)
    start = cold.map.nearest_walkable(x, y)
    assert got["component"] == cold.map.component(*start)
    from agentworld.core.world.pathing import route

    assert got["path"] == [list(p) for p in route(cold.map, start, (start[0] + 40, start[1] + 40), reach=1)]


LOAD_AND_READ_THE_COLLECTOR = """
import gc, json
gc.set_threshold(700, 10, 10)
from agentworld.core.world.datapack import load_world
load_world()
print(json.dumps({"thresholds": gc.get_threshold(), "frozen": gc.get_freeze_count(), "on": gc.isenabled()}))
"""


def test_loading_a_world_leaves_the_callers_collector_as_it_was():
    """A library never touches the collector of the process it is imported into (only the agentworld program
    sets it: core/cli/collector.py): a load from the cache and a build alike."""
    import json
    import os
    import subprocess

    for env in ({}, {"AGENTWORLD_WORLD_CACHE": "0"}):
        out = subprocess.run([sys.executable, "-c", LOAD_AND_READ_THE_COLLECTOR], capture_output=True, text=True,
                             timeout=300, check=True, env={**os.environ, **env})
        assert json.loads(out.stdout.split("\n")[-2]) == {"thresholds": [700, 10, 10], "frozen": 0, "on": True}, env
