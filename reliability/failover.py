"""Lose the primary, lose nothing: PostgreSQL failover under load.

    python -m reliability.failover --replicas 2 --clients 32 --failovers 2

A pg_auto_failover formation on this machine (:mod:`reliability.formation`:
a monitor and two nodes in synchronous replication, on ports and in
directories of their own, all removed at the end) and Strata replicas on it
through a URL naming every node (``target_session_attrs=read-write``; the
standbys through ``STRATA_READ_DATABASE_URL``, ``prefer-standby``). Clients
play games through the replicas (the load of :mod:`reliability.harness`),
others follow games with ``WatchGame`` and read them with ``GetGame``.

Under the load the primary is killed: ``kill -9`` of its PostgreSQL server,
then of its keeper. The monitor promotes the standby; the replicas, never
restarted, must find it by themselves. The old primary is then brought
back as a standby (its keeper rewinds it and follows the new primary) and
the new primary is killed the same way.

Measured per failover: the commands acknowledged before, during and after;
the window without writes (from the kill to the first command committed on
the new primary; goal: within 2 s of the manager's promotion of it); each
replica's health (NOT_SERVING, then SERVING, without a restart); reads and
``WatchGame`` streams resuming without a gap. Then the
checks of :mod:`reliability.harness` (no acknowledged command lost, none
applied twice, every retry answered with the first outcome, every game
equal to its replay) and ``strata verify --all``. Exits non-zero when
anything is lost or a goal missed.
"""

from __future__ import annotations

import dataclasses
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from strata.v1 import game_service_pb2 as pb
from strata.v1 import game_service_pb2_grpc as pb_grpc

from eventstore import migrate
from eventstore.factory import open_store
from reliability.formation import MONITOR_SETTINGS, Formation, Node
from reliability.harness import (
    ADMIN_TOKEN,
    ROOT,
    Findings,
    Ledger,
    Load,
    LoadSettings,
    Replica,
    check,
    check_logs,
    python_path,
    replicas,
    report,
)
from reliability.replicas import arguments, settings_from

#: How long after the manager promoted the new primary (assigned it
#: ``wait_primary``) the first command may be committed there.
WINDOW_GOAL = 2.0


@dataclasses.dataclass
class Failover:
    """One kill of the primary and what the manager did about it."""

    number: int
    old: Node
    killed_at: datetime
    killed: float
    done_at_kill: int
    new: Node | None = None
    #: When a read-write session could be opened on the new primary.
    writable: float | None = None
    #: The monitor's own account, in seconds after the kill: when it marked
    #: the old primary unhealthy, when it assigned the new one wait_primary.
    unhealthy_after: float | None = None
    promoted_after: float | None = None
    #: When the old primary was a synchronous standby again.
    rejoined: float | None = None


class HealthLog:
    """Each replica's health (``grpc.health.v1``), polled every 0.1 s; the
    changes kept."""

    def __init__(self, targets: Sequence[str]) -> None:
        self.changes: list[list[tuple[float, str]]] = [[] for _ in targets]
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._poll, args=(i, t), daemon=True)
            for i, t in enumerate(targets)
        ]
        for thread in self._threads:
            thread.start()

    def _poll(self, index: int, target: str) -> None:
        with grpc.insecure_channel(target) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            last = ""
            while not self._stop.is_set():
                try:
                    answer = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    status = health_pb2.HealthCheckResponse.ServingStatus.Name(
                        answer.status
                    )
                except grpc.RpcError as error:
                    status = f"unreachable ({error.code().name})"
                if status != last:
                    self.changes[index].append((time.monotonic(), status))
                    last = status
                self._stop.wait(0.1)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()


@dataclasses.dataclass
class Stream:
    """One ``WatchGame`` of one game through one replica, resumed after
    each error from the version after the last one received."""

    game_id: str
    replica: int
    opened: float = dataclasses.field(default_factory=time.monotonic)
    versions: list[int] = dataclasses.field(default_factory=list)
    errors: Counter[str] = dataclasses.field(default_factory=Counter)
    resumed: list[float] = dataclasses.field(default_factory=list)
    finished: bool = False
    call: Any = None


class Watchers:
    """``slots`` watchers per replica, each following one game the clients
    play at a time (the next one when it ends)."""

    def __init__(self, targets: Sequence[str], load: Load, slots: int) -> None:
        self.load = load
        self.streams: list[Stream] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._watch, args=(i, t, s), daemon=True)
            for i, t in enumerate(targets)
            for s in range(slots)
        ]
        for thread in self._threads:
            thread.start()

    def _watch(self, index: int, target: str, slot: int) -> None:
        rng = random.Random(f"watch/{index}/{slot}")
        with grpc.insecure_channel(target) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            while not self._stop.is_set():
                with self._lock:
                    watched = {s.game_id for s in self.streams if not s.finished}
                    games = [g for g in self.load.games() if g.game_id not in watched]
                    if not games:
                        stream = None
                    else:
                        stream = Stream(rng.choice(games).game_id, index)
                        self.streams.append(stream)
                if stream is None:
                    self._stop.wait(0.1)
                    continue
                self._follow(stub, stream)

    def _follow(self, stub: pb_grpc.GameServiceStub, stream: Stream) -> None:
        while not self._stop.is_set():
            next_version = stream.versions[-1] + 1 if stream.versions else 1
            call = stub.WatchGame(
                pb.WatchGameRequest(game_id=stream.game_id, from_version=next_version)
            )
            stream.call = call
            try:
                for response in call:
                    stream.versions.append(response.event.version)
                    if response.event.HasField("game_finished"):
                        stream.finished = True
                if stream.finished:
                    return
                stream.errors["ended early"] += 1
            except grpc.RpcError as error:
                if self._stop.is_set():
                    return
                stream.errors[error.code().name] += 1
            stream.resumed.append(time.monotonic())
            self._stop.wait(0.2)

    def stop(self) -> None:
        self._stop.set()
        for stream in list(self.streams):
            if stream.call is not None:
                stream.call.cancel()
        for thread in self._threads:
            thread.join()


class Readers:
    """One reader per replica: ``GetGame`` of a game the clients play, every
    0.1 s (served from a standby once it has replayed what the replica
    knows of)."""

    def __init__(self, targets: Sequence[str], load: Load) -> None:
        self.load = load
        self.reads: list[list[tuple[float, str, str, int]]] = [[] for _ in targets]
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._read, args=(i, t), daemon=True)
            for i, t in enumerate(targets)
        ]
        for thread in self._threads:
            thread.start()

    def _read(self, index: int, target: str) -> None:
        rng = random.Random(f"read/{index}")
        metadata = [("authorization", f"Bearer {ADMIN_TOKEN}")]
        with grpc.insecure_channel(target) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            while not self._stop.is_set():
                games = self.load.games()
                if games:
                    game_id = rng.choice(games).game_id
                    try:
                        answer = stub.GetGame(
                            pb.GetGameRequest(game_id=game_id),
                            timeout=5,
                            metadata=metadata,
                        )
                        read = ("OK", game_id, answer.game.version)
                    except grpc.RpcError as error:
                        read = (error.code().name, game_id, 0)
                    self.reads[index].append((time.monotonic(), *read))
                self._stop.wait(0.1)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()


class Script:
    """The faults, started by the load's first progress call: after
    ``before`` commands the primary is killed; once the manager has
    promoted the standby the old primary rejoins, and after ``between``
    more commands the new primary is killed; after ``after`` commands past
    the last failover the load stops."""

    def __init__(
        self,
        formation: Formation,
        load: Load,
        failovers: int,
        before: int,
        between: int,
        after: int,
    ) -> None:
        self.formation = formation
        self.load = load
        self.count = failovers
        self.before = before
        self.between = between
        self.after = after
        self.failovers: list[Failover] = []
        self.standby_readers: dict[str, str] = {}
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def __call__(self, ledger: Ledger) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, args=(ledger,))
            self._thread.start()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def _run(self, ledger: Ledger) -> None:
        try:
            self._until_done(ledger, self.before)
            self._note_standby_readers("before the first kill")
            for number in range(1, self.count + 1):
                if number > 1:
                    last = self.failovers[-1]
                    self.formation.rejoin(last.old)
                    last.rejoined = time.monotonic()
                    self._note_standby_readers(f"after {last.old.name} rejoined")
                    self._until_done(ledger, ledger.done + self.between)
                self._fail_over(number, ledger)
                self._note_standby_readers(f"after failover {number}")
            self._until_done(ledger, ledger.done + self.after)
        except BaseException as error:
            self.error = error
        finally:
            self.load.stop.set()

    def _until_done(self, ledger: Ledger, commands: int) -> None:
        while ledger.done < commands:
            if self.load.stop.is_set():
                raise TimeoutError("the load stopped (its time limit) before the end")
            time.sleep(0.05)

    def _fail_over(self, number: int, ledger: Ledger) -> None:
        old = self.formation.primary()
        candidates = [n for n in self.formation.nodes if n is not old]
        failover = Failover(
            number, old, datetime.now(UTC), time.monotonic(), ledger.done
        )
        self.failovers.append(failover)
        self.formation.kill(old)
        deadline = failover.killed + 120
        while failover.new is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"failover {number}: no new primary after 120s")
            for node in candidates:
                if self.formation.writable(node):
                    failover.writable = time.monotonic()
                    failover.new = node
                    break
            else:
                time.sleep(0.05)
        for event in self.formation.events(failover.killed_at - timedelta(seconds=1)):
            after = (event.at - failover.killed_at).total_seconds()
            if after < 0:
                continue
            if (
                event.node == old.name
                and event.goal in ("draining", "demote_timeout", "demoted")
                and failover.unhealthy_after is None
            ):
                failover.unhealthy_after = after
            if (
                event.node == failover.new.name
                and event.goal == "wait_primary"
                and failover.promoted_after is None
            ):
                failover.promoted_after = after

    def _note_standby_readers(self, when: str) -> None:
        """Where the replicas' standby readers are connected now."""
        found = []
        for node in self.formation.nodes:
            try:
                rows = self.formation.sql(
                    node,
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE application_name = 'strata-standby-reader'",
                )
                recovery = self.formation.sql(node, "SELECT pg_is_in_recovery()")
                role = "standby" if recovery[0][0] else "primary"
                found.append(f"{node.name} ({role}) {rows[0][0]}")
            except Exception:
                found.append(f"{node.name} unreachable")
        self.standby_readers[when] = ", ".join(found)


@contextmanager
def strata_on_a_formation(
    nodes: int, count: int, processes: int = 1
) -> Iterator[tuple[Formation, list[Replica]]]:
    """A formation of ``nodes`` nodes, its database migrated, and ``count``
    replicas on it (``processes`` serving processes each) that know every
    node: the primary's URL with ``target_session_attrs=read-write``, the
    standbys' (``STRATA_READ_DATABASE_URL``) with ``prefer-standby``."""
    with Formation(nodes) as formation:
        url = formation.url()
        migrate.upgrade(url)
        with replicas(
            url,
            count,
            extra_env={"STRATA_READ_DATABASE_URL": formation.url("prefer-standby")},
            processes=processes,
        ) as running:
            yield formation, running


def exercise(
    formation: Formation,
    running: Sequence[Replica],
    settings: LoadSettings,
    failovers: int = 2,
    before: int = 200,
    between: int = 200,
    after: int = 200,
    watchers: int = 2,
    window_goal: bool = True,
) -> Findings:
    """The load, the failovers and every check (see the module's docstring)."""
    targets = [r.target for r in running]
    load = Load(targets, settings)
    script = Script(formation, load, failovers, before, between, after)
    health = HealthLog(targets)
    watching = Watchers(targets, load, watchers)
    reading = Readers(targets, load)
    try:
        ledger = load.run(progress=script)
        script.join()
        _catch_up(watching, formation)
    finally:
        script.join()
        for part in (watching, reading, health):
            part.stop()
    found = check(formation.url(), targets, ledger, settings, load.seconds)
    found.figures["stopped by the time limit"] = "no" if script.error is None else "yes"
    if script.error is not None:
        found.fail(f"the script failed: {script.error!r}")
    _judge_failovers(script, ledger, health, running, window_goal, found)
    _judge_reads(script, reading, found)
    _judge_streams(script, watching, formation, found)
    for when, where in script.standby_readers.items():
        found.figures[f"standby readers' connections {when}"] = where
    _verify_all(running[0], found)
    check_logs(running, found)
    # A failover is an outage the replicas expect: warnings, never an error.
    errors = sum(
        r.log_path.read_text(errors="replace").count('"level": "error"')
        for r in running
        if r.log_path.exists()
    )
    found.figures["error lines in replica logs"] = errors
    if errors:
        found.fail(f"the replicas logged {errors} errors")
    return found


def _catch_up(watching: Watchers, formation: Formation) -> None:
    """Give the streams a moment to receive what was committed last."""
    store = open_store(formation.url())
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            behind = [
                s
                for s in watching.streams
                if not s.finished
                and (s.versions[-1] if s.versions else 0)
                < store.stream_version(s.game_id)
            ]
            if not behind:
                return
            time.sleep(0.2)
    finally:
        store.close()


def _phase(at: float, script: Script) -> str:
    """The part of the run a moment falls in: before the first kill, during
    failover n (from its kill until the new primary is writable), between
    two failovers, after the last."""
    for failover in script.failovers:
        if at < failover.killed:
            if failover.number == 1:
                return "before the first kill"
            return f"between failovers {failover.number - 1} and {failover.number}"
        if failover.writable is None or at < failover.writable:
            return f"during failover {failover.number}"
    return "after the last failover"


def _judge_failovers(
    script: Script,
    ledger: Ledger,
    health: HealthLog,
    running: Sequence[Replica],
    window_goal: bool,
    found: Findings,
) -> None:
    figures = found.figures
    firsts = [s.finals[0] for s in ledger.sent.values() if s.finals]
    acknowledged = Counter(_phase(a.at, script) for a in firsts if a.code == "OK")
    phases = ["before the first kill"]
    for failover in script.failovers:
        if failover.number > 1:
            phases.append(
                f"between failovers {failover.number - 1} and {failover.number}"
            )
        phases.append(f"during failover {failover.number}")
    for phase in [*phases, "after the last failover"]:
        figures[f"acknowledged {phase}"] = acknowledged[phase]
    answers = [a for s in ledger.sent.values() for a in s.answers]
    figures["commands applied twice"] = sum(
        1
        for s in ledger.sent.values()
        if sum(1 for a in s.finals if a.code == "OK" and not a.duplicate) > 1
    )
    figures["commands answered two ways"] = sum(
        1 for s in ledger.sent.values() if len({a.outcome for a in s.finals}) > 1
    )
    if len(script.failovers) < script.count:
        found.fail(f"only {len(script.failovers)} of {script.count} failovers")
    for failover in script.failovers:
        number = failover.number
        name = f"failover {number}"
        if failover.writable is None or failover.new is None:
            found.fail(f"{name}: no new primary")
            continue
        manager = failover.writable - failover.killed
        figures[f"{name}: killed"] = (
            f"{failover.old.name} (primary) at command {failover.done_at_kill}"
        )
        figures[f"{name}: the manager"] = (
            f"marked it unhealthy after {_seconds(failover.unhealthy_after)}, "
            f"promoted {failover.new.name} (wait_primary) after "
            f"{_seconds(failover.promoted_after)}; writable after {manager:.2f}s"
        )
        # Commits on the new primary: fresh (not duplicate) OK answers to
        # calls sent after the kill (the old primary could take none).
        fresh = sorted(
            a.at
            for a in answers
            if a.code == "OK" and not a.duplicate and a.at - a.seconds > failover.killed
        )
        if not fresh:
            found.fail(f"{name}: no command committed on the new primary")
            continue
        window = fresh[0] - failover.killed
        promoted = failover.promoted_after
        figures[f"{name}: window without writes"] = (
            f"{window:.2f}s: the first command committed on {failover.new.name} "
            + (
                f"{window - promoted:.2f}s after the manager promoted it"
                if promoted is not None
                else "(the manager's promotion not found)"
            )
        )
        if window_goal and (promoted is None or window - promoted > WINDOW_GOAL):
            found.fail(
                f"{name}: the first commit {window:.2f}s after the kill, the "
                f"promotion after {_seconds(promoted)} (goal: within {WINDOW_GOAL:g}s)"
            )
        codes = Counter(
            f"{a.code}{' (duplicate)' if a.duplicate else ''}"
            for a in answers
            if failover.killed <= a.at - a.seconds and a.at < failover.writable
        )
        figures[f"{name}: answers to calls sent and answered in the window"] = (
            ", ".join(f"{c} {n}" for c, n in sorted(codes.items())) or "none"
        )
        if failover.rejoined is not None:
            figures[f"{name}: {failover.old.name} a synchronous standby again"] = (
                f"{failover.rejoined - failover.killed:.1f}s after the kill"
            )
        for index, changes in enumerate(health.changes):
            figures[f"{name}: replica {index} health"] = _health(
                changes, failover, found, f"{name}: replica {index}"
            )
    for replica in running:
        alive = replica.process is not None and replica.process.poll() is None
        if not alive or replica.starts != 1:
            found.fail(f"replica {replica.index} was restarted or died")
    figures["replicas restarted"] = sum(1 for r in running if r.starts != 1)


def _seconds(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f}s"


def _health(
    changes: list[tuple[float, str]], failover: Failover, found: Findings, who: str
) -> str:
    """What one replica's health did around one failover."""
    assert failover.writable is not None
    down = next(
        (t for t, s in changes if t >= failover.killed and s != "SERVING"), None
    )
    if down is None or down > failover.writable:
        found.fail(f"{who} never went NOT_SERVING while there was no primary")
        return "stayed SERVING"
    status = next(s for t, s in changes if t == down)
    up = next((t for t, s in changes if t > down and s == "SERVING"), None)
    if status != "NOT_SERVING":
        found.fail(f"{who}: {status}")
    if up is None:
        found.fail(f"{who} never SERVING again")
        return f"{status} {down - failover.killed:.2f}s after the kill, never back"
    return (
        f"{status} {down - failover.killed:.2f}s after the kill, SERVING again "
        f"{up - failover.killed:.2f}s after it"
    )


def _judge_reads(script: Script, reading: Readers, found: Findings) -> None:
    """Reads resumed after each failover, and never went back in time."""
    for index, reads in enumerate(reading.reads):
        seen: dict[str, int] = {}
        back = 0
        for _, code, game_id, version in reads:
            if code == "OK":
                back += version < seen.get(game_id, 0)
                seen[game_id] = max(seen.get(game_id, 0), version)
            elif code in ("INTERNAL", "UNKNOWN"):
                found.fail(f"replica {index}: GetGame answered {code}")
        codes = Counter(code for _, code, _, _ in reads)
        found.figures[f"replica {index}: GetGame reads"] = ", ".join(
            f"{c} {n}" for c, n in sorted(codes.items())
        )
        if back:
            found.fail(f"replica {index}: {back} reads showed a game older than before")
        for failover in script.failovers:
            resumed = next(
                (t for t, c, _, _ in reads if c == "OK" and t >= failover.killed + 0.5),
                None,
            )
            key = f"replica {index}: reads after failover {failover.number}"
            if resumed is None:
                found.fail(f"{key}: never resumed")
            else:
                found.figures[key] = (
                    f"OK again {resumed - failover.killed:.2f}s after the kill"
                )


def _judge_streams(
    script: Script, watching: Watchers, formation: Formation, found: Findings
) -> None:
    """Every stream received each version once, in order, from 1, up to the
    game's last (or to where it was when the run stopped)."""
    store = open_store(formation.url())
    try:
        gaps = 0
        behind = 0
        through = 0
        errors: Counter[str] = Counter()
        for stream in watching.streams:
            errors.update(stream.errors)
            if stream.versions != list(range(1, len(stream.versions) + 1)):
                gaps += 1
                found.fail(
                    f"WatchGame of {stream.game_id} through replica {stream.replica}: "
                    f"versions not 1..n once each: {_ranges(stream.versions)}"
                )
            last = stream.versions[-1] if stream.versions else 0
            if last < store.stream_version(stream.game_id):
                behind += 1
                found.fail(
                    f"WatchGame of {stream.game_id} stopped at version {last}, "
                    f"the game is at {store.stream_version(stream.game_id)}"
                )
            through += any(
                stream.opened < f.killed and any(r > f.killed for r in stream.resumed)
                for f in script.failovers
            )
    finally:
        store.close()
    figures = found.figures
    figures["WatchGame streams"] = (
        f"{len(watching.streams)}, {sum(len(s.versions) for s in watching.streams)} "
        "events received"
    )
    figures["WatchGame streams resumed across a failover"] = through
    figures["WatchGame errors resumed from"] = (
        ", ".join(f"{c} {n}" for c, n in sorted(errors.items())) or "none"
    )
    figures["WatchGame streams with a gap or a repeat / behind"] = f"{gaps} / {behind}"
    if script.failovers and not through:
        found.fail("no WatchGame stream was open across a failover")


def _ranges(versions: list[int]) -> str:
    return ", ".join(str(v) for v in versions[:40])


def _verify_all(replica: Replica, found: Findings) -> None:
    """``strata verify --all`` through a replica: exit 0, every game verified."""
    done = subprocess.run(
        [
            sys.executable, "-m", "clients.cli", "verify", "--all",
            "--target", replica.target,
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": python_path(),
            "STRATA_ADMIN_TOKEN": ADMIN_TOKEN,
        },
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # fmt: skip
    last = (done.stdout.strip().splitlines() or ["(nothing)"])[-1]
    found.figures["strata verify --all"] = f"{last} (exit {done.returncode})"
    if done.returncode != 0:
        found.fail(f"strata verify --all: exit {done.returncode}: {done.stdout[-500:]}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--nodes", type=int, default=2, help="PostgreSQL nodes")
    parser.add_argument("--failovers", type=int, default=2)
    parser.add_argument(
        "--before", type=int, default=600, help="commands before the first kill"
    )
    parser.add_argument(
        "--between", type=int, default=600, help="commands between two kills"
    )
    parser.add_argument(
        "--after", type=int, default=600, help="commands after the last failover"
    )
    parser.add_argument(
        "--watchers", type=int, default=3, help="WatchGame streams per replica"
    )
    parser.set_defaults(replicas=2, clients=32, max_seconds=900.0)
    args = parser.parse_args(argv)
    # The script stops the load; the count only bounds it.
    settings = dataclasses.replace(settings_from(args), commands=10**9)
    with strata_on_a_formation(args.nodes, args.replicas, args.processes) as (
        formation,
        running,
    ):
        found = exercise(
            formation,
            running,
            settings,
            args.failovers,
            args.before,
            args.between,
            args.after,
            args.watchers,
        )
        found.figures["formation"] = (
            f"pg_auto_failover: a monitor and {args.nodes} nodes, synchronous "
            "replication; monitor settings "
            + ", ".join(
                f"{k.removeprefix('pgautofailover.')}={v}"
                for k, v in MONITOR_SETTINGS.items()
            )
        )
    return report(
        f"failover: {args.replicas} replicas, {args.clients} clients, "
        f"{args.failovers} primaries killed (kill -9 of PostgreSQL, then its keeper)",
        found,
    )


if __name__ == "__main__":
    sys.exit(main())
