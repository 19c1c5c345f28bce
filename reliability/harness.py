"""What the reliability scripts share: databases, replicas, load and checks.

A run starts ``strata serve`` processes (replicas) on one PostgreSQL
database, drives them with many concurrent clients for a fixed number of
commands (racing on the same games, repeating command ids, pinning stale
versions, using the wrong seat's token) while a fault may strike, and then
checks the store against everything the clients were told:

- no ``(game, version)`` written twice, global positions dense;
- every acknowledged command is in the command log with the versions it was
  acknowledged with, and its events are stored;
- every answer to one ``command_id`` is the same (the first outcome), and at
  most one of them was not marked ``duplicate``;
- every game's state as each replica serves it equals the fold of its stored
  events, and re-executing its command log reproduces its events;
- no client ever got INTERNAL (or UNKNOWN), and no call overran its deadline.

Clients retry a call that failed in transit (UNAVAILABLE, DEADLINE_EXCEEDED,
ABORTED ``TOO_MUCH_CONTENTION``, RESOURCE_EXHAUSTED) with the same
``command_id`` on the next replica, as a real client behind a load balancer
would.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sqlalchemy import create_engine, pool, text
from strata.v1 import game_service_pb2 as pb
from strata.v1 import game_service_pb2_grpc as pb_grpc

from clients.client import StrataError
from domain import registry
from domain.rules import Viewer
from eventstore import migrate
from eventstore.factory import open_store
from eventstore.urls import database_url
from service import protomap
from service.answers import game_module
from service.verification import verify_game

ROOT = Path(__file__).resolve().parent.parent


def python_path() -> str:
    """``PYTHONPATH`` of a server this harness starts: the caller's own
    first (the test suite's extra games' code: tests/extra_games.py), then
    the project and its generated code."""
    own = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join(p for p in (own, str(ROOT), str(ROOT / "protos")) if p)


DEFAULT_SERVER_URL = "postgresql://postgres@127.0.0.1:5432/test"
ADMIN_TOKEN = "reliability-admin-" + uuid.uuid4().hex

#: Codes a client retries (the call may or may not have taken effect).
TRANSIENT = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.CANCELLED,
}
#: Codes no client input may ever cause.
FORBIDDEN = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}


def is_transient(code: grpc.StatusCode, reason: str) -> bool:
    return code in TRANSIENT or (
        code is grpc.StatusCode.ABORTED and reason == "TOO_MUCH_CONTENTION"
    )


# -- databases ------------------------------------------------------------------


@contextmanager
def fresh_database(server_url: str = "") -> Iterator[str]:
    """A new, migrated database on the PostgreSQL server (dropped afterwards)."""
    url = database_url(
        server_url or os.environ.get("STRATA_TEST_DATABASE_URL") or DEFAULT_SERVER_URL
    )
    name = f"strata_reliability_{uuid.uuid4().hex[:10]}"
    admin = create_engine(
        url.set(database="postgres"),
        isolation_level="AUTOCOMMIT",
        poolclass=pool.NullPool,
    )
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    target = url.set(database=name).render_as_string(hide_password=False)
    try:
        migrate.upgrade(target)
        yield target
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# -- replicas -------------------------------------------------------------------


class Replica:
    """One ``strata serve`` on a fixed port (kept across restarts): one
    process, or ``processes`` serving processes under one parent."""

    def __init__(
        self,
        index: int,
        database_url: str,
        log_dir: Path,
        extra_env: dict[str, str] | None = None,
        processes: int = 1,
    ) -> None:
        self.index = index
        self.processes = processes
        self.port = free_port()
        self.target = f"127.0.0.1:{self.port}"
        self.database_url = database_url
        self.log_path = log_dir / f"replica{index}.log"
        self.extra_env = extra_env or {}
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": python_path(),
            "STRATA_PORT": str(self.port),
            "STRATA_HTTP_PORT": "0",
            "STRATA_HOST": "127.0.0.1",
            "STRATA_DATABASE_URL": self.database_url,
            "STRATA_ADMIN_TOKEN": ADMIN_TOKEN,
            "STRATA_LOG_LEVEL": "warning",
            "STRATA_WORKERS": "16",
            # Every client calls from this machine's one address: the quotas
            # of one address (rate, creations, open seats) would stop the
            # load this measures. The per-connection limits stay on.
            "STRATA_RATE_PER_ADDRESS": "0",
            "STRATA_CREATIONS_PER_MINUTE": "0",
            "STRATA_MAX_OPEN_SEATS": "0",
            **self.extra_env,
        }
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "clients.cli", "serve"]
            + (["--processes", str(self.processes)] if self.processes > 1 else []),
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.starts += 1

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        with grpc.insecure_channel(self.target) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                if self.process is not None and self.process.poll() is not None:
                    raise RuntimeError(
                        f"replica {self.index} exited ({self.process.returncode}); "
                        f"see {self.log_path}"
                    )
                try:
                    status = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if status.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.RpcError:
                    pass
                time.sleep(0.1)
        raise TimeoutError(f"replica {self.index} not serving after {timeout}s")

    def kill(self) -> None:
        """kill -9: no shutdown, no flushing, connections dropped (the
        serving processes first, when the replica has several)."""
        if self.process is not None:
            for child in _children(self.process.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def internal_errors_logged(self) -> int:
        if not self.log_path.exists():
            return 0
        return self.log_path.read_text(errors="replace").count("rpc.internal_error")


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started that are alive now (Linux)."""
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            children += [int(c) for c in (task / "children").read_text().split()]
    return children


@contextmanager
def replicas(
    database_url: str,
    count: int,
    extra_env: dict[str, str] | None = None,
    keep_logs: bool = False,
    processes: int = 1,
) -> Iterator[list[Replica]]:
    """``count`` running replicas on ``database_url`` (``processes`` serving
    processes each), stopped afterwards."""
    log_dir = Path(tempfile.mkdtemp(prefix="strata-reliability-"))
    started = [
        Replica(i, database_url, log_dir, extra_env, processes) for i in range(count)
    ]
    failed = True
    try:
        for replica in started:
            replica.start()
        for replica in started:
            replica.wait_ready()
        yield started
        failed = False
    finally:
        for replica in started:
            replica.stop()
        if failed or keep_logs:
            print(f"replica logs kept in {log_dir}", file=sys.stderr)
        else:
            shutil.rmtree(log_dir, ignore_errors=True)


# -- load -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LoadSettings:
    """How hard and how nastily the clients push."""

    clients: int = 64
    commands: int = 5000
    games: int = 16
    duplicate_rate: float = 0.10
    pinned_rate: float = 0.10
    wrong_seat_rate: float = 0.03
    deadline: float = 5.0
    retry_budget: float = 60.0
    max_seconds: float = 150.0
    seed: int = 7


@dataclasses.dataclass(frozen=True)
class Answer:
    """One answer a client got to a SubmitCommand."""

    code: str
    reason: str
    version: int
    duplicate: bool
    events: tuple[tuple[int, str], ...]
    seconds: float
    replica: int
    at: float = dataclasses.field(default_factory=time.monotonic)

    @property
    def final(self) -> bool:
        return self.code == "OK" or not is_transient(
            grpc.StatusCode[self.code], self.reason
        )

    @property
    def outcome(self) -> tuple[Any, ...]:
        """What must be the same in every final answer to one command id."""
        if self.code == "OK":
            return ("OK", self.version, self.events)
        return (self.code, self.reason)


@dataclasses.dataclass
class Sent:
    """One command id and every answer it got."""

    game_id: str
    seat: int
    pinned: bool
    wrong_seat: bool
    request: pb.SubmitCommandRequest
    token: str
    answers: list[Answer] = dataclasses.field(default_factory=list)

    @property
    def finals(self) -> list[Answer]:
        return [a for a in self.answers if a.final]


@dataclasses.dataclass
class Game:
    game_id: str
    game_type: str
    tokens: dict[int, str]


class Ledger:
    """Everything the clients sent and were told (thread-safe)."""

    def __init__(self, commands: int) -> None:
        self.target = commands
        self.started = 0
        self.done = 0
        self.sent: dict[str, Sent] = {}
        self.other_calls: Counter[str] = Counter()
        self.slow_calls: list[tuple[str, float]] = []
        self.client_errors: list[str] = []
        self.games_created = 0
        self.games_by_type: Counter[str] = Counter()
        self._lock = threading.Lock()

    def claim(self) -> bool:
        with self._lock:
            if self.started >= self.target:
                return False
            self.started += 1
            return True

    def unclaim(self) -> None:
        """Give back a claim that sent no command (the game had just ended)."""
        with self._lock:
            self.started -= 1

    def finish(self) -> None:
        with self._lock:
            self.done += 1

    def add(self, command_id: str, sent: Sent) -> None:
        with self._lock:
            self.sent[command_id] = sent

    def answer(self, command_id: str, answer: Answer) -> None:
        with self._lock:
            self.sent[command_id].answers.append(answer)

    def other(self, what: str) -> None:
        with self._lock:
            self.other_calls[what] += 1

    def crashed(self, what: str) -> None:
        with self._lock:
            self.client_errors.append(what)

    def slow(self, method: str, seconds: float) -> None:
        with self._lock:
            self.slow_calls.append((method, seconds))


class _Connections:
    """One client's connections, one per replica (never shared with others)."""

    def __init__(self, targets: Sequence[str]) -> None:
        self.channels = [
            grpc.insecure_channel(t, options=[("grpc.use_local_subchannel_pool", 1)])
            for t in targets
        ]
        self.stubs = [pb_grpc.GameServiceStub(c) for c in self.channels]

    def close(self) -> None:
        for channel in self.channels:
            channel.close()


def _metadata(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")] if token else []


class Load:
    """Drive replicas with ``settings.clients`` concurrent clients."""

    def __init__(self, targets: Sequence[str], settings: LoadSettings) -> None:
        self.targets = list(targets)
        self.settings = settings
        self.ledger = Ledger(settings.commands)
        self.stop = threading.Event()
        self._slots: list[Game | None] = []
        self._busy: set[int] = set()
        self._pool_lock = threading.Lock()
        self._pairs = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(4, settings.clients // 4), thread_name_prefix="duplicate"
        )
        self.seconds = 0.0

    # -- calls with retries -------------------------------------------------

    def call(
        self,
        connections: _Connections,
        method: str,
        request: Any,
        token: str,
        replica: int,
    ) -> Any:
        """A non-command RPC, retried on transient failures; None if it never
        went through within the retry budget."""
        deadline = self.settings.deadline
        give_up = time.monotonic() + self.settings.retry_budget
        attempt = 0
        while time.monotonic() < give_up and not self.stop.is_set():
            index = (replica + attempt) % len(self.targets)
            started = time.monotonic()
            try:
                response = getattr(connections.stubs[index], method)(
                    request, timeout=deadline, metadata=_metadata(token)
                )
                self._timed(method, started)
                self.ledger.other(f"{method} OK")
                return response
            except grpc.RpcError as error:
                self._timed(method, started)
                failure = StrataError.from_rpc_error(error)
                self.ledger.other(f"{method} {failure.code.name}")
                if not is_transient(failure.code, failure.reason):
                    raise failure from None
            attempt += 1
            time.sleep(min(0.05 * 2**attempt, 1.0))
        return None

    def _timed(self, method: str, started: float) -> None:
        seconds = time.monotonic() - started
        if seconds > self.settings.deadline + 1.0:
            self.ledger.slow(method, seconds)

    def resolve(
        self,
        connections: _Connections,
        command_id: str,
        request: pb.SubmitCommandRequest,
        token: str,
        replica: int,
    ) -> Answer | None:
        """Send a command until it gets a final answer (same command id on
        every try, the next replica after each failure)."""
        give_up = time.monotonic() + self.settings.retry_budget
        attempt = 0
        while time.monotonic() < give_up:
            index = (replica + attempt) % len(self.targets)
            started = time.monotonic()
            try:
                response = connections.stubs[index].SubmitCommand(
                    request, timeout=self.settings.deadline, metadata=_metadata(token)
                )
                answer = Answer(
                    "OK",
                    "",
                    response.version,
                    response.duplicate,
                    tuple((e.version, e.type) for e in response.events),
                    time.monotonic() - started,
                    index,
                )
            except grpc.RpcError as error:
                failure = StrataError.from_rpc_error(error)
                answer = Answer(
                    failure.code.name,
                    failure.reason or failure.message[:60],
                    0,
                    False,
                    (),
                    time.monotonic() - started,
                    index,
                )
            self._timed("SubmitCommand", started)
            self.ledger.answer(command_id, answer)
            if answer.final:
                return answer
            attempt += 1
            time.sleep(min(0.05 * 2**attempt, 1.0))
        return None

    # -- games --------------------------------------------------------------

    def new_game(self, connections: _Connections, rng: random.Random) -> Game | None:
        """Create, fill and start a game of a random registered type."""
        game_type = rng.choice(registry.game_types())
        rules = registry.rules_for(game_type)
        players = rng.randint(rules.min_players, rules.max_players)
        replica = rng.randrange(len(self.targets))
        created = self.call(
            connections,
            "CreateGame",
            pb.CreateGameRequest(
                game_type=game_type,
                players=players,
                request_id=uuid.uuid4().hex,
            ),
            "",
            replica,
        )
        if created is None:
            return None
        tokens: dict[int, str] = {}
        for seat in range(players):
            try:
                joined = self.call(
                    connections,
                    "JoinGame",
                    pb.JoinGameRequest(
                        game_id=created.game_id, player_name=f"p{seat}", seat=seat
                    ),
                    "",
                    replica,
                )
            except StrataError:
                return None  # a retried join found its seat taken: start afresh
            if joined is None:
                return None
            tokens[seat] = joined.seat_token
        try:
            started = self.call(
                connections,
                "StartGame",
                pb.StartGameRequest(game_id=created.game_id),
                tokens[0],
                replica,
            )
        except StrataError as error:
            if error.reason != "GAME_ALREADY_STARTED":
                raise
            started = True
        if started is None:
            return None
        with self._pool_lock:
            self.ledger.games_created += 1
            self.ledger.games_by_type[game_type] += 1
        return Game(created.game_id, game_type, tokens)

    def _pick(self, rng: random.Random) -> tuple[int, Game] | None:
        with self._pool_lock:
            free = [
                i
                for i, g in enumerate(self._slots)
                if g is not None and i not in self._busy
            ]
            if not free:
                return None
            index = rng.choice(free)
            game = self._slots[index]
            assert game is not None
            return index, game

    def _replace(
        self, connections: _Connections, rng: random.Random, index: int, old: Game
    ) -> None:
        with self._pool_lock:
            if self._slots[index] is not old or index in self._busy:
                return
            self._busy.add(index)
        try:
            game = None
            while game is None and not self.stop.is_set():
                game = self.new_game(connections, rng)
            with self._pool_lock:
                self._slots[index] = game or old
        finally:
            with self._pool_lock:
                self._busy.discard(index)

    def games(self) -> list[Game]:
        """The games the clients are playing now."""
        with self._pool_lock:
            return [g for g in self._slots if g is not None]

    # -- the clients --------------------------------------------------------

    def run(self, progress: Callable[[Ledger], None] | None = None) -> Ledger:
        """Run every client until the command count is reached (or the time
        limit); returns the ledger."""
        setup = _Connections(self.targets)
        rng = random.Random(self.settings.seed)
        try:
            while len(self._slots) < self.settings.games:
                game = self.new_game(setup, rng)
                if game is not None:
                    self._slots.append(game)
        finally:
            setup.close()
        started = time.monotonic()
        threads = [
            threading.Thread(target=self._client, args=(i,), name=f"client-{i}")
            for i in range(self.settings.clients)
        ]
        for thread in threads:
            thread.start()
        limit = started + self.settings.max_seconds
        while any(t.is_alive() for t in threads):
            if progress is not None:
                progress(self.ledger)
            if time.monotonic() > limit:
                self.stop.set()
            time.sleep(0.05)
        # The load is over, done or not (its clients may all have stopped
        # on errors): whoever waits on it for a count learns it now.
        self.stop.set()
        self._pairs.shutdown()
        self.seconds = time.monotonic() - started
        return self.ledger

    def _client(self, number: int) -> None:
        rng = random.Random(f"{self.settings.seed}/{number}")
        connections = _Connections(self.targets)
        try:
            while not self.stop.is_set():
                picked = self._pick(rng)
                if picked is None:
                    time.sleep(0.01)
                    continue
                if not self.ledger.claim():
                    return
                try:
                    self._one_command(connections, rng, *picked)
                finally:
                    self.ledger.finish()
        except Exception as error:
            self.ledger.crashed(f"client {number} stopped: {error!r}")
        finally:
            connections.close()

    def _one_command(
        self, connections: _Connections, rng: random.Random, index: int, game: Game
    ) -> None:
        replica = rng.randrange(len(self.targets))
        listing = self.call(
            connections,
            "ListLegalActions",
            pb.ListLegalActionsRequest(game_id=game.game_id),
            ADMIN_TOKEN,
            replica,
        )
        if listing is None:
            self.ledger.unclaim()
            return
        if not listing.actions:
            self.ledger.unclaim()
            self._replace(connections, rng, index, game)
            return
        action = rng.choice(listing.actions)
        seat = action.seat
        token = game.tokens[seat]
        others = [s for s in game.tokens if s != seat]  # none in a solo game
        wrong_seat = bool(others) and rng.random() < self.settings.wrong_seat_rate
        if wrong_seat:
            token = game.tokens[rng.choice(others)]
        pinned = rng.random() < self.settings.pinned_rate
        command_id = uuid.uuid4().hex
        request = pb.SubmitCommandRequest(
            game_id=game.game_id,
            seat=seat,
            command_id=command_id,
            command=action.command,
        )
        if pinned:
            request.expected_version = listing.version
        self.ledger.add(
            command_id, Sent(game.game_id, seat, pinned, wrong_seat, request, token)
        )
        roll = rng.random()
        if roll < self.settings.duplicate_rate / 2:
            # The same command id to two replicas at once.
            twin = self._pairs.submit(
                self._twin, command_id, request, token, replica + 1
            )
            self.resolve(connections, command_id, request, token, replica)
            twin.result()
        else:
            self.resolve(connections, command_id, request, token, replica)
            if roll < self.settings.duplicate_rate:
                # The same command id again, later, to another replica.
                self.resolve(connections, command_id, request, token, replica + 1)

    def resend(self, command_ids: Sequence[str], replica: int) -> int:
        """Send these commands again to one replica (e.g. after its restart);
        returns how many got the same final answer as the first time."""
        connections = _Connections(self.targets)
        same = 0
        try:
            for command_id in command_ids:
                sent = self.ledger.sent[command_id]
                first = sent.finals[0]
                again = self.resolve(
                    connections, command_id, sent.request, sent.token, replica
                )
                if again is not None and again.outcome == first.outcome:
                    same += 1
        finally:
            connections.close()
        return same

    def _twin(
        self,
        command_id: str,
        request: pb.SubmitCommandRequest,
        token: str,
        replica: int,
    ) -> None:
        connections = _Connections(self.targets)
        try:
            self.resolve(connections, command_id, request, token, replica)
        finally:
            connections.close()


# -- checks ---------------------------------------------------------------------


@dataclasses.dataclass
class Findings:
    """What the checks found; ``lost`` and ``violations`` must be empty."""

    figures: dict[str, Any] = dataclasses.field(default_factory=dict)
    violations: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def fail(self, message: str) -> None:
        if len(self.violations) < 200:
            self.violations.append(message)


def check(
    database_url: str,
    targets: Sequence[str],
    ledger: Ledger,
    settings: LoadSettings,
    seconds: float,
) -> Findings:
    """Compare the store and every replica with what the clients were told."""
    found = Findings()
    figures = found.figures
    answers = [a for s in ledger.sent.values() for a in s.answers]
    codes = _tally(ledger, answers, seconds, figures)

    # Answers: never INTERNAL, never past the deadline, duplicates agree.
    for code in FORBIDDEN:
        if codes[code.name]:
            found.fail(f"{codes[code.name]} answers were {code.name}")
    for what in ledger.client_errors:
        found.fail(what)
    for method, seconds_taken in ledger.slow_calls:
        found.fail(f"{method} took {seconds_taken:.1f}s, past its deadline")
    store = open_store(database_url)
    acknowledged = 0
    try:
        for command_id, sent in ledger.sent.items():
            acknowledged += _check_command(store, command_id, sent, found)
        figures["acknowledged commands"] = acknowledged
        _check_store(store, targets, ledger, found)
    finally:
        store.close()
    figures["lost acknowledged commands"] = sum(
        1 for v in found.violations if "not in the log" in v
    )
    figures["violations"] = len(found.violations)
    return found


def _check_command(store: Any, command_id: str, sent: Any, found: Findings) -> int:
    """Check one command's answers against the log: 1 if it was
    acknowledged, else 0."""
    finals = sent.finals
    if not finals:
        found.fail(f"command {command_id} never got a final answer")
        return 0
    outcomes = {a.outcome for a in finals}
    if len(outcomes) > 1:
        found.fail(f"command {command_id} got different answers: {outcomes}")
    fresh = [a for a in finals if a.code == "OK" and not a.duplicate]
    if len(fresh) > 1:
        found.fail(f"command {command_id} was applied {len(fresh)} times")
    if sent.wrong_seat and finals[0].code != "PERMISSION_DENIED":
        found.fail(f"wrong-seat command {command_id} got {finals[0].code}")
    first = finals[0]
    if first.code != "OK":
        return 0
    record = store.find_command(sent.game_id, command_id)
    if record is None or not record.outcome.accepted:
        found.fail(f"acknowledged command {command_id} is not in the log")
        return 1
    if record.outcome.last_version != first.version:
        found.fail(
            f"command {command_id}: acknowledged version {first.version}, "
            f"logged {record.outcome.last_version}"
        )
    stored = store.read_stream(
        sent.game_id, record.outcome.first_version, record.outcome.last_version
    )
    if tuple((e.version, e.type) for e in stored) != first.events:
        found.fail(f"command {command_id}: stored events differ from answer")
    return 1


def _tally(
    ledger: Ledger, answers: list[Any], seconds: float, figures: dict[str, Any]
) -> Counter[str]:
    """The run's figures from what the clients were told; the answers'
    status codes counted."""
    answers = [a for s in ledger.sent.values() for a in s.answers]
    codes: Counter[str] = Counter(a.code for a in answers)
    final_codes = Counter(
        (s.finals[0].code if s.finals else "NO FINAL ANSWER")
        for s in ledger.sent.values()
    )
    figures["commands (distinct command ids)"] = len(ledger.sent)
    figures["SubmitCommand calls"] = len(answers)
    figures["games played"] = (
        f"{ledger.games_created} ("
        + ", ".join(f"{t} {n}" for t, n in sorted(ledger.games_by_type.items()))
        + ")"
    )
    figures["seconds"] = round(seconds, 1)
    figures["stopped by the time limit"] = (
        "yes" if ledger.started < ledger.target else "no"
    )
    figures["commands per second"] = round(len(ledger.sent) / max(seconds, 1e-9), 1)
    latencies = sorted(a.seconds for a in answers)
    if latencies:
        figures["SubmitCommand p50 / p99 / max ms"] = (
            f"{latencies[len(latencies) // 2] * 1000:.0f} / "
            f"{latencies[int(len(latencies) * 0.99)] * 1000:.0f} / "
            f"{latencies[-1] * 1000:.0f}"
        )
    for code, count in sorted(codes.items()):
        figures[f"answers {code}"] = count
    for code, count in sorted(final_codes.items()):
        figures[f"final outcome {code}"] = count
    reasons = Counter(
        s.finals[0].reason
        for s in ledger.sent.values()
        if s.finals and s.finals[0].reason
    )
    figures["refusal reasons"] = ", ".join(
        f"{r} {n}" for r, n in reasons.most_common(6)
    )
    duplicates = sum(1 for a in answers if a.code == "OK" and a.duplicate)
    figures["answered duplicate=true"] = duplicates
    retried = [s for s in ledger.sent.values() if any(not a.final for a in s.answers)]
    figures["commands retried after a failed call"] = len(retried)
    figures["... of which had been applied (answered duplicate)"] = sum(
        1
        for s in retried
        if s.finals and s.finals[0].code == "OK" and s.finals[0].duplicate
    )
    for what, count in sorted(ledger.other_calls.items()):
        if not what.endswith(" OK"):
            figures[f"other calls {what}"] = count
    return codes


def _check_store(
    store: Any,
    targets: Sequence[str],
    ledger: Ledger,
    found: Findings,
) -> None:
    with store.engine.connect() as connection:
        twice = connection.execute(
            text(
                "SELECT count(*) FROM (SELECT game_id, version FROM events "
                "GROUP BY game_id, version HAVING count(*) > 1) t"
            )
        ).scalar_one()
        gaps = connection.execute(
            text(
                "SELECT count(*) FROM (SELECT game_id, max(version) - count(*) AS gap "
                "FROM events GROUP BY game_id) t WHERE gap <> 0"
            )
        ).scalar_one()
        positions = connection.execute(
            text("SELECT count(*), count(DISTINCT position), max(position) FROM events")
        ).one()
        accepted_logged = connection.execute(
            text(
                "SELECT count(*) FROM commands WHERE error_kind = '' "
                "AND command_id NOT IN ('start', 'create') "
                "AND command_id NOT LIKE 'join-seat-%' "
                "AND command_id NOT LIKE 'leave-seat-%'"
            )
        ).scalar_one()
    figures = found.figures
    figures["events stored"] = positions[0]
    figures["versions written twice"] = twice
    if twice:
        found.fail(f"{twice} (game, version) pairs written twice")
    if gaps:
        found.fail(f"{gaps} games have gaps in their versions")
    if positions[0] != positions[1]:
        found.fail(f"global positions given twice: {tuple(positions)}")
    acknowledged_ids = sum(
        1 for s in ledger.sent.values() if s.finals and s.finals[0].code == "OK"
    )
    figures["accepted commands in the log"] = accepted_logged
    if accepted_logged != acknowledged_ids:
        found.fail(
            f"the log has {accepted_logged} accepted commands, the clients were "
            f"told of {acknowledged_ids}"
        )

    # Every game as each replica serves it equals the fold of its events,
    # and re-executing its command log reproduces them.
    channels = [grpc.insecure_channel(t) for t in targets]
    stubs = [pb_grpc.GameServiceStub(c) for c in channels]
    games = 0
    verified = 0
    after = ""
    try:
        while ids := store.list_streams(after, 200):
            after = ids[-1]
            for game_id in ids:
                games += 1
                recorded = store.read_stream(game_id)
                session = registry.session_for(recorded[0].data["game_type"])
                state = session.fold(
                    session.decode_event(r.type, r.data, r.schema_version)
                    for r in recorded
                )
                want = protomap.to_proto(
                    session.rules.view(state.game, Viewer.admin()),
                    game_module(state.game_type).View(),
                )
                for index, stub in enumerate(stubs):
                    served = stub.GetGame(
                        pb.GetGameRequest(game_id=game_id),
                        timeout=10,
                        metadata=_metadata(ADMIN_TOKEN),
                    ).game
                    if served.version != state.version or (
                        getattr(served.view, state.game_type) != want
                    ):
                        found.fail(f"replica {index} serves {game_id} unlike replay")
                verification = verify_game(store, game_id)
                if verification.ok:
                    verified += 1
                else:
                    found.fail(f"game {game_id}: {verification.message}")
    finally:
        for channel in channels:
            channel.close()
    figures["games checked (state == replay on every replica)"] = games
    figures["games whose command log re-executes to the same events"] = verified


def check_logs(running: Sequence[Replica], found: Findings) -> None:
    """No replica logged an internal error."""
    internal = sum(r.internal_errors_logged() for r in running)
    found.figures["INTERNAL errors in replica logs"] = internal
    if internal:
        found.fail(f"the replicas logged {internal} internal errors")


# -- output ---------------------------------------------------------------------


def print_table(title: str, figures: dict[str, Any]) -> None:
    width = max(len(k) for k in figures)
    print(f"\n{title}")
    print("-" * (width + 14))
    for key, value in figures.items():
        print(f"{key:<{width}}  {value}")
    print("-" * (width + 14))


def report(title: str, found: Findings) -> int:
    """Print the table and the violations; the exit status (0: nothing lost)."""
    print_table(title, found.figures)
    if found.ok:
        print("RESULT: nothing lost, every check passed")
        return 0
    print(f"RESULT: FAILED, {len(found.violations)} violations:")
    for violation in found.violations[:50]:
        print(f"  - {violation}")
    return 1
