"""The README's configuration documents every variable the code reads, with
the default the service's own table (:mod:`service.variables`) gives; and
docs/OPERATIONS.md every variable, endpoint, metric and alert."""

from __future__ import annotations

import re
from pathlib import Path

from service import variables

ROOT = Path(__file__).resolve().parents[2]


def readme_section(title: str) -> str:
    """The README's ``## title`` section, up to the next ``## ``."""
    text = (ROOT / "README.md").read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_every_strata_variable_the_code_reads_is_in_the_readme():
    read: set[str] = set()
    for folder in ("service", "eventstore", "clients", "domain"):
        for path in (ROOT / folder).rglob("*.py"):
            read |= set(re.findall(r"[\"'](STRATA_[A-Z0-9_]+)[\"']", path.read_text()))
            read |= set(re.findall(r"\b(STRATA_[A-Z0-9_]+)=", path.read_text()))
    documented = set(
        re.findall(r"\b(STRATA_[A-Z0-9_]+)\b", (ROOT / "README.md").read_text())
    )
    assert read, "found no variables: the scan is broken"
    assert read - documented == set(), "document these in README's Configuration"


def test_the_readme_table_gives_each_server_variable_the_default_it_has():
    """One row a variable (or two that go together), its default as
    ``service/variables.py`` has it: what `strata serve --help` prints."""
    rows: dict[str, str] = {}
    for line in readme_section("Configuration").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`STRATA_"):
            for name in re.findall(r"`(STRATA_[A-Z0-9_]+)`", cells[0]):
                rows[name] = cells[1]
    for variable in variables.SERVER:
        assert variable.name in rows, f"{variable.name}: no row in the README"
        shown = rows[variable.name]
        if variable.default == variables.NONE:
            assert shown == "(none)", variable.name
        else:
            assert shown.startswith(f"`{variable.default}`"), (variable.name, shown)
    assert set(rows) <= {v.name for v in variables.SERVER}, "rows of no variable"


def test_the_operations_page_names_every_variable_endpoint_metric_and_alert():
    from tests.service.test_alerting import (
        RULES,
        dashboard_expressions,
        named_in,
        rule_expressions,
    )

    page = (ROOT / "docs" / "OPERATIONS.md").read_text()
    for variable in variables.SERVER:
        default = (
            "(none)" if variable.default == variables.NONE else f"`{variable.default}`"
        )
        assert f"| `{variable.name}` | {default} |" in page, variable.name
    for endpoint in ("/livez", "/readyz", "/healthz", "/metrics"):
        assert f"`GET {endpoint}`" in page or f"`{endpoint}`" in page, endpoint
    for alert in re.findall(r"- alert: (\w+)", RULES.read_text()):
        assert f"`{alert}`" in page, alert
    metrics: set[str] = set()
    for expression in rule_expressions() + dashboard_expressions():
        metrics |= set(named_in(expression)) - {""}
    assert metrics
    for metric in metrics:
        base = re.sub(r"_(bucket|count|sum)$", "", metric)
        assert base in page, f"docs/OPERATIONS.md does not name {base}"
