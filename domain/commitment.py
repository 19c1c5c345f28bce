"""The commitment to a game's seed and its reveal (:mod:`domain.fairness`
says how a player checks them): what the session appends, apart from the
verifier, which re-executes games with the session."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

#: The domain separation tag of the commitment (its format's version).
COMMITMENT_TAG = "strata-seed-commitment-v1"


def commitment(seed: str, salt: str) -> str:
    """The commitment to ``seed`` under ``salt`` (lowercase hex SHA-256)."""
    message = f"{COMMITMENT_TAG}\0{salt}\0{seed}".encode()
    return hashlib.sha256(message).hexdigest()


@dataclasses.dataclass(frozen=True)
class SeedRevealed:
    """The game is over: its seed, the salt of its commitment and its
    scenario, so that anyone can check the commitment and re-execute it."""

    seed: str
    salt: str
    scenario: dict[str, Any] | None = None
