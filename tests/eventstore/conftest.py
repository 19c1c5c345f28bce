"""The store contract's fixtures: ``store``, ``open_stores`` and ``store_url``
on each backend of ``tests.eventstore.backends`` (SQLite, PostgreSQL and the
in-memory store), and the deselection of the cases a backend cannot offer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from eventstore.base import EventStore
from eventstore.factory import open_store
from eventstore.memory import InMemoryEventStore
from tests.conftest import empty_store_url
from tests.eventstore.backends import BACKENDS, Backend, Capability, requires


@pytest.fixture(params=[pytest.param(b, id=b.name, marks=b.marks) for b in BACKENDS])
def backend(request: pytest.FixtureRequest) -> Backend:
    """The backend a contract test runs on."""
    backend: Backend = request.param
    return backend


def _declared(
    backend: Backend, capability: Capability, request: pytest.FixtureRequest
) -> None:
    """Fail a test that uses ``capability`` without declaring it."""
    if capability not in requires(request.node):
        pytest.fail(
            f"{request.node.name} uses {capability.value}, which not every "
            f"backend has: mark it @pytest.mark.requires(Capability."
            f"{capability.name})"
        )
    assert capability in backend.capabilities  # deselected otherwise


@pytest.fixture
def backend_url(
    backend: Backend, request: pytest.FixtureRequest, tmp_path: Path
) -> str | None:
    """The URL of the backend's empty, migrated database; None for the
    in-memory store, which is its own database."""
    if Capability.SQL not in backend.capabilities:
        return None
    return empty_store_url(backend.name, request, tmp_path)


@pytest.fixture
def store_url(
    backend: Backend, backend_url: str | None, request: pytest.FixtureRequest
) -> str:
    """The URL of the store's database, for plain SQL on it."""
    _declared(backend, Capability.SQL, request)
    assert backend_url is not None
    return backend_url


@pytest.fixture
def open_stores(
    backend: Backend, backend_url: str | None, request: pytest.FixtureRequest
) -> Iterator[Callable[[], EventStore]]:
    """Opens stores on one empty database; closes them after the test. The
    first is ``store``; another (another connection, other listeners) is
    only for tests that require ``Capability.CONNECTIONS``."""
    opened: list[EventStore] = []

    def open_another() -> EventStore:
        if opened:
            _declared(backend, Capability.CONNECTIONS, request)
        store = InMemoryEventStore() if backend_url is None else open_store(backend_url)
        opened.append(store)
        return store

    yield open_another
    for store in opened:
        store.close()


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Deselect the contract cases whose backend lacks a capability the test
    requires: they do not apply to it."""
    kept: list[pytest.Item] = []
    not_applicable: list[pytest.Item] = []
    for item in items:
        needed = requires(item)
        callspec = getattr(item, "callspec", None)
        backend = None if callspec is None else callspec.params.get("backend")
        if needed and not isinstance(backend, Backend):
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.requires is for store contract "
                "tests (on the backend fixture)"
            )
        if isinstance(backend, Backend) and backend.lacks(needed):
            not_applicable.append(item)
        else:
            kept.append(item)
    if not_applicable:
        config.hook.pytest_deselected(items=not_applicable)
        items[:] = kept
