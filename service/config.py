"""Configuration from environment variables."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
from pathlib import Path

from sqlalchemy.exc import ArgumentError

from domain import registry
from eventstore.urls import database_url, split_urls
from service.addresses import parse_networks
from service.calls import MAX_TOKEN_CHARS, TOKEN_SHAPE
from service.limits import LimitSettings
from service.tls import TlsFiles
from service.variables import server_variable

DEFAULT_PORT = 50051
DEFAULT_HTTP_PORT = 8080

#: The event loops a service process can run its listeners on
#: (``STRATA_EVENT_LOOP``): uvloop where it is installed, else asyncio's.
EVENT_LOOPS = ("uvloop", "asyncio")


def _uvloop_installed() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


DEFAULT_EVENT_LOOP = "uvloop" if _uvloop_installed() else "asyncio"


def new_event_loop(kind: str = DEFAULT_EVENT_LOOP) -> asyncio.AbstractEventLoop:
    """A new event loop of ``kind`` (one of :data:`EVENT_LOOPS`)."""
    if kind == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


#: The background work a service process can run beside its requests.
BACKGROUND_WORK = ("projections", "bots")


def parse_background(raw: str | None) -> tuple[str, ...]:
    """``STRATA_BACKGROUND``: a comma-separated subset of
    :data:`BACKGROUND_WORK`, or ``none``; unset or empty: all of it."""
    if raw is None or not raw.strip():
        return BACKGROUND_WORK
    names = [n.strip().lower() for n in raw.split(",") if n.strip()]
    if names == ["none"]:
        return ()
    unknown = [n for n in names if n not in BACKGROUND_WORK]
    if unknown:
        raise ValueError(
            f"STRATA_BACKGROUND: unknown {', '.join(unknown)}; use a comma-separated "
            f"subset of {', '.join(BACKGROUND_WORK)}, or none"
        )
    return tuple(n for n in BACKGROUND_WORK if n in names)


def default_database_url() -> str:
    """A SQLite file in the working directory's ``data/`` folder."""
    return f"sqlite:///{Path('data') / 'strata.sqlite3'}"


@dataclasses.dataclass(frozen=True)
class Config:
    """What the service needs to run.

    - ``STRATA_DATABASE_URL``: ``postgresql://…`` or ``sqlite:///path``
      (default: ``sqlite:///data/strata.sqlite3``);
    - ``STRATA_PORT``: the port to listen on (default 50051);
    - ``STRATA_HOST``: the address to bind (default ``[::]``, every interface);
    - ``STRATA_ADMIN_TOKEN``: the admin bearer token (unset: no admin);
    - ``STRATA_WORKERS``: threads for the requests that use the database
      synchronously (default 32; the server itself is ``grpc.aio``);
    - ``STRATA_LOG_LEVEL``: ``debug``, ``info`` (default), ``warning``;
    - ``STRATA_INTEGRATION_TOKENS``: comma-separated tokens for the
      integration feed (IntegrationService);
    - ``STRATA_RATE_PER_PEER``, ``STRATA_RATE_PER_GAME`` and the other limits
      of :class:`service.limits.LimitSettings`;
    - ``STRATA_HTTP_PORT``: the HTTP listener's port (default 8080; 0: off);
    - ``STRATA_CORS_ORIGINS``: comma-separated origins allowed to call the
      HTTP API from a browser (unset: the same origin only);
    - ``STRATA_TRUSTED_PROXIES``, ``STRATA_METRICS_ADDRESS``,
      ``STRATA_METRICS_TOKEN``: see the fields below;
    - ``STRATA_BACKGROUND``: the background work ``strata serve`` runs beside
      its requests: ``projections`` (the game list behind ListGames and the
      statistics) and ``bots`` (the bot seats' moves), comma-separated, or
      ``none`` (default: both). Run what a replica leaves out in another
      (``strata worker``);
    - ``STRATA_EVENT_LOOP``: ``uvloop`` (the default where installed) or
      ``asyncio``.
    """

    database_url: str = dataclasses.field(default_factory=default_database_url)
    port: int = DEFAULT_PORT
    host: str = "[::]"
    admin_token: str = ""
    workers: int = 32
    log_level: str = "info"
    integration_tokens: tuple[str, ...] = ()
    limits: LimitSettings = dataclasses.field(default_factory=LimitSettings)
    background: tuple[str, ...] = BACKGROUND_WORK
    #: The HTTP listener's port (Connect, gRPC-Web, the web table); 0: none.
    http_port: int = DEFAULT_HTTP_PORT
    #: Origins allowed to call the HTTP API from a browser (none: the same
    #: origin only).
    cors_origins: tuple[str, ...] = ()

    #: ``STRATA_ACCESS_LOG``: a log line per call (``all``), per call that
    #: did not end OK (``errors``), or none (``off``).
    access_log: str = "all"
    #: ``STRATA_SHUTDOWN_GRACE``: seconds a graceful shutdown lets running
    #: calls and streams finish.
    shutdown_grace: float = 10.0
    #: ``STRATA_TLS_CERT`` / ``STRATA_TLS_KEY`` / ``STRATA_TLS_CLIENT_CA``:
    #: TLS on every listener (None: plain).
    tls: TlsFiles | None = None
    #: ``STRATA_READ_DATABASE_URL``: PostgreSQL hot standbys (comma-separated;
    #: each URL may name several hosts, libpq's way) that serve the reads of
    #: the global log, each once it has replayed the commits the process
    #: knows of (else the primary answers).
    read_database_urls: tuple[str, ...] = ()
    #: ``STRATA_TRUSTED_PROXIES``: addresses and networks (comma-separated,
    #: ``10.0.0.0/8``) of reverse proxies whose ``X-Forwarded-For`` names
    #: the client (unset: none; every caller is its connection's address).
    trusted_proxies: tuple[str, ...] = ()
    #: ``STRATA_METRICS_ADDRESS``: ``host:port`` of a listener of its own
    #: for ``/metrics`` (and ``/healthz``), e.g. ``127.0.0.1:9464`` or a pod
    #: IP; set, the HTTP listener serves no ``/metrics``. Unset: ``/metrics``
    #: on the HTTP listener.
    metrics_address: str = ""
    #: ``STRATA_METRICS_TOKEN``: set, ``/metrics`` answers only
    #: ``authorization: Bearer <it>`` (401 otherwise), wherever it is served.
    metrics_token: str = ""
    #: ``STRATA_EVENT_LOOP``: the event loop the listeners run on, ``uvloop``
    #: (the default where it is installed: libuv's, about a tenth less CPU a
    #: call) or ``asyncio`` (the standard library's).
    event_loop: str = DEFAULT_EVENT_LOOP

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Config:
        """The configuration the environment gives; :class:`ConfigError`
        listing every variable that is wrong."""
        env = dict(os.environ if environ is None else environ)
        read = _Reader(env)
        config = cls(
            database_url=read.database("STRATA_DATABASE_URL"),
            port=read.port("STRATA_PORT", DEFAULT_PORT),
            host=read.host("STRATA_HOST"),
            admin_token=read.text("STRATA_ADMIN_TOKEN"),
            workers=read.integer("STRATA_WORKERS", 32, least=1),
            log_level=read.choice(
                "STRATA_LOG_LEVEL", "info", ("debug", "info", "warning", "error")
            ),
            integration_tokens=read.listed("STRATA_INTEGRATION_TOKENS"),
            limits=read.limits(),
            background=read.background(),
            http_port=read.port("STRATA_HTTP_PORT", DEFAULT_HTTP_PORT, off=True),
            cors_origins=read.listed("STRATA_CORS_ORIGINS"),
            access_log=read.choice(
                "STRATA_ACCESS_LOG", "all", ("all", "errors", "off")
            ),
            shutdown_grace=read.number("STRATA_SHUTDOWN_GRACE", 10.0, least=0),
            tls=read.tls(),
            read_database_urls=read.standbys("STRATA_READ_DATABASE_URL"),
            trusted_proxies=read.networks("STRATA_TRUSTED_PROXIES"),
            metrics_address=read.address("STRATA_METRICS_ADDRESS"),
            metrics_token=read.token("STRATA_METRICS_TOKEN"),
            event_loop=read.choice(
                "STRATA_EVENT_LOOP", DEFAULT_EVENT_LOOP, EVENT_LOOPS
            ),
        )
        read.tokens("STRATA_ADMIN_TOKEN", (config.admin_token,))
        if environ is None:
            read.games()
        read.tokens("STRATA_INTEGRATION_TOKENS", config.integration_tokens)
        database = config.database_url
        if config.read_database_urls and not database.startswith("postgres"):
            read.problems.append(
                "STRATA_READ_DATABASE_URL names standbys of a PostgreSQL primary, "
                f"and STRATA_DATABASE_URL is not one ({database.split(':', 1)[0]})"
            )
        if config.event_loop == "uvloop" != DEFAULT_EVENT_LOOP:  # not installed
            read.problems.append(
                "STRATA_EVENT_LOOP=uvloop: uvloop is not installed "
                "(pip install uvloop), or set asyncio"
            )
        if read.problems:
            raise ConfigError(read.problems)
        return config


class ConfigError(ValueError):
    """Variables of the environment that are wrong (all of them)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class _Reader:
    """Reads variables, collecting what is wrong instead of stopping at it."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.problems: list[str] = []

    def _raw(self, name: str) -> str:
        return self.env.get(server_variable(name), "").strip()

    def text(self, name: str) -> str:
        return self.env.get(server_variable(name), "")

    def database(self, name: str) -> str:
        """A database URL the store can open (its scheme, hosts and ports
        make sense); the problem never repeats the URL (a password)."""
        raw = self._raw(name) or default_database_url()
        problem = database_problem(raw)
        if problem:
            self.problems.append(f"{name}: {problem}")
        return raw

    def standbys(self, name: str) -> tuple[str, ...]:
        urls = split_urls(self._raw(name))
        for url in urls:
            if url.startswith("postgres"):
                problem = database_problem(url)
            else:
                problem = f"{url.split(':', 1)[0]}: is not a PostgreSQL URL"
            if problem:
                self.problems.append(f"{name}: {problem}")
        return urls

    def host(self, name: str) -> str:
        """A host name or address that resolves (``[::1]`` for IPv6)."""
        raw = self._raw(name) or "[::]"
        problem = host_problem(raw)
        if problem:
            self.problems.append(f"{name}={raw!r} {problem}")
        return raw

    def integer(self, name: str, default: int, least: int = 0) -> int:
        raw = self._raw(name)
        if not raw:
            return default
        try:
            value = int(raw)
        except ValueError:
            value = least - 1
        if value < least:
            self.problems.append(f"{name}={raw!r} is not a whole number >= {least}")
            return default
        return value

    def number(self, name: str, default: float, least: float = 0) -> float:
        raw = self._raw(name)
        if not raw:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = least - 1
        if not value >= least:
            self.problems.append(f"{name}={raw!r} is not a number >= {least:g}")
            return default
        return value

    def port(self, name: str, default: int, off: bool = False) -> int:
        raw = self._raw(name)
        if not raw:
            return default
        value = int(raw) if raw.isdigit() else -1
        if not (0 if off else 1) <= value <= 65535:
            what = "0 (off) to 65535" if off else "1 to 65535"
            self.problems.append(f"{name}={raw!r} is not a port ({what})")
            return default
        return value

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        raw = self._raw(name).lower()
        if not raw:
            return default
        if raw not in choices:
            self.problems.append(f"{name}={raw!r} is not one of {', '.join(choices)}")
            return default
        return raw

    def listed(self, name: str) -> tuple[str, ...]:
        return tuple(t.strip() for t in self.text(name).split(",") if t.strip())

    def networks(self, name: str) -> tuple[str, ...]:
        entries = self.listed(name)
        try:
            parse_networks(entries)
        except ValueError as error:
            self.problems.append(f"{name}: {error}")
            return ()
        return entries

    def address(self, name: str) -> str:
        """``host:port`` (``[::1]:9464`` for IPv6); '' when unset."""
        raw = self._raw(name)
        if not raw:
            return ""
        host, _, port = raw.rpartition(":")
        if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
            self.problems.append(
                f"{name}={raw!r} is not host:port (e.g. 127.0.0.1:9464)"
            )
            return ""
        return raw

    def token(self, name: str) -> str:
        raw = self._raw(name)
        self.tokens(name, (raw,))
        return raw

    def tokens(self, name: str, tokens: tuple[str, ...]) -> None:
        """A problem for each token callers could never send (the door
        refuses every bearer token of another shape)."""
        for token in tokens:
            if token and (
                len(token) > MAX_TOKEN_CHARS or not TOKEN_SHAPE.fullmatch(token)
            ):
                self.problems.append(
                    f"{name}: a token must be 1 to {MAX_TOKEN_CHARS} of the "
                    "characters A-Z a-z 0-9 - . _ ~ + / (then '=' padding)"
                )

    def limits(self) -> LimitSettings:
        try:
            return LimitSettings.from_env(self.env, self.problems)
        except ValueError as error:  # pragma: no cover - from_env collects
            self.problems.append(str(error))
            return LimitSettings()

    def tls(self) -> TlsFiles | None:
        files = TlsFiles(
            self._raw("STRATA_TLS_CERT"),
            self._raw("STRATA_TLS_KEY"),
            self._raw("STRATA_TLS_CLIENT_CA"),
        )
        if not (files.cert or files.key or files.client_ca):
            return None
        problems = files.problems()
        self.problems.extend(problems)
        return None if problems else files

    def games(self) -> None:
        """The games ``STRATA_EXTRA_GAMES`` adds (the registry reads it from
        the process's environment): a package that is none, or a game type
        taken, is a wrong value at start-up, not a traceback."""
        try:
            registry.game_types()
        except RuntimeError as error:
            self.problems.append(str(error))

    def background(self) -> tuple[str, ...]:
        try:
            return parse_background(self.env.get(server_variable("STRATA_BACKGROUND")))
        except ValueError as error:
            self.problems.append(str(error))
            return BACKGROUND_WORK


def database_problem(url: str) -> str:
    """What is wrong with a database URL, in words ('': nothing). The URL
    itself is not repeated: it may hold a password."""
    try:
        parsed = database_url(url)
        parsed.port  # noqa: B018 # a port that is not a number raises here
    except ArgumentError:
        return (
            "is not a database URL; write postgresql://user@host:5432/database "
            "or sqlite:///path/to/file"
        )
    except ValueError as error:
        reason = str(error).removeprefix("database URL: ")
        if "invalid literal for int()" in reason:
            reason = "its port is not a number"
        return f"is not a usable database URL: {reason}"
    return ""


def host_problem(host: str) -> str:
    """Why ``host`` cannot be bound ('': it resolves; whether it is one of
    this machine's addresses is known only when it is bound)."""
    name = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        socket.getaddrinfo(name, None, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as error:
        reason = error.strerror if isinstance(error, socket.gaierror) else error
        return f"is not a host name or address this machine can resolve ({reason})"
    return ""
