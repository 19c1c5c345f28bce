"""A heuristic player of Cubosaurs.

Everything in Cubosaurs is public but the deck, so the bot scores what it
sees with the game's own scoring (:mod:`domain.cubosaurs.scoring`) and
judges a move by its lead: its round score minus the best other score.

- Take the packet when that leaves it better off than passing any card;
  otherwise pass the card whose loss hurts least (a Pterodactyl or a lone
  T-Rex beyond the first often helps to lose).
- After the take or pass (advanced mode), buy the tile that gains most, when
  it gains more than the tokens it costs are worth at the end (a point per
  pair); the Extinction Event and the Poacher with their best target.
- When owed DNA tokens, claim them from the richest other seat.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.chance import Rng
from domain.cubosaurs.content import (
    TILES,
    Effect,
    Timing,
    count_kinds,
    score_round,
    tile_score,
)
from domain.cubosaurs.model import (
    BuyTile,
    ClaimDnaTokens,
    Command,
    EndTurn,
    PassPacket,
    Phase,
    TakePacket,
    View,
)


class _Lead:
    """My round score minus the best other, for collections as they might
    be (tiles and instant points as they stand), each scored once."""

    def __init__(self, view: View, me: int) -> None:
        self.me = me
        self.tiles = [tuple(t.id for t in p.tiles) for p in view.players]
        self.instant = [p.round_score.instant for p in view.players]
        self.known: dict[tuple[tuple[int, ...], ...], int] = {}

    def __call__(self, collections: Sequence[Sequence[int]]) -> int:
        key = tuple(tuple(sorted(c)) for c in collections)
        if key not in self.known:
            scores = score_round(collections, self.tiles, self.instant)
            others = [s.total for s in scores if s.seat != self.me]
            self.known[key] = scores[self.me].total - max(others, default=0)
        return self.known[key]


def _collections(view: View) -> list[list[int]]:
    return [[c.id for c in p.collection] for p in view.players]


def heuristic_bot(view: View, legal: Sequence[Command], rng: Rng) -> Command:
    """The bot's choice among ``legal``."""
    claims = [c for c in legal if isinstance(c, ClaimDnaTokens)]
    if claims:
        return max(
            claims, key=lambda c: (view.players[c.from_seat].dna_tokens, -c.from_seat)
        )
    me = view.turn
    now = _collections(view)
    lead = _Lead(view, me)
    if view.phase is Phase.TURN:
        return _take_or_pass(view, me, now, legal, lead)
    best = _best_purchase(view, me, now, legal, lead)
    if best is not None:
        return best
    for command in legal:
        if isinstance(command, EndTurn):
            return command
    return legal[0]


def _take_or_pass(
    view: View, me: int, now: list[list[int]], legal: Sequence[Command], lead: _Lead
) -> Command:
    def after_take() -> int:
        taken = [list(c) for c in now]
        taken[me] += [c.id for c in view.packet]
        return lead(taken)

    def after_pass(card: int) -> int:
        passed = [list(c) for c in now]
        passed[me].remove(card)
        return lead(passed)

    passes = [c for c in legal if isinstance(c, PassPacket)]
    take = next((c for c in legal if isinstance(c, TakePacket)), None)
    if not passes:
        return take or legal[0]
    best_pass = max(passes, key=lambda c: (after_pass(c.card), -c.card))
    if take is not None and after_take() >= after_pass(best_pass.card):
        return take
    return best_pass


def _best_purchase(
    view: View, me: int, now: list[list[int]], legal: Sequence[Command], lead: _Lead
) -> Command | None:
    base = lead(now)
    counts = count_kinds(now[me])
    sizes = [len(c) for c in now]

    def gain(command: BuyTile) -> int:
        tile = TILES[command.tile]
        if tile.effect is Effect.GAIN_POINTS:
            return tile.points
        if tile.timing is Timing.END_OF_ROUND:
            return tile_score(tile, counts, sizes, me)
        changed = [list(c) for c in now]
        if command.card is None:
            return 0
        for collection in changed:
            if command.card in collection:
                collection.remove(command.card)
        if tile.effect is Effect.TAKE_CARD:
            changed[me].append(command.card)
        return lead(changed) - base

    buys = [c for c in legal if isinstance(c, BuyTile)]
    if not buys:
        return None
    best = max(buys, key=lambda c: (2 * gain(c) - TILES[c.tile].cost, -c.tile))
    if 2 * gain(best) > TILES[best.tile].cost:
        return best
    return None
