"""The oracle-communication coordinator: the one agent that reads every message.

Under the ``oracle_communication`` variant the first agent is the team's coordinator and the hub of all talk:

- every message a teammate sends reaches the coordinator, whatever its scope and the chat radius (the
  episode forwards what the world did not deliver to it, into its next observation);
- otherwise a teammate's message reaches only the players within the chat radius: its team ``chat`` and
  its ``send_chat_message(global=true)`` are delivered as local messages;
- the coordinator's own messages are delivered as written (its ``chat`` reaches the whole team).

So the coordinator is the only agent that reads every message and the only one that can reach everyone:
facts flow through it. Everything else about chat (free actions, the tool names) is unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..world.tools import ToolSpec


def hub_tools(tools: dict[str, ToolSpec], coordinator: str, coordinator_name: str) -> dict[str, ToolSpec]:
    """The episode's tools with chat delivery routed through the coordinator (tools without chat: unchanged)."""
    out = dict(tools)
    note = (f" Under this protocol {coordinator_name} is the coordinator: it receives every message; anyone "
            f"else's message also reaches only the players within the chat radius.")

    def routed(agent_id: str, result: Any) -> Any:
        if agent_id == coordinator or not result.ok:
            return result
        chat = result.effects.chat
        if chat is not None and not chat.recipients:
            # the world's "no teammate received it ... use global=true or chat to reach everyone" is untrue here:
            # the coordinator gets it (the episode forwards it), and neither global nor chat reaches further
            return result.model_copy(update={"text": f"Only {coordinator_name} (the coordinator, who receives every "
                                                     "message) gets it: no other teammate is within the chat radius, "
                                                     "and under this protocol only the coordinator reaches everyone."})
        return result.model_copy(update={"text": f"{result.text} {coordinator_name} (the coordinator) receives "
                                                 f"every message."})

    if "chat" in tools:
        def chat(w: Any, a: str, p: Any) -> Any:
            if a == coordinator:
                return w.chat(a, p.message)
            return routed(a, w.send_chat_message(a, p.message, False))

        out["chat"] = dataclasses.replace(tools["chat"], run=chat, description=tools["chat"].description + note)
    if "send_chat_message" in tools:
        def send(w: Any, a: str, p: Any) -> Any:
            if a == coordinator:
                return w.send_chat_message(a, p.message, p.global_)
            return routed(a, w.send_chat_message(a, p.message, False))

        out["send_chat_message"] = dataclasses.replace(tools["send_chat_message"], run=send,
                                                       description=tools["send_chat_message"].description + note)
    return out


def brief_note(agent_id: str, coordinator: str, coordinator_name: str, chat_radius: int) -> str:
    """The line every agent's system prompt gets under oracle communication."""
    if agent_id == coordinator:
        return ("\nYou are the team's coordinator: you receive every message any teammate sends, wherever they "
                "are, and your chat reaches the whole team. Teammates hear each other only within "
                f"{chat_radius} tiles, so pass on what they need to know.")
    return (f"\n{coordinator_name} is the team's coordinator: it receives every message you send, wherever you "
            f"are, and its chat reaches everyone. Your messages reach other teammates only within {chat_radius} "
            "tiles.")
