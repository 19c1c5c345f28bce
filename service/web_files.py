"""The web table's files, served compressed and with validators.

Every file under ``service/web/`` is read once, when the listener is built:
its bytes, its gzip-compressed bytes and an ``ETag`` (a digest of the
bytes). A ``GET`` answers with the gzip form when the browser accepts it
(``Vary: Accept-Encoding``; the ETag then names that representation, as
RFC 9110 asks), ``304 Not Modified`` when ``If-None-Match`` names the
current ETag, and ``Cache-Control: no-cache``: the files keep their names
across releases, so a browser keeps them but asks again (a 304 of a few
bytes) before each use, and a new release is never served stale.

Only the files read at the start are served: a path is looked up in that
table, never joined to the file system, so nothing outside the folder can
be named.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Smaller files go as they are: gzip would save next to nothing.
MIN_COMPRESSED_SIZE = 512
CACHE_CONTROL = b"no-cache"
#: Types of text that do not start with ``text/``.
TEXT_TYPES = frozenset({"application/javascript", "application/json"})


@dataclass(frozen=True)
class WebFile:
    """One file: its bytes as they are and gzipped, its type and ETags."""

    body: bytes
    gzipped: bytes | None
    content_type: bytes
    etag: bytes

    @property
    def gzip_etag(self) -> bytes:
        return self.etag[:-1] + b'-gzip"'


def load(folder: Path) -> dict[str, WebFile]:
    """Every file under ``folder``, by its path below it (``games/x.js``)."""
    files: dict[str, WebFile] = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        body = path.read_bytes()
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in TEXT_TYPES:
            kind += "; charset=utf-8"
        digest = hashlib.sha256(body).hexdigest()[:32]
        files[path.relative_to(folder).as_posix()] = WebFile(
            body=body,
            gzipped=(
                gzip.compress(body, compresslevel=9, mtime=0)
                if len(body) >= MIN_COMPRESSED_SIZE
                else None
            ),
            content_type=kind.encode(),
            etag=f'"{digest}"'.encode(),
        )
    return files


def _accepts_gzip(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name == b"accept-encoding":
            for part in value.decode("latin-1").split(","):
                coding, _, params = part.strip().partition(";")
                if coding.strip().lower() in {"gzip", "*"} and params.replace(
                    " ", ""
                ) not in {"q=0", "q=0.0", "q=0.00", "q=0.000"}:
                    return True
    return False


def _if_none_match(headers: list[tuple[bytes, bytes]]) -> list[bytes]:
    tags: list[bytes] = []
    for name, value in headers:
        if name == b"if-none-match":
            tags += [t.strip().removeprefix(b"W/") for t in value.split(b",")]
    return tags


class WebFiles:
    """An ASGI application serving the files of ``folder`` (mounted at
    ``/static``: the path below the mount names the file)."""

    def __init__(self, folder: Path) -> None:
        self.files = load(folder)

    async def respond(self, name: str, scope: Any, send: Any) -> None:
        file = self.files.get(name)
        method = scope.get("method", "GET")
        if file is None or method not in {"GET", "HEAD"}:
            status = 404 if file is None else 405
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8")],
                }
            )
            await send({"type": "http.response.body", "body": b"Not Found\n"})
            return
        headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
        compressed = file.gzipped is not None and _accepts_gzip(headers)
        body = file.gzipped if compressed and file.gzipped is not None else file.body
        etag = file.gzip_etag if compressed else file.etag
        common = [
            (b"etag", etag),
            (b"cache-control", CACHE_CONTROL),
            (b"vary", b"Accept-Encoding"),
        ]
        wanted = _if_none_match(headers)
        if etag in wanted or b"*" in wanted:
            start = {"type": "http.response.start", "status": 304, "headers": common}
            await send(start)
            await send({"type": "http.response.body", "body": b""})
            return
        response = [
            *common,
            (b"content-type", file.content_type),
            (b"content-length", str(len(body)).encode()),
        ]
        if compressed:
            response.append((b"content-encoding", b"gzip"))
        await send({"type": "http.response.start", "status": 200, "headers": response})
        await send(
            {"type": "http.response.body", "body": b"" if method == "HEAD" else body}
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """The mounted ``/static`` application: the path below the mount."""
        path: str = scope.get("path", "")
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        await self.respond(path.lstrip("/"), scope, send)

    def page(self, name: str = "index.html") -> Page:
        """An ASGI application answering with one file whatever the path (the
        page of the lobby and of every table)."""
        return Page(self, name)


class Page:
    """One file of :class:`WebFiles` at a route of its own."""

    def __init__(self, files: WebFiles, name: str) -> None:
        self.files = files
        self.name = name

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.files.respond(self.name, scope, send)
