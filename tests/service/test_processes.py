"""`strata serve --processes N`: N whole servers on one port; and the
standbys of `STRATA_READ_DATABASE_URL` in the configuration."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from strata.v1 import game_service_pb2 as pb
from strata.v1 import game_service_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _sockets(pid: int) -> set[int]:
    """The inodes of the sockets process ``pid`` holds."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def _established_on(port: int) -> set[int]:
    """The inodes of the TCP connections accepted on local port ``port``."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            next(rows)
            for row in rows:
                fields = row.split()
                local, state, inode = fields[1], fields[3], int(fields[9])
                if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:
                    inodes.add(inode)
    return inodes


@pytest.mark.postgres
def test_two_processes_serve_one_port_and_both_take_traffic(
    postgres_store_url: str,
) -> None:
    port, http_port = _free_port(), _free_port()
    environ = {
        **os.environ,
        "STRATA_DATABASE_URL": postgres_store_url,
        "STRATA_PORT": str(port),
        "STRATA_HTTP_PORT": str(http_port),
        "STRATA_HOST": "127.0.0.1",
        "STRATA_ACCESS_LOG": "off",
    }
    supervisor = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--processes", "2"],
        cwd=ROOT,
        env=environ,
        stderr=subprocess.PIPE,
        text=True,
    )
    serving: list[int] = []
    lines: list[str] = []
    both = threading.Event()

    def read_log() -> None:
        assert supervisor.stderr is not None
        for line in supervisor.stderr:
            lines.append(line)
            if '"strata.serving"' in line:
                serving.append(json.loads(line)["pid"])
                if len(serving) == 2:
                    both.set()

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    channels: list[grpc.Channel] = []
    try:
        assert both.wait(120), "".join(lines)
        assert all(json.loads(line).get("port") in (None, port) for line in lines)
        for _ in range(16):
            # A channel of its own makes a connection of its own.
            channel = grpc.insecure_channel(
                f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]
            )
            channels.append(channel)
            health = health_pb2_grpc.HealthStub(channel)
            assert health.Check(health_pb2.HealthCheckRequest(), timeout=10).status == 1
            created = pb_grpc.GameServiceStub(channel).CreateGame(
                pb.CreateGameRequest(game_type="dinosaurs_extinct", players=2),
                timeout=10,
            )
            assert created.game_id
        accepted = _established_on(port)
        served = Counter({pid: len(_sockets(pid) & accepted) for pid in serving})

        assert sum(served.values()) == 16, served
        assert all(count > 0 for count in served.values()), served
    finally:
        for channel in channels:
            channel.close()
        supervisor.send_signal(signal.SIGTERM)
        status = supervisor.wait(60)
        reader.join(5)
    assert status == 0, "".join(lines[-20:])
    for pid in serving:
        assert not Path(f"/proc/{pid}").exists() or _zombie(pid), pid


def _zombie(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def test_more_than_one_process_on_sqlite_is_refused_with_a_reason(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "service.cli", "serve", "--processes", "2"],
        cwd=ROOT,
        env={
            **os.environ,
            "STRATA_DATABASE_URL": f"sqlite:///{tmp_path / 's.db'}",
            "STRATA_PORT": str(_free_port()),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert run.returncode == 2
    assert "--processes 2 needs PostgreSQL" in run.stderr
    assert "SQLite has one writer at a time" in run.stderr
    assert not (tmp_path / "s.db").exists(), "refused before it opened anything"
    assert time.monotonic() - started < 60


def test_standbys_are_read_from_the_environment_and_need_postgresql() -> None:
    from service.config import Config, ConfigError

    primary = "postgresql://strata@db:5432/strata"
    config = Config.from_env(
        {
            "STRATA_DATABASE_URL": primary,
            "STRATA_READ_DATABASE_URL": "postgresql://strata@standby1/strata,"
            "postgresql://strata@standby2/strata",
        }
    )
    assert config.read_database_urls == (
        "postgresql://strata@standby1/strata",
        "postgresql://strata@standby2/strata",
    )
    assert Config.from_env({"STRATA_DATABASE_URL": primary}).read_database_urls == ()
    # A URL naming several servers (libpq's way) is one standby URL.
    several = "postgresql://strata@s1:5432,s2:5432/strata?target_session_attrs=standby"
    assert Config.from_env(
        {
            "STRATA_DATABASE_URL": "postgresql://strata@p1:5432,p2:5432/strata",
            "STRATA_READ_DATABASE_URL": f"{several},postgresql://strata@s3/strata",
        }
    ).read_database_urls == (several, "postgresql://strata@s3/strata")
    with pytest.raises(ConfigError, match="not one \\(sqlite"):
        Config.from_env({"STRATA_READ_DATABASE_URL": "postgresql://standby/strata"})
    with pytest.raises(ConfigError, match="mysql: is not a PostgreSQL URL"):
        Config.from_env(
            {"STRATA_DATABASE_URL": primary, "STRATA_READ_DATABASE_URL": "mysql://x/y"}
        )
