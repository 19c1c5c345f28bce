"""Dinosaurs Extinct?: the race from the Prehistoric Era to the 21st Century."""

from domain.dinosaurs_extinct.rules import DinosaursExtinctRules

RULES = DinosaursExtinctRules()

__all__ = ["RULES", "DinosaursExtinctRules"]
