"""Build task files from family templates: ``python tools/task_authoring/build.py [FAMILY_OR_TASK_ID ...]``.

A family (``tools/task_authoring/families/<name>.yaml``) is one task written once as a Jinja2-templated
YAML document (``template``) plus a list of ``variants``, each a mapping of template parameters and an
``id``. Rendering a variant gives an ordinary task file, except that its reference solution is written as
a short **plan** of macro steps per agent, which this script expands into the turn-by-turn
``reference_solution`` with the engine's own path search (so move counts and reach are right):

=====================================  ========================================================================
``{walk: [x, y], extra: n}``           ``move_character`` calls until the agent stands on (x, y), and n spare ones
                                       (an aggressive mob on the way stops a walk; a spare move at the goal is
                                       a no-op)
``{harvest: ID, times: n}``            walk into reach if needed, then ``harvest_resource`` n times (default 1)
``{attack: ID, times: n}``             the same with ``attack_entity``
``{craft: ITEM, skill: S, count: n}``  ``craft_item``
``{give: USER, item: K, count: n}``    ``transfer_items``
``{equip: K}``                         ``equip_item(itemKey=K)`` (food and potions: eat/drink)
``{pickup: ID, at: [x, y]}``           walk onto the ground item's tile, then ``pickup_resource``
``{say: TEXT}``                        ``chat`` (the whole team)
``{portal: true}``                     ``enter_portal``
``{sleep: n}``                         n waiting turns
``{call: TOOL, args: {...}}``          one call of any tool as written (``pickup_resource``, placeholders)
=====================================  ========================================================================

A ``harvest``/``attack`` target that is no fixed instance (``{hidden.vein}``, a spawned raider) takes
``at: [x, y]``, its tile as seed 0 draws it. A task's ``mobs``, ``nodes``, ``events``, ``joint_actions`` and
``hidden`` blocks are copied into the file as written.

Every rendered task names its design: ``design: <family name>`` (``tasks list --json`` shows it), so a
family's file name is a snake_case design id. A variant row may carry ``walk_aggro: false`` (with an optional
``walk_aggro_note``, the why): the task is written with ``world_rules: {walk_aggro: false}`` (walks are not
stopped by aggressive mobs; they still roam and strike at the tick). It is how the suite v2 tasks whose plans
walk through mob range keep passing; a new design routes around the mobs instead.

Every step may carry ``note: TEXT`` (written on its last call: why the step is there), ``id: LABEL`` and
``after: LABEL`` (or a list): the step is not taken before the round
after the labelled steps (a teammate's chat has arrived, a teammate has walked up for a hand-over). Rounds
where an agent has nothing to do become ``sleep`` turns. ``rounds`` defaults to about 2.4 times the plan's length
(kept in 25..55 and within 1.5x..3x) and ``max_action_steps`` to ``rounds``.

Template helpers (the only place the world data enters; see ``authoring.py``): ``node(type, near, k=0)``
and ``mob(type, near, k=0)`` (the k-th nearest instance: ``.id``, ``.x``, ``.y``, ``.text``), ``node_clear(type,
near, k=0, min_d=0)`` (the same, of the nodes whose stand tile no aggressive mob can reach),
``node_far(type, near, min_d, k=0)`` and ``mob_far(...)`` (the k-th nearest at least min_d tiles away),
``node_ids(type)`` (every node of a type), ``node_named(id)``, ``landmark(key)`` and ``station(kind, landmark)`` (``[x, y]``), ``spot(center, i, max_d=3)`` (the i-th
distinct walkable tile near a point), ``spot_at(center, d, i=0)`` (a tile at least d away, in sight), ``recipe(key)`` (the recipe as a guideline sentence), ``beasts_on(ways, skip=())`` (the aggressive mobs that can reach the shortest walks along the ways, as words), ``MOVE_TIP``,
``GIVE_TIP``.

A family may set ``out: DIR`` (a folder relative to the repository root): its files are written there rather
than to ``tasks/main/`` (``staff.yaml`` writes the test fixture ``tests/data/task_01_staff.yaml``, no longer
shipped). ``--out`` overrides it for every family.

Prove the result: ``agentworld tasks prove FILE`` (or ``--all``).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

import jinja2
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import authoring as A  # noqa: E402

from agentworld.core.tasks.task_file import DESIGN_ID, snake_case  # noqa: E402

FAMILIES = HERE / "families"
OUT = A.OUT


# ---------------------------------------------------------------------------------------------------
# template helpers
# ---------------------------------------------------------------------------------------------------
class Thing(dict):
    """A node or mob for templates: ``.id``, ``.x``, ``.y``, ``.at`` ([x, y]), ``.text`` (and a node's ``.harvests``)."""

    __getattr__ = dict.__getitem__


def _point(near: Any) -> A.Point:
    if isinstance(near, str):
        return A.landmark(near)
    return int(near[0]), int(near[1])


def _kth(nearest_first: list[Any], p: A.Point, min_d: int, k: int, what: str) -> Any:
    """The k-th of ``nearest_first`` at least ``min_d`` tiles (Manhattan) from ``p``."""
    far = [t for t in nearest_first if A.dist(p, (t.x, t.y)) >= min_d]
    if len(far) <= k:
        raise PlanError(f"fewer than {k + 1} {what} {min_d}+ tiles from {p}")
    return far[k]


def node_far(node_type: str, near: Any, min_d: int, k: int = 0) -> Thing:
    """The k-th nearest node of a type (reachable on foot) at least ``min_d`` tiles from ``near``."""
    p = _point(near)
    n = _kth(A.nodes_by_distance(node_type, p), p, min_d, k, f"{node_type} nodes")
    return Thing(id=n.id, x=n.x, y=n.y, at=[n.x, n.y], text=A.node_text(n), harvests=A.W.node_type(n.type).harvests)


def mob_far(mob_type: str, near: Any, min_d: int, k: int = 0) -> Thing:
    """The k-th nearest mob of a type at least ``min_d`` tiles from ``near`` (out of reach of its aggro)."""
    p = _point(near)
    m = _kth(A.mobs_by_distance(mob_type, p), p, min_d, k, f"{mob_type} mobs")
    return Thing(id=m.id, x=m.x, y=m.y, at=[m.x, m.y], text=A.mob_text(m))


def node(node_type: str, near: Any, k: int = 0) -> Thing:
    """The k-th nearest node of a type reachable on foot from ``near``."""
    return node_far(node_type, near, 0, k)


def node_clear(node_type: str, near: Any, k: int = 0, min_d: int = 0) -> Thing:
    """The k-th nearest node of a type reachable on foot from ``near`` (at least ``min_d`` tiles from it) whose
    stand tile (the one its text names) no aggressive mob can reach: a brief that sends a player there does not
    send it into a fight."""
    p = _point(near)
    clear = [n for n in A.nodes_by_distance(node_type, p) if not A.beasts_reaching(A.stand_tile(n))]
    n = _kth(clear, p, min_d, k, f"{node_type} nodes out of every beast's reach")
    return Thing(id=n.id, x=n.x, y=n.y, at=[n.x, n.y], text=A.node_text(n), harvests=A.W.node_type(n.type).harvests)


def mob(mob_type: str, near: Any, k: int = 0) -> Thing:
    """The k-th nearest mob of a type."""
    return mob_far(mob_type, near, 0, k)


def landmark(key: str) -> list[int]:
    return list(A.landmark(key))


def station(kind: str, lm: str) -> list[int]:
    return list(A.station(kind, lm))


def spot(center: Any, i: int = 0, max_d: int = 3) -> list[int]:
    """The i-th distinct walkable tile within ``max_d`` of a point or landmark (nearest first)."""
    return list(A.spots(_point(center), i + 1, max_d)[i])


def spot_at(center: Any, d: int, i: int = 0) -> list[int]:
    """The i-th walkable tile (nearest first) at least ``d`` tiles from a point: in sight of it, not beside it."""
    c = _point(center)
    far = [p for p in A.tiles_near(c, d + 6) if A.dist(p, c) >= d]
    if len(far) <= i:
        raise PlanError(f"fewer than {i + 1} walkable tiles {d}..{d + 6} tiles from {c}")
    return list(far[i])


def node_ids(node_type: str) -> list[str]:
    """Every node of a type in the world, by id (an event that depletes them all but a chosen few)."""
    return [n.id for n in A.W.nodes if n.type == node_type]


def node_named(node_id: str) -> Thing:
    """One node by its id (``.x``, ``.y``, ``.at``, ``.text``)."""
    n = A.W.node_by_id[node_id]
    return Thing(id=n.id, x=n.x, y=n.y, at=[n.x, n.y], text=A.node_text(n), harvests=A.W.node_type(n.type).harvests)


HELPERS = {"node_ids": node_ids, "node_named": node_named, "node": node, "node_clear": node_clear, "node_far": node_far, "mob": mob, "mob_far": mob_far, "landmark": landmark, "station": station, "spot": spot, "spot_at": spot_at,
           "recipe": A.recipe_text, "beasts_on": A.beasts_on, "beasts_at": A.beasts_at, "MOVE_TIP": A.MOVE_TIP, "GIVE_TIP": A.GIVE_TIP,
           "ROAM_TIP": A.ROAM_TIP}


def render(template: str, params: dict[str, Any]) -> dict[str, Any]:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.globals.update(HELPERS)
    env.filters["a"] = A.a  # {{ item | a }}: "an iron_helmet", "a bronze_sword"
    env.filters["plural"] = A.plural  # {{ mob | plural }}: "wolves", "goblins"
    env.filters["place"] = lambda key: A.W.landmark(key).name  # {{ "shrine_of_dawn" | place }}: "Shrine of Dawn"
    return yaml.safe_load(env.from_string(template).render(**params))


# ---------------------------------------------------------------------------------------------------
# plan -> reference_solution
# ---------------------------------------------------------------------------------------------------
class PlanError(ValueError):
    pass


def _expand(plan: A.Plan, agent: str, step: dict[str, Any], after: int) -> int:
    """Put one macro step on the agent's timeline (not before ``after``); the round of its last call."""
    if "walk" in step:
        last = plan.walk(agent, tuple(step["walk"]), after)
        for _ in range(int(step.get("extra", 0))):  # spare moves: a mob that stops the walk (walk_aggro)
            last = plan.do(agent, "move_character", after, x=step["walk"][0], y=step["walk"][1])
        return last
    if "harvest" in step or "attack" in step:
        tool = "harvest" if "harvest" in step else "attack"
        target = step[tool]
        thing = A.W.node_by_id.get(target) if tool == "harvest" else A.W.mob_by_id.get(target)
        if thing is None and "at" in step:  # a seed-drawn or spawned target ({hidden.ID}): its tile given
            thing = Thing(id=target, x=int(step["at"][0]), y=int(step["at"][1]))
        if thing is None:
            raise PlanError(f"{agent}: no {'node' if tool == 'harvest' else 'mob'} {target!r}")
        last = after
        for _ in range(int(step.get("times", 1))):
            last = getattr(plan, tool)(agent, thing, after)
        return last
    if "pickup" in step:  # a ground item (a cache, a heavy load) at ``at``: walk onto it, pick it up
        return plan.pickup(agent, str(step["pickup"]), tuple(step["at"]), after)
    if "craft" in step:
        return plan.do(agent, "craft_item", after, skill=step["skill"], itemKey=step["craft"], count=step.get("count", 1))
    if "give" in step:
        return plan.give(agent, step["give"], step["item"], step.get("count", 1), after)
    if "equip" in step:
        return plan.do(agent, "equip_item", after, itemKey=step["equip"])
    if "say" in step:
        return plan.do(agent, "chat", after, message=" ".join(str(step["say"]).split()))
    if "portal" in step:
        r = plan.do(agent, "enter_portal", after)
        end = A.portal_exit(plan.pos[agent])
        plan.pos[agent] = end
        return r
    if "call" in step:  # any tool with its arguments as written (a pickup, a placeholder of hidden information)
        return plan.do(agent, step["call"], after, **step.get("args", {}))
    if "sleep" in step:
        last = after
        for _ in range(int(step["sleep"])):
            last = plan.do(agent, "sleep", after, seconds=1)
        return last
    raise PlanError(f"{agent}: unknown plan step {step!r}")


def compile_plan(spawns: dict[str, A.Point], plan_spec: dict[str, list[dict[str, Any]]]) -> A.Plan:
    plan = A.Plan(spawns)
    queues = {a: list(plan_spec.get(a, [])) for a in spawns}
    unknown = set(plan_spec) - set(spawns)
    if unknown:
        raise PlanError(f"plan for unknown agents: {sorted(unknown)}")
    done: dict[str, int] = {}
    while any(queues.values()):
        progressed = False
        for agent, q in queues.items():
            while q:
                step = q[0]
                needs = step.get("after") or []
                needs = [needs] if isinstance(needs, str) else list(needs)
                if any(n not in done for n in needs):
                    break
                start = max([done[n] + 1 for n in needs] + [1])
                last = _expand(plan, agent, step, start)
                if "note" in step and last in plan.steps[agent]:
                    plan.steps[agent][last]["note"] = " ".join(str(step["note"]).split())
                if "id" in step:
                    if step["id"] in done:
                        raise PlanError(f"plan label {step['id']!r} is used twice")
                    done[step["id"]] = last
                q.pop(0)
                progressed = True
        if not progressed:
            waiting = {a: q[0].get("after") for a, q in queues.items() if q}
            raise PlanError(f"the plan waits on labels nobody sets (or a cycle): {waiting}")
    return plan


def budget_for(ref_rounds: int) -> int:
    """A default budget of 1.45 times the plan's rounds, kept in 25..55 (issue 28: 1.25x-1.6x the fastest
    known solution). The plan is only an upper bound of the fastest: set ``rounds`` in the variant row from
    what ``agentworld tasks prove`` reports as fastest when the compressed plan is shorter."""
    return max(25, min(55, round(1.45 * ref_rounds)))


# ---------------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------------
ORDER = ["id", "category", "design", "needs_communication", "task", "objectives", "relevant_game_context",
         "max_action_steps", "rounds", "shared_plan", "success_criteria", "world_rules", "mobs", "nodes", "verifier",
         "events", "joint_actions", "hidden"]


WALK_AGGRO_NOTE = ("Issue 26: this task's reference plan walks through aggressive mobs' range, which now stops a walk; "
                   "until the plan is re-routed, walks here are not stopped (mobs still roam and strike at the round's tick).")


def _opt_outs(task_id: str, variant: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The variant row's world-rule opt-outs (``walk_aggro: false``) and the note written above them."""
    flag = variant.get("walk_aggro", True)
    if flag is True:
        if "walk_aggro_note" in variant:
            raise PlanError(f"{task_id}: walk_aggro_note without walk_aggro: false (remove the note)")
        return {}, None
    if flag is not False:
        raise PlanError(f"{task_id}: walk_aggro must be true or false, got {flag!r}")
    return {"walk_aggro": False}, str(variant.get("walk_aggro_note", WALK_AGGRO_NOTE))


def _dump(mapping: dict[str, Any]) -> str:
    return yaml.safe_dump(mapping, sort_keys=False, allow_unicode=True, width=110) if mapping else ""


def build_task(family: str, doc: dict[str, Any], variant: dict[str, Any] | None = None) -> tuple[str, str]:
    """(task id, file text) for one rendered variant (``variant``: its row in the family, for the opt-outs)."""
    task_id = doc["id"]
    if doc.get("design", family) != family:
        raise PlanError(f"{task_id}: the template sets design: {doc['design']!r}, but a family's design is its "
                        f"file name ({family!r}); remove design: from the template")
    doc["design"] = family
    rules, note = _opt_outs(task_id, variant or {})
    if rules and doc.get("world_rules"):
        raise PlanError(f"{task_id}: the template writes world_rules and the variant sets walk_aggro: false; "
                        "set the rule in one place")
    agents = {k: v for k, v in doc.items() if k.startswith("agent_")}
    spawns = {k: (v["location"]["x"], v["location"]["y"]) for k, v in agents.items()}
    try:
        plan = compile_plan(spawns, doc.pop("plan"))
    except (PlanError, AssertionError) as exc:
        raise PlanError(f"{task_id}: {exc}") from None
    ref = plan.last_round()
    doc.setdefault("rounds", budget_for(ref))
    doc.setdefault("max_action_steps", doc["rounds"])
    for a in agents.values():
        a.setdefault("new_character", True)
        a.setdefault("equipped_items", [])
        a.setdefault("inventory_items", [])
        a["guideline"] = A.Literal(textwrap.fill(" ".join(a.get("guideline", "").split()), 100) + "\n")
    if "relevant_game_context" in doc:
        lines = [textwrap.fill(" ".join(line.split()), 100) for line in doc["relevant_game_context"].strip().splitlines()]
        doc["relevant_game_context"] = A.Literal("\n".join(lines) + "\n")
    out = {k: doc[k] for k in ORDER if k in doc}
    for k in agents:
        block = agents[k]
        out[k] = {f: block[f] for f in ("username", "role", "new_character", "location", "skill_levels",
                                        "inventory_items", "equipped_items", "guideline") if f in block}
    out["reference_solution"] = plan.solution()
    text = (f"# {task_id}: built by tools/task_authoring/build.py from families/{family}.yaml "
            f"(world {A.W.data.version}).\n"
            f"# Edit the family, not this file. The plan spans {ref} rounds of a {doc['rounds']}-round budget.\n")
    if not rules:
        return task_id, text + _dump(out)
    # the opt-out is written as one commented flow line where world_rules belongs (ORDER), so that a reader
    # of the task file sees why walks are not stopped
    keys = list(out)
    cut = next((i for i, k in enumerate(keys) if k in ORDER and ORDER.index(k) > ORDER.index("world_rules")), len(keys))
    before, after = {k: out[k] for k in keys[:cut]}, {k: out[k] for k in keys[cut:]}
    flow = yaml.safe_dump({"world_rules": rules}, default_flow_style=None, width=110).strip()
    if not flow.startswith("world_rules: {"):
        flow = "world_rules: {" + ", ".join(f"{k}: {str(v).lower()}" for k, v in rules.items()) + "}"
    comment = textwrap.fill(" ".join(note.split()), 110, initial_indent="# ", subsequent_indent="# ")
    return task_id, text + _dump(before) + comment + "\n" + flow + "\n" + _dump(after)


def family_variants(path: Path, wanted: set[str] | None = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(rendered task, variant row) for the family's variants: every one, or (``wanted``) those whose id or
    family name is in it."""
    fam = yaml.safe_load(path.read_text(encoding="utf-8"))
    shared = fam.get("params", {})
    return [(render(fam["template"], {**shared, **v}) | {"id": v["id"]}, v) for v in fam["variants"]
            if wanted is None or path.stem in wanted or v["id"] in wanted]


def family_docs(path: Path, wanted: set[str] | None = None) -> list[dict[str, Any]]:
    """The family's variants rendered (see :func:`family_variants`, which also gives each variant's row)."""
    return [doc for doc, _ in family_variants(path, wanted)]


def family_out(path: Path) -> Path:
    """The folder a family's task files are written to: its ``out:`` (relative to the repository root; a test
    fixture such as ``tests/data``) or the main suite."""
    out = yaml.safe_load(path.read_text(encoding="utf-8")).get("out")
    return OUT if out is None else OUT.parents[1] / out


def _known_names() -> set[str]:
    """Every family name and variant id (read from the families, nothing rendered)."""
    out = set()
    for path in FAMILIES.glob("*.yaml"):
        out.add(path.stem)
        out.update(v["id"] for v in yaml.safe_load(path.read_text(encoding="utf-8"))["variants"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="family names or task ids (default: every family)")
    ap.add_argument("--check", action="store_true", help="only report files that would change (exit 1 if any)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"where to write the task files (default: {OUT}, or the folder a family's out: names)")
    args = ap.parse_args(argv)
    wanted = set(args.names) or None
    unknown = sorted((wanted or set()) - _known_names())
    if unknown:
        ap.error(f"no family or task id {', '.join(unknown)} in {FAMILIES} (give a family file's name, such as "
                 f"staff, or a variant's id, such as task_01_staff)")
    changed = 0
    for path in sorted(FAMILIES.glob("*.yaml")):
        if not DESIGN_ID.match(path.stem):
            raise SystemExit(f"{path}: a family's file name is its design id and must be snake_case (lower-case "
                             f"letters, digits, '_', starting with a letter); rename it, e.g. "
                             f"{snake_case(path.stem)}.yaml")
        out_dir = args.out or family_out(path)
        for doc, variant in family_variants(path, wanted):
            task_id, text = build_task(path.stem, doc, variant)
            target = out_dir / f"{task_id}.yaml"
            if target.exists() and target.read_text(encoding="utf-8") == text:
                continue
            changed += 1
            if args.check:
                print(f"would change: {target}")
            else:
                target.write_text(text, encoding="utf-8")
                print(f"wrote {target}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
