"""`strata serve` as an operator runs it: a process of its own, configured by
its environment, its JSON log read as the operator would read it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Served:
    """A ``strata serve`` process on free ports over a SQLite file in
    ``folder`` (or ``database_url``), its stderr kept in a file."""

    def __init__(
        self,
        folder: Path,
        env: dict[str, str] | None = None,
        database_url: str = "",
        args: tuple[str, ...] = (),
    ) -> None:
        self.port = free_port()
        self.http_port = free_port()
        self.log_path = folder / f"strata-{self.port}.log"
        environ = {
            **os.environ,
            "STRATA_DATABASE_URL": database_url
            or f"sqlite:///{folder / f'strata-{self.port}.sqlite3'}",
            "STRATA_PORT": str(self.port),
            "STRATA_HTTP_PORT": str(self.http_port),
            "STRATA_HOST": "127.0.0.1",
            "STRATA_LOG_LEVEL": "info",
            **(env or {}),
        }
        self._log = open(self.log_path, "w")  # noqa: SIM115 # closed in stop()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", *args],
            cwd=ROOT,
            env=environ,
            stderr=self._log,
            stdout=subprocess.DEVNULL,
        )

    def wait_serving(self, timeout: float = 60) -> dict[str, Any]:
        """The start line (``strata.serving``), once it is logged."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines():
                if line.get("event") == "strata.serving":
                    return line
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"strata serve ended ({self.process.returncode}): "
                    + self.log_path.read_text()[-2000:]
                )
            time.sleep(0.1)
        raise TimeoutError(self.log_path.read_text()[-2000:])

    def text(self) -> str:
        return self.log_path.read_text()

    def lines(self) -> list[dict[str, Any]]:
        """Every JSON line of its log so far (a line not JSON fails)."""
        out = []
        for line in self.text().splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.process.returncode
