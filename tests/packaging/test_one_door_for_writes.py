"""Writes through one door: every change to the event log (a game's
creation, a command's events, a seat, a start, a refusal logged, a
snapshot, an import) goes through ``service.games.Games``, which appends at
the version the change was decided on and caches the new state. A use case
that called the store's writing methods itself would skip the cache (the
next command decided on a stale state) or the snapshots."""

import ast
from pathlib import Path

import service
from eventstore.base import EventStore

#: The store's methods that change what it holds.
WRITES = {"append", "append_async", "record_rejection", "save_snapshot", "import_game"}
DOOR = "service/games.py"


def _store_writes(source: str) -> list[tuple[int, str]]:
    """(line, method) of each call of a write on something named ``store``
    (``self.store.append(…)``, ``games.store.import_game(…)``, ``store.…``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        target = node.func.value
        name = target.attr if isinstance(target, ast.Attribute) else None
        if isinstance(target, ast.Name):
            name = target.id
        if node.func.attr in WRITES and name is not None and "store" in name:
            found.append((node.lineno, node.func.attr))
    return found


def test_the_writes_named_are_the_stores_writing_methods():
    for method in WRITES:
        assert callable(getattr(EventStore, method)), method


def test_the_check_finds_a_direct_append():
    # A use case that appended by itself is found, however it reaches the store.
    assert _store_writes("self.store.append(g, 0, [e], c)") == [(1, "append")]
    assert _store_writes("await games.store.append_async(g, 1, [], c)") == [
        (1, "append_async")
    ]
    assert _store_writes("store.import_game(g, e, c)") == [(1, "import_game")]
    assert _store_writes("self.games.append(g, 0, [e], c)") == []


def test_only_the_games_door_calls_the_stores_writes():
    root = Path(service.__file__).parent
    elsewhere = {}
    door_writes = []
    for path in sorted(root.rglob("*.py")):
        name = str(path.relative_to(root.parent))
        found = _store_writes(path.read_text())
        if name == DOOR:
            door_writes = found
        elif found:
            elsewhere[name] = found
    assert not elsewhere, (
        "append through service.games.Games (create, commit, append, "
        f"log_refusal, save_snapshot, import_game), not the store: {elsewhere}"
    )
    # The door itself does every kind of write (else the scan found nothing).
    assert {method for _, method in door_writes} == WRITES
