"""The alerting rules and the dashboard an operator starts from
(``deploy/prometheus/``, ``deploy/grafana/``): promtool accepts the rules
and their unit tests pass, and every metric and label they name is one a
real `strata serve` exports, scraped after it served calls, played bots
and timed a seat out."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest
from strata.v1 import game_service_pb2 as pb

from clients.client import StrataClient, StrataError
from tests.service.conftest import http_call
from tests.service.served import ROOT, Served

RULES = ROOT / "deploy" / "prometheus" / "strata.rules.yml"
RULE_TESTS = ROOT / "deploy" / "prometheus" / "strata.rules.test.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "strata.json"
ADMIN = "alerting-admin-token"
GAME = "dinosaurs_extinct"

#: Labels Prometheus adds to every series it scrapes, and histograms' own.
ADDED_LABELS = {"job", "instance", "le"}
_IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_KEYWORDS = {"by", "without", "and", "or", "unless", "on", "ignoring", "bool"}


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("promtool is missing (.ci/run installs Debian's prometheus)")
        pytest.skip("no promtool here (apt-get install prometheus)")
    return found


def rule_expressions() -> list[str]:
    """Each rule's ``expr`` (inline, or a ``|`` block), read from the YAML
    as text (the project has no YAML library; promtool reads it fully)."""
    lines = RULES.read_text().splitlines()
    out = []
    for index, line in enumerate(lines):
        key, _, value = line.strip().partition(":")
        if key != "expr":
            continue
        if value.strip() != "|":
            out.append(value.strip())
            continue
        indent = len(line) - len(line.lstrip())
        block = []
        for following in lines[index + 1 :]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            block.append(following.strip())
        out.append(" ".join(block))
    return out


def dashboard_expressions() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [
        target["expr"]
        for panel in dashboard["panels"]
        for target in panel.get("targets", [])
    ]


def named_in(expression: str) -> dict[str, set[str]]:
    """The metrics an expression reads, each with the labels its matchers
    name; and under ``""`` the labels of its ``by``/``without`` clauses."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expression)  # no string's words
    text = re.sub(r"\[[^\]]*\]", "", text)  # ranges
    named: dict[str, set[str]] = {"": set()}
    for clause in re.finditer(r"\b(?:by|without)\s*\(([^)]*)\)", text):
        named[""] |= set(_IDENTIFIER.findall(clause.group(1)))
    text = re.sub(r"\b(?:by|without)\s*\([^)]*\)", "", text)
    for found in re.finditer(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{[^}]*\})?", text):
        name, matchers = found.group(1), found.group(2) or ""
        after = text[found.end() :].lstrip()
        if name in _KEYWORDS or after.startswith("(") or name.startswith("$"):
            continue  # a function, an operator's keyword, or a variable
        if text[max(found.start() - 1, 0)] == "$":
            continue
        labels = set(re.findall(r"([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)", matchers))
        named.setdefault(name, set()).update(labels)
    return named


def test_the_expression_reader_finds_metrics_and_labels() -> None:
    """The reader the checks below rely on, on one rule's shape."""
    named = named_in(
        "sum by (job, le) (rate(rpc_server_call_duration_seconds_bucket{rpc_method!~"
        '".*/(WatchGame)",job=~"$job"}[5m])) / strata_worker_pool_size > 0.9'
    )
    assert named == {
        "": {"job", "le"},
        "rpc_server_call_duration_seconds_bucket": {"rpc_method", "job"},
        "strata_worker_pool_size": set(),
    }


def test_promtool_checks_the_rules_and_their_unit_tests_pass() -> None:
    tool = promtool()
    for command in (("check", "rules", RULES), ("test", "rules", RULE_TESTS)):
        done = subprocess.run(
            [tool, *map(str, command)],
            cwd=RULES.parent,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_rules_cover_what_an_operator_is_paged_for() -> None:
    alerts = set(re.findall(r"- alert: (\w+)", RULES.read_text()))
    assert {
        "StrataHighErrorRatio",
        "StrataSlowCalls",
        "StrataStoreDown",
        "StrataWorkerPoolSaturated",
        "StrataEventLoopLagging",
        "StrataBotsLagging",
        "StrataTimekeeperLate",
    } <= alerts
    tested = set(re.findall(r"alertname: (\w+)", RULE_TESTS.read_text()))
    assert alerts <= tested, "each alert has a unit test"


@pytest.fixture(scope="module")
def scrape(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One scrape of a `strata serve` that answered calls (and refused
    some), played a bot game, has an open game and timed a seat out."""
    served = Served(
        tmp_path_factory.mktemp("alerting"), env={"STRATA_ADMIN_TOKEN": ADMIN}
    )
    try:
        served.wait_serving()
        with StrataClient(f"127.0.0.1:{served.port}", timeout=10) as client:
            admin = client.with_token(ADMIN)
            timed = admin.create_game(
                GAME,
                2,
                time_control=pb.TimeControl(decision_seconds=1, on_timeout="forfeit"),
            ).game_id
            for seat in (0, 1):
                admin.join_game(timed, f"p{seat}", seat=seat)
            admin.start_game(timed)
            admin.create_game(GAME, 2, bots={0: "random", 1: "random"})
            client.create_game(GAME, 3)  # open, with its seats free
            with pytest.raises(StrataError):
                client.get_game("no-such-game")
        http_call(served.http_port, "GET", "/")
        deadline = time.monotonic() + 60
        while True:
            time.sleep(1.1)  # a scrape is rendered at most once a second
            _, _, body = http_call(served.http_port, "GET", "/metrics")
            text = body.decode()
            if "strata_timeouts_total{" in text and "strata_seats_open{" in text:
                break
            assert time.monotonic() < deadline, "no timeout within a minute"
        yield text
    finally:
        served.stop()


def exported(text: str) -> dict[str, set[str]]:
    """Each sample name of a scrape with the labels its samples carry."""
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, rest = line.partition("{")
        name = name.split()[0]
        labels = set(re.findall(r'([A-Za-z_]\w*)="', rest.partition("}")[0]))
        out.setdefault(name, set()).update(labels)
    return out


@pytest.mark.parametrize(
    "source", ["rules", "dashboard"], ids=["alerting-rules", "grafana-dashboard"]
)
def test_every_metric_and_label_named_is_exported(scrape: str, source: str) -> None:
    expressions = rule_expressions() if source == "rules" else dashboard_expressions()
    assert len(expressions) >= 10, "found few expressions: the reader is broken"
    series = exported(scrape)
    every_label = set().union(*series.values()) | ADDED_LABELS
    named: dict[str, set[str]] = {}
    for expression in expressions:
        for name, labels in named_in(expression).items():
            named.setdefault(name, set()).update(labels)
    grouped = named.pop("")
    missing = sorted(set(named) - set(series))
    assert missing == [], f"{source} name metrics no scrape has"
    for name, labels in named.items():
        assert labels <= series[name] | ADDED_LABELS, (name, labels - series[name])
    assert grouped <= every_label, grouped - every_label
    assert len(named) >= 12


def test_the_dashboard_is_grafana_json_with_a_prometheus_source() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "strata" and dashboard["panels"]
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["query"] == "prometheus"
    for panel in dashboard["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}"
            assert panel["targets"], panel["title"]
