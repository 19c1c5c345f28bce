"""Cubosaurs: take the packet or pass it on, and score the best collection."""

from domain.cubosaurs.rules import RULES

__all__ = ["RULES"]
