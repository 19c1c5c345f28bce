"""What the strong bot (:mod:`domain.search`) needs of Happy Little
Dinosaurs: a deal of the cards a seat cannot see, and a judge of a
position a playout stops at.

A seat sees its own hand and face-down card, every face-up card, and, while
its own Dino Grabber or Treenoculars window is open, the hand or the top
cards it looked at. The rest (other hands, other seats' face-down cards,
the Main deck's order, cards another seat is looking at, the Disaster
deck's order, a scenario's scripted reshuffles) is dealt again: the hidden
Main cards are pooled and dealt back into the same places, a face-down
card always a Point card.
"""

from __future__ import annotations

import math
from dataclasses import replace

from domain.chance import Rng
from domain.happy_little_dinosaurs.content import (
    InstantEffect,
    Kind,
    catalogue,
    eliminates,
)
from domain.happy_little_dinosaurs.model import Phase, State
from domain.search import shuffled_into


def _is_point(card: str) -> bool:
    return catalogue().cards[card].kind is Kind.POINT


class HappyLittleDinosaursSearch:
    """The adapter (:class:`domain.rules.Search`)."""

    #: Playouts are cheap: to the end of the game.
    horizon = 400

    def determinise(self, state: State, seat: int, rng: Rng) -> State:
        effect_seat = next(
            (s for s, c in state.played.items() if c == state.effect), None
        )
        mine = effect_seat == seat
        looked_at = state.effect_target if mine else None
        hands = [seat == s or s == looked_at for s in range(len(state.players))]
        committed = sorted(s for s in state.committed if s != seat)
        hidden = [
            *(c for s, p in enumerate(state.players) if not hands[s] for c in p.hand),
            *(state.committed[s] for s in committed),
            *state.main_deck,
            *(() if mine else state.peeked),
        ]
        # Face-down cards first, each the first Point card of the shuffle.
        cards = list(shuffled_into(hidden, [len(hidden)], rng)[0])
        faces: dict[int, str] = {}
        for s in committed:
            card = next((c for c in cards if _is_point(c)), cards[0])
            cards.remove(card)
            faces[s] = card
        sizes = [0 if hands[s] else len(p.hand) for s, p in enumerate(state.players)]
        sizes += [len(state.main_deck), 0 if mine else len(state.peeked)]
        slots, at = [], 0
        for size in sizes:
            slots.append(tuple(cards[at : at + size]))
            at += size
        players = tuple(
            p if hands[s] else replace(p, hand=slots[s])
            for s, p in enumerate(state.players)
        )
        return replace(
            state,
            players=players,
            committed={**state.committed, **faces},
            main_deck=slots[-2],
            peeked=state.peeked if mine else slots[-1],
            disaster_deck=shuffled_into(
                state.disaster_deck, [len(state.disaster_deck)], rng
            )[0],
            scenario=None,
        )

    def resting(self, state: State) -> bool:
        """The start of a round (the Disaster face up, no card committed)
        with two dinosaurs left: where :data:`DUEL` judges a playout."""
        return (
            state.phase is Phase.COMMIT
            and not state.committed
            and sum(not p.eliminated for p in state.players) == 2
        )

    def evaluate(self, state: State, seat: int) -> float:
        """A duel (two dinosaurs left): :data:`DUEL`'s chance that ``seat``
        wins; otherwise Escape points less 6 a Disaster against the best
        rival's."""
        living = [s for s, p in enumerate(state.players) if not p.eliminated]
        if len(living) == 2 and seat in living:
            features = duel_features(state, seat, sum(living) - seat)
            z = sum(w * x for w, x in zip(DUEL, features, strict=True))
            return 1 / (1 + math.exp(-z))

        def standing(s: int) -> float:
            p = state.players[s]
            return -100.0 if p.eliminated else p.escape - 6 * len(p.disasters)

        rival = max(standing(s) for s in range(len(state.players)) if s != seat)
        return min(max(0.5 + (standing(seat) - rival) / 60, 0.0), 1.0)


def _kill(disasters: tuple[str, ...], deck: tuple[str, ...]) -> float:
    """The share of ``deck`` that would eliminate the holder of
    ``disasters``."""
    if not deck:
        return 0.0
    cards = catalogue().cards
    held = [cards[c].disaster for c in disasters]
    return sum(
        eliminates(t for t in (*held, cards[c].disaster) if t is not None) for c in deck
    ) / len(deck)


def _player(state: State, seat: int) -> list[float]:
    """One dinosaur's side of a duel, in the order of :data:`SIDE`."""
    cards = catalogue().cards
    p = state.players[seat]
    face_up = cards[state.disaster].disaster if state.disaster else None
    held = [t for t in (cards[c].disaster for c in p.disasters) if t is not None]
    values = sorted(
        (cards[c].value for c in p.hand if cards[c].kind is Kind.POINT), reverse=True
    )
    top = [*values, 0, 0, 0]
    instants = [cards[c].instant for c in p.hand]
    return [
        len(p.disasters),
        _kill(p.disasters, state.disaster_deck),
        p.escape / 50,
        float(face_up is not None and eliminates([*held, face_up])),
        top[0],
        top[1],
        sum(top[:3]),
        len(values),
        instants.count(InstantEffect.BOOST) + instants.count(InstantEffect.SAP),
        instants.count(InstantEffect.INVERT),
        instants.count(InstantEffect.INSURE),
        instants.count(InstantEffect.REDIRECT),
    ]


#: What :func:`_player` measures of one dinosaur: Disasters held, the
#: share of the Disaster deck that would eliminate it, Escape points / 50,
#: whether the face-up Disaster would eliminate it, its hand's best, second
#: best and best three Point values, how many Point cards it holds, its
#: Boosters and Sappers, Inversions, Insurances and Redirects.
SIDE = (
    "disasters",
    "kill",
    "escape",
    "lethal",
    "best",
    "second",
    "best_three",
    "points",
    "boost_sap",
    "inversions",
    "insurances",
    "redirects",
)


def duel_features(state: State, seat: int, rival: int) -> list[float]:
    """What :data:`DUEL` weighs at the start of a round of two: each
    :data:`SIDE` measure, ``seat``'s minus ``rival``'s, then where the
    face-up Disaster would eliminate one of them, how that weighs the
    hands, and a constant 1."""
    a, b = _player(state, seat), _player(state, rival)
    lethal_a, lethal_b = a[3], b[3]
    best = a[4] - b[4]
    boost_sap = a[8] - b[8]
    return [
        *(x - y for x, y in zip(a, b, strict=True)),
        lethal_a * best,
        lethal_b * best,
        lethal_a * a[6],
        lethal_b * b[6],
        lethal_a * boost_sap,
        lethal_b * boost_sap,
        lethal_a * lethal_b,
        lethal_a * a[7],
        lethal_b * b[7],
        1.0,
    ]


#: The weights of a logistic model of the chance that ``seat`` wins a duel
#: from :func:`duel_features` at the start of a round, fitted on the
#: heuristic bot's two-player games (``scripts/fit_hld_evaluation.py``).
DUEL: tuple[float, ...] = (
    # seat's minus rival's, in the order of SIDE
    -0.2448,
    -0.3395,
    1.4484,
    0.1345,
    0.1436,
    0.0936,
    -0.0226,
    -0.6764,
    -0.0644,
    0.4990,
    -0.1734,
    0.4152,
    # the face-up Disaster's weight on the hands; the constant
    0.0989,
    0.0989,
    0.0307,
    -0.0307,
    -0.0911,
    -0.0911,
    0.0000,
    -0.2857,
    0.2857,
    0.0000,
)


SEARCH = HappyLittleDinosaursSearch()
