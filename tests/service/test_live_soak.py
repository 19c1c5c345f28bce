"""A soak, bounded in games and in time: many timed games of every type in
which random seats play, go silent or leave; the timekeeper (an injected
clock, never a sleep) acts for the silent ones; every game reaches its end
and verifies."""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime, timedelta

from domain import registry
from domain.chance import Rng
from domain.session import Status
from eventstore.memory import InMemoryEventStore
from service.application import GameApp
from service.bots import BotRunner
from service.callers import Caller
from service.clocks import BOT, FORFEIT, TimeControl, Timekeeper
from service.verification import verify_game

GAMES_PER_TYPE = 4
#: The soak stops there (a failure, not a hang, if the games do not end).
SECONDS = 120


def test_games_whose_seats_go_silent_or_leave_all_reach_their_end() -> None:
    app = GameApp(InMemoryEventStore())
    chance = Rng("soak", 0)
    games: dict[str, list[str]] = {}
    for game_type in registry.game_types():
        rules = registry.rules_for(game_type)
        for n in range(GAMES_PER_TYPE):
            players = max(2, rules.min_players) + n % 2
            players = min(players, rules.max_players)
            control = TimeControl(decision_seconds=30, on_timeout=(BOT, FORFEIT)[n % 2])
            game_id, _, _ = app.create_game(
                Caller(admin=True),
                game_type,
                players,
                seed=f"soak-{game_type}-{n}",
                replace_leavers="bot" if n % 4 == 3 else "",
                time_control=control,
            )
            tokens = [
                app.join_game(app.caller(""), game_id, s, f"p{s}")[1]
                for s in range(players)
            ]
            app.start_game(app.caller(tokens[0]), game_id)
            games[game_id] = tokens
    # Far enough ahead that every decision not made is out of time.
    keeper = Timekeeper(app, clock=lambda: datetime.now(UTC) + timedelta(hours=1))
    runner = BotRunner(app)  # plays the seats bots took over
    silent = {g: {chance.roll(len(t)) - 1} for g, t in games.items()}
    until = time.monotonic() + SECONDS
    while time.monotonic() < until:
        playing = [g for g in games if app.load(g).state.status is not Status.FINISHED]
        if not playing:
            break
        for game_id in playing:
            loaded = app.load(game_id)
            state = loaded.state
            if state.status is Status.FINISHED:
                continue
            people = list(state.people_in)
            if people and chance.roll(100) <= 2:
                seat = chance.choice(people)
                app.leave_game(app.caller(games[game_id][seat]), game_id, seat)
                continue
            awake = [
                s
                for s in sorted(loaded.session.active_seats(state))
                if s in people and s not in silent[game_id]
            ]
            if not awake:
                continue  # only silent seats (or bots) to act: the keeper's
            seat = chance.choice(awake)
            caller = app.caller(games[game_id][seat])
            _, actions = app.legal_actions(caller, game_id, seat)
            command = chance.choice(actions)[1]
            app.submit(caller, game_id, seat, f"s{state.version}", command)
        keeper.sweep()
        runner.run_once()
    kinds: Counter[str] = Counter()
    for game_id in games:
        state = app.load(game_id).state
        assert state.status is Status.FINISHED, game_id
        assert verify_game(app.store, game_id).ok, game_id
        for c in app.store.read_commands(game_id):
            kinds[c.command_id.split("-")[0]] += c.outcome.accepted
    # The soak did what it says: timeouts and leaves, besides the moves.
    assert kinds["timeout"] > 0 and kinds["leave"] > 0
