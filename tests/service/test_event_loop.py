"""The listeners' event loop (``STRATA_EVENT_LOOP``): uvloop by default,
asyncio's when asked; a whole game over gRPC, Connect and gRPC-Web on
either, and `strata serve` saying which it runs on."""

from __future__ import annotations

from pathlib import Path

import pytest
import uvloop

from eventstore.factory import open_store
from service.config import DEFAULT_EVENT_LOOP, Config, ConfigError
from service.server import create_server
from tests.service.conftest import ADMIN_TOKEN, NO_RATE_LIMITS, TRANSPORTS, client_for
from tests.service.served import Served
from tests.service.test_configuration import serve_on_sqlite
from tests.service.test_end_to_end import play_to_end, seated_game
from tests.service.test_startup import assert_refused_in_one_line


def test_uvloop_is_the_default_where_it_is_installed() -> None:
    assert DEFAULT_EVENT_LOOP == "uvloop"
    assert Config.from_env({}).event_loop == "uvloop"
    assert Config.from_env({"STRATA_EVENT_LOOP": "asyncio"}).event_loop == "asyncio"
    with pytest.raises(ConfigError, match="STRATA_EVENT_LOOP"):
        Config.from_env({"STRATA_EVENT_LOOP": "trio"})


@pytest.mark.parametrize("kind", ["uvloop", "asyncio"])
def test_a_game_is_played_to_its_end_over_every_transport_on_either_loop(
    sqlite_url: str, kind: str
) -> None:
    store = open_store(sqlite_url)
    running = create_server(
        store,
        admin_token=ADMIN_TOKEN,
        limits=NO_RATE_LIMITS,
        http_port=0,
        event_loop=kind,
    )
    try:
        assert isinstance(running.loop, uvloop.Loop) == (kind == "uvloop")
        for number, transport in enumerate(TRANSPORTS):
            with client_for(running, transport) as client:
                game_id, seats = seated_game(client, seed=f"{kind}-{number}")
                seats[0].start_game(game_id)
                game = play_to_end(client, game_id, seats)
                assert game.version > 2
                events = list(client.watch_game(game_id, follow=False))
                assert len(events) == game.version
    finally:
        running.stop(grace=0.5)
        store.close()


def test_serve_names_its_loop_in_its_start_line(tmp_path: Path) -> None:
    served = Served(tmp_path, {"STRATA_EVENT_LOOP": "asyncio"})
    try:
        assert served.wait_serving()["event_loop"] == "asyncio"
    finally:
        assert served.stop() == 0
    served = Served(tmp_path)
    try:
        assert served.wait_serving()["event_loop"] == "uvloop"
    finally:
        assert served.stop() == 0


def test_a_loop_it_does_not_know_is_one_line_at_start_up(tmp_path: Path) -> None:
    result = serve_on_sqlite(tmp_path, STRATA_EVENT_LOOP="libev")
    assert_refused_in_one_line(result, "STRATA_EVENT_LOOP")


def test_uvloop_asked_for_where_it_is_not_installed_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from service import config

    monkeypatch.setattr(config, "DEFAULT_EVENT_LOOP", "asyncio")  # as without it
    assert config.Config.from_env({}).event_loop == "asyncio"
    with pytest.raises(ConfigError, match="uvloop is not installed"):
        config.Config.from_env({"STRATA_EVENT_LOOP": "uvloop"})
