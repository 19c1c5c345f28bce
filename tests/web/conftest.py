"""The web table in a real browser: Debian's chromium driven by Playwright,
against a real server (gRPC and the HTTP listener on free ports, SQLite).

One browser and one server for the whole session keep these tests fast; each
test opens its own browser contexts (separate storage: separate people).
Screenshots go to ``test-output/web/`` (gitignored), or under
``$STRATA_TEST_OUTPUT`` when set.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eventstore import migrate
from service.server import Running
from tests.service.conftest import ADMIN_TOKEN, serve

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]


def renderers() -> tuple[list[str], list[str]]:
    """The registered games with a renderer of their own in the web table
    (service/web/games/<game_type>.js), and those the generic one shows."""
    from domain import registry
    from service.http import WEB

    games = registry.game_types()
    own = [g for g in games if (WEB / "games" / f"{g}.js").exists()]
    return own, [g for g in games if g not in own]


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    url = f"sqlite:///{tmp_path_factory.mktemp('web') / 'strata.sqlite3'}"
    migrate.upgrade(url)
    yield from serve(url)


@pytest.fixture(scope="session")
def base_url(web_server: Running) -> str:
    return f"http://127.0.0.1:{web_server.http_port}"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's chromium, driven by Playwright (its own browser download is
    not used)."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"no {CHROMIUM}: the browser tests need Debian's chromium "
            "(apt-get install -y chromium; .ci/run installs it)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def output_dir() -> Path:
    """Where the screenshots go."""
    base = os.environ.get("STRATA_TEST_OUTPUT")
    out = (Path(base) if base else ROOT / "test-output") / "web"
    out.mkdir(parents=True, exist_ok=True)
    return out


class Person:
    """One browser context (one person's storage) with one page, and what the
    page met: script errors and the API's responses."""

    def __init__(
        self,
        browser: Any,
        base_url: str,
        viewport: tuple[int, int] = (1280, 900),
    ) -> None:
        width, height = viewport
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.context.set_default_timeout(15_000)
        self.page = self.context.new_page()
        self.base_url = base_url
        self.errors: list[str] = []
        self.responses: list[Any] = []
        self.streams: list[str] = []
        self.requested: list[str] = []
        #: The body of every SubmitCommand the page sent (Connect JSON).
        self.commands: list[dict[str, Any]] = []
        self.page.on("request", lambda r: self.requested.append(r.url))
        self.page.on("request", self._command)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        #: What the page logged to its console, for a failed wait.
        self.console: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        #: Requests that got no answer (name and reason), for a failed wait.
        self.failed: list[str] = []
        self.page.on(
            "requestfailed",
            lambda r: self.failed.append(f"{r.url.rsplit('/', 1)[-1]}: {r.failure}"),
        )
        self.page.on(
            "response",
            lambda r: self.responses.append(r) if "/strata.v1." in r.url else None,
        )
        # The body of a response still streaming (WatchGame) is not available
        # to page.on("response") until it ends: read it through CDP.
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("Network.enable")
        self.cdp.on("Network.requestWillBeSent", self._request)
        self.cdp.on("Network.dataReceived", self._data)
        self.stream_data: dict[str, bytearray] = {}

    def _command(self, request: Any) -> None:
        if request.url.endswith("/strata.v1.GameService/SubmitCommand"):
            self.commands.append(json.loads(request.post_data or "{}"))

    def _request(self, event: dict[str, Any]) -> None:
        if "/strata.v1.GameService/WatchGame" in event["request"]["url"]:
            self.streams.append(event["requestId"])

    def received(self) -> list[bytes]:
        """Every API response body this page received so far: the finished
        calls' whole bodies and what the open streams have delivered."""
        bodies = []
        for response in self.responses:
            if "WatchGame" in response.url:
                continue
            try:
                bodies.append(response.body())
            except Exception:  # a request that failed has no body
                continue
        return bodies + self.streamed()

    def streamed(self) -> list[bytes]:
        """What the page's WatchGame streams delivered so far."""
        for request_id in self.streams:
            if request_id in self.stream_data:
                continue
            # What arrived so far; from now on each chunk comes as an event.
            chunk = self.cdp.send(
                "Network.streamResourceContent", {"requestId": request_id}
            )
            self.stream_data[request_id] = bytearray(
                base64.b64decode(chunk.get("bufferedData", ""))
            )
        return [bytes(data) for data in self.stream_data.values()]

    def _data(self, event: dict[str, Any]) -> None:
        data = self.stream_data.get(event["requestId"])
        if data is not None and event.get("data"):
            data.extend(base64.b64decode(event["data"]))

    def goto(self, path: str) -> None:
        self.page.goto(self.base_url + path)

    def showing(self) -> str:
        """What the page shows of itself and of its link to the service, and
        its last API calls: what a failed wait reports."""
        shown = self.page.evaluate(
            """() => {
              const text = (id) => (document.getElementById(id) || {}).textContent;
              return {url: location.pathname, you: text("you"), error: text("error"),
                      connection: text("connection"), body: {...document.body.dataset},
                      visibility: document.visibilityState, focus: document.hasFocus()};
            }"""
        )
        # Whether the page's timers still run (a 50 ms timer against 2 s of
        # message events, which are never throttled).
        timers = self.page.evaluate(
            """() => new Promise((resolve) => {
              let done = false;
              const start = performance.now();
              const ran = () => { if (!done) { done = true; resolve("timers run"); } };
              setTimeout(ran, 50);
              const channel = new MessageChannel();
              channel.port1.onmessage = () => {
                if (done) return;
                if (performance.now() - start > 2000) {
                  done = true;
                  resolve("timers frozen");
                } else channel.port2.postMessage(0);
              };
              channel.port2.postMessage(0);
            })"""
        )
        shown["timers"] = timers
        calls = [f"{r.url.rsplit('/', 1)[-1]} {r.status}" for r in self.responses[-8:]]
        return (
            f"{shown}; last calls {calls}; failed {self.failed[-4:]}; "
            f"errors {self.errors}; console {self.console[-6:]}"
        )

    def wait_until(
        self, script: str, arg: Any = None, timeout: float | None = None
    ) -> None:
        """``page.wait_for_function(script, arg)``, failing with what the
        page showed instead (a timeout alone says nothing about why)."""
        try:
            self.page.wait_for_function(script, arg=arg, timeout=timeout)
        except Exception as error:
            raise AssertionError(
                f"never true: {script} ({arg!r}); the page: {self.showing()}"
            ) from error

    def shows_you(self, text: str) -> None:
        """Waits until the page says who this person plays (``#you``)."""
        self.wait_until(
            "t => (document.querySelector('#you') || {}).textContent === t", text
        )

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def people(browser: Any, base_url: str) -> Iterator[Any]:
    """A factory of people (fresh browser contexts, on a desktop screen unless
    a viewport is given), closed after the test."""
    made: list[Person] = []

    def person(viewport: tuple[int, int] = (1280, 900)) -> Person:
        made.append(Person(browser, base_url, viewport))
        return made[-1]

    yield person
    for p in made:
        p.close()


def api(
    running: Running, method: str, body: dict[str, Any], token: str = ADMIN_TOKEN
) -> dict[str, Any]:
    """A Connect JSON call of GameService (the admin's by default)."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", running.http_port, timeout=10)
    try:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        connection.request(
            "POST",
            f"/strata.v1.GameService/{method}",
            body=json.dumps(body).encode(),
            headers=headers,
        )
        response = connection.getresponse()
        data: dict[str, Any] = json.loads(response.read())
        assert response.status == 200, data
        return data
    finally:
        connection.close()


def create_for_two(person: Person, game_type: str, second: str = "person") -> str:
    """Creates a two-seat game in ``person``'s lobby, seat 1 theirs (named
    Ada), seat 2 ``second`` ("person": a join link; or a bot); the game's
    id, once the page shows its table."""
    page = person.page
    person.goto("/")
    page.select_option("#game-type", game_type)
    page.fill("#players", "2")
    page.dispatch_event("#players", "change")
    page.select_option('#seat-choices select[data-seat="1"]', second)
    page.fill("#player-name", "Ada")
    page.click("#create")
    page.wait_for_url(re.compile(r"/game/[0-9a-f]+$"))
    return str(page.url.rsplit("/", 1)[1])


def hot_seat(person: Person, game_type: str) -> str:
    """A started two-seat game both of whose seats ``person``'s browser
    plays (one token); the game's id."""
    game_id = create_for_two(person, game_type)
    person.page.click('button.join[data-seat="1"]')
    person.page.click("#start")
    return game_id


#: axe-core, from npm: a devDependency of the TypeScript client, installed
#: by `npm ci --prefix clients/typescript` (.ci/run does it).
AXE = ROOT / "clients" / "typescript" / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core's script, installed with the TypeScript client's packages
    when missing."""
    if not AXE.exists():
        import shutil
        import subprocess

        npm = shutil.which("npm")
        assert npm, "axe-core comes from npm: install Node 20 and npm"
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=AXE.parents[2],
            check=True,
            capture_output=True,
        )
    return AXE.read_text()


def axe_violations(page: Any, source: str) -> list[str]:
    """What axe-core finds wrong on the page as it is now (every rule of
    WCAG 2.1 A and AA and axe's best practices), one line a violation."""
    if not page.evaluate("() => Boolean(window.axe)"):
        page.evaluate(source)
    found: list[dict[str, Any]] = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ["violations"]}))
            .violations.map((v) => ({id: v.id, impact: v.impact,
              help: v.help, nodes: v.nodes.map((n) => n.target.join(" "))}))"""
    )
    return [
        f"{v['impact']} {v['id']} ({v['help']}): {', '.join(v['nodes'][:5])}"
        for v in found
    ]
