"""The JSON text every backend stores (``encode_json``): the compact form
of ``json.dumps``, from an encoder made once, refusing what is not JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from eventstore.base import encode_json


@pytest.mark.parametrize(
    "value",
    [
        'é "quoted" \\ \n \u2028 🦖',
        0,
        -(10**30),
        1.5,
        -0.0,
        2.5e300,
        None,
        True,
        [],
        {},
        {"hand": [1, 2], "pair": (3, 4), 5: "five", "nested": {"a": [None, False]}},
        [["CardPlayed", 1, {"seat": 1, "card": "raptor-3"}]],
    ],
)
def test_the_text_is_compact_json_of_the_value(value: Any) -> None:
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert encode_json(value) == expected
    assert json.loads(encode_json(value)) == json.loads(expected)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (float("nan"), ValueError),
        ({"x": [float("inf")]}, ValueError),
        ({"x": -float("inf")}, ValueError),
        ({1, 2}, TypeError),
        ({"x": object()}, TypeError),
        ({(1, 2): "a tuple key"}, TypeError),
    ],
)
def test_what_is_not_json_is_refused(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        encode_json(value)
