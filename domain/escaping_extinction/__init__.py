"""Escaping Extinction: the cooperative hex-map race against the Meteor.

The rules live in :mod:`domain.escaping_extinction.rules`, the typed shapes
in :mod:`~domain.escaping_extinction.model`, the printed content (JSON data
beside this file) in :mod:`~domain.escaping_extinction.content`.
"""

from domain.escaping_extinction.rules import RULES, EscapingExtinctionRules

__all__ = ["RULES", "EscapingExtinctionRules"]
