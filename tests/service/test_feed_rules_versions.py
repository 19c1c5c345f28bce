"""The integration feed reads each game under its own rules version, and a
long follow holds a bounded number of games.

Through a real server: ``FollowLog`` decodes and redacts each event with the
rules the game was created under (a rules version only this test ships
shows which), refuses an event of a game whose version is no longer shipped
as ``GetGame`` refuses the game, and keeps the rules of the
:data:`~service.administration.FEED_GAMES` most recently seen games only,
reading a forgotten game's creation again when it comes back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc
import pytest

from clients.client import StrataClient, StrataError
from domain import registry
from domain.chance import Rng
from domain.dinosaurs_extinct.model import DieRolled, Event
from domain.dinosaurs_extinct.rules import DinosaursExtinctRules
from domain.frozen import replace
from domain.rules import Role, Viewer
from service import administration
from service.callers import Caller
from service.server import Running
from tests.service.conftest import INTEGRATION_TOKEN

DATA = Path(__file__).resolve().parents[1] / "data"
STORED = DATA / "dinosaurs_extinct_v1.strata.json"
ADMIN = "admin"  # feed_server's
MARKED = "0-marked"


class MarkedRules(DinosaursExtinctRules):
    """A rules version of Dinosaurs Extinct? that only these tests ship: the
    same game, but a spectator is told every die showed 6 (so the feed shows
    which rules redacted an event)."""

    rules_version = MARKED

    def redact(self, event: Event, viewer: Viewer) -> Event:
        event = super().redact(event, viewer)
        if isinstance(event, DieRolled) and viewer.role is Role.SPECTATOR:
            return replace(event, value=6)
        return event


def relabelled(version: str) -> bytes:
    """The stored game's export document as if created under ``version``."""
    document = json.loads(STORED.read_bytes())
    document["rules_version"] = version
    document["events"][0]["data"]["rules_version"] = version
    return json.dumps(document).encode()


def feed_events(running: Running, **filters: Any) -> list[Any]:
    with StrataClient(f"127.0.0.1:{running.port}", token=INTEGRATION_TOKEN) as client:
        return [
            r.event
            for r in client.follow_log(follow=False, **filters)
            if r.HasField("event")
        ]


def rolls(events: list[Any], game_id: str) -> list[int]:
    return [
        e.game_event.dinosaurs_extinct.die_rolled.value
        for e in events
        if e.game_id == game_id and e.type == "DieRolled"
    ]


def test_the_feed_redacts_each_game_under_its_own_rules_version(
    feed_server: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry.rules_versions("dinosaurs_extinct")  # the registry, loaded
    monkeypatch.setitem(
        registry._VERSIONS, ("dinosaurs_extinct", MARKED), MarkedRules()
    )
    with StrataClient(f"127.0.0.1:{feed_server.port}", token=ADMIN) as admin:
        admin.import_game(STORED.read_bytes(), "plain")
        admin.import_game(relabelled(MARKED), "marked")

    events = feed_events(feed_server)

    plain, marked = rolls(events, "plain"), rolls(events, "marked")
    assert len(plain) == len(marked) > 10
    assert set(marked) == {6}  # the marked version's redaction
    assert set(plain) != {6}  # the stored version's own: the dice as rolled
    created = [e.game_created for e in events if e.type == "GameCreated"]
    assert [c.rules_version for c in created] == ["1", MARKED]


def test_the_feed_refuses_an_event_of_a_rules_version_no_longer_shipped(
    feed_server: Running,
) -> None:
    with StrataClient(f"127.0.0.1:{feed_server.port}", token=ADMIN) as admin:
        admin.import_game(STORED.read_bytes(), "shipped")
        with pytest.raises(StrataError) as unverified:  # rules not shipped
            admin.import_game(relabelled("0"), "unshipped")
        assert unverified.value.reason == "IMPORT_NOT_VERIFIED"
        # Trusted, it is stored as it came, and refused as GetGame does.
        with pytest.raises(StrataError):
            admin.import_game(relabelled("0"), "unshipped", trust=True)
        with pytest.raises(StrataError) as get_game:
            admin.get_game("unshipped")

    target = f"127.0.0.1:{feed_server.port}"
    with StrataClient(target, token=INTEGRATION_TOKEN) as client:
        received = []
        with pytest.raises(StrataError) as refused:
            for response in client.follow_log(follow=False):
                if response.HasField("event"):
                    received.append(response.event)

    assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.reason == get_game.value.reason == "RULES_VERSION_UNAVAILABLE"
    assert "unshipped" in str(refused.value)
    # Every event before the refused one was sent: the whole first game.
    stored = json.loads(STORED.read_bytes())["events"]
    assert [(e.game_id, e.version) for e in received] == [
        ("shipped", v + 1) for v in range(len(stored))
    ]
    # Filtered out, its events refuse nothing (its creation is read for its
    # type only).
    assert feed_events(feed_server, event_types=["PlayerLeft"]) == []


class CountedFeedGames(administration._FeedGames):
    """The feed's games, with the most it held and the creations it read."""

    most = 0
    reads = 0

    async def created(self, recorded: Any) -> tuple[str, str]:
        if recorded.game_id not in self._created and recorded.type != "GameCreated":
            CountedFeedGames.reads += 1
        known = await super().created(recorded)
        CountedFeedGames.most = max(CountedFeedGames.most, len(self._created))
        return known


def interleaved_games(running: Running, games: int, rounds: int) -> list[str]:
    """``games`` Dinosaurs Extinct? games whose moves alternate in the log."""
    app = running.app
    ids, tokens = [], []
    for g in range(games):
        game_id, _, _ = app.create_game(
            Caller(admin=True), "dinosaurs_extinct", 2, seed=f"lru-{g}"
        )
        seats = [app.join_game(app.caller(""), game_id, s, f"p{s}")[1] for s in (0, 1)]
        app.start_game(app.caller(seats[0]), game_id)
        ids.append(game_id)
        tokens.append(seats)
    for n in range(rounds):
        for game_id, seats in zip(ids, tokens, strict=True):
            state = app.load(game_id).state
            active = sorted(app.load(game_id).session.active_seats(state))
            if not active:
                continue
            seat = active[0]
            _, actions = app.legal_actions(app.caller(seats[seat]), game_id, seat)
            command = Rng(game_id, n).choice(actions)[1]
            app.submit(app.caller(seats[seat]), game_id, seat, f"m{n}", command)
    return ids


def test_a_long_feed_holds_a_bounded_number_of_games(
    feed_server: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = interleaved_games(feed_server, games=4, rounds=6)
    everything = feed_events(feed_server)
    monkeypatch.setattr(administration, "FEED_GAMES", 2)
    monkeypatch.setattr(administration, "_FeedGames", CountedFeedGames)
    monkeypatch.setattr(CountedFeedGames, "most", 0)
    monkeypatch.setattr(CountedFeedGames, "reads", 0)

    bounded = feed_events(feed_server)

    assert bounded == everything  # the same events, decoded the same
    assert CountedFeedGames.most == 2
    # Four games taking turns through two places: their creations were
    # read again (and only so: each read was of a forgotten game).
    assert CountedFeedGames.reads >= len(ids)
