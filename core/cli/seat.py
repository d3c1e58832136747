"""``agentworld seat brief|look|call``: play one seat of a running ``agentworld serve`` from a shell.

Each command is one short MCP session (the MCP SDK's ``ClientSession`` over streamable HTTP, the seat's
bearer token in ``Authorization``), so a person, a script or a command-line LLM agent plays a seat with
nothing but the seats file and an agent id:

- ``brief``: the agent's brief (the system prompt an in-process agent gets: role, objective, rules), its
  tools with their arguments, and how to play with these commands;
- ``look``: waits until it is the agent's turn (or the episode is over) and prints the observation;
- ``call TOOL [JSON | KEY=VALUE ...]``: makes the turn's one call and prints its outcome and the observation
  of the agent's next turn (the server answers when that turn opens).

How a call is kept safe: the server makes an early call wait for its turn, at most its wait bound; a call
that waited in vain is answered with ``executed: false`` (``[timeout]``), and this client sends it again, which
cannot run it twice. A seat that has left (``complete``, death, out of actions) is told how the episode ended
once it ends. Ctrl-C closes the connection: the server drops a call that still waits, so it never runs.

Output: plain text (for scripts and LLM agents in a shell), ``--json`` (one object per command), a rich
layout when stdout is a terminal. Exit status: 0 it is your turn (or the brief was printed), 3 the episode
is over (the outcome is printed), 4 ``--max-wait`` passed first, 1 an error (one line on stderr), 130
interrupted.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import click

from ..hookspecs import hookimpl

OBSERVATION_MARK = "\n\n--- Your observation now ---\n"  # how the server appends the observation to a result
READ_TIMEOUT_S = 600.0  # longer than the server's wait bound (at most 240 s): it answers before this
POLL_S = (0.05, 1.0)  # a waiting `look` reads agentworld://turn from every 50 ms to every second
EPISODE_OVER = 3  # exit status once the episode is over
RESOURCES = ("agentworld://brief", "agentworld://observation", "agentworld://turn")


class SeatError(click.ClickException):
    """A one-line error for the player (exit status 1): what is wrong, with which argument, and the fix."""

    def show(self, file: Any = None) -> None:
        click.echo(f"agentworld seat: {self.message}", err=True)


@dataclass
class Target:
    """The seat to play: where the server is, the token, and how the player named it (for the hints)."""

    url: str
    token: str
    agent: str = ""  # agent id, when known before connecting (from the seats file)
    username: str = ""
    how: str = ""  # the connection options to repeat in hints, without the token itself
    turn_timeout: float | None = None  # seconds a seat has to call once its turn opens (from the seats file)


@dataclass
class Printer:
    """Where output goes: one JSON object (``--json``), a rich layout (a terminal) or plain text."""

    as_json: bool
    rich: bool = field(default_factory=lambda: sys.stdout.isatty())

    def text(self, body: str, title: str = "", style: str = "", plain_head: str = "") -> None:
        """``body`` in a panel titled ``title`` in a terminal; else after the line ``plain_head`` (if any)."""
        if self.rich:
            from rich.console import Console
            from rich.panel import Panel
            from rich.text import Text

            Console().print(Panel(Text(body), title=title or None, title_align="left", border_style=style or "none"))
        else:
            click.echo(f"{plain_head}\n{body}" if plain_head else body)

    def hint(self, line: str) -> None:
        if self.rich:
            from rich.console import Console

            Console().print(line, style="bold", markup=False, highlight=False, soft_wrap=True)
        else:
            click.echo(line)

    def data(self, obj: dict[str, Any]) -> None:
        click.echo(json.dumps(obj, ensure_ascii=False))


# -- finding the seat ---------------------------------------------------------------------------------------
def resolve(seats: str | None, agent: str | None, url: str | None, token: str | None) -> Target:
    """The seat from ``--seats FILE --agent ID`` or ``--url URL --token TOKEN``; errors name the fix."""
    if url:
        if not token:
            raise SeatError("--url needs the seat's token: --token TOKEN or env AGENTWORLD_TOKEN (from the seats file)")
        shown = ("" if os.environ.get("AGENTWORLD_URL") == url else f"--url {url}") + \
                ("" if os.environ.get("AGENTWORLD_TOKEN") == token else " --token TOKEN")
        return Target(url=url, token=token, how=shown.strip())
    if not seats:
        raise SeatError("which seat? give --seats FILE --agent ID (the seats file `agentworld serve` wrote), or "
                        "--url URL --token TOKEN")
    from ..play.seats import read_seats_file

    try:
        seats_file = read_seats_file(seats)
    except FileNotFoundError:
        raise SeatError(f"--seats {seats}: no such file; give the seats file `agentworld serve --seats FILE` "
                        f"wrote (it prints where, once it listens: a server still starting has not written it)"
                        ) from None
    except (ValueError, OSError) as exc:
        raise SeatError(f"--seats {seats}: {exc}") from None
    everyone = ", ".join(f"{s.agent_id} ({s.username}{'' if s.external else ', played by ' + s.player})"
                         for s in seats_file.seats)
    if not agent:
        raise SeatError(f"--agent is missing: which seat of {seats} do you play? Seats: {everyone}")
    seat = seats_file.find(agent)
    if seat is None:
        raise SeatError(f"--agent {agent}: no such seat in {seats}; seats: {everyone}")
    if not seat.external or not seat.token:
        mine = ", ".join(s.agent_id for s in seats_file.seats if s.external) or "none"
        raise SeatError(f"--agent {agent}: that seat is played in process by {seat.player}, not from outside; "
                        f"external seats: {mine}")
    shown = ("" if os.environ.get("AGENTWORLD_SEATS") == seats else f" --seats {seats}") + \
            ("" if os.environ.get("AGENTWORLD_AGENT") == agent else f" --agent {agent}")
    return Target(url=seat.url or seats_file.url, token=seat.token, agent=seat.agent_id, username=seat.username,
                  how=shown.strip(), turn_timeout=seats_file.turn_timeout_s)


def with_observation_data(url: str) -> str:
    """The endpoint URL asking for every result's observation as data too (``?observation=data``)."""
    parts = urlsplit(url)
    query = "&".join(q for q in parts.query.split("&") if q and not q.startswith("observation="))
    return urlunsplit(parts._replace(query=(query + "&" if query else "") + "observation=data"))


# -- talking to the server ----------------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def open_session(target: Target, data: bool) -> AsyncIterator[Any]:
    """An initialized MCP ``ClientSession`` of the seat (closed, and its server session ended, on exit)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from ..play.mcp_sdk import http  # httpx on the MCP SDK 1.x, httpx2 on 2.x

    client = http.AsyncClient(headers={"Authorization": f"Bearer {target.token}"},
                              timeout=http.Timeout(30.0, read=READ_TIMEOUT_S))
    url = with_observation_data(target.url) if data else target.url
    answered = False
    try:
        async with client, streamable_http_client(url, http_client=client) as (read, write, *_), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session
            answered = True
    except Exception:
        # once the command has its answer, what ending the session raises is no error of the player's: the
        # server answers a request still open then (a call given up on with --max-wait) with HTTP 500
        if not answered:
            raise


async def read_text(session: Any, uri: str) -> str:
    from mcp import types

    result = await session.read_resource(uri)  # type: ignore[arg-type]
    return "".join(c.text for c in result.contents if isinstance(c, types.TextResourceContents))


async def read_turn(session: Any) -> dict[str, Any]:
    return json.loads(await read_text(session, "agentworld://turn"))


async def wait_for_turn(session: Any, max_wait: float | None, status: Any) -> dict[str, Any]:
    """Read ``agentworld://turn`` until it is the seat's turn or the episode is over (a seat that has left
    waits for the end), or ``max_wait`` seconds pass; returns the last state read."""
    import asyncio

    loop = asyncio.get_running_loop()
    started = loop.time()
    delay = POLL_S[0]
    while True:
        state = await read_turn(session)
        if state.get("your_turn") or state.get("episode", {}).get("over"):
            return state
        if max_wait is not None and loop.time() - started >= max_wait:
            return state
        status(waiting_text(state))
        await asyncio.sleep(delay)
        delay = min(delay * 1.5, POLL_S[1])


def waiting_text(state: dict[str, Any]) -> str:
    if state.get("active") is False:
        why = f" ({state['left']})" if state.get("left") else ""
        return f"you have left the episode{why}: waiting for it to end"
    if state.get("agent_id"):
        return f"waiting for your turn: it is {state.get('username')}'s turn (round {state.get('round')})"
    return "waiting for the episode to start (every external seat must connect)"


def split_result(text: str) -> tuple[str, str]:
    """A result's text as (outcome, observation): the server appends the observation after a marker."""
    outcome, _, observation = text.partition(OBSERVATION_MARK)
    return outcome, observation


def describe_error(exc: BaseException, target: Target) -> str:
    """One line for whatever the MCP client raised (anyio wraps errors in exception groups)."""
    from ..play.mcp_sdk import McpError, http as httpx  # httpx on the MCP SDK 1.x, httpx2 on 2.x

    status, reason = None, ""
    if isinstance(exc, httpx.HTTPStatusError):  # the SDK 1.x client raises the HTTP status of a refusal
        status, reason = exc.response.status_code, exc.response.reason_phrase  # (a streamed body is not read)
    elif isinstance(exc, McpError) and isinstance(exc.error.data, dict):  # 2.x: the server's refusal body
        status, reason = exc.error.data.get("status"), exc.error.message
    if status == 401:
        return ("the server refused the token (HTTP 401); tokens are new at every `agentworld serve` start: use "
                "the seats file it wrote this time")
    if status == 429:
        return ("this seat already holds the most MCP sessions the server allows (HTTP 429): wait until another "
                "command of this seat has finished")
    if status is not None:
        return f"the server at {target.url} answered HTTP {status} {reason}"
    if isinstance(exc, (httpx.ConnectError, httpx.RemoteProtocolError, ConnectionError)):
        # three causes, each with its own remedy: a player told only "not running" took a server that had not
        # started for one whose episode was over (pilot of task_524)
        return (f"cannot reach the server at {target.url}: it has not started yet (try again in a few seconds), "
                f"it is not running any more (`agentworld serve` stops --linger seconds after the episode ends; "
                f"its result.json has the outcome), or the URL is wrong (check the seats file)")
    if isinstance(exc, httpx.TimeoutException):
        return f"the server at {target.url} did not answer in time ({type(exc).__name__}); try again"
    if isinstance(exc, McpError):
        return f"the server refused the request: {exc}"
    return f"{type(exc).__name__}: {exc}"


def run(target: Target, work: Any) -> Any:
    """Run one command's session; any failure of the connection is one line naming the fix."""
    import asyncio
    import signal

    # Ctrl-C abandons a waiting call, also in a process started where SIGINT was ignored (a background job
    # of a shell, a test runner): asyncio.run turns it into cancelling the call, which closes the connection
    signal.signal(signal.SIGINT, signal.default_int_handler)

    async def main() -> Any:
        try:
            return await work()
        except BaseException:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # Ctrl-C, whatever the closing session raised meanwhile
                raise KeyboardInterrupt from None  # (the server answers a call cut off by its session's end 500)
            raise

    try:
        return asyncio.run(main())
    except (click.ClickException, KeyboardInterrupt):
        raise
    except BaseException as exc:  # the SDK's task groups wrap what went wrong in exception groups
        inner = exc
        while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
            inner = inner.exceptions[0]
        if isinstance(inner, (click.ClickException, KeyboardInterrupt, SystemExit)):
            raise inner from None
        raise SeatError(describe_error(inner, target)) from None


def interruptible(command: Any) -> Any:
    """``command()``; Ctrl-C ends it with one line and exit status 130 (reads change nothing in the game)."""
    try:
        return command()
    except KeyboardInterrupt:
        click.echo("agentworld seat: interrupted (nothing was sent to the game)", err=True)
        sys.exit(130)


@contextlib.contextmanager
def reader_may_leave() -> Any:
    """Printing, where a reader that stopped reading (``| head``) is no error and no traceback."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python would complain at exit


class Status:
    """A one-line "waiting ..." status: a spinner in a terminal, nothing in a pipe (plain output stays the
    observation alone)."""

    def __init__(self, printer: Printer):
        self.live = None
        if printer.rich and not printer.as_json:
            from rich.console import Console

            self.live = Console(stderr=True).status("connecting ...")
            self.live.start()

    def __call__(self, text: str) -> None:
        if self.live is not None:
            self.live.update(text + "  (Ctrl-C to stop)")

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


# -- the commands --------------------------------------------------------------------------------------------
def seat_options(fn: Any) -> Any:
    fn = click.option("--json", "as_json", is_flag=True, help="One JSON object for programs.")(fn)
    fn = click.option("--token", envvar="AGENTWORLD_TOKEN", default=None,
                      help="The seat's bearer token, with --url (or env AGENTWORLD_TOKEN).")(fn)
    fn = click.option("--url", envvar="AGENTWORLD_URL", default=None,
                      help="The server's MCP URL, instead of --seats (or env AGENTWORLD_URL).")(fn)
    fn = click.option("--agent", envvar="AGENTWORLD_AGENT", default=None,
                      help="Your seat: its agent id or username (or env AGENTWORLD_AGENT).")(fn)
    fn = click.option("--seats", envvar="AGENTWORLD_SEATS", default=None, metavar="FILE",
                      help="The seats file `agentworld serve` wrote (or env AGENTWORLD_SEATS).")(fn)
    return fn


@click.group("seat")
def seat_group() -> None:
    """Play one seat of a running `agentworld serve` from a shell: brief, look, call.

    \b
      agentworld seat brief --seats seats.json --agent agent_1
      agentworld seat look  --seats seats.json --agent agent_1
      agentworld seat call move_character '{"x": 123, "y": 456}' --seats seats.json --agent agent_1
    """


def tool_signature(tool: Any) -> str:
    """``name(arg: type, opt: type = default)`` from a listed tool's JSON schema."""
    from ..play.mcp_sdk import input_schema  # the SDK 1.x and 2.x name these fields apart

    schema = input_schema(tool) or {}
    required = set(schema.get("required", []))
    args = []
    for name, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type", "any") if "enum" not in prop else "|".join(map(str, prop["enum"]))
        if name in required:
            args.append(f"{name}: {kind}")
        else:
            args.append(f"{name}: {kind} = {json.dumps(prop['default'])}" if "default" in prop else
                        f"{name}: {kind} (optional)")
    return f"{tool.name}({', '.join(args)})"


def tool_lines(tools: list[Any]) -> str:
    from ..play.mcp_sdk import input_schema  # the SDK 1.x and 2.x name these fields apart

    lines = []
    for t in tools:
        lines.append(f"- {tool_signature(t)}: {t.description}")
        for name, prop in ((input_schema(t) or {}).get("properties") or {}).items():
            if prop.get("description"):
                lines.append(f"    {name}: {prop['description']}")
    return "\n".join(lines)


def how_to_play(target: Target) -> str:
    how = f" {target.how}" if target.how else ""
    return "\n".join([
        "# How to play from this shell",
        f"- See your observation (waits until it is your turn): agentworld seat look{how}",
        f"- Make your turn's one call: agentworld seat call TOOL '{{\"arg\": value}}'{how}",
        # made-up numbers: an example naming a real place (it once named Hearthmoor's workbench) is a clue that
        # no-communication pilots used to find a village their brief does not locate
        f"  e.g. agentworld seat call move_character '{{\"x\": 123, \"y\": 456}}'{how} (made-up numbers)",
        "  (arguments may also be given as KEY=VALUE words: move_character x=123 y=456)",
        # no tool in the example: a no-communication seat has no chat, and a chat example read as if it had
        "  (an apostrophe ends a single-quoted argument, JSON or not: give that argument as a KEY=VALUE word in "
        "double quotes, e.g. KEY=\"it's\")",
        "- A call made before your turn waits for it. It prints what happened and then your observation at your "
        "next turn, so you can decide and call again at once; you need `look` only for your first turn.",
        f"- Once your turn opens you have {target.turn_timeout:g} s to make your call; after that the turn is lost."
        if target.turn_timeout else "- Once your turn opens, call soon: the server's turn timeout loses a turn "
                                    "nobody calls in.",
        "- A call the game refuses (wrong arguments, too far away ...) still uses your turn; this command only "
        "checks the tool's name and the JSON before sending. To wait, call sleep.",
        "- Commands wait as long as the game needs; add --max-wait SECONDS to return sooner (exit status 4: "
        "nothing sent before your turn; a call already made shows its outcome as Last action).",
        # the printed line, not only the exit status: some shells and tools never show a command's exit status
        "- The episode has ended when a command prints a line starting \"The episode is over\", which says how it "
        "ended (the command also exits with status 3). That line is the end even where your shell shows no exit "
        "status: there are no more turns, so stop playing.",
    ])


@seat_group.command("brief")
@seat_options
def brief_cmd(seats: str | None, agent: str | None, url: str | None, token: str | None, as_json: bool) -> None:
    """Print your brief: role, objective, rules, your tools and their arguments, how to play."""
    target = resolve(seats, agent, url, token)
    printer = Printer(as_json)

    async def work() -> dict[str, Any]:
        async with open_session(target, data=False) as session:
            brief = await read_text(session, "agentworld://brief")
            tools = (await session.list_tools()).tools
            state = await read_turn(session)
        return {"agent_id": state.get("you") or target.agent, "brief": brief, "tools": tools, "state": state}

    got = interruptible(lambda: run(target, work))
    with reader_may_leave():
        show_brief(printer, got, target)


def show_brief(printer: Printer, got: dict[str, Any], target: Target) -> None:
    from ..play.mcp_sdk import input_schema  # the SDK 1.x and 2.x name these fields apart

    if printer.as_json:
        printer.data({"agent_id": got["agent_id"], "brief": got["brief"],
                      "tools": [{"name": t.name, "description": t.description, "inputSchema": input_schema(t)}
                                for t in got["tools"]],
                      "how_to_play": how_to_play(target), "episode": got["state"].get("episode")})
        return
    body = (got["brief"].rstrip() + "\n\n# Your tools (one call per turn)\n" + tool_lines(got["tools"]) + "\n\n"
            + how_to_play(target))
    printer.text(body, title=f"Brief of {got['agent_id']}")


@seat_group.command("look")
@click.option("--max-wait", type=float, default=None, metavar="SECONDS",
              help="Give up waiting for your turn after this many seconds (exit status 4) [default: wait].")
@seat_options
def look_cmd(max_wait: float | None, seats: str | None, agent: str | None, url: str | None, token: str | None,
             as_json: bool) -> None:
    """Wait for your turn, then print your observation (reading it never uses a turn)."""
    if max_wait is not None and max_wait < 0:
        raise click.BadParameter("must be >= 0 seconds", param_hint="--max-wait")
    target = resolve(seats, agent, url, token)
    printer = Printer(as_json)
    status = Status(printer)

    async def work() -> dict[str, Any]:
        async with open_session(target, data=as_json) as session:
            state = await wait_for_turn(session, max_wait, status)
            return {"state": state, "observation": await read_text(session, "agentworld://observation")}

    try:
        got = interruptible(lambda: run(target, work))
    finally:
        status.stop()
    state = got["state"]
    over = bool(state.get("episode", {}).get("over"))
    with reader_may_leave():
        show_look(printer, state, got["observation"], over, target)
    sys.exit(exit_status(state))


def show_look(printer: Printer, state: dict[str, Any], observation: str, over: bool, target: Target) -> None:
    if printer.as_json:
        printer.data({"agent_id": state.get("you") or target.agent, "your_turn": bool(state.get("your_turn")),
                      "active": state.get("active"), "round": state.get("round"), "episode": state.get("episode"),
                      "observation_text": observation, "observation": state.get("observation")})
    else:
        printer.text(observation, title=title_of(state, target), style="red" if over else "")
        printer.hint(next_step(state, target))


def title_of(state: dict[str, Any], target: Target) -> str:
    who = target.username or state.get("you") or target.agent
    if state.get("episode", {}).get("over"):
        return f"{who}: the episode is over"
    if state.get("your_turn"):
        return f"{who}: your turn (round {state.get('round')})"
    return f"{who}: not your turn"


def next_step(state: dict[str, Any], target: Target) -> str:
    how = f" {target.how}" if target.how else ""
    episode = state.get("episode", {})
    if episode.get("over"):
        return "The episode is over; there is nothing more to play."
    if state.get("your_turn"):
        return f"Your turn: agentworld seat call TOOL '{{...}}'{how}"
    if state.get("active") is False:
        why = f" ({state['left']})" if state.get("left") else ""
        return (f"You have left the episode{why}. To learn how it ends: agentworld seat look{how} (it waits for "
                "the end).")
    return (f"Not your turn yet ({waiting_text(state)}). Run agentworld seat look{how} again to wait, or make "
            f"your call now: it waits for your turn.")


def exit_status(state: dict[str, Any]) -> int:
    if state.get("episode", {}).get("over"):
        return EPISODE_OVER
    return 0 if state.get("your_turn") else 4


@seat_group.command("call")
@click.argument("tool")
@click.argument("arguments", nargs=-1)
@click.option("--max-wait", type=float, default=None, metavar="SECONDS",
              help="Return within about this many seconds (exit status 4): the call is sent only once your turn "
                   "is open, and if your next turn has not opened by then its result is left for `look` "
                   "[default: wait].")
@seat_options
def call_cmd(tool: str, arguments: tuple[str, ...], max_wait: float | None, seats: str | None, agent: str | None,
             url: str | None, token: str | None, as_json: bool) -> None:
    """Make your turn's call: TOOL with a JSON object '{"x": 1}' (or KEY=VALUE words); prints the outcome and
    your next observation."""
    if max_wait is not None and max_wait <= 0:
        raise click.BadParameter("must be > 0 seconds", param_hint="--max-wait")
    target = resolve(seats, agent, url, token)
    args_text = arguments
    printer = Printer(as_json)
    status = Status(printer)
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")
        status(message or "waiting")

    async def work() -> dict[str, Any]:
        # here, in run(): an MCP SDK agentworld does not know is then one line naming the fix, as any failure
        from ..play.mcp_sdk import is_error, structured_content  # the SDK 1.x and 2.x name these fields apart

        async with open_session(target, data=as_json) as session:
            tools = (await session.list_tools()).tools
            spec = next((t for t in tools if t.name == tool), None)
            if spec is None:
                raise SeatError(unknown_tool(tool, [t.name for t in tools]))
            args = parse_arguments(args_text, spec)
            me = target.agent or (await read_turn(session)).get("you")
            if max_wait is not None:  # send it only into an open turn: a call never waits, so it is never cut off
                import asyncio

                loop = asyncio.get_running_loop()
                deadline = loop.time() + max_wait
                state = await wait_for_turn(session, max_wait, status)
                if not state.get("your_turn") and not state.get("episode", {}).get("over"):
                    return {"args": args, "sent": False, "state": state}
            status(f"calling {tool} (it waits for your turn)")
            while True:
                call = session.call_tool(tool, args, progress_callback=on_progress)
                if max_wait is None:
                    result = await call
                else:
                    try:
                        result = await asyncio.wait_for(call, max(0.5, deadline - loop.time()))
                    except asyncio.TimeoutError:  # it ran in the open turn; its result waits for the next one
                        return {"args": args, "sent": True, "pending": True, "state": await read_turn(session),
                                "observation": await read_text(session, "agentworld://observation")}
                data = structured_content(result) or {}
                retry = (not data.get("executed", True) and data.get("error") in ("timeout", "not_active")
                         and not data.get("episode", {}).get("over"))
                if not retry:  # not executed: the server's wait bound passed first; calling again is safe
                    break
            text = "".join(getattr(c, "text", "") for c in result.content)
            outcome, observation = split_result(text)
            turn = data.get("turn") or {}
            if data.get("episode", {}).get("over"):  # the result tells the outcome and the last observation
                state = {**turn, "you": me, "active": False, "episode": data.get("episode")}
            elif data.get("active") is not False and turn.get("agent_id") == me and not turn.get("call_made"):
                # the usual case: the result came when the seat's next turn opened, with its observation
                state = {**turn, "your_turn": True, "you": me, "active": True, "episode": data.get("episode")}
            else:
                # over, or the result came without the next turn's observation (the seat left, or the server's
                # bound passed before the turn opened): wait for the turn or for the end, and show it
                status(waiting_text({"active": data.get("active")}))
                state = await wait_for_turn(session, None if max_wait is None else
                                            max(0.0, deadline - loop.time()), status)
                observation = await read_text(session, "agentworld://observation")
            return {"args": args, "data": data, "outcome": outcome, "observation": observation, "state": state,
                    "is_error": is_error(result)}

    try:
        got = run(target, work)
    except KeyboardInterrupt:
        status.stop()
        executed = any(p.startswith("waiting for your next turn") for p in progress)
        click.echo("agentworld seat: interrupted: " + (
            "your call was executed; its result waits for your next turn: run `agentworld seat look` to see it"
            if executed else "your call was abandoned: a call still waiting for your turn never runs "
                             "(`agentworld seat look` shows your turn and, as Last action, your last call)"),
                   err=True)
        sys.exit(130)
    finally:
        status.stop()
    with reader_may_leave():
        if "data" in got:
            show_call(printer, tool, got, target)
        else:
            show_unanswered(printer, tool, got, target, max_wait or 0)
    sys.exit(exit_status(got["state"]))


def show_unanswered(printer: Printer, tool: str, got: dict[str, Any], target: Target, max_wait: float) -> None:
    """``call --max-wait``: the turn did not open in time (nothing sent), or the call ran and its result waits
    for the next turn (the observation's Last action line is its outcome)."""
    state = got["state"]
    if not got["sent"]:
        text = (f"Nothing was sent: it is still not your turn after {max_wait:g} s ({waiting_text(state)}). Run the "
                f"same command again to keep waiting.")
    else:
        text = (f"Your {tool} call was made in your turn; its result comes when your next turn opens, which did "
                f"not happen within {max_wait:g} s. Your observation now follows (its Last action line is your "
                f"call's outcome).")
    if printer.as_json:
        printer.data({"agent_id": state.get("you") or target.agent, "tool": tool, "arguments": got["args"],
                      "sent": got["sent"], "executed": got["sent"], "your_turn": False, "message": text,
                      "episode": state.get("episode"), "observation_text": got.get("observation")})
        return
    printer.text(text, title=f"{tool}: {'made' if got['sent'] else 'not sent'}", style="yellow")
    if got.get("observation"):
        printer.text(got["observation"], title=title_of(state, target), plain_head=OBSERVATION_MARK[1:-1])
    printer.hint(next_step(state, target))


def show_call(printer: Printer, tool: str, got: dict[str, Any], target: Target) -> None:
    data, state = got["data"], got["state"]
    if printer.as_json:
        printer.data({"agent_id": state.get("you") or target.agent, "tool": tool, "arguments": got["args"],
                      "executed": data.get("executed"), "ok": data.get("ok"), "error": data.get("error"),
                      "result": data.get("result"), "outcome_text": got["outcome"], "active": data.get("active"),
                      "your_turn": bool(state.get("your_turn")), "round": state.get("round"),
                      "episode": state.get("episode"), "observation_text": got["observation"],
                      "observation": data.get("observation") or state.get("observation")})
    else:
        printer.text(got["outcome"], title=f"{tool}: {'failed' if got['is_error'] else 'done'}",
                     style="red" if got["is_error"] else "green")
        if got["observation"]:  # plain: as the MCP result's text has it
            printer.text(got["observation"], title=title_of(state, target), plain_head=OBSERVATION_MARK[1:-1])
        printer.hint(next_step(state, target))


def unknown_tool(name: str, tools: list[str]) -> str:
    near = difflib.get_close_matches(name, tools, n=1)
    maybe = f"did you mean {near[0]}? " if near else ""
    return f"TOOL {name!r}: no such tool for this seat; {maybe}tools: {', '.join(tools)} (nothing was sent)"


ARGS_HELP = ("give one JSON object in single quotes, e.g. '{\"x\": 123, \"y\": 456}', or KEY=VALUE words, e.g. "
             "x=123 y=456")


def parse_arguments(words: tuple[str, ...], tool: Any) -> dict[str, Any]:
    """The call's arguments: one JSON object, or KEY=VALUE words typed by the tool's schema (a value that
    does not fit its type is sent as written: the server then refuses it as the game would)."""
    from ..play.mcp_sdk import input_schema  # the SDK 1.x and 2.x name these fields apart

    if not words:
        return {}
    if len(words) == 1 and words[0].lstrip().startswith(("{", "[")):
        try:
            value = json.loads(words[0])
        except json.JSONDecodeError as exc:
            raise SeatError(f"ARGUMENTS {words[0][:60]!r}: not valid JSON ({exc.msg} at character {exc.pos}); "
                            f"{ARGS_HELP} (nothing was sent)") from None
        if not isinstance(value, dict):
            raise SeatError(f"ARGUMENTS: must be a JSON object {{...}}, got a {type(value).__name__}; {ARGS_HELP} "
                            f"(nothing was sent)")
        return value
    props = (input_schema(tool) or {}).get("properties") or {}
    out: dict[str, Any] = {}
    for word in words:
        key, sep, raw = word.partition("=")
        if not sep or not key:
            raise SeatError(f"ARGUMENTS {word!r}: expected KEY=VALUE or one JSON object; {ARGS_HELP} (nothing was "
                            f"sent)")
        out[key] = typed(raw, (props.get(key) or {}).get("type"))
    return out


def typed(raw: str, kind: str | None) -> Any:
    if kind == "string":
        return raw
    if kind == "integer":
        with contextlib.suppress(ValueError):
            return int(raw)
    if kind == "boolean" and raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    if kind != "string":
        with contextlib.suppress(json.JSONDecodeError):
            return json.loads(raw)
    return raw


@hookimpl
def register_commands(cli: Any) -> None:
    cli.add_command(seat_group)
