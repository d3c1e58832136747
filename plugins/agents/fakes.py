"""Scripted policies behind each framework's OWN model interface, so every framework runs its real code path
offline: AutoGen's ``ChatCompletionClient``, LangChain's ``BaseChatModel`` (with ``bind_tools``), CAMEL's
``BaseModelBackend`` and, for the plain agent, the real ``openai`` SDK over an in-process HTTP transport.

Each fake takes a ``decide()`` callable: the team points it at ``policy.decide(current_turn)``
(``core/play/policies.py``), so the model answers the current turn with the policy's one tool call
(or with text when the policy passes). Token usage is estimated from the characters the framework
actually sent (4 characters a token), so the accounting paths run as they would with a real model.

Framework imports happen inside the builder functions: importing this module stays cheap.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any, Callable, Sequence

from .common import approx_message_tokens, approx_tokens, chars_to_tokens, message_chars

Decision = Any  # (tool name, arguments) | [several such] | None | ModelFault
Decide = Callable[[], Decision]
NO_ACTION_TEXT = "I have nothing useful to do this turn."
HANG_S = 3600.0  # how long a "hang" fault keeps the request open (the turn timeout ends it first)


class ModelFault:
    """A scripted answer that is a failure of the model service rather than an answer: ``"500"`` (the
    service answers HTTP 500), ``"hang"`` (it never answers). Each fake fails the way its framework's real
    client would see it, so the framework's own retry and error paths run."""

    def __init__(self, kind: str):
        if kind not in ("500", "hang"):
            raise ValueError(f"ModelFault kind {kind!r}: use '500' or 'hang'")
        self.kind = kind

    def __repr__(self) -> str:
        return f"ModelFault({self.kind!r})"


FAULT_MESSAGE = "scripted model service: internal server error"


def service_error() -> Exception:
    """What the OpenAI SDK raises for an HTTP 500 answer, which is what every framework's real client (all four
    wrap the SDK) would see: the fakes of AutoGen, LangChain and CAMEL raise it, the plain agent's fake
    transport answers the 500 itself."""
    import httpx
    from openai import InternalServerError

    request = httpx.Request("POST", "http://scripted.invalid/v1/chat/completions")
    body = {"message": FAULT_MESSAGE}
    response = httpx.Response(500, request=request, json={"error": body})
    return InternalServerError(f"Error code: 500 - {FAULT_MESSAGE}", response=response, body=body)


async def fail_as_scripted(decision: Decision) -> None:
    """Raise or hang for a :class:`ModelFault`; return for anything else."""
    if isinstance(decision, ModelFault):
        if decision.kind == "hang":
            await asyncio.sleep(HANG_S)
        raise service_error()


def arguments_text(args: Any) -> str:
    """A decision's arguments as a model writes them: text as it is (broken JSON included), else JSON."""
    return args if isinstance(args, str) else json.dumps(args)

_ids = itertools.count(1)


def _call_id() -> str:
    return f"call_{next(_ids):06d}"


# ---------------------------------------------------------------------- OpenAI Chat Completions wire format


def chat_completion_payload(decision: Decision | list[tuple[str, dict[str, Any]]], *, model: str,
                            prompt_chars: int) -> dict[str, Any]:
    """A Chat Completions response body answering with the decision: one tool call, or text. A list of
    decisions gives several calls in one answer (tests use it to check that the gate refuses the second)."""
    calls = decision if isinstance(decision, list) else ([] if decision is None else [decision])
    if not calls:
        message: dict[str, Any] = {"role": "assistant", "content": NO_ACTION_TEXT}
        finish, out_chars = "stop", len(NO_ACTION_TEXT)
    else:
        message = {"role": "assistant", "content": None, "tool_calls": []}
        out_chars = 0
        for name, args in calls:
            arguments = arguments_text(args)
            message["tool_calls"].append(
                {"id": _call_id(), "type": "function", "function": {"name": name, "arguments": arguments}})
            out_chars += len(name) + len(arguments)
        finish = "tool_calls"
    tokens_in, tokens_out = chars_to_tokens(prompt_chars), chars_to_tokens(out_chars)
    return {"id": f"chatcmpl-{_call_id()}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "finish_reason": finish, "message": message, "logprobs": None}],
            "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                      "total_tokens": tokens_in + tokens_out}}


def request_chars(body: dict[str, Any]) -> int:
    return sum(message_chars(m) for m in body.get("messages", []))


def scripted_openai_client(decide: Decide, model: str = "scripted"):
    """A real ``openai.AsyncOpenAI`` whose HTTP transport answers in process from ``decide()``."""
    import httpx
    from openai import AsyncOpenAI

    async def handle(request: httpx.Request) -> httpx.Response:
        if not request.url.path.endswith("/chat/completions"):
            return httpx.Response(404, json={"error": {"message": f"no route {request.url.path}"}})
        body = json.loads(request.content)
        decision = decide()
        if isinstance(decision, ModelFault):
            if decision.kind == "hang":
                await asyncio.sleep(HANG_S)
            return httpx.Response(500, json={"error": {"message": FAULT_MESSAGE}})
        return httpx.Response(200, json=chat_completion_payload(decision, model=body.get("model", model),
                                                                 prompt_chars=request_chars(body)))

    http_client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    return AsyncOpenAI(api_key="scripted", base_url="http://scripted.invalid/v1", http_client=http_client, max_retries=0)


# ---------------------------------------------------------------------- AutoGen


def scripted_autogen_client(decide: Decide):
    """An AutoGen ``ChatCompletionClient`` (function-calling model info) answering from ``decide()``."""
    from autogen_core import FunctionCall
    from autogen_core.models import ChatCompletionClient, CreateResult, ModelFamily, ModelInfo, RequestUsage

    info = ModelInfo(vision=False, function_calling=True, json_output=False, family=ModelFamily.UNKNOWN,
                     structured_output=False, multiple_system_messages=True)

    class ScriptedChatCompletionClient(ChatCompletionClient):
        def __init__(self) -> None:
            self._total = RequestUsage(prompt_tokens=0, completion_tokens=0)
            self._last = RequestUsage(prompt_tokens=0, completion_tokens=0)
            self.create_calls = 0

        async def create(self, messages, *, tools=(), tool_choice="auto", json_output=None, extra_create_args={},
                         cancellation_token=None) -> CreateResult:
            self.create_calls += 1
            decision = decide()
            await fail_as_scripted(decision)
            prompt = approx_message_tokens(messages)
            if decision is None:
                content: Any = NO_ACTION_TEXT
                finish, out = "stop", approx_tokens(NO_ACTION_TEXT)
            else:
                pairs = decision if isinstance(decision, list) else [decision]
                content = [FunctionCall(id=_call_id(), name=n, arguments=arguments_text(a)) for n, a in pairs]
                finish = "function_calls"
                out = approx_tokens("".join(c.name + c.arguments for c in content))
            self._last = RequestUsage(prompt_tokens=prompt, completion_tokens=out)
            self._total = RequestUsage(prompt_tokens=self._total.prompt_tokens + prompt,
                                       completion_tokens=self._total.completion_tokens + out)
            return CreateResult(finish_reason=finish, content=content, usage=self._last, cached=False)

        async def create_stream(self, messages, **kwargs):  # AssistantAgent streams only when asked to
            yield await self.create(messages, **kwargs)

        async def close(self) -> None:
            return None

        def actual_usage(self) -> RequestUsage:
            return self._last

        def total_usage(self) -> RequestUsage:
            return self._total

        def count_tokens(self, messages, *, tools=()) -> int:
            return approx_message_tokens(messages)

        def remaining_tokens(self, messages, *, tools=()) -> int:
            return 1_000_000 - self.count_tokens(messages)

        @property
        def capabilities(self):  # deprecated in AutoGen, still abstract
            return info

        @property
        def model_info(self) -> ModelInfo:
            return info

    return ScriptedChatCompletionClient()


# ---------------------------------------------------------------------- LangChain / LangGraph


def scripted_langchain_model(decide: Decide):
    """A LangChain ``BaseChatModel`` that supports ``bind_tools`` and answers from ``decide()``."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedChatModel(BaseChatModel):
        decide_fn: Any = None
        bound_tools: list[str] = []

        @property
        def _llm_type(self) -> str:
            return "agentworld-scripted"

        def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any):
            # A real model gets the schemas; the scripted one only needs to know they were offered.
            names = [getattr(t, "name", None) or t.get("function", {}).get("name") for t in tools]
            return self.model_copy(update={"bound_tools": names})

        def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
            return self._answer(messages, self.decide_fn())

        def _answer(self, messages, decision) -> ChatResult:
            prompt = approx_message_tokens(messages)
            if decision is None:
                msg = AIMessage(content=NO_ACTION_TEXT)
                out = approx_tokens(NO_ACTION_TEXT)
            else:
                # as langchain-openai parses an answer: arguments that are a JSON object become a tool call,
                # anything else an invalid tool call carrying the text as emitted
                good, bad, out_chars = [], [], 0
                for name, args in (decision if isinstance(decision, list) else [decision]):
                    text = arguments_text(args)
                    out_chars += len(name) + len(text)
                    try:
                        parsed = json.loads(text) if text.strip() else {}
                    except ValueError:
                        parsed = None
                    if isinstance(parsed, dict):
                        good.append({"name": name, "args": parsed, "id": _call_id(), "type": "tool_call"})
                    else:
                        bad.append({"name": name, "args": text, "id": _call_id(), "error": "not a JSON object",
                                    "type": "invalid_tool_call"})
                msg = AIMessage(content="", tool_calls=good, invalid_tool_calls=bad)
                out = chars_to_tokens(out_chars)
            msg.usage_metadata = {"input_tokens": prompt, "output_tokens": out, "total_tokens": prompt + out}
            return ChatResult(generations=[ChatGeneration(message=msg)])

        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
            decision = self.decide_fn()
            await fail_as_scripted(decision)
            return self._answer(messages, decision)

    return ScriptedChatModel(decide_fn=decide)


# ---------------------------------------------------------------------- CAMEL


def scripted_camel_backend(decide: Decide):
    """A CAMEL ``BaseModelBackend`` answering each request with the policy's call for the current turn."""
    from camel.models import BaseModelBackend
    from camel.types import ChatCompletion, ModelType

    from .common import char_token_counter

    counter = char_token_counter()

    class ScriptedBackend(BaseModelBackend):
        def __init__(self) -> None:
            super().__init__(ModelType.STUB, token_counter=counter)

        @property
        def token_counter(self):
            return counter

        @property
        def token_limit(self) -> int:
            return 1_000_000

        def _completion(self, messages, decision) -> ChatCompletion:
            payload = chat_completion_payload(decision, model="scripted",
                                              prompt_chars=sum(message_chars(m) for m in messages))
            return ChatCompletion.model_validate(payload)

        def _run(self, messages, response_format=None, tools=None):
            return self._completion(messages, decide())

        async def _arun(self, messages, response_format=None, tools=None):
            decision = decide()
            await fail_as_scripted(decision)
            return self._completion(messages, decision)

        def check_model_config(self) -> None:
            return None

    return ScriptedBackend()
