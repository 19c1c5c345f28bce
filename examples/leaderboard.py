"""A leaderboard fed by Strata's integration feed.

    STRATA_INTEGRATION_TOKEN=… python examples/leaderboard.py --target localhost:50051

It follows the global log (IntegrationService.FollowLog) for the two event
types it needs — PlayerJoined (who sits where) and GameFinished (who won) —
counts wins per player name and game type, and prints the table after each
finished game. It keeps the last position it has processed in a file, so a
restart resumes exactly where it stopped: the feed never skips or reorders
an event, so nothing is counted twice or missed.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from strata.v1 import integration_service_pb2 as integration_pb

from clients.client import StrataClient


class Leaderboard:
    """Wins per (game type, player name), built from the feed."""

    def __init__(self) -> None:
        self.position = 0
        self.wins: Counter[tuple[str, str]] = Counter()
        self._seats: dict[str, dict[int, str]] = {}
        self._types: dict[str, str] = {}

    def apply(self, item: integration_pb.FollowLogResponse) -> bool:
        """Apply one message of the feed; True when a game finished."""
        self.position = item.position
        if not item.HasField("event"):
            return False
        event = item.event
        body = event.WhichOneof("body")
        if body == "game_created":
            self._types[event.game_id] = event.game_created.game_type
        elif body == "player_joined":
            seats = self._seats.setdefault(event.game_id, {})
            seats[event.player_joined.seat] = event.player_joined.player_name
        elif body == "game_finished":
            names = self._seats.pop(event.game_id, {})
            game_type = self._types.pop(event.game_id, "?")
            for seat in event.game_finished.outcome.winners:
                self.wins[game_type, names.get(seat, f"seat {seat}")] += 1
            return True
        return False

    def table(self) -> str:
        rows = [f"{'game':24} {'player':20} wins"]
        for (game_type, name), wins in self.wins.most_common():
            rows.append(f"{game_type:24} {name:20} {wins}")
        return "\n".join(rows)

    def save(self, path: Path) -> None:
        state = {
            "position": self.position,
            "wins": [[g, n, w] for (g, n), w in self.wins.items()],
            "seats": self._seats,
            "types": self._types,
        }
        path.write_text(json.dumps(state))

    @classmethod
    def load(cls, path: Path) -> Leaderboard:
        board = cls()
        if path.exists():
            state = json.loads(path.read_text())
            board.position = state["position"]
            board.wins = Counter({(g, n): w for g, n, w in state["wins"]})
            board._seats = {
                game: {int(s): name for s, name in seats.items()}
                for game, seats in state["seats"].items()
            }
            board._types = state["types"]
        return board


def feed(
    client: StrataClient, board: Leaderboard, follow: bool
) -> Iterable[integration_pb.FollowLogResponse]:
    return client.follow_log(
        after_position=board.position,
        event_types=["GameCreated", "PlayerJoined", "GameFinished"],
        follow=follow,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="localhost:50051")
    parser.add_argument("--state", default="leaderboard.json", type=Path)
    parser.add_argument("--no-follow", action="store_true")
    args = parser.parse_args()
    token = os.environ.get("STRATA_INTEGRATION_TOKEN", "")
    board = Leaderboard.load(args.state)
    with StrataClient(args.target, token=token) as client:
        for item in feed(client, board, follow=not args.no_follow):
            if board.apply(item):
                print(board.table(), flush=True)
            board.save(args.state)
    print(board.table())


if __name__ == "__main__":
    main()
