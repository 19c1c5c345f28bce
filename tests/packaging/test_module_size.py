"""No service module grows into the next god object: each holds one job, in
at most 600 lines (split by job, as the lobby is: creating, seating,
starting and expiring)."""

from pathlib import Path

import service

LIMIT = 600


def test_no_service_module_is_over_600_lines():
    root = Path(service.__file__).parent
    sizes = {
        str(path.relative_to(root.parent)): len(path.read_text().splitlines())
        for path in root.rglob("*.py")
    }
    assert len(sizes) > 20  # found the package
    too_long = {name: lines for name, lines in sizes.items() if lines > LIMIT}
    assert not too_long, f"split these modules by job: {too_long}"
