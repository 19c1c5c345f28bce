"""Scoring a round: species rows, the raptor pairing, Egg majorities, tiles."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from domain.cubosaurs.content import (
    CARDS,
    KINDS,
    TILES,
    Card,
    Kind,
    SeatScore,
    raptor_score,
    row_score,
    score_round,
)
from tests.games.cubosaurs.helpers import dna, plain


def of(kind: Kind, count: int) -> list[int]:
    return [c.id for c in CARDS if c.kind is kind][:count]


def score(
    *collections: Sequence[int], tiles: Sequence[Sequence[int]] = ()
) -> tuple[SeatScore, ...]:
    return score_round(
        collections,
        tiles or [() for _ in collections],
        [0 for _ in collections],
    )


@pytest.mark.parametrize(
    ("kind", "rows"),
    [
        (Kind.T_REX, (4, 1, -2, -5)),
        (Kind.PENTACERATOPS, (-2, 1, 4, 8)),
        (Kind.PTERODACTYL, (-1, -1, -1, -1)),
        (Kind.STEGOSAURUS, (-2, 3, -1, 6)),
        (Kind.BRACHIOSAURUS, (1, 3, 5, 2)),
    ],
)
def test_a_species_scores_its_row_for_one_two_three_and_four_or_more(
    kind: Kind, rows: tuple[int, ...]
) -> None:
    assert KINDS[kind].rows == rows
    for count in range(0, 8):
        expected = 0 if count == 0 else rows[min(count, 4) - 1]
        assert score(of(kind, count))[0].species == expected


def test_every_species_in_a_collection_scores_its_own_row() -> None:
    collection = of(Kind.T_REX, 1) + of(Kind.PENTACERATOPS, 3) + of(Kind.STEGOSAURUS, 2)
    assert score(collection)[0].species == 4 + 4 + 3


def test_row_score_of_nothing_is_nothing() -> None:
    assert row_score((4, 1, -2, -5), 0) == 0


def test_two_blacks_and_one_grey_pair_the_better_black_as_in_the_rulebook() -> None:
    black_2 = CARDS[plain(Kind.BLACK_RAPTOR, 0)]  # paired 2, alone -1
    black_3 = CARDS[plain(Kind.BLACK_RAPTOR, 1)]  # paired 3, alone -1
    grey = CARDS[plain(Kind.GREY_RAPTOR, 0)]  # paired 2, alone -1
    assert (black_2.paired, black_3.paired, grey.paired) == (2, 3, 2)
    # Pairing the black worth 3: 3 + 2, and the other black alone: -1.
    assert raptor_score([black_2, black_3, grey]) == 4
    assert score([black_2.id, black_3.id, grey.id])[0].raptors == 4


def test_unpaired_raptors_score_their_alone_values() -> None:
    greys = [CARDS[c] for c in of(Kind.GREY_RAPTOR, 3)]
    assert raptor_score(greys) == sum(c.alone for c in greys)
    assert raptor_score([]) == 0


def test_every_grey_black_pair_scores_both_paired_values() -> None:
    cards = [CARDS[c] for c in of(Kind.GREY_RAPTOR, 2) + of(Kind.BLACK_RAPTOR, 2)]
    assert raptor_score(cards) == sum(c.paired for c in cards)


def test_the_pairing_prefers_the_largest_gain_over_the_largest_paired_value() -> None:
    grey = Card(0, Kind.GREY_RAPTOR, False, 2, -1)
    big_paired = Card(1, Kind.BLACK_RAPTOR, False, 5, 4)  # gains 1 by pairing
    big_gain = Card(2, Kind.BLACK_RAPTOR, False, 3, -3)  # gains 6 by pairing
    assert raptor_score([grey, big_paired, big_gain]) == 2 + 4 + 3


def test_raptors_that_lose_by_pairing_stay_alone() -> None:
    grey = Card(0, Kind.GREY_RAPTOR, False, -5, 0)
    black = Card(1, Kind.BLACK_RAPTOR, False, 1, 0)
    assert raptor_score([grey, black]) == 0


def brute_force(cards: Sequence[Card]) -> int:
    """The best score over every matching of greys to blacks."""
    greys = [c for c in cards if c.kind is Kind.GREY_RAPTOR]
    blacks = [c for c in cards if c.kind is Kind.BLACK_RAPTOR]

    def best(i: int, free: frozenset[int]) -> int:
        if i == len(greys):
            return sum(blacks[j].alone for j in free)
        grey = greys[i]
        options = [grey.alone + best(i + 1, free)]
        for j in free:
            options.append(grey.paired + blacks[j].paired + best(i + 1, free - {j}))
        return max(options)

    return best(0, frozenset(range(len(blacks))))


def test_the_raptor_pairing_matches_brute_force_on_random_collections() -> None:
    chooser = random.Random(7)
    raptors = [c for c in CARDS if c.kind in (Kind.GREY_RAPTOR, Kind.BLACK_RAPTOR)]
    for _ in range(500):
        cards = chooser.sample(raptors, chooser.randrange(0, 9))
        assert raptor_score(cards) == brute_force(cards), cards
    for _ in range(500):  # values beyond the printed ones, losses included
        cards = [
            Card(
                i,
                chooser.choice((Kind.GREY_RAPTOR, Kind.BLACK_RAPTOR)),
                False,
                chooser.randrange(-4, 7),
                chooser.randrange(-4, 3),
            )
            for i in range(chooser.randrange(0, 9))
        ]
        assert raptor_score(cards) == brute_force(cards), cards


T_REX_EGG = plain(Kind.T_REX_EGG)
RAPTOR_EGG = plain(Kind.RAPTOR_EGG)


def test_an_egg_scores_three_for_the_majority_of_its_species() -> None:
    scores = score([T_REX_EGG, *of(Kind.T_REX, 2)], of(Kind.T_REX, 3)[2:])
    assert scores[0].eggs == 3


def test_an_egg_tied_for_the_majority_still_wins() -> None:
    t_rexes = of(Kind.T_REX, 4)
    scores = score([T_REX_EGG, *t_rexes[:2]], t_rexes[2:], [])
    assert scores[0].eggs == 3


def test_an_egg_without_the_majority_costs_two() -> None:
    t_rexes = of(Kind.T_REX, 4)
    scores = score([T_REX_EGG, t_rexes[0]], t_rexes[1:])
    assert scores[0].eggs == -2


def test_an_egg_whose_species_nobody_holds_is_a_tie_and_wins() -> None:
    assert score([T_REX_EGG], of(Kind.PENTACERATOPS, 2))[0].eggs == 3


def test_the_raptor_egg_counts_grey_and_black_together() -> None:
    mine = [RAPTOR_EGG, *of(Kind.GREY_RAPTOR, 1), *of(Kind.BLACK_RAPTOR, 1)]
    greys = of(Kind.GREY_RAPTOR, 3)[1:]
    assert score(mine, greys)[0].eggs == 3
    assert score(mine, of(Kind.BLACK_RAPTOR, 4)[1:])[0].eggs == -2


def test_an_egg_counts_only_for_its_holder() -> None:
    scores = score([T_REX_EGG], of(Kind.T_REX, 2))
    assert scores[1].eggs == 0


def test_the_round_total_adds_every_source() -> None:
    collection = [*of(Kind.T_REX, 1), *of(Kind.GREY_RAPTOR, 1), T_REX_EGG]
    (seat,) = score_round([collection], [[TILES[0].id]], [2])
    assert seat == SeatScore(0, 4, -1, 3, 0, 2, 4 - 1 + 3 + 2)


def tile_named(name: str) -> int:
    return next(t.id for t in TILES if t.name == name)


def test_raptor_den_scores_one_per_raptor() -> None:
    collection = of(Kind.GREY_RAPTOR, 2) + of(Kind.BLACK_RAPTOR, 1) + of(Kind.T_REX, 1)
    assert score(collection, tiles=[[tile_named("Raptor Den")]])[0].tiles == 3


def test_sky_watch_scores_one_per_pterodactyl() -> None:
    collection = of(Kind.PTERODACTYL, 3)
    assert score(collection, tiles=[[tile_named("Sky Watch")]])[0].tiles == 3


def test_nest_guardian_scores_two_per_egg() -> None:
    collection = [T_REX_EGG, RAPTOR_EGG, dna(Kind.T_REX)]
    assert score(collection, tiles=[[tile_named("Nest Guardian")]])[0].tiles == 4


def test_horned_herd_scores_pentaceratops_and_stegosaurus() -> None:
    collection = of(Kind.PENTACERATOPS, 2) + of(Kind.STEGOSAURUS, 1)
    assert score(collection, tiles=[[tile_named("Horned Herd")]])[0].tiles == 3


def test_biodiversity_scores_one_per_species_held() -> None:
    collection = of(Kind.T_REX, 2) + of(Kind.GREY_RAPTOR, 1) + of(Kind.BLACK_RAPTOR, 1)
    collection += [T_REX_EGG]
    assert score(collection, tiles=[[tile_named("Biodiversity")]])[0].tiles == 3


def test_lean_pack_scores_for_the_fewest_cards_ties_included() -> None:
    lean = tile_named("Lean Pack")
    assert (
        score(of(Kind.T_REX, 1), of(Kind.STEGOSAURUS, 2), tiles=[[lean], []])[0].tiles
        == 4
    )
    assert (
        score(of(Kind.T_REX, 2), of(Kind.STEGOSAURUS, 2), tiles=[[lean], []])[0].tiles
        == 4
    )
    assert (
        score(of(Kind.T_REX, 3), of(Kind.STEGOSAURUS, 2), tiles=[[lean], []])[0].tiles
        == 0
    )


def test_instant_tiles_score_nothing_at_the_end_of_the_round() -> None:
    assert score(of(Kind.T_REX, 1), tiles=[[tile_named("Fossil Cache")]])[0].tiles == 0
