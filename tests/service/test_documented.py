"""The README's configuration documents every variable the code reads."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_strata_variable_the_code_reads_is_in_the_readme():
    read: set[str] = set()
    for folder in ("service", "eventstore", "clients", "domain"):
        for path in (ROOT / folder).rglob("*.py"):
            read |= set(re.findall(r"[\"'](STRATA_[A-Z0-9_]+)[\"']", path.read_text()))
            read |= set(re.findall(r"\b(STRATA_[A-Z0-9_]+)=", path.read_text()))
    documented = set(
        re.findall(r"`(STRATA_[A-Z0-9_]+)`", (ROOT / "README.md").read_text())
    )
    assert read, "found no variables: the scan is broken"
    assert read - documented == set(), "document these in README's Configuration"
