"""The web table's files: the card names shipped are those the games' data
say, and every file the page loads is served."""

from __future__ import annotations

import http.client
import importlib
import importlib.util
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from service.http import WEB
from service.server import Running
from tests.web.conftest import renderers

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "web_content.py"


def web_content() -> Any:
    """scripts/web_content.py, loaded as a module."""
    spec = importlib.util.spec_from_file_location("web_content", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_card_names_shipped_are_generated_from_the_games_data() -> None:
    stale = [
        path.name
        for path, text in web_content().rendered().items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    assert stale == [], "run .venv/bin/python scripts/web_content.py"


def test_every_module_the_page_imports_is_served(web_server: Running) -> None:
    wanted = {"/static/app.js", "/static/style.css", "/", "/game/0123"}
    for script in WEB.rglob("*.js"):
        for name in re.findall(r'from "\./([^"]+)"', script.read_text()):
            wanted.add(f"/static/{name}")
        for name in re.findall(r'from "\.\./([^"]+)"', script.read_text()):
            wanted.add(f"/static/{name}")
        for name in re.findall(r'from "\./games/([^"]+)"', script.read_text()):
            wanted.add(f"/static/games/{name}")
    wanted |= {f"/static/content/{p.name}" for p in (WEB / "content").glob("*.json")}
    for path in sorted(wanted):
        connection = http.client.HTTPConnection(
            "127.0.0.1", web_server.http_port, timeout=10
        )
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            assert response.status == 200, path
        finally:
            connection.close()


#: The games with a renderer of their own (the others are drawn by the
#: generic one: tests/web/test_generic.py).
GAMES = renderers()[0]


@pytest.mark.parametrize("game_type", GAMES)
def test_every_command_and_event_of_a_game_has_words_in_its_renderer(
    game_type: str,
) -> None:
    module = importlib.import_module(f"strata.games.{game_type}.v1.{game_type}_pb2")
    source = (WEB / "games" / f"{game_type}.js").read_text()
    cases = set(re.findall(r'case "([A-Za-z]+)":', source))
    for message, oneof in (("Command", "command"), ("Event", "event")):
        fields = getattr(module, message).DESCRIPTOR.oneofs_by_name[oneof].fields
        missing = {f.json_name for f in fields} - cases
        assert missing == set(), f"{game_type}.js has no words for {message} {missing}"


def test_the_wheel_ships_every_file_of_the_web_table(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from tests.packaging.test_client_alone import build_wheel

    wheel = build_wheel(tmp_path_factory.mktemp("web-wheel"))
    with zipfile.ZipFile(wheel) as archive:
        shipped = {n for n in archive.namelist() if n.startswith("service/web/")}
    files = {
        f"service/web/{p.relative_to(WEB).as_posix()}"
        for p in WEB.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert files - shipped == set()
