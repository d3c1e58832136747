"""The MCP server's plugin: the ``"mcp"`` tool server an episode starts for a team with ``--tools mcp``, and the
CLI commands ``agentworld serve`` and ``agentworld mcp-stdio``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..core.cli.backend import parse_world, world_options
from ..core.hookspecs import hookimpl


class EpisodeSeats:
    """The episode's MCP server as the episode holds it (``core/play/protocol.ToolServer``): the seats of the
    team's agents, and ``aclose`` (stops the server when this started it, not when it joined one)."""

    def __init__(self, server: Any, owns: bool, agent_ids: list[str]):
        self.server = server
        self.owns = owns
        self.seats = {a: (server.url, server.token(a)) for a in agent_ids}

    async def aclose(self) -> None:
        if self.owns:
            await self.server.stop("the episode has ended")


async def start_tool_server(episode: Any) -> EpisodeSeats:
    """The ``"mcp"`` tool server: start the episode's MCP server (or join the one ``agentworld serve`` started)
    for a team whose ``tool_server`` is ``"mcp"``, and bind the MCP seats' own teams to its turn tracker. The
    episode calls this before ``Team.start`` and puts the seats in the team's view.

    The team is asked through its own interface, so a wrapper that forwards attributes (the runner's rate
    limiter) is transparent: teams of MCP seats (turns.py) say who plays each seat (``seat_players``) and
    take the tracker (``bind``); any other team is played in process by its framework."""
    from .server import EpisodeMcpServer

    existing = getattr(episode, "mcp_server", None)
    agent_ids = list(episode.agent_ids)
    team = episode.team
    framework = episode.framework or "framework"
    seat_players = getattr(team, "seat_players", None)
    players = seat_players(agent_ids, framework) if seat_players is not None else dict.fromkeys(agent_ids, framework)
    # the external seats' own bound when they have one, else the episode's turn timeout
    timeout = float(getattr(team, "turn_timeout", None) or episode.turn_timeout or 300.0)
    server = await EpisodeMcpServer.join_or_start(episode, players=players, turn_timeout=timeout)
    if seat_players is not None and team.tracker is None:
        team.bind(server.tracker)
    return EpisodeSeats(server, server is not existing, agent_ids)  # a server it started, it stops


@hookimpl
def register_tool_servers(register: Any) -> None:
    register("mcp", start_tool_server, description="the episode's MCP server (streamable HTTP), for --tools mcp")


async def serve_episode(task_ref: Any, *, host: str = "127.0.0.1", port: int = 0, seats_path: str | None = None,
                        seat_options: tuple[str, ...] = (), turn_timeout: float = 120.0, seed: int = 0,
                        variant: str = "vanilla", out_dir: str | None = None, model: str = "",
                        connect_timeout: float | None = None, announce: Any = None, world: Any = None,
                        linger: float = 30.0, allow_hosts: tuple[str, ...] = (), limits: Any = None,
                        world_backend: str = "embedded", world_options: dict[str, Any] | None = None,
                        stream_after: float | None = None, on_end: Any = None) -> Any:
    """Run one episode whose external seats are played over MCP; returns the EpisodeResult.

    ``announce(server, seats_file_path)`` is called once the server listens and the seats file is written
    (the CLI prints connection instructions there; tests read the seats). ``task_ref`` is a task id, a YAML
    path or a loaded Task; ``world`` replaces the default world (tests use a small one), or
    ``world_backend``/``world_options`` choose another backend (``paper-server`` with its ``server_url``). After the episode
    the server keeps answering for ``linger`` seconds, sessions open or not, so that every external seat is told
    how it ended, also one that left earlier or connects anew per call (``on_end(result, linger)`` is called
    when it ends).
    ``allow_hosts`` and ``limits`` (HttpLimits) configure the HTTP layer (mcp_server/guard.py),
    ``stream_after`` when a result switches from one JSON body to an SSE stream (mcp_server/transport.py).
    The seats file goes to ``seats_path``, by default a private folder outside the episode folder."""
    from ..core import plugins
    from ..core.play.episode import Episode
    from ..core.play.protocol import TeamSpec
    from ..core.play.view import privileged_grants
    from ..core.tasks.task import find_task
    from ..core.tasks.variants import apply_variant
    from .seats import SeatsFile, default_seats_path, parse_seat_options, write_seats_file
    from .server import EpisodeMcpServer
    from .turns import ExternalSeatsTeam, MixedTeam

    players = parse_seat_options(seat_options)
    # a server world's items and map are not ours: its tasks are checked by the server when the agents join
    task = (find_task(task_ref, validate=world_backend == "embedded") if isinstance(task_ref, (str, Path))
            else task_ref)
    # seats and in-process teams follow the task as the variant makes it (single_agent seats one agent)
    played = apply_variant(task, variant, seed)
    unknown = sorted(set(players) - set(played.agent_ids))
    if unknown:
        raise ValueError(f"--seat names unknown agent(s) {', '.join(unknown)}; task {task.id} under variant "
                         f"{variant} has agents: {', '.join(played.agent_ids)}")
    # every agent is external unless seated with an in-process framework; one team per framework
    seated = {a: players.get(a, "external") for a in played.agent_ids}
    external_ids = [a for a, player in seated.items() if player == "external"]
    by_framework: dict[str, list[str]] = {}
    for agent_id, player in seated.items():
        if player != "external":
            by_framework.setdefault(player, []).append(agent_id)
    for framework in by_framework:
        try:
            plugins.get("framework", framework)
        except KeyError as exc:
            raise click.BadParameter(str(exc.args[0]), param_hint="--seat") from None
    # model-less teams (oracle, random, idle) ignore the model; framework teams default to the scripted oracle
    seat_model = model or "scripted:oracle"
    plans = {framework: privileged_grants(played, framework, seat_model) for framework in by_framework}

    def build_team(view: Any) -> Any:
        """The episode's team: the external seats, and one in-process team per framework built from the view
        of its own agents (the oracle alone also gets the reference plan)."""
        external = ExternalSeatsTeam(turn_timeout=turn_timeout, agent_ids=external_ids)
        routes: dict[str, Any] = dict.fromkeys(external_ids, external)
        for framework, agent_ids in by_framework.items():
            routes.update(dict.fromkeys(agent_ids, plugins.get("framework", framework)(TeamSpec(
                view=view.only(agent_ids), model=seat_model, seed=seed, agent_ids=agent_ids,
                options={"tools": "inproc"}, reference_plan=plans[framework][0]))))
        return MixedTeam(routes)

    out = Path(out_dir) if out_dir else Path("runs") / "serve" / f"{task.id}-s{seed}"
    episode = Episode(task, seed=seed, variant=variant, out_dir=out, framework="mcp",
                      model=model or "external", turn_timeout=turn_timeout, world=world, played_task=played,
                      world_backend=world_backend, world_options=world_options, build_team=build_team,
                      grants=sorted({g for _, granted in plans.values() for g in granted}))
    team = episode.team
    server = await EpisodeMcpServer(episode, players=seated, host=host, port=port, turn_timeout=turn_timeout,
                                    allow_hosts=allow_hosts, limits=limits, stream_after=stream_after).start()
    team.bind(server.tracker)
    try:
        listed = [s if s.external else s.model_copy(update={"token": "", "url": ""}) for s in server.seats]
        seats_file = SeatsFile(task_id=task.id, url=server.url, turn_timeout_s=turn_timeout, seats=listed)
        path = write_seats_file(seats_path or default_seats_path(task.id, seed), seats_file)
        if announce is not None:
            announce(server, path)
        if external_ids:
            missing = await server.wait_connected(external_ids, connect_timeout)
            if missing:
                click.echo(f"starting without seat(s) {', '.join(sorted(missing))}: not connected within "
                           f"{connect_timeout:g} s (their turns time out)", err=True)
        result = await episode.run()
        if on_end is not None:
            on_end(result, linger)
        await server.linger(linger)
    finally:
        await server.stop("the episode has ended")
    return result


def _announce(server: Any, path: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=True)
    table = Table("agent", "username", "role", "played by", title=f"AgentWorld MCP server: {server.url}")
    for s in server.seats:
        table.add_row(s.agent_id, s.username, s.role, s.player)
    console.print(table)
    # tokens on lines of their own, never wrapped or cut: they are copied from here
    for s in server.seats:
        if s.external:
            console.print(f"token of {s.agent_id} ({s.username}): {s.token}", soft_wrap=True, highlight=False,
                          markup=False)
    console.print(f"Seats file (keep it private: it holds the tokens): [bold]{path}[/]", soft_wrap=True)
    console.print("Connect an MCP client to the URL with the header [bold]Authorization: Bearer <token>[/], or "
                  "through stdio:\n  agentworld mcp-stdio --url " + server.url + " --token <token>")
    console.print("The episode starts when every external seat has connected. See docs/mcp.md.")


class _EndOfServe:
    """What `agentworld serve` prints when the episode ends, before it lingers for the seats not told yet."""

    def __init__(self) -> None:
        self.results: list[Any] = []

    def append_and_tell(self, result: Any, linger: float) -> None:
        self.results.append(result)
        click.echo(f"{result.task_id}: success={result.success} psr={result.psr:.2f} end={result.end_reason} "
                   f"rounds={result.rounds} actions={result.actions} refused={result.refused_calls}")
        if linger > 0:
            click.echo(f"The server keeps answering for {linger:g} s (--linger), so that every seat learns how the "
                       f"episode ended; Ctrl-C stops it now.", err=True)


@hookimpl
def register_commands(cli: Any) -> None:
    from ..core.runs.bench import bench_group
    from .bench import mcp_load

    bench_group.add_command(mcp_load)

    @cli.command("serve")
    @click.option("--task", "task_ref", required=True, help="Task id or path to a task YAML file.")
    @click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (loopback by default).")
    @click.option("--port", default=0, type=int, help="TCP port (default: a free one).")
    @click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME[:PORT]",
                  help="Host name or address clients use to reach the server (repeatable; needed with a --host "
                       "other than loopback: requests with another Host header are refused).")
    @click.option("--seats", "seats_path", default=None,
                  help="Where to write the seats JSON (default: a private folder of yours, outside the run folder).")
    @click.option("--seat", "seat_options", multiple=True, metavar="AGENT=PLAYER",
                  help="Play an agent in process instead, e.g. --seat agent_2=oracle (repeatable).")
    @click.option("--turn-timeout", default=120.0, type=float, show_default=True,
                  help="Seconds an agent has to make its call once its turn opens; then the turn is lost.")
    @click.option("--connect-timeout", default=None, type=float,
                  help="Start the episode after this many seconds even if some seats have not connected.")
    @click.option("--linger", default=30.0, type=float, show_default=True,
                  help="Seconds the server keeps answering after the episode ends (sessions open or not), so that "
                       "every external seat, also one that left earlier or connects anew per call, is told the "
                       "outcome.")
    @click.option("--seed", default=0, type=int, show_default=True)
    @click.option("--variant", default="vanilla", show_default=True, help="Protocol variant.")
    @click.option("--model", default="", help="Model spec for in-process seats (default scripted:<framework>).")
    @click.option("--out", "out_dir", default=None, help="Episode folder (default runs/serve/<task>-s<seed>).")
    @click.option("--max-connections", type=int, default=None,
                  help="Open TCP connections at once; more are closed at once [default: 16 + 8 per seat].")
    @click.option("--max-sessions-per-seat", type=int, default=4, show_default=True,
                  help="Open MCP sessions of one seat (HTTP 429 beyond); in total 4 per seat unless --max-sessions.")
    @click.option("--max-sessions", type=int, default=None, help="Open MCP sessions in total (HTTP 503 beyond).")
    @click.option("--header-timeout", type=float, default=10.0, show_default=True,
                  help="Seconds a client has to send a request's headers (slow clients are cut off).")
    @click.option("--idle-timeout", type=float, default=5.0, show_default=True,
                  help="Seconds an idle keep-alive connection stays open.")
    @click.option("--session-idle-timeout", type=float, default=600.0, show_default=True,
                  help="Seconds an MCP session with no request stays open.")
    @click.option("--stream-after", type=float, default=None,
                  help="Seconds a result may take to come back as one JSON body; a later one comes on an SSE stream "
                       "(progress notifications, keep-alive pings). 0: always SSE. On the MCP SDK 2.x every "
                       "answer is an SSE stream [default: the progress interval, 5 s].")
    @world_options
    def serve(task_ref: str, host: str, port: int, seats_path: str | None, seat_options: tuple[str, ...],
              turn_timeout: float, connect_timeout: float | None, linger: float, seed: int, variant: str,
              model: str, out_dir: str | None, allow_hosts: tuple[str, ...], max_connections: int | None,
              max_sessions_per_seat: int, max_sessions: int | None, header_timeout: float, idle_timeout: float,
              session_idle_timeout: float, stream_after: float | None, world: str | None, server_url: str | None,
              world_option: tuple[str, ...]) -> None:
        """Serve a task's seats over MCP (streamable HTTP) and run the episode when the players connect."""
        try:  # an MCP SDK the server does not know is refused with the fix, not a traceback
            from . import transport  # noqa: F401
        except ImportError as exc:
            raise click.ClickException(str(exc)) from None
        from ..core.tasks.task import TaskError
        from ..core.world.api import WorldUnavailable
        from .guard import HttpLimits, is_loopback, transport_security

        if turn_timeout <= 0:
            raise click.BadParameter("must be > 0 seconds", param_hint="--turn-timeout")
        if stream_after is not None and stream_after < 0:
            raise click.BadParameter("must be >= 0 seconds (0: always answer on an SSE stream)", param_hint="--stream-after")
        backend, options = parse_world(world, server_url, world_option)
        try:
            limits = HttpLimits(header_timeout=header_timeout, idle_timeout=idle_timeout,
                                max_connections=max_connections, max_sessions=max_sessions,
                                max_sessions_per_seat=max_sessions_per_seat,
                                session_idle_timeout=session_idle_timeout).check()
            transport_security(host, allow_hosts)  # refuse an exposed server without its host names up front
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        if not is_loopback(host):
            click.echo(f"WARNING: --host {host} makes the server reachable from other machines. Anyone who has a "
                       f"seat's token can play it, and plain HTTP carries tokens and play unencrypted: put a TLS "
                       f"proxy in front on untrusted networks. Accepted Host names: {', '.join(allow_hosts)}.",
                       err=True)
        ended = _EndOfServe()
        try:
            from .eventloop import run

            run(serve_episode(
                task_ref, host=host, port=port, seats_path=seats_path, seat_options=seat_options,
                turn_timeout=turn_timeout, seed=seed, variant=variant, out_dir=out_dir, model=model,
                connect_timeout=connect_timeout, announce=_announce, allow_hosts=allow_hosts, limits=limits,
                world_backend=backend, world_options=options or None, linger=max(0.0, linger),
                stream_after=stream_after, on_end=ended.append_and_tell))
        except (TaskError, ValueError, KeyError, WorldUnavailable) as exc:
            raise click.ClickException(str(exc)) from None
        except KeyboardInterrupt:
            if ended.results:  # Ctrl-C while lingering: the episode is over and said so
                click.echo("stopped: the server no longer answers", err=True)
                return
            raise click.ClickException("interrupted: the episode folder holds everything recorded so far") from None

    @cli.command("mcp-stdio")
    @click.option("--url", required=True, help="The seat's MCP URL (from the seats file).")
    @click.option("--token", default=None, envvar="AGENTWORLD_TOKEN",
                  help="The seat's bearer token (or env AGENTWORLD_TOKEN).")
    def mcp_stdio(url: str, token: str | None) -> None:
        """Relay a stdio MCP client (desktop assistant, coding agent) to a seat of `agentworld serve`."""
        try:  # an MCP SDK agentworld does not know is refused with the fix, not a traceback
            from .bridge import BridgeError, run_bridge
        except ImportError as exc:
            raise click.ClickException(str(exc)) from None

        if not token:
            raise click.UsageError("give the seat's token: --token TOKEN or env AGENTWORLD_TOKEN (see the seats file)")
        try:
            import asyncio

            asyncio.run(run_bridge(url, token))
        except BridgeError as exc:
            raise click.ClickException(str(exc)) from None
        except KeyboardInterrupt:
            sys.exit(130)
