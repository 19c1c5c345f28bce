"""Fuzzing the two places outside data enters the domain: stored event JSON
(`Session.decode_event`, `codec.decode`) and client protobuf commands
(`protomap.from_proto`). Junk must be refused with the documented errors —
CodecError / ValueError for events, InvalidCommand for commands — and a
command that does map must be decided or refused with a DomainError, never
crash the rules. Generic over every registered game type."""

from __future__ import annotations

import contextlib
from functools import cache
from typing import Any

import pytest
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain import codec, registry
from domain.chance import Rng
from domain.errors import DomainError, InvalidCommand
from domain.session import LIFECYCLE_EVENTS
from service import protomap
from service.answers import game_module
from tests.gamekit import new_game, play_random
from tests.hostile.strategies import damaged_events, json_values, messages

GAME_TYPES = registry.game_types()
FUZZ = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def event_names(game_type: str) -> list[str]:
    rules = registry.rules_for(game_type)
    return [t.__name__ for t in (*LIFECYCLE_EVENTS, *rules.event_types)]


def decode_or_refuse(game_type: str, name: str, data: Any, schema: int) -> None:
    session = registry.session_for(game_type)
    with contextlib.suppress(ValueError):  # CodecError is a ValueError
        session.decode_event(name, data, schema)


@pytest.mark.parametrize("game_type", GAME_TYPES)
@FUZZ
@given(data=st.data(), body=json_values, schema=st.integers(-1, 4))
def test_any_json_as_any_event_is_decoded_or_refused_with_a_codec_error(
    game_type, data, body, schema
):
    name = data.draw(st.sampled_from([*event_names(game_type), "NoSuchEvent", ""]))
    decode_or_refuse(game_type, name, body, schema)


def upcasts() -> list[tuple[str, str, int]]:
    """(game type, event type, schema) of every upcaster of every game."""
    out: dict[tuple[str, int], str] = {}
    for game_type in GAME_TYPES:
        for key in registry.session_for(game_type)._upcasters:
            out.setdefault(key, game_type)  # the lifecycle's once, not per game
    return [(game_type, name, schema) for (name, schema), game_type in out.items()]


@pytest.mark.parametrize(("game_type", "name", "schema"), upcasts())
@FUZZ
@given(body=json_values)
def test_junk_in_an_old_schema_is_refused_with_a_codec_error_by_its_upcaster(
    game_type, name, schema, body
):
    decode_or_refuse(game_type, name, body, schema)


@pytest.mark.parametrize("game_type", GAME_TYPES)
@FUZZ
@given(data=st.data(), schema=st.integers(0, 3))
def test_a_damaged_stored_event_is_decoded_or_refused_with_a_codec_error(
    game_type, data, schema
):
    name, body = data.draw(damaged_events(registry.rules_for(game_type)))
    decode_or_refuse(game_type, name, body, schema)


@pytest.mark.parametrize("game_type", GAME_TYPES)
@FUZZ
@given(body=json_values)
def test_any_json_as_a_game_state_is_decoded_or_refused_with_a_codec_error(
    game_type, body
):
    rules = registry.rules_for(game_type)
    with contextlib.suppress(ValueError):
        codec.decode(rules.state_type, body)


@cache
def _mid_game_states(game_type: str) -> list[tuple[Any, int]]:
    """(state, players) at a few points of a random game."""
    rules = registry.rules_for(game_type)
    out = []
    for players in sorted({rules.min_players, rules.max_players}):
        played = play_random(rules, players, f"fuzz-{players}")
        state, _ = new_game(rules, players, f"fuzz-{players}")
        session = registry.session_for(game_type)
        out.append((state, players))
        for i, (seat, command) in enumerate(played.commands[:60]):
            events = session.play(
                state, seat, command, Rng(f"fuzz-{players}", state.version)
            )
            state = session.fold(events, state)
            if i % 15 == 0 and not rules.is_terminal(state.game):
                out.append((state, players))
    return out


def _map_and_decide(game_type: str, message: Any, data: st.DataObject) -> None:
    rules = registry.rules_for(game_type)
    try:
        command = protomap.from_proto(message, rules.command_types, "command")
    except InvalidCommand:
        return
    state, players = data.draw(st.sampled_from(_mid_game_states(game_type)))
    seat = data.draw(st.integers(-2, players + 2))
    session = registry.session_for(game_type)
    with contextlib.suppress(DomainError):
        session.play(state, seat, command, Rng("fuzz", state.version))


@pytest.mark.parametrize("game_type", GAME_TYPES)
@FUZZ
@given(data=st.data(), raw=st.binary(max_size=64))
def test_random_bytes_as_a_command_map_or_are_invalid_and_never_crash_the_rules(
    game_type, data, raw
):
    try:
        message = game_module(game_type).Command.FromString(raw)
    except DecodeError:
        return
    _map_and_decide(game_type, message, data)


@pytest.mark.parametrize("game_type", GAME_TYPES)
@FUZZ
@given(data=st.data())
def test_random_command_fields_map_or_are_invalid_and_never_crash_the_rules(
    game_type, data
):
    message = data.draw(messages(game_module(game_type).Command))
    round_trip = type(message).FromString(message.SerializeToString())
    _map_and_decide(game_type, round_trip, data)
