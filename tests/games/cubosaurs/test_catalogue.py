"""The card and DNA tile data: loaded once, validated, wrong data refused."""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable
from importlib import resources
from typing import Any

import pytest

from domain.cubosaurs.content import (
    CARDS,
    KINDS,
    TILES,
    CatalogueError,
    Kind,
    Scoring,
    load_cards,
    load_kinds,
    load_tiles,
)


def data(name: str) -> Any:
    text = resources.files("domain.cubosaurs").joinpath(name).read_text("utf-8")
    return json.loads(text)


def test_the_deck_has_seven_copies_of_seven_species_and_six_eggs() -> None:
    counts = Counter(c.kind for c in CARDS)
    species = [k for k in Kind if KINDS[k].scoring is not Scoring.EGG]
    eggs = [k for k in Kind if KINDS[k].scoring is Scoring.EGG]
    assert len(CARDS) == 55
    assert [counts[k] for k in species] == [7] * 7
    assert [counts[k] for k in eggs] == [1] * 6
    assert [c.id for c in CARDS] == list(range(55))


def test_two_copies_of_each_species_carry_dna_and_eggs_none() -> None:
    dna = Counter(c.kind for c in CARDS if c.dna)
    assert all(dna[k] == 2 for k in Kind if KINDS[k].scoring is not Scoring.EGG)
    assert not any(dna[k] for k in Kind if KINDS[k].scoring is Scoring.EGG)


def test_raptors_carry_the_values_of_the_rules_reference() -> None:
    values = [(2, -1), (2, -1), (3, -1), (3, -2), (4, -2), (4, -2), (5, -3)]
    for kind in (Kind.GREY_RAPTOR, Kind.BLACK_RAPTOR):
        cards = [c for c in CARDS if c.kind is kind]
        assert [(c.paired, c.alone) for c in cards] == values


def test_the_raptor_egg_counts_both_colours() -> None:
    assert KINDS[Kind.RAPTOR_EGG].majority_of == (
        Kind.GREY_RAPTOR,
        Kind.BLACK_RAPTOR,
    )
    assert (KINDS[Kind.T_REX_EGG].majority, KINDS[Kind.T_REX_EGG].minority) == (3, -2)


def test_the_tiles_load_with_names_costs_and_texts() -> None:
    assert [t.id for t in TILES] == list(range(10))
    assert all(t.name and t.text for t in TILES)


def broken_cards(change: Callable[[Any], None]) -> None:
    raw = copy.deepcopy(data("cards.json"))
    change(raw)
    load_cards(raw, load_kinds(raw))


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["cards"].pop(),
        lambda d: d["cards"][3].update(id=4),
        lambda d: d["cards"][3].update(kind="DIPLODOCUS"),
        lambda d: d["cards"][1].update(dna=True),
        lambda d: d["cards"][0].update(dna="yes"),
        lambda d: d["cards"][0].update(paired=3),
        lambda d: d["cards"][40].pop("alone"),
        lambda d: d["cards"][54].update(kind="RAPTOR_EGG", dna=True),
        lambda d: d["kinds"].pop("T_REX"),
        lambda d: d["kinds"]["T_REX"].pop("name"),
        lambda d: d["kinds"]["T_REX"].update(scoring="BEST"),
        lambda d: d["kinds"]["T_REX"].update(rows=[1, 2, 3]),
        lambda d: d["kinds"]["T_REX"].update(scoring="RAPTOR"),
        lambda d: d["kinds"]["GREY_RAPTOR"].update(scoring="ROWS", rows=[1, 1, 1, 1]),
        lambda d: d["kinds"]["RAPTOR_EGG"].update(majority_of=["T_REX_EGG"]),
    ],
)
def test_wrong_card_data_is_refused(change: Callable[[Any], None]) -> None:
    with pytest.raises(CatalogueError):
        broken_cards(change)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["tiles"].pop(),
        lambda d: d["tiles"][0].update(id=3),
        lambda d: d["tiles"][0].update(cost=5),
        lambda d: d["tiles"][0].update(cost=1),
        lambda d: d["tiles"][0].update(timing="END_OF_ROUND"),
        lambda d: d["tiles"][4].update(kinds=[]),
        lambda d: d["tiles"][4].update(kinds=["DODO"]),
        lambda d: d["tiles"][0].update(kinds=["T_REX"]),
        lambda d: d["tiles"][0].update(effect="TIME_TRAVEL"),
        lambda d: d["tiles"][0].pop("name"),
        lambda d: d["tiles"][0].update(points="two"),
    ],
)
def test_wrong_tile_data_is_refused(change: Callable[[Any], None]) -> None:
    raw = copy.deepcopy(data("tiles.json"))
    change(raw)
    with pytest.raises(CatalogueError):
        load_tiles(raw)
