"""Load and fault scripts: replicas racing, crashes, database outages.

Each is ``python -m reliability.<name>``, bounded in time, prints a summary
table and exits non-zero if anything was lost (see docs/RELIABILITY.md).
"""
