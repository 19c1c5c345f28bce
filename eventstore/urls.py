"""Database URLs: which backend a URL names and which driver serves it.

Users write the URLs they know (``postgres://``, ``postgresql://``,
``sqlite:///strata.db``); the store always talks to PostgreSQL through
psycopg 3 and to SQLite through the standard library's ``sqlite3``.

A PostgreSQL URL may name several servers, as libpq's do
(``postgresql://h1:5432,h2:5432/strata?target_session_attrs=read-write``,
what ``pg_autoctl show uri`` prints): libpq tries them in turn and keeps
the first that has the attributes asked for, so after a failover a new
connection finds the new primary by itself (docs/SCALING.md, "Surviving
the primary's loss").
"""

from __future__ import annotations

import re
from urllib.parse import quote

from sqlalchemy.engine import URL, make_url

POSTGRES_DRIVER = "postgresql+psycopg"

#: ``scheme://[user[:password]@]hosts[/database][?query]``, hosts holding a
#: comma: libpq's multi-host form, which SQLAlchemy's parser does not read.
_MULTI_HOST = re.compile(
    r"^(?P<scheme>[\w+.-]+)://(?:(?P<user>[^/?#]*)@)?"
    r"(?P<hosts>[^/?#@]*,[^/?#@]*)(?P<path>/[^?#]*)?(?:\?(?P<query>[^#]*))?$"
)
_HOST_PORT = re.compile(r"^(?:\[(?P<v6>[^\]]*)\]|(?P<name>[^:]*))(?::(?P<port>\d*))?$")


def database_url(url: str | URL) -> URL:
    """Parse ``url`` and pin its driver.

    ``postgres://`` and ``postgresql://`` become ``postgresql+psycopg://``;
    ``sqlite://`` URLs are kept. Any other scheme raises :class:`ValueError`.
    A PostgreSQL URL with several ``host[:port]`` (comma-separated, libpq's
    form) keeps them all, in order, as SQLAlchemy's ``host``/``port`` query
    values.
    """
    parsed = make_url(_hosts_in_query(url)) if isinstance(url, str) else url
    if parsed.drivername in ("postgres", "postgresql", POSTGRES_DRIVER):
        return parsed.set(drivername=POSTGRES_DRIVER)
    if parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        return parsed
    raise ValueError(
        f"unsupported database URL scheme {parsed.drivername!r}: use "
        "sqlite:///path/to/file.db or postgresql://user@host:port/database"
    )


def _hosts_in_query(url: str) -> str:
    """libpq's ``postgresql://u@h1:p1,h2:p2/db?…`` as SQLAlchemy reads it:
    ``postgresql://u@/db?host=h1,h2&port=p1,p2&…`` (others unchanged)."""
    match = _MULTI_HOST.match(url.strip())
    if match is None:
        return url
    hosts: list[str] = []
    ports: list[str] = []
    for item in match["hosts"].split(","):
        part = _HOST_PORT.match(item.strip())
        if part is None or not (part["v6"] or part["name"]):
            raise ValueError(f"database URL: {item!r} is not a host[:port]")
        hosts.append(part["v6"] or part["name"])
        ports.append(part["port"] or "")
    query = [f"host={quote(','.join(hosts), safe=',:')}"]
    if any(ports):
        query.append(f"port={','.join(ports)}")
    if match["query"]:
        query.append(match["query"])
    user = f"{match['user']}@" if match["user"] is not None else ""
    return f"{match['scheme']}://{user}{match['path'] or '/'}?{'&'.join(query)}"


def split_urls(text: str) -> tuple[str, ...]:
    """A comma-separated list of database URLs, each of which may itself
    hold commas between its hosts: a comma starts a new URL only where a
    scheme (``…://``) follows."""
    urls: list[str] = []
    for piece in text.split(","):
        piece = piece.strip()
        if not piece:
            continue
        if urls and "://" not in piece:
            urls[-1] += "," + piece
        else:
            urls.append(piece)
    return tuple(urls)


def is_sqlite_memory(url: URL) -> bool:
    """Whether a SQLite URL names a private in-memory database."""
    return url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"
