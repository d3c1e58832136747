"""Start-up stays light: building the command line imports no heavy library (no timings here: those are
`agentworld bench startup`'s), and the command plugins the CLI loads are exactly those with commands."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys

from agentworld.core import plugins

HEAVY = ("pydantic", "yaml", "rich", "jinja2", "numpy", "networkx", "asyncio", "httpx", "mcp", "PIL")
# what the README's first episode (a scripted team on a warm world cache) has no use for: numpy only builds
# worlds, Jinja2 renders prompts no scripted team reads, the framework teams are imported when one is made
# YAML only parses task files: a warm run reads its unchanged task from the task cache (taskcache.py)
# the live view shows nothing on a pipe (the run's output here), so rich.live is not imported for one
NOT_FOR_A_SCRIPTED_RUN = ("numpy", "jinja2", "networkx", "httpx", "mcp", "PIL", "openai", "uvicorn", "starlette",
                          "yaml", "agentworld.core.yamlio", "rich.live", "agentworld.mcp_server.bench",
                          *(p for p in plugins.COMMANDS_ONLY if p != "agentworld.core.cli.runs"),
                          "agentworld.plugins.agents.common", "agentworld.plugins.agents.openai_team",
                          "agentworld.core.world.generate", "agentworld.core.cce")


def test_the_command_line_imports_no_heavy_library():
    code = ("import json, sys; from agentworld.core.cli import _load_commands, cli; _load_commands(); "
            "print(json.dumps({'commands': sorted(cli.commands), 'modules': sorted(sys.modules)}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    got = json.loads(out.stdout)
    loaded = {m.split(".")[0] for m in got["modules"]}
    assert not loaded & set(HEAVY), f"imported at start-up: {sorted(loaded & set(HEAVY))}"
    assert {"run", "tasks", "world", "bench", "cce", "serve", "report"} <= set(got["commands"])


def _defines_register_commands(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    tree = ast.parse(open(spec.origin, encoding="utf-8").read())
    return any(isinstance(n, ast.FunctionDef) and n.name == "register_commands" for n in tree.body)


def test_command_plugins_are_exactly_the_builtins_with_commands_in_order():
    assert tuple(plugins.COMMAND_PLUGINS) == tuple(p for p in plugins.DEFAULT_PLUGINS if _defines_register_commands(p))


def test_the_registries_host_leaves_out_exactly_the_command_only_plugins():
    """The host registers the built-in command plugins whose only hook is register_commands when commands or
    the plugin list are asked of it (a run reads the registries only); every other built-in at once."""
    def hooks(path):
        module = importlib.import_module(path)
        return {n for n in plugins.HOOK_NAMES if hasattr(getattr(module, n, None), "agentworld_impl")}

    assert plugins.COMMANDS_ONLY == {p for p in plugins.COMMAND_PLUGINS if hooks(p) == {"register_commands"}}
    rows = {r["name"]: r for r in plugins.plugin_table()}
    assert set(plugins.DEFAULT_PLUGINS) <= set(rows)  # the list shows them all
    assert rows["agentworld.core.cli.runs"]["hooks"] == ["register_commands"]


SHAPE = """
import json, sys, click
from agentworld.core import plugins
from agentworld.core.cli import cli

def shape(c):
    out = {"params": sorted(p.name for p in c.params), "help": c.help}
    if isinstance(c, click.Group):
        out["commands"] = {n: shape(s) for n, s in sorted(c.commands.items())}
    return out

name = sys.argv[1]
if name == "*":
    plugins.register_commands(cli)
    print(json.dumps({n: shape(c) for n, c in cli.commands.items()}))
else:
    plugins.register_commands(cli, lazy=True)
    command = cli.get_command(click.Context(cli), name)
    print(json.dumps({"shape": shape(command) if command else None,
                      "modules": sorted(m for m in sys.modules if m in plugins.COMMAND_PLUGINS)}))
"""


def test_a_command_looked_up_alone_is_the_command_with_every_plugin_loaded():
    """`agentworld COMMAND` registers only the command plugins COMMAND_PLUGINS names for COMMAND (main's lazy
    mode): in a fresh process each command so built has the same subcommands, options and help as with
    every plugin registered, so the map misses no plugin that adds or extends a command; `run` imports no
    other command's module."""
    def start(name):
        return subprocess.Popen([sys.executable, "-c", SHAPE, name], stdout=subprocess.PIPE, text=True)

    full_proc = start("*")
    names = sorted({n for commands in plugins.COMMAND_PLUGINS.values() for n in commands})
    procs = {name: start(name) for name in names}
    full = json.loads(full_proc.communicate(timeout=120)[0])
    assert set(full) - {"plugins"} == set(names)  # every command is in the map ("plugins" is the group's own)
    for name, proc in procs.items():
        got = json.loads(proc.communicate(timeout=120)[0])
        assert proc.returncode == 0
        assert got["shape"] == full[name], f"`{name}` built alone differs: fix COMMAND_PLUGINS"
        if name == "run":
            assert got["modules"] == ["agentworld.core.cli.runs"]


def test_commands_come_from_the_full_host_once_it_exists():
    """After the full host is built (e.g. a plugin registered by hand), commands are taken from it."""
    import click

    plugins.get_plugin_manager()
    group = click.Group("agentworld")
    plugins.register_commands(group)
    assert {"run", "tasks", "bench", "serve"} <= set(group.commands)


def test_the_readme_episode_imports_only_what_a_scripted_run_uses(tmp_path):
    """`agentworld run --task task_205_goldfield_two_forges --framework oracle` on a warm world cache (the first run warms it)."""
    code = ("import json, sys\n"
            "from agentworld.core.cli import main\n"
            f"sys.argv = ['agentworld', 'run', '--task', 'task_205_goldfield_two_forges', '--framework', 'oracle', '--out', sys.argv[1]]\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "modules = sorted(sys.modules)\n"
            "from agentworld.core.tasks import task\n"
            "from agentworld.core.world.tools import TOOLS\n"
            "built = sorted({t.args.__name__ for t in TOOLS.values() if t.args.__pydantic_complete__})\n"
            "called_args = {name: t.args.__name__ for name, t in TOOLS.items()}\n"
            "built += [c.__name__ for c in (task.Task, task.AgentDef, task.YamlStack, task.Objectives, task.VerifierSpec,\n"
            "                               task.Step) if c.__pydantic_complete__]\n"
            "print(json.dumps({'modules': modules, 'built': built, 'args': called_args}))\n")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "warm")], capture_output=True, timeout=300, check=True)
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "run")], capture_output=True, text=True,
                         timeout=300, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    loaded = {m for m in got["modules"] for heavy in NOT_FOR_A_SCRIPTED_RUN if m == heavy or m.startswith(heavy + ".")}
    assert not loaded, f"the README episode imported {sorted(loaded)}"
    # the task file's parse-only models are not even created: the task comes from the task cache
    assert "agentworld.core.tasks.task_file" not in got["modules"]
    # nor the model spec's (core/play/models.py): a scripted team makes none; its factory comes from teams.py
    assert "agentworld.core.play.models" not in got["modules"] and "agentworld.core.play.teams" in got["modules"]
    # model classes built on first use: the argument models of the tools the team called; not the task's (it is
    # unpickled from the task cache). The observation and its rows are records (core/world/record.py): no class
    # of theirs to build, their TypeAdapter is made when the first observation is written
    (trajectory,) = (tmp_path / "run").glob("episodes/*/trajectory.jsonl")
    called = {json.loads(line).get("tool") for line in trajectory.read_text(encoding="utf-8").splitlines()}
    used = {got["args"][tool] for tool in called if tool in got["args"]}
    assert got["built"] and set(got["built"]) <= used, f"built {got['built']}, the calls' models {sorted(used)}"


def test_a_live_view_is_shown_only_where_it_shows_something():
    """A transient live display prints nothing to a pipe or a file, so none is made there (it would render its
    view at every refresh); a terminal gets one. A piped console highlights nothing (no styles reach a pipe)."""
    import io

    from rich.console import Console
    from rich.highlighter import NullHighlighter

    from agentworld.core.cli.runs import SingleEpisodeView, live_display
    from agentworld.core.console import make_console

    assert live_display(Console(file=io.StringIO(), width=80), renderable="x") is None
    live = live_display(Console(file=io.StringIO(), width=80, force_terminal=True), auto_refresh=False,
                        renderable="x")
    assert live is not None and live.is_started
    live.stop()
    view = SingleEpisodeView(Console(file=io.StringIO(), width=80))
    view.run_started(1, 0)
    assert view.live is None
    assert isinstance(make_console().highlighter, NullHighlighter)  # pytest captures stdout: a pipe


def test_a_piped_console_forced_to_colour_still_highlights(monkeypatch):
    from rich.highlighter import ReprHighlighter

    from agentworld.core.console import make_console

    monkeypatch.setenv("FORCE_COLOR", "1")
    assert isinstance(make_console().highlighter, ReprHighlighter)


def test_model_fields_use_no_builtin_list_or_tuple_as_default_factory():
    """pydantic parses a builtin's text signature for every such field when it builds the class (~0.6 ms
    each); ``agentworld.core.world.factories.empty_list`` does the same at a tenth of the cost."""
    import agentworld.core.cce.comms  # noqa: F401 - the models off the run path too
    import agentworld.core.cce.graph  # noqa: F401
    import agentworld.core.runs.runner  # noqa: F401 - imports the run path's models
    from pydantic import BaseModel

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    slow = sorted(f"{m.__module__}.{m.__qualname__}.{name}" for m in set(subclasses(BaseModel))
                  if m.__module__.startswith("agentworld.")
                  for name, field in m.model_fields.items() if field.default_factory in (list, tuple))
    assert not slow, f"Field(default_factory=list) in {slow}: use agentworld.core.world.factories.empty_list"


WORLD_MODELS = """
import json
from agentworld.core.world import models as m
schema = m.WorldData.model_json_schema()
print(json.dumps({"rules": schema["properties"]["rules"].get("default"),
                  "xp_curve": schema["properties"]["xp_curve"].get("default"),
                  "stats": schema["$defs"]["ItemDef"]["properties"]["stats"].get("default")}))
"""


def test_the_world_models_defaults_are_what_their_classes_make_and_show_in_the_schema():
    """The data pack's nested defaults (ItemDef.stats, WorldData.xp_curve and .rules) are instances made as any
    caller makes one (nothing set), and the JSON schema shows each."""
    from agentworld.core.world import models as m

    out = subprocess.run([sys.executable, "-c", WORLD_MODELS], capture_output=True, text=True, timeout=120, check=True)
    got = json.loads(out.stdout)
    assert got["rules"] == m.Rules().model_dump() and got["xp_curve"] == m.XpCurve().model_dump()
    assert got["stats"] == m.ItemStats().model_dump()
    for field, model in (("rules", m.Rules), ("xp_curve", m.XpCurve)):
        default = m.WorldData.model_fields[field].default
        assert default == model() and default.model_fields_set == model().model_fields_set == set()


NESTED_WORLD_MODELS = """
import json, sys
from pydantic import BaseModel, TypeAdapter
from agentworld.core.world import models as m
if sys.argv[1] == "adapter":
    schema = TypeAdapter(m.WorldData).json_schema()
    print(json.dumps(schema["properties"]["rules"]["default"]))
elif sys.argv[1] == "list":
    schema = TypeAdapter(list[m.ItemDef]).json_schema()
    print(json.dumps(schema["$defs"]["ItemDef"]["properties"]["stats"]["default"]))
else:
    class Holder(BaseModel):  # a plugin's model holding one: neither ItemDef nor WorldData is built as a class
        item: m.ItemDef
        world: m.WorldData
    schema = Holder.model_json_schema()
    print(json.dumps(schema["$defs"]["ItemDef"]["properties"]["stats"]["default"]))
"""


def test_a_schema_holding_a_world_model_shows_its_defaults_when_that_class_is_not_built():
    """The defaults serialise in a JSON schema that holds their model without building it (a TypeAdapter,
    another model): there pydantic-core writes the default."""
    from agentworld.core.world import models as m

    for case, default in (("adapter", m.Rules()), ("list", m.ItemStats()), ("holder", m.ItemStats())):
        out = subprocess.run([sys.executable, "-c", NESTED_WORLD_MODELS, case], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, f"{case}: {out.stderr[-800:]}"
        assert json.loads(out.stdout) == default.model_dump(mode="json"), case


def test_a_mistyped_command_is_told_the_nearest_one():
    out = subprocess.run([sys.executable, "-c", "from agentworld.core.cli import main; main()", "rnu"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "No such command 'rnu'" in out.stderr and "Did you mean 'run'" in out.stderr


MAIN_IN_PROCESS = """
import gc, json
import click
from agentworld.core.cli import cli, main
seen = {}
cli.add_command(click.Command("probe", callback=lambda: seen.update(thresholds=gc.get_threshold())))
gc.set_threshold(700, 10, 10)
try:
    main()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "during": seen["thresholds"], "after": gc.get_threshold(),
                  "frozen": gc.get_freeze_count()}))
"""


def test_main_sets_the_collector_while_its_command_runs_and_gives_it_back():
    """``main()`` runs its command with the program's collector thresholds (core/cli/collector.py) and gives
    the caller's back when it returns; what is alive is frozen only when the process exits."""
    from agentworld.core.cli.collector import THRESHOLDS

    out = subprocess.run([sys.executable, "-c", MAIN_IN_PROCESS, "probe"], capture_output=True, text=True,
                         timeout=120, check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == {"code": 0, "during": list(THRESHOLDS),
                                                       "after": [700, 10, 10], "frozen": 0}


def test_the_run_paths_dataclasses_have_docstrings():
    """A dataclass without a docstring gets one made from ``inspect.signature`` at class creation: ~3 ms for
    the 27 fields of ``Player`` on this project's machines, ~9 ms for the run path's undocumented ones. Checked
    in a fresh process: the modules a run imports."""
    code = ("import json, sys, dataclasses\n"
            "import agentworld.core.runs.runner, agentworld.core.play.episode, agentworld.core.world.engine\n"
            "import agentworld.core.cli.runs, agentworld.core.play.policies\n"
            "from agentworld.core import plugins\n"
            "plugins.get_plugin_manager()\n"
            "auto = sorted(f'{c.__module__}.{c.__qualname__}' for m in list(sys.modules.values())\n"
            "              if getattr(m, '__name__', '').startswith('agentworld.') for c in vars(m).values()\n"
            "              if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == m.__name__\n"
            "              and (c.__doc__ or '').startswith(c.__name__ + '('))\n"
            "print(json.dumps(auto))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout) == [], "give these dataclasses a docstring"


def test_the_task_files_parse_only_models_are_created_when_a_file_is_parsed():
    """task.py names the task file's parse-only models (``task.YamlTask``) but creates them only on first use,
    from task_file.py; a run of a cached task never needs them."""
    code = ("import json, sys\nfrom agentworld.core.tasks import task\n"
            "before = 'agentworld.core.tasks.task_file' in sys.modules\n"
            "from agentworld.core.tasks import task_file\n"
            "same = all(getattr(task, n) is getattr(task_file, n) for n in task._FILE_MODELS)\n"
            "try:\n    task.NoSuchModel\n    missing = False\nexcept AttributeError:\n    missing = True\n"
            "print(json.dumps([before, same, missing]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, True, True]
