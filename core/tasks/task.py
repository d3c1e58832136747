"""Tasks: the YAML schema (a superset of the paper's), the loader, and validation against the world.

A task file is read in two passes. First its structure is checked with pydantic models that use the YAML's
own field names (``agent_2.inventory_items[1].item``), so every error can name the field as written. Then
the content is checked against the world data pack: item, mob, node and skill keys, spawn tiles, skill
levels, whether the objective's items can be obtained at all by this team, verifier checks and the
reference solution. Every problem is collected, and one :class:`TaskError` lists them all with a fix.

A task in the paper's own format (``agent_N`` blocks, no ``verifier``, no ``id``) loads too: its id comes
from the file name and it is marked unverifiable (``task.verifiable`` is False).
"""

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from ..world.api import PlayerSpec, StackSpec
from ..world.events import TaskMechanics, hidden_values, placeholders, resolve_args, spawned_ids
from ..world.factories import empty_list
from ..world.models import SKILLS, Rules
from .problems import Problem as Problem, TaskError as TaskError  # re-exported: callers import them from here
from .problems import did_you_mean as did_you_mean, excerpt as excerpt
from .mobs import TaskMob, TaskNode, check_blocks
from .task_parts import CheckSpec as CheckSpec  # re-exported: solo.py, bench_play.py import it from here
from .task_parts import Category, Objectives, Step, VerifierSpec, YamlStack

if TYPE_CHECKING:  # pragma: no cover
    import yaml

    from ..world.datapack import LoadedWorld

CATEGORIES: tuple[str, ...] = (
    "combat", "crafting", "gathering", "trading", "exploration", "survival", "construction", "coordination",
)
SUITES: tuple[str, ...] = ("main", "augmented")
_AGENT_KEY = re.compile(r"^agent_[A-Za-z0-9_]+$")  # the paper: every top-level key starting with agent_


# ---------------------------------------------------------------------------------------------------
# The YAML as written (field names exactly as in the file): task_parts.py (the parts a Task keeps) and
# task_file.py (the rest of the file's layout, imported only to parse a file)
# ---------------------------------------------------------------------------------------------------
_FILE_MODELS = ("YamlLocation", "YamlAgent", "YamlTaskHead", "YamlTask")


def __getattr__(name: str) -> Any:
    """``task.YamlTask`` and the file's other parse-only models, from task_file.py on first use."""
    if name in _FILE_MODELS:
        from . import task_file

        return getattr(task_file, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------------------
# The task as the harness uses it
# ---------------------------------------------------------------------------------------------------
class AgentDef(BaseModel):
    model_config = ConfigDict(defer_build=True)
    agent_id: str  # the YAML key, "agent_1"
    username: str
    x: int
    y: int
    skills: dict[str, int] = Field(default_factory=dict)
    inventory: list[YamlStack] = Field(default_factory=empty_list)
    equipment: list[YamlStack] = Field(default_factory=empty_list)
    role: str = ""
    guideline: str = ""
    new_character: bool = True

    def player_spec(self) -> PlayerSpec:
        return PlayerSpec(
            agent_id=self.agent_id, username=self.username, x=self.x, y=self.y, skills=dict(self.skills),
            inventory=[StackSpec(item=s.item, count=s.count, enchant=s.enchant) for s in self.inventory],
            equipment=[StackSpec(item=s.item, count=s.count, enchant=s.enchant) for s in self.equipment])


class Task(BaseModel):
    model_config = ConfigDict(defer_build=True)
    id: str
    paper_id: str | None = None
    name: str
    description: str = ""
    category: Category | None = None
    design: str | None = None  # the design (scenario) the task is built from: a snake_case id
    needs_communication: bool = False
    objectives: Objectives
    relevant_game_context: str = ""
    max_action_steps: int = 25
    rounds: int = 55
    shared_plan: str | None = None
    agents: list[AgentDef]
    success_criteria: list[str] = Field(default_factory=empty_list)
    world_rules: dict[str, Any] = Field(default_factory=dict)
    mobs: dict[str, TaskMob] = Field(default_factory=dict)  # moving mobs: roam / patrol / speed (tasks/mobs.py)
    nodes: dict[str, TaskNode] = Field(default_factory=dict)  # finite nodes: total (tasks/mobs.py)
    verifier: VerifierSpec | None = None
    reference_solution: dict[str, list[Step]] | None = None
    mechanics: TaskMechanics | None = None  # events, joint actions, hidden information (None: the task has none)
    path: str | None = None
    raw: dict[str, Any] = Field(default_factory=dict, repr=False)  # the parsed YAML, for exporters
    _agents_by_ref: tuple[list[AgentDef], int, dict[str, AgentDef]] | None = PrivateAttr(default=None)

    @property
    def verifiable(self) -> bool:
        return self.verifier is not None and bool(self.verifier.checks or self.verifier.python)

    @property
    def agent_ids(self) -> list[str]:
        return [a.agent_id for a in self.agents]

    def _agent_index(self) -> dict[str, AgentDef]:
        """id or username -> agent (the first agent in order wins a clash), rebuilt when ``agents`` changes."""
        cached = self._agents_by_ref
        if cached is None or cached[0] is not self.agents or cached[1] != len(self.agents):
            index: dict[str, AgentDef] = {}
            for a in self.agents:
                index.setdefault(a.agent_id, a)
                index.setdefault(a.username, a)
            cached = self._agents_by_ref = (self.agents, len(self.agents), index)
        return cached[2]

    def agent(self, ref: str) -> AgentDef:
        """An agent by id ("agent_3") or username."""
        found = self._agent_index().get(ref) if isinstance(ref, str) else None
        if found is None:
            raise KeyError(f"task {self.id} has no agent {ref!r}; agents: {', '.join(self.agent_ids)}")
        return found

    def resolve_agent(self, ref: str) -> str | None:
        """Agent id for an id or username, None if unknown."""
        found = self._agent_index().get(ref) if isinstance(ref, str) else None
        return found.agent_id if found is not None else None


# ---------------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------------
def _field_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _pydantic_problems(exc: ValidationError, prefix: tuple[Any, ...], allowed: list[str]) -> list[Problem]:
    problems = []
    for err in exc.errors():
        loc = prefix + tuple(err["loc"])
        field = _field_path(loc)
        if err["type"] == "extra_forbidden":
            key = str(err["loc"][-1])
            parent_allowed = allowed if len(err["loc"]) == 1 else []
            fix = (did_you_mean(key, parent_allowed, "field") if parent_allowed
                   else "remove it (it is not part of the task schema) or check its spelling")
            problems.append(Problem(field, f"unknown field '{key}'", fix))
        elif err["type"] == "missing":
            problems.append(Problem(field, "required field is missing", "add it"))
        elif err["type"] == "literal_error" and loc[-1] == "category":
            problems.append(Problem(field, f"unknown category {excerpt(err.get('input'))}",
                                    did_you_mean(str(err.get("input"))[:60], CATEGORIES, "category")))
        elif err["type"] == "value_error" and loc == ("design",):
            from .task_file import snake_case

            problems.append(Problem(field, str(err["msg"]).removeprefix("Value error, "),
                                    f"write it as design: {snake_case(str(err.get('input')))}"))
        elif err["type"] == "value_error":  # a block's own rule (an event needs its fields, a place one anchor)
            problems.append(Problem(field, str(err["msg"]).removeprefix("Value error, "),
                                    "add or fix the fields it names (docs/tasks.md describes the block)"))
        else:
            problems.append(Problem(field, f"{err['msg']} (got {excerpt(err.get('input'))})",
                                    "give a value of the right type/range"))
    return problems


def _check_usernames(agents: list[AgentDef]) -> list[Problem]:
    """Unique usernames, none equal to an agent id: a reference such as ``agent: agent_3`` or
    ``targetPlayer: agent_3`` resolves by id or username, so an overlap would point at the wrong agent."""
    problems: list[Problem] = []
    ids = {a.agent_id for a in agents}
    seen: dict[str, str] = {}
    for a in agents:
        name = excerpt(a.username)
        if a.username in seen:
            problems.append(Problem(f"{a.agent_id}.username", f"username {name} is also used by {seen[a.username]}",
                                    "give every agent its own username"))
        elif a.username in ids and a.username != a.agent_id:
            problems.append(Problem(f"{a.agent_id}.username", f"username {name} is the id of another agent",
                                    "choose a username that is not an agent_N key, e.g. the agent's role"))
        seen.setdefault(a.username, a.agent_id)
    return problems


def parse_task(raw: Any, file: str, default_id: str) -> Task:
    """Structure pass: YAML dict -> Task, raising TaskError with every structural problem."""
    if not isinstance(raw, dict):
        raise TaskError(file, [Problem("(top level)", f"a task file must be a YAML mapping, got {type(raw).__name__}",
                                       "start from a shipped task, e.g. tasks/main/task_205_goldfield_two_forges.yaml")])
    problems: list[Problem] = []
    agent_keys = [k for k in raw if isinstance(k, str) and _AGENT_KEY.match(k)]
    rest = {k: v for k, v in raw.items() if k not in agent_keys}
    from .task_file import YamlAgent, YamlTask

    allowed = list(YamlTask.model_fields) + ["agent_1"]
    head: YamlTask | None = None
    try:
        head = YamlTask.model_validate(rest)
    except ValidationError as exc:
        problems += _pydantic_problems(exc, (), allowed)
    agents: list[AgentDef] = []
    if not agent_keys:
        problems.append(Problem("agent_1", "the task has no agents", "add agent_1, agent_2, ... blocks"))
    for key in agent_keys:
        try:
            block = YamlAgent.model_validate(raw[key])
        except ValidationError as exc:
            problems += _pydantic_problems(exc, (key,), [])
            continue
        agents.append(AgentDef(
            agent_id=key, username=block.username, x=block.location.x, y=block.location.y,
            skills=dict(block.skill_levels), inventory=list(block.inventory_items),
            equipment=list(block.equipped_items), role=block.role, guideline=block.guideline,
            new_character=block.new_character))
    problems += _check_usernames(agents)
    if problems or head is None:
        raise TaskError(file, problems)
    task_id = head.id or default_id
    if not re.match(r"^[A-Za-z0-9_.-]+$", task_id):
        raise TaskError(file, [Problem("id", f"task id {task_id!r} has characters other than letters, digits, '_', '.', '-'",
                                       "rename it, e.g. task_09_bridge")])
    return Task(
        id=task_id, paper_id=head.paper_id, name=head.task.name, description=head.task.description, category=head.category,
        design=head.design, needs_communication=head.needs_communication, objectives=head.objectives, relevant_game_context=head.relevant_game_context,
        max_action_steps=head.max_action_steps, rounds=head.rounds, shared_plan=head.shared_plan,
        agents=agents, success_criteria=head.success_criteria, world_rules=head.world_rules,
        mobs=head.mobs, nodes=head.nodes,
        verifier=head.verifier, reference_solution=head.reference_solution, path=file, raw=_masked(raw, agent_keys),
        mechanics=TaskMechanics(events=head.events, joint_actions=head.joint_actions, hidden=head.hidden)
        if head.events or head.joint_actions or head.hidden else None)


def _masked(raw: dict[str, Any], agent_keys: list[str]) -> dict[str, Any]:
    """``raw`` without the agents' passwords (it is written to task.json and to the paper-format export)."""
    out = dict(raw)
    for key in agent_keys:
        if isinstance(out[key], dict) and "password" in out[key]:
            out[key] = {k: ("***" if k == "password" else v) for k, v in out[key].items()}
    return out


def load_task(path: str | Path, *, validate: bool = True, world: "LoadedWorld | None" = None) -> Task:
    """Read, parse and (by default) validate a task file against the world. Raises TaskError.

    A file validated against the default world before, and unchanged since, comes from the task cache
    (``taskcache.py``) instead: the same task, without parsing or validating it again. That holds for a load
    without validation too (a task that passed validation is also what parsing alone gives); such a load
    never writes an entry, since only validated tasks are kept."""
    p = Path(path)
    file = str(p)
    entry = None
    if world is None:
        from . import taskcache

        data = taskcache.read_small(p)  # None: missing, unreadable or large; the parse below reports it
        entry = taskcache.entry_for(file, data) if data is not None else None
        kept = taskcache.load(entry) if entry is not None else None
        if isinstance(kept, Task):
            return kept
    task = _parse_file(p, file)
    if not validate:
        return task
    task = _validated(task, file, world)
    if entry is not None:
        taskcache.store(entry, task)
    return task


def _parse_file(p: Path, file: str) -> Task:
    import yaml

    from ..yamlio import YamlInputError, load_yaml, read_yaml_file

    try:
        text = read_yaml_file(p)
        raw = load_yaml(text)
    except OSError as exc:
        raise TaskError(file, [Problem("(file)", f"cannot read the file: {exc.strerror or exc}",
                                       "check the path (`agentworld tasks list` shows the shipped tasks)")]) from None
    except YamlInputError as exc:
        raise TaskError(file, [Problem(exc.where, exc.message, exc.fix)]) from None
    except yaml.YAMLError as exc:
        raise TaskError(file, [_yaml_problem(exc, text)]) from None
    return parse_task(raw, file, default_id=p.stem)


def _yaml_problem(exc: "yaml.YAMLError", text: str) -> Problem:
    """A YAML syntax error as a Problem at its line (libyaml's text names "<unicode string>", not the file)."""
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        where = f"line {mark.line + 1}, column {mark.column + 1}"
    elif isinstance(getattr(exc, "position", None), int):  # a ReaderError: a character YAML does not allow
        where = f"line {text.count(chr(10), 0, exc.position) + 1}"
    else:
        where = "(file)"
    what = getattr(exc, "problem", None) or getattr(exc, "reason", None) or str(exc).splitlines()[0]
    if isinstance(getattr(exc, "character", None), (int, str)) and getattr(exc, "reason", None):
        char = exc.character if isinstance(exc.character, int) else ord(exc.character)
        what = f"{exc.reason} (character U+{char:04X})"
    return Problem(where, f"not valid YAML: {excerpt(what, 200).strip(chr(39))}",
                   "fix the YAML syntax (indentation, quotes, colons)")


def _validated(task: Task, file: str, world: "LoadedWorld | None" = None) -> Task:
    """``task`` if it is valid against the world; otherwise a TaskError listing every problem."""
    problems = validate_task(task, world)
    if problems:
        raise TaskError(file, problems)
    return task


def suite_files(suite: str) -> list[Path]:
    if suite not in SUITES:
        raise ValueError(f"unknown task suite {suite!r}; suites: {', '.join(SUITES)}")
    root = _suite_dir(suite)
    if not root.is_dir():
        return []
    return sorted(f for f in root.iterdir() if f.name.endswith((".yaml", ".yml")))


def _suite_dir(suite: str) -> Path:
    """The folder of a shipped suite, in the installed package ``agentworld.tasks`` (the package's own folder:
    ``importlib.resources`` would give the same path, after importing its readers)."""
    from ... import tasks as shipped

    return Path(shipped.__file__).parent / suite


def _shipped_file(ref: str) -> Path | None:
    """The file ``find_task`` would find by name for a shipped task id: ``<ref>.yaml`` (or ``.yml``) in the first
    suite that has one, without listing the suites (a name with a path separator is no id)."""
    if not ref or ref != Path(ref).name:
        return None
    for suite in SUITES:
        root = _suite_dir(suite)
        try:
            names = set(os.listdir(root))
        except OSError:
            continue
        for ext in (".yaml", ".yml"):  # the order of suite_files' sorted names: '.yaml' < '.yml'
            if ref + ext in names:
                return root / (ref + ext)
    return None


def load_suite(suite: str = "main", *, validate: bool = True) -> list[Task]:
    return [load_task(p, validate=validate) for p in suite_files(suite)]


_FILE_IDS: dict[Path, tuple[int, int, str]] = {}  # file -> (mtime_ns, size, the id its task has)


def _file_task_id(f: Path) -> str:
    """The id of the task in ``f``, remembered while the file is unchanged: an unknown id (a synthetic episode
    scored by CCE, a typo) would otherwise parse every shipped task file at every lookup."""
    st = f.stat()
    kept = _FILE_IDS.get(f)
    if kept is not None and kept[:2] == (st.st_mtime_ns, st.st_size):
        return kept[2]
    task_id = load_task(f, validate=False).id
    _FILE_IDS[f] = (st.st_mtime_ns, st.st_size, task_id)
    return task_id


def find_task(ref: str, *, validate: bool = True) -> Task:
    """A task by id (searched in the shipped suites) or by path to a YAML file."""
    p = Path(ref)
    if p.suffix in (".yaml", ".yml") or p.is_file():
        return load_task(p, validate=validate)
    shipped = _shipped_file(ref)
    if shipped is not None:
        return load_task(shipped, validate=validate)
    ids: list[str] = []
    for suite in SUITES:
        for f in suite_files(suite):
            if f.stem == ref:
                return load_task(f, validate=validate)
            ids.append(f.stem)
    # ids may differ from file names: fall back to the files' id fields
    for suite in SUITES:
        for f in suite_files(suite):
            task_id = _file_task_id(f)
            if task_id == ref:
                t = load_task(f, validate=False)
                return _validated(t, str(f)) if validate else t
            ids.append(task_id)
    raise KeyError(f"no task {ref!r}; {did_you_mean(ref, ids, 'task id')} (`agentworld tasks list` shows them all)")


# ---------------------------------------------------------------------------------------------------
# Validation against the world
# ---------------------------------------------------------------------------------------------------
def _default_world() -> "LoadedWorld":
    from ..world.datapack import load_world

    return load_world()


class WorldIndex:
    """Lookups over a loaded world that validation, variants and policies share."""

    def __init__(self, loaded: "LoadedWorld"):
        self.loaded = loaded
        data = loaded.data
        self.items = {i.key: i for i in data.items}
        self.recipes = list(data.recipes)
        self.recipes_by_output: dict[str, list[Any]] = {}
        for r in data.recipes:
            for out in r.outputs:
                self.recipes_by_output.setdefault(out, []).append(r)
        self.node_types = {n.key: n for n in data.node_types}
        self.mob_types = {m.key: m for m in data.mob_types}
        self.landmarks = {lm.key: lm for lm in data.landmarks}
        self.node_ids = {n.id: n for n in loaded.nodes}
        self.mob_ids = {m.id: m for m in loaded.mobs}
        self.max_level = data.xp_curve.max_level
        self.yielded_by: dict[str, list[Any]] = {}
        for n in data.node_types:
            for y in n.yields:
                self.yielded_by.setdefault(y.item, []).append(n)
        self.dropped_by: dict[str, list[Any]] = {}
        for m in data.mob_types:
            for d in m.drops:
                self.dropped_by.setdefault(d.item, []).append(m)


_INDEX_CACHE: dict[int, WorldIndex] = {}


def world_index(loaded: "LoadedWorld | None" = None) -> WorldIndex:
    loaded = loaded or _default_world()
    idx = _INDEX_CACHE.get(id(loaded))
    if idx is None or idx.loaded is not loaded:
        idx = _INDEX_CACHE[id(loaded)] = WorldIndex(loaded)
    return idx


def validate_task(task: Task, world: "LoadedWorld | None" = None) -> list[Problem]:
    """Every problem of the task against the world data (empty list: the task is usable)."""
    w = world_index(world)
    problems: list[Problem] = []
    problems += _check_rules(task)
    problems += [Problem(f, what, fix) for f, what, fix in check_blocks(task, w.loaded)]
    problems += _check_agents(task, w)
    if task.verifier is not None:
        problems += _check_verifier(task, w)
        problems += _check_objective_reachable(task, w)
    if task.reference_solution is not None:
        problems += _check_reference(task, w)
    if task.mechanics:
        from .mechanics import mechanics_problems

        problems += mechanics_problems(task, w)
    from .briefs import brief_problems  # the brief's words against the world and the verifier

    problems += brief_problems(task, w)
    return problems


def structure_problems(task: Task) -> list[Problem]:
    """What can be checked without the world's data (for a world backend whose items and map we do not
    have, such as a game server): world rules, verifier check names and parameters, the plan's tool calls."""
    from ..world.tools import TOOLS, ToolArgsError
    from .verify import Check, known_names, lookup

    problems = _check_rules(task)
    for i, spec in enumerate(task.verifier.checks if task.verifier else []):
        check = lookup(spec.check)
        if not isinstance(check, Check):
            problems.append(Problem(f"verifier.checks[{i}].check", f"unknown check '{spec.check}'",
                                    did_you_mean(spec.check, known_names("check"), "check")))
            continue
        try:
            check.params.model_validate(spec.params)
        except ValidationError as exc:
            problems.append(Problem(f"verifier.checks[{i}]", f"bad parameters for '{spec.check}': "
                                    + "; ".join(e["msg"] for e in exc.errors()), "fix the check's parameters"))
    for agent_key, steps in (task.reference_solution or {}).items():
        if agent_key not in task.agent_ids:
            problems.append(Problem(f"reference_solution.{agent_key}", f"unknown agent '{agent_key}'",
                                    did_you_mean(agent_key, task.agent_ids, "agent")))
            continue
        for j, step in enumerate(steps):
            f = f"reference_solution.{agent_key}[{j}]"
            if step.tool not in TOOLS:
                problems.append(Problem(f"{f}.tool", f"unknown tool '{step.tool}'", did_you_mean(step.tool, TOOLS, "tool")))
                continue
            try:
                TOOLS[step.tool].parse(step.args)
            except ToolArgsError as exc:
                problems.append(Problem(f"{f}.args", str(exc), "use the tool's parameter names and types"))
    return problems


def _check_rules(task: Task) -> list[Problem]:
    problems = []
    for key in task.world_rules:
        if key not in Rules.model_fields:
            shown = excerpt(key).strip("'")
            problems.append(Problem(f"world_rules.{shown}", f"unknown world rule '{shown}'",
                                    did_you_mean(str(key)[:60], Rules.model_fields, "rule")))
    known = {k: v for k, v in task.world_rules.items() if k in Rules.model_fields}
    try:
        Rules(**known)
    except ValidationError as exc:
        for err in exc.errors():
            name = str(err["loc"][0]) if err["loc"] else ""
            field = Rules.model_fields.get(name)
            limits = _range_of(field) if field is not None else ""
            problems.append(Problem(f"world_rules.{_field_path(tuple(err['loc']))}",
                                    f"{err['msg']} (got {excerpt(err.get('input'))})",
                                    f"give a value of the rule's type{limits}"))
    return problems


def _range_of(field: Any) -> str:
    """", a finite number from 0 to 1" style hint from a rule's pydantic constraints (ge/le/gt)."""
    lo = hi = None
    for m in field.metadata:
        lo = getattr(m, "ge", None) if getattr(m, "ge", None) is not None else lo
        lo = getattr(m, "gt", None) if getattr(m, "gt", None) is not None else lo
        hi = getattr(m, "le", None) if getattr(m, "le", None) is not None else hi
    if lo is None and hi is None:
        return ""
    kind = "a finite number" if field.annotation is float else "a whole number"
    return f": {kind} from {lo} to {hi}" if hi is not None else f": {kind} of at least {lo}"


def _check_items(field: str, stacks: list[YamlStack], w: WorldIndex, equip: bool) -> list[Problem]:
    problems = []
    for i, s in enumerate(stacks):
        f = f"{field}[{i}].item"
        item = w.items.get(s.item)
        if item is None:
            problems.append(Problem(f, f"unknown item '{s.item}'", _item_fix(s.item, w)))
        elif equip and item.slot is None:
            problems.append(Problem(f, f"item '{s.item}' cannot be equipped (it has no equipment slot)",
                                    "move it to inventory_items"))
        if s.enchant:
            problems.append(Problem(f"{field}[{i}].enchant", f"enchant {s.enchant}: this world has no enchantments",
                                    "remove enchant or set it to 0 (`agentworld tasks port` drops it)"))
    return problems


def _item_fix(key: str, w: WorldIndex) -> str:
    """The paper's mapped item when ``key`` is one of the paper's keys (``flask``), else the closest spelling."""
    from .paper_mapping import paper_mapping

    return paper_mapping().item_hint(key) or did_you_mean(key, w.items, "item key")


def _check_agents(task: Task, w: WorldIndex) -> list[Problem]:
    problems: list[Problem] = []
    gmap = w.loaded.map
    for a in task.agents:
        f = a.agent_id
        if not gmap.in_bounds(a.x, a.y):
            near = _nearest_walkable(gmap, a.x, a.y)
            problems.append(Problem(f"{f}.location", f"spawn ({a.x},{a.y}) is off the map ({gmap.width}x{gmap.height})",
                                    f"use 0 <= x < {gmap.width} and 0 <= y < {gmap.height}; the nearest walkable "
                                    f"tile is ({near[0]},{near[1]})"))
        elif not gmap.walkable(a.x, a.y):
            near = _nearest_walkable(gmap, a.x, a.y)
            problems.append(Problem(f"{f}.location", f"spawn ({a.x},{a.y}) is blocked ({gmap.biome_at(a.x, a.y)})",
                                    f"the nearest walkable tile is ({near[0]},{near[1]})"))
        for skill, level in a.skills.items():
            if skill not in SKILLS:
                problems.append(Problem(f"{f}.skill_levels.{skill}", f"unknown skill '{skill}'",
                                        did_you_mean(skill, SKILLS, "skill")))
            elif not 1 <= level <= w.max_level:
                problems.append(Problem(f"{f}.skill_levels.{skill}", f"level {level} is out of range",
                                        f"use a level from 1 to {w.max_level}"))
        problems += _check_items(f"{f}.inventory_items", a.inventory, w, equip=False)
        problems += _check_items(f"{f}.equipped_items", a.equipment, w, equip=True)
        problems += _check_fits(task, a, w)
    return problems


def _check_fits(task: Task, a: AgentDef, w: WorldIndex) -> list[Problem]:
    """The starting inventory fits the inventory slots, and each equipment slot holds at most one item
    (the engine would refuse the player when the episode starts)."""
    problems: list[Problem] = []
    slots = task.world_rules.get("inventory_slots", w.loaded.data.rules.inventory_slots)
    if isinstance(slots, int) and not isinstance(slots, bool) and slots >= 1:  # else: a bad rule, reported
        need = 0
        keys: set[str] = set()
        for s in a.inventory:
            item = w.items.get(s.item)
            if item is None:
                continue  # reported as an unknown item
            if item.stackable:
                need += s.item not in keys  # stackable items share one slot per key
                keys.add(s.item)
            else:
                need += s.count  # one slot each
        if need > slots:
            problems.append(Problem(f"{a.agent_id}.inventory_items", f"the starting inventory needs {need} slot{'s' if need != 1 else ''}, "
                                    f"but there are {slots} (world_rules.inventory_slots)",
                                    "give fewer items (equipment takes one slot each) or raise inventory_slots"))
    used: dict[str, int] = {}
    for i, s in enumerate(a.equipment):
        item = w.items.get(s.item)
        if item is None or item.slot is None:
            continue  # reported by _check_items
        if item.slot in used:
            problems.append(Problem(f"{a.agent_id}.equipped_items[{i}].item",
                                    f"'{s.item}' goes in the {item.slot} slot, which equipped_items[{used[item.slot]}] "
                                    f"already fills", "equip one item per slot; move the other to inventory_items"))
        else:
            used[item.slot] = i
    return problems


def _nearest_walkable(gmap: Any, x: int, y: int) -> tuple[int, int]:
    """The walkable tile nearest to (x, y) clamped onto the map: close by first, then as far as it takes."""
    cx, cy = min(max(x, 0), gmap.width - 1), min(max(y, 0), gmap.height - 1)
    near = gmap.nearest_walkable(cx, cy, max_radius=20) or gmap.nearest_walkable(cx, cy, max_radius=gmap.width + gmap.height)
    assert near is not None, "a map without walkable land"
    return near


def _check_verifier(task: Task, w: WorldIndex) -> list[Problem]:
    from .verify import Check, known_names, lookup

    problems: list[Problem] = []
    assert task.verifier is not None
    for i, spec in enumerate(task.verifier.checks):
        f = f"verifier.checks[{i}]"
        check = lookup(spec.check)
        if not isinstance(check, Check):
            problems.append(Problem(f"{f}.check", f"unknown check '{spec.check}'",
                                    did_you_mean(spec.check, known_names("check"), "check")))
            continue
        try:
            params = check.params.model_validate(spec.params)
        except ValidationError as exc:
            for err in exc.errors():
                loc = f"{f}.{_field_path(tuple(err['loc']))}"
                if err["type"] == "extra_forbidden":
                    allowed = [k for k in check.params.model_fields]
                    problems.append(Problem(loc, f"check '{spec.check}' has no parameter '{err['loc'][-1]}'",
                                            did_you_mean(str(err["loc"][-1]), allowed, "parameter")))
                elif err["type"] == "missing":
                    problems.append(Problem(loc, f"check '{spec.check}' needs this parameter", "add it"))
                else:
                    problems.append(Problem(loc, f"{err['msg']} (got {err.get('input')!r})", "fix the value"))
            continue
        for pf, message, fix in check.validate_refs(params, task, w):
            problems.append(Problem(f"{f}.{pf}", message, fix))
    if task.verifier.python:
        if lookup(task.verifier.python) is None:
            problems.append(Problem("verifier.python", f"no verifier named '{task.verifier.python}' is registered",
                                    did_you_mean(task.verifier.python, known_names("any"), "registered verifier")))
    return problems


def _check_reference(task: Task, w: WorldIndex) -> list[Problem]:
    from ..world.tools import TOOLS, ToolArgsError

    problems: list[Problem] = []
    usernames = {a.username for a in task.agents}
    spawned = spawned_ids(task.mechanics)  # raiders a task's event brings can be attacked too
    # a step may name a hidden thing drawn from the seed by placeholder ({hidden.ID}): checked as seed 0 draws it
    values = hidden_values(task.mechanics, 0, w.loaded) if task.mechanics and task.mechanics.hidden else {}
    assert task.reference_solution is not None
    for agent_key, steps in task.reference_solution.items():
        base = f"reference_solution.{agent_key}"
        if agent_key not in task.agent_ids:
            problems.append(Problem(base, f"unknown agent '{agent_key}'", did_you_mean(agent_key, task.agent_ids, "agent")))
            continue
        for i, step in enumerate(steps):
            f = f"{base}[{i}]"
            spec = TOOLS.get(step.tool)
            if spec is None:
                problems.append(Problem(f"{f}.tool", f"unknown tool '{step.tool}'", did_you_mean(step.tool, TOOLS, "tool")))
                continue
            unknown = [ph for v in step.args.values() for ph in placeholders(v) if ph not in values]
            if unknown:
                problems.append(Problem(f"{f}.args", f"unknown placeholder {{{unknown[0]}}}",
                                        "name a hidden entry by its id: {hidden.ID}, {hidden.ID.x}, {hidden.ID.y}"))
                continue
            try:
                args = spec.parse(resolve_args(step.args, values) if values else step.args)
            except ToolArgsError as exc:
                problems.append(Problem(f"{f}.args", str(exc), "use the tool's parameter names and types"))
                continue
            target = getattr(args, "target_instance", None)
            if step.tool == "harvest_resource" and target not in w.node_ids:
                problems.append(Problem(f"{f}.args.targetInstance", f"no resource node '{target}' in the world",
                                        did_you_mean(str(target), _near_ids(target, w.node_ids), "node id")))
            if step.tool == "attack_entity" and target not in w.mob_ids and target not in spawned:
                problems.append(Problem(f"{f}.args.targetInstance", f"no mob '{target}' in the world",
                                        did_you_mean(str(target), _near_ids(target, w.mob_ids), "mob id")))
            if step.tool == "transfer_items":
                if args.target_player not in usernames:
                    problems.append(Problem(f"{f}.args.targetPlayer", f"no teammate named '{args.target_player}'",
                                            did_you_mean(args.target_player, usernames, "username")))
            item_key = getattr(args, "item_key", None)
            if item_key and item_key not in w.items:
                problems.append(Problem(f"{f}.args.itemKey", f"unknown item '{item_key}'",
                                        did_you_mean(item_key, w.items, "item key")))
    return problems


def _near_ids(target: Any, ids: dict[str, Any]) -> list[str]:
    """Ids of the same type as ``target`` (keeps did-you-mean lists short on a world of thousands)."""
    prefix = str(target).split("#")[0]
    same = [i for i in ids if i.split("#")[0] == prefix]
    return same or list(ids)


# -- can the team obtain the objective's items at all? (static, over recipes, nodes and drops) ---------
def team_skills(task: Task) -> dict[str, int]:
    best: dict[str, int] = {}
    for a in task.agents:
        for s, lv in a.skills.items():
            best[s] = max(best.get(s, 1), lv)
    return best


def _obtainable(item: str, task: Task, w: WorldIndex, skills: dict[str, int], held: set[str],
                seen: frozenset[str] = frozenset()) -> str | None:
    """None if the team can obtain ``item``; otherwise why not (the first blocking reason)."""
    if item in held:
        return None
    if item in seen:
        return f"'{item}' can only be made from itself"
    seen = seen | {item}
    reasons = []
    tools_held = {w.items[i].tool_type for i in held if i in w.items and w.items[i].tool_type}
    for node in w.yielded_by.get(item, []):
        need = skills.get(node.skill, 1)
        if need < node.level:
            reasons.append(f"{node.key} needs {node.skill} {node.level} (team best {need})")
            continue
        if node.tool and node.tool not in tools_held and not _tool_obtainable(node.tool, task, w, skills, held, seen):
            reasons.append(f"{node.key} needs a {node.tool}")
            continue
        return None
    if w.dropped_by.get(item):
        return None  # mobs drop it (fights are a matter of play, not of static reachability)
    for r in w.recipes_by_output.get(item, []):
        have = skills.get(r.skill, 1)
        if have < r.level:
            reasons.append(f"recipe {r.key} needs {r.skill} {r.level} (team best {have})")
            continue
        if r.tool and r.tool not in tools_held and not _tool_obtainable(r.tool, task, w, skills, held, seen):
            reasons.append(f"recipe {r.key} needs a {r.tool}")
            continue
        missing = [(i, _obtainable(i, task, w, skills, held, seen)) for i in r.inputs]
        bad = [(i, why) for i, why in missing if why]
        if not bad:
            return None
        reasons.append(f"recipe {r.key} needs '{bad[0][0]}': {bad[0][1]}")
    if not reasons:
        return f"no agent holds '{item}' and nothing in the world yields, drops or makes it"
    return "; ".join(reasons)


def _tool_obtainable(tool: str, task: Task, w: WorldIndex, skills: dict[str, int], held: set[str],
                     seen: frozenset[str]) -> bool:
    for key, item in w.items.items():
        if item.tool_type == tool and key not in seen and _obtainable(key, task, w, skills, held, seen) is None:
            return True
    return False


def _placed_items(task: Task) -> set[str]:
    """Items the task's mechanics lay on the ground (a heavy load, a cache): the team obtains them by picking
    them up, as it obtains a kit's items by holding them."""
    m = task.mechanics
    if m is None:
        return set()
    loads = {j.item for j in m.joint_actions if j.kind == "heavy_load" and j.item}
    return loads | {str(stack.get("item")) for h in m.hidden if h.kind == "cache" for stack in h.items}


def _check_objective_reachable(task: Task, w: WorldIndex) -> list[Problem]:
    from .verify import objective_items

    skills = team_skills(task)
    held = {s.item for a in task.agents for s in a.inventory + a.equipment} | _placed_items(task)
    problems = []
    for i, item in objective_items(task):
        if item not in w.items:
            continue  # already reported as an unknown item
        why = _obtainable(item, task, w, skills, held)
        if why:
            problems.append(Problem(f"verifier.checks[{i}]", f"the team cannot obtain '{item}': {why}",
                                    "raise the skill levels named above on one agent, or give an agent the missing items"))
    return problems
