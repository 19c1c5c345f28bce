"""Client processes that load the service: no-op calls, bots, watchers.

Each driver process runs ``clients`` concurrent callers on one grpc.aio
channel, or for the Connect phases on one async Connect client over HTTP/1.1
with the JSON codec, as a browser speaks (asyncio tasks are the cheapest
callers Python has, so the clients steal as little CPU from the server as
they can on a shared machine). Calls
that start inside the measurement window are counted; the parent sums the
processes.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import multiprocessing
import os
import random
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from strata.v1 import game_service_pb2 as pb
from strata.v1 import game_service_pb2_grpc as pb_grpc

from clients.connect import snake_case
from eventstore.sql import SQLAlchemyEventStore


@dataclass
class Tally:
    """What one driver process measured inside the window."""

    calls: int = 0
    latencies: list[float] = field(default_factory=list)
    other_calls: int = 0
    games_finished: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    #: CPU seconds the service process spent inside the window.
    server_cpu: float = 0.0
    #: CPU seconds the driver processes spent inside the window.
    client_cpu: float = 0.0
    #: CPU seconds the service's ``strata worker`` spent inside the window.
    worker_cpu: float = 0.0
    #: CPU seconds this machine's PostgreSQL processes spent inside the
    #: window (0 when the database runs elsewhere).
    database_cpu: float = 0.0
    #: CPU seconds the whole machine spent inside the window (every core's
    #: busy time: the service, the drivers, PostgreSQL and anything else).
    machine_cpu: float = 0.0

    def error(self, error: BaseException) -> None:
        # A gRPC error's code(), or an application error's code (in process).
        code = getattr(error, "code", None)
        code = code() if callable(code) else code
        name = str(getattr(code, "name", type(error).__name__))
        self.errors[name] = self.errors.get(name, 0) + 1

    def merge(self, other: Tally) -> None:
        self.calls += other.calls
        self.latencies.extend(other.latencies)
        self.other_calls += other.other_calls
        self.games_finished += other.games_finished
        self.client_cpu += other.client_cpu
        for name, count in other.errors.items():
            self.errors[name] = self.errors.get(name, 0) + count


@dataclass(frozen=True)
class Window:
    start: float
    end: float

    def counts(self, started: float) -> bool:
        return self.start <= started < self.end


class _Clock:
    """The window, known once the parent says go."""

    def __init__(self, go: EventType, go_at: Any, warmup: float, duration: float):
        self.go = go
        self.go_at = go_at
        self.warmup = warmup
        self.duration = duration

    async def window(self) -> Window:
        while not self.go.is_set():
            await asyncio.sleep(0.01)
        start = float(self.go_at.value) + self.warmup
        return Window(start, start + self.duration)


# -- no-op calls --------------------------------------------------------------


async def _noop(channel: grpc.aio.Channel, clients: int, clock: _Clock) -> Tally:
    stub = health_pb2_grpc.HealthStub(channel)
    request = health_pb2.HealthCheckRequest()
    await stub.Check(request)
    tally = Tally()
    window = await clock.window()

    async def caller() -> None:
        while True:
            started = time.time()
            if started >= window.end:
                return
            begun = time.perf_counter()
            try:
                await stub.Check(request)
            except grpc.RpcError as error:
                tally.error(error)
                continue
            if window.counts(started):
                tally.calls += 1
                tally.latencies.append(time.perf_counter() - begun)

    await asyncio.gather(*(caller() for _ in range(clients)))
    return tally


# -- bots ---------------------------------------------------------------------


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def _bots(
    stub: Any,
    clients: int,
    clock: _Clock,
    seed: int,
    failures: tuple[type[BaseException], ...] = (grpc.RpcError,),
    stubs: Sequence[Any] = (),
) -> Tally:
    """``clients`` bots playing games; bot *i* calls through ``stubs[i % n]``
    when there are ``stubs`` (a connection each), else all through ``stub``."""
    types = (await stub.ListGameTypes(pb.ListGameTypesRequest())).game_types
    tally = Tally()
    window = await clock.window()

    async def bot(number: int) -> None:
        rng = random.Random(seed * 1000 + number)
        game_number = number
        while time.time() < window.end:
            game_type = types[game_number % len(types)]
            game_number += 1
            players = rng.randint(game_type.min_players, game_type.max_players)
            through = stubs[number % len(stubs)] if stubs else stub
            try:
                await _play(through, game_type.game_type, players, rng, window, tally)
            except failures as error:
                tally.error(error)

    await asyncio.gather(*(bot(i) for i in range(clients)))
    return tally


async def _play(
    stub: Any,
    game_type: str,
    players: int,
    rng: random.Random,
    window: Window,
    tally: Tally,
) -> None:
    """One game, every seat played by this bot (one hot-seat token)."""

    def other(started: float) -> None:
        if window.counts(started):
            tally.other_calls += 1

    started = time.time()
    created = await stub.CreateGame(
        pb.CreateGameRequest(game_type=game_type, players=players)
    )
    other(started)
    game_id = created.game_id
    token = ""
    for seat in range(players):
        started = time.time()
        joined = await stub.JoinGame(
            pb.JoinGameRequest(game_id=game_id, player_name=f"bot{seat}"),
            metadata=_auth(token) if token else None,
        )
        other(started)
        token = token or joined.seat_token
    metadata = _auth(token)
    started = time.time()
    await stub.StartGame(pb.StartGameRequest(game_id=game_id), metadata=metadata)
    other(started)
    # The legal actions come with each command's answer: one call a move.
    started = time.time()
    listed = await stub.ListLegalActions(
        pb.ListLegalActionsRequest(game_id=game_id), metadata=metadata
    )
    other(started)
    actions = listed.actions
    while time.time() < window.end:
        if not actions:
            if window.counts(started):
                tally.games_finished += 1
            return
        action = rng.choice(actions)
        started = time.time()
        begun = time.perf_counter()
        response = await stub.SubmitCommand(
            pb.SubmitCommandRequest(
                game_id=game_id,
                seat=action.seat,
                command_id=uuid.uuid4().hex,
                command=action.command,
                include_legal_actions=True,
            ),
            metadata=metadata,
        )
        if window.counts(started):
            tally.calls += 1
            tally.latencies.append(time.perf_counter() - begun)
        actions = response.legal_actions


# -- Connect --------------------------------------------------------------------


class _ConnectStub:
    """The generated async Connect client of GameService with the calling
    convention of a grpc.aio stub: ``await stub.CreateGame(request,
    metadata=…)``; a stream is an async iterator."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        call = getattr(self._client, snake_case(name))

        def invoke(request: Any, metadata: Any = None) -> Any:
            return call(request, headers=dict(metadata or ()))

        return invoke


def connect_client(address: str, codec: Any = None) -> Any:
    """An async Connect client (JSON) of GameService at ``address``
    (``http://host:port``); ``codec``: another than protobuf's JSON mapping."""
    from connectrpc.compat import google_protobuf_json_codec
    from connectrpc.protocol import ProtocolType
    from strata.v1 import game_service_connect

    return game_service_connect.GameServiceClient(
        address,
        codec=codec or google_protobuf_json_codec(),
        protocol=ProtocolType.CONNECT,
        send_compression=None,
    )


def _parsed_json() -> Any:
    """The Connect JSON codec of a browser: each message parsed by the
    standard library's C parser (as ``JSON.parse``), not mapped onto a
    protobuf message in Python (``json_format``, about 90 % of the delay a
    Connect watcher measured in this bench: docs/PERFORMANCE.md)."""
    from connectrpc.compat import google_protobuf_json_codec

    class ParsedJSON(type(google_protobuf_json_codec())):  # type: ignore[misc]
        def decode(self, data: bytes | bytearray, message_class: type) -> Any:
            return json.loads(data)

    return ParsedJSON()


def _recorded_at(response: Any) -> float:
    """When the event a WatchGame message carries was recorded (s)."""
    if isinstance(response, dict):  # parsed JSON
        recorded = response.get("event", {}).get("recordedAt")
        return datetime.fromisoformat(recorded).timestamp() if recorded else 0.0
    event = response.event
    return float(event.recorded_at.seconds + event.recorded_at.nanos / 1e9)


def _connect_errors() -> tuple[type[BaseException], ...]:
    from connectrpc.errors import ConnectError

    return (ConnectError,)


# -- watchers -----------------------------------------------------------------


async def _watchers(
    stub: Any,
    game_id: str,
    watchers: int,
    ready: Any,
    until: float,
) -> list[float]:
    """Follow one game from ``watchers`` streams; the delays (s) from each
    event's recording to its arrival, for events recorded after all
    streams delivered their first event."""
    delays: list[float] = []
    live = asyncio.Event()
    opened = 0
    live_since = 0.0

    async def watcher() -> None:
        nonlocal opened, live_since
        call = stub.WatchGame(pb.WatchGameRequest(game_id=game_id, from_version=1))
        first = True
        try:
            async for response in call:
                arrived = time.time()
                recorded = _recorded_at(response)
                if first:
                    first = False
                    opened += 1
                    if opened == watchers:
                        live_since = time.time()
                        live.set()
                        with ready.get_lock():
                            ready.value = 1
                elif live.is_set() and recorded > live_since:
                    delays.append(arrived - recorded)
                if time.time() > until:
                    break
        finally:
            if hasattr(call, "cancel"):
                call.cancel()
            else:
                await call.aclose()

    tasks = [asyncio.ensure_future(watcher()) for _ in range(watchers)]
    _, pending = await asyncio.wait(tasks, timeout=max(until - time.time(), 1))
    for task in pending:
        task.cancel()
    return delays


async def _own_cpu(clock: _Clock) -> float:
    """CPU seconds this process spends inside the window."""
    window = await clock.window()
    await asyncio.sleep(max(0.0, window.start - time.time()))
    before = time.process_time()
    await asyncio.sleep(max(0.0, window.end - time.time()))
    return time.process_time() - before


# -- process entry points -----------------------------------------------------


def drive(
    kind: str,
    target: str,
    clients: int,
    warmup: float,
    duration: float,
    seed: int,
    ready: EventType,
    go: EventType,
    go_at: Any,
    results: multiprocessing.Queue[Tally],
    connections: int = 1,
) -> None:
    """A driver process: ``kind`` is ``noop``, ``bots`` or ``connect`` (the
    bots over the Connect protocol, JSON, to ``target``, an HTTP address);
    with several ``connections`` (gRPC bots only), each its own TCP
    connection, the bots spread over them (as players on their own devices
    are)."""

    async def run() -> Tally:
        if kind == "connect":
            async with connect_client(target) as client:
                ready.set()
                clock = _Clock(go, go_at, warmup, duration)
                measured, tally = await asyncio.gather(
                    _own_cpu(clock),
                    _bots(
                        _ConnectStub(client), clients, clock, seed, _connect_errors()
                    ),
                )
                tally.client_cpu = measured
                return tally
        async with grpc.aio.insecure_channel(target) as channel:
            await channel.channel_ready()
            own = [
                grpc.aio.insecure_channel(
                    target, options=[("grpc.use_local_subchannel_pool", 1)]
                )
                for _ in range(connections if connections > 1 else 0)
            ]
            for extra in own:
                await extra.channel_ready()
            ready.set()
            clock = _Clock(go, go_at, warmup, duration)
            calls = (
                _noop(channel, clients, clock)
                if kind == "noop"
                else _bots(
                    pb_grpc.GameServiceStub(channel),
                    clients,
                    clock,
                    seed,
                    stubs=[pb_grpc.GameServiceStub(c) for c in own],
                )
            )
            measured, tally = await asyncio.gather(_own_cpu(clock), calls)
            tally.client_cpu = measured
            for extra in own:
                await extra.close()
            return tally

    results.put(asyncio.run(run()))


def watch(
    target: str,
    game_id: str,
    watchers: int,
    ready: Any,
    until: float,
    results: multiprocessing.Queue[list[float]],
) -> None:
    """A watcher process: over gRPC, or over the Connect protocol (JSON)
    when ``target`` is an HTTP address."""

    async def run() -> list[float]:
        if target.startswith("http"):
            async with connect_client(target, _parsed_json()) as client:
                return await _watchers(
                    _ConnectStub(client), game_id, watchers, ready, until
                )
        async with grpc.aio.insecure_channel(target) as channel:
            return await _watchers(
                pb_grpc.GameServiceStub(channel), game_id, watchers, ready, until
            )

    results.put(asyncio.run(run()))


def run_drivers(
    kind: str,
    target: str,
    clients: int,
    warmup: float,
    duration: float,
    processes: int = 2,
    seed: int = 1,
    server_pid: int | None = None,
    worker_pid: int | None = None,
    connections: int = 1,
) -> Tally:
    """``clients`` concurrent callers spread over up to ``processes`` client
    processes (``connections`` connections each); their tallies summed,
    with the CPU time the process ``server_pid`` and its children used
    inside the window (Linux)."""
    context = multiprocessing.get_context("spawn")
    go = context.Event()
    go_at = context.Value("d", 0.0)
    results: multiprocessing.Queue[Tally] = context.Queue()
    count = max(1, min(processes, clients))
    shares = [
        clients // count + (1 if i < clients % count else 0) for i in range(count)
    ]
    readies = []
    workers = []
    for index, share in enumerate(shares):
        ready = context.Event()
        worker = context.Process(
            target=drive,
            args=(
                kind,
                target,
                share,
                warmup,
                duration,
                seed * 100 + index,
                ready,
                go,
                go_at,
                results,
                connections,
            ),
            daemon=True,
        )
        worker.start()
        readies.append(ready)
        workers.append(worker)
    for ready in readies:
        if not ready.wait(60):
            raise RuntimeError("a driver process did not connect")
    go_at.value = time.time()
    go.set()
    pids = [pid for pid in (server_pid, worker_pid) if pid is not None]
    spent = [0.0] * 2
    time.sleep(warmup)
    before = [tree_cpu_seconds(pid) for pid in pids]
    database_before, machine_before = database_cpu_seconds(), machine_cpu_seconds()
    time.sleep(duration)
    spent[: len(pids)] = [
        tree_cpu_seconds(p) - b for p, b in zip(pids, before, strict=True)
    ]
    total = Tally(
        server_cpu=spent[0] if server_pid else 0.0,
        worker_cpu=spent[1] if worker_pid else 0.0,
        database_cpu=database_cpu_seconds() - database_before,
        machine_cpu=machine_cpu_seconds() - machine_before,
    )
    for _ in workers:
        total.merge(results.get(timeout=warmup + duration + 120))
    for worker in workers:
        worker.join(timeout=10)
    return total


def database_cpu_seconds() -> float:
    """User plus system CPU time of this machine's PostgreSQL processes
    (every backend, the WAL writer, the checkpointer...; Linux). Processes
    that end meanwhile drop out, so read it around a window, not across
    connections that close inside it."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, _, rest = text.partition("(")[2].rpartition(")")
        if name == "postgres":
            fields = rest.split()
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def machine_cpu_seconds() -> float:
    """Busy CPU time of every core since boot (``/proc/stat``: all but idle
    and iowait; Linux)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


# -- the same bots without gRPC ---------------------------------------------------


class _Now(_Clock):
    """A window that opens ``warmup`` from now."""

    def __init__(self, warmup: float, duration: float) -> None:
        start = time.time() + warmup
        self._window = Window(start, start + duration)

    async def window(self) -> Window:
        return self._window


class _InProcess:
    """A stand-in for the gRPC stub that calls a ``GameServicer`` directly:
    coroutine handlers on this loop, the others in its default executor (as
    the server's door runs them)."""

    def __init__(self, servicer: Any) -> None:
        self._servicer = servicer

    def __getattr__(self, name: str) -> Any:
        handler = getattr(self._servicer, name)

        async def call(request: Any, metadata: Any = None) -> Any:
            from service.door import Call

            context = Call(
                method=name,
                headers=dict(metadata or ()),
                peer="127.0.0.1",
                connection="in-process",
                transport="in-process",
            )
            if inspect.iscoroutinefunction(handler):
                return await handler(request, context)
            return await asyncio.to_thread(handler, request, context)

        return call


def run_in_process(
    database_url: str, clients: int, warmup: float, duration: float, seed: int = 1
) -> Tally:
    """The game phase's bots driving a ``GameServicer`` in this process:
    the same calls, with no gRPC, server or network between them. Its CPU
    per command is what the application and the store cost on their own
    (``client_cpu``: this whole process, the bots included)."""
    from eventstore.factory import open_store
    from service.application import GameApp
    from service.errors import AppError
    from service.projections import GameListReader
    from service.servicer import GameServicer

    store = open_store(database_url)
    try:
        assert isinstance(store, SQLAlchemyEventStore)
        # As the served bench (STRATA_MAX_OPEN_SEATS=0): every bot calls
        # from one address, whose bound on open seats would stop them.
        app = GameApp(store, max_open_seats=0)
        app.queries.game_list = GameListReader(store)
        servicer = GameServicer(app)
        clock = _Now(warmup, duration)

        async def run() -> Tally:
            stub = _InProcess(servicer)
            measured, tally = await asyncio.gather(
                _own_cpu(clock), _bots(stub, clients, clock, seed, (AppError,))
            )
            tally.client_cpu = measured
            return tally

        return asyncio.run(run())
    finally:
        store.close()


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process and its threads (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int) -> float:
    """:func:`cpu_seconds` of a process and of its children alive now (the
    serving processes of ``strata serve --processes N``; Linux)."""
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return cpu_seconds(pid) + sum(cpu_seconds(child) for child in children)
