"""Three replicas, one PostgreSQL database, many racing clients.

    python -m reliability.replicas --replicas 3 --clients 64 --commands 5000

Exits 0 when nothing was lost: no version written twice, every acknowledged
command stored, every duplicate answered with the first outcome, every
game's state equal to its replay (see :mod:`reliability.harness`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from reliability.harness import (
    Load,
    LoadSettings,
    check,
    check_logs,
    fresh_database,
    replicas,
    report,
)


def arguments(description: str | None) -> argparse.ArgumentParser:
    """The options every load script takes."""
    parser = argparse.ArgumentParser(description=description)
    defaults = LoadSettings()
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="serving processes per replica (strata serve --processes N)",
    )
    parser.add_argument("--clients", type=int, default=defaults.clients)
    parser.add_argument("--commands", type=int, default=defaults.commands)
    parser.add_argument("--games", type=int, default=defaults.games)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=defaults.max_seconds,
        help="stop the clients after this long, whatever the count",
    )
    parser.add_argument(
        "--database-server",
        default="",
        help="PostgreSQL server URL (default $STRATA_TEST_DATABASE_URL or "
        "postgresql://postgres@127.0.0.1:5432/test); a fresh database is "
        "created on it and dropped afterwards",
    )
    return parser


def settings_from(args: argparse.Namespace) -> LoadSettings:
    return LoadSettings(
        clients=args.clients,
        commands=args.commands,
        games=args.games,
        seed=args.seed,
        max_seconds=args.max_seconds,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = arguments(__doc__).parse_args(argv)
    settings = settings_from(args)
    with (
        fresh_database(args.database_server) as url,
        replicas(url, args.replicas, processes=args.processes) as running,
    ):
        targets = [r.target for r in running]
        load = Load(targets, settings)
        ledger = load.run()
        found = check(url, targets, ledger, settings, load.seconds)
        found.figures["replicas"] = args.replicas
        found.figures["processes per replica"] = args.processes
        found.figures["clients"] = args.clients
        check_logs(running, found)
    return report(
        f"replicas: {args.replicas} replicas of {args.processes} process(es), "
        f"{args.clients} clients, "
        f"{args.commands} commands",
        found,
    )


if __name__ == "__main__":
    sys.exit(main())
