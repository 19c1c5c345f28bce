"""Every package the TypeScript client locks runs on the Node its README
promises (20 or newer): `npm ci` warns EBADENGINE for any that asks for
more, as @bufbuild/protoc-gen-es 2.14+ and @connectrpc/connect-node 2.2+ do
(Node 22). Read from package-lock.json, so it needs no node or npm."""

from __future__ import annotations

import json
import re
from pathlib import Path

LOCK = (
    Path(__file__).resolve().parents[2] / "clients" / "typescript" / "package-lock.json"
)
#: The oldest Node the client's README and package.json promise.
OLDEST_NODE = (20, 0, 0)


def admits(wanted: str, version: tuple[int, int, int]) -> bool:
    """Whether an engines range of the forms the lock holds (``>=20``,
    ``>=14.17``, alternatives with ``||``) admits ``version``; any other
    form fails loudly rather than pass unread."""
    for alternative in wanted.split("||"):
        found = re.fullmatch(r"\s*>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*", alternative)
        assert found, f"an engines range this check does not read: {wanted!r}"
        floor = tuple(int(part or 0) for part in found.groups())
        if version >= floor:
            return True
    return False


def test_the_engines_check_reads_ranges_as_npm_does() -> None:
    assert admits(">=20", (20, 0, 0)) and admits(">=14.17", (20, 0, 0))
    assert not admits(">=22", (20, 20, 2)) and admits(">=18 || >=22", (20, 0, 0))


def test_every_locked_package_runs_on_node_20() -> None:
    packages = json.loads(LOCK.read_text(encoding="utf-8"))["packages"]
    too_new = {
        name or "(the client)": package["engines"]["node"]
        for name, package in packages.items()
        if "node" in package.get("engines", {})
        and not admits(package["engines"]["node"], OLDEST_NODE)
    }
    assert too_new == {}
