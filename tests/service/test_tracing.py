"""Traces as an operator's OTLP receiver sees them: a real ``strata serve``
configured by the standard OpenTelemetry variables, exporting to a receiver
in this test. The operator's service name and resource attributes are kept,
a sampler that samples nothing exports nothing, SQL statements are spans of
the call that ran them (OpenTelemetry's SQLAlchemy instrumentation), and
background work is one root span a run, with its game's id."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any, cast

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import (
    trace_service_pb2,
    trace_service_pb2_grpc,
)
from opentelemetry.proto.trace.v1 import trace_pb2
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from tests.service.conftest import ADMIN_TOKEN
from tests.service.served import Served, free_port

GAME = "dinosaurs_extinct"


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP/gRPC trace receiver: keeps every span exported to it, with
    its resource's attributes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spans: list[tuple[dict[str, Any], trace_pb2.Span]] = []

    def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        with self.lock:
            for resource_spans in request.resource_spans:
                resource = attributes_of(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append((resource, span))
        return trace_service_pb2.ExportTraceServiceResponse()

    def named(self, name: str) -> list[trace_pb2.Span]:
        with self.lock:
            return [span for _, span in self.spans if span.name == name]

    def all(self) -> list[trace_pb2.Span]:
        with self.lock:
            return [span for _, span in self.spans]


def attributes_of(pairs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        value = pair.value
        kind = value.WhichOneof("value")
        out[pair.key] = getattr(value, kind) if kind else None
    return out


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, int]]:
    collected = Receiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(  # type: ignore[no-untyped-call]
        collected, server
    )
    port = free_port()
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    try:
        yield collected, port
    finally:
        server.stop(0)


@pytest.fixture
def served(
    tmp_path: Path, receiver: tuple[Receiver, int]
) -> Iterator[Callable[..., Served]]:
    """``strata serve`` exporting spans to the receiver, with ``env`` on top."""
    processes: list[Served] = []

    def start(database_url: str = "", **env: str) -> Served:
        process = Served(
            tmp_path,
            database_url=database_url,
            env={
                "STRATA_ADMIN_TOKEN": ADMIN_TOKEN,
                "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver[1]}",
                "OTEL_EXPORTER_OTLP_INSECURE": "true",
                "OTEL_BSP_SCHEDULE_DELAY": "100",
                **env,
            },
        )
        processes.append(process)
        process.wait_serving()
        return process

    try:
        yield start
    finally:
        for process in processes:
            process.stop()


def play_a_bots_game(server: Served) -> str:
    with StrataClient(f"127.0.0.1:{server.port}", timeout=10) as client:
        admin = client.with_token(ADMIN_TOKEN)
        game_id = admin.create_game(GAME, 2, bots={0: "random", 1: "random"}).game_id
        deadline = time.monotonic() + 60
        while client.get_game(game_id).status != pb.GAME_STATUS_FINISHED:
            assert time.monotonic() < deadline, "the bots did not finish"
            time.sleep(0.1)
    return game_id


def until(check: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"not within {seconds} s"
        time.sleep(0.1)


def test_the_operators_service_name_and_resource_attributes_are_kept(
    served: Callable[..., Served], receiver: tuple[Receiver, int]
) -> None:
    server = served(
        OTEL_SERVICE_NAME="tables-eu",
        OTEL_RESOURCE_ATTRIBUTES="deployment.environment=staging,service.name=nope",
    )
    with StrataClient(f"127.0.0.1:{server.port}", timeout=10) as client:
        client.create_game(GAME, 2)
    collected, _ = receiver
    until(lambda: bool(collected.named("strata.v1.GameService/CreateGame")))
    with collected.lock:
        resources = [resource for resource, _ in collected.spans]
    # OTEL_SERVICE_NAME wins over the attributes' service.name (the SDK's rule).
    assert {r["service.name"] for r in resources} == {"tables-eu"}
    assert {r["deployment.environment"] for r in resources} == {"staging"}
    assert all(r["service.instance.id"].startswith("serve-") for r in resources)


def test_without_a_service_name_the_service_is_strata(
    served: Callable[..., Served], receiver: tuple[Receiver, int]
) -> None:
    server = served()
    with StrataClient(f"127.0.0.1:{server.port}", timeout=10) as client:
        client.list_game_types()
    collected, _ = receiver
    until(lambda: bool(collected.named("strata.v1.GameService/ListGameTypes")))
    with collected.lock:
        assert {r["service.name"] for r, _ in collected.spans} == {"strata"}


def test_a_sampler_that_samples_nothing_exports_nothing(
    served: Callable[..., Served], receiver: tuple[Receiver, int]
) -> None:
    server = served(OTEL_TRACES_SAMPLER="always_off")
    play_a_bots_game(server)
    assert server.stop() == 0  # pending spans are exported as it stops
    assert receiver[0].all() == []


def test_a_call_its_caller_left_unsampled_has_no_span_nor_steps(
    served: Callable[..., Served], receiver: tuple[Receiver, int]
) -> None:
    """A caller's ``traceparent`` that is not sampled (flags ``00``): the
    command it sends makes no span at all, neither the call's nor its steps'
    (load, decide, append) nor its SQL; the same command sampled (``01``)
    has all of them, children of the call."""
    server = served()
    unsampled, sampled = "1" * 32, "2" * 32
    with StrataClient(f"127.0.0.1:{server.port}", timeout=10) as client:
        admin = client.with_token(ADMIN_TOKEN)
        game_id = admin.create_game(GAME, 2).game_id
        tokens = [client.join_game(game_id, f"p{seat}").seat_token for seat in (0, 1)]
        admin.start_game(game_id)
        for trace_id in (unsampled, sampled):
            action = admin.list_legal_actions(game_id).actions[0]
            flags = "01" if trace_id == sampled else "00"
            client.stub.SubmitCommand(
                pb.SubmitCommandRequest(
                    game_id=game_id,
                    seat=action.seat,
                    command_id=f"traced-{flags}",
                    command=action.command,
                ),
                timeout=10,
                metadata=[
                    ("authorization", f"Bearer {tokens[action.seat]}"),
                    ("traceparent", f"00-{trace_id}-00f067aa0ba902b7-{flags}"),
                ],
            )
    assert server.stop() == 0  # pending spans are exported as it stops
    spans = receiver[0].all()
    assert [s.name for s in spans if s.trace_id.hex() == unsampled] == []
    in_sampled = [s for s in spans if s.trace_id.hex() == sampled]
    (call,) = [s for s in in_sampled if s.name.endswith("/SubmitCommand")]
    steps = {s.name for s in in_sampled if s.parent_span_id == call.span_id}
    assert {"decide", "append"} <= steps, steps
    assert any("db.system" in attributes_of(s.attributes) for s in in_sampled)


@pytest.mark.parametrize(
    ("opt_in", "system", "text"),
    [
        ("", "db.system", "db.statement"),
        ("database", "db.system.name", "db.query.text"),
    ],
)
def test_sql_statements_are_spans_of_the_call_that_ran_them(
    served: Callable[..., Served],
    receiver: tuple[Receiver, int],
    opt_in: str,
    system: str,
    text: str,
) -> None:
    """The instrumentation's attributes: the conventions' older names by
    default, the stable ones when the operator opts in
    (``OTEL_SEMCONV_STABILITY_OPT_IN=database``)."""
    server = served(OTEL_SEMCONV_STABILITY_OPT_IN=opt_in)
    with StrataClient(f"127.0.0.1:{server.port}", timeout=10) as client:
        client.with_token(ADMIN_TOKEN).create_game(GAME, 2)
    collected, _ = receiver
    until(lambda: bool(collected.named("strata.v1.GameService/CreateGame")))
    call = collected.named("strata.v1.GameService/CreateGame")[0]
    time.sleep(0.5)  # the batch the call's children came in
    in_call = [s for s in collected.all() if s.trace_id == call.trace_id]
    sql = [s for s in in_call if system in attributes_of(s.attributes)]
    assert sql, [s.name for s in in_call]
    by_id = {s.span_id: s for s in in_call}
    for span in sql:
        attributes = attributes_of(span.attributes)
        assert attributes[system] == "sqlite"
        assert attributes[text]
        assert span.kind == trace_pb2.Span.SPAN_KIND_CLIENT
        assert span.parent_span_id in by_id  # within the call's trace
    statements = [attributes_of(s.attributes)[text].lstrip().upper() for s in sql]
    assert any(statement.startswith("INSERT") for statement in statements)


def test_background_work_is_one_root_span_a_run_with_its_game(
    served: Callable[..., Served], receiver: tuple[Receiver, int]
) -> None:
    server = served()
    game_id = play_a_bots_game(server)
    # The game list (the projection's read model) has it finished: the
    # projection applied its events before the stop (a stop does not wait
    # for a run still lingering).
    with StrataClient(f"127.0.0.1:{server.port}", timeout=10) as client:
        until(
            lambda: (
                [
                    g.game_id
                    for g in client.list_games(status=pb.GAME_STATUS_FINISHED).games
                ]
                == [game_id]
            )
        )
    assert server.stop() == 0
    spans = receiver[0].all()
    moves = [s for s in spans if s.name == "strata.bots.move"]
    assert moves
    for move in moves:
        assert move.parent_span_id == b""  # a root
        assert attributes_of(move.attributes)["strata.game.id"] == game_id
    projected = [s for s in spans if s.name == "strata.projection.apply"]
    assert projected and all(s.parent_span_id == b"" for s in projected)
    # A move's steps and SQL are its children.
    move_traces = {m.trace_id for m in moves}
    steps = [s for s in spans if s.trace_id in move_traces and s.parent_span_id]
    assert {"load", "decide", "append"} <= {s.name for s in steps}
    assert any("db.system" in attributes_of(s.attributes) for s in steps)
    # Nothing else is a root: no parentless steps, no parentless SQL.
    roots = {s.name for s in spans if not s.parent_span_id}
    assert roots <= {
        "strata.bots.move",
        "strata.projection.apply",
        "strata.clocks.schedule",
        "strata.clocks.timeout",
        "strata.housekeeping.expire",
    } | {name for name in roots if name.startswith("strata.v1.")}, roots


def test_a_streams_span_ends_with_the_stream_and_holds_its_loads(
    served: Callable[..., Served], receiver: tuple[Receiver, int]
) -> None:
    server = served()
    with StrataClient(f"127.0.0.1:{server.port}", timeout=10) as client:
        game_id = client.create_game(GAME, 2).game_id
        stream = cast(Generator[Any, None, None], client.watch_game(game_id))
        next(stream)  # GameCreated: the stream is open
        stream.close()  # the client goes away
        with pytest.raises(StrataError):
            list(client.watch_game("no-such-game", follow=False))
    collected, _ = receiver
    name = "strata.v1.GameService/WatchGame"
    until(lambda: len(collected.named(name)) == 2)
    watched, missing = sorted(
        collected.named(name),
        key=lambda s: attributes_of(s.attributes)["rpc.response.status_code"],
    )
    assert attributes_of(watched.attributes)["rpc.response.status_code"] == (
        "CANCELLED"
    )
    assert attributes_of(missing.attributes)["rpc.response.status_code"] == (
        "NOT_FOUND"
    )
    assert watched.end_time_unix_nano >= watched.start_time_unix_nano > 0
    loads = [
        s
        for s in collected.all()
        if s.name == "load" and s.parent_span_id == watched.span_id
    ]
    assert loads  # the stream's load is the stream's child, not a root


@pytest.mark.postgres
def test_on_postgresql_the_statements_name_the_server(
    served: Callable[..., Served],
    receiver: tuple[Receiver, int],
    postgres_store_url: str,
) -> None:
    """The statements made through SQLAlchemy (snapshots, the command log,
    the lobby, the read models) are spans naming the server; the hot reads
    and the group commit speak psycopg directly, untraced (README)."""
    server = served(database_url=postgres_store_url)
    play_a_bots_game(server)
    assert server.stop() == 0
    spans = receiver[0].all()
    sql = [s for s in spans if "db.system" in attributes_of(s.attributes)]
    assert sql
    for span in sql:
        attributes = attributes_of(span.attributes)
        assert attributes["db.system"] == "postgresql"
        assert attributes["net.peer.name"] == "127.0.0.1"
        assert attributes["net.peer.port"] == 5432
        assert span.parent_span_id  # within a call or a background run
    loads = {s.span_id for s in spans if s.name == "load"}
    assert any(
        s.parent_span_id in loads
        and "snapshots" in attributes_of(s.attributes)["db.statement"]
        for s in sql
    )
