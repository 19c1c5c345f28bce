"""Escaping Extinction's ``evolve``: the pure fold, which decides
nothing (every choice and every draw is in the event)."""

from __future__ import annotations

from typing import Any

from domain.escaping_extinction.content import (
    Dino,
    Resource,
)
from domain.escaping_extinction.model import (
    UNSEEN,
    ActionTaken,
    CardGiven,
    DieRolled,
    DinoDamaged,
    DinoHealed,
    DinoReturnedToOasis,
    DinosHandedOver,
    DinoTravelled,
    EarthquakeStruck,
    Event,
    ExplorationCardDiscarded,
    ExplorationCardDrawn,
    ExplorationCardKept,
    ExplorationCardPlayed,
    ExplorationCardRedrawn,
    ExplorationDeckReshuffled,
    ExtraActionGained,
    Item,
    ItemGiven,
    LavaFlowPlaced,
    MeteorCardDrawn,
    MeteorDeckRanOut,
    MeteorHitEarth,
    MeteorMoved,
    Pending,
    PendingKind,
    RedrawDeclined,
    RedrawOffered,
    ResourceGained,
    ResourceLeft,
    ResourceReturned,
    ResourceTaken,
    Resupplied,
    RocketDocketCardRevealed,
    RocketDocketClosed,
    RocketLaunched,
    RocketPartCollected,
    RoomMade,
    RoomNeeded,
    SecretCavePlacementOffered,
    SecretCavesLeft,
    SecretCavesPlaced,
    State,
    Supply,
    TarpitHeld,
    TileRevealed,
    TokenReturned,
    TradeAccepted,
    TradeDeclined,
    TradeOffer,
    TradeOffered,
    TradeOfferLapsed,
    TurnBegan,
    TurnEnded,
    VineSpent,
    WorldSetUp,
)
from domain.escaping_extinction.readings import (
    COUNTED,
    ESCAPED,
    METEOR_DECK_EMPTY,
    METEOR_HIT_EARTH,
    OASIS,
    RESOURCE_FIELD,
    TURN_INDEX,
    current_dino,
    dino_of,
)
from domain.frozen import replace, without

# -- evolve: the pure fold -----------------------------------------------------


def _with_dino(state: State, dino: Dino, **changes: Any) -> State:
    i = TURN_INDEX[dino]
    dinos = list(state.dinos)
    dinos[i] = replace(dinos[i], **changes)
    return replace(state, dinos=tuple(dinos))


def _with_place(state: State, position: int, **changes: Any) -> State:
    places = list(state.places)
    places[position] = replace(places[position], **changes)
    return replace(state, places=tuple(places))


def _add(state: State, dino: Dino, resource: Resource, n: int) -> State:
    """Move ``n`` of ``resource`` from the Supply to ``dino`` (negative: back)."""
    field = RESOURCE_FIELD[resource]
    d = dino_of(state, dino)
    state = _with_dino(state, dino, **{field: getattr(d, field) + n})
    supply = replace(state.supply, **{field: getattr(state.supply, field) - n})
    return replace(state, supply=supply)


def _supply_add(state: State, resource: Resource, n: int) -> State:
    field = RESOURCE_FIELD[resource]
    supply = replace(state.supply, **{field: getattr(state.supply, field) + n})
    return replace(state, supply=supply)


def _revealed(
    state: State, position: int, tile: str, token: bool, resource: Resource | None
) -> State:
    state = _with_place(state, position, tile=tile, revealed=True, token=token)
    if token and resource is not None:
        state = _supply_add(state, resource, -1)
    return state


def _given(state: State, dino: Dino, recipient: Dino, item: Item) -> State:
    if item is Item.ROCKET_PART:
        state = _with_dino(state, dino, rocket_part=False)
        return _with_dino(state, recipient, rocket_part=True)
    resource = Resource[item.name]
    return _add(_add(state, dino, resource, -1), recipient, resource, 1)


def _relaid(
    state: State,
    positions: tuple[int, ...],
    layout: tuple[str, ...],
    returned: Supply | None,
) -> State:
    """The tiles at ``positions`` laid again face down: ``layout`` (empty in
    a player's event: tiles it does not know), without their tokens and
    Lava Flows, which are ``returned`` to the Supply."""
    tiles = layout or (UNSEEN,) * len(positions)
    for position, tile in zip(positions, tiles, strict=False):
        state = _with_place(
            state, position, tile=tile, revealed=False, token=False, lava=False
        )
    if returned is not None:
        supply = Supply(
            **{f: getattr(state.supply, f) + getattr(returned, f) for f in COUNTED}
        )
        state = replace(state, supply=supply)
    return state


def _drawn(deck: tuple[str, ...]) -> tuple[str, ...]:
    """``deck`` without its top card, the one drawn (a card is always drawn
    from the top; in a player's fold it is a card it did not know)."""
    return deck[1:]


def evolve(state: State, event: Event) -> State:  # noqa: C901 (a flat match table)
    """The state after ``event``."""
    # A turn's everyday events come first: the match tries cases in order.
    r = replace
    match event:
        case TurnBegan(dino, round_, actions, heal_only):
            return r(
                state,
                current=TURN_INDEX[dino],
                round=round_,
                turn_open=True,
                actions_left=actions,
                redraw_used=False,
                waiting_to_heal=bool(heal_only),
            )
        case ActionTaken():
            return r(state, actions_left=state.actions_left - 1)
        case TurnEnded():
            return r(state, turn_open=False, actions_left=0, waiting_to_heal=False)
        case DinoTravelled(dino, _, destination, _, food_spent):
            state = _add(state, dino, Resource.FOOD, -food_spent)
            return _with_dino(state, dino, position=destination)
        case TileRevealed(position, tile, token_placed, resource):
            return _revealed(state, position, tile, token_placed, resource)
        case ExplorationCardDrawn():
            return r(state, exploration_deck=_drawn(state.exploration_deck))
        case ExplorationCardDiscarded(card):
            return r(state, exploration_discard=(*state.exploration_discard, card))
        case ItemGiven(dino, recipient, item):
            return _given(state, dino, recipient, item)
        case ResourceGained(dino, resource):
            return _add(state, dino, resource, 1)
        case ResourceTaken(dino, resource):
            position = dino_of(state, dino).position
            state = _with_place(state, position, token=False)
            state = _supply_add(state, resource, 1)
            return _add(state, dino, resource, 1)
        case ResourceReturned(dino, resource):
            return _add(state, dino, resource, -1)
        case MeteorCardDrawn(card):
            return r(
                state,
                meteor_deck=_drawn(state.meteor_deck),
                meteor_drawn=(*state.meteor_drawn, card),
            )
        case MeteorMoved(_, destination):
            return r(state, meteor=destination)
        case DinoDamaged(dino, _, health):
            return _with_dino(state, dino, health=health)
        case DinoHealed(dino, _, health):
            state = _with_dino(state, dino, health=health)
            # A turn that began Injured is for healing only until healed.
            healed = current_dino(state).health > 0
            return r(state, waiting_to_heal=state.waiting_to_heal and not healed)
        case WorldSetUp(layout, meteors, docket, exploration):
            # The deal fills the face-down places' blank tiles (a position's
            # places keep their faces, tokens, Lava Flows and Caves); a
            # player's copy has no tiles and decks of unseen cards.
            places = (
                state.places[0],
                *(
                    replace(p, tile=tile)
                    for p, tile in zip(state.places[1:], layout, strict=False)
                ),
                *state.places[1 + len(layout) :],
            )
            return r(
                state,
                places=places,
                meteor_deck=meteors or (UNSEEN,) * event.meteor_cards,
                docket_deck=docket or (UNSEEN,) * event.rocket_docket_cards,
                exploration_deck=exploration or (UNSEEN,) * event.exploration_cards,
            )
        case RocketDocketCardRevealed(card):
            return r(
                state,
                docket_deck=_drawn(state.docket_deck),
                docket_open=(*state.docket_open, card),
            )
        case DieRolled():
            return r(state, dice_used=state.dice_used + 1)
        case TarpitHeld(dino, food_spent):
            return _add(state, dino, Resource.FOOD, -food_spent)
        case DinoReturnedToOasis(dino, _):
            return _with_dino(state, dino, position=OASIS)
        case VineSpent(dino):
            return _add(state, dino, Resource.VINE, -1)
        case TokenReturned(position, resource):
            state = _with_place(state, position, token=False)
            return state if resource is None else _supply_add(state, resource, 1)
        case RoomNeeded(dino, resource, from_tile, from_supply, draw_after):
            pending = Pending(
                PendingKind.MAKE_ROOM,
                dino,
                resource=resource,
                from_tile=from_tile,
                from_supply=from_supply,
                draw_after=draw_after,
            )
            return r(state, pending=pending)
        case RoomMade(dino, discarded):
            return r(_add(state, dino, discarded, -1), pending=None)
        case ResourceLeft():
            if (
                state.pending is not None
                and state.pending.kind is PendingKind.MAKE_ROOM
            ):
                return r(state, pending=None)
            return state
        case RedrawOffered(dino, card):
            return r(state, pending=Pending(PendingKind.REDRAW, dino, card=card))
        case RedrawDeclined():
            return r(state, pending=None)
        case ExplorationCardRedrawn(_, card):
            return r(
                state,
                pending=None,
                redraw_used=True,
                exploration_discard=(*state.exploration_discard, card),
            )
        case ExplorationCardKept(dino, card):
            held = dino_of(state, dino).held_cards
            return _with_dino(state, dino, held_cards=(*held, card))
        case ExplorationCardPlayed(dino, card, _):
            held = dino_of(state, dino).held_cards
            state = _with_dino(state, dino, held_cards=without(held, card))
            return r(state, exploration_discard=(*state.exploration_discard, card))
        case ExplorationDeckReshuffled(order):
            # A player's copy has no order: the discards, face down, unseen.
            deck = order or (UNSEEN,) * len(state.exploration_discard)
            return r(
                state,
                exploration_deck=(*state.exploration_deck, *deck),
                exploration_discard=(),
                reshuffles_used=state.reshuffles_used + 1,
            )
        case ExtraActionGained():
            return r(state, actions_left=state.actions_left + 1)
        case LavaFlowPlaced(position):
            state = _with_place(state, position, lava=True)
            supply = r(state.supply, lava_flows=state.supply.lava_flows - 1)
            return r(state, supply=supply)
        case SecretCavePlacementOffered(dino):
            return r(state, pending=Pending(PendingKind.SECRET_CAVES, dino))
        case SecretCavesPlaced(first, second):
            places = tuple(
                r(p, cave=i in (first, second)) for i, p in enumerate(state.places)
            )
            return r(state, places=places, pending=None)
        case SecretCavesLeft():
            return r(state, pending=None)
        case Resupplied(dino, food, wood, rocket_part):
            state = _add(state, dino, Resource.FOOD, food)
            d = dino_of(state, dino)
            state = _with_dino(
                state,
                dino,
                wood=d.wood - wood,
                rocket_part=d.rocket_part and not rocket_part,
            )
            return r(
                state,
                launchpad_wood=state.launchpad_wood + wood,
                launchpad_parts=state.launchpad_parts + int(rocket_part),
            )
        case RocketPartCollected(dino, card):
            state = _with_dino(state, dino, rocket_part=True)
            supply = r(state.supply, rocket_parts=state.supply.rocket_parts - 1)
            return r(
                state,
                supply=supply,
                docket_open=without(state.docket_open, card),
                docket_done=(*state.docket_done, card),
            )
        case RocketDocketClosed(cards):
            return r(
                state,
                docket_open=tuple(c for c in state.docket_open if c not in cards),
                docket_done=(*state.docket_done, *cards),
            )
        case CardGiven(dino, recipient, card):
            state = _with_dino(
                state, dino, held_cards=without(dino_of(state, dino).held_cards, card)
            )
            held = dino_of(state, recipient).held_cards
            return _with_dino(state, recipient, held_cards=(*held, card))
        case EarthquakeStruck(positions, layout, returned):
            state = _relaid(state, positions, layout, returned)
            return r(state, earthquakes_used=state.earthquakes_used + 1)
        case MeteorDeckRanOut():
            return r(state, result=METEOR_DECK_EMPTY)
        case MeteorHitEarth():
            return r(state, result=METEOR_HIT_EARTH)
        case RocketLaunched():
            return r(state, result=ESCAPED)
        case DinosHandedOver(control):
            return r(state, control=control)
        case TradeOffered(dino, recipient, item, card):
            return r(state, offer=TradeOffer(dino, recipient, item, card))
        case TradeAccepted() | TradeDeclined() | TradeOfferLapsed():
            return r(state, offer=None)
    return state
