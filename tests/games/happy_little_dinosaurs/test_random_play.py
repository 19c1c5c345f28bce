"""Random play: every game ends, conserves its 97 cards, replays to the same
state, maps to its protos, and never shows a player another's secret."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from typing import Any

import pytest
from strata.games.happy_little_dinosaurs.v1 import happy_little_dinosaurs_pb2

from domain.chance import Rng
from domain.errors import DomainError
from domain.happy_little_dinosaurs import RULES, model
from domain.happy_little_dinosaurs.content import catalogue
from domain.happy_little_dinosaurs.model import (
    CardTaken,
    DisasterSentToBottom,
    HandLookedAt,
    Phase,
    State,
)
from domain.rules import Viewer
from domain.session import LIFECYCLE_EVENTS, Session
from tests.gamekit import (
    RANDOM_SEEDS,
    assert_maps_to_proto,
    assert_replays,
    assert_replays_deterministically,
    over_seed_chunks,
    play_random,
    seed_chunk,
)

SEEDS = RANDOM_SEEDS
CARDS = catalogue().cards


def places(state: State) -> dict[str, list[str]]:
    """Where every card is."""
    where: dict[str, list[str]] = {
        "main_deck": list(state.main_deck),
        "discard": list(state.discard),
        "committed": list(state.committed.values()),
        "played": list(state.played.values()),
        "table": list(state.table),
        "peeked": list(state.peeked),
        "disaster_deck": list(state.disaster_deck),
        "disaster": [] if state.disaster is None else [state.disaster],
    }
    for seat, player in enumerate(state.players):
        where[f"hand{seat}"] = list(player.hand)
        where[f"area{seat}"] = list(player.disasters)
    return where


MAIN = frozenset(catalogue().main)
DISASTERS = frozenset(catalogue().disasters)


def check_invariants(state: State) -> None:
    """Each of the 97 cards is in exactly one place, of the right kind;
    eliminated dinosaurs hold nothing; a finished game has winners; while
    it is played, the Main deck is empty only when the discard pile is too
    (rules version 3 rebuilds it the moment it empties)."""
    main = [
        *state.main_deck,
        *state.discard,
        *state.committed.values(),
        *state.played.values(),
        *state.table,
        *state.peeked,
    ]
    disasters = [*state.disaster_deck]
    if state.disaster is not None:
        disasters.append(state.disaster)
    for player in state.players:
        main += player.hand
        disasters += player.disasters
        if player.eliminated:
            assert player.hand == ()
    assert len(main) == len(MAIN) and set(main) == MAIN, places(state)
    assert len(disasters) == len(DISASTERS) and set(disasters) == DISASTERS
    if state.phase is Phase.OVER:
        assert state.winners
    else:
        assert state.main_deck or not state.discard, places(state)
    assert any(not p.eliminated for p in state.players)


def mentioned(value: Any) -> set[str]:
    """Every card id a value (event, view) mentions."""
    if isinstance(value, str):
        return {value} if value in CARDS else set()
    cls: Any = type(value)
    names = _field_names(cls)
    if names is not None:
        return set().union(*(mentioned(getattr(value, name)) for name in names))
    if isinstance(value, tuple | list):
        return set().union(*(mentioned(v) for v in value))
    if isinstance(value, dict):
        return set().union(*(mentioned(v) for v in value.values()))
    return set()


@functools.cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    """The fields of a dataclass (None for any other class)."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(f.name for f in dataclasses.fields(cls))


def secrets_kept_from(state: State, seat: int) -> set[str]:
    """Cards ``seat`` may not know the place of: other hands, face-down
    cards of others, both decks, what another player is peeking at."""
    hidden = set(state.main_deck) | set(state.disaster_deck)
    for other, player in enumerate(state.players):
        if other != seat:
            hidden |= set(player.hand)
            if other in state.committed:
                hidden.add(state.committed[other])
    holder = None if state.effect is None else RULES.holder(state, state.effect)
    if holder != seat:
        hidden |= set(state.peeked)
    return hidden


def allowed_to_see(event: Any, seat: int, state: State) -> set[str]:
    """Secrets an event rightly shows ``seat`` (the Dino Grabber's look and
    take; the Disaster put on the bottom face up)."""
    match event:
        case HandLookedAt(seat=grabber, target=target) if grabber == seat:
            return set(state.players[target].hand)
        case CardTaken(target=target, card=card) if target == seat and card:
            return {card}
        case DisasterSentToBottom(card=card):
            return {card}
    return set()


def assert_no_leak(played: Any) -> None:
    """Fold the stream; at each game event, a player's redacted copy
    mentions no card whose place is secret to that player."""
    session = Session(RULES)
    state = None
    for event in played.events:
        state = session.evolve(state, event)
        if isinstance(event, LIFECYCLE_EVENTS):
            continue
        game = state.game
        for seat in range(len(game.players)):
            redacted = RULES.redact(event, Viewer.player(seat))
            leaked = mentioned(redacted) & secrets_kept_from(
                game, seat
            ) - allowed_to_see(event, seat, game)
            assert not leaked, (event, seat, leaked)
            view = RULES.view(game, Viewer.player(seat))
            looked = set(view.looked_at)
            assert not (mentioned(view) & secrets_kept_from(game, seat) - looked), (
                event,
                seat,
            )
        spectator = RULES.view(game, Viewer.spectator())
        hidden = set(game.main_deck) | {c for p in game.players for c in p.hand}
        assert not mentioned(spectator) & (hidden | set(game.committed.values()))


@pytest.mark.slow
@over_seed_chunks
@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_games_end_conserve_cards_and_replay(players: int, chunk: int) -> None:
    lengths = []
    for i in seed_chunk(SEEDS, chunk):
        seed = f"hld-{players}-{i}"
        played = play_random(RULES, players, seed, check_each_step=check_invariants)
        assert RULES.is_terminal(played.state.game)
        assert_replays(RULES, played)
        if i % 50 == 0:
            assert_replays_deterministically(RULES, played, seed)
            assert_maps_to_proto(RULES, happy_little_dinosaurs_pb2, played)
        if i % 100 == 0:
            assert_no_leak(played)
        lengths.append(played.state.game.round)
    assert max(lengths) < 60


def test_random_games_never_show_a_player_another_players_secret() -> None:
    for players in (2, 3, 4):
        for i in range(8):
            assert_no_leak(play_random(RULES, players, f"leak-{players}-{i}"))


def test_any_command_is_accepted_or_refused_with_a_domain_error() -> None:
    """Commands built from arbitrary cards and seats never crash ``decide``:
    it returns events or raises a DomainError (so the service never answers
    INTERNAL), and it accepts every command ``legal_actions`` lists."""
    cards = ["pet_rock_1", "score_booster_1", "meteor_1", "no_such_card"]
    seats = [-1, 0, 1, 2, 3, 9]

    def commands(chooser: Rng) -> list[Any]:
        card = chooser.choice(cards)
        seat = chooser.choice(seats)
        return [
            model.PlayPointCard(card),
            model.PassEffect(),
            model.AddPointCardValue(card),
            model.LookAtHand(seat),
            model.TakeCard(card),
            model.SwapWithNeighbour(seat),
            model.DiscardCards((card,)),
            model.DiscardCards(()),
            model.LookAtTopCards(),
            model.KeepCard(card),
            model.SwapPlayedCards(seat, chooser.choice(seats)),
            model.PlayScoreBooster(card, seat),
            model.PlayScoreSapper(card, seat),
            model.PlayScoreInversion(card),
            model.PassInstant(),
            model.PlayDisasterInsurance(card),
            model.PlayDisasterRedirect(card, seat),
            model.TakeDisaster(),
            model.DiscardCard(card),
            model.KeepHand(),
        ]

    for players in (2, 3, 4):
        played = play_random(RULES, players, f"fuzz-{players}")
        session = Session(RULES)
        state = None
        chooser = Rng("fuzz", players)
        for event in played.events:
            state = session.evolve(state, event)
            game = state.game
            if isinstance(event, LIFECYCLE_EVENTS) or RULES.is_terminal(game):
                continue
            for seat in range(players):
                for command in commands(chooser):
                    with contextlib.suppress(DomainError):
                        RULES.decide(game, seat, command, Rng("fuzz", 0))
                for command in RULES.legal_actions(game, seat):
                    assert RULES.decide(game, seat, command, Rng("fuzz", 0))
