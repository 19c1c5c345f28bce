"""Egg Race, a toy game added by docs/ADDING_A_GAME.md's steps (in tests/,
so that no real game type, proto or registry entry is needed for it)."""

from tests.adding_a_game.egg_race.rules import EggRaceRules

RULES = EggRaceRules()

__all__ = ["RULES", "EggRaceRules"]
