"""Restart PostgreSQL under load: UNAVAILABLE while it is down, nothing lost.

    python -m reliability.outage --replicas 3 --clients 64 --commands 3000

Runs on a private PostgreSQL cluster (see :mod:`reliability.cluster`), so
other users of the machine's server are not disturbed. The server is
stopped twice under load — a clean ``fast`` shutdown, then an ``immediate``
one (a crash, recovered from the WAL) — and kept down for a few seconds
each time. While it is down every answer must be UNAVAILABLE (never
INTERNAL, never a call running past its deadline); afterwards the replicas
must recover by themselves, and the checks of :mod:`reliability.replicas`
must hold.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence

from reliability.cluster import PrivateCluster
from reliability.harness import (
    Findings,
    Ledger,
    Load,
    check,
    check_logs,
    fresh_database,
    replicas,
    report,
)
from reliability.replicas import arguments, settings_from

MODES = ("fast", "immediate")


class Outages:
    """Stops the database when another share of the commands is done."""

    def __init__(self, cluster: PrivateCluster, down: float) -> None:
        self.cluster = cluster
        self.down = down
        self.count = 0
        self.windows: list[tuple[str, float, float]] = []
        self.thread: threading.Thread | None = None

    def __call__(self, ledger: Ledger) -> None:
        if self.count >= len(MODES) or (
            self.thread is not None and self.thread.is_alive()
        ):
            return
        if ledger.done >= ledger.target * (self.count + 1) / (len(MODES) + 2):
            mode = MODES[self.count]
            self.count += 1
            self.thread = threading.Thread(target=self._outage, args=(mode,))
            self.thread.start()

    def _outage(self, mode: str) -> None:
        stopping = time.monotonic()
        self.cluster.stop(mode)
        time.sleep(self.down)
        self.cluster.start()
        self.windows.append((mode, stopping, time.monotonic()))

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


def judge(outages: Outages, ledger: Ledger, found: Findings) -> None:
    """What the clients got while the database was down, and how soon
    commands went through again."""
    answers = [a for s in ledger.sent.values() for a in s.answers]
    for number, (mode, down_at, up_at) in enumerate(outages.windows, 1):
        # Calls that both started and ended while the server was down.
        during = [a for a in answers if down_at + 0.5 <= a.at - a.seconds and
                  a.at <= up_at]  # fmt: skip
        codes = Counter(a.code for a in during)
        after = sorted(a.at for a in answers if a.code == "OK" and a.at > up_at)
        recovered = f"{after[0] - up_at:.2f}s" if after else "never"
        found.figures[f"outage {number} ({mode})"] = (
            f"down {up_at - down_at:.1f}s; answers while down: "
            + (", ".join(f"{c} {n}" for c, n in sorted(codes.items())) or "none")
            + f"; first command accepted {recovered} after restart"
        )
        unexpected = {c: n for c, n in codes.items() if c != "UNAVAILABLE"}
        if unexpected:
            found.fail(f"outage {number}: answers while down {unexpected}")
        if not codes:
            found.fail(f"outage {number}: no client call saw the database down")
        if not after:
            found.fail(f"outage {number}: no command accepted after the restart")
    if len(outages.windows) < len(MODES):
        found.fail(f"only {len(outages.windows)} outages happened")


def main(argv: Sequence[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument(
        "--down-seconds", type=float, default=3.0, help="how long each outage lasts"
    )
    parser.set_defaults(commands=3000)
    args = parser.parse_args(argv)
    settings = settings_from(args)
    with (
        PrivateCluster() as cluster,
        fresh_database(cluster.url) as url,
        replicas(url, args.replicas, processes=args.processes) as running,
    ):
        targets = [r.target for r in running]
        load = Load(targets, settings)
        outages = Outages(cluster, args.down_seconds)
        ledger = load.run(progress=outages)
        outages.join()
        found = check(url, targets, ledger, settings, load.seconds)
        judge(outages, ledger, found)
        check_logs(running, found)
        alive = sum(1 for r in running if r.process and r.process.poll() is None)
        found.figures["replicas still running (never restarted)"] = alive
        if alive != len(running):
            found.fail("a replica died during the outages")
    return report(
        f"outage: {args.replicas} replicas, {args.clients} clients, "
        f"{args.commands} commands, PostgreSQL stopped {len(MODES)} times "
        f"for {args.down_seconds:g}s",
        found,
    )


if __name__ == "__main__":
    sys.exit(main())
