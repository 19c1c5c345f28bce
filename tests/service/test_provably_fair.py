"""Provably fair games (README, "Provably fair"): every game commits to its
seed at creation, reveals it at the end, and a player verifies the game
offline from their own record, with no service and no token."""

from __future__ import annotations

import copy
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb

from clients import cli
from clients.client import StrataClient, StrataError
from domain import registry
from domain.fairness import commitment, encode_event, verify_record
from domain.rules import Viewer
from service.server import Running
from tests.service.conftest import ADMIN_TOKEN, TRANSPORTS, client_for

GAMES = registry.game_types()


def hot_seat(
    client: StrataClient, game_type: str, players: int = 2
) -> tuple[str, StrataClient]:
    """A started game whose every seat one token plays."""
    game_id = client.create_game(game_type, players).game_id
    token = ""
    for seat in range(players):
        token = client.with_token(token).join_game(game_id, f"p{seat}", seat).seat_token
    me = client.with_token(token)
    me.start_game(game_id)
    return game_id, me


def play_out(me: StrataClient, game_id: str, seed: int) -> None:
    rng = random.Random(seed)
    listed = me.list_legal_actions(game_id)
    for _ in range(5000):
        if not listed.actions:
            break
        action = rng.choice(list(listed.actions))
        answer = me.submit_command(
            game_id, action.seat, action.command, include_legal_actions=True
        )
        listed = pb.ListLegalActionsResponse(
            version=answer.version, actions=answer.legal_actions
        )
    assert me.get_game(game_id).status == pb.GAME_STATUS_FINISHED


def first_die_or_card(record: dict[str, Any]) -> tuple[int, list[Any]]:
    """The first game event (after the set-up) holding a number to change:
    its index and the path to that number."""
    for index, event in enumerate(record["events"]):
        if event["type"] in {"GameCreated", "PlayerJoined", "GameStarted"}:
            continue
        path = _first_int(event["data"])
        if path is not None:
            return index, path
    raise AssertionError("no event with a number in it")


def _first_int(value: Any, path: list[Any] | None = None) -> list[Any] | None:
    path = path or []
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return path
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        found = _first_int(item, [*path, key])
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("game_type", GAMES)
def test_a_finished_game_verifies_offline_from_a_players_record(
    client: StrataClient, game_type: str, tmp_path: Path
) -> None:
    game_id, me = hot_seat(client, game_type)
    created = next(me.watch_game(game_id, follow=False)).game_created
    # The commitment is public from the start; the seed and salt are not.
    assert len(created.commitment) == 64 and not created.seed and not created.salt
    play_out(me, game_id, seed=7)

    record = me.export_player_record(game_id)
    assert record["events"][-1]["type"] == "SeedRevealed"
    assert record["events"][-2]["type"] == "GameFinished"
    assert all("token_hash" not in c["command"] for c in record["commands"])
    check = verify_record(record)
    assert check.ok, check.message
    assert check.events_checked == len(record["events"])
    # The service's own verification re-decides the reveal too.
    verdict = client.with_token(ADMIN_TOKEN).verify_game(game_id)
    assert verdict.verdict == admin_pb.VERDICT_VERIFIED, verdict.message

    # One number (a die, a card, a position) changed: the first event that
    # differs is reported.
    tampered = copy.deepcopy(record)
    index, path = first_die_or_card(tampered)
    holder = tampered["events"][index]["data"]
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] += 1
    check = verify_record(tampered)
    assert not check.ok
    assert check.version == tampered["events"][index]["version"], check.message

    # Another seed: it does not match the commitment.
    wrong = copy.deepcopy(record)
    wrong["events"][-1]["data"]["seed"] += "0"
    check = verify_record(wrong)
    assert not check.ok and "commitment" in check.message and check.version == 1

    # An arranged game: a different seed with a commitment made to match it
    # cannot reproduce what the player saw.
    arranged = copy.deepcopy(record)
    reveal = arranged["events"][-1]["data"]
    reveal["seed"] = "arranged"
    arranged["events"][0]["data"]["commitment"] = commitment("arranged", reveal["salt"])
    check = verify_record(arranged)
    assert not check.ok and check.version > 1, check.message

    # The same from the command line, with no service and no token.
    path_ok = tmp_path / "record.json"
    path_ok.write_text(json.dumps(record))
    assert cli.main(["verify", "--offline", str(path_ok)]) == 0
    path_bad = tmp_path / "tampered.json"
    path_bad.write_text(json.dumps(tampered))
    assert cli.main(["verify", "--offline", str(path_bad)]) == 1


@pytest.mark.parametrize("over", TRANSPORTS)
def test_a_third_party_checks_the_commitment_in_a_few_lines(
    server: Running, over: str
) -> None:
    client = client_for(server, over)
    game_id, me = hot_seat(client, "dinosaurs_extinct")
    play_out(me, game_id, seed=3)
    record = me.export_player_record(game_id)
    # README, "Provably fair": the exact hashing, without Strata's code.
    promised = record["events"][0]["data"]["commitment"]
    revealed = record["events"][-1]["data"]
    message = (
        b"strata-seed-commitment-v1\0"
        + revealed["salt"].encode()
        + b"\0"
        + revealed["seed"].encode()
    )
    assert hashlib.sha256(message).hexdigest() == promised


def test_a_running_game_reveals_nothing_of_its_seed(client: StrataClient) -> None:
    game_id, me = hot_seat(client, "happy_little_dinosaurs", players=3)
    spectator = client.with_token("")
    for viewer in (me, spectator):
        for event in viewer.watch_game(game_id, follow=False):
            assert event.WhichOneof("body") != "seed_revealed"
            if event.HasField("game_created"):
                assert not event.game_created.seed and not event.game_created.salt
                assert event.game_created.commitment
        for step in viewer.replay_game(game_id):
            assert not step.event.game_created.seed
            assert not step.event.game_created.salt
        with pytest.raises(StrataError) as refused:
            viewer.export_player_record(game_id)
        assert refused.value.reason == "GAME_NOT_FINISHED"
    # The admin sees the seed and the salt, which match the commitment.
    admin = client.with_token(ADMIN_TOKEN)
    created = next(admin.watch_game(game_id, follow=False)).game_created
    assert created.seed and created.salt
    assert commitment(created.seed, created.salt) == created.commitment


def test_the_admin_may_keep_a_seed_secret_after_the_end(client: StrataClient) -> None:
    with pytest.raises(StrataError) as refused:
        client.create_game("dinosaurs_extinct", 2, keep_seed_secret=True)
    assert refused.value.reason == "KEEP_SEED_SECRET_NEEDS_ADMIN"
    admin = client.with_token(ADMIN_TOKEN)
    game_id = admin.create_game("dinosaurs_extinct", 2, keep_seed_secret=True).game_id
    token = ""
    for seat in range(2):
        token = client.with_token(token).join_game(game_id, f"p{seat}", seat).seat_token
    me = client.with_token(token)
    me.start_game(game_id)
    play_out(me, game_id, seed=5)
    types = [e.type for e in me.watch_game(game_id, follow=False)]
    assert types[-1] == "GameFinished" and "SeedRevealed" not in types
    with pytest.raises(StrataError) as refused:
        me.export_player_record(game_id)
    assert refused.value.reason == "SEED_NOT_REVEALED"
    assert admin.verify_game(game_id).verdict == admin_pb.VERDICT_VERIFIED


def test_each_players_record_holds_only_what_that_seat_saw(
    server: Running, client: StrataClient
) -> None:
    """Over every read path the record is one more: each seat's record is
    the game's events redacted for that seat (a hand of cards stays its
    holder's), and each verifies."""
    game_type = "happy_little_dinosaurs"
    game_id = client.create_game(game_type, 2).game_id
    seats = {
        seat: client.with_token(client.join_game(game_id, f"p{seat}", seat).seat_token)
        for seat in range(2)
    }
    seats[0].start_game(game_id)
    rng = random.Random(11)
    for _ in range(5000):
        game = client.get_game(game_id)
        if game.status == pb.GAME_STATUS_FINISHED:
            break
        seat = rng.choice(list(game.active_seats))
        actions = list(seats[seat].list_legal_actions(game_id, seat).actions)
        action = rng.choice(actions)
        seats[seat].submit_command(game_id, seat, action.command)
    session = server.app.load(game_id).session
    recorded = server.app.store.read_stream(game_id)
    events = [session.decode_event(r.type, r.data) for r in recorded]
    records = {}
    for seat, seat_client in seats.items():
        record = seat_client.export_player_record(game_id)
        viewer = Viewer.player(seat)
        assert record["seats"] == [seat] and record["role"] == "player"
        assert record["events"] == [
            {
                "version": r.version,
                "at": r.recorded_at.isoformat(),
                **encode_event(session.redact(e, viewer)),
            }
            for r, e in zip(recorded, events, strict=True)
        ]
        assert verify_record(record).ok
        records[seat] = record
    assert records[0]["events"] != records[1]["events"]


def test_a_live_watch_ends_with_the_reveal(client: StrataClient) -> None:
    """Following a game live delivers its whole ending, SeedRevealed last,
    and then ends; following a finished game from any version ends too."""
    game_id, me = hot_seat(client, "dinosaurs_extinct")
    watched: list[pb.Event] = []
    stream = me.watch_game(game_id, follow=True)
    watched.append(next(stream))  # GameCreated: the stream is open
    play_out(me, game_id, seed=9)
    watched.extend(stream)
    assert [e.type for e in watched[-2:]] == ["GameFinished", "SeedRevealed"]
    assert [e.version for e in watched] == list(range(1, len(watched) + 1))
    last = watched[-1].version
    again = list(me.watch_game(game_id, from_version=last, follow=True))
    assert [e.type for e in again] == ["SeedRevealed"]


@pytest.mark.parametrize("game_type", ["dinosaurs_extinct", "escaping_extinction"])
def test_a_game_with_a_leaver_and_a_rematch_verifies_offline(
    client: StrataClient, game_type: str
) -> None:
    """Live play's commands (a seat leaving the started game, the rematch
    linked after the end) are in a record and re-executed like the others."""
    game_id = client.create_game(game_type, 3).game_id
    seats = {
        seat: client.with_token(client.join_game(game_id, f"p{seat}", seat).seat_token)
        for seat in range(3)
    }
    seats[0].start_game(game_id)
    seats[2].leave_game(game_id, 2)
    rng = random.Random(4)
    for _ in range(5000):
        game = client.get_game(game_id)
        if game.status == pb.GAME_STATUS_FINISHED:
            break
        seat = rng.choice(list(game.active_seats))
        action = rng.choice(list(seats[seat].list_legal_actions(game_id, seat).actions))
        seats[seat].submit_command(game_id, seat, action.command)
    seats[0].rematch(game_id)
    record = seats[0].export_player_record(game_id)
    types = [e["type"] for e in record["events"]]
    assert "SeatLeft" in types and types[-1] == "RematchCreated"
    assert {c["type"] for c in record["commands"]} >= {"LeaveGame", "Rematch"}
    check = verify_record(record)
    assert check.ok, check.message


def test_asking_for_a_record_again_and_again_reads_the_game_once_per_viewer(
    sqlite_url: str,
) -> None:
    """An attacker with no token asks for a finished game's record in a
    loop: the record is built once per kind of viewer (a spectator, a
    seat), then served from memory; the store is not read for it again."""
    from eventstore.factory import open_store
    from service.server import create_server
    from tests.service.conftest import NO_RATE_LIMITS

    store = open_store(sqlite_url)
    running = create_server(store, admin_token=ADMIN_TOKEN, limits=NO_RATE_LIMITS)
    whole: list[str] = []
    read_stream, read_commands = store.read_stream, store.read_commands

    def counted_stream(game_id: str, from_version: int = 1, to: Any = None) -> Any:
        if from_version == 1 and (to is None or to > 1):
            whole.append("events")
        return read_stream(game_id, from_version, to)

    def counted_commands(game_id: str, *args: Any, **kwargs: Any) -> Any:
        whole.append("commands")
        return read_commands(game_id, *args, **kwargs)

    try:
        with StrataClient(f"127.0.0.1:{running.port}") as client:
            game_id, me = hot_seat(client, "dinosaurs_extinct")
            play_out(me, game_id, seed=3)
            store.read_stream = counted_stream  # type: ignore[method-assign,assignment]
            store.read_commands = counted_commands  # type: ignore[method-assign]
            records = {client.export_player_record(game_id)["role"] for _ in range(50)}
            records |= {me.export_player_record(game_id)["role"] for _ in range(50)}
        assert records == {"spectator", "player"}
        assert whole.count("events") <= 2 and whole.count("commands") <= 2, whole
    finally:
        running.stop(grace=0.5)
        store.close()


def test_a_record_comes_in_pages_that_join_into_the_whole_record(
    client: StrataClient,
) -> None:
    """However long the game, its record passes no message limit: pages of
    a few events (and the commands whose first event is among them) join
    into the whole record, which verifies; a bad page token is refused."""
    game_id, me = hot_seat(client, "happy_little_dinosaurs", 3)
    play_out(me, game_id, seed=11)
    ask = me.stub.ExportPlayerRecord
    whole = json.loads(
        me._call(ask, pb.ExportPlayerRecordRequest(game_id=game_id)).record
    )
    paged = me.export_player_record(game_id, page_size=7)
    assert paged == whole
    assert len(whole["events"]) > 14  # three pages at least
    assert verify_record(paged).ok
    with pytest.raises(StrataError) as refused:
        me._call(
            ask,
            pb.ExportPlayerRecordRequest(game_id=game_id, page_size=5, page_token="x"),
        )
    assert refused.value.reason == "PAGE_TOKEN_INVALID"
