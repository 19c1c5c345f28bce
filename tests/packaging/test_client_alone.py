"""The client installs and works without the server (README, "Install only
the client"): the project's wheel, installed with ``--no-deps`` into a fresh
virtualenv beside only the dependencies it declares for everyone."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: What `pip wheel` reads: pyproject.toml's package folders and files.
SOURCES = ("domain", "eventstore", "service", "clients", "bench", "protos/strata")
SERVER_ONLY = ("sqlalchemy", "psycopg", "alembic", "structlog", "matplotlib")

pytestmark = pytest.mark.slow


def run(
    *args: str | Path, cwd: Path, check: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "STRATA_EXTRA_GAMES")
    }
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True
    )
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def build_wheel(tmp: Path) -> Path:
    """The wheel a user gets, built from a copy of the sources (so that the
    build leaves nothing in the work tree)."""
    source = tmp / "src"
    # The TypeScript client's installed packages and build are not sources.
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "node_modules", "dist")
    for name in SOURCES:
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    pip = (sys.executable, "-m", "pip")
    run(*pip, "wheel", "--quiet", "--no-deps", "--no-build-isolation",
        "-w", tmp / "dist", source, cwd=tmp)  # fmt: skip
    (wheel,) = (tmp / "dist").glob("strata-*.whl")
    return wheel


def client_requirements(wheel: Path) -> list[str]:
    """The wheel's dependencies for everyone (no extra)."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = (n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(name).decode())
    return [r for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r]


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("client-alone")
    wheel = build_wheel(tmp)
    requirements = client_requirements(wheel)
    assert requirements and not any(
        r.lower().startswith(SERVER_ONLY) for r in requirements
    ), requirements
    venv = tmp / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp)
    pip = (sys.executable, "-m", "pip", "--python", venv / "bin" / "python")
    run(*pip, "install", "--quiet", "--no-deps", wheel, cwd=tmp)
    run(*pip, "install", "--quiet", "-c", ROOT / "constraints.txt", *requirements,
        cwd=tmp)  # fmt: skip
    yield venv


def test_the_client_imports_without_the_servers_dependencies(client_venv, tmp_path):
    python = client_venv / "bin" / "python"
    check = (
        "import importlib.util, clients.client, clients.cli\n"
        "from strata.games.cubosaurs.v1 import cubosaurs_pb2\n"
        "from strata.v1 import game_service_pb2\n"
        f"print([m for m in {SERVER_ONLY!r} if importlib.util.find_spec(m)])\n"
    )
    assert run(python, "-c", check, cwd=tmp_path).stdout.strip() == "[]"


def test_strata_lists_every_command_and_a_client_command_fails_cleanly(
    client_venv, tmp_path
):
    strata = client_venv / "bin" / "strata"
    listed = run(strata, "--help", cwd=tmp_path).stdout
    for name in ("serve", "worker", "migrate", "projections", "create", "simulate"):
        assert f"    {name}" in listed
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    shown = run(strata, "show", "g1", "--target", f"127.0.0.1:{port}", cwd=tmp_path,
                check=False)  # fmt: skip
    assert shown.returncode == 1
    assert (
        shown.stderr.startswith("strata: UNAVAILABLE") and shown.stderr.count("\n") == 1
    ), shown.stderr


@pytest.mark.parametrize("command", ["serve", "worker", "migrate"])
def test_a_server_command_says_in_one_line_what_to_install(
    client_venv, tmp_path, command
):
    result = run(client_venv / "bin" / "strata", command, cwd=tmp_path, check=False)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "pip install 'strata[server]'" in result.stderr


def test_simulate_runs_on_the_client_and_plots_only_with_the_lab(client_venv, tmp_path):
    strata = client_venv / "bin" / "strata"
    args = ("simulate", "--game", "dinosaurs_extinct", "--players", "2",
            "--games", "2", "--processes", "1", "--quiet")  # fmt: skip
    assert '"games": 2' in run(strata, *args, cwd=tmp_path).stdout
    plotted = run(strata, *args, "--plot", tmp_path / "charts", cwd=tmp_path,
                  check=False)  # fmt: skip
    assert plotted.returncode == 2 and plotted.stdout == ""
    assert (
        plotted.stderr == "strata: --plot needs matplotlib: pip install 'strata[lab]'\n"
    )


def test_the_clients_types_reach_a_users_type_checker(client_venv, tmp_path):
    user = tmp_path / "user.py"
    user.write_text(
        "from clients.client import StrataClient\n"
        "from strata.games.cubosaurs.v1 import cubosaurs_pb2\n"
        "game_id: int = StrataClient().create_game('cubosaurs', 2).game_id\n"
        "advanced: str = cubosaurs_pb2.Options().advanced\n"
    )
    checked = run(sys.executable, "-m", "mypy", "--no-incremental",
                  "--python-executable", client_venv / "bin" / "python", user,
                  cwd=tmp_path, check=False)  # fmt: skip
    out = checked.stdout
    # Both mistakes are found: the types came from the installed package's
    # py.typed and the generated protos' stubs.
    assert 'expression has type "str", variable has type "int"' in out, out
    assert 'expression has type "bool", variable has type "str"' in out, out
    assert "missing library stubs or py.typed marker" not in out, out
