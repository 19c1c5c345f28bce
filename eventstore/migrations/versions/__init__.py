"""Alembic revision scripts, one per schema change, never edited once released."""
