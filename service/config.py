"""Configuration from environment variables."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from service.limits import LimitSettings

DEFAULT_PORT = 50051


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
    - ``STRATA_WORKERS``: threads serving requests (default 32);
    - ``STRATA_LOG_LEVEL``: ``debug``, ``info`` (default), ``warning``;
    - ``STRATA_INTEGRATION_TOKENS``: comma-separated tokens for the
      integration feed (IntegrationService);
    - ``STRATA_RATE_PER_PEER``, ``STRATA_RATE_PER_GAME`` and the other limits
      of :class:`service.limits.LimitSettings`.
    """

    database_url: str = dataclasses.field(default_factory=default_database_url)
    port: int = DEFAULT_PORT
    host: str = "[::]"
    admin_token: str = ""
    workers: int = 32
    log_level: str = "info"
    integration_tokens: tuple[str, ...] = ()
    limits: LimitSettings = dataclasses.field(default_factory=LimitSettings)

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
        )
