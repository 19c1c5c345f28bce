"""The heuristic bot: legal, pure, view-only, and it finishes games."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from domain.chance import Rng
from domain.escaping_extinction import RULES
from domain.escaping_extinction.bots import choose
from domain.escaping_extinction.model import Command, EndTurn, State, View
from domain.rules import Viewer
from domain.session import Session, SessionState
from tests.gamekit import new_game
from tests.games.escaping_extinction.helpers import check_invariants


def play_game(
    players: int,
    seed: str,
    chooser: Callable[[View, Sequence[Command]], Command] = choose,
    max_steps: int = 5000,
) -> SessionState[State]:
    """A whole game in which every seat plays with ``chooser``."""
    session: Session[State] = Session(RULES)
    state = session.fold([session.create(players, seed)])
    for seat in range(players):
        state = session.fold(
            session.join(state, f"bot{seat}", f"bot{seat}", seat), state
        )
    state = session.fold(session.start(state, Rng(seed, state.version)), state)
    for _ in range(max_steps):
        if state.outcome is not None:
            return state
        seat = min(session.active_seats(state))
        legal = session.legal_actions(state, seat)
        view = RULES.view(state.game, Viewer.player(seat))
        command = chooser(view, legal)
        _, state = session.advance(state, seat, command, Rng(seed, state.version))
    raise RuntimeError(f"bot game {seed} did not end in {max_steps} steps")


def random_chooser(seed: str) -> Callable[[View, Sequence[Command]], Command]:
    """A player choosing uniformly among the legal commands."""
    rng = Rng(seed, -1)

    def pick(view: View, legal: Sequence[Command]) -> Command:
        return rng.choice(legal)

    return pick


def test_the_bot_only_ever_picks_a_legal_command_and_finishes_its_games() -> None:
    picked: list[tuple[Command, Sequence[Command]]] = []

    def watching(view: View, legal: Sequence[Command]) -> Command:
        command = choose(view, legal)
        picked.append((command, legal))
        return command

    for n in range(40):
        state = play_game(1 + n % 4, f"bot-{n}", watching)
        assert state.outcome is not None
        check_invariants(state.game)
    assert all(command in legal for command, legal in picked)


def test_the_bot_is_a_pure_function_of_the_view_and_the_legal_commands() -> None:
    state, _ = new_game(RULES, 2, seed="pure")
    view = RULES.view(state.game, Viewer.player(0))
    legal = RULES.legal_actions(state.game, 0)
    assert choose(view, legal) == choose(view, list(legal))
    assert choose(view, legal) in legal


def test_the_bot_ends_its_turn_when_nothing_else_is_worth_doing() -> None:
    state, _ = new_game(RULES, 1, seed="idle")
    view = RULES.view(state.game, Viewer.player(0))
    only = [EndTurn(view.current_dino)]
    assert choose(view, only) == only[0]


def test_a_random_player_also_finishes_its_games() -> None:
    for n in range(8):
        state = play_game(1 + n % 4, f"rnd-{n}", random_chooser(f"rnd-{n}"))
        assert state.outcome is not None
