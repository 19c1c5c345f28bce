"""Page tokens: where the next page of a list starts, as an opaque string.

A token is a few non-negative integers (a version, a sequence, …) in
URL-safe base64; a token that does not decode to as many is refused with
INVALID_ARGUMENT ``PAGE_TOKEN_INVALID``.
"""

from __future__ import annotations

import base64
import binascii

from service.errors import InvalidArgument


def encode(*cursor: int) -> str:
    """The token of ``cursor``."""
    text = ".".join(str(n) for n in cursor)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode(token: str, fields: int, first: tuple[int, ...]) -> tuple[int, ...]:
    """The cursor of ``token`` (``first`` for an empty one)."""
    if not token:
        return first
    try:
        padded = token + "=" * (-len(token) % 4)
        text = base64.urlsafe_b64decode(padded.encode()).decode()
        cursor = tuple(int(part) for part in text.split("."))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        cursor = ()
    if len(cursor) != fields or any(n < 0 for n in cursor):
        raise InvalidArgument(
            "PAGE_TOKEN_INVALID",
            "page_token is not one this service gave; start with an empty one.",
            "page_token",
        )
    return cursor


def page_size(asked: int, default: int, most: int) -> int:
    """The page size to use for ``asked`` (0: ``default``; at most ``most``)."""
    if asked < 0:
        raise InvalidArgument(
            "PAGE_SIZE_NEGATIVE", "page_size cannot be negative.", "page_size"
        )
    return default if asked == 0 else min(asked, most)
