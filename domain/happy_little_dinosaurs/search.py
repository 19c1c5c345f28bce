"""What the strong bot (:mod:`domain.search`) needs of Happy Little
Dinosaurs: a deal of the cards a seat cannot see, and a judge of a round
left unfinished.

A seat sees its own hand and face-down card, every face-up card, and, while
its own Dino Grabber or Treenoculars window is open, the hand or the top
cards it looked at. The rest (other hands, other seats' face-down cards,
the Main deck's order, cards another seat is looking at, the Disaster
deck's order, a scenario's scripted reshuffles) is dealt again: the hidden
Main cards are pooled and dealt back into the same places, a face-down
card always a Point card.
"""

from __future__ import annotations

from dataclasses import replace

from domain.chance import Rng
from domain.happy_little_dinosaurs.content import Kind, catalogue
from domain.happy_little_dinosaurs.model import State
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

    def evaluate(self, state: State, seat: int) -> float:
        def standing(s: int) -> float:
            p = state.players[s]
            return -100.0 if p.eliminated else p.escape - 6 * len(p.disasters)

        rival = max(standing(s) for s in range(len(state.players)) if s != seat)
        return min(max(0.5 + (standing(seat) - rival) / 60, 0.0), 1.0)


SEARCH = HappyLittleDinosaursSearch()
