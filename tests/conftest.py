"""Test-wide set-up: quiet structured logs."""

from __future__ import annotations

from service.server import configure_logging

configure_logging("warning")
