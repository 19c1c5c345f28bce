"""Every ``STRATA_*`` environment variable, in one table: its name, its
default as an operator writes it, and what it means.

Configuration loading reads only the names listed here
(:mod:`service.config`), ``strata serve --help`` prints the server's table,
and ``strata serve`` warns at start about any ``STRATA_*`` variable of its
environment the table does not know, naming the closest known one (a
misspelt limit is otherwise silently the default). The standard library
only: the ``strata`` command builds its help without the server installed.
"""

from __future__ import annotations

import dataclasses
import difflib
import textwrap
from collections.abc import Iterable, Mapping

NONE = "(none)"


@dataclasses.dataclass(frozen=True)
class Variable:
    """One environment variable: ``default`` as it would be written
    (:data:`NONE`: unset), ``meaning`` in one sentence."""

    name: str
    default: str
    meaning: str


#: What ``strata serve`` and ``strata worker`` read.
SERVER: tuple[Variable, ...] = (
    Variable(
        "STRATA_DATABASE_URL",
        "sqlite:///data/strata.sqlite3",
        "postgresql://user@host:5432/db (several hosts, libpq's way) or sqlite:///path",
    ),
    Variable(
        "STRATA_READ_DATABASE_URL",
        NONE,
        "comma-separated PostgreSQL hot standbys that serve the reads",
    ),
    Variable("STRATA_PORT", "50051", "the gRPC port"),
    Variable(
        "STRATA_HTTP_PORT",
        "8080",
        "the HTTP listener (Connect, gRPC-Web, the web table, probes, metrics); 0: off",
    ),
    Variable("STRATA_HOST", "[::]", "the address both listeners bind"),
    Variable(
        "STRATA_CORS_ORIGINS",
        NONE,
        "comma-separated origins whose pages may call the HTTP API",
    ),
    Variable("STRATA_TLS_CERT", NONE, "PEM certificate (chain): TLS on every listener"),
    Variable("STRATA_TLS_KEY", NONE, "PEM key of STRATA_TLS_CERT"),
    Variable(
        "STRATA_TLS_CLIENT_CA",
        NONE,
        "PEM authority every client's certificate must be signed by (mutual TLS)",
    ),
    Variable("STRATA_ACCESS_LOG", "all", "a log line per call: all, errors or off"),
    Variable(
        "STRATA_SHUTDOWN_GRACE",
        "10",
        "seconds a graceful shutdown lets running calls finish",
    ),
    Variable("STRATA_ADMIN_TOKEN", NONE, "the admin bearer token"),
    Variable(
        "STRATA_WORKERS",
        "32",
        "threads for the calls that use the database synchronously",
    ),
    Variable("STRATA_LOG_LEVEL", "info", "debug, info, warning or error"),
    Variable(
        "STRATA_INTEGRATION_TOKENS",
        NONE,
        "comma-separated tokens of the integration feed",
    ),
    Variable(
        "STRATA_RATE_PER_PEER", "500", "requests a second one connection may make"
    ),
    Variable("STRATA_RATE_PER_ADDRESS", "1000", "requests a second from one address"),
    Variable("STRATA_RATE_PER_TOKEN", "250", "requests a second with one bearer token"),
    Variable("STRATA_RATE_PER_GAME", "250", "requests a second one game may receive"),
    Variable(
        "STRATA_RATE_BURST_SECONDS",
        "2",
        "seconds' worth of requests a rate's bucket holds",
    ),
    Variable(
        "STRATA_CREATIONS_PER_MINUTE",
        "600",
        "creation budget of an address and of a token (a bot seat costs 10)",
    ),
    Variable(
        "STRATA_BOT_MOVES_PER_SECOND",
        "20",
        "bot moves a second for one creator's games together",
    ),
    Variable(
        "STRATA_BOT_MOVE_MS",
        "250",
        "milliseconds a strong bot may think about one move (its search stops then)",
    ),
    Variable(
        "STRATA_BOT_THINK_SHARE",
        "0.25",
        "seconds of bot thinking a second for one creator's games together",
    ),
    Variable(
        "STRATA_MAX_CALLS_PER_PEER",
        "64",
        "unary calls one connection may have running at once",
    ),
    Variable("STRATA_MAX_CALLS", "1024", "unary calls the server runs at once"),
    Variable("STRATA_MAX_STREAMS", "10000", "streams open at once, in all"),
    Variable(
        "STRATA_MAX_STREAMS_PER_ADDRESS", "64", "streams open at once from one address"
    ),
    Variable(
        "STRATA_MAX_STREAMS_PER_TOKEN", "16", "streams open at once with one token"
    ),
    Variable("STRATA_MAX_STREAMS_PER_GAME", "5000", "streams open at once on one game"),
    Variable("STRATA_MAX_REQUEST_BYTES", "65536", "the largest request accepted"),
    Variable(
        "STRATA_MAX_OPEN_SEATS",
        "8",
        "seats of unstarted games one address (and one token) may hold",
    ),
    Variable(
        "STRATA_MAX_TIMED_GAMES",
        "50",
        "unfinished timed games one address (and one token) may have created",
    ),
    Variable("STRATA_MAX_HEADER_BYTES", "8192", "bytes of an HTTP request's headers"),
    Variable(
        "STRATA_HEADER_TIMEOUT",
        "10",
        "seconds an HTTP request's headers (a gRPC handshake) may take",
    ),
    Variable("STRATA_BODY_TIMEOUT", "30", "seconds an HTTP request's body may take"),
    Variable(
        "STRATA_MAX_CONNECTIONS_PER_ADDRESS",
        "128",
        "HTTP connections open at once from one address",
    ),
    Variable(
        "STRATA_MAX_CONNECTIONS",
        "0",
        "connections each listener holds at once; 0: from the open-file limit",
    ),
    Variable(
        "STRATA_STORE_TIMEOUT",
        "10",
        "seconds a call may wait on the database (then UNAVAILABLE STORE_TIMEOUT)",
    ),
    Variable(
        "STRATA_PROCESS",
        "serve",
        "this process's name on every metric series and log line",
    ),
    Variable(
        "STRATA_TRUSTED_PROXIES",
        NONE,
        "reverse proxies (addresses, networks) whose X-Forwarded-For is believed",
    ),
    Variable(
        "STRATA_METRICS_ADDRESS",
        NONE,
        "host:port of a plain listener of its own for metrics and probes",
    ),
    Variable("STRATA_METRICS_TOKEN", NONE, "the bearer token /metrics asks for"),
    Variable(
        "STRATA_OPEN_GAME_HOURS", "24", "hours an unstarted game lives before expiry"
    ),
    Variable(
        "STRATA_MAX_REFUSALS_PER_GAME",
        "1000",
        "refused commands a game's log keeps",
    ),
    Variable(
        "STRATA_EVENT_LOOP",
        "uvloop",
        "the listeners' event loop: uvloop (where installed) or asyncio",
    ),
    Variable(
        "STRATA_BACKGROUND",
        "projections,bots",
        "the background work beside the requests: projections, bots, or none",
    ),
    Variable(
        "STRATA_EXTRA_GAMES",
        NONE,
        "comma-separated Python packages of games besides the built-in ones"
        " (their protos compiled in: docs/ADDING_A_GAME.md)",
    ),
)

#: What the ``strata`` command (the client) reads.
CLIENT: tuple[Variable, ...] = (
    Variable("STRATA_TARGET", "localhost:50051", "the service the client calls"),
    Variable("STRATA_TRANSPORT", "grpc", "grpc, connect, connect-proto or grpc-web"),
    Variable("STRATA_TOKEN", NONE, "the seat token"),
    Variable("STRATA_INTEGRATION_TOKEN", NONE, "the integration feed's token"),
    Variable("STRATA_TLS", NONE, "set: connect over TLS"),
    Variable("STRATA_TLS_CA_FILE", NONE, "the authority the client trusts"),
    Variable("STRATA_TLS_CLIENT_CERT", NONE, "the client's certificate"),
    Variable("STRATA_TLS_CLIENT_KEY", NONE, "the client's key"),
)

#: What the tests, benchmarks and checks read (known, so never warned of).
DEVELOPMENT: tuple[Variable, ...] = (
    Variable("STRATA_TEST_DATABASE_URL", NONE, "the tests' PostgreSQL server"),
    Variable("STRATA_BENCH_DATABASE_URL", NONE, "the benchmarks' database"),
    Variable("STRATA_RANDOM_SEEDS", "300", "random-play seeds per player count"),
    Variable("STRATA_HOSTILE_EXAMPLES", "6", "hostile-client examples"),
    Variable("STRATA_TEST_OUTPUT", "test-output", "where browser tests write"),
    Variable("STRATA_TEST_WORKERS", NONE, "./dev test's pytest workers"),
    Variable(
        "STRATA_TEST_PROTOS",
        NONE,
        "the protos' code compiled with STRATA_EXTRA_GAMES' (tests/extra_games.py)",
    ),
    Variable(
        "STRATA_BREAKING_AGAINST", NONE, "the revision protos are checked against"
    ),
)

KNOWN: frozenset[str] = frozenset(v.name for v in (*SERVER, *CLIENT, *DEVELOPMENT))


def server_variable(name: str) -> str:
    """``name``, which must be in :data:`SERVER` (a name read but not
    listed is a bug: it would be missing from the help and the docs)."""
    if name not in _SERVER_NAMES:
        raise KeyError(f"{name} is not in service.variables.SERVER")
    return name


_SERVER_NAMES = frozenset(v.name for v in SERVER)


def unknown(environ: Mapping[str, str]) -> list[tuple[str, str | None]]:
    """Each ``STRATA_*`` name of ``environ`` no table knows, with the
    closest known name (None: nothing close), sorted."""
    return [
        (name, closest(name, KNOWN))
        for name in sorted(environ)
        if name.startswith("STRATA_") and name not in KNOWN
    ]


def closest(name: str, names: Iterable[str]) -> str | None:
    """The name of ``names`` most like ``name`` (None: none alike)."""
    # Compared without the prefix all share, which would make any two alike.
    stems = {n.removeprefix("STRATA_"): n for n in names}
    found = difflib.get_close_matches(
        name.removeprefix("STRATA_"), sorted(stems), n=1, cutoff=0.6
    )
    return stems[found[0]] if found else None


def help_text(width: int = 79) -> str:
    """The server's variables, each with its default and meaning, as
    ``strata serve --help`` ends."""
    lines = ["environment variables (each with its default):"]
    for variable in SERVER:
        unset = variable.default == NONE
        lines.append(
            f"  {variable.name}" + (" (unset)" if unset else f"={variable.default}")
        )
        lines.extend(
            textwrap.wrap(
                variable.meaning,
                width,
                initial_indent=" " * 6,
                subsequent_indent=" " * 6,
            )
        )
    lines.append(
        "an unknown STRATA_* variable is warned of at start (config.unknown_variable)"
    )
    return "\n".join(lines)
