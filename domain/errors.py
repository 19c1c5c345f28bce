"""Domain errors: every refusal carries a stable reason code and a sentence.

The service maps these to gRPC status codes in one place; the domain never
knows about gRPC.
"""

from __future__ import annotations


class DomainError(Exception):
    """A command was refused. ``reason`` is a stable UPPER_SNAKE code;
    ``field``, when one field of the input is wrong, its path (as in the
    proto: ``position.hands[1]``), which the service reports as the field
    violation of an INVALID_ARGUMENT."""

    def __init__(self, reason: str, message: str, field: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.field = field

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!r}, {self.message!r})"


class RuleViolation(DomainError):
    """The rules forbid this move now (maps to FAILED_PRECONDITION)."""


class InvalidCommand(DomainError):
    """The command is malformed whatever the state (maps to INVALID_ARGUMENT)."""


class NotYourSeat(DomainError):
    """The caller does not control the seat the command acts for (PERMISSION_DENIED)."""


#: The longest input a refusal quotes (it says how long the rest was).
QUOTE_CHARS = 40


def quote(text: object, limit: int = QUOTE_CHARS) -> str:
    """``text`` (an input) as a refusal quotes it: its repr, cut to ``limit``
    characters with an ellipsis and the full length. A refusal that echoed
    a long input whole repeated it to its sender, into every log line and
    past the transport's metadata limit."""
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


def position_invalid(field: str, message: str) -> InvalidCommand:
    """A game's refusal of a position (an admin scenario's): reason
    ``POSITION_INVALID``, naming the position's field that is wrong (its path
    below ``position``, as in the proto: ``players[1].hand``)."""
    return InvalidCommand("POSITION_INVALID", message, f"position.{field}")
