"""Bot seats: the service plays them itself, through a real gRPC server."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from strata.v1 import admin_service_pb2 as admin_pb
from strata.v1 import game_service_pb2 as pb

from clients import simulate
from clients.client import StrataClient, StrataError
from domain.session import Status
from eventstore.base import EventStore, MatchingEvents, RecordedEvent, StoreUnavailable
from service.application import GameApp
from service.bots import BotRunner
from service.callers import Caller
from service.server import Running
from tests.service.conftest import ADMIN_TOKEN
from tests.service.test_replays import random_game

FINISHED = pb.GAME_STATUS_FINISHED


def wait_until_finished(client: StrataClient, game_id: str, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        game = client.get_game(game_id)
        if game.status == FINISHED:
            return game
        time.sleep(0.05)
    raise AssertionError(f"game {game_id} did not finish: version {game.version}")


@pytest.mark.parametrize("bots", [1, 3])
def test_a_person_plays_dinosaurs_extinct_against_bots(client, admin, bots: int):
    players = bots + 1
    kinds = {seat: ("heuristic", "random")[seat % 2] for seat in range(1, players)}
    game_id = (
        client.with_token(ADMIN_TOKEN)
        .create_game("dinosaurs_extinct", players, seed=f"person-{bots}", bots=kinds)
        .game_id
    )
    game = client.get_game(game_id)
    assert [s.bot for s in game.seats] == ["", *kinds.values()]
    assert [s.taken for s in game.seats] == [False] + [True] * bots
    me = client.with_token(client.join_game(game_id, "Ada", seat=0).seat_token)
    me.start_game(game_id)
    deadline = time.monotonic() + 60
    while True:
        assert time.monotonic() < deadline, "the game did not end"
        game = me.get_game(game_id)
        if game.status == FINISHED:
            break
        legal = me.list_legal_actions(game_id)
        assert {a.seat for a in legal.actions} <= {0}
        if not legal.actions:
            time.sleep(0.02)  # a bot's turn: the service plays it
            continue
        try:
            me.submit_command(
                game_id, 0, legal.actions[-1].command, expected_version=legal.version
            )
        except StrataError as error:
            assert error.code == grpc.StatusCode.ABORTED  # a bot moved meanwhile
    assert len(game.outcome.winners) == 1
    log = admin.get_audit_log(game_id)
    actors = {c.actor for c in log.commands if c.seat > 0 and c.accepted}
    assert actors <= {"bot:heuristic", "bot:random"}
    assert actors
    assert admin.verify_game(game_id).verdict == admin_pb.VERDICT_VERIFIED


def test_a_game_of_bots_only_plays_to_its_end_by_itself(client, admin):
    game_id = (
        client.with_token(ADMIN_TOKEN)
        .create_game(
            "happy_little_dinosaurs",
            3,
            seed="bots-only",
            bots={0: "heuristic", 1: "random", 2: "heuristic"},
        )
        .game_id
    )
    game = wait_until_finished(client, game_id)
    assert game.outcome.result in ("escaped", "last_standing")
    assert admin.verify_game(game_id).verdict == admin_pb.VERDICT_VERIFIED


def test_nobody_else_can_take_or_play_a_bot_seat(client):
    game_id = (
        client.with_token(ADMIN_TOKEN)
        .create_game("dinosaurs_extinct", 2, seed="mine", bots={1: "random"})
        .game_id
    )
    with pytest.raises(StrataError) as taken:
        client.join_game(game_id, "Eve", seat=1)
    assert taken.value.reason == "SEAT_TAKEN"
    me = client.with_token(client.join_game(game_id, "Ada").seat_token)
    me.start_game(game_id)
    legal = me.list_legal_actions(game_id)
    assert {a.seat for a in legal.actions} <= {0}
    with pytest.raises(StrataError) as theirs:
        me.submit_command(game_id, 1, pb.GameCommand())
    assert theirs.value.code in (
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.INVALID_ARGUMENT,
    )


@pytest.mark.parametrize(
    ("bots", "reason"),
    [
        ({0: "oracle"}, "UNKNOWN_BOT"),
        ({2: "random"}, "BOT_SEAT_INVALID"),
        ({-1: "random"}, "BOT_SEAT_INVALID"),
    ],
)
def test_bad_bot_seats_are_invalid_arguments(client, bots, reason):
    with pytest.raises(StrataError) as error:
        client.create_game("dinosaurs_extinct", 2, bots=bots)
    assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.value.reason == reason


def test_simulated_games_end_as_the_same_games_played_through_the_service(client):
    """The service's bot seats and `strata simulate` play the same game from
    the same seed: same winners, same result, same number of events."""
    for game_type, players, games in (
        ("happy_little_dinosaurs", 3, 2),
        ("dinosaurs_extinct", 4, 3),
    ):
        plan = simulate.Plan(
            game_type=game_type,
            players=players,
            games=games,
            seed="twin",
            bots=("heuristic", "random"),
            rotate=True,
        )
        for record in simulate.run(plan, processes=1):
            game_id = (
                client.with_token(ADMIN_TOKEN)
                .create_game(
                    game_type,
                    players,
                    seed=record.seed,
                    bots=dict(enumerate(record.bots)),
                )
                .game_id
            )
            game = wait_until_finished(client, game_id)
            assert tuple(game.outcome.winners) == record.winners
            assert game.outcome.result == record.result
            # The service's game ends with one more event: its seed revealed.
            assert game.version == record.events + 1


def test_two_replicas_playing_the_same_bots_never_both_move(server: Running, admin):
    """A second runner with its own application (a second replica) follows
    the same store: every version is caused by exactly one logged command."""
    replica = BotRunner(GameApp(server.app.store))
    stop = threading.Event()
    thread = threading.Thread(target=replica.run_forever, args=(stop, 0.05))
    thread.start()
    try:
        ids = [
            admin.create_game(
                "happy_little_dinosaurs",
                2,
                seed=f"replicas-{i}",
                bots={0: "random", 1: "heuristic"},
            ).game_id
            for i in range(2)
        ]
        for game_id in ids:
            wait_until_finished(admin, game_id)
            assert admin.verify_game(game_id).verdict == admin_pb.VERDICT_VERIFIED
            log = admin.get_audit_log(game_id)
            accepted = [c for c in log.commands if c.accepted]
            assert len({c.first_version for c in accepted}) == len(accepted)
    finally:
        stop.set()
        thread.join()


def test_strata_create_seats_bots(target: str, client, capsys):
    from clients import cli

    argv = ["create", "--target", target, "--game", "dinosaurs_extinct"]
    argv += ["--players", "2", "--bot", "0=heuristic", "--bot", "1=random"]
    assert cli.main(argv) == 0
    game_id = capsys.readouterr().out.strip()
    game = wait_until_finished(client, game_id)
    assert [s.bot for s in game.seats] == ["heuristic", "random"]
    with pytest.raises(SystemExit):
        cli.bot_seats(["one=heuristic"])


# -- the runner on its own, on each backend -----------------------------------


def _run_until_idle(runner: BotRunner, rounds: int = 5000) -> None:
    """Run ``runner`` until it has nothing to do at the log's end. A pass
    with nothing to do short of the end is a read held back: on PostgreSQL
    a transaction running anywhere in the cluster (another test's) holds
    the log back, and the runner reads again later, as it does here."""
    for _ in range(rounds):
        if runner.run_once() == 0:
            if runner.position >= runner.app.store.last_position():
                return
            time.sleep(0.01)
    raise AssertionError("the bot runner never ran out of work")


def _bots_only(app: GameApp, seed: str) -> str:
    game_id, _, _ = app.create_game(
        Caller(admin=True),
        "happy_little_dinosaurs",
        3,
        seed=seed,
        bots=[(0, "heuristic"), (1, "random"), (2, "heuristic")],
    )
    return game_id


def _status(app: GameApp, game_id: str) -> Status:
    return app.load(game_id).state.status


def test_the_runner_reads_only_seats_finishes_and_its_own_games(store: EventStore):
    """Games without bots pass by unread: the runner gets their seats taken
    and their ends, nothing else; it plays every bot game to its end, in
    short reads that each end at a full stretch of the log."""
    app = GameApp(store)
    random_game(app, "dinosaurs_extinct", 2, "people-before")
    bots = [_bots_only(app, f"read-{n}") for n in range(2)]
    random_game(app, "dinosaurs_extinct", 3, "people-between")
    open_game, _, _ = app.create_game(
        Caller(admin=True), "dinosaurs_extinct", 2, seed="o"
    )
    app.join_game(app.caller(""), open_game, 0, "Eve")
    received: list[RecordedEvent] = []
    original = store.read_all_matching

    def spied(*args: Any, **kwargs: Any) -> MatchingEvents:
        read = original(*args, **kwargs)
        received.extend(read.events)
        return read

    store.read_all_matching = spied  # type: ignore[method-assign]
    runner = BotRunner(GameApp(store), batch=7)

    _run_until_idle(runner)

    assert all(_status(app, g) is Status.FINISHED for g in bots)
    assert runner.position == store.last_position()
    assert runner.moves == sum(
        1
        for g in bots
        for c in store.read_commands(g)
        if c.command_id.startswith("bot")
    )
    # Of the games without bots: their seats taken and their ends, each once.
    assert [e for e in received if e.game_id not in bots] == [
        e
        for e in store.read_all(0, store.last_position())
        if e.game_id not in bots and e.type in ("PlayerJoined", "GameFinished")
    ]
    assert open_game in {e.game_id for e in received}


def test_a_restarted_runner_goes_on_with_unfinished_games_only(store: EventStore):
    """A runner started from position 0 (after a restart) plays the bot
    seats of games that are not over, and leaves finished games alone."""
    app = GameApp(store)
    finished = _bots_only(app, "done-before")
    _run_until_idle(BotRunner(GameApp(store)))
    assert _status(app, finished) is Status.FINISHED
    person_id, _, _ = app.create_game(
        Caller(admin=True), "dinosaurs_extinct", 2, seed="half", bots=[(1, "random")]
    )
    _, token, _ = app.join_game(app.caller(""), person_id, 0, "Ada")
    app.start_game(app.caller(token), person_id)
    waiting = _bots_only(app, "waiting")  # nobody ran it yet
    loads: list[str] = []
    restarted = BotRunner(GameApp(store))
    load = restarted.app.load

    def counted(game_id: str, refresh: bool = True, nearby: bool = False) -> Any:
        loads.append(game_id)
        return load(game_id, refresh, nearby)

    restarted.app.load = counted

    for turn in range(200):  # the person plays seat 0 when it may; the bot seat 1
        _run_until_idle(restarted)
        loaded = app.load(person_id)
        if loaded.state.status is Status.FINISHED:
            break
        if 0 in loaded.session.active_seats(loaded.state):
            _, actions = app.legal_actions(app.caller(token), person_id, 0)
            app.submit(app.caller(token), person_id, 0, f"ada-{turn}", actions[0][1])

    assert _status(app, person_id) is Status.FINISHED
    assert _status(app, waiting) is Status.FINISHED
    assert finished not in loads
    bot_moves = [
        c for c in store.read_commands(person_id) if c.command_id.startswith("bot")
    ]
    assert bot_moves and {c.payload["seat"] for c in bot_moves} == {1}


def test_a_move_the_store_failed_is_made_on_the_next_pass(store: EventStore):
    app = GameApp(store)
    game_id = _bots_only(app, "flaky")
    runner = BotRunner(GameApp(store))
    submit = runner.app.submit
    failures = [StoreUnavailable("database restarting")]

    def flaky(*args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop()
        return submit(*args, **kwargs)

    runner.app.submit = flaky
    version = store.stream_version(game_id)

    with pytest.raises(StoreUnavailable):
        runner.run_once()
    assert store.stream_version(game_id) == version
    assert runner.position == store.last_position()

    assert runner.run_once() > 0  # nothing new in the log: the game is retried
    assert store.stream_version(game_id) > version
    _run_until_idle(runner)
    assert _status(app, game_id) is Status.FINISHED


@contextlib.contextmanager
def _running(runner: BotRunner) -> Iterator[None]:
    stop = threading.Event()
    thread = threading.Thread(target=runner.run_forever, args=(stop, 0.05))
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def test_a_runner_without_games_reads_a_busy_log_seldom(store: EventStore):
    """With no bot game to play the runner lets appends gather (``linger``)
    before it reads; once it plays a game it follows that game's moves at
    once, and plays it to its end."""
    app = GameApp(store)
    runner = BotRunner(GameApp(store), linger=0.25)
    reads: list[int] = []
    original = store.read_all_matching

    def counted(*args: Any, **kwargs: Any) -> MatchingEvents:
        reads.append(args[0])
        return original(*args, **kwargs)

    store.read_all_matching = counted  # type: ignore[method-assign]
    with _running(runner):
        begun = time.monotonic()
        # At least a second of appends, every ~5 ms, and at least 50 of them
        # (a busy machine makes fewer a second).
        while time.monotonic() - begun < 1.0 or store.last_position() < 50:
            app.create_game(app.caller(""), "dinosaurs_extinct", 2)
            time.sleep(0.005)
        elapsed = time.monotonic() - begun
        assert len(reads) <= elapsed / 0.25 + 4, len(reads)

        game_id = _bots_only(app, "seldom")
        created = time.monotonic()
        while _status(app, game_id) is not Status.FINISHED:
            assert time.monotonic() < created + 60, "the bot game did not end"
            time.sleep(0.02)
        took = time.monotonic() - created
        assert runner.moves > 20 and took < runner.moves * runner.linger / 2


def test_a_runner_playing_a_game_answers_a_persons_move_at_once(store: EventStore):
    """The linger is for a runner without games: in a game it plays, a
    person's move wakes it and the bot seat answers without waiting."""
    app = GameApp(store)
    runner = BotRunner(GameApp(store), linger=0.25)
    game_id, _, _ = app.create_game(
        Caller(admin=True), "dinosaurs_extinct", 2, seed="reply", bots=[(1, "random")]
    )
    _, token, _ = app.join_game(app.caller(""), game_id, 0, "Ada")
    app.start_game(app.caller(token), game_id)
    replies: list[float] = []
    with _running(runner):
        for turn in range(400):
            loaded = app.load(game_id)
            if loaded.state.status is Status.FINISHED or len(replies) == 15:
                break
            if 0 not in loaded.session.active_seats(loaded.state):
                time.sleep(0.002)  # the bot's move at the start, or a slow one
                continue
            _, actions = app.legal_actions(app.caller(token), game_id, 0)
            moved = app.submit(app.caller(token), game_id, 0, f"a{turn}", actions[0][1])
            begun = time.monotonic()
            after = app.load(game_id)
            if 1 not in after.session.active_seats(after.state):
                continue  # not the bot's turn yet
            while store.stream_version(game_id) == moved.version:
                assert time.monotonic() < begun + 10, "the bot did not answer"
                time.sleep(0.002)
            replies.append(time.monotonic() - begun)
    assert replies and sorted(replies)[len(replies) // 2] < runner.linger / 2
