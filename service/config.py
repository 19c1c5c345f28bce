"""Configuration from environment variables."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from service.limits import LimitSettings

DEFAULT_PORT = 50051
DEFAULT_HTTP_PORT = 8080

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
    - ``STRATA_BACKGROUND``: the background work ``strata serve`` runs beside
      its requests: ``projections`` (the game list behind ListGames and the
      statistics) and ``bots`` (the bot seats' moves), comma-separated, or
      ``none`` (default: both). Run what a replica leaves out in another
      (``strata worker``).
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

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Config:
        env = dict(os.environ if environ is None else environ)
        return cls(
            database_url=env.get("STRATA_DATABASE_URL") or default_database_url(),
            port=int(env.get("STRATA_PORT") or DEFAULT_PORT),
            host=env.get("STRATA_HOST") or "[::]",
            admin_token=env.get("STRATA_ADMIN_TOKEN", ""),
            workers=int(env.get("STRATA_WORKERS") or 32),
            log_level=(env.get("STRATA_LOG_LEVEL") or "info").lower(),
            integration_tokens=tuple(
                t.strip()
                for t in env.get("STRATA_INTEGRATION_TOKENS", "").split(",")
                if t.strip()
            ),
            limits=LimitSettings.from_env(env),
            background=parse_background(env.get("STRATA_BACKGROUND")),
            http_port=int(env.get("STRATA_HTTP_PORT") or DEFAULT_HTTP_PORT),
            cors_origins=tuple(
                o.strip()
                for o in env.get("STRATA_CORS_ORIGINS", "").split(",")
                if o.strip()
            ),
        )
