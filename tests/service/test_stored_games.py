"""Games stored by older code load, replay, verify and continue under the
rules version they were created under (``tests/data/*_v1*``: recorded under
rules version 1, before the folds stopped deciding; ``*_v2*``: under rules
version 2); a game of a rules version no longer shipped is refused with a
clear reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc
import pytest
from strata.v1 import admin_service_pb2 as admin_pb

from clients.client import StrataClient, StrataError
from domain import bots, registry
from domain.chance import Rng
from domain.cubosaurs import model as cubosaurs_model
from domain.escaping_extinction.content import CONTENT
from domain.escaping_extinction.model import (
    EarthquakeStruck,
    MeteorHitEarth,
    RocketLaunched,
    TokenReturned,
    TurnBegan,
)
from domain.fairness import SeedRevealed
from domain.happy_little_dinosaurs.model import (
    GameWon,
    PlayerWithdrew,
    ScoresSwapped,
    SuddenDeathCardsRevealed,
)
from domain.session import GameFinished, Status
from eventstore.memory import InMemoryEventStore
from service.application import GameApp
from service.errors import Code, FailedPrecondition, classify
from service.games import decode_recorded
from service.portable import parse_export
from service.verification import Verdict, verify_game

DATA = Path(__file__).resolve().parents[1] / "data"
STORED = sorted(DATA.glob("*_v[0-9]*.strata.json"))
#: The events of today's rules that a stored game's rules version does not
#: record (decisions its fold makes), by that version.
UNRECORDED: dict[str, tuple[type, ...]] = {
    "1": (GameWon, RocketLaunched, MeteorHitEarth, ScoresSwapped),
    "2": (ScoresSwapped, PlayerWithdrew, cubosaurs_model.PlayerWithdrew),
}
#: The Escaping Extinction events whose schema 2 came with rules version 4.
UPCAST_IN_EE_V4 = ("WorldSetUp", "TurnBegan", "TileRevealed")
ENTERED = "DinoEnteredTwentyFirstCentury"


def stored(path: Path) -> tuple[GameApp, str, dict[str, Any]]:
    """An application on an in-memory store holding the game of ``path``."""
    document = path.read_bytes()
    app = GameApp(InMemoryEventStore())
    game_id, events, commands = parse_export(document)
    app.store.import_game(game_id, events, commands)
    return app, game_id, json.loads(document)


def test_there_are_stored_games_of_every_game_type_with_older_rules() -> None:
    # Every game type that still ships an older rules version has a game
    # recorded under one (a game with one version, like the tests' toy, has
    # nothing older to keep running).
    types = {json.loads(p.read_bytes())["game_type"] for p in STORED}
    older = {g for g in registry.game_types() if len(registry.rules_versions(g)) > 1}
    assert types == older


@pytest.mark.parametrize("path", STORED, ids=lambda p: p.name.split(".")[0])
def test_a_stored_game_loads_replays_and_verifies_under_its_rules(
    path: Path,
) -> None:
    app, game_id, document = stored(path)
    loaded = app.load(game_id)
    game_type, recorded = document["game_type"], document["rules_version"]
    assert loaded.state.rules_version == recorded
    assert loaded.rules is registry.rules_for(game_type, recorded)
    assert loaded.state.version == len(document["events"])
    # Every version of it folds (what GetGame at_version and ReplayGame do).
    for version in range(1, loaded.state.version + 1, 37):
        assert app.state_at(game_id, version).state.version == version

    result = verify_game(app.store, game_id)

    assert result.verdict is Verdict.VERIFIED, result
    assert result.recorded_rules_version == recorded
    assert result.current_rules_version == registry.rules_for(game_type).rules_version


@pytest.mark.parametrize("path", STORED, ids=lambda p: p.name.split(".")[0])
def test_a_stored_game_ends_as_it_ended_when_it_was_played(path: Path) -> None:
    app, game_id, document = stored(path)
    state = app.load(game_id).state
    finished = [e for e in document["events"] if e["type"] == "GameFinished"]
    if not finished:
        assert state.status is Status.ACTIVE
        assert not loaded_rules(app, game_id).is_terminal(state.game)
        return
    data = finished[0]["data"]
    assert state.status is Status.FINISHED
    assert state.outcome is not None
    assert (list(state.outcome.winners), state.outcome.result) == (
        data["winners"],
        data["result"],
    )
    rules = loaded_rules(app, game_id)
    # The game's own state says so too (the fold of rules version 1 still
    # works out the end that its events leave unrecorded), but for the
    # seats that left, whose wins these versions gave nobody.
    assert rules.is_terminal(state.game)
    outcome = rules.outcome(state.game)
    winners = tuple(w for w in outcome.winners if w not in state.left)
    assert (winners, outcome.result) == (state.outcome.winners, state.outcome.result)


@pytest.mark.parametrize(
    "name",
    [
        "happy_little_dinosaurs_v2_leaver_escaped",
        "cubosaurs_v2_advanced_leaver_highest",
    ],
)
def test_a_stored_game_a_leaver_would_have_won_still_went_to_nobody(name: str) -> None:
    # Rules version 3 gives such a win to the best seat still in; a game
    # stored under version 2 keeps the end it had.
    app, game_id, _ = stored(DATA / f"{name}.strata.json")
    state = app.load(game_id).state
    assert len(state.left) == 1 and state.outcome is not None
    assert state.outcome.winners == ()
    assert loaded_rules(app, game_id).outcome(state.game).winners == state.left


def loaded_rules(app: GameApp, game_id: str) -> Any:
    return app.load(game_id).rules


def test_a_stored_sudden_death_reveal_is_upcast_with_its_lowest_cards() -> None:
    app, game_id, document = stored(
        DATA / "happy_little_dinosaurs_v1_escaped.strata.json"
    )
    raw = [e for e in document["events"] if e["type"] == "SuddenDeathCardsRevealed"]
    assert raw and all(e["schema_version"] == 1 for e in raw)
    assert all("lowest" not in e["data"] for e in raw)
    session = app.load(game_id).session
    reveals = [
        session.decode_event(e["type"], e["data"], e["schema_version"]) for e in raw
    ]
    assert all(isinstance(r, SuddenDeathCardsRevealed) for r in reveals)
    # The first reveal of this game is tied again: both seats play on.
    assert reveals[0].cards == {0: "delicious_smoothie_1", 1: "grave_maker_1"}
    assert reveals[0].lowest == (0, 1)
    assert len(reveals[1].lowest) == 1


ADMIN_TOKEN = "stored-games-admin"


def admin_app(app: GameApp) -> GameApp:
    """An application on ``app``'s store with an admin token (the stored
    games' seat tokens are not known: the admin acts for their seats)."""
    return GameApp(app.store, admin_token=ADMIN_TOKEN)


def play_on(app: GameApp, game_id: str) -> list[Any]:
    """Play a stored game to its end with the heuristic bots, through the
    application; returns the new events."""
    admin = app.caller(ADMIN_TOKEN)
    start = app.load(game_id).state.version
    for n in range(10_000):
        loaded = app.load(game_id)
        active = sorted(loaded.session.active_seats(loaded.state))
        if not active:
            break
        seat = active[0]
        heuristic = bots.bot_for(loaded.state.game_type, bots.HEURISTIC).play
        rng = Rng(f"continue/{seat}", loaded.state.version)
        command = bots.bot_move(loaded.rules, loaded.state.game, seat, heuristic, rng)
        app.submit(admin, game_id, seat, f"continued-{n}", command)
    loaded = app.load(game_id)
    assert loaded.state.status is Status.FINISHED
    return [
        loaded.session.decode_event(e.type, e.data, e.schema_version)
        for e in app.store.read_stream(game_id, start + 1)
    ]


@pytest.mark.parametrize(
    "name",
    [
        "happy_little_dinosaurs_v1_unfinished",
        "escaping_extinction_v1_unfinished",
        "cubosaurs_v1_unfinished",
        "happy_little_dinosaurs_v2_unfinished_forfeit",
        "cubosaurs_v2_unfinished_forfeit",
    ],
)
def test_an_unfinished_stored_game_is_continued_under_its_rules(name: str) -> None:
    app, game_id, document = stored(DATA / f"{name}.strata.json")
    app = admin_app(app)

    new_events = play_on(app, game_id)

    loaded = app.load(game_id)
    assert loaded.state.rules_version == document["rules_version"]
    # An older rules version records none of the decisions it left to the
    # fold (rules version 1: no end of the game but GameFinished).
    unrecorded = UNRECORDED[document["rules_version"]]
    assert not any(isinstance(e, unrecorded) for e in new_events)
    # The game ends (and a game that committed to its seed reveals it).
    ending = [e for e in new_events if not isinstance(e, SeedRevealed)]
    assert isinstance(ending[-1], GameFinished)
    assert verify_game(app.store, game_id).verdict is Verdict.VERIFIED


def test_stored_escaping_extinction_events_are_upcast_with_what_they_imply() -> None:
    app, game_id, document = stored(DATA / "escaping_extinction_v3_meteor.strata.json")
    session = app.load(game_id).session
    raw = {e["type"]: e for e in reversed(document["events"])}  # the first of each
    assert all(raw[t]["schema_version"] == 1 for t in UPCAST_IN_EE_V4)
    setup, began, revealed = (
        session.decode_event(t, raw[t]["data"], 1)
        for t in ("WorldSetUp", "TurnBegan", "TileRevealed")
    )
    assert (setup.meteor_cards, setup.rocket_docket_cards) == (16, 12)
    assert setup.exploration_cards == 30
    # Two actions a turn, as then; whether a turn was for healing only was
    # not recorded (the fold of rules version 3 works it out).
    assert (began.actions, began.heal_only) == (2, None)
    assert revealed.resource is CONTENT.tile(revealed.tile).resource


def test_a_stored_injured_dinos_turn_still_folds_to_a_turn_for_healing() -> None:
    app, game_id, _ = stored(DATA / "escaping_extinction_v3_meteor.strata.json")
    session = app.load(game_id).session
    state = None
    healing = 0
    for recorded in app.store.read_stream(game_id):
        event = decode_recorded(session, recorded)
        before, state = state, session.evolve(state, event)
        if isinstance(event, TurnBegan) and before is not None:
            injured = any(
                d.dino is event.dino and d.health == 0 for d in before.game.dinos
            )
            assert state.game.waiting_to_heal == injured
            healing += injured
    assert healing, "the stored game has an Injured Dino's turn"


def test_an_unfinished_rules_version_3_game_goes_on_without_the_new_facts() -> None:
    app, game_id, _ = stored(DATA / "escaping_extinction_v3_unfinished.strata.json")
    app = admin_app(app)

    new_events = play_on(app, game_id)

    assert app.load(game_id).state.rules_version == "3"
    assert all(e.heal_only is None for e in new_events if isinstance(e, TurnBegan))
    assert all(
        e.returned is None for e in new_events if isinstance(e, EarthquakeStruck)
    )
    assert all(e.resource is None for e in new_events if isinstance(e, TokenReturned))
    assert verify_game(app.store, game_id).verdict is Verdict.VERIFIED


def test_a_stored_dino_entering_the_21st_century_is_upcast_with_its_step() -> None:
    app, game_id, document = stored(DATA / "dinosaurs_extinct_v1.strata.json")
    [raw] = [e for e in document["events"] if e["type"] == ENTERED]
    assert raw["schema_version"] == 1 and "to_step" not in raw["data"]
    entered = app.load(game_id).session.decode_event(ENTERED, raw["data"], 1)
    assert entered.to_step == 36
    state = app.load(game_id).state
    assert state.game.dinos[entered.seat].step == 36


def test_a_stored_two_player_cubosaurs_game_keeps_its_three_rounds() -> None:
    app, game_id, _ = stored(DATA / "cubosaurs_v1_unfinished.strata.json")
    app = admin_app(app)
    assert app.load(game_id).state.game.rounds == 3

    new_events = play_on(app, game_id)

    scored = [e.round for e in new_events if type(e).__name__ == "RoundScored"]
    assert scored == [1, 2, 3]


@pytest.mark.parametrize("game_type", registry.game_types())
def test_a_new_game_is_created_under_the_current_rules(game_type: str) -> None:
    app = GameApp(InMemoryEventStore())
    game_id = app.create_game(app.caller(""), game_type, 2)[0]
    current = registry.rules_for(game_type)
    assert app.load(game_id).state.rules_version == current.rules_version
    assert app.load(game_id).rules is current


def unshipped(path: Path, version: str = "0") -> bytes:
    """The export document of ``path`` as if created under ``version``."""
    document = json.loads(path.read_bytes())
    document["rules_version"] = version
    document["events"][0]["data"]["rules_version"] = version
    return json.dumps(document).encode()


def test_a_game_of_a_rules_version_no_longer_shipped_is_refused() -> None:
    app = GameApp(InMemoryEventStore())
    game_id, events, commands = parse_export(
        unshipped(DATA / "cubosaurs_v1_two_players.strata.json")
    )
    app.store.import_game(game_id, events, commands)

    with pytest.raises(FailedPrecondition) as refused:
        app.load(game_id)

    assert refused.value.reason == "RULES_VERSION_UNAVAILABLE"
    assert "'0'" in refused.value.message and "1, 2" in refused.value.message
    refusal = classify(refused.value)
    assert refusal is not None
    assert (refusal.code, refusal.reason) == (
        Code.FAILED_PRECONDITION,
        "RULES_VERSION_UNAVAILABLE",
    )
    result = verify_game(app.store, game_id)
    assert result.verdict is Verdict.OTHER_RULES
    current = registry.rules_for("cubosaurs").rules_version
    assert (result.recorded_rules_version, result.current_rules_version) == (
        "0",
        current,
    )


def test_through_the_api_an_old_game_verifies_and_an_unshipped_one_is_refused(
    client: StrataClient, admin: StrataClient
) -> None:
    # Documents under the request size limit (64 KiB).
    old = (DATA / "happy_little_dinosaurs_v1_two_players.strata.json").read_bytes()
    imported = admin.import_game(old)
    assert imported.verification.verdict == admin_pb.VERDICT_VERIFIED
    game = client.get_game(imported.game_id)
    assert game.rules_version == "1"

    document = unshipped(DATA / "cubosaurs_v1_unfinished.strata.json")
    # Unverifiable here: refused, nothing stored, unless trusted.
    with pytest.raises(StrataError) as unverified:
        admin.import_game(document, "unshipped")
    assert unverified.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert unverified.value.reason == "IMPORT_NOT_VERIFIED"
    assert "other_rules" in unverified.value.message
    with pytest.raises(StrataError) as absent:
        client.get_game("unshipped")
    assert absent.value.code == grpc.StatusCode.NOT_FOUND
    with pytest.raises(StrataError) as refused:
        admin.import_game(document, "unshipped", trust=True)
    assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.reason == "RULES_VERSION_UNAVAILABLE"
    with pytest.raises(StrataError) as again:
        client.get_game("unshipped")
    assert again.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert again.value.reason == "RULES_VERSION_UNAVAILABLE"
