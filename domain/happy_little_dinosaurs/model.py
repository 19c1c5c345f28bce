"""The shapes of Happy Little Dinosaurs: options, scenario, state, commands,
events and views, all frozen dataclasses mirrored by the game's protos.

Cards are named by id (``pet_rock_1``); their values and effects are in the
catalogue (:mod:`domain.happy_little_dinosaurs.content`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, ClassVar

from domain.happy_little_dinosaurs.content import Dinosaur, catalogue


class Phase(enum.Enum):
    """Where a round is. Phases a player acts in are windows; the others
    pass by themselves within the command that reaches them."""

    SETUP = "setup"
    COMMIT = "commit"  # every living player places a Point card face down
    EFFECTS = "effects"  # Point card effects, one window at a time
    SCORING = "scoring"  # Instants during scoring
    LOWEST = "lowest"  # who takes the Disaster (or Sudden Death)
    SUDDEN_DEATH = "sudden_death"  # the tied lowest play again, face down
    DISASTER = "disaster"  # the player who would take it: Insurance, Redirect
    AFTER_DISASTER = "after_disaster"  # elimination check
    DISCARD = "discard"  # optional discard after taking a Disaster
    ROUND_END = "round_end"  # escape movement
    REFILL = "refill"  # draw to 5, clear the table, flip the next Disaster
    OVER = "over"


class BottomReason(enum.Enum):
    """Why the face-up Disaster went to the bottom of the Disaster deck."""

    ALL_TIED = "all_tied"
    INSURANCE = "insurance"
    SUDDEN_DEATH_OUT_OF_CARDS = "sudden_death_out_of_cards"


# -- options and scenario -----------------------------------------------------


@dataclass(frozen=True)
class Options:
    """``dinosaurs``: the dinosaur of each seat, in seat order; empty means
    seat i plays the i-th of Nervous Rex, Bad Luck Bronto, Cry Ceratops, Stego."""

    dinosaurs: tuple[Dinosaur, ...] = ()


@dataclass(frozen=True)
class Hand:
    """The cards dealt to one seat."""

    cards: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeckOrder:
    """Cards to put on top of a deck, top first (the rest are shuffled below)."""

    cards: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlayerPosition:
    """A seat of a position: its hand (secret), its Disaster Area, its
    Escape Route space (0 to 49) and whether its dinosaur was eliminated
    (then its hand is empty and its Disaster Area a deadly set)."""

    hand: tuple[str, ...] = ()
    disasters: tuple[str, ...] = ()
    escape: int = 0
    eliminated: bool = False


@dataclass(frozen=True)
class Position:
    """A game at the start of a round (admin only, in the scenario): the
    table is clear and the round's Disaster, the top of ``disaster_deck``,
    is about to be flipped. One seat per player; ``rounds_played`` before
    this one; the Main deck top first, the discard pile oldest first, the
    Disaster deck top first. Every card is in one place; ``shuffle_rest``:
    the cards the position places nowhere are shuffled below the listed top
    of their deck (otherwise every card must be placed)."""

    players: tuple[PlayerPosition, ...] = ()
    rounds_played: int = 0
    main_deck: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    disaster_deck: tuple[str, ...] = ()
    shuffle_rest: bool = False


@dataclass(frozen=True)
class Scenario:
    """Fixed draws (admin only). ``hands``: the deal per seat (a seat whose
    hand is not listed, or empty, is dealt from the top of the Main deck);
    ``main_deck`` / ``disaster_deck``: the top of each deck after the deal,
    top first, the rest shuffled below; ``reshuffles``: the top of the Main
    deck after each reshuffle of the discard pile, in order (listed cards not
    in the discard pile at that moment are skipped). ``position``: a game in
    progress to start from (then ``hands``, ``main_deck`` and
    ``disaster_deck`` stay empty; ``reshuffles`` still apply)."""

    hands: tuple[Hand, ...] = ()
    main_deck: tuple[str, ...] = ()
    disaster_deck: tuple[str, ...] = ()
    reshuffles: tuple[DeckOrder, ...] = ()
    position: Position | None = None


# -- state -----------------------------------------------------------------


@dataclass(frozen=True)
class Player:
    """A dinosaur at the table."""

    dinosaur: Dinosaur
    hand: tuple[str, ...] = ()
    disasters: tuple[str, ...] = ()
    escape: int = 0
    eliminated: bool = False


#: A card a viewer does not know, in a state folded from the events it is
#: sent: another seat's card in hand or committed, a deck's card. Hands and
#: decks keep as many cards as they hold; the names a viewer saw in
#: another seat's hand may be out of date (a card can leave it unseen),
#: which no view shows.
UNSEEN = ""


@dataclass(frozen=True)
class State:
    """The whole game, secrets included (folded from a player's events, what
    it does not know is :data:`UNSEEN`)."""

    players: tuple[Player, ...]
    scenario: Scenario | None = None
    phase: Phase = Phase.SETUP
    round: int = 0
    main_deck: tuple[str, ...] = ()  # top first
    discard: tuple[str, ...] = ()  # oldest first; public
    disaster_deck: tuple[str, ...] = ()  # top first
    disaster: str | None = None  # the face-up Disaster card
    committed: dict[int, str] = field(default_factory=dict)  # face down
    played: dict[int, str] = field(default_factory=dict)  # face up, in front
    table: tuple[str, ...] = ()  # Sudden Death cards and played Instants
    effects_done: tuple[str, ...] = ()
    effect: str | None = None  # the Point card whose window is open
    effect_target: int | None = None  # Dino Grabber: whose hand was looked at
    peeked: tuple[str, ...] = ()  # Treenoculars: the cards looked at
    bonus: dict[int, int] = field(default_factory=dict)  # Pet Rock, Smoothie
    scores: dict[int, int] = field(default_factory=dict)
    passed: tuple[int, ...] = ()  # scoring window: passes since the last play
    sudden_death: tuple[int, ...] = ()  # seats still in Sudden Death
    sudden_death_revealed: dict[int, str] = field(default_factory=dict)
    taker: int | None = None  # who would take (or took) the Disaster
    reshuffles_used: int = 0
    withdrawn: tuple[int, ...] = ()  # seats whose players left (rank last)
    winners: tuple[int, ...] = ()
    result: str = ""


# -- commands -----------------------------------------------------------------


@dataclass(frozen=True)
class PlayPointCard:
    """Place a Point card from the hand face down (a round or Sudden Death)."""

    card: str


@dataclass(frozen=True)
class PassEffect:
    """Do not use the effect of the Point card in front of you."""


@dataclass(frozen=True)
class AddPointCardValue:
    """Pet Rock / "Delicious" Smoothie: discard a Point card from the hand
    (for the Smoothie, one with an effect) and add its value to your score."""

    card: str


@dataclass(frozen=True)
class LookAtHand:
    """Dino Grabber: look at another player's hand."""

    target: int


@dataclass(frozen=True)
class TakeCard:
    """Dino Grabber: take one card from the hand you looked at."""

    card: str


@dataclass(frozen=True)
class SwapWithNeighbour:
    """Grappling Snake: swap it with a neighbour's played card (no effect)."""

    target: int


@dataclass(frozen=True)
class DiscardCards:
    """Fire Spray: discard one to three cards from your hand."""

    cards: tuple[str, ...]


@dataclass(frozen=True)
class LookAtTopCards:
    """Treenoculars: look at the top two cards of the Main deck."""


@dataclass(frozen=True)
class KeepCard:
    """Treenoculars: keep one card looked at; the other is discarded."""

    card: str


@dataclass(frozen=True)
class SwapPlayedCards:
    """Hungry Plant: swap the played Point cards of two other players."""

    first: int
    second: int


@dataclass(frozen=True)
class PlayScoreBooster:
    """During scoring: +2 to a player's score."""

    card: str
    target: int


@dataclass(frozen=True)
class PlayScoreSapper:
    """During scoring: -2 to a player's score."""

    card: str
    target: int


@dataclass(frozen=True)
class PlayScoreInversion:
    """During scoring: swap the highest and lowest scores."""

    card: str


@dataclass(frozen=True)
class PassInstant:
    """Play no (more) Instant now."""


@dataclass(frozen=True)
class PlayDisasterInsurance:
    """You would take the Disaster: put it on the bottom of the Disaster deck."""

    card: str


@dataclass(frozen=True)
class PlayDisasterRedirect:
    """You would take the Disaster: give it to another player."""

    card: str
    target: int


@dataclass(frozen=True)
class TakeDisaster:
    """Add the face-up Disaster to your Disaster Area."""


@dataclass(frozen=True)
class DiscardCard:
    """After taking a Disaster: discard one card from your hand."""

    card: str


@dataclass(frozen=True)
class KeepHand:
    """After taking a Disaster: discard nothing."""


Command = (
    PlayPointCard
    | PassEffect
    | AddPointCardValue
    | LookAtHand
    | TakeCard
    | SwapWithNeighbour
    | DiscardCards
    | LookAtTopCards
    | KeepCard
    | SwapPlayedCards
    | PlayScoreBooster
    | PlayScoreSapper
    | PlayScoreInversion
    | PassInstant
    | PlayDisasterInsurance
    | PlayDisasterRedirect
    | TakeDisaster
    | DiscardCard
    | KeepHand
)

COMMAND_TYPES: tuple[type, ...] = (
    PlayPointCard,
    PassEffect,
    AddPointCardValue,
    LookAtHand,
    TakeCard,
    SwapWithNeighbour,
    DiscardCards,
    LookAtTopCards,
    KeepCard,
    SwapPlayedCards,
    PlayScoreBooster,
    PlayScoreSapper,
    PlayScoreInversion,
    PassInstant,
    PlayDisasterInsurance,
    PlayDisasterRedirect,
    TakeDisaster,
    DiscardCard,
    KeepHand,
)


# -- events -------------------------------------------------------------------


@dataclass(frozen=True)
class GameSetUp:
    """The dinosaurs were handed out and both decks shuffled (orders secret:
    blank but for the sizes in a redacted copy)."""

    dinosaurs: tuple[Dinosaur, ...]
    main_deck: tuple[str, ...]
    main_deck_size: int
    disaster_deck: tuple[str, ...]
    disaster_deck_size: int


@dataclass(frozen=True)
class CardsDrawn:
    """``seat`` drew ``count`` cards from the top of the Main deck."""

    seat: int
    cards: tuple[str, ...]
    count: int


@dataclass(frozen=True)
class MainDeckReshuffled:
    """The Main deck ran out: the discard pile was shuffled into a new one."""

    cards: tuple[str, ...]
    count: int


@dataclass(frozen=True)
class DisasterFlipped:
    """A round began: the top Disaster card was flipped face up."""

    round: int
    card: str


@dataclass(frozen=True)
class CardsDiscarded:
    """``seat`` discarded these cards face up (a redraw, Fire Spray)."""

    seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True)
class PointCardCommitted:
    """``seat`` placed a Point card face down (``card`` only for its player)."""

    seat: int
    card: str | None


@dataclass(frozen=True)
class PointCardsRevealed:
    """Every committed Point card was flipped face up, at once."""

    cards: dict[int, str]


@dataclass(frozen=True)
class EffectWindowOpened:
    """``seat`` may now use the effect of ``card`` (or pass)."""

    seat: int
    card: str


@dataclass(frozen=True)
class EffectPassed:
    """The effect of ``card`` was not used (passed, or nothing to use it on)."""

    seat: int
    card: str


@dataclass(frozen=True)
class PointCardValueAdded:
    """Pet Rock / Smoothie: ``seat`` discarded ``discarded`` and added its
    value to the round's score."""

    seat: int
    card: str
    discarded: str
    value: int


@dataclass(frozen=True)
class HandLookedAt:
    """Dino Grabber: ``seat`` looked at ``target``'s hand (the cards only for
    those two)."""

    seat: int
    target: int
    hand: tuple[str, ...]
    count: int


@dataclass(frozen=True)
class CardTaken:
    """Dino Grabber: ``seat`` took a card from ``target`` (only those two see
    which)."""

    seat: int
    target: int
    card: str | None


@dataclass(frozen=True)
class PlayedCardsSwapped:
    """``seat``'s ``card`` swapped the played Point cards of ``first`` and
    ``second``."""

    seat: int
    card: str
    first: int
    second: int


@dataclass(frozen=True)
class EffectCardsDiscarded:
    """Fire Spray: ``seat`` discarded these cards face up."""

    seat: int
    card: str
    cards: tuple[str, ...]


@dataclass(frozen=True)
class TopCardsLookedAt:
    """Treenoculars: ``seat`` took the top cards of the Main deck to look at
    (the cards only for that player)."""

    seat: int
    cards: tuple[str, ...]
    count: int


@dataclass(frozen=True)
class TopCardKept:
    """Treenoculars: ``seat`` kept one card (secret) and discarded the rest."""

    seat: int
    kept: str | None
    discarded: tuple[str, ...]


@dataclass(frozen=True)
class ScoresTallied:
    """Every Point card effect was used: the scores of the round so far
    (card value, trait, Pet Rock / Smoothie)."""

    scores: dict[int, int]


@dataclass(frozen=True)
class MouthTrapSprung:
    """Mouth Trap: the highest and lowest scores are swapped (rules version
    3 on, by the :class:`ScoresSwapped` that follows)."""

    seat: int
    card: str


@dataclass(frozen=True)
class ScoreBoosterPlayed:
    """``seat`` added ``amount`` to ``target``'s score."""

    seat: int
    card: str
    target: int
    amount: int


@dataclass(frozen=True)
class ScoreSapperPlayed:
    """``seat`` took ``amount`` from ``target``'s score."""

    seat: int
    card: str
    target: int
    amount: int


@dataclass(frozen=True)
class ScoreInversionPlayed:
    """``seat`` played Score Inversion: the highest and lowest scores are
    swapped (rules version 3 on, by the :class:`ScoresSwapped` that
    follows)."""

    seat: int
    card: str


@dataclass(frozen=True)
class ScoresSwapped:
    """An inversion (Mouth Trap, Score Inversion) swapped the highest and
    lowest scores: ``scores`` are the new scores of the seats that moved,
    every seat tied at either end (empty: everyone tied, nothing moved).
    Rules versions 1 and 2 did not record it (their fold swapped them)."""

    scores: dict[int, int]


@dataclass(frozen=True)
class InstantPassed:
    """``seat`` passed in the scoring window."""

    seat: int


@dataclass(frozen=True)
class PointsCollected:
    """The highest scores moved along the Escape Route (never backwards)."""

    points: dict[int, int]


@dataclass(frozen=True)
class DisasterSentToBottom:
    """The face-up Disaster went to the bottom of the Disaster deck."""

    card: str
    reason: BottomReason


@dataclass(frozen=True)
class SuddenDeathStarted:
    """These seats tied for the lowest score and play Sudden Death."""

    seats: tuple[int, ...]


@dataclass(frozen=True)
class SuddenDeathCardsRevealed:
    """The Sudden Death cards were flipped face up, at once. ``lowest`` are
    the seats whose card shows the lowest value: one of them faces the
    Disaster, several play Sudden Death again.

    Schema 2 added ``lowest`` (the fold used to work it out); a schema 1
    event is upcast when read, with the same rule.
    """

    schema_version: ClassVar[int] = 2

    cards: dict[int, str]
    lowest: tuple[int, ...]


def lowest_cards(cards: dict[int, str]) -> tuple[int, ...]:
    """The seats, in order, whose card among ``cards`` has the lowest value."""
    values = {seat: catalogue().cards[card].value for seat, card in cards.items()}
    low = min(values.values(), default=0)
    return tuple(seat for seat, value in sorted(values.items()) if value == low)


def sudden_death_cards_revealed_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 had no ``lowest``: it is the seats with the lowest card."""
    cards = {int(seat): card for seat, card in data["cards"].items()}
    return {**data, "lowest": list(lowest_cards(cards))}


@dataclass(frozen=True)
class DisasterFaced:
    """``seat`` would add the face-up Disaster to their Disaster Area."""

    seat: int


@dataclass(frozen=True)
class DisasterInsurancePlayed:
    """``seat`` played Disaster Insurance."""

    seat: int
    card: str


@dataclass(frozen=True)
class DisasterRedirectPlayed:
    """``seat`` sent the Disaster to ``target``."""

    seat: int
    card: str
    target: int


@dataclass(frozen=True)
class DisasterTaken:
    """``seat`` added ``card`` to their Disaster Area."""

    seat: int
    card: str


@dataclass(frozen=True)
class PlayerEliminated:
    """``seat`` collected a deadly set of Disasters and discarded the hand."""

    seat: int
    discarded: tuple[str, ...]


@dataclass(frozen=True)
class DiscardOffered:
    """``seat`` took a Disaster and may discard a card."""

    seat: int


@dataclass(frozen=True)
class DisasterDiscardChosen:
    """After taking a Disaster, ``seat`` discarded ``card`` (None: none)."""

    seat: int
    card: str | None


@dataclass(frozen=True)
class EscapeMoved:
    """End of the round: every living dinosaur moved one space per Disaster."""

    moves: dict[int, int]


@dataclass(frozen=True)
class TableCleared:
    """The face-up Point and Instant cards went to the discard pile."""

    cards: tuple[str, ...]


@dataclass(frozen=True)
class PlayerWithdrew:
    """``seat``'s player left the game (rules version 3 on): its dinosaur
    races on for nobody, played by a passive stand-in, and ranks below every
    seat still in."""

    seat: int


@dataclass(frozen=True)
class GameWon:
    """The game is over: ``winners`` reached 50 on their Escape Route (the
    highest total among those who did; ``result`` "escaped"), are the last
    dinosaur not eliminated ("last_standing"), or, when only the dinosaurs
    of seats that left reached 50, are the seats still in furthest along
    ("leaver_escaped"). A seat that left is never among them."""

    winners: tuple[int, ...]
    result: str


Event = (
    GameSetUp
    | CardsDrawn
    | MainDeckReshuffled
    | DisasterFlipped
    | CardsDiscarded
    | PointCardCommitted
    | PointCardsRevealed
    | EffectWindowOpened
    | EffectPassed
    | PointCardValueAdded
    | HandLookedAt
    | CardTaken
    | PlayedCardsSwapped
    | EffectCardsDiscarded
    | TopCardsLookedAt
    | TopCardKept
    | ScoresTallied
    | MouthTrapSprung
    | ScoreBoosterPlayed
    | ScoreSapperPlayed
    | ScoreInversionPlayed
    | ScoresSwapped
    | InstantPassed
    | PointsCollected
    | DisasterSentToBottom
    | SuddenDeathStarted
    | SuddenDeathCardsRevealed
    | DisasterFaced
    | DisasterInsurancePlayed
    | DisasterRedirectPlayed
    | DisasterTaken
    | PlayerEliminated
    | DiscardOffered
    | DisasterDiscardChosen
    | EscapeMoved
    | TableCleared
    | PlayerWithdrew
    | GameWon
)

EVENT_TYPES: tuple[type, ...] = (
    GameSetUp,
    CardsDrawn,
    MainDeckReshuffled,
    DisasterFlipped,
    CardsDiscarded,
    PointCardCommitted,
    PointCardsRevealed,
    EffectWindowOpened,
    EffectPassed,
    PointCardValueAdded,
    HandLookedAt,
    CardTaken,
    PlayedCardsSwapped,
    EffectCardsDiscarded,
    TopCardsLookedAt,
    TopCardKept,
    ScoresTallied,
    MouthTrapSprung,
    ScoreBoosterPlayed,
    ScoreSapperPlayed,
    ScoreInversionPlayed,
    ScoresSwapped,
    InstantPassed,
    PointsCollected,
    DisasterSentToBottom,
    SuddenDeathStarted,
    SuddenDeathCardsRevealed,
    DisasterFaced,
    DisasterInsurancePlayed,
    DisasterRedirectPlayed,
    DisasterTaken,
    PlayerEliminated,
    DiscardOffered,
    DisasterDiscardChosen,
    EscapeMoved,
    TableCleared,
    PlayerWithdrew,
    GameWon,
)


# -- views --------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerView:
    """One dinosaur as a viewer sees it."""

    seat: int
    dinosaur: Dinosaur
    hand: tuple[str, ...]  # only the viewer's own hand
    hand_size: int
    disasters: tuple[str, ...]
    escape: int
    eliminated: bool
    committed: bool  # a card lies face down in front of this player
    commitment: str | None  # that card, for its own player only
    played: str | None  # the face-up Point card in front of this player
    bonus: int
    score: int | None  # the round's score once tallied
    sudden_death_card: str | None  # the last Sudden Death card revealed


@dataclass(frozen=True)
class View:
    """The game as one viewer may see it."""

    players: tuple[PlayerView, ...]
    phase: Phase
    round: int
    disaster: str | None
    main_deck_size: int
    disaster_deck_size: int
    discard: tuple[str, ...]
    table: tuple[str, ...]
    effects_done: tuple[str, ...]
    effect: str | None
    effect_seat: int | None
    effect_target: int | None
    looked_at: tuple[str, ...]  # Dino Grabber: the target's hand, grabber only
    peeked: tuple[str, ...]  # Treenoculars: the cards, their player only
    peeked_count: int
    passed: tuple[int, ...]
    sudden_death: tuple[int, ...]
    taker: int | None
    active_seats: tuple[int, ...]
    winners: tuple[int, ...]
