"""Administration and integration: the audit log, verified replay, export
and import (the admin's), the global log's feed and the statistics (the
integrations').

Each use case checks its caller first: the admin token, or an integration
token (or the admin's) for the feed and the statistics.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable
from typing import Any

from domain import codec, registry
from domain.errors import DomainError
from domain.rules import Viewer
from domain.session import GameCreated, Session
from eventstore.base import (
    CommandRecord,
    ConcurrencyError,
    EventStore,
    MatchingEvents,
    RecordedEvent,
)
from service import paging, portable
from service.callers import Caller, hash_token
from service.errors import (
    InvalidArgument,
    PermissionDenied,
    Unauthenticated,
)
from service.games import Games, rules_session
from service.inputs import quote
from service.projections import GameList
from service.verification import Verdict, Verification, verify_game, verify_records

#: Events and commands a page of the audit log holds by default, and at most.
AUDIT_PAGE = 500
AUDIT_PAGE_MOST = 1000
#: Events read from the log at a time by a feed.
FEED_BATCH = 500
#: A feed that passes over this many events without one to send
#: answers with its position alone, so that its client can resume from there
#: (as it does at the end of the log).
FEED_HEARTBEAT = 200
#: Games whose creation a feed keeps (the least recently seen go first): a
#: long follow holds this many at most, and reads a game's first event again
#: only once it has passed this many other games since.
FEED_GAMES = 1024
_GAME_CREATED = GameCreated.__name__


def require_admin(caller: Caller) -> None:
    if not caller.token:
        raise Unauthenticated("TOKEN_REQUIRED", "The admin token is required.")
    if not caller.admin:
        raise PermissionDenied("ADMIN_ONLY", "Only the admin token may do this.")


@dataclasses.dataclass(frozen=True)
class AuditPage:
    """A page of a game's audit log: its events (decoded, unredacted), its
    commands (with the game command each carried, when it is one), and
    where the next page starts ("" after the last)."""

    session: Session[Any]
    events: list[tuple[RecordedEvent, Any]]
    commands: list[tuple[CommandRecord, Any]]
    next_page_token: str


class Administration:
    """The admin's use cases."""

    def __init__(self, games: Games) -> None:
        self.games = games
        self.store = games.store

    def audit_page(
        self, caller: Caller, game_id: str, page_size: int, page_token: str
    ) -> AuditPage:
        require_admin(caller)
        size = paging.page_size(page_size, AUDIT_PAGE, AUDIT_PAGE_MOST)
        from_version, after_sequence = paging.decode(page_token, 2, (1, 0))
        session = self.games.load(game_id).session
        recorded = self.store.read_stream(
            game_id, from_version, from_version + size - 1
        )
        records = self.store.read_commands(game_id, after_sequence, size)
        more = len(recorded) == size or len(records) == size
        return AuditPage(
            session,
            [
                (r, session.decode_event(r.type, r.data, r.schema_version))
                for r in recorded
            ],
            [(record, _game_command(session, record)) for record in records],
            paging.encode(
                recorded[-1].version + 1 if recorded else from_version,
                records[-1].sequence if records else after_sequence,
            )
            if more
            else "",
        )

    def verify(self, caller: Caller, game_id: str) -> Verification:
        require_admin(caller)
        self.games.load(game_id)  # NOT_FOUND for an unknown game
        return verify_game(self.store, game_id)

    def export(
        self, caller: Caller, game_id: str, page_size: int, page_token: str
    ) -> tuple[bytes, str]:
        require_admin(caller)
        return portable.export_game(self.store, game_id, page_size, page_token)

    def import_game(
        self, caller: Caller, document: bytes, game_id: str, trust: bool = False
    ) -> tuple[str, int, Verification]:
        """Import an export document; (game id, version, its verification).

        The document is verified first (its commands re-decided, as
        VerifyGame does): one that does not verify is refused and nothing is
        stored (INVALID_ARGUMENT ``IMPORT_NOT_VERIFIED``), unless ``trust``
        (a game of rules this service no longer ships, say): then it is
        stored as it is, and the answer says what verification found."""
        require_admin(caller)
        game_id, events, commands = portable.parse_export(document, game_id)
        verification = verify_document(game_id, events, commands)
        if not trust and not verification.ok:
            raise InvalidArgument(
                "IMPORT_NOT_VERIFIED",
                f"The document does not verify ({verification.verdict.value}"
                + (
                    f" at version {verification.mismatch_version}"
                    if verification.mismatch_version
                    else ""
                )
                + f": {verification.message}); nothing was imported. Import it "
                "with trust set (strata import --trust) to store it as it is.",
                "document",
            )
        try:
            loaded = self.games.import_game(game_id, events, commands)
        except ConcurrencyError:
            raise InvalidArgument(
                "GAME_EXISTS",
                f"A game {game_id!r} exists here; import under another game_id.",
                "game_id",
            ) from None
        return game_id, loaded.state.version, verification


def verify_document(
    game_id: str, events: list[RecordedEvent], commands: list[CommandRecord]
) -> Verification:
    """Verify a game given as a document's events and commands, which may be
    anything: one whose events cannot even be read is a mismatch too."""
    try:
        return verify_records(game_id, events, commands)
    except (DomainError, codec.CodecError, LookupError, ValueError, TypeError) as error:
        return Verification(
            game_id,
            Verdict.MISMATCH,
            message=f"its events cannot be read: {quote(str(error), 120)}",
        )


def _game_command(session: Session[Any], record: CommandRecord) -> Any:
    """The game command a logged command carried (None for the lifecycle's,
    one kept as a digest, or one this version cannot read)."""
    try:
        return codec.decode(
            session.command_type(record.payload["type"]), record.payload["command"]
        )
    except (codec.CodecError, KeyError):
        return None


@dataclasses.dataclass(frozen=True)
class FeedItem:
    """One answer of the feed: an event (redacted as for a spectator) with
    its position, or the position alone (progress)."""

    position: int
    recorded: RecordedEvent | None = None
    event: Any = None
    session: Session[Any] | None = None


class Integration:
    """The integrations' use cases: the global log and the statistics."""

    def __init__(
        self,
        games: Games,
        game_list: GameList | None,
        integration_tokens: Iterable[str] = (),
    ) -> None:
        self.games = games
        self.store = games.store
        self.game_list = game_list
        self._token_hashes = tuple(hash_token(t) for t in integration_tokens if t)

    def require(self, caller: Caller) -> None:
        if not caller.token:
            raise Unauthenticated("TOKEN_REQUIRED", "An integration token is required.")
        if caller.admin:
            return
        digest = caller.token_hash
        if not any(hmac.compare_digest(digest, h) for h in self._token_hashes):
            raise PermissionDenied(
                "INTEGRATION_ONLY", "This feed needs an integration token."
            )

    async def follow(
        self,
        caller: Caller,
        after_position: int,
        game_types: set[str],
        event_types: set[str],
        follow: bool,
        batch: int = 1,
    ) -> AsyncIterator[list[FeedItem]]:
        """The global log after ``after_position``, in commit order, as a
        spectator sees it, filtered; live when ``follow``. Reads run in
        worker threads; no thread waits for the next event.

        Each answer is a list: up to ``batch`` events, as many as the read at
        hand holds (a batch is never held back to fill it), or one progress
        item (a position alone). Without ``follow`` it ends at the log's end
        as it was when called: a read held back short of it (on PostgreSQL
        by a transaction running anywhere in the cluster) is read again."""
        self.require(caller)
        _check_feed(after_position, game_types, batch)
        batch = max(batch, 1)
        store = self.store
        known = frozenset(registry.game_types())
        spectator = Viewer.spectator()
        games = _FeedGames(store, FEED_GAMES)
        position = after_position
        end = None if follow else await asyncio.to_thread(store.last_position)
        answered = position  # the position of the last answer
        passed = 0  # events passed over since it (positions need not be dense)
        pending: list[FeedItem] = []  # events of the batch being made
        # The next page, read while this one is sent (a full page: more may
        # follow).
        upcoming: asyncio.Future[MatchingEvents] | None = None
        try:
            while True:
                if upcoming is None:
                    read = await _read_page(store, position, event_types)
                else:
                    read, upcoming = await upcoming, None
                if read.scanned >= FEED_BATCH:
                    upcoming = asyncio.ensure_future(
                        _read_page(store, read.through, event_types)
                    )
                for recorded in read.events:
                    position = recorded.position
                    game_type, rules_version = await games.created(recorded)
                    wanted = (
                        game_type in known
                        and (not game_types or game_type in game_types)
                        and (not event_types or recorded.type in event_types)
                    )
                    if not wanted:
                        passed += 1
                        if passed >= FEED_HEARTBEAT:
                            if pending:
                                yield pending
                                pending = []
                            answered, passed = position, 0
                            yield [FeedItem(position)]
                        continue
                    # Under the rules version the game was created with (refused,
                    # as GetGame refuses it, when this service no longer runs it).
                    session = games.session(recorded.game_id, game_type, rules_version)
                    answered, passed = position, 0
                    event = session.decode_event(
                        recorded.type, recorded.data, recorded.schema_version
                    )
                    pending.append(
                        FeedItem(
                            position,
                            recorded,
                            session.redact(event, spectator),
                            session,
                        )
                    )
                    if len(pending) == batch:
                        yield pending
                        pending = []
                if pending:  # what this read holds goes before the next read
                    yield pending
                    pending = []
                position = read.through
                passed += read.scanned - len(read.events)  # passed over in the database
                if passed >= FEED_HEARTBEAT or (
                    read.scanned < FEED_BATCH and position > answered
                ):
                    answered, passed = position, 0
                    yield [FeedItem(position)]
                if read.scanned < FEED_BATCH and not await _more(store, position, end):
                    return
        finally:
            if upcoming is not None:
                upcoming.cancel()

    def statistics(
        self, caller: Caller, game_type: str
    ) -> tuple[list[dict[str, Any]], int]:
        """Per game type statistics, and the position they are as of."""
        self.require(caller)
        if self.game_list is None:
            raise InvalidArgument(
                "NO_PROJECTIONS", "Statistics need a SQL store.", "game_type"
            )
        # The log's end on the primary: the caller's writes, wherever made.
        self.game_list.wait_for(self.store.last_position(), timeout=2.0)
        position = self.game_list.position
        return self.game_list.models.statistics(game_type, position), position


def _check_feed(after_position: int, game_types: set[str], batch: int) -> None:
    """A feed's request, or InvalidArgument naming its field."""
    if after_position < 0:
        raise InvalidArgument(
            "POSITION_NEGATIVE", "after_position cannot be negative.", "after_position"
        )
    if not 0 <= batch <= FEED_BATCH:
        raise InvalidArgument(
            "BATCH_OUT_OF_RANGE",
            f"max_batch is 0 to {FEED_BATCH} (0 or 1: one event a message).",
            "max_batch",
        )
    unknown = game_types - set(registry.game_types())
    if unknown:
        raise InvalidArgument(
            "UNKNOWN_GAME_TYPE", f"No game types {sorted(unknown)}.", "game_types"
        )


async def _read_page(
    store: EventStore, position: int, event_types: set[str]
) -> MatchingEvents:
    """The log's next page after ``position`` (in a worker thread)."""
    if event_types:
        # Only the wanted types (and the creations, which name each game's
        # type) leave the database; the rest only move on.
        return await asyncio.to_thread(
            store.read_all_matching,
            position,
            FEED_BATCH,
            event_types | {_GAME_CREATED},
            (),
        )
    events = await asyncio.to_thread(store.read_all, position, FEED_BATCH)
    through = events[-1].position if events else position
    return MatchingEvents(events, through, len(events))


class _FeedGames:
    """What one feed knows of the games it passes: each game's type and
    rules version, for the ``size`` most recently seen, and one session per
    rules version."""

    def __init__(self, store: EventStore, size: int) -> None:
        self.store = store
        self.size = size
        self._created: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._sessions: dict[tuple[str, str], Session[Any]] = {}

    async def created(self, recorded: RecordedEvent) -> tuple[str, str]:
        """The game type and rules version of ``recorded``'s game, from its
        GameCreated event."""
        game_id = recorded.game_id
        known = self._created.get(game_id)
        if known is not None:
            self._created.move_to_end(game_id)
            return known
        if recorded.type == _GAME_CREATED:
            created = recorded
        else:  # created before this feed's start, or forgotten since
            first = await asyncio.to_thread(self.store.read_stream, game_id, 1, 1)
            created = first[0]
        known = (
            str(created.data.get("game_type", "")),
            str(created.data.get("rules_version", "")),
        )
        self._created[game_id] = known
        if len(self._created) > self.size:
            self._created.popitem(last=False)
        return known

    def session(self, game_id: str, game_type: str, rules_version: str) -> Session[Any]:
        """The rules of ``game_id``, of ``game_type`` at ``rules_version``
        (:func:`~service.games.rules_session`: FailedPrecondition when this
        service no longer runs that version, as GetGame refuses it)."""
        key = (game_type, rules_version)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = rules_session(game_id, *key)
        return session


async def _more(store: EventStore, position: int, end: int | None) -> bool:
    """Wait for more of the log after ``position``, read to its end now;
    False when the feed ends there: without following (``end``, the log's
    end when the feed began), once it is reached. Short of it the read was
    held back (on PostgreSQL by a transaction running elsewhere in the
    cluster): the store's wait knows a held-back commit and wakes soon."""
    if end is not None and position >= end:
        return False
    await store.wait_for_append_async(position, 1.0)
    return True
