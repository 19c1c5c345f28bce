"""Dinosaurs Extinct?: the race from the Prehistoric Era to the 21st Century."""

from domain.dinosaurs_extinct.rules import (
    DinosaursExtinctRules,
    DinosaursExtinctRulesV1,
)

RULES = DinosaursExtinctRules()
RULES_V1 = DinosaursExtinctRulesV1()

__all__ = ["RULES", "RULES_V1", "DinosaursExtinctRules", "DinosaursExtinctRulesV1"]
