"""The World, Travel (Tarpit, Volcano, Lava Flow, Secret Caves), Explore,
Resupply and the Rocket Docket."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from domain.errors import InvalidCommand, RuleViolation
from domain.escaping_extinction import RULES
from domain.escaping_extinction.content import DieColour
from domain.escaping_extinction.model import (
    ActionKind,
    ActionTaken,
    CollectRocketPart,
    DieRolled,
    DinoDamaged,
    DinoTravelled,
    EndTurn,
    ExplorationCardDiscarded,
    ExplorationCardDrawn,
    Explore,
    LavaFlowPlaced,
    LeaveResource,
    MakeRoom,
    Pending,
    PendingKind,
    Resource,
    ResourceGained,
    ResourceLeft,
    ResourceReturned,
    ResourceTaken,
    Resupplied,
    Resupply,
    RocketDocketCardRevealed,
    RocketDocketClosed,
    RocketPartCollected,
    RollPurpose,
    RoomMade,
    RoomNeeded,
    Scenario,
    SecretCavesPlaced,
    Source,
    TarpitHeld,
    TileRevealed,
    Travel,
    TravelMode,
    TurnEnded,
)
from tests.gamekit import when
from tests.games.escaping_extinction.helpers import (
    DOCKET,
    LAYOUT,
    REX,
    SARA,
    TERRY,
    dino,
    layout_with,
    move,
    reveal,
    setup,
    table,
    top,
    turn_of,
)

WALK, PUSH, CAVE = TravelMode.WALK, TravelMode.PUSH, TravelMode.CAVE
# Default layout: 1 Tarpit, 2 Volcano, 3 Pine Forest (Wood), 4 Fern Grove,
# 5 Redwood Ridge, 6 Cycad Thicket, 7 Driftwood Beach, 8 Berry Bushes (Food),
# 9 Fish Lake, 10 Egg Nest, 11 Mushroom Glade, 12 Vine Jungle (Vine) ...,
# 16 Bone Yard, 17 Crystal Cave, 18 Windy Plateau (no resource).
# Position 1 neighbours 0, 2, 3, 7, 8, 10; position 3 neighbours 0, 1, 5,
# 10, 12, 14.


def food(n: int, d=TERRY) -> list[Any]:
    """Bring ``d``'s Food down to ``n`` (from a full 4)."""
    return [ResourceReturned(d, Resource.FOOD) for _ in range(4 - n)]


# -- Travel ---


def test_travel_to_a_face_down_tile_spends_food_and_reveals_it_with_its_resource() -> (
    None
):
    state = table(setup())
    assert when(RULES, state, 0, Travel(TERRY, 3, WALK)) == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DinoTravelled(TERRY, 0, 3, WALK, 1),
        TileRevealed(3, "pine_forest", True, Resource.WOOD),
    ]


def test_a_revealed_tile_of_a_resource_gets_no_token_once_the_supply_is_empty() -> None:
    state = table(setup())
    state = dataclasses.replace(state, supply=dataclasses.replace(state.supply, wood=0))
    assert when(RULES, state, 0, Travel(TERRY, 3, WALK))[-1] == TileRevealed(
        3, "pine_forest", False, Resource.WOOD
    )


def test_travel_onto_a_revealed_tile_does_not_reveal_it_again() -> None:
    state = table([*setup(), reveal(3)])
    assert when(RULES, state, 0, Travel(TERRY, 3, WALK)) == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DinoTravelled(TERRY, 0, 3, WALK, 1),
    ]


def test_travel_to_a_tile_that_is_not_adjacent_is_refused() -> None:
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(setup()), 0, Travel(TERRY, 12, WALK))
    assert err.value.reason == "NOT_ADJACENT"


def test_a_dino_without_food_cannot_travel() -> None:
    state = table([*setup(), *food(0)])
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, Travel(TERRY, 3, WALK))
    assert err.value.reason == "NOT_ENOUGH_FOOD"
    assert not any(isinstance(c, Travel) for c in RULES.legal_actions(state, 0))


def test_travelling_out_of_the_tarpit_costs_two_food() -> None:
    state = table([*setup(), reveal(1), *move(TERRY, 1)])
    assert when(RULES, state, 0, Travel(TERRY, 0, WALK))[1] == DinoTravelled(
        TERRY, 1, 0, WALK, 2
    )
    state = table([*setup(), reveal(1), *move(TERRY, 1), *food(1)])
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, Travel(TERRY, 0, WALK))
    assert err.value.reason == "NOT_ENOUGH_FOOD"


def test_pushing_out_of_the_tarpit_on_one_food_succeeds_on_a_three() -> None:
    events = [*setup(), reveal(1), *move(TERRY, 1), *food(1)]
    state = table(events, scenario=Scenario(die_faces=(6,)))
    assert when(RULES, state, 0, Travel(TERRY, 0, PUSH)) == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DieRolled(TERRY, RollPurpose.TARPIT, 6, 3, DieColour.RED),
        DinoTravelled(TERRY, 1, 0, PUSH, 1),
    ]


def test_a_failed_push_wastes_the_food_and_the_action() -> None:
    events = [*setup(), reveal(1), *move(TERRY, 1)]
    state = table(events, scenario=Scenario(die_faces=(2,)))
    assert when(RULES, state, 0, Travel(TERRY, 0, PUSH)) == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DieRolled(TERRY, RollPurpose.TARPIT, 2, 2, DieColour.GREEN),
        TarpitHeld(TERRY, 1),
    ]


def test_only_a_dino_in_the_tarpit_can_push() -> None:
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(setup()), 0, Travel(TERRY, 1, PUSH))
    assert err.value.reason == "NOT_IN_TARPIT"


def test_travelling_onto_the_volcano_deals_the_number_rolled() -> None:
    state = table(setup(), scenario=Scenario(die_faces=(5,)))
    assert when(RULES, state, 0, Travel(TERRY, 2, WALK)) == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DinoTravelled(TERRY, 0, 2, WALK, 1),
        TileRevealed(2, "volcano", False, None),
        DieRolled(TERRY, RollPurpose.VOLCANO, 5, 2, DieColour.RED),
        DinoDamaged(TERRY, 2, 4),
    ]


def test_leaving_the_volcano_deals_no_damage() -> None:
    state = table([*setup(), reveal(2), *move(TERRY, 2)])
    assert when(RULES, state, 0, Travel(TERRY, 0, WALK)) == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DinoTravelled(TERRY, 2, 0, WALK, 1),
    ]


def test_travelling_onto_a_lava_flow_deals_one_damage_and_leaving_it_none() -> None:
    events = [*setup(), reveal(3), LavaFlowPlaced(3)]
    assert when(RULES, table(events), 0, Travel(TERRY, 3, WALK))[-1] == DinoDamaged(
        TERRY, 1, 5
    )
    events = [*events, *move(TERRY, 3)]
    assert when(RULES, table(events), 0, Travel(TERRY, 0, WALK)) == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DinoTravelled(TERRY, 3, 0, WALK, 1),
    ]


def test_the_secret_cave_takes_a_dino_to_the_other_cave_for_no_food() -> None:
    events = [*setup(), reveal(3), *move(TERRY, 3), SecretCavesPlaced(3, 17)]
    assert when(RULES, table(events), 0, Travel(TERRY, 17, CAVE)) == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DinoTravelled(TERRY, 3, 17, CAVE, 0),
        TileRevealed(17, "crystal_cave", False, None),
    ]


def test_the_secret_cave_leads_only_to_the_other_cave() -> None:
    events = [*setup(), reveal(3), *move(TERRY, 3), SecretCavesPlaced(3, 17)]
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(events), 0, Travel(TERRY, 12, CAVE))
    assert err.value.reason == "NOT_THE_OTHER_CAVE"
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(setup()), 0, Travel(TERRY, 12, CAVE))
    assert err.value.reason == "NO_SECRET_CAVE"


def test_the_secret_cave_out_of_the_tarpit_costs_one_food() -> None:
    events = [*setup(), reveal(1), *move(TERRY, 1), SecretCavesPlaced(1, 17)]
    assert when(RULES, table(events), 0, Travel(TERRY, 17, CAVE))[1] == DinoTravelled(
        TERRY, 1, 17, CAVE, 1
    )


def test_the_secret_cave_onto_the_volcano_deals_its_damage() -> None:
    layout = layout_with(volcano=17)
    events = [*setup(layout=layout), reveal(3, layout=layout), *move(TERRY, 3)]
    events.append(SecretCavesPlaced(3, 17))
    state = table(events, scenario=Scenario(die_faces=(3,)))
    assert when(RULES, state, 0, Travel(TERRY, 17, CAVE))[-1] == DinoDamaged(
        TERRY, 3, 3
    )


# -- Explore ---


def _rex_on(position: int, **setup_args: Any) -> list[Any]:
    return [*setup(**setup_args), *turn_of(REX), reveal(position), *move(REX, position)]


def test_explore_takes_the_tiles_resource_then_draws_an_exploration_card() -> None:
    state = table(_rex_on(3, exploration=top("thorn_bush_1")))
    assert when(RULES, state, 0, Explore(REX)) == [
        ActionTaken(REX, ActionKind.EXPLORE),
        ResourceTaken(REX, Resource.WOOD),
        ExplorationCardDrawn(REX, "thorn_bush_1"),
        ExplorationCardDiscarded("thorn_bush_1"),
        DinoDamaged(REX, 1, 5),
    ]


def test_a_taken_resource_is_not_replaced() -> None:
    events = [*_rex_on(3), ResourceTaken(REX, Resource.WOOD)]
    state = table(events)
    assert not state.places[3].token
    new = when(RULES, state, 0, Explore(REX))
    assert not any(isinstance(e, ResourceTaken) for e in new)
    assert isinstance(new[1], ExplorationCardDrawn)


def test_a_tile_without_a_resource_still_yields_a_card() -> None:
    state = table(_rex_on(16, exploration=top("warm_spring_1")))
    assert when(RULES, state, 0, Explore(REX))[1:3] == [
        ExplorationCardDrawn(REX, "warm_spring_1"),
        ExplorationCardDiscarded("warm_spring_1"),
    ]


def test_the_volcano_cannot_be_explored() -> None:
    state = table(_rex_on(2))
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, Explore(REX))
    assert err.value.reason == "CANNOT_EXPLORE_VOLCANO"


def _full_satchel(**setup_args: Any) -> list[Any]:
    events = _rex_on(3, **setup_args)
    events += [ResourceGained(REX, Resource.VINE) for _ in range(4)]
    return events


def test_a_resource_that_does_not_fit_the_satchel_waits_for_a_choice() -> None:
    state = table(_full_satchel())
    assert when(RULES, state, 0, Explore(REX)) == [
        ActionTaken(REX, ActionKind.EXPLORE),
        RoomNeeded(REX, Resource.WOOD, 1, 0, True),
    ]
    after = table([*_full_satchel(), *when(RULES, state, 0, Explore(REX))])
    assert after.pending == Pending(
        PendingKind.MAKE_ROOM, REX, Resource.WOOD, 1, 0, True
    )
    assert RULES.legal_actions(after, 0) == [
        MakeRoom(REX, Resource.VINE),
        LeaveResource(REX),
    ]
    with pytest.raises(RuleViolation) as err:
        when(RULES, after, 0, EndTurn(REX))
    assert err.value.reason == "DECISION_PENDING"


def test_discarding_from_the_satchel_makes_room_then_the_card_is_drawn() -> None:
    base = _full_satchel(exploration=top("warm_spring_1"))
    events = [
        *base,
        ActionTaken(REX, ActionKind.EXPLORE),
        RoomNeeded(REX, Resource.WOOD, 1, 0, True),
    ]
    state = table(events)
    assert when(RULES, state, 0, MakeRoom(REX, Resource.VINE)) == [
        RoomMade(REX, Resource.VINE),
        ResourceTaken(REX, Resource.WOOD),
        ExplorationCardDrawn(REX, "warm_spring_1"),
        ExplorationCardDiscarded("warm_spring_1"),
    ]


def test_leaving_a_resource_keeps_it_on_its_tile() -> None:
    base = _full_satchel(exploration=top("warm_spring_1"))
    events = [
        *base,
        ActionTaken(REX, ActionKind.EXPLORE),
        RoomNeeded(REX, Resource.WOOD, 1, 0, True),
    ]
    state = table(events)
    new = when(RULES, state, 0, LeaveResource(REX))
    assert new[0] == ResourceLeft(REX, Resource.WOOD, Source.TILE)
    assert table([*events, *new]).places[3].token


def test_food_that_does_not_fit_stays_on_its_tile() -> None:
    state = table(_rex_on(8, exploration=top("warm_spring_1")))
    new = when(RULES, state, 0, Explore(REX))
    assert new[1] == ResourceLeft(REX, Resource.FOOD, Source.TILE)


def test_a_card_gain_that_does_not_fit_can_be_left_in_the_supply() -> None:
    # Three Vines: the tile's Wood fills the last slot, the card's 2 Wood wait.
    events = _full_satchel(exploration=top("log_pile_1"))[:-1]
    state = table(events)
    new = when(RULES, state, 0, Explore(REX))
    assert new == [
        ActionTaken(REX, ActionKind.EXPLORE),
        ResourceTaken(REX, Resource.WOOD),
        ExplorationCardDrawn(REX, "log_pile_1"),
        ExplorationCardDiscarded("log_pile_1"),
        RoomNeeded(REX, Resource.WOOD, 0, 2, False),
    ]
    after = table([*events, *new])
    assert when(RULES, after, 0, LeaveResource(REX)) == [
        ResourceLeft(REX, Resource.WOOD, Source.SUPPLY),
        RoomNeeded(REX, Resource.WOOD, 0, 1, False),
    ]


# -- Resupply and the Rocket Docket ---


def test_resupply_refills_food_unloads_wood_and_part_and_reveals_the_next_card() -> (
    None
):
    events = [
        *setup(),
        *food(1),
        ResourceGained(TERRY, Resource.WOOD),
        ResourceGained(TERRY, Resource.WOOD),
        ResourceGained(TERRY, Resource.VINE),
        RocketPartCollected(TERRY, DOCKET[0]),
    ]
    state = table(events)
    assert when(RULES, state, 0, Resupply(TERRY)) == [
        ActionTaken(TERRY, ActionKind.RESUPPLY),
        Resupplied(TERRY, 3, 2, True),
        RocketDocketCardRevealed(DOCKET[1]),
    ]
    after = table([*events, *when(RULES, state, 0, Resupply(TERRY))])
    assert after.launchpad_wood == 2 and after.launchpad_parts == 1
    assert dino(after, TERRY).vines == 1 and dino(after, TERRY).food == 4


def test_resupply_only_happens_on_the_oasis() -> None:
    state = table([*setup(), reveal(3), *move(TERRY, 3)])
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, Resupply(TERRY))
    assert err.value.reason == "NOT_ON_OASIS"


def _on_docket_tile(card: str) -> list[Any]:
    tile = next(c for c in [card])
    from domain.escaping_extinction.content import CONTENT

    position = LAYOUT.index(CONTENT.docket[tile].tile) + 1
    docket = (card, *(c for c in DOCKET if c != card))
    return [
        *setup(docket=docket),
        *turn_of(REX),
        reveal(position),
        *move(REX, position),
    ]


def test_collecting_a_rocket_part_pays_the_card_and_flips_it_face_down() -> None:
    events = _on_docket_tile("berry_fuel")
    state = table(events)
    assert when(RULES, state, 0, CollectRocketPart(REX, "berry_fuel")) == [
        ActionTaken(REX, ActionKind.COLLECT_ROCKET_PART),
        ResourceReturned(REX, Resource.FOOD),
        ResourceReturned(REX, Resource.FOOD),
        RocketPartCollected(REX, "berry_fuel"),
    ]
    after = table(
        [*events, *when(RULES, state, 0, CollectRocketPart(REX, "berry_fuel"))]
    )
    assert after.docket_done == ("berry_fuel",) and after.docket_open == ()
    assert dino(after, REX).rocket_part


def test_a_rocket_part_is_collected_only_on_the_named_tile() -> None:
    state = table(_rex_on(3, docket=top("berry_fuel", deck=DOCKET)))
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, CollectRocketPart(REX, "berry_fuel"))
    assert err.value.reason == "NOT_ON_THAT_TILE"


def test_a_rocket_part_needs_a_face_up_card() -> None:
    state = table(_on_docket_tile("berry_fuel"))
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, CollectRocketPart(REX, "redwood_mast"))
    assert err.value.reason == "CARD_NOT_FACE_UP"


def test_a_dino_holds_only_one_rocket_part() -> None:
    events = [*_on_docket_tile("berry_fuel"), RocketPartCollected(REX, "berry_fuel")]
    events.append(RocketDocketCardRevealed(DOCKET[0]))
    state = table(events)
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, CollectRocketPart(REX, DOCKET[0]))
    assert err.value.reason in ("ALREADY_HOLDS_ROCKET_PART", "NOT_ON_THAT_TILE")


def test_a_dino_injured_collecting_a_part_still_gets_it_and_its_turn_ends() -> None:
    events = [*_on_docket_tile("crystal_engine"), DinoDamaged(REX, 4, 2)]
    state = table(events)
    new = when(RULES, state, 0, CollectRocketPart(REX, "crystal_engine"))
    assert new[:4] == [
        ActionTaken(REX, ActionKind.COLLECT_ROCKET_PART),
        RocketPartCollected(REX, "crystal_engine"),
        DinoDamaged(REX, 2, 0),
        TurnEnded(REX),
    ]


def test_several_rocket_docket_cards_can_be_face_up_at_once() -> None:
    events = [
        *setup(),
        RocketPartCollected(TERRY, "tar_sealed_fuel_tank"),
        RocketDocketCardRevealed(DOCKET[1]),
    ]
    state = table(events)
    assert state.docket_open == (DOCKET[1],)
    events += [ResourceGained(TERRY, Resource.WOOD)]
    # Resupplying the part reveals the next card though the previous is open.
    state = table(events)
    new = when(RULES, state, 0, Resupply(TERRY))
    assert new[-1] == RocketDocketCardRevealed(DOCKET[2])
    assert table([*events, *new]).docket_open == (DOCKET[1], DOCKET[2])


def test_the_fifth_part_flips_every_face_up_card_and_no_more_are_revealed() -> None:
    events: list[Any] = [*setup()]
    for n, card in enumerate(DOCKET[:4]):
        if n:
            events.append(RocketDocketCardRevealed(card))
        events += [RocketPartCollected(SARA, card), ResourceGained(SARA, Resource.WOOD)]
        events += [Resupplied(SARA, 0, 1, True)]
    events += [RocketDocketCardRevealed(DOCKET[4]), RocketDocketCardRevealed(DOCKET[5])]
    fifth = DOCKET[5]
    from domain.escaping_extinction.content import CONTENT

    position = LAYOUT.index(CONTENT.docket[fifth].tile) + 1
    events += [*turn_of(REX), reveal(position), *move(REX, position)]
    events += [ResourceGained(REX, Resource.WOOD), ResourceGained(REX, Resource.VINE)]
    state = table(events)
    new = when(RULES, state, 0, CollectRocketPart(REX, fifth))
    assert RocketDocketClosed((DOCKET[4],)) in new
    after = table([*events, *new])
    assert after.docket_open == () and after.supply.rocket_parts == 0


def test_a_card_id_that_does_not_exist_is_a_malformed_command() -> None:
    with pytest.raises(InvalidCommand) as err:
        when(RULES, table(setup()), 0, CollectRocketPart(TERRY, "warp_drive"))
    assert err.value.reason == "UNKNOWN_CARD"


def test_a_position_off_the_map_is_a_malformed_command() -> None:
    with pytest.raises(InvalidCommand) as err:
        when(RULES, table(setup()), 0, Travel(TERRY, 19, WALK))
    assert err.value.reason == "POSITION_OUT_OF_RANGE"


def test_the_secret_cave_onto_a_lava_flow_deals_its_damage() -> None:
    events = [*setup(), reveal(3), *move(TERRY, 3), reveal(17), LavaFlowPlaced(17)]
    events.append(SecretCavesPlaced(3, 17))
    assert when(RULES, table(events), 0, Travel(TERRY, 17, CAVE)) == [
        ActionTaken(TERRY, ActionKind.TRAVEL),
        DinoTravelled(TERRY, 3, 17, CAVE, 0),
        DinoDamaged(TERRY, 1, 5),
    ]
