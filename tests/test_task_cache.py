"""The on-disk cache of validated tasks: the same task as parsing and validating it, never a stale one, never a
bad one, and nothing cached while a plugin registered by hand could change what validation means."""

import os
import shutil
import threading

import pytest

from agentworld.core import plugins
from agentworld.core.tasks import task as task_mod
from agentworld.core.tasks import taskcache

SHIPPED = task_mod.suite_files("main")[0]  # the first file of tasks/main/


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("AGENTWORLD_CACHE_DIR", str(root))
    monkeypatch.delenv("AGENTWORLD_WORLD_CACHE", raising=False)
    monkeypatch.delenv("AGENTWORLD_TASK_CACHE", raising=False)
    return root / "tasks"


@pytest.fixture
def task_file(tmp_path):
    dst = tmp_path / "my_task.yaml"
    shutil.copyfile(SHIPPED, dst)
    return dst


def no_parsing(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("parsed although the task cache holds it")

    monkeypatch.setattr(task_mod, "_parse_file", refuse)
    monkeypatch.setattr(task_mod, "validate_task", refuse)


def test_a_validated_task_is_kept_and_read_back_equal_without_parsing(cache, task_file, monkeypatch):
    first = task_mod.load_task(task_file)
    assert len(list(cache.glob("code-*/task-*.pickle"))) == 1
    no_parsing(monkeypatch)
    again = task_mod.load_task(task_file)
    assert again == first and again.raw == first.raw and again.path == str(task_file)
    assert again.agent(first.agents[0].username) is again.agents[0]  # its agent index is its own
    assert task_mod.find_task(str(task_file)) == first


def test_a_load_without_validation_reads_the_cache_and_never_writes_it(cache, task_file, monkeypatch):
    parsed = task_mod.load_task(task_file, validate=False)
    assert not cache.exists() or not list(cache.glob("code-*/task-*.pickle"))  # not validated: not kept
    validated = task_mod.load_task(task_file)
    no_parsing(monkeypatch)
    again = task_mod.load_task(task_file, validate=False)
    assert again == validated and again.model_dump() == parsed.model_dump()  # == also compares agent-index memos


def test_the_cached_task_equals_a_fresh_parse(cache, task_file, monkeypatch):
    task_mod.load_task(task_file)
    cached = task_mod.load_task(task_file)
    monkeypatch.setenv("AGENTWORLD_TASK_CACHE", "0")
    fresh = task_mod.load_task(task_file)
    assert cached.model_dump() == fresh.model_dump()


def test_an_edited_file_is_parsed_and_validated_again(cache, task_file):
    task_mod.load_task(task_file)
    text = task_file.read_text(encoding="utf-8")
    task_file.write_text(text.replace("max_action_steps: ", "max_action_steps: 1", 1), encoding="utf-8")
    edited = task_mod.load_task(task_file)
    assert edited.max_action_steps == int("1" + text.split("max_action_steps: ")[1].split()[0])
    assert len(list(cache.glob("code-*/task-*.pickle"))) == 2


def test_a_bad_edit_is_refused_as_without_the_cache(cache, task_file, monkeypatch):
    task_mod.load_task(task_file)  # the good version is cached
    text = task_file.read_text(encoding="utf-8")
    task_file.write_text(text.replace("username:", "usernme:", 1), encoding="utf-8")
    with pytest.raises(task_mod.TaskError) as cached_run:
        task_mod.load_task(task_file)
    monkeypatch.setenv("AGENTWORLD_TASK_CACHE", "0")
    with pytest.raises(task_mod.TaskError) as uncached_run:
        task_mod.load_task(task_file)
    assert str(cached_run.value) == str(uncached_run.value)
    assert str(task_file) in str(cached_run.value) and "usernme" in str(cached_run.value)
    assert len(list(cache.glob("code-*/task-*.pickle"))) == 1  # only the good version


def test_the_key_covers_the_path_the_world_and_the_code(cache, task_file, monkeypatch):
    data = task_file.read_bytes()
    entry = taskcache.entry_for(str(task_file), data)
    assert taskcache.entry_for(str(task_file), data) == entry
    assert taskcache.entry_for(str(task_file) + ".other", data) != entry
    assert taskcache.entry_for(str(task_file), data + b"\n") != entry
    real_key = taskcache.buildcache.world_key
    monkeypatch.setattr(taskcache.buildcache, "world_key", lambda pack, check: real_key(pack, check) + "x")
    assert taskcache.entry_for(str(task_file), data) != entry
    monkeypatch.setattr(taskcache.buildcache, "world_key", real_key)
    monkeypatch.setattr(taskcache, "_code_digest", "another version of the code")
    assert taskcache.entry_for(str(task_file), data) != entry


def test_the_code_digest_follows_every_module(tmp_path, monkeypatch):
    package = tmp_path / "agentworld"
    (package / "core" / "tasks").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    module = package / "core" / "tasks" / "task.py"
    module.write_text("x = 1\n")
    monkeypatch.setattr(taskcache, "_PACKAGE", package)
    monkeypatch.setattr(taskcache, "_code_digest", None)
    before = taskcache.code_digest()
    module.write_text("x = 22\n")
    monkeypatch.setattr(taskcache, "_code_digest", None)
    assert taskcache.code_digest() != before


def test_a_plugin_registered_by_hand_turns_the_cache_off(cache, task_file):
    class Extra:
        pass

    plugins.register_plugin(Extra(), name="extra-by-hand")
    try:
        assert taskcache.entry_for(str(task_file), task_file.read_bytes()) is None
        task_mod.load_task(task_file)
        assert not list(cache.glob("code-*/task-*.pickle"))
    finally:
        plugins.unregister_plugin("extra-by-hand")


def test_a_damaged_entry_is_a_miss_and_rewritten(cache, task_file):
    good = task_mod.load_task(task_file)
    (entry,) = cache.glob("code-*/task-*.pickle")
    entry.write_bytes(entry.read_bytes()[:100])
    assert task_mod.load_task(task_file) == good
    assert taskcache.load(entry) == good


def test_off_switches_and_explicit_worlds_keep_nothing(cache, task_file, monkeypatch):
    from agentworld.core.world.datapack import load_world

    task_mod.load_task(task_file, world=load_world())  # validated against a world given by hand
    task_mod.load_task(task_file, validate=False)
    monkeypatch.setenv("AGENTWORLD_TASK_CACHE", "0")
    task_mod.load_task(task_file)
    monkeypatch.setenv("AGENTWORLD_TASK_CACHE", "1")
    monkeypatch.setenv("AGENTWORLD_WORLD_CACHE", "0")
    task_mod.load_task(task_file)
    assert not cache.exists() or not list(cache.glob("code-*/task-*.pickle"))


def test_concurrent_loads_all_get_the_whole_task(cache, task_file):
    expected = task_mod.load_task(task_file)
    for entry in cache.glob("code-*/task-*.pickle"):
        entry.unlink()
    got, errors = [], []

    def load():
        try:
            for _ in range(5):
                got.append(task_mod.load_task(task_file))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(got) == 20 and all(t == expected for t in got)
    assert len(list(cache.glob("code-*/task-*.pickle"))) == 1 and not list(cache.glob("code-*/*.tmp"))


def test_only_the_latest_versions_of_the_code_keep_their_entries(cache, task_file, monkeypatch):
    """Every edit of agentworld's code is a new version of the key: old versions' folders go, the newest stay."""
    versions = []
    for i in range(taskcache.KEEP_VERSIONS + 2):
        monkeypatch.setattr(taskcache, "_code_digest", f"{i:016d}" * 4)
        task_mod.load_task(task_file)
        versions.append(cache / f"code-{i:016d}")
        assert list(versions[-1].glob("task-*.pickle"))
        os.utime(versions[-1], (1000 + i, 1000 + i))  # written in this order, whatever the clock's resolution
    assert sorted(cache.glob("code-*")) == versions[-taskcache.KEEP_VERSIONS:]


def test_a_plugins_submodule_edited_changes_its_digest(tmp_path, monkeypatch):
    """A plugin keeps its registering module small and its checks in submodules (docs/plugins.md): an edit
    to a submodule must make its tasks validate again, so the whole package is in the key."""
    import importlib

    pkg = tmp_path / "aw_cache_probe_plugin"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "register.py").write_text("def register_checks(register):\n    pass\n")
    checks = pkg / "checks.py"
    checks.write_text("LIMIT = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("aw_cache_probe_plugin.register")
    before = taskcache._plugin_code_digest(module, module.__file__)
    checks.write_text("LIMIT = 22\n")
    assert taskcache._plugin_code_digest(module, module.__file__) != before
