"""The watchers of a game share the work of each event: it is decoded,
redacted, made into its answer and encoded (Connect's JSON) once per
(event, viewer class), not once per watcher; and sharing never hands a
watcher what another viewer class sees. Through a real server, watchers on
Connect while the game is played."""

from __future__ import annotations

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
