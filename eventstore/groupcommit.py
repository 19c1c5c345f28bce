"""Group commit: the appends that arrive while one commits share the next.

Positions come from one counter row locked until commit (``eventstore.sql``),
so a PostgreSQL process can commit only one append at a time, and each
commit waits for its WAL flush (``synchronous_commit = on``). A flush costs
milliseconds, the rest of an append microseconds: one append per commit
caps every writer of the database at one flush per append.

:class:`GroupCommitter` owns one connection and one thread. Callers queue
their appends and wait; the thread takes everything queued, runs the whole
batch as one statement (the appends as one JSON parameter: one round trip,
and next to no Python per append), commits once, and answers every caller.
The statement checks each stream's version, logs the commands, gives the
events positions from the transaction's id and inserts them; an
append whose version is stale or whose command id is logged inserts nothing
and is answered as such, so it cannot spoil the others. A game with two
appends in one batch (two players answering at once) has the later one in
a second statement of the same transaction, so that it sees the first's
events.

After a batch of n appends, the thread gives their callers up to
``gather`` (2 ms) to come back before it takes the next batch: without it,
16 callers in lockstep split into batches of 1 and 15 (the first to return
alone pays a flush), and measured on this machine 16 writers made ~2,850
appends/s instead of ~4,100. A lone caller (a batch of one) never waits.

The batch's transaction does not NOTIFY: PostgreSQL serialises the commits
of transactions that NOTIFY (one lock for the database's notification
queue, held until the commit is flushed), which would put back the very
lock the positions gave up. After the commit and the answers, the thread
announces the batch's last position on a second connection of its own, in
a transaction of its own that waits for no flush.

Invariants kept: an append is answered only after its commit (durable when
acknowledged); all of a batch's positions come from its transaction's id,
which no other transaction shares, so the committers of several processes
take no lock in common and readers order the log by transaction id (see
``eventstore.sql``); a batch holds at most
:data:`MAX_EVENTS_PER_TRANSACTION` events; a batch that fails as a whole (a
key collision with another process's append, a deadlock) is rolled back and
each of its appends is retried alone.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from opentelemetry import metrics

from eventstore import pgsql
from eventstore.loops import resolve_on_their_loops

#: The most events one transaction may append: a position is the
#: transaction's id shifted left 16 bits plus the event's rank in it.
MAX_EVENTS_PER_TRANSACTION = 0xFFFF


class _Signal:
    """Set once by the committing thread, waited for by one caller: a lock
    held from the start (cheaper than a ``threading.Event``, which builds
    a condition and a lock for every wait)."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()

    def set(self) -> None:
        if self._lock.locked():
            self._lock.release()

    def wait(self) -> None:
        self._lock.acquire()
        self._lock.release()


@dataclass
class Append:
    """One queued append and, once answered, what became of it.

    ``stream_version`` is the version the stream had when the append ran
    (None: a key collision, the stream moved under it); ``last_position``
    is set when its events were committed; ``error`` when the database
    failed it.
    """

    game_id: str
    expected_version: int
    count: int
    #: ``[[type, schema version, body], ...]`` as JSON: one
    #: text parameter (psycopg's list dumpers cost more than the append).
    events: str
    recorded_at: datetime
    command: dict[str, Any] | None = None
    stream_version: int | None = None
    last_position: int | None = None
    error: BaseException | None = None
    done: _Signal = field(default_factory=lambda: _Signal())
    #: Set by :meth:`GroupCommitter.append_async`: the future its caller
    #: awaits, resolved on the caller's event loop.
    future: asyncio.Future[None] | None = None
    #: Its outcome is known (committed, refused, collided or failed alone).
    settled: bool = False

    def document(self, index: int) -> str:
        """The append as an element of the batch statement's JSON array
        (its events and command payload spliced in as the JSON they are)."""
        values: dict[str, Any] = {
            "i": index,
            "g": self.game_id,
            "expected": self.expected_version,
            "count": self.count,
            "at": self.recorded_at.isoformat(),
        }
        payload = ""
        if self.command is not None:
            command = dict(self.command)
            payload = ',"payload":' + command.pop("payload")
            values.update(command)
        return f'{json.dumps(values)[:-1]},"events":{self.events}{payload}}}'


#: The size of each batch committed (OpenTelemetry API: the service's meter
#: provider reads it, a process without one records nothing).
_BATCH_SIZES = metrics.get_meter("strata.eventstore").create_histogram(
    "strata.store.batch.size",
    description="Appends committed together in one group commit",
)


class GroupCommitter:
    """Commits queued appends in batches on one connection of its own."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        channel: str,
        on_commit: Callable[[int], None],
        max_batch: int = 512,
        gather: float = 0.002,
    ) -> None:
        self._connect = connect
        self._channel = channel
        self._on_commit = on_commit
        self._max_batch = max_batch
        self._gather = gather
        #: How many queued appends wake the committing thread.
        self._wanted = 1
        self._queue: list[Append] = []
        self._condition = threading.Condition()
        self._connection: psycopg.Connection[Any] | None = None
        #: Where commits are announced (NOTIFY), apart from the appends.
        self._announcer: psycopg.Connection[Any] | None = None
        #: The last position of the batch just committed, to announce.
        self._to_announce: int | None = None
        self._closed = False
        self._thread = threading.Thread(
            target=self._run, name="strata-group-commit", daemon=True
        )
        self._thread.start()

    def queued(self) -> int:
        """Appends waiting for their commit now."""
        with self._condition:
            return len(self._queue)

    def connections(self) -> int:
        """Connections it holds now (the writer's, the announcer's)."""
        return sum(c is not None for c in (self._connection, self._announcer))

    def append(self, append: Append) -> Append:
        """Queue ``append`` and wait until it is answered."""
        self._enqueue(append)
        append.done.wait()
        return append

    async def append_async(self, append: Append) -> Append:
        """Queue ``append`` and await its answer without holding a thread:
        the committing thread resolves the futures of a whole batch with
        one call into each waiting event loop."""
        append.future = asyncio.get_running_loop().create_future()
        self._enqueue(append)
        await append.future
        return append

    def _enqueue(self, append: Append) -> None:
        with self._condition:
            if self._closed:
                raise RuntimeError("the store is closed")
            self._queue.append(append)
            if len(self._queue) >= self._wanted:
                self._condition.notify()

    def close(self) -> None:
        with self._condition:
            self._closed = True
            self._condition.notify()
        self._thread.join()
        for connection in (self._connection, self._announcer):
            if connection is not None:
                connection.close()

    # -- the committing thread --------------------------------------------

    def _run(self) -> None:
        last = 1
        while True:
            with self._condition:
                self._wanted = 1
                while not self._queue and not self._closed:
                    self._condition.wait()
                if last > 1 and len(self._queue) < last:
                    # The callers of the last batch are coming back: give
                    # them up to ``gather`` to share the next commit rather
                    # than pay a flush for the first few of them.
                    self._wanted = last
                    deadline = time.monotonic() + self._gather
                    while len(self._queue) < last and not self._closed:
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            break
                        self._condition.wait(remaining)
                    self._wanted = 1
                if not self._queue:
                    return
                size = _fitting(self._queue, self._max_batch)
                batch = self._queue[:size]
                del self._queue[:size]
                last = len(batch)
            _BATCH_SIZES.record(last)
            try:
                self._commit(batch)
            except BaseException as error:  # answer every caller, whatever happens
                for append in batch:
                    if not append.settled:
                        append.error = error
            finally:
                _answer(batch)
            if self._to_announce is not None:
                self._announce(self._to_announce)
                self._to_announce = None

    def _open(self) -> psycopg.Connection[Any]:
        connection = self._connection
        if connection is None or connection.closed or connection.broken:
            if connection is not None:
                connection.close()
            self._connection = connection = self._connect()
        return connection

    def _commit(self, batch: Sequence[Append]) -> None:
        for attempt in (1, 2):
            connection = self._open()
            try:
                results = self._run_batch(connection, batch)
            except psycopg.Error:
                if connection.broken:
                    # The connection died before COMMIT was sent: nothing was
                    # written, so the batch can go again on a new connection.
                    if attempt == 1:
                        continue
                    raise
                # One append spoiled the batch (a key collision with another
                # process's append, a deadlock): each goes alone.
                self._rollback(connection)
                self._one_by_one(connection, batch)
                return
            self._finish(connection, batch, results)
            return

    def _run_batch(
        self, connection: psycopg.Connection[Any], batch: Sequence[Append]
    ) -> list[tuple[Any, ...]]:
        """Run the batch as one statement (or one per round when a game has
        several appends in it: a game's later append must see its earlier
        one's events); the row each append returned, in batch order."""
        rows: list[tuple[Any, ...]] = [()] * len(batch)
        offset = 0  # events the transaction's earlier statements appended
        with connection.cursor() as cursor:
            for indices in _rounds(batch):
                document = ",".join(batch[i].document(n) for n, i in enumerate(indices))
                cursor.execute(
                    pgsql.APPEND_BATCH,
                    {"batch": f"[{document}]", "offset": offset},
                    prepare=True,
                )
                for i, row in zip(indices, cursor.fetchall(), strict=True):
                    rows[i] = row
                    if row[1] is not None:
                        offset += batch[i].count
        return rows

    def _finish(
        self,
        connection: psycopg.Connection[Any],
        batch: Sequence[Append],
        rows: list[tuple[Any, ...]],
    ) -> None:
        last = max((row[1] for row in rows if row[1] is not None), default=None)
        connection.commit()  # an error here leaves the outcome unknown: raised
        for append, row in zip(batch, rows, strict=True):
            append.stream_version = int(row[0])
            append.last_position = None if row[1] is None else int(row[1])
            append.settled = True
        if last is not None:
            self._on_commit(int(last))
            self._to_announce = max(int(last), self._to_announce or 0)

    def _announce(self, position: int) -> None:
        """NOTIFY the other processes' listeners of a commit up to
        ``position``; a failure costs them a wake-up, not an event (they
        read again when their wait times out), so it is dropped."""
        try:
            announcer = self._announcer
            if announcer is None or announcer.closed or announcer.broken:
                if announcer is not None:
                    announcer.close()
                self._announcer = announcer = self._connect()
                announcer.autocommit = True
                announcer.execute(pgsql.NOT_DURABLE)
            announcer.execute(
                pgsql.NOTIFY, (self._channel, str(position)), prepare=True
            )
        except psycopg.Error:
            if self._announcer is not None:
                self._announcer.close()
                self._announcer = None

    def _one_by_one(
        self, connection: psycopg.Connection[Any], batch: Sequence[Append]
    ) -> None:
        for append in batch:
            try:
                rows = self._run_batch(connection, [append])
            except psycopg.IntegrityError:
                self._rollback(connection)
                append.stream_version = None  # collided: the stream moved
                append.settled = True
                continue
            except psycopg.Error as error:
                self._rollback(connection)
                append.error = error
                append.settled = True
                continue
            self._finish(connection, [append], rows)

    @staticmethod
    def _rollback(connection: psycopg.Connection[Any]) -> None:
        if not connection.broken and not connection.closed:
            connection.rollback()


def _fitting(queue: Sequence[Append], max_batch: int) -> int:
    """How many of the queue's first appends make one batch: at most
    ``max_batch`` of them, with at most :data:`MAX_EVENTS_PER_TRANSACTION`
    events in all (always at least one append)."""
    events = 0
    for size, append in enumerate(queue[:max_batch]):
        events += append.count
        if events > MAX_EVENTS_PER_TRANSACTION and size:
            return size
    return min(len(queue), max_batch)


def _rounds(batch: Sequence[Append]) -> list[list[int]]:
    """The batch's indices in rounds that hold each game at most once, in
    batch order (nearly always one round: the whole batch)."""
    rounds: list[list[int]] = []
    seen: dict[str, int] = {}
    for index, append in enumerate(batch):
        round_number = seen.get(append.game_id, -1) + 1
        seen[append.game_id] = round_number
        if round_number == len(rounds):
            rounds.append([])
        rounds[round_number].append(index)
    return rounds


def _answer(batch: Sequence[Append]) -> None:
    """Wake every caller of ``batch``: threads by their event, coroutines by
    one callback per event loop for all of its futures."""
    for append in batch:
        append.done.set()
    resolve_on_their_loops(a.future for a in batch if a.future is not None)
