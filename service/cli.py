"""The server's commands of `strata`: serve, worker, migrate, projections.

`strata` is one command, built by ``clients/cli.py``. The client may be
installed without the server, so it never imports this package: it adds the
commands that the entry point group ``strata.commands`` lists (pyproject.toml
registers :func:`register` there). Without the server's dependencies (the
``server`` extra) these commands say in one line what to install.

    python -m service.cli serve       the same commands, without the client
"""

from __future__ import annotations

import os

# gRPC's core writes its own plain-text lines to stderr (a port in use, …):
# every failure reaches Strata's JSON log or its one-line error too, so they
# are off unless GRPC_VERBOSITY asks for them (read when grpc is imported).
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

import argparse
import dataclasses
import errno
import functools
import importlib.util
import re
import sys
from collections.abc import Callable, Sequence
from typing import Protocol

Handler = Callable[[argparse.Namespace], int]

#: Top-level modules of the ``server`` extra (pyproject.toml).
SERVER_MODULES = (
    "alembic",
    "grpc_health",
    "grpc_reflection",
    "psycopg",
    "sqlalchemy",
    "structlog",
)
INSTALL_SERVER = "pip install 'strata[server]'"


class AddCommand(Protocol):
    """Adds a subcommand ``name`` running ``handler`` to the `strata` parser."""

    def __call__(
        self, name: str, handler: Handler, help: str
    ) -> argparse.ArgumentParser: ...


def register(command: AddCommand) -> None:
    """Add the server's subcommands (the ``strata.commands`` entry point)."""
    serve = command("serve", _needs_server(cmd_serve), "Run the service.")
    serve.add_argument("--port", type=int, help="port (default $STRATA_PORT or 50051)")
    serve.add_argument("--database-url", help="default $STRATA_DATABASE_URL or SQLite")
    serve.add_argument(
        "--processes",
        type=int,
        default=1,
        metavar="N",
        help="serving processes on the same ports (SO_REUSEPORT), each with its "
        "own group committer; more than 1 needs PostgreSQL (default 1)",
    )
    # One of the processes of --processes (or of a supervisor of your own).
    serve.add_argument("--reuse-port", action="store_true", help=argparse.SUPPRESS)
    _list_variables(serve)

    worker = command(
        "worker",
        _needs_server(cmd_worker),
        "Run the background work (the game list projection and the bot seats) "
        "without serving requests, for replicas that serve with "
        "STRATA_BACKGROUND=none.",
    )
    worker.add_argument("--database-url", help="default $STRATA_DATABASE_URL or SQLite")
    _list_variables(worker)

    migrate = command(
        "migrate", _needs_server(cmd_migrate), "Apply database migrations."
    )
    migrate.add_argument("--database-url", help="default $STRATA_DATABASE_URL")

    projections = command(
        "projections",
        _needs_server(cmd_projections),
        "Manage the read models (on the database).",
    )
    projections.add_argument("action", choices=["rebuild", "status"])
    projections.add_argument("--database-url", help="default $STRATA_DATABASE_URL")
    # Accepted as it always was; the read models are on the database.
    projections.add_argument(
        "--target", help="unused: projections work on the database"
    )


def _list_variables(parser: argparse.ArgumentParser) -> None:
    """End ``parser``'s help with every variable of the server and its
    default (:mod:`service.variables`, which needs only the standard
    library)."""
    from service import variables

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = variables.help_text()


def missing_server_modules() -> list[str]:
    """The server's dependencies that are not installed."""
    return [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]


def _needs_server(handler: Handler) -> Handler:
    """``handler``, or one line saying what to install when the server's
    dependencies are missing (the client installed alone)."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        missing = missing_server_modules()
        if missing:
            name = handler.__name__.removeprefix("cmd_")
            print(
                f"strata: `strata {name}` needs the server, which is not installed "
                f"here (no {', '.join(missing)}): {INSTALL_SERVER}",
                file=sys.stderr,
            )
            return 2
        return _one_line_errors(handler, args)

    return run


def _one_line_errors(handler: Handler, args: argparse.Namespace) -> int:
    """Run ``handler``; any failure a user can cause or fix is one line
    ``strata: …`` on stderr: exit 2 for configuration, 1 at run time."""
    from eventstore.base import StoreError
    from service.config import ConfigError

    try:
        return handler(args)
    except ConfigError as error:
        print(f"strata: the configuration is wrong: {error}", file=sys.stderr)
        return 2
    except StoreError as error:
        print(f"strata: {_store_problem(error)}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"strata: {_os_problem(error)}", file=sys.stderr)
        return 1


def _store_problem(error: Exception) -> str:
    """A store error in a sentence, saying what to do about the usual ones."""
    text = " ".join(str(error).split())
    missing = re.search(r'database "([^"]+)" does not exist', text)
    if missing:
        name = missing.group(1)
        return (
            f'the database "{name}" does not exist; create it first (`createdb '
            f'{name}`, or `CREATE DATABASE "{name}";` in psql) and run '
            "`strata migrate` again"
        )
    return text


def _os_problem(error: OSError) -> str:
    if error.errno == errno.EADDRINUSE:
        return (
            f"cannot listen: {error.strerror or error} ({error.filename or ''}); "
            "another process has the port: stop it, or choose another with "
            "STRATA_PORT / STRATA_HTTP_PORT (--port)"
        ).replace(" ()", "")
    if error.errno == errno.EADDRNOTAVAIL:
        return (
            f"cannot listen on {error.filename or 'STRATA_HOST'}: that address is "
            "not one of this machine's; set STRATA_HOST to one of its addresses "
            "(or [::] for all of them)"
        )
    return " ".join(str(error).split())


def cmd_serve(args: argparse.Namespace) -> int:
    from service.config import Config, ConfigError
    from service.processes import serve, serve_processes

    config = Config.from_env()
    if args.port is not None:
        config = dataclasses.replace(config, port=args.port)
    if args.database_url:
        config = dataclasses.replace(config, database_url=args.database_url)
    if args.processes < 1:
        raise ConfigError([f"--processes {args.processes}: it takes 1 or more"])
    if args.processes > 1:
        if config.database_url.startswith("sqlite"):
            raise ConfigError(
                [
                    f"--processes {args.processes} needs PostgreSQL: SQLite has "
                    "one writer at a time, so more processes would only queue for "
                    "its lock; serve one process, or set STRATA_DATABASE_URL to "
                    "PostgreSQL"
                ]
            )
        return serve_processes(config, args.processes)
    serve(config, reuse_port=args.reuse_port)
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from service.config import Config
    from service.processes import work

    config = Config.from_env()
    if args.database_url:
        config = dataclasses.replace(config, database_url=args.database_url)
    work(config)
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from eventstore import migrate
    from service.config import Config

    url = args.database_url or Config.from_env().database_url
    migrate.upgrade(url)
    print(f"strata: {migrate.check(url).message}")
    return 0


def cmd_projections(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from eventstore.factory import open_store
    from service.config import Config
    from service.projections import GameListProjection

    url = args.database_url or Config.from_env().database_url
    store = open_store(url)
    try:
        if store.read_models() is None:
            raise SystemExit("strata: projections live in a SQL store")
        projection = GameListProjection(store)
        if args.action == "status":
            print(
                f"game_list at position {projection.position} "
                f"of {store.last_position()}"
            )
            return 0
        with tqdm(
            total=store.events_after(0, 2**62),
            desc="rebuilding game_list",
            unit="event",
        ) as bar:
            applied = projection.rebuild(bar.update)
        print(
            f"game_list rebuilt from {applied} events "
            f"({projection.models.count()} games)"
        )
    finally:
        store.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The server's commands alone (``python -m service.cli serve``)."""
    parser = argparse.ArgumentParser(
        prog="strata", description="Strata's server commands."
    )
    commands = parser.add_subparsers(metavar="COMMAND")

    def command(name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.set_defaults(handler=handler)
        return sub

    register(command)
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        result: int = args.handler(args)
        return result
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
