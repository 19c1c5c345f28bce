"""Replays and audit: verified replay, export and import across backends,
schema evolution on stored old events, the audit log, the integration feed."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import grpc
import pytest
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb

from clients import cli
from clients.client import StrataClient, StrataError
from domain import registry
from domain.chance import Rng
from domain.errors import DomainError
from eventstore import migrate
from eventstore.factory import open_store
from eventstore.memory import InMemoryEventStore
from eventstore.sql import SQLAlchemyEventStore
from service.application import GameApp
from service.callers import Caller
from service.server import create_server
from service.verification import Verdict, verify_game
from tests.service.conftest import ADMIN_TOKEN
from tests.service.test_end_to_end import play_to_end, seated_game

DATA = Path(__file__).resolve().parents[1] / "data"


def random_game(app: GameApp, game_type: str, players: int, seed: str) -> str:
    """A whole game played through the use cases with random legal actions,
    with some refused commands sprinkled in."""
    game_id, _, _ = app.create_game(Caller(admin=True), game_type, players, seed=seed)
    tokens = [
        app.join_game(app.caller(""), game_id, s, f"p{s}")[1] for s in range(players)
    ]
    app.start_game(app.caller(tokens[0]), game_id)
    chooser = Rng(seed, -1)
    for n in range(20_000):
        loaded = app.load(game_id)
        active = sorted(loaded.session.active_seats(loaded.state))
        if not active:
            return game_id
        seat = chooser.choice(active)
        _, actions = app.legal_actions(app.caller(tokens[seat]), game_id, seat)
        command = chooser.choice(actions)[1]
        waiting = [s for s in range(players) if s not in active]
        if waiting and n % 7 == 0:  # a move out of turn: refused and logged
            with contextlib.suppress(DomainError):
                app.submit(
                    app.caller(tokens[waiting[0]]),
                    game_id,
                    waiting[0],
                    f"x{n}",
                    command,
                )
        app.submit(app.caller(tokens[seat]), game_id, seat, f"c{n}", command)
    raise AssertionError("game did not end")


@pytest.mark.parametrize("game_type", registry.game_types())
def test_every_randomly_played_game_verifies(game_type):
    rules = registry.rules_for(game_type)
    app = GameApp(InMemoryEventStore())
    for players in range(rules.min_players, rules.max_players + 1):
        for seed in range(4):
            game_id = random_game(app, game_type, players, f"verify-{players}-{seed}")
            result = verify_game(app.store, game_id)
            assert result.verdict is Verdict.VERIFIED, result
            assert result.events_checked == app.store.stream_version(game_id)


def test_a_tampered_event_is_found_at_its_version():
    store = InMemoryEventStore()
    app = GameApp(store)
    game_id = random_game(app, "dinosaurs_extinct", 2, "tamper")
    stream = store._streams[game_id]  # its events' data is JSON text
    target = next(i for i, e in enumerate(stream) if e.type == "DieRolled" and i > 10)
    data = json.loads(stream[target].data)
    data["value"] = 7 - data["value"]
    stream[target] = stream[target].__class__(
        **{**stream[target].__dict__, "data": json.dumps(data)}
    )
    result = verify_game(app.store, game_id)
    assert result.verdict is Verdict.MISMATCH
    assert result.mismatch_version == target + 1


def test_a_game_played_under_other_rules_is_said_so():
    store = InMemoryEventStore()
    app = GameApp(store)
    game_id = random_game(app, "dinosaurs_extinct", 2, "old-rules")
    first = store._streams[game_id][0]  # its data is JSON text
    data = json.dumps({**json.loads(first.data), "rules_version": "0-old"})
    store._streams[game_id][0] = first.__class__(**{**first.__dict__, "data": data})
    result = verify_game(app.store, game_id)
    assert result.verdict is Verdict.OTHER_RULES
    assert "0-old" in result.message


def test_old_schema_events_are_upcast_when_read():
    document = (DATA / "dinosaurs_extinct_schema1.strata.json").read_bytes()
    raw = json.loads(document)
    joined = [e for e in raw["events"] if e["type"] == "PlayerJoined"]
    assert joined and all(
        e["schema_version"] == 1 and "name" in e["data"] for e in joined
    )
    store = InMemoryEventStore()
    app = GameApp(store)
    from service.portable import parse_export

    game_id, events, commands = parse_export(document)
    store.import_game(game_id, events, commands)
    state = app.load(game_id).state
    assert [s.name for s in state.seats if s] == [e["data"]["name"] for e in joined]
    assert verify_game(store, game_id).verdict is Verdict.VERIFIED


def test_admin_rpcs_refuse_everyone_but_the_admin(client, admin):
    game_id, seats = seated_game(client)
    for caller, code in (
        (client, grpc.StatusCode.UNAUTHENTICATED),
        (seats[0], grpc.StatusCode.PERMISSION_DENIED),
    ):
        for call in (caller.verify_game, caller.export_game, caller.get_audit_log):
            with pytest.raises(StrataError) as refused:
                call(game_id)
            assert refused.value.code == code
        with pytest.raises(StrataError) as refused:
            caller.import_game(admin.export_game(game_id).document, "copy")
        assert refused.value.code == code


def test_the_audit_log_shows_every_command_with_who_and_when(client, admin):
    game_id, seats = seated_game(client)
    seats[0].start_game(game_id)
    active = client.get_game(game_id).active_seats[0]
    action = seats[active].list_legal_actions(game_id, active).actions[0]
    seats[active].submit_command(
        game_id, active, action.command, command_id="first-move"
    )
    waiting = 1 - client.get_game(game_id).active_seats[0]
    with pytest.raises(StrataError):
        seats[waiting].submit_command(
            game_id, waiting, action.command, command_id="too-early"
        )
    log = admin.get_audit_log(game_id)
    by_id = {c.command_id: c for c in log.commands}
    assert by_id["first-move"].accepted and by_id["first-move"].seat == active
    assert by_id["first-move"].command == action.command
    assert by_id["first-move"].actor and by_id["first-move"].recorded_at.seconds > 0
    assert not by_id["too-early"].accepted and by_id["too-early"].error_reason
    assert [e.version for e in log.events] == list(range(1, len(log.events) + 1))
    assert log.events[0].game_created.seed == "e2e"  # unredacted


def test_replay_walks_a_finished_game_with_the_view_after_each_event(client):
    game_id, seats = seated_game(client, seed="replay")
    seats[0].start_game(game_id)
    final = play_to_end(client, game_id, seats)
    steps = list(client.replay_game(game_id))
    assert [s.event.version for s in steps] == list(range(1, final.version + 1))
    for step in steps[:: max(1, len(steps) // 10)]:
        assert step.game == client.get_game(game_id, at_version=step.event.version)
    assert steps[-1].game.status == pb.GAME_STATUS_FINISHED
    middle = list(client.replay_game(game_id, from_version=5, to_version=7))
    assert [s.event.version for s in middle] == [5, 6, 7]


def test_export_then_import_across_backends_verifies_and_replays_the_same(
    client, admin, postgres_server, tmp_path
):
    game_id, seats = seated_game(client, seed="portable")
    seats[0].start_game(game_id)
    play_to_end(client, game_id, seats)
    exported = admin.export_game(game_id)
    url = postgres_server.create_schema()
    migrate.upgrade(url)
    store = open_store(url)
    other = create_server(store, admin_token=ADMIN_TOKEN, port=0)
    try:
        with StrataClient(f"127.0.0.1:{other.port}", token=ADMIN_TOKEN) as target:
            imported = target.import_game(exported.document)
            assert imported.game_id == game_id
            assert imported.verification.verdict == admin_pb.VERDICT_VERIFIED
            assert target.verify_game(game_id).verdict == admin_pb.VERDICT_VERIFIED

            def bodies(c: StrataClient) -> list[pb.Event]:
                events = list(c.watch_game(game_id, follow=False))
                for e in events:
                    e.ClearField("position")
                return events

            assert bodies(target) == bodies(admin)
            assert [s.game for s in target.replay_game(game_id)] == [
                s.game for s in admin.replay_game(game_id)
            ]
            back = target.export_game(game_id).document
            with pytest.raises(StrataError) as exists:
                target.import_game(back)
            assert exists.value.code == grpc.StatusCode.INVALID_ARGUMENT
            copy = admin.import_game(back, game_id="copy-from-postgres")
            assert copy.verification.verdict == admin_pb.VERDICT_VERIFIED
    finally:
        other.stop(0.5)
        store.close()


def test_a_malformed_export_is_an_invalid_argument(admin):
    with pytest.raises(StrataError) as refused:
        admin.import_game(b'{"format": "something else"}')
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.reason == "EXPORT_MALFORMED"


def test_verify_command_checks_every_game_and_fails_on_a_mismatch(
    client, target, server, capsys, monkeypatch
):
    monkeypatch.setenv("STRATA_ADMIN_TOKEN", ADMIN_TOKEN)
    ids = []
    for seed in ("a", "b"):
        game_id, seats = seated_game(client, seed=seed)
        seats[0].start_game(game_id)
        play_to_end(client, game_id, seats)
        ids.append(game_id)
    assert cli.main(["verify", "--all", "--target", target]) == 0
    assert "verified 2 game(s): 2 verified" in capsys.readouterr().out
    from sqlalchemy import text

    store = server.app.store
    assert isinstance(store, SQLAlchemyEventStore)
    with store.write_transaction() as connection:
        connection.execute(
            text("UPDATE events SET data = :d WHERE game_id = :g AND version = 3"),
            {
                "d": json.dumps(
                    {"seat": 1, "player_name": "Mallory", "token_hash": "x", "bot": ""}
                ),
                "g": ids[1],
            },
        )
    assert cli.main(["verify", ids[1], "--target", target]) == 1
    assert "mismatch" in capsys.readouterr().out


@pytest.mark.parametrize("game_type", ["escaping_extinction", "cubosaurs"])
def test_stepping_through_a_game_reads_each_event_about_once(game_type):
    # Given a whole game, and a store whose reads of a game's events are
    # counted (a read nearby is one of the stream here)
    store = InMemoryEventStore()
    app = GameApp(store)
    game_id = random_game(app, game_type, 2, "steps")
    events = store.read_stream(game_id)
    last = len(events)
    session = app.load(game_id).session
    read: list[int] = []
    original = store.read_stream

    def counted(*args, **kwargs):
        got = original(*args, **kwargs)
        read.append(len(got))
        return got

    store.read_stream = counted  # type: ignore[method-assign]

    # When a replay steps through it, version by version, then back a few
    steps = [*range(1, last), last - 3, last - 5]
    states = [app.games.state_at(game_id, v).state for v in steps]

    # Then each step is the game as a fold from its start gives it, and the
    # events read are about one a step (not the game's prefix each time)
    assert sum(read) <= 2 * last, (sum(read), last)
    for v, state in zip(steps, states, strict=True):
        decoded = (
            session.decode_event(e.type, e.data, e.schema_version) for e in events[:v]
        )
        assert state == session.fold(decoded), v
