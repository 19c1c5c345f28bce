"""Two tries of one command id racing (two replicas, or a client retrying
while its first call is still running) must give one answer, whatever each
try decided on its own."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import pytest

from domain.errors import DomainError
from eventstore.base import (
    AppendResult,
    CommandOutcome,
    CommandRecord,
    NewCommand,
    NewEvent,
)
from eventstore.memory import InMemoryEventStore
from service.application import GameApp
from service.callers import Caller
from service.errors import InvalidArgument

GAME = "dinosaurs_extinct"


class LosesTheRace(InMemoryEventStore):
    """Logs another try's refusal of the same command id just before ours."""

    def __init__(self, other: CommandOutcome) -> None:
        super().__init__()
        self.other = other

    def record_rejection(self, game_id: str, command: NewCommand) -> CommandRecord:
        winner = dataclasses.replace(
            command, outcome=self.other, decided_at_version=command.decided_at_version
        )
        super().record_rejection(game_id, winner)
        return super().record_rejection(game_id, command)


def started(app: GameApp) -> tuple[str, list[str]]:
    game_id, _, _ = app.create_game(Caller(admin=True), GAME, 2, seed="race")
    tokens = [app.join_game(app.caller(""), game_id, s, f"p{s}")[1] for s in (0, 1)]
    app.start_game(app.caller(tokens[0]), game_id)
    return game_id, tokens


def test_a_refusal_that_loses_the_race_answers_with_the_logged_refusal():
    logged_first = CommandOutcome(
        error_kind="RuleViolation",
        error_reason="SWITCH_TARGET_REQUIRED",
        error_message="decided by the other try",
    )
    app = GameApp(LosesTheRace(logged_first))
    game_id, tokens = started(app)
    loaded = app.load(game_id)
    idle = next(
        s for s in range(2) if s not in loaded.session.active_seats(loaded.state)
    )
    command = loaded.session.legal_actions(
        loaded.state, next(iter(loaded.session.active_seats(loaded.state)))
    )[0]
    answers = []
    for _ in range(2):
        with pytest.raises(DomainError) as refused:
            app.submit(app.caller(tokens[idle]), game_id, idle, "cmd-1", command)
        answers.append(refused.value.reason)
    assert answers == ["SWITCH_TARGET_REQUIRED", "SWITCH_TARGET_REQUIRED"]
    assert app.load(game_id).state.version == loaded.state.version


@pytest.mark.parametrize(
    "command_id", ["start", "create", "join-seat-0", "join-seat-1", "bot-seat-0-at-3"]
)
def test_a_client_command_id_cannot_pass_for_a_join_the_start_or_a_bot(command_id):
    app = GameApp(InMemoryEventStore())
    game_id, tokens = started(app)
    loaded = app.load(game_id)
    seat = next(iter(loaded.session.active_seats(loaded.state)))
    command = loaded.session.legal_actions(loaded.state, seat)[0]
    with pytest.raises(InvalidArgument) as refused:
        app.submit(app.caller(tokens[seat]), game_id, seat, command_id, command)
    assert refused.value.reason == "COMMAND_ID_RESERVED"
    assert app.load(game_id).state.version == loaded.state.version


class AppliedMeanwhile(InMemoryEventStore):
    """The first time a command id is looked up, or the first time a command
    is appended, whichever comes first, another replica applies that same
    command right then (after this try looked or decided; the command path
    decides on its cached state without looking the id up first)."""

    def __init__(self) -> None:
        super().__init__()
        self.other_replica: Callable[[], object] | None = None

    def _meanwhile(self) -> None:
        if self.other_replica is not None:
            other, self.other_replica = self.other_replica, None
            other()

    def find_command(self, game_id: str, command_id: str) -> CommandRecord | None:
        found = super().find_command(game_id, command_id)
        self._meanwhile()
        return found

    def append(
        self,
        game_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        command: NewCommand | None = None,
    ) -> AppendResult:
        if command is not None:
            self._meanwhile()
        return super().append(game_id, expected_version, events, command)


def test_a_pinned_command_applied_meanwhile_by_another_try_gets_its_outcome():
    store = AppliedMeanwhile()
    app, other = GameApp(store), GameApp(store)
    game_id, tokens = started(app)
    loaded = app.load(game_id)
    seat = next(iter(loaded.session.active_seats(loaded.state)))
    command = loaded.session.legal_actions(loaded.state, seat)[0]
    version = loaded.state.version
    caller = app.caller(tokens[seat])
    results = []
    store.other_replica = lambda: results.append(
        other.submit(caller, game_id, seat, "pinned", command, version)
    )
    mine = app.submit(caller, game_id, seat, "pinned", command, version)
    (theirs,) = results
    assert not theirs.duplicate and mine.duplicate
    assert mine.version == theirs.version
