"""The printed content is pinned to the rules versions played with it.

A stored game replays, verifies and goes on under the rules version it was
created with, and the older versions still read the content outside
``decide``: Escaping Extinction's versions 1 to 3 work out in their fold a
returned token's resource and what an Earthquake returned from the tiles'
cards, the upcasters of stored events complete them from it (a revealed
tile's resource, a Sudden Death reveal's lowest cards). The content is one
set of data files for every shipped version of a game, so a change to them
would change what stored games mean. Here is the digest of each game's
data files, which every one of its shipped rules versions was played with:
change the content only with a new rules version, keeping these files for
the older ones (and then pin each version to its own files).
"""

from __future__ import annotations

import hashlib

import pytest

from domain import registry
from tests.gamekit import game_folder

#: The digest (:func:`digest`) of the data files each game type's shipped
#: rules versions were played with.
PLAYED_WITH = {
    "cubosaurs": "3883f321ba3c2e7e",
    "dinosaurs_extinct": "6272858f48bdcb25",
    "escaping_extinction": "3e6f576b70be8039",
    "happy_little_dinosaurs": "4eabb2040f739f80",
}


def digest(game_type: str) -> str:
    """SHA-256 (its first 16 hex digits) of the game's JSON data files."""
    hashed = hashlib.sha256()
    for path in sorted(game_folder(game_type).glob("*.json")):
        hashed.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return hashed.hexdigest()[:16]


#: The games with data files (a game whose content is code alone, like the
#: tests' toy, has nothing here to pin).
WITH_DATA = [g for g in registry.game_types() if any(game_folder(g).glob("*.json"))]


@pytest.mark.parametrize("game_type", WITH_DATA)
def test_the_content_is_the_one_every_shipped_rules_version_was_played_with(
    game_type: str,
) -> None:
    versions = registry.rules_versions(game_type)
    assert digest(game_type) == PLAYED_WITH[game_type], (
        f"{game_type}'s data files changed: its rules versions {versions} were "
        "played with the old ones (see this module's docstring)"
    )
