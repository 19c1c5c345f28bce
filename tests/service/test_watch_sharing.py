"""The watchers of a game share the work of each event: it is decoded,
redacted, made into its answer and encoded (Connect's JSON) once per
(event, viewer class), not once per watcher; and sharing never hands a
watcher what another viewer class sees. Through a real server, watchers on
Connect while the game is played."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from typing import Any

import pytest
from connectrpc.compression.gzip import GzipCompression
from google.protobuf import json_format
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient
from domain.chance import Rng
from service.callers import Caller
from service.gate import GATHER_BYTES, _Gathered
from service.server import Running
from tests.service.conftest import client_for


def _play(
    running: Running, game_id: str, tokens: list[str], seed: str, pause: float = 0
) -> None:
    """The game played to its end, a legal move at a time (``pause`` s
    after each)."""
    app = running.app
    chooser = Rng(seed, -1)
    for n in range(20_000):
        loaded = app.load(game_id)
        active = sorted(loaded.session.active_seats(loaded.state))
        if not active:
            return
        seat = chooser.choice(active)
        _, actions = app.legal_actions(app.caller(tokens[seat]), game_id, seat)
        app.submit(app.caller(tokens[seat]), game_id, seat, f"c{n}", actions[0][1])
        time.sleep(pause)
    raise AssertionError("game did not end")


def test_watchers_who_see_alike_share_one_encoding_of_each_event(
    server: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded: list[pb.WatchGameResponse] = []
    to_json = json_format.MessageToJson

    def counting(message: Any, **options: Any) -> str:
        if isinstance(message, pb.WatchGameResponse):
            encoded.append(message)
        return to_json(message, **options)

    monkeypatch.setattr(json_format, "MessageToJson", counting)
    compressed: list[bytes] = []
    gzip = GzipCompression.compress

    def compressing(self: GzipCompression, data: bytes) -> bytes:
        compressed.append(data)
        return gzip(self, data)

    monkeypatch.setattr(GzipCompression, "compress", compressing)
    app = server.app
    game_id, _, _ = app.create_game(
        Caller(admin=True), "happy_little_dinosaurs", 2, seed="sharing"
    )
    tokens = [app.join_game(app.caller(""), game_id, s, f"p{s}")[1] for s in range(2)]
    # Three spectators, two pages of seat 0's player, one of seat 1's.
    viewers = ["", "", "", tokens[0], tokens[0], tokens[1]]
    seen: list[list[pb.Event]] = [[] for _ in viewers]
    ready = threading.Barrier(len(viewers) + 1)

    def watch(n: int, token: str) -> None:
        with client_for(server, "connect", timeout=60) as client:
            watcher = client.with_token(token) if token else client
            events = watcher.watch_game(game_id)
            seen[n].append(next(events))  # GameCreated: connected
            ready.wait(30)
            seen[n].extend(events)

    threads = [
        threading.Thread(target=watch, args=(n, token))
        for n, token in enumerate(viewers)
    ]
    for thread in threads:
        thread.start()
    ready.wait(30)
    app.start_game(app.caller(tokens[0]), game_id)
    _play(server, game_id, tokens, "sharing")
    for thread in threads:
        thread.join(60)
    version = app.load(game_id).state.version
    assert [len(events) for events in seen] == [version] * len(viewers)
    # Alike viewers got the same events; the seats each see their own hand.
    assert seen[0] == seen[1] == seen[2]
    assert seen[3] == seen[4]
    assert seen[3] != seen[0] and seen[5] != seen[0] and seen[3] != seen[5]
    # Each event encoded once per viewer class (3), not per watcher (6).
    assert len(encoded) == 3 * version, (len(encoded), version)
    # ... and compressed once (the client asks for gzip): the watchers'
    # requests and answers are all there is to compress.
    assert 3 * version <= len(compressed) <= 3 * version + len(viewers)
    # ... and what was shared is what each class sees, checked against a
    # watcher of its own over gRPC, after the game.
    for n in (0, 3, 5):
        with StrataClient(f"127.0.0.1:{server.port}", timeout=30) as grpc_client:
            own = grpc_client.with_token(viewers[n]) if viewers[n] else grpc_client
            assert list(own.watch_game(game_id, follow=False)) == seen[n]


def test_a_watchers_deadline_passing_mid_game_leaves_its_sharers_whole(
    server: Running,
) -> None:
    """Four spectators over Connect share each event's answer and encoding;
    two of them set a deadline that passes while the game is being played.
    Theirs end with DEADLINE_EXCEEDED and let go of their slots; the other
    two get every event, the same as a spectator over gRPC."""
    import grpc

    app = server.app
    game_id, _, _ = app.create_game(
        Caller(admin=True), "happy_little_dinosaurs", 2, seed="deadline-share"
    )
    tokens = [app.join_game(app.caller(""), game_id, s, f"p{s}")[1] for s in range(2)]
    outcome: dict[str, Any] = {}
    ready = threading.Barrier(5)

    def watch(name: str, deadline: float | None) -> None:
        with client_for(server, "connect", timeout=60) as client:
            stream = client.stub.WatchGame(
                pb.WatchGameRequest(game_id=game_id), timeout=deadline
            )
            got = [next(stream).event]  # GameCreated: connected
            ready.wait(30)
            try:
                got.extend(response.event for response in stream)
                outcome[name] = got
            except grpc.RpcError as error:
                outcome[name] = (error.code(), len(got))

    names = {"short-0": 0.6, "short-1": 0.6, "long-0": None, "long-1": None}
    threads = [threading.Thread(target=watch, args=item) for item in names.items()]
    for thread in threads:
        thread.start()
    ready.wait(30)
    app.start_game(app.caller(tokens[0]), game_id)
    began = time.monotonic()
    _play(server, game_id, tokens, "deadline-share", pause=0.03)  # mid-game
    assert time.monotonic() - began > 1.0  # the game outlived the deadlines
    for thread in threads:
        thread.join(60)
    total = app.load(game_id).state.version
    for name in ("short-0", "short-1"):
        assert isinstance(outcome[name], tuple), f"{name} ended without a status"
        code, received = outcome[name]
        assert code == grpc.StatusCode.DEADLINE_EXCEEDED, (name, code)
        assert received < total, (name, received, total)  # ended mid-game
    with client_for(server, "grpc") as client:
        expected = list(client.watch_game(game_id, follow=False))
    for name in ("long-0", "long-1"):
        assert outcome[name] == expected, name
    assert server.limits is not None
    deadline = time.monotonic() + 5
    while server.limits.streams and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not server.limits.streams


def _stream_open(server: Running, protocol: str, game_id: str) -> Any:
    """A raw WatchGame over HTTP/1.1 (``connect``: Connect's JSON;
    ``grpc-web``: gRPC-Web's protobuf): the socket's file, past the
    response's headers."""
    if protocol == "connect":
        content_type = "application/connect+json"
        message = json.dumps({"gameId": game_id, "fromVersion": 1}).encode()
    else:
        content_type = "application/grpc-web+proto"
        request = pb.WatchGameRequest(game_id=game_id, from_version=1)
        message = request.SerializeToString()
    envelope = b"\x00" + len(message).to_bytes(4, "big") + message
    sock = socket.create_connection(("127.0.0.1", server.http_port), timeout=30)
    sock.sendall(
        b"POST /strata.v1.GameService/WatchGame HTTP/1.1\r\nHost: x\r\n"
        + f"Content-Type: {content_type}\r\n".encode()
        + f"Content-Length: {len(envelope)}\r\n\r\n".encode()
        + envelope
    )
    stream = sock.makefile("rb")
    assert stream.readline().startswith(b"HTTP/1.1 200")
    headers = []
    while (line := stream.readline()) not in (b"\r\n", b""):
        headers.append(line.lower())
    assert b"transfer-encoding: chunked\r\n" in headers
    return sock, stream


def _next_chunk(stream: Any) -> list[bytes]:
    """The messages (envelopes' payloads) in the HTTP chunk that comes
    next: each chunk is one write of the server's."""
    size = int(stream.readline().split(b";")[0], 16)
    data = stream.read(size)
    assert stream.read(2) == b"\r\n"
    messages = []
    while data:
        length = int.from_bytes(data[1:5], "big")
        messages.append(data[5 : 5 + length])
        data = data[5 + length :]
    return messages


def _version(protocol: str, message: bytes) -> int:
    if protocol == "connect":
        return int(json.loads(message)["event"]["version"])
    return pb.WatchGameResponse.FromString(message).event.version


@pytest.mark.parametrize("protocol", ["connect", "grpc-web"])
def test_a_watcher_gets_the_events_of_one_command_in_one_write(
    server: Running, protocol: str
) -> None:
    """Over HTTP/1.1 each watcher has a connection of its own, and each
    write into it holds the event loop: the events one command appends
    reach a watcher in one HTTP chunk, in order, not a chunk each; and a
    watcher that catches up reads the game's past in few writes."""
    app = server.app
    game_id, _, _ = app.create_game(
        Caller(admin=True), "happy_little_dinosaurs", 2, seed="gathered"
    )
    tokens = [app.join_game(app.caller(""), game_id, s, f"p{s}")[1] for s in range(2)]
    app.start_game(app.caller(tokens[0]), game_id)
    before = app.load(game_id).state.version
    sock, stream = _stream_open(server, protocol, game_id)
    try:
        past: list[int] = []
        chunks = 0
        while len(past) < before:
            past.extend(_version(protocol, m) for m in _next_chunk(stream))
            chunks += 1
        assert past == list(range(1, before + 1))
        assert chunks < before, (chunks, before)
        chooser = Rng("gathered", -1)
        several = 0
        for n in range(200):
            loaded = app.load(game_id)
            active = sorted(loaded.session.active_seats(loaded.state))
            if not active or several >= 3:
                break
            seat = chooser.choice(active)
            caller = app.caller(tokens[seat])
            _, actions = app.legal_actions(caller, game_id, seat)
            made = app.submit(caller, game_id, seat, f"c{n}", actions[0][1])
            versions = [recorded.version for recorded, _ in made.events]
            got = [_version(protocol, m) for m in _next_chunk(stream)]
            assert got == versions, (n, got, versions)
            several += len(versions) > 1
        assert several >= 3  # commands of several events were among them
    finally:
        stream.close()
        sock.close()


def test_gathered_messages_go_out_on_flush_at_the_bound_and_with_the_end() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    def body(data: bytes, more: bool = True) -> dict[str, Any]:
        return {"type": "http.response.body", "body": data, "more_body": more}

    async def play() -> None:
        gathered = _Gathered(send)
        await gathered.flush()  # nothing held: nothing sent
        assert sent == []
        start = {"type": "http.response.start", "status": 200, "headers": []}
        await gathered.send(start)
        await gathered.send(body(b"a"))
        await gathered.send(body(b"b"))
        assert sent == [start]  # held
        await gathered.flush()
        assert sent[1:] == [body(b"ab")]
        big = b"x" * (GATHER_BYTES - 1)
        await gathered.send(body(big))
        assert len(sent) == 2
        await gathered.send(body(b"y"))  # the bound: out at once
        assert sent[2:] == [body(big + b"y")]
        await gathered.send(body(b"c"))
        await gathered.send(body(b"end", more=False))  # the end takes what is held
        assert sent[3:] == [body(b"cend", more=False)]

    asyncio.run(play())


def test_gathered_messages_go_out_before_anything_else_is_sent() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def play() -> None:
        gathered = _Gathered(send)
        await gathered.send(
            {"type": "http.response.body", "body": b"a", "more_body": True}
        )
        trailers = {
            "type": "http.response.trailers",
            "headers": [],
            "more_trailers": False,
        }
        await gathered.send(trailers)
        assert sent == [
            {"type": "http.response.body", "body": b"a", "more_body": True},
            trailers,
        ]

    asyncio.run(play())
