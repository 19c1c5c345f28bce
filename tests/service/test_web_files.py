"""The web table's files go compressed and with validators: gzip when the
browser accepts it, an ETag and ``Cache-Control: no-cache`` (kept, asked
again before use: a 304 when unchanged), and still with the page's CSP
(frame-ancestors 'none') on every answer; nothing outside the folder can
be named."""

from __future__ import annotations

import gzip
from collections.abc import Iterator

import pytest

from eventstore import migrate
from service.http import WEB
from service.server import Running
from tests.service.conftest import http_call, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    url = f"sqlite:///{tmp_path_factory.mktemp('web-files') / 'strata.sqlite3'}"
    migrate.upgrade(url)
    yield from serve(url)


@pytest.mark.parametrize(
    "path, file",
    [
        ("/static/table.js", "table.js"),
        ("/static/games/escaping_extinction.js", "games/escaping_extinction.js"),
        ("/static/content/cubosaurs.json", "content/cubosaurs.json"),
        ("/game/0123456789abcdef", "index.html"),
    ],
)
def test_a_file_goes_gzipped_with_an_etag_and_comes_back_as_304(
    server: Running, path: str, file: str
) -> None:
    original = (WEB / file).read_bytes()
    status, plain, body = http_call(server.http_port, "GET", path)
    assert status == 200 and body == original
    assert "content-encoding" not in plain
    status, headers, body = http_call(
        server.http_port, "GET", path, headers={"Accept-Encoding": "gzip, br"}
    )
    assert status == 200
    if len(original) >= 512:
        assert headers["content-encoding"] == "gzip"
        assert gzip.decompress(body) == original and len(body) < len(original)
        assert headers["etag"] != plain["etag"]  # another representation
    assert headers["vary"] == "Accept-Encoding"
    assert headers["cache-control"] == "no-cache"
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    # Asked again with the validator: 304, no body, the same headers.
    status, again, body = http_call(
        server.http_port,
        "GET",
        path,
        headers={"Accept-Encoding": "gzip", "If-None-Match": headers["etag"]},
    )
    assert status == 304 and body == b""
    assert again["etag"] == headers["etag"]
    assert "frame-ancestors 'none'" in again["content-security-policy"]
    # The other representation's ETag does not match this one.
    status, _, _ = http_call(
        server.http_port, "GET", path, headers={"If-None-Match": headers["etag"]}
    )
    assert status == 200 or len(original) < 512


def test_scripts_and_styles_have_their_types(server: Running) -> None:
    for path, kind in (
        ("/static/app.js", "javascript"),
        ("/static/style.css", "text/css"),
        ("/", "text/html"),
    ):
        status, headers, _ = http_call(server.http_port, "GET", path)
        assert status == 200 and kind in headers["content-type"], path


@pytest.mark.parametrize(
    "path",
    [
        "/static/../http.py",
        "/static/%2e%2e/http.py",
        "/static/..%2fhttp.py",
        "/static/nothing.js",
        "/static/",
    ],
)
def test_nothing_but_the_web_tables_files_is_served(server: Running, path: str) -> None:
    status, _, body = http_call(server.http_port, "GET", path)
    assert status == 404
    assert b"import" not in body
