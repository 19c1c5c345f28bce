"""A throwaway PostgreSQL database for one run, and the service on it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import grpc
import psycopg
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sqlalchemy.engine import URL, make_url

from eventstore import migrate

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Database:
    """A database created for the run; ``url`` is its SQLAlchemy URL."""

    server_url: str
    name: str

    @property
    def url(self) -> str:
        parsed = make_url(self.server_url).set(database=self.name)
        return parsed.render_as_string(hide_password=False)

    @property
    def parts(self) -> URL:
        return make_url(self.url)

    def libpq(self) -> str:
        """The database as a libpq connection string (psycopg, pgbench)."""
        url = self.parts
        fields = {
            "host": url.host or "127.0.0.1",
            "port": str(url.port or 5432),
            "user": url.username or "postgres",
            "dbname": self.name,
        }
        if url.password:
            fields["password"] = str(url.password)
        return " ".join(f"{k}={v}" for k, v in fields.items())


def create_database(server_url: str) -> Database:
    """A new, migrated database on the server of ``server_url``."""
    database = Database(server_url, f"strata_bench_{uuid.uuid4().hex[:10]}")
    with _admin(database) as connection:
        connection.execute(f'CREATE DATABASE "{database.name}"')
        # The default, stated: an acknowledged command must survive a crash.
        connection.execute(
            f'ALTER DATABASE "{database.name}" SET synchronous_commit = on'
        )
    migrate.upgrade(database.url)
    return database


def drop_database(database: Database) -> None:
    with _admin(database) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{database.name}" WITH (FORCE)')


def _admin(database: Database) -> psycopg.Connection[tuple[object, ...]]:
    url = make_url(database.server_url)
    return psycopg.connect(
        host=url.host or "127.0.0.1",
        port=url.port or 5432,
        user=url.username or "postgres",
        password=url.password or None,
        dbname="postgres",
        autocommit=True,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def code_env() -> dict[str, str]:
    """The environment that makes a child process import this checkout."""
    env = dict(os.environ)
    paths = [str(ROOT), str(ROOT / "protos")]
    if env.get("STRATA_TEST_PROTOS"):
        # Under the test suite with extra games (tests/extra_games.py): the
        # protos' code compiled with theirs comes first.
        paths.insert(0, str(Path(env["STRATA_TEST_PROTOS"]) / "python"))
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


@dataclass
class Service:
    """The service running in its own process (``strata serve``), and the
    ``strata worker`` process doing its background work when it has one."""

    process: subprocess.Popen[bytes]
    target: str
    worker: subprocess.Popen[bytes] | None = None
    #: The HTTP listener (Connect, gRPC-Web): ``http://127.0.0.1:port``.
    http_target: str = ""

    def stop(self) -> None:
        for process in (self.process, self.worker):
            if process is None:
                continue
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


#: How long a service may take to answer health checks (a loaded machine
#: takes seconds to import and start two processes).
START_SECONDS = 120


def start_service(
    database: Database,
    workers: int,
    extra_env: dict[str, str] | None = None,
    separate_worker: bool = False,
    processes: int = 1,
) -> Service:
    """``strata serve`` on the database, on 127.0.0.1, ready to answer;
    with ``separate_worker``, it serves with ``STRATA_BACKGROUND=none`` and
    a ``strata worker`` process runs the projection and the bot seats."""
    port, http_port = free_port(), free_port()
    env = code_env()
    env.update(
        STRATA_DATABASE_URL=database.url,
        STRATA_PORT=str(port),
        STRATA_HTTP_PORT=str(http_port),
        STRATA_HOST="127.0.0.1",
        STRATA_WORKERS=str(workers),
        STRATA_LOG_LEVEL="warning",
        STRATA_ADMIN_TOKEN="bench-admin",
        # The two driver processes each stand for up to 32 players behind one
        # connection: a per-connection rate meant for one client would cap
        # the bench, not measure the service (the per-game rate stays on).
        STRATA_RATE_PER_PEER="0",
        # And every player calls from this one address: the quotas of one
        # address (its rate, its creations, its open seats) are off too.
        STRATA_RATE_PER_ADDRESS="0",
        STRATA_CREATIONS_PER_MINUTE="0",
        STRATA_MAX_OPEN_SEATS="0",
        # The watch phase's hundred spectators share that address too.
        STRATA_MAX_STREAMS_PER_ADDRESS="0",
    )
    env.update(extra_env or {})
    worker = None
    if separate_worker:
        env["STRATA_BACKGROUND"] = "none"
        worker = subprocess.Popen(_strata("worker"), env=env, cwd=ROOT)
    serve = ["serve"] if processes == 1 else ["serve", "--processes", str(processes)]
    process = subprocess.Popen(_strata(*serve), env=env, cwd=ROOT)
    target = f"127.0.0.1:{port}"
    deadline = time.monotonic() + START_SECONDS
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            if process.poll() is not None:
                if worker is not None:
                    worker.kill()
                raise RuntimeError(f"the service exited with {process.returncode}")
            try:
                answer = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if answer.status == health_pb2.HealthCheckResponse.SERVING:
                    break
            except grpc.RpcError:
                pass
            if time.monotonic() > deadline:
                process.kill()
                if worker is not None:
                    worker.kill()
                raise RuntimeError(
                    f"the service did not start within {START_SECONDS} s"
                )
            time.sleep(0.1)
    return Service(process, target, worker, f"http://127.0.0.1:{http_port}")


def _strata(*command: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        f"import sys; from clients.cli import main; sys.exit(main({list(command)!r}))",
    ]
