"""A pg_auto_failover formation on this machine, for the failover script.

A monitor and ``nodes`` PostgreSQL nodes (one primary, its standbys in
synchronous replication), each on a free port of 127.0.0.1 and in a
directory of its own under one temporary root, each kept by its own
``pg_autoctl run`` (its keeper, a process group of its own); sockets,
configuration and state files stay under that root too, so nothing of the
machine's own PostgreSQL (``/var/run/postgresql``, port 5432) is touched.
:meth:`Formation.destroy` stops every process it started and removes the
root, also when the run failed.

Needs Debian's ``postgresql-15-auto-failover`` (``pg_autoctl`` and the
monitor's extension, built for PostgreSQL 15). ``pg_autoctl`` refuses to
run as root: as root, every command runs as the ``postgres`` user.

The monitor checks the nodes more often than its defaults, and the keepers
of a primary cut off from the others stop it sooner (a failover in seconds
rather than half a minute): :data:`MONITOR_SETTINGS`,
:data:`NETWORK_PARTITION_TIMEOUT`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from reliability.cluster import Throwaway
from reliability.harness import free_port

#: The monitor's health checks (milliseconds; pg_auto_failover's defaults in
#: brackets). A node is failed over when the monitor could not connect to it
#: (``health_check_timeout``, after ``health_check_max_retries`` retries
#: ``health_check_retry_delay`` apart) and its keeper has not reported for
#: ``node_considered_unhealthy_timeout``.
MONITOR_SETTINGS = {
    "pgautofailover.health_check_period": 1000,  # [5000]
    "pgautofailover.health_check_timeout": 1000,  # [5000]
    "pgautofailover.health_check_max_retries": 1,  # [2]
    "pgautofailover.health_check_retry_delay": 500,  # [2000]
    "pgautofailover.node_considered_unhealthy_timeout": 3000,  # [20000]
    "pgautofailover.primary_demote_timeout": 4000,  # [30000]
    "pgautofailover.startup_grace_period": 2000,  # [10000]
}
#: Seconds a keeper's primary, cut off from the monitor and from every
#: standby, serves before it stops itself [20]: below the monitor's
#: ``primary_demote_timeout``, which is how long the monitor waits for an
#: unreachable primary to have stopped before it promotes a standby.
NETWORK_PARTITION_TIMEOUT = 2


def autoctl_binaries() -> tuple[Path, Path]:
    """``pg_autoctl`` and the PostgreSQL binaries its extension was built
    for; :class:`FileNotFoundError` when pg_auto_failover is not installed."""
    autoctl = shutil.which("pg_autoctl")
    extensions = sorted(glob.glob("/usr/lib/postgresql/*/lib/pgautofailover.so"))
    if autoctl is None or not extensions:
        raise FileNotFoundError(
            "pg_auto_failover is not installed "
            "(apt-get install postgresql-15-auto-failover)"
        )
    return Path(autoctl), Path(extensions[-1]).parent.parent / "bin"


@dataclass
class Node:
    """One PostgreSQL node of the formation (or its monitor) and its keeper."""

    name: str
    port: int
    data: Path
    log: Path
    keeper: subprocess.Popen[bytes] | None = None

    def postmaster(self) -> int | None:
        """The pid of its running PostgreSQL server, if any."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
            os.kill(pid, 0)
            return pid
        return None


@dataclass(frozen=True)
class Event:
    """A line of the monitor's event log."""

    at: datetime
    node: str
    reported: str
    goal: str
    description: str


class Formation(Throwaway):
    """A pg_auto_failover monitor and ``nodes`` nodes on this machine."""

    def __init__(self, nodes: int = 2, database: str = "strata") -> None:
        self.autoctl, self.bin = autoctl_binaries()
        self.database = database
        self.root = Path(tempfile.mkdtemp(prefix="strata-failover-"))
        self._as_postgres = os.geteuid() == 0
        self.monitor = self._node("monitor")
        self.nodes = [self._node(f"node{n}") for n in range(1, nodes + 1)]

    def _node(self, name: str) -> Node:
        return Node(name, free_port(), self.root / name, self.root / f"{name}.log")

    # -- running pg_autoctl -------------------------------------------------

    def _argv(self, *args: str, program: str = "") -> list[str]:
        """``program`` (pg_autoctl unless named) with ``args``, in the
        formation's environment, as the postgres user when run as root."""
        environment = {
            "HOME": str(self.root),
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "XDG_CONFIG_HOME": str(self.root / "config"),
            "XDG_DATA_HOME": str(self.root / "share"),
            "XDG_RUNTIME_DIR": str(self.root / "run"),
            # Unix sockets here, not in the machine's /var/run/postgresql.
            "PG_REGRESS_SOCK_DIR": str(self.root),
            "PGHOST": str(self.root),
            "LANG": "C.UTF-8",  # initdb's encoding: UTF8, not SQL_ASCII
        }
        argv = ["env", "-i", *(f"{k}={v}" for k, v in environment.items())]
        argv += [program or str(self.autoctl), *args]
        if self._as_postgres:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        return argv

    def _autoctl(self, *args: str) -> None:
        done = subprocess.run(
            self._argv(*args), capture_output=True, text=True, cwd="/", check=False
        )
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
            raise RuntimeError(f"pg_autoctl {args[0]} {args[1]} failed:\n{tail}")

    def start_keeper(self, node: Node) -> None:
        """``pg_autoctl run`` for ``node``, in a process group of its own."""
        with node.log.open("ab") as log:
            node.keeper = subprocess.Popen(
                self._argv("run", "--pgdata", str(node.data)),
                cwd="/",
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    # -- building it --------------------------------------------------------

    def create(self) -> None:
        """The monitor, then the primary, then each standby, every keeper
        running; returns once the formation is whole (a primary and every
        standby in synchronous replication)."""
        if self._as_postgres:
            self.root.chmod(0o755)
            shutil.chown(self.root, "postgres")
        # The primary's initdb meanwhile, the slowest step of its making
        # (pg_autoctl takes an existing data directory for the primary).
        first = self.nodes[0]
        initdb = subprocess.Popen(
            self._argv(
                "initdb", "-s", "-D", str(first.data), "-o", "--auth=trust",
                program=str(self.bin / "pg_ctl"),
            ),
            cwd="/",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        monitor = self.monitor
        self._autoctl(
            "create", "monitor", "--pgdata", str(monitor.data),
            "--pgport", str(monitor.port), "--hostname", "127.0.0.1",
            "--auth", "trust", "--no-ssl",
        )  # fmt: skip
        self._autoctl(
            "config", "set", "--pgdata", str(monitor.data),
            "postgresql.listen_addresses", "127.0.0.1",
        )  # fmt: skip
        self.start_keeper(monitor)
        self._until(lambda: self._monitor_answers(), 60, "the monitor never started")
        with self._monitor() as connection:
            for name, value in MONITOR_SETTINGS.items():
                connection.execute(f"ALTER SYSTEM SET {name} = {value}")
            connection.execute("SELECT pg_reload_conf()")
        _, failed = initdb.communicate()
        if initdb.returncode != 0:
            raise RuntimeError(f"initdb of {first.name} failed: {failed.decode()}")
        for node in self.nodes:
            self._autoctl(
                "create", "postgres", "--pgdata", str(node.data),
                "--pgport", str(node.port), "--listen", "127.0.0.1",
                "--hostname", "127.0.0.1", "--name", node.name,
                "--auth", "trust", "--no-ssl", "--dbname", self.database,
                "--monitor", self.monitor_url,
            )  # fmt: skip
            self._autoctl(
                "config", "set", "--pgdata", str(node.data),
                "timeout.network_partition_timeout", str(NETWORK_PARTITION_TIMEOUT),
            )  # fmt: skip
            self.start_keeper(node)
        self.wait_whole(120)

    @property
    def monitor_url(self) -> str:
        return (
            f"postgresql://autoctl_node@127.0.0.1:{self.monitor.port}"
            "/pg_auto_failover?sslmode=disable"
        )

    def url(self, session: str = "read-write", database: str = "") -> str:
        """A URL naming every node, libpq's way (what ``pg_autoctl show uri``
        prints): ``session`` is its ``target_session_attrs``."""
        hosts = ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)
        return (
            f"postgresql://postgres@{hosts}/{database or self.database}"
            f"?target_session_attrs={session}&connect_timeout=5"
        )

    # -- watching it --------------------------------------------------------

    def _monitor(self) -> psycopg.Connection[Any]:
        return psycopg.connect(
            f"host=127.0.0.1 port={self.monitor.port} user=postgres "
            "dbname=pg_auto_failover connect_timeout=5",
            autocommit=True,
        )

    def _monitor_answers(self) -> bool:
        try:
            with self._monitor() as connection:
                connection.execute("SELECT 1 FROM pgautofailover.node LIMIT 1")
            return True
        except psycopg.Error:
            return False

    def states(self) -> dict[str, tuple[str, str]]:
        """Each registered node's (reported state, goal state)."""
        with self._monitor() as connection:
            rows = connection.execute(
                "SELECT nodename, reportedstate::text, goalstate::text "
                "FROM pgautofailover.node"
            ).fetchall()
        return {name: (reported, goal) for name, reported, goal in rows}

    def events(self, since: datetime) -> list[Event]:
        """The monitor's events since ``since``, oldest first."""
        with self._monitor() as connection:
            rows = connection.execute(
                "SELECT eventtime, nodename, reportedstate::text, goalstate::text, "
                "description FROM pgautofailover.event WHERE eventtime >= %s "
                "ORDER BY eventid",
                (since,),
            ).fetchall()
        return [Event(*row) for row in rows]

    def primary(self) -> Node:
        """The node the monitor has as primary now."""
        states = self.states()
        for node in self.nodes:
            if states.get(node.name, ("", ""))[1] in ("primary", "wait_primary"):
                return node
        raise RuntimeError(f"no primary: {states}")

    def whole(self) -> bool:
        """A primary in synchronous replication with every other node a
        secondary, each in the state the monitor assigned it."""
        try:
            states = self.states()
        except psycopg.Error:
            return False
        settled = [r for r, goal in states.values() if r == goal]
        return (
            len(settled) == len(self.nodes)
            and settled.count("primary") == 1
            and settled.count("secondary") == len(self.nodes) - 1
        )

    def wait_whole(self, timeout: float) -> None:
        self._until(self.whole, timeout, "the formation never became whole")

    def _connect(self, node: Node, options: str = "") -> psycopg.Connection[Any]:
        return psycopg.connect(
            f"host=127.0.0.1 port={node.port} user=postgres "
            f"dbname={self.database} connect_timeout=2 {options}",
            autocommit=True,
        )

    def writable(self, node: Node) -> bool:
        """Whether ``node`` takes a read-write session now."""
        try:
            with self._connect(node, "target_session_attrs=read-write"):
                return True
        except psycopg.Error:
            return False

    def sql(self, node: Node, statement: str) -> list[tuple[Any, ...]]:
        """The rows of ``statement`` on ``node``'s database."""
        with self._connect(node) as connection:
            return connection.execute(statement).fetchall()

    def _until(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > deadline:
                states: Any = "?"
                with contextlib.suppress(psycopg.Error):
                    states = self.states()
                raise TimeoutError(f"{what} within {timeout:g}s (states {states})")
            time.sleep(0.2)

    # -- faults -------------------------------------------------------------

    def kill(self, node: Node) -> None:
        """kill -9 of the node's PostgreSQL server, then of its keeper (every
        process of its group), so that nothing restarts it."""
        server = node.postmaster()
        if server is not None:
            os.kill(server, signal.SIGKILL)
        if node.keeper is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.keeper.pid, signal.SIGKILL)
            node.keeper.wait()
        restarted = node.postmaster()  # in the moment between the two kills
        if restarted is not None:
            os.kill(restarted, signal.SIGKILL)

    def rejoin(self, node: Node, timeout: float = 120) -> None:
        """Start the node's keeper again: it rewinds the node to the new
        primary's timeline and follows it; returns once the formation is
        whole again (synchronous replication back on)."""
        self.start_keeper(node)
        self.wait_whole(timeout)

    # -- the end ------------------------------------------------------------

    def destroy(self) -> None:
        """Kill every keeper and server this formation started (their data
        goes with them: no need to stop them cleanly), remove the root."""
        everyone = [*self.nodes, self.monitor]
        for node in everyone:
            if node.keeper is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(node.keeper.pid, signal.SIGKILL)
                node.keeper.wait()
            server = node.postmaster()  # one its keeper did not start
            if server is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(server, signal.SIGKILL)
        for node in everyone:
            _free_shared_memory(node.data)
        shutil.rmtree(self.root, ignore_errors=True)


def _free_shared_memory(data: Path) -> None:
    """Remove the System V segment a server killed with SIGKILL leaves (its
    next start would have; its directory is about to go): only the one its
    ``postmaster.pid`` names, with that key, once nothing is attached."""
    try:
        lines = (data / "postmaster.pid").read_text().splitlines()
        key, shmid = (int(x) for x in lines[6].split())
    except (OSError, ValueError, IndexError):
        return
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
        ours = [r.split() for r in rows if r.split()[:2] == [str(key), str(shmid)]]
        if not ours:
            return
        if ours[0][6] == "0":  # attached: none (the processes are gone)
            subprocess.run(["ipcrm", "-m", str(shmid)], check=False)
            return
        time.sleep(0.05)
