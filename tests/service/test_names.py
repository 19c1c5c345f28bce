"""Look-alike names (Unicode TR39): skeletons and mixed-script confusables,
on the data the service ships with."""

from __future__ import annotations

import pytest

from service.names import look_alike, mixed_script_confusable, skeleton

CYRILLIC = {"A": "\u0410", "a": "\u0430", "d": "\u0501", "o": "\u043e"}


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Ada", CYRILLIC["A"] + CYRILLIC["d"] + CYRILLIC["a"]),  # one script each
        ("paypal", "\U0001d52d\U0001d4b6\u1eff\U0001d561\U0001d552\u2113"),
        ("Bob", "B0b"),  # a zero for a capital O
        ("Ill", "lll"),  # a capital I for a small l
        ("mary", "rnary"),  # rn for m
        ("Ada", "ADA"),  # case aside
    ],
)
def test_names_that_look_alike_have_one_skeleton(one: str, other: str) -> None:
    assert skeleton(one) == skeleton(other)
    assert look_alike(other, ["Bea", one]) == one


@pytest.mark.parametrize(("one", "other"), [("Ada", "Eda"), ("Bob", "Rob")])
def test_names_that_do_not_look_alike_have_their_own(one: str, other: str) -> None:
    assert skeleton(one) != skeleton(other)
    assert look_alike(other, [one]) == ""


@pytest.mark.parametrize(
    "name",
    [
        CYRILLIC["A"] + "da",
        "P" + CYRILLIC["a"] + "ul",
        "J" + CYRILLIC["o"] + "hn Smith",
        "\u0391laskaJazz",  # a Greek capital alpha
    ],
)
def test_a_letter_passed_off_as_another_scripts_is_found(name: str) -> None:
    assert mixed_script_confusable(name) in name
    assert mixed_script_confusable(name)


@pytest.mark.parametrize(
    "name",
    [
        "Ada",
        "José",
        "Иван",
        "Ada 田中",
        "山田 太郎",
        "やまだ",
        "Ada 김",
        "R2-D2",
        "Ünal",
    ],
)
def test_one_script_or_scripts_written_together_are_names(name: str) -> None:
    assert mixed_script_confusable(name) == ""
