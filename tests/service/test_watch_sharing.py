"""The watchers of a game share the work of each event: it is decoded,
redacted, made into its answer and encoded (Connect's JSON) once per
(event, viewer class), not once per watcher; and sharing never hands a
watcher what another viewer class sees. Through a real server, watchers on
Connect while the game is played."""

from __future__ import annotations

import threading
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


def _play(running: Running, game_id: str, tokens: list[str], seed: str) -> None:
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
