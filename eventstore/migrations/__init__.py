"""Alembic migrations of the event store schema (run with ``eventstore.migrate``)."""
