"""A heuristic player of Happy Little Dinosaurs.

It reads the card catalogue (public) and its own view, never the state:

- commit the Point card worth most this round (value plus the trait the
  face-up Disaster gives its dinosaur; Pet Rock and Smoothie counted with
  the best card they could add); in Sudden Death, the highest face value;
- use every optional effect to its own gain: add the best card, grab the
  best card from the leader's hand, keep the better card of two, swap for a
  neighbour's higher card, discard low cards (the hand refills), and with
  the Hungry Plant hand the leader the lowest played card;
- play an Instant during scoring only when it changes the outcome for
  itself: out of the lowest place, or into the highest;
- Disaster Redirect to the leader, Insurance when the Disaster would
  eliminate it or complete a pair, else take it; after a Disaster, discard
  its lowest plain card.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.chance import Rng
from domain.happy_little_dinosaurs.content import (
    Card,
    DisasterType,
    Effect,
    InstantEffect,
    Kind,
    catalogue,
    eliminates,
)
from domain.happy_little_dinosaurs.model import (
    AddPointCardValue,
    Command,
    DiscardCard,
    DiscardCards,
    KeepCard,
    KeepHand,
    LookAtHand,
    LookAtTopCards,
    PassEffect,
    PassInstant,
    Phase,
    PlayDisasterInsurance,
    PlayDisasterRedirect,
    PlayerView,
    PlayPointCard,
    PlayScoreBooster,
    PlayScoreInversion,
    PlayScoreSapper,
    SwapPlayedCards,
    SwapWithNeighbour,
    TakeCard,
    TakeDisaster,
    View,
)

_INSTANT_WORTH = {
    InstantEffect.REDIRECT: 14,
    InstantEffect.INSURE: 13,
    InstantEffect.INVERT: 12,
    InstantEffect.BOOST: 11,
    InstantEffect.SAP: 10,
}


def _card(card_id: str) -> Card:
    return catalogue().cards[card_id]


def _worth(card_id: str) -> int:
    """How much the bot wants to hold a card."""
    card = _card(card_id)
    if card.kind is Kind.INSTANT and card.instant is not None:
        return _INSTANT_WORTH[card.instant]
    return card.value


def _me(view: View, legal: Sequence[Command]) -> PlayerView:
    """The bot's own player: the one whose hand the view shows."""
    active = [p for p in view.players if p.seat in view.active_seats]
    mine = [p for p in active if p.hand or p.commitment is not None]
    return (mine or active or list(view.players))[0]


def _leader(view: View, me: int, among: Sequence[int] | None = None) -> int | None:
    """The living rival with most Escape points (lowest seat on a tie)."""
    rivals = [
        p
        for p in view.players
        if p.seat != me and not p.eliminated and (among is None or p.seat in among)
    ]
    if not rivals:
        return None
    return max(rivals, key=lambda p: (p.escape, -p.seat)).seat


def _round_value(view: View, me: PlayerView, card_id: str) -> int:
    """What committing ``card_id`` scores this round, roughly."""
    card = _card(card_id)
    value = card.value
    others = [_card(c) for c in me.hand if c != card_id]
    if card.effect is Effect.ADD_POINT_CARD_VALUE:
        value += max((c.value for c in others if c.kind is Kind.POINT), default=0)
    elif card.effect is Effect.ADD_EFFECT_CARD_VALUE:
        value += max(
            (
                c.value
                for c in others
                if c.kind is Kind.POINT and c.effect is not Effect.NONE
            ),
            default=0,
        )
    elif card.effect is Effect.SWAP_HIGHEST_AND_LOWEST:
        value -= 3  # it may well turn against its player
    if view.disaster is not None:
        disaster = _card(view.disaster).disaster
        board = next(b for b in catalogue().dinosaurs if b.dinosaur is me.dinosaur)
        if disaster is not None:
            value += board.traits.get(disaster, 0)
    return value


def heuristic_bot(view: View, legal: Sequence[Command], rng: Rng) -> Command:
    """The bot's choice among ``legal``."""
    me = _me(view, legal)
    first = legal[0]
    if isinstance(first, PlayPointCard):
        plays = [c for c in legal if isinstance(c, PlayPointCard)]
        if view.phase is Phase.SUDDEN_DEATH:
            return max(plays, key=lambda c: _card(c.card).value)
        return max(plays, key=lambda c: (_round_value(view, me, c.card), c.card))
    if view.phase is Phase.EFFECTS:
        return _effect(view, me, legal)
    if view.phase is Phase.SCORING:
        return _instant(view, me, legal)
    if view.phase is Phase.DISASTER:
        return _disaster(view, me, legal)
    if view.phase is Phase.DISCARD:
        plain = [
            c
            for c in legal
            if isinstance(c, DiscardCard)
            and _card(c.card).kind is Kind.POINT
            and _card(c.card).value <= 2
        ]
        if plain:
            return min(plain, key=lambda c: (_card(c.card).value, c.card))
        return next(c for c in legal if isinstance(c, KeepHand))
    return first


def _played_value(view: View, seat: int) -> int:
    played = view.players[seat].played
    return _card(played).value if played else 0


def _effect(view: View, me: PlayerView, legal: Sequence[Command]) -> Command:
    for choose in (
        _best_value_added,
        _best_card_taken,
        _best_card_kept,
        _look_at_the_leader,
        _look_at_top_cards,
        _snake_a_better_card,
        _spray_low_cards,
        _feed_the_leader,
    ):
        command = choose(view, me, legal)
        if command is not None:
            return command
    for command in legal:
        if isinstance(command, PassEffect):
            return command
    return legal[0]


def _best_value_added(
    view: View, me: PlayerView, legal: Sequence[Command]
) -> Command | None:
    adds = [c for c in legal if isinstance(c, AddPointCardValue)]
    return max(adds, key=lambda c: (_card(c.card).value, c.card)) if adds else None


def _best_card_taken(
    view: View, me: PlayerView, legal: Sequence[Command]
) -> Command | None:
    takes = [c for c in legal if isinstance(c, TakeCard)]
    return max(takes, key=lambda c: (_worth(c.card), c.card)) if takes else None


def _best_card_kept(
    view: View, me: PlayerView, legal: Sequence[Command]
) -> Command | None:
    keeps = [c for c in legal if isinstance(c, KeepCard)]
    return max(keeps, key=lambda c: (_worth(c.card), c.card)) if keeps else None


def _look_at_the_leader(
    view: View, me: PlayerView, legal: Sequence[Command]
) -> Command | None:
    looks = [c for c in legal if isinstance(c, LookAtHand)]
    if not looks:
        return None
    leader = _leader(view, me.seat, [c.target for c in looks])
    return next(c for c in looks if c.target == leader)


def _look_at_top_cards(
    view: View, me: PlayerView, legal: Sequence[Command]
) -> Command | None:
    return next((c for c in legal if isinstance(c, LookAtTopCards)), None)


def _snake_a_better_card(
    view: View, me: PlayerView, legal: Sequence[Command]
) -> Command | None:
    swaps = [c for c in legal if isinstance(c, SwapWithNeighbour)]
    if not swaps:
        return None
    best = max(swaps, key=lambda c: _played_value(view, c.target))
    if _played_value(view, best.target) > _played_value(view, me.seat):
        return best
    return None


def _spray_low_cards(
    view: View, me: PlayerView, legal: Sequence[Command]
) -> Command | None:
    discards = [c for c in legal if isinstance(c, DiscardCards)]
    if not discards:
        return None
    low = tuple(
        c
        for c in me.hand
        if _card(c).kind is Kind.POINT
        and _card(c).value <= 3
        and _card(c).effect is Effect.NONE
    )[:3]
    return next((d for d in discards if d.cards == low), None)


def _feed_the_leader(
    view: View, me: PlayerView, legal: Sequence[Command]
) -> Command | None:
    """Hungry Plant: give the leader a lower card than the one it played."""
    plants = [c for c in legal if isinstance(c, SwapPlayedCards)]
    leader = _leader(view, me.seat)
    if not plants or leader is None:
        return None

    def gain(c: SwapPlayedCards) -> int:
        other = c.second if c.first == leader else c.first
        return _played_value(view, leader) - _played_value(view, other)

    options = [c for c in plants if leader in (c.first, c.second)]
    if options:
        best = max(options, key=gain)
        if gain(best) > 0:
            return best
    return None


def _instant(view: View, me: PlayerView, legal: Sequence[Command]) -> Command:
    scores = {
        p.seat: p.score
        for p in view.players
        if not p.eliminated and p.score is not None
    }
    if me.seat not in scores or len(scores) < 2:
        return PassInstant()

    def standing(s: dict[int, int]) -> int:
        """2: alone or tied on top; 0: lowest; 1: between (or everyone tied)."""
        high, low = max(s.values()), min(s.values())
        if high == low:
            return 1
        if s[me.seat] == high:
            return 2
        return 0 if s[me.seat] == low else 1

    now = standing(scores)
    best: tuple[int, Command] = (now, PassInstant())
    for command in legal:
        after = dict(scores)
        match command:
            case PlayScoreBooster(target=target):
                after[target] += 2
            case PlayScoreSapper(target=target):
                after[target] -= 2
            case PlayScoreInversion():
                high, low = max(after.values()), min(after.values())
                after = {
                    s: low if v == high else high if v == low else v
                    for s, v in after.items()
                }
            case _:
                continue
        if standing(after) > best[0]:
            best = (standing(after), command)
    return best[1]


def _disaster(view: View, me: PlayerView, legal: Sequence[Command]) -> Command:
    redirects = [c for c in legal if isinstance(c, PlayDisasterRedirect)]
    if redirects:
        leader = _leader(view, me.seat, [c.target for c in redirects])
        return next(c for c in redirects if c.target == leader)
    insurances = [c for c in legal if isinstance(c, PlayDisasterInsurance)]
    if insurances and view.disaster is not None:
        kinds = [_card(c).disaster for c in (*me.disasters, view.disaster)]
        types = [k for k in kinds if isinstance(k, DisasterType)]
        if eliminates(types) or len(types) >= 2:
            return insurances[0]
    return TakeDisaster()
