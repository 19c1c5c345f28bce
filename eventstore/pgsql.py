"""The SQL of the PostgreSQL store's fast paths, in one place: the group
committer's batch append, the raw reads (streams, the settled log, commands),
the positions' claim and the notifications. Statements in psycopg's
parameter style (``%s``, ``%(name)s``) but :data:`CLAIM_AND_NOTIFY`, run
through SQLAlchemy (``:name``). ``tests/eventstore/test_pgsql.py`` runs
``EXPLAIN`` of each on a database made from :mod:`eventstore.tables`, so a
statement that names a table or column the schema lacks fails there.
"""

from __future__ import annotations

from functools import cache

from sqlalchemy import Table

# A stream comes back as the text of one JSON array of rows: one json.loads
# (C) for the lot is much cheaper than psycopg's per-row, per-column loaders
# (its json loader is several times slower than json.loads on text). The
# json ``data`` is embedded verbatim.
EVENT_ROWS = (
    "SELECT coalesce(json_agg(json_build_array(version, position, type,"
    " schema_version, data, recorded_at) ORDER BY version)::text, '[]')"
    " FROM events WHERE game_id = %s AND version >= %s"
)
READ_STREAM = EVENT_ROWS
READ_STREAM_RANGE = EVENT_ROWS + " AND version <= %s"
# The global log is read only below the oldest transaction still running
# (positions follow transaction ids: see eventstore.sql), so no event can
# later appear behind a position read.
SETTLED = (
    "SELECT * FROM events WHERE position > %s"
    " AND position < (pg_snapshot_xmin(pg_current_snapshot())::text::bigint << 16)"
    " ORDER BY position LIMIT %s"
)
#: The position below which the log is settled: no transaction still
#: running can append below it.
SETTLED_BOUND = "(pg_snapshot_xmin(pg_current_snapshot())::text::bigint << 16)"
READ_ALL = (
    "SELECT coalesce(json_agg(json_build_array(game_id, version, position, type,"
    " schema_version, data, recorded_at) ORDER BY position)::text, '[]'),"
    f" {SETTLED_BOUND}"
    f" FROM ({SETTLED}) e"
)
# The stretch of the log read_all would return: its size, its last position
# and, built only for the matching events, their rows.
READ_ALL_MATCHING = (
    "SELECT count(*), max(position), coalesce(json_agg(json_build_array(game_id,"
    " version, position, type, schema_version, data, recorded_at) ORDER BY position)"
    " FILTER (WHERE type = ANY(%s::text[]) OR game_id = ANY(%s::text[]))::text, '[]'),"
    f" {SETTLED_BOUND}"
    f" FROM ({SETTLED}) e"
)
# A stream read (on a standby) below the settled bound, and the bound: the
# events of transactions that ended. They are a prefix of the stream (a
# version is appended only once the one before it committed, so no snapshot
# holds a version without the ones before it), and a later read below a
# higher bound, on any standby, holds every one of them.
READ_STREAM_SETTLED = (
    "SELECT coalesce(json_agg(json_build_array(version, position, type,"
    " schema_version, data, recorded_at) ORDER BY version)::text, '[]'),"
    f" {SETTLED_BOUND}"
    " FROM events WHERE game_id = %s AND version >= %s AND version <= %s"
    f" AND position < {SETTLED_BOUND}"
)
FIND_COMMAND = (
    "SELECT game_id, command_id, actor, payload, first_version, last_version,"
    " error_kind, error_reason, error_message, decided_at_version, recorded_at,"
    " sequence FROM commands WHERE game_id = %s AND command_id = %s"
)
STREAM_VERSION = "SELECT coalesce(max(version), 0) FROM events WHERE game_id = %s"

#: A batch of appends, at most one per game, as one statement: each
#: append's version check, command log entry (without a command id
#: conflict) and events; the positions of all the accepted appends, in
#: batch order, from the transaction's id (see ``eventstore.sql``), after
#: the ``offset`` events earlier statements of the transaction appended.
#: ``%(batch)s`` is a JSON array of appends (see :meth:`Append.document`).
#: One row per append, in batch order: its index, the stream's version
#: before the batch, and the last position it was given (NULL when it
#: wrote nothing).
APPEND_BATCH = """
WITH b AS (
  SELECT * FROM json_to_recordset(%(batch)s::json) AS b(
    i int, g text, expected int, count int, at timestamptz, events json,
    command_id text, actor text, payload json, decided int, first_version int,
    last_version int, error_kind text, error_reason text, error_message text)
), stream AS (
  SELECT b.i, coalesce((SELECT max(e.version) FROM events e WHERE e.game_id = b.g), 0)
    AS version
  FROM b
), fits AS (
  SELECT b.* FROM b JOIN stream USING (i) WHERE stream.version = b.expected
), command AS (
  INSERT INTO commands (game_id, command_id, actor, payload, decided_at_version,
    first_version, last_version, error_kind, error_reason, error_message,
    recorded_at)
  SELECT g, command_id, actor, payload, decided, first_version, last_version,
    error_kind, error_reason, error_message, at
  FROM fits WHERE command_id IS NOT NULL
  ON CONFLICT (game_id, command_id) DO NOTHING
  RETURNING game_id
), accepted AS (
  SELECT fits.*, sum(fits.count) OVER (ORDER BY fits.i) AS through
  FROM fits
  WHERE fits.command_id IS NULL OR fits.g IN (SELECT game_id FROM command)
), claimed AS (
  SELECT (pg_current_xact_id()::text::bigint << 16) + %(offset)s::bigint AS base
  WHERE EXISTS (SELECT FROM accepted)
), inserted AS (
  INSERT INTO events (game_id, version, position, type, schema_version, data,
    recorded_at)
  SELECT a.g, a.expected + u.n, claimed.base + a.through - a.count + u.n,
    u.event ->> 0, (u.event ->> 1)::int, u.event -> 2, a.at
  FROM claimed, accepted a,
    json_array_elements(a.events) WITH ORDINALITY AS u(event, n)
)
SELECT stream.version, claimed.base + a.through
FROM stream LEFT JOIN accepted a USING (i) LEFT JOIN claimed ON a.i IS NOT NULL
ORDER BY stream.i
"""

#: SQLSTATE ``read_only_sql_transaction``: the connection's server takes no
#: writes (a hot standby, or an old primary fenced read-only by its
#: failover manager).
_READ_ONLY_SQLSTATE = "25006"


def takes_no_writes(error: BaseException) -> bool:
    """Whether ``error`` says that the connection's server is read-only:
    nothing was written, and the writable server is elsewhere (a new
    connection through a URL naming every server, with
    ``target_session_attrs=read-write``, finds it)."""
    return getattr(error, "sqlstate", None) == _READ_ONLY_SQLSTATE


#: A health probe: "on" when the server takes no writes now (what a new
#: transaction of the connection would be), and the log's last position
#: (the schema is there).
READ_ONLY_NOW = (
    "SELECT current_setting('transaction_read_only'), max(position) FROM events"
)

NOTIFY = "SELECT pg_notify(%s, %s)"
#: The announcing connection's commits need not wait for a WAL flush: a
#: notification is a hint (a follower that misses one reads again when its
#: wait times out).
NOT_DURABLE = "SET synchronous_commit = off"

# One round trip: the transaction's positions and its notification.
CLAIM_AND_NOTIFY = (
    "WITH claimed AS ("
    " SELECT (pg_current_xact_id()::text::bigint << 16) + :count AS value)"
    " SELECT value, pg_notify(:channel, value::text) FROM claimed"
)
# The position of the first event a transaction begun now could append:
# the log's events must all be below it, or the cluster's transaction ids
# are behind its positions (a logical dump restored into a new cluster).
IDS_AHEAD_OF_THE_LOG = (
    "SELECT coalesce(max(position), 0)"
    " < (pg_snapshot_xmax(pg_current_snapshot())::text::bigint << 16)"
    " FROM events"
)

# How many events the log holds after a position (up to a limit).
EVENTS_AFTER = (
    "SELECT count(*) FROM (SELECT FROM events WHERE position > %s LIMIT %s) e"
)

# -- read models ---------------------------------------------------------------

#: A projection's checkpoint.
CHECKPOINT = "SELECT position FROM projection_checkpoints WHERE name = %s"


@cache
def apply_rows(table: Table) -> str:
    """One batch of a projection into ``table``: the checkpoint moves if it
    is at ``%(from)s`` (the row is created when the projection starts from
    0 and has none; a runner that loses a race finds it moved, or created,
    and changes nothing), and the rows (``%(rows)s``, a JSON array of
    objects, a value for every column) are upserted only if it moved:
    ``applied`` feeds their INSERT."""
    columns = [c.name for c in table.columns]
    (key,) = [c.name for c in table.primary_key.columns]
    names = ", ".join(columns)
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != key)
    return f"""
WITH moved AS (
  UPDATE projection_checkpoints SET position = %(to)s::bigint, updated_at = now()
  WHERE name = %(name)s AND position = %(from)s::bigint
  RETURNING 1
), created AS (
  INSERT INTO projection_checkpoints (name, position, updated_at)
  SELECT %(name)s, %(to)s::bigint, now()
  WHERE %(from)s::bigint = 0
    AND NOT EXISTS (SELECT FROM projection_checkpoints WHERE name = %(name)s)
  ON CONFLICT (name) DO NOTHING
  RETURNING 1
), applied AS (
  SELECT FROM moved UNION ALL SELECT FROM created
), upserted AS (
  INSERT INTO {table.name} ({names})
  SELECT {names} FROM json_populate_recordset(NULL::{table.name}, %(rows)s::json)
  WHERE EXISTS (SELECT FROM applied)
  ON CONFLICT ({key}) DO UPDATE SET {updates}
)
SELECT EXISTS (SELECT FROM applied)
"""
