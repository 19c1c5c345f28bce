"""kill -9 a replica under load, restart it, and lose nothing.

    python -m reliability.crash --replicas 3 --clients 64 --commands 3000 --kills 2

A replica is killed (SIGKILL: no shutdown, no flush) each time another
share of the commands is done, and restarted on its port a moment later.
Clients whose calls die with it retry the same ``command_id`` on the next
replica. Afterwards every acknowledged command must be in the store, every
retry of a command applied before the kill must have been answered with its
original outcome, and the checks of :mod:`reliability.replicas` must hold.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence

from reliability.harness import (
    Ledger,
    Load,
    Replica,
    check,
    check_logs,
    fresh_database,
    replicas,
    report,
)
from reliability.replicas import arguments, settings_from


class Killer:
    """Kills replica ``n % len`` when ``(n + 1) / (kills + 1)`` of the
    commands are done, and restarts it after ``down`` seconds."""

    def __init__(self, running: list[Replica], kills: int, down: float) -> None:
        self.running = running
        self.kills = kills
        self.down = down
        self.done = 0
        self.events: list[str] = []
        self.threads: list[threading.Thread] = []
        self.started = time.monotonic()

    def __call__(self, ledger: Ledger) -> None:
        if self.done >= self.kills:
            return
        if ledger.done >= ledger.target * (self.done + 1) / (self.kills + 1):
            replica = self.running[self.done % len(self.running)]
            self.done += 1
            thread = threading.Thread(target=self._crash, args=(replica, ledger.done))
            thread.start()
            self.threads.append(thread)

    def _crash(self, replica: Replica, at: int) -> None:
        at_time = time.monotonic() - self.started
        replica.kill()
        time.sleep(self.down)
        replica.start()
        replica.wait_ready()
        back = time.monotonic() - self.started
        self.events.append(
            f"replica {replica.index} killed at command {at} ({at_time:.1f}s), "
            f"serving again at {back:.1f}s"
        )

    def join(self) -> None:
        for thread in self.threads:
            thread.join()


def main(argv: Sequence[str] | None = None) -> int:
    parser = arguments(__doc__)
    parser.add_argument("--kills", type=int, default=2)
    parser.add_argument(
        "--down-seconds", type=float, default=1.0, help="how long a replica stays dead"
    )
    parser.add_argument(
        "--resend",
        type=int,
        default=600,
        help="re-send this many commands to a restarted replica afterwards",
    )
    parser.set_defaults(commands=3000)
    args = parser.parse_args(argv)
    settings = settings_from(args)
    with (
        fresh_database(args.database_server) as url,
        replicas(url, args.replicas, processes=args.processes) as running,
    ):
        targets = [r.target for r in running]
        load = Load(targets, settings)
        killer = Killer(running, args.kills, args.down_seconds)
        ledger = load.run(progress=killer)
        killer.join()
        # Every client retries its commands on a restarted replica.
        resent = [c for c, s in ledger.sent.items() if s.finals][: args.resend]
        same = load.resend(resent, replica=0)
        found = check(url, targets, ledger, settings, load.seconds)
        found.figures["commands re-sent to a restarted replica"] = len(resent)
        found.figures["... answered with their original outcome"] = same
        if same != len(resent):
            found.fail(f"{len(resent) - same} re-sent commands got another answer")
        found.figures["replicas killed with SIGKILL"] = killer.done
        for number, event in enumerate(sorted(killer.events), 1):
            found.figures[f"kill {number}"] = event
        if killer.done < args.kills:
            found.fail(f"only {killer.done} of {args.kills} kills happened")
        check_logs(running, found)
    return report(
        f"crash: {args.replicas} replicas, {args.clients} clients, "
        f"{args.commands} commands, {args.kills} kill -9",
        found,
    )


if __name__ == "__main__":
    sys.exit(main())
