"""How a sentence names a seat.

The API numbers seats from 0 (``seat: 0`` plays first); players, the web
table and the terminal count them from 1. Every human sentence the rules and
the service build (an error's message, a verification finding) names a
seat as players count it: the API's seat 0 is "seat 1". What a program
reads stays the API's: the ``seat`` fields, field paths (``players[0]``),
reason codes, command ids (``join-seat-0-at-2``). A number that is not a
seat (an out-of-range ``seat`` a request sent) is quoted as sent, with the
seats there are in both countings.
"""

from __future__ import annotations


def seat_number(seat: int) -> int:
    """The seat as players count it: 1 for the API's seat 0."""
    return seat + 1


def no_such_seat(seat: int, seats: int) -> str:
    """The sentence for a ``seat`` field that names no seat of the game."""
    return (
        f"There is no seat {seat} in the API's numbering: this game's seats are "
        f"0 to {seats - 1} (seat 1 to seat {seats} as players count them)."
    )
