"""Any game without words of its own (a new game, before they are written),
as the web table's ``games/generic.js`` has it: the API's description of an
action, an event by its name and fields."""

from __future__ import annotations

import re
from typing import Any

from clients.words.text import Ctx, Json, enum_words


def field_words(key: str) -> str:
    """``lifeCardOverlays`` -> ``Life card overlays``."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(key or ""))
    return enum_words(spaced.replace(" ", "_"))


def scalar(value: Any) -> str:
    """An enum value (``PHASE_ROLL``) in words, anything else as it is."""
    if isinstance(value, str) and re.fullmatch(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)+", value):
        return enum_words(value)
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return str(value)


def status(ctx: Ctx) -> str:
    return ""


def table(ctx: Ctx) -> list[str]:
    return []


def label(key: str, c: Json, ctx: Ctx) -> str:
    # The API's own description of the action stands.
    return ""


def describe(key: str, e: Json, ctx: Ctx) -> str | None:
    more = ", ".join(
        f"{field_words(k).lower()} {scalar(v)}"
        for k, v in (e or {}).items()
        if not isinstance(v, dict | list)
    )
    return f"{field_words(key)}{f': {more}' if more else ''}."
