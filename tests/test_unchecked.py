"""Records the engine makes without validation (core/world/unchecked.py) are exactly what validation makes
from the same values: every observation, Nearby and inventory row, player state, turn status, tool result
and effects (the tick's too), turn event and the gate's call records of real episodes, compared field by
field, type by type, and as JSON."""

import asyncio

import pytest
from pydantic import BaseModel

from agentworld.core.play.episode import Episode
from agentworld.core.play.policies import PolicyTeam, RandomPolicy
from agentworld.core.play.records import RawCall, TurnEvent
from agentworld.core.runs.bench_play import scale_task
from agentworld.core.tasks.task import find_task
from agentworld.core.world.observation import Entity, InvItem, Observation
from agentworld.core.world.unchecked import unchecked


def same_types(a, b, where: str) -> None:
    assert type(a) is type(b), f"{where}: {type(a).__name__} where validation gives {type(b).__name__}"
    if isinstance(a, BaseModel):
        assert_as_validated(a, where)
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            same_types(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            same_types(x, y, f"{where}[{i}]")


def assert_as_validated(m: BaseModel, where: str = "") -> None:
    where = where or type(m).__name__
    assert set(m.__dict__) == set(type(m).model_fields), f"{where}: not every field given"
    v = type(m).model_validate({k: (x.model_dump() if isinstance(x, BaseModel) else x) for k, x in m.__dict__.items()})
    assert list(m.__dict__) == list(v.__dict__), f"{where}: fields out of the class's order"
    for name in type(m).model_fields:
        same_types(m.__dict__[name], v.__dict__[name], f"{where}.{name}")
    assert m == v and m.model_dump_json() == v.model_dump_json(), where


class Recording(PolicyTeam):
    """The random team, keeping every observation it was handed and the statuses the episode made."""

    def __init__(self, seed: int):
        super().__init__(RandomPolicy(seed))
        self.observations: list[Observation] = []
        self.results: list = []  # the agents' previous turns' tool results

    async def act(self, turn):
        self.observations.append(turn.observation)
        if turn.last_result is not None:
            self.results.append(turn.last_result)
        return await super().act(turn)


def play(task, seed: int):
    team = Recording(seed)
    states, statuses, events = [], [], []
    ep = Episode(task, team, seed=seed, framework="random",
                 progress=lambda e: events.append(e) if isinstance(e, TurnEvent) else None)
    first = ep._turn

    async def turn(agent_id, rnd):  # after each turn: every player's state and the status the event carries
        await first(agent_id, rnd)
        states.extend(ep.world.player_state(a) for a in ep.agent_ids)
        statuses.append(ep._statuses[agent_id][1])

    ep._turn = turn
    asyncio.run(ep.run())
    return team.observations, states, statuses, team.results + [eff for _, eff in ep.history] + events


def test_unchecked_records_of_real_episodes_equal_validated_ones():
    seen, kinds, errors, turns, calls = 0, set(), set(), 0, 0
    for task, seed in ((find_task("task_08_convoy").model_copy(update={"rounds": 12}), 1),
                       (find_task("task_04_goblins").model_copy(update={"rounds": 12}), 5),
                       (scale_task(40, 6, packed=True, seed=2), 2)):
        observations, states, statuses, results = play(task, seed)
        errors |= {r.error for r in results if hasattr(r, "error")}
        for m in {id(m): m for m in [*observations, *states, *statuses, *results]}.values():  # kept ones once
            assert_as_validated(m)
            seen += 1
            if isinstance(m, TurnEvent):  # the gate's records of the calls are in its raw calls
                assert m.model_fields_set == set(TurnEvent.model_fields) - {"type"}  # as TurnEvent(...) records
                turns += 1
                calls += sum(type(c) is RawCall for c in m.raw_calls)
        rows = [r for o in observations for r in [*o.nearby, *o.inventory]]
        assert {type(r) for r in rows} == {Entity, InvItem}
        kinds |= {r.kind for o in observations for r in o.nearby}
    assert kinds >= {"player", "resource", "mob", "station", "npc", "portal"} and seen > 500
    assert errors >= {None, "invalid", "out_of_range", "no_station", "level_too_low"}  # successes and failures
    assert turns > 300 and calls >= turns


@pytest.mark.parametrize("loose", [{"model_latency_s": 1}, {"tokens_in": True}, {"context_trimmed": 2.0}])
def test_a_turn_event_whose_team_part_validation_would_convert_is_validated(loose):
    """The episode skips validating a turn event only when the team's outcome has exactly the types
    validation keeps: a latency of int 1 becomes 1.0, tokens of True become 1, as validation makes them."""
    from agentworld.core.play.protocol import TurnOutcome

    class Loose(PolicyTeam):
        async def act(self, turn):
            await super().act(turn)
            return TurnOutcome.model_construct(**loose)

    ep = Episode(find_task("task_08_convoy").model_copy(update={"rounds": 1}), Loose(RandomPolicy(0)), seed=0)
    asyncio.run(ep.run())
    turns = [e for e in ep.events if isinstance(e, TurnEvent)]
    (name, value), = loose.items()
    want = TurnEvent.model_fields[name].annotation
    assert turns and all(type(getattr(e, name)) is want and getattr(e, name) == value for e in turns)


def test_the_check_above_catches_a_value_of_the_wrong_type():
    bad = unchecked(InvItem, {"index": 1.0, "key": "logs", "name": "Logs", "count": 2})  # a float index
    try:
        assert_as_validated(bad)
    except AssertionError as exc:
        assert "float" in str(exc)
    else:
        raise AssertionError("a float where validation gives an int went unnoticed")


def test_engine_results_record_the_fields_validation_would_record_as_set():
    from agentworld.core.world.effects import Effects, ToolResult, engine_effects, engine_failure, engine_result

    pairs = [(engine_effects(target="x"), Effects(target="x")), (engine_effects(), Effects()),
             (engine_result("done", engine_effects(target="x")), ToolResult(ok=True, text="done", effects=Effects(target="x"))),
             (engine_failure("invalid", "no"), ToolResult.fail("invalid", "no"))]
    for made, validated in pairs:
        assert made == validated
        assert made.model_fields_set == validated.model_fields_set
        assert made.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)


def test_a_record_of_a_class_never_built_serialises_through_any_in_a_fresh_process():
    """Observation rows are built on first use (defer_build) and the engine never validates them: an unchecked
    row must still serialise where pydantic reaches it through ``Any`` (a plugin's own model, to_jsonable)."""
    import subprocess
    import sys

    code = ("from typing import Any\n"
            "import pydantic_core\n"
            "from pydantic import BaseModel, TypeAdapter\n"
            "from agentworld.core.world.observation import InvItem\n"
            "from agentworld.core.world.unchecked import unchecked\n"
            "row = unchecked(InvItem, {'index': 0, 'key': 'logs', 'name': 'Logs', 'count': 2})\n"
            "class Holder(BaseModel):\n"
            "    data: Any\n"
            "print(pydantic_core.to_jsonable_python(row)['count'], TypeAdapter(Any).dump_json([row]).decode(),\n"
            "      Holder(data=row).model_dump_json())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "2" and '"key":"logs"' in out.stdout
