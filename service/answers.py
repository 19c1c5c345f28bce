"""The service's answers in protobuf: games, seats, clocks, legal actions
and events as the API sends them, redacted before they get here."""

from __future__ import annotations

import functools
import importlib
from datetime import UTC, datetime
from functools import cache
from types import ModuleType
from typing import Any, Protocol

from google.protobuf.message import Message
from strata.v1 import game_service_pb2 as pb

from domain import codec
from domain.fairness import SeedRevealed
from domain.session import (
    GameCreated,
    GameFinished,
    GameStarted,
    PlayerJoined,
    PlayerLeft,
    RematchCreated,
    SeatLeft,
    Session,
    Status,
)
from service import protomap
from service.callers import Caller
from service.clocks import SeatClock
from service.errors import InvalidArgument
from service.games import Loaded
from service.projections import ListedSeat, listed_seats

_STATUS_TO_PROTO = {
    Status.OPEN: pb.GAME_STATUS_OPEN,
    Status.ACTIVE: pb.GAME_STATUS_ACTIVE,
    Status.FINISHED: pb.GAME_STATUS_FINISHED,
}
_STATUS_FROM_PROTO = {v: k for k, v in _STATUS_TO_PROTO.items()}


@cache
@cache
def game_module(game_type: str) -> ModuleType:
    """The generated protobuf module of a game type."""
    return importlib.import_module(f"strata.games.{game_type}.v1.{game_type}_pb2")


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _typed(wrapper: Message, game_type: str, what: str, field: str) -> Message | None:
    """The per-game message inside a oneof wrapper, checked against the game type."""
    which = wrapper.WhichOneof("game")
    if which is None:
        return None
    if which != game_type:
        raise InvalidArgument(
            "WRONG_GAME_TYPE",
            f"{what} is for {which}, but the game is {game_type}.",
            field,
        )
    message: Message = getattr(wrapper, which)
    return message


def actions_to_proto(
    loaded: Loaded, actions: list[tuple[int, Any]]
) -> list[pb.LegalAction]:
    """(seat, command) pairs as LegalAction messages."""
    game_type = loaded.rules.game_type
    out = []
    for seat, command in actions:
        try:
            out.append(_legal_action(game_type, seat, command))
        except TypeError:  # an unhashable command: not cached
            out.append(_legal_action.__wrapped__(game_type, seat, command))
    return out


@functools.lru_cache(maxsize=8192)
def _legal_action(game_type: str, seat: int, command: Any) -> pb.LegalAction:
    """A seat's command as a LegalAction message. Cached: the same few
    commands are legal again and again (the message is only ever copied
    into a response, never changed)."""
    game_command = pb.GameCommand()
    protomap.to_proto(command, getattr(game_command, game_type))
    return pb.LegalAction(
        seat=seat, command=game_command, description=describe(command)
    )


def _timestamp(at: datetime) -> tuple[int, int]:
    """``at`` as a Timestamp's seconds and nanos, without
    protobuf's conversion (Python code that checks and normalises)."""
    if at.tzinfo is None:  # as protobuf reads it: UTC
        at = at.replace(tzinfo=UTC)
    delta = at - _EPOCH
    return delta.days * 86_400 + delta.seconds, delta.microseconds * 1000


def describe(command: Any) -> str:
    """A short description of a command: `RollDie`, `SwitchWith(target_seat=2)`."""
    data = codec.encode(command)
    name = type(command).__name__
    if not data:
        return name
    return name + "(" + ", ".join(f"{k}={v}" for k, v in data.items()) + ")"


def seats_to_proto(state: Any) -> list[pb.Seat]:
    """Every seat of a game: free, or who took it (a bot, a player who left)."""
    return _seats_to_proto(listed_seats(state))


def _seats_to_proto(seats: tuple[ListedSeat, ...]) -> list[pb.Seat]:
    return [
        pb.Seat(seat=i, taken=True, player_name=s.name, bot=s.bot, left=s.left)
        if s.taken
        else pb.Seat(seat=i)
        for i, s in enumerate(seats)
    ]


def _clocks_to_proto(clocks: dict[int, SeatClock]) -> list[pb.SeatClock]:
    out = []
    for seat, clock in sorted(clocks.items()):
        message = pb.SeatClock(seat=seat)
        if clock.deadline is not None:
            message.deadline.FromDatetime(clock.deadline)
        if clock.remaining is not None:
            message.remaining_ms = int(clock.remaining.total_seconds() * 1000)
        out.append(message)
    return out


def game_to_proto(
    game_id: str, loaded: Loaded, caller: Caller, viewer_state: Any
) -> pb.Game:
    """A game as the caller may see it (seats judged on the current state)."""
    state = loaded.state
    rules = loaded.rules
    viewer = caller.viewer(viewer_state)
    game = pb.Game(
        game_id=game_id,
        game_type=state.game_type,
        status=_STATUS_TO_PROTO[state.status],
        version=state.version,
        rules_version=state.rules_version,
        players=len(state.seats),
        your_seats=sorted(viewer.seats),
        active_seats=sorted(loaded.session.active_seats(state)),
        seats=seats_to_proto(state),
        rematch=state.rematch,
    )
    if state.outcome is not None:
        game.outcome.CopyFrom(
            pb.Outcome(winners=list(state.outcome.winners), result=state.outcome.result)
        )
    if loaded.created_at is not None:
        game.created_at.FromDatetime(loaded.created_at)
    view = rules.view(state.game, viewer)
    protomap.to_proto(view, getattr(game.view, rules.game_type))
    return game


class Recorded(Protocol):
    """What the public Event message says of a stored event (the store's
    ``RecordedEvent``; transports do not name the store)."""

    @property
    def game_id(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def position(self) -> int: ...
    @property
    def type(self) -> str: ...
    @property
    def recorded_at(self) -> datetime: ...


def event_to_proto(session: Session[Any], recorded: Recorded, event: Any) -> pb.Event:
    """One stored event, already redacted, as the public Event message."""
    rules = session.rules
    out = pb.Event(
        game_id=recorded.game_id,
        version=recorded.version,
        position=recorded.position,
        type=recorded.type,
    )
    out.recorded_at.seconds, out.recorded_at.nanos = _timestamp(recorded.recorded_at)
    match event:
        case GameCreated():
            created = out.game_created
            created.game_type = event.game_type
            created.rules_version = event.rules_version
            created.players = event.players
            created.seed = event.seed
            protomap.to_proto(
                codec.decode(rules.options_type, event.options),
                getattr(created.options, rules.game_type),
            )
            if event.scenario is not None:
                protomap.to_proto(
                    codec.decode(rules.scenario_type, event.scenario),
                    getattr(created.scenario, rules.game_type),
                )
            created.commitment = event.commitment
            created.salt = event.salt
            created.reveal = event.reveal
        case SeedRevealed():
            revealed = out.seed_revealed
            revealed.seed = event.seed
            revealed.salt = event.salt
            if event.scenario is not None:
                protomap.to_proto(
                    codec.decode(rules.scenario_type, event.scenario),
                    getattr(revealed.scenario, rules.game_type),
                )
        case PlayerJoined():
            out.player_joined.CopyFrom(
                pb.PlayerJoined(
                    seat=event.seat, player_name=event.player_name, bot=event.bot
                )
            )
        case PlayerLeft():
            out.player_left.seat = event.seat
        case SeatLeft():
            out.seat_left.CopyFrom(pb.SeatLeft(seat=event.seat, bot=event.bot))
        case RematchCreated():
            out.rematch_created.game_id = event.game_id
        case GameStarted():
            out.game_started.SetInParent()
        case GameFinished():
            out.game_finished.outcome.CopyFrom(
                pb.Outcome(winners=list(event.winners), result=event.result)
            )
        case _:
            protomap.to_proto(event, getattr(out.game_event, rules.game_type))
    return out
