"""A game in the web table's words, for the terminal (``strata play``).

The web table (``service/web``) says what is happening in per-game words:
``games/<game>.js`` label each command ("Play Pet Rock (3)"), describe each
event ("Ada's Green Rex rolled a 4 to move.") and the game's status, and
``panels.js`` the service's own events and whose move it is. This package
says the same in Python, one module per game with the same functions
(``status``, ``label``, ``describe``; and ``table``, a few lines for what the
page draws), reading the same JSON the page reads (the API's messages in
their JSON form) and the same card names (:mod:`clients.words.content`,
which the page's ``content/<game>.json`` are written from).
``tests/clients/test_words.py`` runs the page's own modules in Node on the
views, actions and events of real games and requires the same sentences
from both, so the two cannot drift apart unnoticed.
"""

from __future__ import annotations

from types import ModuleType

from google.protobuf import json_format
from google.protobuf.message import Message

from clients.words import (
    cubosaurs,
    dinosaurs_extinct,
    escaping_extinction,
    generic,
    happy_little_dinosaurs,
)
from clients.words.content import content
from clients.words.text import Ctx, Json, enum_words, words

#: The words of each game type that has its own; any other game is told by
#: :mod:`clients.words.generic`.
GAMES: dict[str, ModuleType] = {
    "cubosaurs": cubosaurs,
    "dinosaurs_extinct": dinosaurs_extinct,
    "escaping_extinction": escaping_extinction,
    "happy_little_dinosaurs": happy_little_dinosaurs,
}


def as_json(message: Message) -> Json:
    """A message as the API's JSON has it (what the web page receives)."""
    out: Json = json_format.MessageToDict(message)
    return out


def json_key(game_type: str) -> str:
    """The JSON name of a game type's field in the ``oneof game`` messages."""
    head, *rest = game_type.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class TableWords:
    """One game as its viewer sees it, in words: built from ``GetGame``'s
    answer (``game``, the API's JSON) for that viewer."""

    def __init__(self, game: Json) -> None:
        self.game = game
        self.game_type = str(game.get("gameType") or "")
        self.module = GAMES.get(self.game_type, generic)
        self.you = [int(s) for s in game.get("yourSeats") or []]
        self.title: str = getattr(self.module, "TITLE", "") or enum_words(
            self.game_type
        )

    def seat_name(self, seat: int) -> str:
        """A seat as the page names it: the player's name, a bot with its
        seat, or ``Seat N`` (seats counted from 1, as players count)."""
        taken = next(
            (
                s
                for s in self.game.get("seats") or []
                if int(s.get("seat") or 0) == seat
            ),
            None,
        )
        if taken and taken.get("bot"):
            return f"{taken.get('playerName') or 'bot'} (seat {seat + 1})"
        if taken and taken.get("playerName"):
            return str(taken["playerName"])
        return f"Seat {seat + 1}"

    def context(self, actions: list[Json] | None = None, plain: bool = False) -> Ctx:
        """What a game's words read; ``plain``: players named without
        "(you)", as the log names them."""

        def who(seat: int) -> str:
            mark = " (you)" if seat in self.you and not plain else ""
            return f"{self.seat_name(seat)}{mark}"

        return Ctx(
            game=self.game,
            view=(self.game.get("view") or {}).get(json_key(self.game_type)) or {},
            content=content(self.game_type),
            you=self.you,
            who=who,
            name=self.seat_name,
            actions=actions or [],
        )

    def outcome(self, outcome: Json) -> str:
        """ "Ada and Bob won (Escaped)." or "Nobody won …"."""
        winners = [self.seat_name(int(s)) for s in outcome.get("winners") or []]
        result = f" ({enum_words(outcome['result'])})" if outcome.get("result") else ""
        return f"{words(winners)} won{result}." if winners else f"Nobody won{result}."

    def your_move(self) -> bool:
        active = [int(s) for s in self.game.get("activeSeats") or []]
        status = self.game.get("status")
        return status == "GAME_STATUS_ACTIVE" and any(s in self.you for s in active)

    def status(self) -> str:
        """Whose move it is, in words ("Your move. … Waiting for Bob.")."""
        game = self.game
        if game.get("status") == "GAME_STATUS_OPEN":
            taken = sum(1 for s in game.get("seats") or [] if s.get("taken"))
            players = game.get("players") or 0
            return f"Waiting for players: {taken} of {players} seats taken."
        if game.get("status") == "GAME_STATUS_FINISHED":
            return f"Game over. {self.outcome(game.get('outcome') or {})}"
        ctx = self.context()
        active = [int(s) for s in game.get("activeSeats") or []]
        others = [ctx.who(s) for s in active if s not in self.you]
        parts = [
            "Your move." if self.your_move() else "",
            self.module.status(ctx) or "",
            f"Waiting for {words(others)}." if others else "",
        ]
        return " ".join(part for part in parts if part)

    def table(self) -> list[str]:
        """A few lines of what the page draws: scores, hands, the board."""
        lines: list[str] = self.module.table(self.context())
        return lines

    def label(self, action: Json, actions: list[Json] | None = None) -> str:
        """A legal action's button label (the API's description when the
        game has no words for it), after its seat's name when the viewer
        plays several seats."""
        inner = (action.get("command") or {}).get(json_key(self.game_type)) or {}
        key = next(iter(inner), "")
        text: str = self.module.label(key, inner.get(key) or {}, self.context(actions))
        text = text or str(action.get("description") or "")
        if len(self.you) > 1:
            return f"{self.seat_name(int(action.get('seat') or 0))}: {text}"
        return text

    def describe(self, event: Json) -> str | None:
        """An event in words, as the page's log has it (None: no words)."""
        ctx = self.context(plain=True)
        if "gameCreated" in event:
            players = event["gameCreated"].get("players") or 0
            return f"The game was created for {players} players."
        if "playerJoined" in event:
            joined = event["playerJoined"]
            seat = int(joined.get("seat") or 0)
            if joined.get("bot"):
                return f"A {joined['bot']} bot took seat {seat + 1}."
            name = joined.get("playerName") or "A player"
            return f"{name} took seat {seat + 1}."
        if "playerLeft" in event:
            return (
                f"Seat {int(event['playerLeft'].get('seat') or 0) + 1} is free again."
            )
        if "gameStarted" in event:
            return "The game began."
        if "gameFinished" in event:
            outcome = self.outcome(event["gameFinished"].get("outcome") or {})
            return f"The game is over. {outcome}"
        if "seedRevealed" in event:
            return (
                f"The seed was revealed ({event['seedRevealed'].get('seed') or ''}): "
                "anyone can now check the game against the commitment made at "
                "its start."
            )
        if "gameEvent" in event:
            body = event["gameEvent"].get(json_key(self.game_type)) or {}
            key = next(iter(body), "")
            if not key:
                return ""
            described: str | None = self.module.describe(key, body[key] or {}, ctx)
            return described
        return None
