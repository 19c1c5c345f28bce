"""Configuration as an operator meets it: `strata serve --help` lists every
variable with its default, a misspelt variable is warned of by name, and a
wrong value is one line naming the variable that is wrong (exit status
non-zero, no traceback)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import trustme

from service import variables
from service.config import Config
from service.limits import _ENVIRONMENT
from tests.service.served import Served
from tests.service.test_startup import assert_refused_in_one_line, strata

ROOT = Path(__file__).resolve().parents[2]


def serve_on_sqlite(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`strata serve` on a SQLite file of ``tmp_path``, with ``env``."""
    return strata(
        "serve",
        env={"STRATA_DATABASE_URL": f"sqlite:///{tmp_path / 'x.sqlite3'}", **env},
    )


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_the_help_lists_every_variable_with_its_default(command: str) -> None:
    result = strata(command, "--help")
    assert result.returncode == 0, result.stderr
    for variable in variables.SERVER:
        if variable.default == variables.NONE:
            shown = f"{variable.name} (unset)"
        else:
            shown = f"{variable.name}={variable.default}"
        assert re.search(rf"^  {re.escape(shown)}$", result.stdout, re.M), shown


@pytest.mark.parametrize(
    "variable",
    [v for v in variables.SERVER if v.default != variables.NONE],
    ids=lambda v: v.name,
)
def test_each_variable_set_to_its_listed_default_changes_nothing(
    variable: variables.Variable,
) -> None:
    """The table's defaults are the configuration's, not a copy gone stale."""
    if variable.name == "STRATA_PROCESS":  # the process's name: see processes.py
        return
    assert Config.from_env({variable.name: variable.default}) == Config.from_env({})


def test_every_variable_the_code_reads_is_in_the_table() -> None:
    read: set[str] = set()
    for folder in ("service", "eventstore", "clients", "domain"):
        for path in (ROOT / folder).rglob("*.py"):
            read |= set(re.findall(r"[\"'](STRATA_[A-Z0-9_]+)[\"']", path.read_text()))
    assert read, "found no variables: the scan is broken"
    assert read - variables.KNOWN == set()
    assert set(_ENVIRONMENT.values()) <= {v.name for v in variables.SERVER}


def test_a_misspelt_variable_is_warned_of_naming_the_closest_known_one(
    tmp_path: Path,
) -> None:
    served = Served(
        tmp_path,
        env={"STRATA_RATE_PER_PER": "5", "STRATA_TLS_CLIENTCA": "x", "STRATA_ZZZ": "1"},
    )
    try:
        served.wait_serving()
        warned = {
            line["variable"]: line
            for line in served.lines()
            if line["event"] == "config.unknown_variable"
        }
    finally:
        served.stop()
    assert set(warned) == {"STRATA_RATE_PER_PER", "STRATA_TLS_CLIENTCA", "STRATA_ZZZ"}
    assert warned["STRATA_RATE_PER_PER"]["closest"] == "STRATA_RATE_PER_PEER"
    assert warned["STRATA_TLS_CLIENTCA"]["closest"] == "STRATA_TLS_CLIENT_CA"
    assert warned["STRATA_ZZZ"]["closest"] is None
    assert all(line["level"] == "warning" for line in warned.values())
    # Nothing else of Strata's (a client's, a test's) is warned of.
    assert "STRATA_PORT" not in warned and "STRATA_TEST_DATABASE_URL" not in warned


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("postgres:/user:s3cret@@", "is not a database URL"),
        ("postgresql://user:s3cret@db:fivefour/strata", "its port is not a number"),
        ("postgresql://user:s3cret@db1:5432,db2:x/strata", "'db2:x'"),
        ("mysql://user:s3cret@db/strata", "unsupported database URL scheme 'mysql'"),
    ],
)
def test_a_malformed_database_url_is_one_line_that_keeps_its_password(
    url: str, said: str
) -> None:
    result = strata("serve", env={"STRATA_DATABASE_URL": url})
    assert result.returncode == 2
    assert_refused_in_one_line(result, "STRATA_DATABASE_URL", said)
    assert "s3cret" not in result.stderr


@pytest.mark.parametrize(
    ("packages", "said"),
    [
        ("no_such_game_package", "no_such_game_package is no game package"),
        ("domain.cubosaurs", "already registered"),
    ],
)
def test_a_wrong_extra_game_is_one_line_at_start_up(
    tmp_path: Path, packages: str, said: str
) -> None:
    result = serve_on_sqlite(tmp_path, STRATA_EXTRA_GAMES=packages)
    assert result.returncode == 2
    assert_refused_in_one_line(result, "STRATA_EXTRA_GAMES", said)


@pytest.mark.parametrize(
    ("bad", "innocent"),
    [
        ("STRATA_TLS_CLIENT_CA", "STRATA_TLS_CERT"),
        ("STRATA_TLS_CERT", "STRATA_TLS_CLIENT_CA"),
    ],
)
def test_a_tls_file_that_does_not_load_is_blamed_by_its_own_name(
    tmp_path: Path, bad: str, innocent: str
) -> None:
    """A bad client authority used to be reported as the server's certificate
    failing to load."""
    ca = trustme.CA()
    server = tmp_path / "server.pem"
    ca.issue_cert("localhost").private_key_and_cert_chain_pem.write_to_path(server)
    authority = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(authority)
    files = {
        "STRATA_TLS_CERT": str(server),
        "STRATA_TLS_KEY": str(server),
        "STRATA_TLS_CLIENT_CA": str(authority),
    }
    files[bad] = str(tmp_path / "garbled.pem")
    Path(files[bad]).write_text("-----BEGIN CERTIFICATE-----\ngarbled\n")
    result = serve_on_sqlite(tmp_path, **files)
    assert result.returncode == 2
    assert_refused_in_one_line(result, bad, "not load")
    assert innocent not in result.stderr


def test_a_host_that_does_not_resolve_is_a_bad_host(tmp_path: Path) -> None:
    result = serve_on_sqlite(tmp_path, STRATA_HOST="no-such-host.invalid")
    assert result.returncode == 2
    assert_refused_in_one_line(result, "STRATA_HOST='no-such-host.invalid'")
    assert "in use" not in result.stderr


def test_an_address_not_of_this_machine_is_said_so_not_a_port_in_use(
    tmp_path: Path,
) -> None:
    # 192.0.2.1 is TEST-NET-1's: no machine has it
    result = serve_on_sqlite(tmp_path, STRATA_HOST="192.0.2.1")
    assert result.returncode == 1
    assert_refused_in_one_line(result, "192.0.2.1", "not one of this machine's")
    assert "in use" not in result.stderr
