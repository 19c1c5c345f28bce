"""Exploration cards, the four abilities, health, injury, healing and trading."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import InvalidCommand, RuleViolation
from domain.escaping_extinction import RULES
from domain.escaping_extinction.content import DieColour
from domain.escaping_extinction.model import (
    ActionKind,
    ActionTaken,
    CardGiven,
    CardOrder,
    DieRolled,
    DinoDamaged,
    DinoHealed,
    DinoReturnedToOasis,
    EndTurn,
    ExplorationCardDiscarded,
    ExplorationCardDrawn,
    ExplorationCardKept,
    ExplorationCardPlayed,
    ExplorationCardRedrawn,
    ExplorationDeckReshuffled,
    Explore,
    ExtraActionGained,
    GiveCard,
    GiveItem,
    HealTeammates,
    HealWithVines,
    Item,
    ItemGiven,
    KeepCard,
    LavaFlowPlaced,
    LeaveSecretCaves,
    PlaceSecretCave,
    PlayCard,
    RedrawCard,
    RedrawDeclined,
    RedrawOffered,
    Resource,
    ResourceGained,
    ResourceReturned,
    ResourceTaken,
    Resupplied,
    RocketDocketCardRevealed,
    RocketPartCollected,
    RollPurpose,
    Scenario,
    SecretCavePlacementOffered,
    SecretCavesLeft,
    SecretCavesPlaced,
    TokenReturned,
    Travel,
    TravelMode,
    TurnEnded,
    VineSpent,
)
from tests.gamekit import when
from tests.games.escaping_extinction.helpers import (
    DOCKET,
    EXPLORATION,
    LONG_NECK,
    REX,
    SARA,
    TERRY,
    began,
    dino,
    hand,
    injure,
    move,
    reveal,
    setup,
    table,
    top,
    turn_of,
)


def on(d: Any, position: int, *cards: str, **kw: Any) -> list[Any]:
    """``d``'s turn, on ``position``, with ``cards`` on top of the deck."""
    events = [*setup(exploration=top(*cards), **kw)]
    if d is not TERRY:
        events += turn_of(d)
    return [*events, reveal(position), *move(d, position)]


def explore(d: Any, position: int, *cards: str, **kw: Any) -> list[Any]:
    state = table(on(d, position, *cards), **kw)
    return when(RULES, state, 0, Explore(d))


# -- Exploration cards ---


def test_a_gain_card_takes_from_the_supply() -> None:
    assert explore(REX, 16, "fallen_branch_1")[1:] == [
        ExplorationCardDrawn(REX, "fallen_branch_1"),
        ExplorationCardDiscarded("fallen_branch_1"),
        ResourceGained(REX, Resource.WOOD),
    ]


def test_a_heal_card_never_heals_past_the_starting_health() -> None:
    state = table([*on(REX, 16, "warm_spring_1"), DinoDamaged(REX, 1, 5)])
    assert when(RULES, state, 0, Explore(REX))[-1] == DinoHealed(REX, 1, 6)


def test_food_thieves_take_food() -> None:
    assert explore(REX, 16, "food_thieves_1")[-2:] == [
        ResourceReturned(REX, Resource.FOOD),
        ResourceReturned(REX, Resource.FOOD),
    ]


def test_dr_raptors_whistle_sends_the_dino_straight_home() -> None:
    assert explore(REX, 16, "dr_raptors_whistle_1")[-1] == DinoReturnedToOasis(REX, 16)


def test_a_lava_flow_card_places_a_lava_flow_on_the_dinos_tile() -> None:
    assert explore(REX, 16, "lava_flow_1")[-1] == LavaFlowPlaced(16)


def test_a_lava_flow_card_does_nothing_once_both_lava_flows_are_out() -> None:
    state = table([*on(REX, 16, "lava_flow_1"), LavaFlowPlaced(3), LavaFlowPlaced(5)])
    assert when(RULES, state, 0, Explore(REX))[-1] == ExplorationCardDiscarded(
        "lava_flow_1"
    )


def test_a_secret_caves_card_puts_one_cave_here_and_the_other_where_chosen() -> None:
    events = on(REX, 16, "secret_caves_1")
    new = explore(REX, 16, "secret_caves_1")
    assert new[-1] == SecretCavePlacementOffered(REX)
    state = table([*events, *new])
    legal = RULES.legal_actions(state, 0)
    assert (
        PlaceSecretCave(REX, 0) not in legal and PlaceSecretCave(REX, 16) not in legal
    )
    assert PlaceSecretCave(REX, 9) in legal and LeaveSecretCaves(REX) not in legal
    assert when(RULES, state, 0, PlaceSecretCave(REX, 9)) == [SecretCavesPlaced(16, 9)]


def test_secret_caves_already_placed_may_be_moved_or_left() -> None:
    events = [*on(REX, 16, "secret_caves_1"), SecretCavesPlaced(3, 5)]
    state = table(events)
    new = when(RULES, state, 0, Explore(REX))
    state = table([*events, *new])
    assert when(RULES, state, 0, LeaveSecretCaves(REX)) == [SecretCavesLeft(REX)]
    assert when(RULES, state, 0, PlaceSecretCave(REX, 9)) == [SecretCavesPlaced(16, 9)]
    after = table([*events, *new, SecretCavesPlaced(16, 9)])
    assert [p for p, place in enumerate(after.places) if place.cave] == [9, 16]


def test_a_keep_card_goes_to_the_dino_and_is_played_later() -> None:
    new = explore(REX, 16, "trail_mix_1")
    assert new[-1] == ExplorationCardKept(REX, "trail_mix_1")
    events = [
        *on(REX, 16, "trail_mix_1"),
        *new,
        *(ResourceReturned(REX, Resource.FOOD),) * 3,
    ]
    state = table(events)
    assert when(RULES, state, 0, PlayCard(REX, "trail_mix_1", REX)) == [
        ExplorationCardPlayed(REX, "trail_mix_1", REX),
        ResourceGained(REX, Resource.FOOD),
        ResourceGained(REX, Resource.FOOD),
    ]


def test_healing_herbs_heal_a_dino_on_the_same_tile() -> None:
    events = [*setup(), hand(TERRY, "healing_herbs_1"), DinoDamaged(SARA, 5, 1)]
    state = table(events)
    assert when(RULES, state, 0, PlayCard(TERRY, "healing_herbs_1", SARA)) == [
        ExplorationCardPlayed(TERRY, "healing_herbs_1", SARA),
        DinoHealed(SARA, 2, 3),
    ]
    with pytest.raises(InvalidCommand):
        state = table([*setup(), hand(TERRY, "trail_mix_1")])
        when(RULES, state, 0, PlayCard(TERRY, "trail_mix_1", SARA))


def test_a_burst_of_energy_gives_an_extra_action() -> None:
    events = [
        *setup(),
        hand(TERRY, "burst_of_energy_1"),
        ActionTaken(TERRY, ActionKind.TRAVEL),
        ActionTaken(TERRY, ActionKind.TRAVEL),
    ]
    state = table(events)
    new = when(RULES, state, 0, PlayCard(TERRY, "burst_of_energy_1", TERRY))
    assert new[-1] == ExtraActionGained(TERRY)
    assert table([*events, *new]).actions_left == 1


def test_an_empty_exploration_deck_is_reshuffled_from_its_discards() -> None:
    events = on(REX, 16)
    events += [ExplorationCardDrawn(REX, c) for c in EXPLORATION[:-1]]
    events += [ExplorationCardDiscarded(c) for c in EXPLORATION[:-1]]
    events += [ExplorationCardDrawn(REX, EXPLORATION[-1])]
    events += [ExplorationCardKept(SARA, EXPLORATION[-1])]
    order = ("warm_spring_1", "thorn_bush_1")
    state = table(events, scenario=Scenario(exploration_reshuffles=(CardOrder(order),)))
    new = when(RULES, state, 0, Explore(REX))
    reshuffle = new[1]
    assert isinstance(reshuffle, ExplorationDeckReshuffled)
    assert reshuffle.order[:2] == order
    assert sorted(reshuffle.order) == sorted(EXPLORATION[:-1])
    assert new[2] == ExplorationCardDrawn(REX, "warm_spring_1")


# -- Abilities ---


def test_terry_may_redraw_a_drawn_card_once_per_turn() -> None:
    events = on(TERRY, 16, "raptor_ambush_1", "thorn_bush_1", "warm_spring_1")
    new = when(RULES, table(events), 0, Explore(TERRY))
    assert new[-1] == RedrawOffered(TERRY, "raptor_ambush_1")
    state = table([*events, *new])
    assert RULES.legal_actions(state, 0) == [KeepCard(TERRY), RedrawCard(TERRY)]
    redraw = when(RULES, state, 0, RedrawCard(TERRY))
    # The second card must be followed: no offer this time.
    assert redraw == [
        ExplorationCardRedrawn(TERRY, "raptor_ambush_1"),
        ExplorationCardDrawn(TERRY, "thorn_bush_1"),
        ExplorationCardDiscarded("thorn_bush_1"),
        DinoDamaged(TERRY, 1, 5),
    ]
    again = when(RULES, table([*events, *new, *redraw]), 0, Explore(TERRY))
    assert not any(isinstance(e, RedrawOffered) for e in again)


def test_terry_keeping_the_card_follows_it_and_keeps_the_redraw() -> None:
    events = on(TERRY, 16, "raptor_ambush_1")
    new = when(RULES, table(events), 0, Explore(TERRY))
    state = table([*events, *new])
    kept = when(RULES, state, 0, KeepCard(TERRY))
    assert kept == [
        RedrawDeclined(TERRY, "raptor_ambush_1"),
        ExplorationCardDiscarded("raptor_ambush_1"),
        DinoDamaged(TERRY, 2, 4),
    ]
    assert not table([*events, *new, *kept]).redraw_used


def test_only_terry_is_offered_a_redraw() -> None:
    assert not any(
        isinstance(e, RedrawOffered) for e in explore(REX, 16, "raptor_ambush_1")
    )


def test_rex_has_the_largest_energy() -> None:
    state = table(setup())
    assert dino(state, REX).food == 6
    assert all(dino(state, d).food == 4 for d in (TERRY, SARA, LONG_NECK))


def test_sara_heals_everyone_on_her_tile_by_up_to_three_for_one_action() -> None:
    events = [
        *setup(),
        *turn_of(SARA),
        DinoDamaged(SARA, 1, 5),
        DinoDamaged(REX, 4, 2),
        injure(LONG_NECK),
    ]
    assert when(RULES, table(events), 0, HealTeammates(SARA)) == [
        ActionTaken(SARA, ActionKind.HEAL_TEAMMATES),
        DinoHealed(REX, 3, 5),
        DinoHealed(SARA, 1, 6),
        DinoHealed(LONG_NECK, 3, 3),
    ]


def test_only_sara_heals_teammates_and_not_when_nobody_is_hurt() -> None:
    with pytest.raises(RuleViolation) as err:
        when(RULES, table([*setup(), DinoDamaged(REX, 1, 5)]), 0, HealTeammates(TERRY))
    assert err.value.reason == "NOT_SARA"
    with pytest.raises(RuleViolation) as err:
        when(RULES, table([*setup(), *turn_of(SARA)]), 0, HealTeammates(SARA))
    assert err.value.reason == "NOBODY_TO_HEAL"


def test_long_neck_rolling_green_gains_one_extra_resource() -> None:
    events = on(LONG_NECK, 3, "warm_spring_1")
    state = table(events, scenario=Scenario(die_faces=(2,)))
    assert when(RULES, state, 0, Explore(LONG_NECK, gamble=True))[:5] == [
        ActionTaken(LONG_NECK, ActionKind.EXPLORE),
        DieRolled(LONG_NECK, RollPurpose.DOUBLE_OR_NOTHING, 2, 2, DieColour.GREEN),
        ResourceTaken(LONG_NECK, Resource.WOOD),
        ResourceGained(LONG_NECK, Resource.WOOD),
        ExplorationCardDrawn(LONG_NECK, "warm_spring_1"),
    ]


def test_long_neck_rolling_red_discards_the_resource() -> None:
    events = on(LONG_NECK, 3, "warm_spring_1")
    state = table(events, scenario=Scenario(die_faces=(4,)))
    new = when(RULES, state, 0, Explore(LONG_NECK, gamble=True))
    assert new[:4] == [
        ActionTaken(LONG_NECK, ActionKind.EXPLORE),
        DieRolled(LONG_NECK, RollPurpose.DOUBLE_OR_NOTHING, 4, 1, DieColour.RED),
        TokenReturned(3, Resource.WOOD),
        ExplorationCardDrawn(LONG_NECK, "warm_spring_1"),
    ]
    after = table([*events, *new])
    assert not after.places[3].token and after.supply.wood == 20


def test_a_returned_token_goes_back_to_the_supply_as_the_resource_its_event_names() -> (
    None
):
    # The fold reads the resource from the event, not from the tile's card.
    state = table(on(LONG_NECK, 3, "warm_spring_1"))
    after = RULES.evolve(state, TokenReturned(3, Resource.VINE))
    assert not after.places[3].token
    assert after.supply.vines == state.supply.vines + 1
    assert after.supply.wood == state.supply.wood


def test_only_long_neck_rolls_double_or_nothing_and_only_for_a_resource() -> None:
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(on(REX, 3)), 0, Explore(REX, gamble=True))
    assert err.value.reason == "NOT_LONG_NECK"
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(on(LONG_NECK, 16)), 0, Explore(LONG_NECK, gamble=True))
    assert err.value.reason == "NO_RESOURCE_TO_GAMBLE"


# -- Health, injury and healing ---


def test_a_dino_reduced_to_zero_health_is_injured_and_its_turn_ends_at_once() -> None:
    events = [*on(REX, 16, "raptor_ambush_1"), DinoDamaged(REX, 4, 2)]
    new = when(RULES, table(events), 0, Explore(REX))
    assert new[-3:] == [DinoDamaged(REX, 2, 0), TurnEnded(REX), began(SARA, 1)]


def test_an_injured_dino_cannot_take_actions() -> None:
    state = table([*setup(), injure(TERRY), ResourceGained(TERRY, Resource.VINE)])
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, Travel(TERRY, 3, TravelMode.WALK))
    assert err.value.reason == "DINO_INJURED"


def test_an_injured_dino_with_vines_heals_itself_on_its_turn_then_acts() -> None:
    events = [*setup(), ResourceGained(REX, Resource.VINE), injure(REX)]
    new = when(RULES, table(events), 0, EndTurn(TERRY))
    # decide says the turn is for healing only, in the event that begins it.
    assert new == [TurnEnded(TERRY), began(REX, 1, heal_only=True)]
    state = table([*events, *new])
    assert HealWithVines(REX, REX) in RULES.legal_actions(state, 0)
    assert not any(isinstance(c, Travel) for c in RULES.legal_actions(state, 0))
    healed = when(RULES, state, 0, HealWithVines(REX, REX))
    assert healed == [VineSpent(REX), DinoHealed(REX, 1, 1)]
    after = table([*events, *new, *healed])
    assert after.actions_left == 2 and after.turn_open
    assert any(isinstance(c, Travel) for c in RULES.legal_actions(after, 0))


def test_healing_with_vines_costs_no_action_and_never_passes_the_start_health() -> None:
    events = [*setup(), ResourceGained(TERRY, Resource.VINE), DinoDamaged(SARA, 2, 4)]
    state = table(events)
    new = when(RULES, state, 0, HealWithVines(TERRY, SARA))
    after = table([*events, *new])
    assert dino(after, SARA).health == 5 and after.actions_left == 2
    assert dino(after, TERRY).vines == 0
    with pytest.raises(RuleViolation) as err:
        when(
            RULES,
            table([*setup(), ResourceGained(TERRY, Resource.VINE)]),
            0,
            HealWithVines(TERRY, SARA),
        )
    assert err.value.reason == "FULL_HEALTH"


def test_an_injured_dino_heals_only_itself() -> None:
    events = [*setup(), ResourceGained(REX, Resource.VINE), injure(REX)]
    events += [DinoDamaged(SARA, 1, 5), TurnEnded(TERRY), began(REX, 1)]
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(events), 0, HealWithVines(REX, SARA))
    assert err.value.reason == "INJURED_HEALS_ONLY_ITSELF"


def test_vines_heal_only_a_dino_on_the_same_tile() -> None:
    events = [*setup(), ResourceGained(TERRY, Resource.VINE), reveal(3)]
    events += [*move(SARA, 3), DinoDamaged(SARA, 1, 5)]
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(events), 0, HealWithVines(TERRY, SARA))
    assert err.value.reason == "NOT_ON_YOUR_TILE"


# -- Trading ---


def test_dinos_on_the_same_tile_trade_freely_during_one_of_their_turns() -> None:
    # One seat controls both Dinos: no consent to ask (test_consent.py has
    # the trades between seats).
    events = [*setup(), ResourceGained(REX, Resource.WOOD), hand(REX, "trail_mix_1")]
    events.append(ResourceReturned(REX, Resource.FOOD))
    state = table(events, players=2)
    assert when(RULES, state, 0, GiveItem(REX, TERRY, Item.WOOD)) == [
        ItemGiven(REX, TERRY, Item.WOOD)
    ]
    assert when(RULES, state, 0, GiveItem(TERRY, REX, Item.FOOD)) == [
        ItemGiven(TERRY, REX, Item.FOOD)
    ]
    assert when(RULES, state, 0, GiveCard(REX, TERRY, "trail_mix_1")) == [
        CardGiven(REX, TERRY, "trail_mix_1")
    ]


def test_a_trade_must_involve_the_dino_whose_turn_it_is() -> None:
    events = [*setup(), ResourceGained(REX, Resource.WOOD)]
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(events), 0, GiveItem(REX, SARA, Item.WOOD))
    assert err.value.reason == "NOT_PART_OF_TRADE"


def test_dinos_on_different_tiles_cannot_trade() -> None:
    events = [*setup(), reveal(3), *move(REX, 3)]
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(events), 0, GiveItem(TERRY, REX, Item.FOOD))
    assert err.value.reason == "NOT_ON_YOUR_TILE"


def test_an_injured_dino_can_trade_but_two_injured_dinos_cannot() -> None:
    events = [*setup(), injure(REX), ResourceGained(REX, Resource.VINE)]
    assert when(RULES, table(events), 0, GiveItem(REX, TERRY, Item.VINE)) == [
        ItemGiven(REX, TERRY, Item.VINE)
    ]
    events = [*events, ResourceGained(TERRY, Resource.VINE), injure(TERRY)]
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(events), 0, GiveItem(REX, TERRY, Item.VINE))
    assert err.value.reason == "BOTH_INJURED"


def test_a_trade_respects_the_one_rocket_part_and_full_energy_limits() -> None:
    events = [
        *setup(docket=DOCKET),
        RocketPartCollected(TERRY, DOCKET[0]),
    ]
    events += [ResourceReturned(TERRY, Resource.FOOD)]
    state = table(events)
    assert when(RULES, state, 0, GiveItem(TERRY, REX, Item.ROCKET_PART)) == [
        ItemGiven(TERRY, REX, Item.ROCKET_PART)
    ]
    with pytest.raises(RuleViolation) as err:
        when(RULES, state, 0, GiveItem(REX, SARA, Item.FOOD))
    assert err.value.reason == "NOT_PART_OF_TRADE"
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(setup()), 0, GiveItem(REX, TERRY, Item.FOOD))
    assert err.value.reason == "NO_ROOM"


def test_dr_raptors_memo_reveals_another_rocket_docket_card() -> None:
    events = on(REX, 16, "dr_raptors_memo_1")
    new = when(RULES, table(events), 0, Explore(REX))
    assert new[-1] == RocketDocketCardRevealed(DOCKET[1])
    # Several cards are now face up: each is a way to a Rocket Part.
    assert table([*events, *new]).docket_open == (DOCKET[0], DOCKET[1])


def test_dr_raptors_memo_reveals_nothing_once_five_parts_are_collected() -> None:
    events = on(REX, 16, "dr_raptors_memo_1")
    for n, card in enumerate(DOCKET[:5]):
        if n:
            events.append(RocketDocketCardRevealed(card))
        events += [RocketPartCollected(SARA, card), Resupplied(SARA, 0, 0, True)]
    new = when(RULES, table(events), 0, Explore(REX))
    assert new[-1] == ExplorationCardDiscarded("dr_raptors_memo_1")


def test_sara_cannot_heal_while_injured() -> None:
    events = [*setup(), ResourceGained(SARA, Resource.VINE), injure(SARA)]
    events += [DinoDamaged(REX, 2, 4), TurnEnded(TERRY), began(SARA, 1)]
    with pytest.raises(RuleViolation) as err:
        when(RULES, table(events), 0, HealTeammates(SARA))
    assert err.value.reason == "DINO_INJURED"


def test_pushing_out_of_the_tarpit_is_allowed_with_plenty_of_food() -> None:
    events = [*setup(), reveal(1), *move(TERRY, 1)]
    assert dino(table(events), TERRY).food == 4
    assert Travel(TERRY, 0, TravelMode.PUSH) in RULES.legal_actions(table(events), 0)
