"""Escaping Extinction, what may be played: the candidate commands of a
turn, and the checks, one per command type (``check_rule`` and its
table), each raising the reason a command is refused now."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from domain.errors import (
    InvalidCommand,
    RuleViolation,
)
from domain.escaping_extinction.content import (
    CONTENT,
    CardEffect,
    Dino,
    Resource,
    Terrain,
)
from domain.escaping_extinction.model import (
    CollectRocketPart,
    Command,
    DinoState,
    Explore,
    GiveCard,
    GiveItem,
    HealTeammates,
    HealWithVines,
    Item,
    KeepCard,
    LeaveResource,
    LeaveSecretCaves,
    MakeRoom,
    Pending,
    PendingKind,
    PlaceSecretCave,
    PlayCard,
    RedrawCard,
    Resupply,
    State,
    TradeOffer,
    Travel,
    TravelMode,
)
from domain.escaping_extinction.readings import (
    ACTIONS,
    DINOS,
    NAMING_CARDS,
    NOT_WHILE_INJURED,
    OASIS,
    SORTED_NEIGHBOURS,
    caves,
    current_dino,
    dino_name,
    dino_of,
    food_room,
    has_item,
    holds,
    max_health,
    satchel_room,
    terrain_at,
    travel_cost,
)

# -- the commands that may be legal ---------------------------------------------


def decision_candidates(pending: Pending, dino: Dino) -> list[Command]:
    if pending.kind is PendingKind.MAKE_ROOM:
        return [
            MakeRoom(dino, Resource.WOOD),
            MakeRoom(dino, Resource.VINE),
            LeaveResource(dino),
        ]
    if pending.kind is PendingKind.REDRAW:
        return [KeepCard(dino), RedrawCard(dino)]
    return [
        *(PlaceSecretCave(dino, p) for p in range(1, CONTENT.positions)),
        LeaveSecretCaves(dino),
    ]


def action_candidates(state: State, d: DinoState) -> list[Command]:
    dino = d.dino
    here = state.places[d.position]
    out: list[Command] = _travel_candidates(state, d)
    out.append(Explore(dino, False))
    if dino is Dino.LONG_NECK and here.token:
        out.append(Explore(dino, True))
    if d.position == OASIS:
        out.append(Resupply(dino))
    out.extend(
        CollectRocketPart(dino, c)
        for c in state.docket_open
        if CONTENT.docket[c].tile == here.tile
    )
    if dino is Dino.SARA:
        out.append(HealTeammates(dino))
    return out


def _travel_candidates(state: State, d: DinoState) -> list[Command]:
    # Most travel a Dino cannot pay for: its Food rules it out here.
    dino = d.dino
    in_tarpit = terrain_at(state, d.position) is Terrain.TARPIT
    walk = d.food >= travel_cost(TravelMode.WALK, in_tarpit)
    push = in_tarpit and d.food >= travel_cost(TravelMode.PUSH, in_tarpit)
    out: list[Command] = []
    for p in SORTED_NEIGHBOURS[d.position]:
        if walk:
            out.append(Travel(dino, p, TravelMode.WALK))
        if push:
            out.append(Travel(dino, p, TravelMode.PUSH))
    if state.places[d.position].cave and d.food >= travel_cost(
        TravelMode.CAVE, in_tarpit
    ):
        out.extend(Travel(dino, p, TravelMode.CAVE) for p in caves(state))
    return out


def free_candidates(state: State, d: DinoState) -> list[Command]:
    """Healing with Vines, trades with the Dinos on the tile, held cards."""
    dino = d.dino
    out: list[Command] = []
    if d.vines:
        out.extend(
            HealWithVines(dino, o.dino) for o in state.dinos if o.position == d.position
        )
    for other in state.dinos:
        if other.dino is not dino and other.position == d.position:
            out += _trade_candidates(d, other)
    for card in d.held_cards:
        if CONTENT.exploration[card].effect is CardEffect.HEALING_HERBS:
            out.extend(PlayCard(dino, card, o) for o in DINOS)
        else:
            out.append(PlayCard(dino, card, dino))
    return out


def _trade_candidates(d: DinoState, other: DinoState) -> list[Command]:
    """Every item and card either of two Dinos on one tile may hand over."""
    dino = d.dino
    out: list[Command] = []
    for item in Item:
        if has_item(d, item):
            out.append(GiveItem(dino, other.dino, item))
        if has_item(other, item):
            out.append(GiveItem(other.dino, dino, item))
    out.extend(GiveCard(dino, other.dino, c) for c in d.held_cards)
    out.extend(GiveCard(other.dino, dino, c) for c in other.held_cards)
    return out


# -- checking a command: one check per command ------------------------------------
#
# ``_check`` (in the rules class) settles the seat, the turn and a pending
# decision; then :func:`check_rule` asks what every action shares (a named
# card exists, the Dino is not Injured, an action is left) and the one check
# of the command's type, from ``_RULE_CHECKS``. Each raises the reason the
# command is refused now, or returns.


def check_rule(state: State, command: Command) -> None:
    """The rule-specific half of the checks (turn and seat already fine)."""
    d = dino_of(state, command.dino)
    if isinstance(command, NAMING_CARDS):
        catalogue: Collection[str] = (
            CONTENT.docket
            if isinstance(command, CollectRocketPart)
            else CONTENT.exploration
        )
        if command.card not in catalogue:
            raise InvalidCommand("UNKNOWN_CARD", f"There is no card {command.card!r}.")
    if isinstance(command, NOT_WHILE_INJURED) and d.health == 0:
        raise RuleViolation(
            "DINO_INJURED", f"{dino_name(d.dino)} is Injured and cannot act."
        )
    if isinstance(command, ACTIONS) and state.actions_left <= 0:
        raise RuleViolation("NO_ACTIONS_LEFT", "This turn has no action left.")
    check = _RULE_CHECKS.get(type(command))
    if check is not None:
        check(state, d, command)


def _check_travel(state: State, d: DinoState, command: Travel) -> None:
    destination = command.destination
    if not 0 <= destination < CONTENT.positions:
        raise InvalidCommand(
            "POSITION_OUT_OF_RANGE", f"There is no position {destination}."
        )
    in_tarpit = terrain_at(state, d.position) is Terrain.TARPIT
    if command.mode is TravelMode.CAVE:
        _check_cave_travel(state, d, destination)
    else:
        if destination not in CONTENT.neighbours[d.position]:
            raise RuleViolation(
                "NOT_ADJACENT", f"Position {destination} is not adjacent."
            )
        if command.mode is TravelMode.PUSH and not in_tarpit:
            raise RuleViolation(
                "NOT_IN_TARPIT", "Only a Dino in the Tarpit pushes out."
            )
    cost = travel_cost(command.mode, in_tarpit)
    if d.food < cost:
        raise RuleViolation(
            "NOT_ENOUGH_FOOD", f"{dino_name(d.dino)} needs {cost} Food to travel."
        )


def _check_cave_travel(state: State, d: DinoState, destination: int) -> None:
    here = caves(state)
    if d.position not in here:
        raise RuleViolation("NO_SECRET_CAVE", "There is no Secret Cave here.")
    if destination == d.position or destination not in here:
        raise RuleViolation(
            "NOT_THE_OTHER_CAVE", "The Secret Cave leads to the other Cave only."
        )


def _check_explore(state: State, d: DinoState, command: Explore) -> None:
    here = terrain_at(state, d.position)
    if here is Terrain.OASIS:
        raise RuleViolation("CANNOT_EXPLORE_OASIS", "The Oasis cannot be Explored.")
    if here is Terrain.VOLCANO:
        raise RuleViolation("CANNOT_EXPLORE_VOLCANO", "The Volcano cannot be Explored.")
    if command.gamble and d.dino is not Dino.LONG_NECK:
        raise RuleViolation("NOT_LONG_NECK", "Only Long Neck rolls double or nothing.")
    if command.gamble and not state.places[d.position].token:
        raise RuleViolation(
            "NO_RESOURCE_TO_GAMBLE", "There is no resource here to roll for."
        )


def _check_resupply(state: State, d: DinoState, command: Resupply) -> None:
    if d.position != OASIS:
        raise RuleViolation("NOT_ON_OASIS", "Resupply only on the Oasis.")
    refill = food_room(d) > 0 and state.supply.food > 0
    if not (refill or d.wood or d.rocket_part):
        raise RuleViolation(
            "NOTHING_TO_RESUPPLY",
            f"{dino_name(d.dino)} has no Food to refill and nothing to unload.",
        )


def _check_collect(state: State, d: DinoState, command: CollectRocketPart) -> None:
    card = command.card
    if card not in state.docket_open:
        raise RuleViolation(
            "CARD_NOT_FACE_UP", f"{card} is not a face-up Rocket Docket card."
        )
    docket = CONTENT.docket[card]
    if d.rocket_part:
        raise RuleViolation(
            "ALREADY_HOLDS_ROCKET_PART",
            f"{dino_name(d.dino)} already carries a Rocket Part.",
        )
    if state.places[d.position].tile != docket.tile:
        raise RuleViolation(
            "NOT_ON_THAT_TILE",
            f"{docket.name} is found on {CONTENT.tile(docket.tile).name}.",
        )
    if d.food < docket.food or d.wood < docket.wood or d.vines < docket.vines:
        raise RuleViolation(
            "CANNOT_PAY", f"{dino_name(d.dino)} cannot pay what {docket.name} asks."
        )


def _check_heal_teammates(state: State, d: DinoState, command: HealTeammates) -> None:
    if d.dino is not Dino.SARA:
        raise RuleViolation("NOT_SARA", "Only Sara can heal her teammates.")
    if not any(
        o.position == d.position and o.health < max_health(o.dino) for o in state.dinos
    ):
        raise RuleViolation("NOBODY_TO_HEAL", "Nobody here needs healing.")


def _check_heal_with_vines(state: State, d: DinoState, command: HealWithVines) -> None:
    target = command.target
    if d.vines == 0:
        raise RuleViolation("NO_VINES", f"{dino_name(d.dino)} has no Vines.")
    if d.health == 0 and target is not d.dino:
        raise RuleViolation(
            "INJURED_HEALS_ONLY_ITSELF", "An Injured Dino can only heal itself."
        )
    _check_hurt_beside(state, d, target)


def _check_hurt_beside(state: State, d: DinoState, target: Dino) -> None:
    """``target`` stands on ``d``'s tile and is not at full Health."""
    t = dino_of(state, target)
    if t.position != d.position:
        raise RuleViolation(
            "NOT_ON_YOUR_TILE", f"{dino_name(target)} is not on this tile."
        )
    if t.health >= max_health(target):
        raise RuleViolation("FULL_HEALTH", f"{dino_name(target)} is at full Health.")


def _check_give_item(state: State, d: DinoState, command: GiveItem) -> None:
    giver, recipient, item = command.dino, command.recipient, command.item
    g, rec = _check_trade(state, giver, recipient)
    if item is Item.ROCKET_PART:
        has, room = g.rocket_part, not rec.rocket_part
    elif item is Item.FOOD:
        has, room = g.food > 0, food_room(rec) > 0
    else:
        has, room = holds(g, Resource[item.name]) > 0, satchel_room(rec) > 0
    if not has:
        raise RuleViolation(
            "NOTHING_TO_GIVE", f"{dino_name(giver)} has no {item.value}."
        )
    if not room:
        raise RuleViolation(
            "NO_ROOM", f"{dino_name(recipient)} has no room for {item.value}."
        )


def _check_give_card(state: State, d: DinoState, command: GiveCard) -> None:
    g, _ = _check_trade(state, command.dino, command.recipient)
    if command.card not in g.held_cards:
        raise RuleViolation(
            "CARD_NOT_HELD", f"{dino_name(command.dino)} does not hold {command.card}."
        )


def _check_trade(
    state: State, giver: Dino, recipient: Dino
) -> tuple[DinoState, DinoState]:
    if giver is recipient:
        raise InvalidCommand("SAME_DINO", "A Dino cannot trade with itself.")
    cur = current_dino(state).dino
    if cur not in (giver, recipient):
        raise RuleViolation(
            "NOT_PART_OF_TRADE",
            f"Trades on {dino_name(cur)}'s turn involve {dino_name(cur)}.",
        )
    g, rec = dino_of(state, giver), dino_of(state, recipient)
    if g.position != rec.position:
        raise RuleViolation(
            "NOT_ON_YOUR_TILE", "Only Dinos on the same tile can trade."
        )
    if g.health == 0 and rec.health == 0:
        raise RuleViolation("BOTH_INJURED", "Two Injured Dinos cannot trade.")
    return g, rec


def offered_trade(offer: TradeOffer) -> GiveItem | GiveCard:
    """The trade ``offer`` stands for."""
    if offer.item is not None:
        return GiveItem(offer.dino, offer.recipient, offer.item)
    return GiveCard(offer.dino, offer.recipient, offer.card)


def check_accept(state: State, offer: TradeOffer) -> None:
    """The offered trade can happen now (what changed since it was offered,
    the tile, the giver's goods, the recipient's room, may forbid it)."""
    if state.pending is not None:
        raise RuleViolation(
            "DECISION_PENDING",
            f"{dino_name(state.pending.dino)} must first decide "
            f"({state.pending.kind.value.replace('_', ' ')}).",
        )
    check_rule(state, offered_trade(offer))


def _check_play_card(state: State, d: DinoState, command: PlayCard) -> None:
    card, target = command.card, command.target
    if card not in d.held_cards:
        raise RuleViolation(
            "CARD_NOT_HELD", f"{dino_name(d.dino)} does not hold {card}."
        )
    effect = CONTENT.exploration[card].effect
    if effect is CardEffect.HEALING_HERBS:
        _check_hurt_beside(state, d, target)
    elif target is not d.dino:
        raise InvalidCommand(
            "TARGET_NOT_ALLOWED", "Only Healing Herbs targets another Dino."
        )
    if effect is CardEffect.TRAIL_MIX and not (
        food_room(d) > 0 and state.supply.food > 0
    ):
        raise RuleViolation("NO_ROOM", f"{dino_name(d.dino)} has no room for Food.")


def _check_make_room(state: State, d: DinoState, command: MakeRoom) -> None:
    if command.discard is Resource.FOOD:
        raise InvalidCommand(
            "NOT_IN_SATCHEL", "Only Wood and Vines are in the Satchel."
        )
    if holds(d, command.discard) == 0:
        raise RuleViolation(
            "NOTHING_TO_DISCARD", f"{dino_name(d.dino)} has no {command.discard.value}."
        )


def _check_place_cave(state: State, d: DinoState, command: PlaceSecretCave) -> None:
    position = command.position
    if not 0 <= position < CONTENT.positions:
        raise InvalidCommand(
            "POSITION_OUT_OF_RANGE", f"There is no position {position}."
        )
    if position == OASIS:
        raise RuleViolation(
            "CAVE_NOT_ON_OASIS", "A Secret Cave cannot go on the Oasis."
        )
    if position == d.position:
        raise RuleViolation(
            "SAME_TILE", "The two Secret Caves need two different tiles."
        )


def _check_leave_caves(state: State, d: DinoState, command: LeaveSecretCaves) -> None:
    if not caves(state):
        raise RuleViolation("NO_CAVES_TO_LEAVE", "The Secret Caves are not placed yet.")


#: The check of each command type (those without one, LeaveResource,
#: KeepCard, RedrawCard and EndTurn, have nothing to check beyond the turn).
_RULE_CHECKS: dict[type, Callable[[State, DinoState, Any], None]] = {
    Travel: _check_travel,
    Explore: _check_explore,
    Resupply: _check_resupply,
    CollectRocketPart: _check_collect,
    HealTeammates: _check_heal_teammates,
    HealWithVines: _check_heal_with_vines,
    GiveItem: _check_give_item,
    GiveCard: _check_give_card,
    PlayCard: _check_play_card,
    MakeRoom: _check_make_room,
    PlaceSecretCave: _check_place_cave,
    LeaveSecretCaves: _check_leave_caves,
}
