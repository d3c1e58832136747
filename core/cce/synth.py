"""Hand-built episodes with known causal structure (tests, the CCE benchmark, docs examples).

:class:`EpisodeBuilder` writes a real episode folder (``trajectory.jsonl`` and ``result.json`` in the
contract formats of ``core/play/records.py``) from a few lines per action, so CCE code is exercised exactly as
on recorded runs. :func:`staff_episode` is the worked example of ``docs/cce.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .graph import action_id
from ..world.effects import ChatDelivery, Effects, Harvest, ItemDelta, Move, Transfer, Crafted, Kill
from ..play.records import Checkpoint, EndEvent, EpisodeResult, StartEvent, TickEvent, TurnEvent
from ..world.tools import CHAT_TOOLS, FREE_TOOLS, WAIT_TOOLS


@dataclass
class EpisodeBuilder:
    task_id: str = "synthetic"
    agents: dict[str, str] = field(default_factory=dict)  # agent id -> username, in turn order
    turns: list[TurnEvent] = field(default_factory=list)
    checkpoints_by_round: dict[int, int] = field(default_factory=dict)

    def _turn(self, rnd: int, agent: str, tool: str, args: dict[str, Any], effects: Effects, ok: bool = True,
              result: str = "") -> str:
        self.turns.append(TurnEvent(step=len(self.turns), round=rnd, agent=agent, username=self.agents[agent],
                                    tool=tool, arguments=args, ok=ok, result=result or ("ok" if ok else "failed"),
                                    error=None if ok else "invalid", effects=effects,
                                    counts_as_action=tool not in FREE_TOOLS))
        return action_id(rnd, agent)

    def move(self, rnd: int, agent: str, start: tuple[int, int], end: tuple[int, int], ok: bool = True) -> str:
        eff = Effects(move=Move(start=start, end=end if ok else start, path_length=abs(end[0] - start[0]) +
                                abs(end[1] - start[1]), reached=ok)) if ok else Effects()
        return self._turn(rnd, agent, "move_character", {"x": end[0], "y": end[1]}, eff, ok)

    def harvest(self, rnd: int, agent: str, instance: str, item: str, count: int, ok: bool = True) -> str:
        node = instance.split("#")[0]
        eff = Effects(gained=[ItemDelta(agent=agent, item=item, count=count, source=f"harvest:{instance}")],
                      harvests=[Harvest(node=node, instance=instance, skill="lumberjacking", items={item: count})],
                      target=instance) if ok else Effects()
        return self._turn(rnd, agent, "harvest_resource", {"targetInstance": instance}, eff, ok)

    def transfer(self, rnd: int, agent: str, to: str, item: str, count: int, ok: bool = True) -> str:
        eff = Effects(lost=[ItemDelta(agent=agent, item=item, count=count, source=f"transfer:{to}")],
                      gained=[ItemDelta(agent=to, item=item, count=count, source=f"transfer:{agent}")],
                      transfers=[Transfer(from_agent=agent, to_agent=to, item=item, count=count)],
                      target=self.agents[to]) if ok else Effects()
        return self._turn(rnd, agent, "transfer_items",
                          {"targetPlayer": self.agents[to], "itemKey": item, "count": count}, eff, ok)

    def craft(self, rnd: int, agent: str, item: str, inputs: dict[str, int], count: int = 1, ok: bool = True) -> str:
        eff = Effects(lost=[ItemDelta(agent=agent, item=k, count=v, source=f"craft:{item}") for k, v in inputs.items()],
                      gained=[ItemDelta(agent=agent, item=item, count=count, source=f"craft:{item}")],
                      crafted=[Crafted(recipe=item, skill="crafting", item=item, count=count)]) if ok else Effects()
        return self._turn(rnd, agent, "craft_item", {"skill": "Crafting", "itemKey": item, "count": count}, eff, ok)

    def attack(self, rnd: int, agent: str, instance: str, loot: dict[str, int] | None = None) -> str:
        mob = instance.split("#")[0]
        eff = Effects(kills=[Kill(mob=mob, instance=instance, level=1, by=agent)],
                      gained=[ItemDelta(agent=agent, item=k, count=v, source=f"loot:{instance}")
                              for k, v in (loot or {}).items()], target=instance)
        return self._turn(rnd, agent, "attack_entity", {"targetInstance": instance}, eff)

    def chat(self, rnd: int, agent: str, message: str, recipients: list[str] | None = None) -> str:
        to = recipients if recipients is not None else [a for a in self.agents if a != agent]
        eff = Effects(chat=ChatDelivery(scope="team", recipients=to, message=message))
        return self._turn(rnd, agent, "chat", {"message": message}, eff)

    def idle(self, rnd: int, agent: str, tool: str = "stop_action") -> str:
        """An action that changes nothing (stop_action: it counts, unlike a wait, which CCE leaves out)."""
        return self._turn(rnd, agent, tool, {"seconds": 5} if tool == "sleep" else {}, Effects())

    def checkpoint(self, rnd: int, passed: int) -> None:
        self.checkpoints_by_round[rnd] = passed

    def write(self, folder: str | Path, *, success: bool = True, checkpoints: list[Checkpoint] | None = None,
              episode_id: str | None = None) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        rounds = max((t.round for t in self.turns), default=0)
        eid = episode_id or folder.name
        start = StartEvent(episode_id=eid, task_id=self.task_id, seed=0, variant="vanilla", framework="synthetic",
                           model="", world_version="test", max_rounds=rounds, max_action_steps=99, timestamp="",
                           agents=[{"agent_id": a, "username": u, "x": 0, "y": 0} for a, u in self.agents.items()])
        lines = [start.model_dump_json()]
        passed = 0
        for rnd in range(1, rounds + 1):
            lines += [t.model_dump_json() for t in self.turns if t.round == rnd]
            passed = self.checkpoints_by_round.get(rnd, passed)
            lines.append(TickEvent(round=rnd, checkpoints_passed=passed).model_dump_json())
        lines.append(EndEvent(reason="verifier_passed" if success else "round_budget", rounds=rounds).model_dump_json())
        (folder / "trajectory.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        result = EpisodeResult(
            episode_id=eid, task_id=self.task_id, n_agents=len(self.agents), seed=0, framework="synthetic", model="",
            success=success, psr=1.0 if success else 0.0, checkpoints=checkpoints or [],
            end_reason="verifier_passed" if success else "round_budget", rounds=rounds, max_rounds=rounds,
            actions=sum(1 for t in self.turns if t.counts_as_action),
            chats=sum(1 for t in self.turns if t.tool in CHAT_TOOLS and t.ok),
            waits=sum(1 for t in self.turns if t.tool in WAIT_TOOLS and t.ok),
            tool_errors=sum(1 for t in self.turns if not t.ok), no_calls=0, refused_calls=0, infra_errors=0)
        (folder / "result.json").write_text(result.model_dump_json(indent=1), encoding="utf-8")
        return folder


STAFF_CONTRIBUTING = {"r1.agent_1", "r1.agent_2", "r2.agent_1", "r2.agent_2", "r3.agent_1", "r3.agent_2"}
STAFF_SUCCESS = {"r3.agent_2"}


def staff_builder() -> EpisodeBuilder:
    """Three agents; the crafter asks for logs, the lumberjack harvests and hands them over, the crafter makes
    the staff (the objective: "staff with crafter"). The third agent's actions help nobody.

    Known answer: success {r3.agent_2}; contributing :data:`STAFF_CONTRIBUTING` (6 of 11 actions).
    """
    b = EpisodeBuilder(task_id="synthetic_staff", agents={"agent_1": "lumber", "agent_2": "crafter", "agent_3": "idler"})
    b.move(1, "agent_1", (10, 10), (20, 10))
    b.chat(1, "agent_2", "lumber, please bring me 3 oak_logs at (24, 10)")
    b.idle(1, "agent_3")
    b.harvest(2, "agent_1", "oak_tree#1", "oak_logs", 3)
    b.move(2, "agent_2", (30, 10), (22, 10))
    b.move(2, "agent_3", (5, 5), (6, 9))
    b.transfer(3, "agent_1", "agent_2", "oak_logs", 3)
    b.craft(3, "agent_2", "staff", {"oak_logs": 3})
    b.harvest(3, "agent_3", "rock#4", "stone", 2)
    b.checkpoint(3, 1)
    b.chat(4, "agent_1", "done, good luck")
    b.idle(4, "agent_3")
    return b


def staff_episode(folder: str | Path, *, success: bool = True) -> Path:
    return staff_builder().write(folder, success=success, checkpoints=[
        Checkpoint(name="staff with crafter", check="item_count", value=1 if success else 0, target=1,
                   achieved=success)])
