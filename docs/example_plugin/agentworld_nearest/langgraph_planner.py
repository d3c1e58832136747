"""A user-defined team for ``--team-factory``: a LangGraph agent with a planner node.

    agentworld run --task TASK_ID --team-factory agentworld_nearest.langgraph_planner:make_team \
        --model openai:gpt-4.1-mini          # or scripted:oracle offline

Each character gets its own compiled graph ``planner → agent → tools → END`` with a checkpointer, so it
keeps its own memory across turns. The planner node writes a short working plan from the task objective
and what the character holds; the agent node calls the chat model with the game tools bound; the tool
node executes the (first) call through ``turn.port``, the protocol's one-call-per-turn port, so the team is
scored exactly like the built-in frameworks. Only public AgentWorld pieces are used: ``Team``,
``TeamSpec``, ``Turn``, ``TurnOutcome``, ``core.tools.TOOLS`` and ``core.models.ModelSpec``.
"""

# (no `from __future__ import annotations`: LangGraph reads the State annotations at runtime)
from typing import Annotated, Any, TypedDict

from agentworld.core.play.models import ModelSpec
from agentworld.core.play.protocol import Team, TeamSpec, Turn, TurnOutcome
from agentworld.core.world.tools import TOOLS


class PlannerTeam(Team):
    def __init__(self, spec: TeamSpec):
        self.spec = spec
        self.model_spec = ModelSpec.from_team_spec(spec)
        self.graphs: dict[str, Any] = {}
        self.turn: Turn | None = None  # the turn being played (the tools and the scripted model read it)
        self._policy: Any = None

    # -- the chat model: a real OpenAI-compatible one, or AgentWorld's scripted stand-in for offline runs
    def chat_model(self) -> Any:
        if self.model_spec.is_scripted:
            from agentworld.plugins.agents.fakes import scripted_langchain_model
            from agentworld.core.play.policies import make_policy

            if self._policy is None:  # one policy for the whole team (it tracks each agent's progress)
                self._policy = make_policy(self.model_spec.model, self.spec.seed, self.spec.reference_plan)
            return scripted_langchain_model(lambda: self._policy.decide(self.turn))
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=self.model_spec.model, base_url=self.model_spec.base_url,
                          api_key=self.model_spec.api_key(), temperature=self.model_spec.temperature)

    def tools(self) -> list[Any]:
        from langchain_core.tools import StructuredTool

        def make(spec: Any) -> Any:
            async def run(**kwargs: Any) -> str:
                result = await self.turn.port.call(spec.name, kwargs)  # the gate refuses a second call
                return result.text if result.ok else f"FAILED ({result.error}): {result.text}"

            return StructuredTool.from_function(coroutine=run, name=spec.name, description=spec.description,
                                                args_schema=spec.json_schema(), infer_schema=False)

        return [make(t) for t in TOOLS.values()]

    def build_graph(self, system_prompt: str) -> Any:
        from langchain_core.messages import AnyMessage, SystemMessage
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph import END, START, StateGraph
        from langgraph.graph.message import add_messages
        from langgraph.prebuilt import ToolNode

        class State(TypedDict):
            messages: Annotated[list[AnyMessage], add_messages]
            plan: str

        tools = self.tools()
        model = self.chat_model().bind_tools(tools)
        objective = self.spec.view.objective if self.spec.view is not None else ""

        def planner(state: State) -> dict[str, Any]:
            obs = self.turn.observation
            held = ", ".join(f"{i.key} x{i.count}" for i in obs.inventory) or "nothing"
            return {"plan": f"Objective: {objective}\nYou hold: {held}. Take the next step toward the objective."}

        async def agent(state: State) -> dict[str, Any]:
            prompt = [SystemMessage(system_prompt), SystemMessage("Working plan:\n" + state["plan"])]
            reply = await model.ainvoke(prompt + state["messages"][-12:])  # a short window of history
            if len(reply.tool_calls) > 1:  # one call per turn: keep the first
                reply = reply.model_copy(update={"tool_calls": reply.tool_calls[:1]})
            return {"messages": [reply]}

        graph = StateGraph(State)
        graph.add_node("planner", planner)
        graph.add_node("agent", agent)
        graph.add_node("tools", ToolNode(tools))
        graph.add_edge(START, "planner")
        graph.add_edge("planner", "agent")
        graph.add_conditional_edges("agent", lambda s: "tools" if s["messages"][-1].tool_calls else END)
        graph.add_edge("tools", END)
        return graph.compile(checkpointer=InMemorySaver())

    async def act(self, turn: Turn) -> TurnOutcome:
        from langchain_core.messages import HumanMessage

        self.turn = turn
        if turn.agent_id not in self.graphs:
            self.graphs[turn.agent_id] = self.build_graph(turn.system_prompt)
        state = await self.graphs[turn.agent_id].ainvoke(
            {"messages": [HumanMessage(turn.user_prompt)]}, {"configurable": {"thread_id": turn.agent_id}})
        usage = next((m.usage_metadata for m in reversed(state["messages"]) if getattr(m, "usage_metadata", None)), {})
        return TurnOutcome(thinking=state["plan"].splitlines()[-1], tokens_in=usage.get("input_tokens", 0),
                           tokens_out=usage.get("output_tokens", 0), model_calls=1)


def make_team(spec: TeamSpec) -> Team:
    return PlannerTeam(spec)
