"""``python -m bench``: the figures, their ceilings and the ratios, from one run.

    python -m bench --quick          # about a minute
    python -m bench                  # the full run (a few minutes)
    python -m bench --tiny           # seconds: the smoke test's mode
    python -m bench --ab ../base --quick --only e2e   # against another checkout

It creates a database on the PostgreSQL server of ``--database-url``
(default ``$STRATA_BENCH_DATABASE_URL``, else
``postgresql://postgres@127.0.0.1:5432/postgres``), runs everything, prints
a table and writes it as JSON (``--json``), then drops the database.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import multiprocessing
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from bench import ab, bots, clocks, load, reads, store
from bench.db import Database, Service, create_database, drop_database, start_service
from clients.client import StrataClient
from eventstore.postgres import PostgresEventStore

DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"


@dataclass(frozen=True)
class Mode:
    name: str
    warmup: float
    duration: float
    concurrency: tuple[int, ...]
    writers: int
    watchers: int
    long_game: int
    fold_game: int
    repeats: int
    #: The timekeeper phase: timed games in play, of which this many come
    #: due one after another over ``clock_window`` seconds.
    timed_games: int
    expiring: int
    clock_window: float
    #: The listgames phase: games listed (few, then many), calls measured.
    list_games: tuple[int, int] = (100, 10_000)
    list_calls: int = 200


MODES = {
    "full": Mode(
        "full", 2.0, 10.0, (1, 16, 64), 16, 100, 10_000, 1_000, 15, 5000, 100, 20.0
    ),
    "quick": Mode(
        "quick", 1.0, 3.0, (1, 16, 64), 16, 100, 10_000, 1_000, 7, 2000, 50, 10.0
    ),
    "tiny": Mode("tiny", 0.2, 1.0, (1,), 2, 4, 400, 100, 2, 20, 10, 1.0, (60, 120), 20),
}


@dataclass
class Report:
    """Figures by name, and the targets judged on them."""

    mode: str
    command: str
    figures: dict[str, Any] = field(default_factory=dict)
    targets: list[dict[str, Any]] = field(default_factory=list)

    def target(
        self, name: str, value: float, bound: float, at_least: bool, note: str
    ) -> None:
        met = value >= bound if at_least else value <= bound
        if math.isnan(value):
            met = False
        self.targets.append(
            {
                "target": name,
                "value": round(value, 3),
                "bound": f"{'>=' if at_least else '<='} {bound}",
                "met": met,
                "note": note,
            }
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="shorter phases")
    group.add_argument("--tiny", action="store_true", help="seconds; no meaning")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("STRATA_BENCH_DATABASE_URL", DEFAULT_SERVER),
        help="a PostgreSQL server URL; the bench creates its own database there",
    )
    parser.add_argument("--json", default="bench-results.json", help="output file")
    parser.add_argument(
        "--workers", type=int, default=32, help="the service's request threads"
    )
    parser.add_argument(
        "--separate-worker",
        action="store_true",
        help="serve with STRATA_BACKGROUND=none beside a `strata worker` process "
        "(the projection and the bot seats out of the request process)",
    )
    parser.add_argument(
        "--profile",
        default="",
        help="py-spy the service during an extra 16-client game phase (not "
        "counted) into this file",
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated phases: e2e,processes,watch,appends,loads,projection,"
        "standby,hostile,clocks,listgames,follow,bots",
    )
    parser.add_argument(
        "--ab",
        default="",
        metavar="CHECKOUT",
        help="run this checkout and CHECKOUT (another commit's tree) round by "
        "round with the other arguments; report this one's figures / the other's",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --ab")
    args = parser.parse_args(argv)
    if args.ab:
        return ab.main(list(sys.argv[1:] if argv is None else argv))
    mode = MODES["tiny" if args.tiny else "quick" if args.quick else "full"]
    phases = set(args.only.split(",")) if args.only else set()

    def wanted(phase: str) -> bool:
        return not phases or phase in phases

    report = Report(mode.name, "python -m bench " + " ".join(argv or sys.argv[1:]))
    report.figures["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average_at_start": os.getloadavg(),
    }
    database = create_database(args.database_url)
    print(f"bench: database {database.name}, mode {mode.name}", file=sys.stderr)
    try:
        if wanted("e2e"):
            end_to_end(
                report, database, mode, args.workers, args.profile, args.separate_worker
            )
        if wanted("processes"):
            serving_processes(report, database, mode, args.workers)
        phases_in_order: list[tuple[str, Callable[[], None]]] = [
            ("watch", lambda: watchers(report, database, mode)),
            ("appends", lambda: appends(report, database, mode)),
            ("loads", lambda: loads(report, database, mode)),
            ("projection", lambda: projection(report, database)),
            ("standby", lambda: standby(report, mode)),
            ("hostile", lambda: hostile_bodies(report, database, mode)),
            ("clocks", lambda: timekeeper(report, database, mode)),
            ("listgames", lambda: list_games(report, database, mode)),
            ("follow", lambda: follow_log(report, database, mode)),
            ("bots", lambda: bot_think(report, mode)),
        ]
        for phase, run in phases_in_order:
            if wanted(phase):
                run()
    finally:
        drop_database(database)
    report.figures["machine"]["load_average_at_end"] = os.getloadavg()
    print_report(report)
    Path(args.json).write_text(
        json.dumps(
            {
                "mode": report.mode,
                "command": report.command,
                "figures": report.figures,
                "targets": report.targets,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"bench: wrote {args.json}", file=sys.stderr)
    return 0


# -- phases --------------------------------------------------------------------


def _rate(tally: load.Tally, duration: float) -> dict[str, Any]:
    return {
        "per_second": round(tally.calls / duration, 1),
        "p50_ms": round(store.percentile(tally.latencies, 0.5) * 1000, 3),
        "p99_ms": round(store.percentile(tally.latencies, 0.99) * 1000, 3),
        "count": tally.calls,
        "other_calls_per_second": round(tally.other_calls / duration, 1),
        "games_finished": tally.games_finished,
        "errors": tally.errors,
        "server_cpu_ms_per_call": round(
            tally.server_cpu * 1000 / tally.calls if tally.calls else float("nan"), 3
        ),
        "client_cpu_ms_per_call": round(
            tally.client_cpu * 1000 / tally.calls if tally.calls else float("nan"), 3
        ),
        "worker_cpu_ms_per_call": round(
            tally.worker_cpu * 1000 / tally.calls if tally.calls else float("nan"), 3
        ),
        "database_cpu_ms_per_call": round(
            tally.database_cpu * 1000 / tally.calls if tally.calls else float("nan"), 3
        ),
        "machine_cpu_ms_per_call": round(
            tally.machine_cpu * 1000 / tally.calls if tally.calls else float("nan"), 3
        ),
        "machine_busy": round(
            tally.machine_cpu / (duration * (os.cpu_count() or 1)), 3
        ),
    }


def end_to_end(
    report: Report,
    database: Database,
    mode: Mode,
    workers: int,
    profile: str,
    separate_worker: bool = False,
) -> None:
    service = start_service(database, workers, separate_worker=separate_worker)
    worker_pid = service.worker.pid if service.worker is not None else None
    figures: dict[str, Any] = {
        "workers": workers,
        "background": "strata worker process" if separate_worker else "in process",
    }
    at = 16 if 16 in mode.concurrency else mode.concurrency[-1]
    try:
        for clients in mode.concurrency:
            print(f"bench: e2e at {clients} clients", file=sys.stderr)

            def measure(kind: str, clients: int = clients) -> load.Tally:
                return load.run_drivers(
                    kind,
                    service.http_target if kind == "connect" else service.target,
                    clients,
                    mode.warmup,
                    mode.duration,
                    server_pid=service.process.pid,
                    worker_pid=worker_pid,
                )

            noop = measure("noop")
            game = measure("bots")
            if profile and clients == 16:
                # A phase of its own: the sampler's CPU would otherwise be
                # taken from the commands it measures.
                spy = _py_spy(service, mode, profile)
                measure("bots")
                spy.wait()
            figures[str(clients)] = {
                "noop": _rate(noop, mode.duration),
                "commands": _rate(game, mode.duration),
            }
            if clients == at:
                # The same bots over the Connect protocol (JSON, HTTP/1.1),
                # as a browser speaks, on the same server in the same run:
                # rounds of Connect each beside a round of gRPC (a shared
                # machine's load drifts), the median round's ratio kept.
                rounds = []
                grpc_round = game
                for number in range(1 if mode.name == "tiny" else 3):
                    print(
                        f"bench: e2e over Connect at {clients} clients, "
                        f"round {number + 1}",
                        file=sys.stderr,
                    )
                    if number:
                        grpc_round = measure("bots")
                    connect_round = _rate(measure("connect"), mode.duration)
                    grpc_rate = _rate(grpc_round, mode.duration)["per_second"]
                    ratio = connect_round["per_second"] / grpc_rate if grpc_rate else 0
                    rounds.append((ratio, connect_round))
                rounds.sort(key=lambda r: r[0])
                ratio, connect_round = rounds[len(rounds) // 2]
                figures[str(clients)]["connect_commands"] = connect_round
                figures["connect_over_grpc"] = round(ratio, 3)
                figures["connect_over_grpc_rounds"] = [round(r, 3) for r, _ in rounds]
    finally:
        service.stop()
    report.figures["end_to_end"] = figures
    noop_fig, game_fig = figures[str(at)]["noop"], figures[str(at)]["commands"]
    report.target(
        f"commands/s over Connect (JSON) / over gRPC at {at} clients",
        figures["connect_over_grpc"],
        0.7,
        True,
        "the same bots, the same server, the median of rounds side by side",
    )
    # The same bots at the same concurrency driving the servicer in one
    # process, with no gRPC between them: what a command costs the
    # application and the store alone; the rest of the service's CPU per
    # command is the serving's: gRPC, the interceptors, the server's threads
    # (and the background work's, in process).
    print(f"bench: the game phase in process at {at} clients", file=sys.stderr)
    alone = _rate(
        load.run_in_process(database.url, int(at), mode.warmup, mode.duration),
        mode.duration,
    )
    figures["in_process"] = {"clients": int(at), **alone}
    figures["grpc_cpu_ms_per_command"] = round(
        game_fig["server_cpu_ms_per_call"] - alone["client_cpu_ms_per_call"], 3
    )
    report.target(
        f"commands/s / no-op calls/s at {at} clients",
        game_fig["per_second"] / noop_fig["per_second"],
        0.5,
        True,
        "",
    )
    rpcs = game_fig["per_second"] + game_fig["other_calls_per_second"]
    report.figures["end_to_end"]["game_rpcs_per_second_ratio"] = round(
        rpcs / noop_fig["per_second"], 3
    )
    report.figures["end_to_end"]["server_cpu_per_command_over_noop"] = round(
        game_fig["server_cpu_ms_per_call"] / noop_fig["server_cpu_ms_per_call"], 2
    )
    report.figures["end_to_end"]["client_cpu_per_command_over_noop"] = round(
        game_fig["client_cpu_ms_per_call"] / noop_fig["client_cpu_ms_per_call"], 2
    )
    # Everything shares this machine's cores: when both phases keep them
    # busy, the throughput ratio cannot beat the ratio of the machine's CPU
    # per call (service, worker, drivers and PostgreSQL together).
    report.figures["end_to_end"]["machine_cpu_per_noop_over_command"] = round(
        noop_fig["machine_cpu_ms_per_call"] / game_fig["machine_cpu_ms_per_call"], 3
    )
    report.target(
        f"command p99 / no-op p99 at {at} clients",
        game_fig["p99_ms"] / noop_fig["p99_ms"],
        3.0,
        False,
        "",
    )


def serving_processes(
    report: Report, database: Database, mode: Mode, workers: int
) -> None:
    """The game phase at 16 clients against ``strata serve`` and against
    ``strata serve --processes 2``, in the order 1, 2, 2, 1 (drift in the
    machine's speed falls on both alike), each bot on a connection of its
    own so that the kernel can spread them over the processes. The service's
    CPU is the processes' together."""
    clients = 16 if 16 in mode.concurrency else mode.concurrency[-1]
    rounds: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    # The smoke test's tiny mode: one round each is enough to run the phase.
    order = (1, 2) if mode.name == "tiny" else (1, 2, 2, 1)
    for processes in order:
        print(
            f"bench: {processes} serving process(es) at {clients} clients",
            file=sys.stderr,
        )
        service = start_service(database, workers, processes=processes)
        try:
            tally = load.run_drivers(
                "bots",
                service.target,
                clients,
                mode.warmup,
                mode.duration,
                server_pid=service.process.pid,
                connections=max(1, clients // 2),
            )
        finally:
            service.stop()
        rounds[processes].append(_rate(tally, mode.duration))

    def mean(processes: int, key: str) -> float:
        values = [float(r[key]) for r in rounds[processes]]
        return round(sum(values) / len(values), 3)

    keys = (
        "per_second",
        "p50_ms",
        "p99_ms",
        "server_cpu_ms_per_call",
        "database_cpu_ms_per_call",
        "machine_cpu_ms_per_call",
        "machine_busy",
    )
    figures: dict[str, Any] = {
        "clients": clients,
        "connections": clients,
        "rounds": {str(p): r for p, r in rounds.items()},
        "one": {key: mean(1, key) for key in keys},
        "two": {key: mean(2, key) for key in keys},
    }
    ratio = figures["two"]["per_second"] / figures["one"]["per_second"]
    figures["two_over_one"] = round(ratio, 3)
    report.figures["processes"] = figures
    report.target(
        f"commands/s with 2 serving processes / with 1 at {clients} clients",
        ratio,
        1.2,
        True,
        "",
    )


def _py_spy(service: Service, mode: Mode, output: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            "py-spy",
            "record",
            "--pid",
            str(service.process.pid),
            "--duration",
            str(max(1, int(mode.warmup + mode.duration))),
            "--rate",
            "100",
            "--format",
            "raw" if output.endswith(".txt") else "flamegraph",
            "--output",
            output,
            "--nonblocking",
            "--gil",
        ]
    )


def watchers(report: Report, database: Database, mode: Mode) -> None:
    """Delay from append to delivery for many watchers of one game: over
    gRPC, then over the Connect protocol (JSON, each message parsed as a
    browser parses it: :func:`bench.load._parsed_json`), on the same server."""
    # WatchGame holds no thread while it waits: the default pool will do.
    service = start_service(database, 32)
    # Rounds of gRPC then Connect, side by side (a shared machine's load
    # drifts): the round of the median ratio is kept.
    rounds = []
    try:
        with StrataClient(service.target, token="bench-admin") as admin:
            for number in range(1 if mode.name == "tiny" else 3):
                print(f"bench: watchers, round {number + 1}", file=sys.stderr)
                grpc_fig = _watch_once(admin, service.target, mode)
                connect_fig = _watch_once(admin, service.http_target, mode)
                ratio = connect_fig["p50_ms"] / grpc_fig["p50_ms"]
                rounds.append((ratio, grpc_fig, connect_fig))
    finally:
        service.stop()
    rounds.sort(key=lambda r: r[0])
    ratio, grpc_fig, connect_fig = rounds[len(rounds) // 2]
    report.figures["watch"] = grpc_fig
    report.figures["watch_connect"] = {
        **connect_fig,
        "p50_over_grpc_rounds": [round(r[0], 3) for r in rounds],
    }
    report.target(
        "watch delay p50 over Connect (JSON) / over gRPC",
        ratio,
        1.5,  # issue 33, goal 4 (2.0 before it)
        False,
        f"{mode.watchers} watchers of one game each, the median of rounds;"
        " the Connect watchers parse each message's JSON as a browser does",
    )


def _watch_once(admin: StrataClient, target: str, mode: Mode) -> dict[str, Any]:
    """``mode.watchers`` streams on one new game over ``target`` (gRPC, or
    Connect when an HTTP address) while the admin plays it through."""
    count = mode.watchers
    game_type, players = (
        ("dinosaurs_extinct", 2)
        if mode.name == "tiny"
        else ("happy_little_dinosaurs", 4)
    )
    game_id = admin.create_game(game_type, players).game_id
    for seat in range(players):
        admin.join_game(game_id, f"p{seat}", seat)
    admin.start_game(game_id)
    context = multiprocessing.get_context("spawn")
    results: multiprocessing.Queue[list[float]] = context.Queue()
    readies = []
    processes = []
    until = time.time() + 120
    share = [count // 2 + count % 2, count // 2] if count > 1 else [1]
    for part in share:
        ready = context.Value("i", 0)
        process = context.Process(
            target=load.watch,
            args=(target, game_id, part, ready, until, results),
            daemon=True,
        )
        process.start()
        readies.append(ready)
        processes.append(process)
    deadline = time.time() + 60
    while not all(r.value for r in readies):
        if time.time() > deadline:
            raise RuntimeError("the watchers did not all connect")
        time.sleep(0.05)
    time.sleep(0.2)
    commands = 0
    while True:
        listed = admin.list_legal_actions(game_id)
        if not listed.actions:
            break
        action = listed.actions[commands % len(listed.actions)]
        admin.submit_command(game_id, action.seat, action.command)
        commands += 1
        time.sleep(0.01 if mode.name != "tiny" else 0)
    delays: list[float] = []
    for _ in processes:
        delays.extend(results.get(timeout=150))
    for process in processes:
        process.join(timeout=10)
    return {
        "watchers": count,
        "commands": commands,
        "deliveries": len(delays),
        "p50_ms": round(store.percentile(delays, 0.5) * 1000, 3),
        "p99_ms": round(store.percentile(delays, 0.99) * 1000, 3),
        "max_ms": round(max(delays, default=float("nan")) * 1000, 3),
    }


def appends(report: Report, database: Database, mode: Mode) -> None:
    writers, duration = mode.writers, mode.duration
    print(f"bench: appends at {writers} writers", file=sys.stderr)
    # The two Python stores take turns, three rounds each, and each keeps its
    # median round: the load of a shared machine drifts, and a single round
    # of each, seconds apart, carries that drift into their ratio.
    rounds: dict[str, list[Any]] = {"ours": [], "es": []}
    for _ in range(3):
        rounds["ours"].append(store.our_appends(database, writers, duration))
        rounds["es"].append(store.eventsourcing_appends(database, writers, duration))
    ours, es = (
        sorted(rounds[name], key=lambda r: r.per_second)[1] for name in ("ours", "es")
    )
    raw = store.raw_appends(database, writers, duration)
    pgbench = store.pgbench_appends(database, writers, duration)
    report.figures["appends"] = {
        "writers": writers,
        "strata_store": ours.as_dict(),
        "psycopg_one_statement": raw.as_dict(),
        "pgbench_one_statement": pgbench.as_dict(),
        "eventsourcing_recorder": es.as_dict(),
        "rounds_per_second": {
            "strata_store": [r.per_second for r in rounds["ours"]],
            "eventsourcing_recorder": [r.per_second for r in rounds["es"]],
        },
    }
    report.target(
        "store appends/s / PostgreSQL (pgbench, same write)",
        ours.per_second / pgbench.per_second,
        0.6,
        True,
        "",
    )
    report.target(
        "store appends/s / eventsourcing recorder",
        ours.per_second / es.per_second,
        3.0,
        True,
        "",
    )


def loads(report: Report, database: Database, mode: Mode) -> None:
    print("bench: loads and folds", file=sys.stderr)
    event_store = PostgresEventStore(database.url)
    try:
        short = store.long_game(event_store, 10, snapshot=False)
        long_plain = store.long_game(event_store, mode.long_game, snapshot=False)
        fold_long = store.cold_load_seconds(
            event_store, long_plain, max(1, mode.repeats // 3)
        )
        long = store.long_game(event_store, mode.long_game, snapshot=True)
        short_s = store.cold_load_seconds(event_store, short, mode.repeats)
        long_s = store.cold_load_seconds(event_store, long, mode.repeats)
        fold_game = store.long_game(event_store, mode.fold_game, snapshot=False)
        ours_fold = store.cold_load_seconds(event_store, fold_game, mode.repeats)
    finally:
        event_store.close()
    es_fold = store.eventsourcing_fold_seconds(database, mode.fold_game, mode.repeats)
    report.figures["loads"] = {
        "cold_load_10_events_ms": round(short_s * 1000, 3),
        f"cold_load_{mode.long_game}_events_ms": round(long_s * 1000, 3),
        f"replay_fold_{mode.long_game}_events_per_second": round(
            mode.long_game / fold_long
        ),
        f"fold_{mode.fold_game}_events_ms": round(ours_fold * 1000, 3),
        f"eventsourcing_fold_{mode.fold_game}_events_ms": round(es_fold * 1000, 3),
    }
    report.target(
        f"cold load {mode.long_game} events / 10 events",
        long_s / short_s,
        2.0,
        False,
        "snapshot every 200 versions",
    )
    report.target(
        f"fold {mode.fold_game} events (no snapshot) / eventsourcing",
        ours_fold / es_fold,
        0.5,
        False,
        "",
    )


def timekeeper(report: Report, database: Database, mode: Mode) -> None:
    """How late the timekeeper acts with many timed games in play
    (:mod:`bench.clocks`)."""
    print(
        f"bench: timekeeper with {mode.timed_games} timed games in play",
        file=sys.stderr,
    )
    figures = clocks.lateness(
        database, mode.timed_games, mode.expiring, mode.clock_window
    )
    report.figures["timekeeper"] = figures
    p99 = figures["lateness_p99_ms"]
    report.target(
        f"timeout lateness p99 ms, {figures['timed_games_in_play']} timed games "
        "in play",
        float("nan") if p99 is None or figures["missed"] else p99,
        250,
        False,
        f"{figures['expiring']} moves over {figures['window_seconds']} s, each "
        f"timed out {figures['decision_seconds']} s later; a missed timeout fails it",
    )


def list_games(report: Report, database: Database, mode: Mode) -> None:
    small, large = mode.list_games
    print(f"bench: ListGames with {small} and {large} games", file=sys.stderr)
    figures = reads.listgames(database, small, large, mode.list_calls)
    report.figures["list_games"] = figures
    report.target(
        f"ListGames at a random page, {large} games / {small}",
        figures["large_over_small"],
        2.0,
        False,
        f"median of {mode.list_calls} calls each",
    )


def follow_log(report: Report, database: Database, mode: Mode) -> None:
    print("bench: FollowLog against the store's read rate", file=sys.stderr)
    figures = reads.follow(database, mode.long_game, 3)
    report.figures["follow_log"] = figures
    report.target(
        "FollowLog events/s / store read_all events/s",
        figures["follow_over_store"],
        0.3,
        True,
        "the whole log, no_follow, max_batch 500; median of 3 rounds taking "
        f"turns (one event a message: {figures['one_a_message_over_store']})",
    )


#: Decisions of each game every bot level chooses, by mode.
THINK_DECISIONS = {"full": 60, "quick": 20, "tiny": 2}


def bot_think(report: Report, mode: Mode) -> None:
    """How long each bot level takes to choose a move (:mod:`bench.bots`),
    under the service's default time budget per move."""
    print("bench: bot think time by game and level", file=sys.stderr)
    figures = bots.think_times(THINK_DECISIONS[mode.name])
    report.figures["bot_think"] = figures
    budget = figures["move_ms"]
    report.target(
        "strong bot think p99 ms, every game",
        figures["strong_p99_ms"],
        budget * 1.5,
        False,
        f"STRATA_BOT_MOVE_MS {budget:g}: the search stops before a playout "
        "once the budget is spent (one playout may run over)",
    )


def projection(report: Report, database: Database) -> None:
    print("bench: projection rebuild", file=sys.stderr)
    applied, seconds = store.projection_rebuild(database)
    report.figures["projection_rebuild"] = {
        "events": applied,
        "seconds": round(seconds, 3),
        "events_per_second": round(applied / seconds) if seconds else None,
    }


# -- output --------------------------------------------------------------------


def standby(report: Report, mode: Mode) -> None:
    """Reads of the global log from a hot standby against the primary, on
    a private primary and a real standby of it (``reliability.cluster``,
    both on this machine): a whole log read in batches of 500, the two
    taking turns (primary, standby, standby, primary); the same for whole
    games' streams (what GetGame and ReplayGame read); and an append
    followed by a read of the log until it shows it (read your writes)."""
    from eventstore import migrate
    from eventstore.base import NewEvent
    from reliability.cluster import PrivateCluster, PrivateStandby

    events = {"tiny": 2_000, "quick": 20_000}.get(mode.name, 50_000)
    print(f"bench: standby, a log of {events} events", file=sys.stderr)
    with PrivateCluster() as primary, PrivateStandby(primary) as replica:
        migrate.upgrade(primary.url)
        writer = PostgresEventStore(primary.url)
        reader = PostgresEventStore(primary.url, read_urls=[replica.url])
        direct = PostgresEventStore(primary.url)
        try:
            body = {"pad": "x" * 100}
            for n in range(events // 10):
                writer.append(
                    f"game-{n % 200}", n // 200 * 10, [NewEvent("E", body)] * 10
                )
            last = writer.last_position()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # the standby catches up
                if reader.read_all(last - 1, 1):
                    break
                time.sleep(0.05)

            def scan(through: PostgresEventStore) -> float:
                started, position, count = time.perf_counter(), 0, 0
                while batch := through.read_all(position, 500):
                    count += len(batch)
                    position = batch[-1].position
                assert count == events
                return count / (time.perf_counter() - started)

            rates: dict[str, list[float]] = {"primary": [], "standby": []}
            for name in ("primary", "standby", "standby", "primary"):
                rates[name].append(scan(direct if name == "primary" else reader))

            def games(through: PostgresEventStore) -> float:
                """Whole games read (GetGame's, ReplayGame's reads), a second."""
                started = time.perf_counter()
                for n in range(200):
                    assert len(through.read_stream_nearby(f"game-{n}")) == events // 200
                return 200 / (time.perf_counter() - started)

            game_rates: dict[str, list[float]] = {"primary": [], "standby": []}
            for name in ("primary", "standby", "standby", "primary"):
                game_rates[name].append(games(direct if name == "primary" else reader))

            def own_writes(
                through: PostgresEventStore, count: int, name: str
            ) -> list[float]:
                spent = []
                position = through.last_position()
                for n in range(count):
                    started = time.perf_counter()
                    result = through.append(f"{name}-{n}", 0, [NewEvent("E", body)])
                    while not any(
                        e.position == result.last_position
                        for e in through.read_all(position, 1000)
                    ):
                        pass
                    spent.append(time.perf_counter() - started)
                    position = result.last_position
                return spent

            count = {"tiny": 20, "quick": 200}.get(mode.name, 500)
            before = reader.standby_reads, reader.primary_reads
            ryw = {
                "primary": own_writes(direct, count, "primary"),
                "standby": own_writes(reader, count, "standby"),
            }
            answered = (
                reader.standby_reads - before[0],
                reader.primary_reads - before[1],
            )
        finally:
            for opened in (writer, reader, direct):
                opened.close()
    figures = {
        "events": events,
        "scan_events_per_second": {k: [round(r) for r in v] for k, v in rates.items()},
        "standby_over_primary": round(sum(rates["standby"]) / sum(rates["primary"]), 3),
        "games_read_per_second": {
            k: [round(r) for r in v] for k, v in game_rates.items()
        },
        "games_standby_over_primary": round(
            sum(game_rates["standby"]) / sum(game_rates["primary"]), 3
        ),
        "append_then_read_ms": {
            name: {
                "p50": round(store.percentile(spent, 0.5) * 1000, 3),
                "p99": round(store.percentile(spent, 0.99) * 1000, 3),
            }
            for name, spent in ryw.items()
        },
        "own_write_reads_answered_by": {"standby": answered[0], "primary": answered[1]},
    }
    report.figures["standby"] = figures


def hostile_bodies(report: Report, database: Database, mode: Mode) -> None:
    """gRPC health latency while four connections send CreateGame bodies of
    60 kB JSON (a thousand values each) as fast as they are answered:
    the attack that took health from 2.6 ms to 1.5 s before the HTTP edge
    decoded large JSON off the event loop."""
    service = start_service(database, 32)
    seconds = max(mode.duration, 2.0)
    try:
        quiet = _health_latencies(service.target, seconds)
        stop = threading.Event()
        sent = [0]
        attackers = [
            threading.Thread(target=_send_bodies, args=(service, stop, sent))
            for _ in range(4)
        ]
        for attacker in attackers:
            attacker.start()
        try:
            time.sleep(0.5)
            attacked = _health_latencies(service.target, seconds)
        finally:
            stop.set()
            for attacker in attackers:
                attacker.join(10)
    finally:
        service.stop()
    quiet_figures, attacked_figures = _percentiles(quiet), _percentiles(attacked)
    report.figures["hostile_bodies"] = {
        "quiet": quiet_figures,
        "attacked": attacked_figures,
        "bodies_sent": sent[0],
        "seconds": seconds,
    }
    report.target(
        "gRPC health p99 (ms) under 4 connections of 60 kB JSON bodies",
        attacked_figures["p99_ms"],
        50.0,
        False,
        f"{sent[0]} bodies in {seconds:g} s; quiet p99 {quiet_figures['p99_ms']} ms",
    )


def _health_latencies(target: str, seconds: float) -> list[float]:
    """Milliseconds of gRPC health checks, one every 20 ms for ``seconds``."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    latencies = []
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            started = time.perf_counter()
            stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.02)
    return latencies


def _send_bodies(service: Service, stop: threading.Event, sent: list[int]) -> None:
    # As much as a caller may send: about 1,000 JSON values (the bound) and
    # 60 kB (the bound is 64 KiB).
    bots = [{"seat": 9, "bot": "b" * 60}] * 320
    padding = "x" * 36_000
    body = json.dumps(
        {"gameType": padding, "players": 2, "bots": bots}, separators=(",", ":")
    ).encode()
    host, _, port = service.http_target.removeprefix("http://").rpartition(":")
    while not stop.is_set():
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            while not stop.is_set():
                connection.request(
                    "POST",
                    "/strata.v1.GameService/CreateGame",
                    body=body,
                    headers={"Content-Type": "application/json"},
                )
                connection.getresponse().read()
                sent[0] += 1
        except (OSError, http.client.HTTPException):
            pass
        finally:
            connection.close()


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values) or [math.nan]

    def at(fraction: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 2)

    return {"n": len(values), "p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": at(1.0)}


def print_report(report: Report) -> None:
    figures = report.figures
    lines = [f"Strata bench ({report.mode}): {report.command}", ""]
    e2e = figures.get("end_to_end")
    if e2e:
        lines.append(
            f"{'clients':>7} | {'no-op/s':>9} {'p50 ms':>7} {'p99 ms':>7} | "
            f"{'cmds/s':>8} {'p50 ms':>7} {'p99 ms':>7} | {'ratio':>5} "
            f"{'cpu ms/call':>11} {'cpu ms/cmd':>10} "
            f"{'client ms/call':>14} {'client ms/cmd':>13} {'worker ms/cmd':>13} "
            f"{'db ms/cmd':>9} {'machine ms/call':>15} {'machine ms/cmd':>14} "
            f"{'busy':>9} errors"
        )
        for key, value in e2e.items():
            if not isinstance(value, dict) or "noop" not in value:
                continue
            noop, game = value["noop"], value["commands"]
            ratio = game["per_second"] / noop["per_second"]
            lines.append(
                f"{key:>7} | {noop['per_second']:>9} {noop['p50_ms']:>7} "
                f"{noop['p99_ms']:>7} | {game['per_second']:>8} "
                f"{game['p50_ms']:>7} {game['p99_ms']:>7} | {ratio:>5.2f} "
                f"{noop['server_cpu_ms_per_call']:>11} "
                f"{game['server_cpu_ms_per_call']:>10} "
                f"{noop['client_cpu_ms_per_call']:>14} "
                f"{game['client_cpu_ms_per_call']:>13} "
                f"{game['worker_cpu_ms_per_call']:>13} "
                f"{game['database_cpu_ms_per_call']:>9} "
                f"{noop['machine_cpu_ms_per_call']:>15} "
                f"{game['machine_cpu_ms_per_call']:>14} "
                f"{noop['machine_busy']:>4}/{game['machine_busy']:<4} "
                f"{game['errors'] or ''}"
            )
        alone = e2e.get("in_process")
        if alone:
            lines.append(
                f"in process, no gRPC, {alone['clients']} clients: "
                f"{alone['per_second']} commands/s, "
                f"{alone['client_cpu_ms_per_call']} ms CPU per command "
                f"(so serving it, gRPC and the interceptors, took "
                f"{e2e['grpc_cpu_ms_per_command']} ms)"
            )
        for key, value in e2e.items():
            connect = value.get("connect_commands") if isinstance(value, dict) else None
            if connect:
                lines.append(
                    f"over Connect (JSON), {key} clients: {connect['per_second']} "
                    f"commands/s, p50 {connect['p50_ms']} ms, p99 "
                    f"{connect['p99_ms']} ms, {connect['server_cpu_ms_per_call']} "
                    f"ms service CPU per command ({e2e['connect_over_grpc']} of "
                    f"gRPC's rate) {connect['errors'] or ''}"
                )
        lines.append("")
    for section in (
        "processes",
        "watch",
        "watch_connect",
        "appends",
        "loads",
        "projection_rebuild",
        "standby",
        "timekeeper",
        "list_games",
        "follow_log",
        "bot_think",
    ):
        if section in figures:
            lines.append(f"{section}: {json.dumps(figures[section])}")
    lines.append("")
    for target in report.targets:
        mark = "MET " if target["met"] else "MISS"
        lines.append(
            f"[{mark}] {target['target']}: {target['value']} ({target['bound']})"
            + (f"  — {target['note']}" if target["note"] else "")
        )
    print("\n".join(lines))


__all__ = ["main"]
