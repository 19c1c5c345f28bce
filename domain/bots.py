"""Bots: a player for every seat, seeing only what that seat's player sees.

A bot is a pure function of (the view of its seat, its legal actions, a
random generator) to one of those actions. It never receives the game's
state: :func:`bot_move` is the one place a bot is asked to move, and it
hands the bot ``rules.view(state, Viewer.player(seat))`` and
``rules.legal_actions(state, seat)`` only. What a bot knows is what a
person in that seat would see through the API.

Every game has a ``random`` bot (uniform over the legal actions, here),
the bots its rules declare (``GameRules.bots``: a ``heuristic`` bot, in
``domain/<game_type>/bots.py``) and, for a game with a search adapter
(``GameRules.search``), the ``strong`` bot (:class:`StrongBot`, the search
of :mod:`domain.search`, which reads the state only through the seat's view
and the adapter's determinisation). These are the bot levels, weakest
first (:data:`LEVELS`). :func:`bot_for` finds a bot by game type and kind;
:func:`bot_rng` is the generator a bot is given, seeded from the game's
seed, the seat and the version it decides at, so a game of bots replays
move for move wherever it is played (in-process by ``strata simulate`` or
through the service's bot seats).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain import registry, search
from domain.chance import Rng
from domain.rules import Bot, GameRules, Viewer
from domain.session import Session, Status

RANDOM = "random"
HEURISTIC = "heuristic"
STRONG = "strong"
#: The bot levels, weakest first.
LEVELS = (RANDOM, HEURISTIC, STRONG)
#: The table policy that hands a seat to a bot (``replace_leavers``, a
#: timeout's ``on_timeout``): ``bot`` (the game's replacement bot) or
#: ``bot:<level>``.
BOT_POLICY = "bot"
#: Who acts first when several seats may: the lowest seat, or one drawn at
#: random for every decision (the balance lab's two ways).
SEAT_ORDER, RANDOM_ORDER = "seat", "random"
ACTING_ORDERS = (SEAT_ORDER, RANDOM_ORDER)

__all__ = [
    "ACTING_ORDERS",
    "BOT_POLICY",
    "HEURISTIC",
    "LEVELS",
    "RANDOM",
    "STRONG",
    "Bot",
    "BotGame",
    "BotKind",
    "StrongBot",
    "bot_for",
    "bot_kinds",
    "bot_move",
    "bot_rng",
    "play_bot_game",
    "policy_level",
    "random_bot",
    "replacement_kind",
]


def random_bot(view: Any, legal: Sequence[Any], rng: Rng) -> Any:
    """Any legal action, uniformly."""
    return rng.choice(legal)


@dataclass(frozen=True)
class StrongBot:
    """The ``strong`` bot of one game: determinised search
    (:func:`domain.search.think`) with the game's heuristic in its
    playouts, bounded by ``budget`` and, sooner, by ``out_of_time``.

    Asked through the :class:`Bot` protocol (a view and no state), it plays
    the heuristic; :func:`bot_move` gives it what the search needs."""

    heuristic: Bot
    budget: search.Budget = search.DEFAULT_BUDGET
    out_of_time: Callable[[], bool] = field(default=search.never, compare=False)

    def __call__(self, view: Any, legal: Sequence[Any], rng: Rng) -> Any:
        return self.heuristic(view, legal, rng)


@dataclass(frozen=True)
class BotKind:
    """A named bot of one game type."""

    game_type: str
    kind: str
    play: Bot
    description: str


def bot_rng(seed: str, seat: int, version: int) -> Rng:
    """The generator of the bot in ``seat`` deciding at ``version``."""
    return Rng(f"bot/{seed}/{seat}", version)


def bot_move(
    rules: GameRules[Any, Any, Any, Any], state: Any, seat: int, bot: Bot, rng: Rng
) -> Any:
    """The move ``bot`` makes for ``seat`` in the game state ``state``.

    The bot gets the seat's redacted view and legal actions, never the state
    (the random bot, which ignores the view, is handed None instead). Raises
    ValueError when the seat has no legal action now, or when the bot picks
    something that is not one of them.
    """
    legal = rules.legal_actions(state, seat)
    if not legal:
        raise ValueError(f"seat {seat} has no legal action")
    if isinstance(bot, StrongBot):
        command, _ = search.think(
            rules,
            state,
            seat,
            tuple(legal),
            bot.heuristic,
            rng,
            bot.budget,
            bot.out_of_time,
        )
        if command not in legal:  # pragma: no cover - it chooses among legal
            raise ValueError(f"the bot chose {command!r}, which is not legal now")
        return command
    # The random bot ignores the view: not building it halves its games' cost.
    view = None if bot is random_bot else rules.view(state, Viewer.player(seat))
    command = bot(view, tuple(legal), rng)
    if command not in legal:
        raise ValueError(f"the bot chose {command!r}, which is not legal now")
    return command


_DESCRIPTIONS = {
    RANDOM: "any legal action, uniformly",
    HEURISTIC: "a simple heuristic player",
    STRONG: "searches samples of what its seat cannot see (slower, stronger)",
}


def policy_level(policy: str) -> str | None:
    """The level a bot policy names: ``""`` for ``bot`` (the game's
    replacement bot, :func:`replacement_kind`), the level of
    ``bot:<level>``; None for anything else."""
    if policy == BOT_POLICY:
        return ""
    name, colon, level = policy.partition(":")
    if name == BOT_POLICY and colon and level in LEVELS:
        return level
    return None


def replacement_kind(game_type: str, level: str = "") -> str:
    """The bot kind that stands in for a seat at ``level`` (empty: the
    game's heuristic bot, or its random bot for a game without one)."""
    if level:
        return level
    return HEURISTIC if HEURISTIC in bot_kinds(game_type) else RANDOM


def bot_kinds(game_type: str) -> list[str]:
    """The bot kinds available for ``game_type``, sorted (KeyError when the
    game type is unknown)."""
    rules = registry.rules_for(game_type)
    strong = (STRONG,) if rules.search is not None and HEURISTIC in rules.bots else ()
    return sorted({RANDOM, *rules.bots, *strong})


def bot_for(
    game_type: str,
    kind: str,
    budget: search.Budget = search.DEFAULT_BUDGET,
    out_of_time: Callable[[], bool] = search.never,
) -> BotKind:
    """The bot ``kind`` of ``game_type``; KeyError when there is none.
    ``budget`` and ``out_of_time`` bound the ``strong`` bot's search."""
    if kind == RANDOM:
        return BotKind(game_type, kind, random_bot, _DESCRIPTIONS[RANDOM])
    rules = registry.rules_for(game_type)
    if kind == STRONG and kind in bot_kinds(game_type):
        strong = StrongBot(rules.bots[HEURISTIC], budget, out_of_time)
        return BotKind(game_type, kind, strong, _DESCRIPTIONS[STRONG])
    play = rules.bots.get(kind)
    if play is None:
        raise KeyError(f"no bot {kind!r} for {game_type!r}")
    description = _DESCRIPTIONS.get(kind, f"the {kind} player")
    return BotKind(game_type, kind, play, description)


@dataclass(frozen=True)
class BotGame:
    """How a game of bots went: the outcome, its length (game commands and
    stream version, lifecycle included) and each seat's character."""

    seed: str
    winners: tuple[int, ...]
    result: str
    commands: int
    version: int
    characters: dict[int, str]


def play_bot_game(
    rules: GameRules[Any, Any, Any, Any],
    seed: str,
    bots: Sequence[Bot],
    options: Any = None,
    max_commands: int = 100_000,
    acting_order: str = SEAT_ORDER,
) -> BotGame:
    """Play a whole game with ``bots[seat]`` in every seat, in-process.

    It runs the lifecycle the service runs (created, every seat joined in
    order, started), and whenever several seats may act, the lowest one acts
    first (``acting_order`` ``seat``), as the service's bot runner does; so
    the same seed gives the same game here and through the service (with
    its random and heuristic bots; the strong bot's service budget is
    time). ``acting_order`` ``random``: one of them, drawn for every
    decision from the seed and version, acts first instead. Raises
    ValueError if a bot chooses an illegal action, nobody can act, or the
    game outlasts ``max_commands``.
    """
    session = Session(rules)
    state = session.fold([session.create(len(bots), seed, options)])
    for seat, _ in enumerate(bots):
        state = session.fold(session.join(state, f"bot{seat}", "", seat), state)
    state = session.fold(session.start(state, Rng(seed, state.version)), state)
    commands = 0
    while state.status is not Status.FINISHED:
        if commands >= max_commands:
            raise ValueError(f"game {seed!r} did not end in {max_commands} commands")
        active = session.active_seats(state)
        if not active:
            raise ValueError(f"nobody can act in game {seed!r}")
        if acting_order == RANDOM_ORDER:
            seat = Rng(f"order/{seed}", state.version).choice(sorted(active))
        else:
            seat = min(active)
        rng = bot_rng(seed, seat, state.version)
        command = bot_move(rules, state.game, seat, bots[seat], rng)
        _, state = session.advance(state, seat, command, Rng(seed, state.version))
        commands += 1
    outcome = state.outcome
    if outcome is None:  # pragma: no cover - FINISHED always has an outcome
        raise ValueError("a finished game without an outcome")
    return BotGame(
        seed=seed,
        winners=tuple(outcome.winners),
        result=outcome.result,
        commands=commands,
        version=state.version,
        characters=rules.characters(state.game),
    )
