"""A private PostgreSQL server for fault tests, on 127.0.0.1 and a free port.

Stopping the shared server would break everyone else's tests, so the outage
script runs its own: ``initdb`` in a temporary directory, ``pg_ctl`` to stop
and start it (as the ``postgres`` user when run as root, since PostgreSQL
refuses to run as root). Needs the PostgreSQL server binaries
(``pg_config --bindir``, or ``/usr/lib/postgresql/<version>/bin``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

from reliability.harness import free_port


def server_binaries() -> Path:
    """The directory holding ``initdb`` and ``pg_ctl``."""
    candidates = []
    if shutil.which("pg_config"):
        bindir = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, check=False
        ).stdout.strip()
        candidates.append(bindir)
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").exists():
            return Path(candidate)
    raise FileNotFoundError("no PostgreSQL server binaries (initdb, pg_ctl) found")


class PrivateCluster:
    """A throwaway PostgreSQL cluster: ``url``, ``stop(mode)``, ``start()``."""

    def __init__(self) -> None:
        self.bin = server_binaries()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="strata-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self._as_postgres = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, cwd="/")

    def create(self) -> None:
        if self._as_postgres:
            self.root.chmod(0o755)
            shutil.chown(self.root, "postgres")
        self._run(
            "initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
            "--no-instructions", "-E", "UTF8",
        )  # fmt: skip
        self.start()

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 "
            f"-c unix_socket_directories={self.root} -c max_connections=200"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.log),
            "-w", "-t", "60", "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """``fast``: a clean shutdown; ``immediate``: a crash (WAL recovery
        at the next start)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def freeze(self) -> None:
        """Stop every process of the server (SIGSTOP) without closing a
        connection: a database that hangs. Its kernel still accepts and
        acknowledges, nothing answers."""
        self._signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """Let a frozen server go on (SIGCONT)."""
        self._signal(signal.SIGCONT)

    def _signal(self, number: int) -> None:
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(
            ["pgrep", "-P", str(postmaster)], capture_output=True, text=True
        ).stdout.split()
        for pid in [postmaster, *map(int, children)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, number)

    def destroy(self) -> None:
        with contextlib.suppress(ProcessLookupError, FileNotFoundError):
            self.thaw()
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PrivateCluster:
        try:
            self.create()
        except BaseException:
            self.destroy()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.destroy()


class PrivateStandby(PrivateCluster):
    """A hot standby of a :class:`PrivateCluster`: ``pg_basebackup -R`` of it
    (streaming replication), started on a port of its own."""

    def __init__(self, primary: PrivateCluster) -> None:
        super().__init__()
        self.primary = primary

    def create(self) -> None:
        if self._as_postgres:
            self.root.chmod(0o755)
            shutil.chown(self.root, "postgres")
        self._run(
            "pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary.port),
            "-U", "postgres", "-D", str(self.data), "-R", "-X", "stream",
            "-c", "fast",
        )  # fmt: skip
        self.start()
