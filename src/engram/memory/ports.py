"""What the governed engine needs from storage: the store port, split by role, and its rows.

Three implementations: embedded SQLite (:mod:`engram.store.sqlite`), PostgreSQL
(:mod:`engram.store.postgresql`; :func:`engram.store.location.open_memory_store` picks
one of these two) and the in-memory store tests use
(:class:`engram.testing.memory_store.InMemoryStore`); one contract suite
(``tests/store/contract/``) holds all three to the same behaviour. Every mutation happens
inside one :meth:`MemoryStore.write` transaction, so a state change, its journal event,
its idempotency record and its audit entry commit together or not at all.

The port is a set of small protocols, one per role, so that each part of the domain
names the little it needs:

- the agent's path: :class:`AgentReads`, :class:`AgentWrites` (the six tools);
- the projections: :class:`ProjectionReads`, :class:`ProjectionWrites` (lexical and
  semantic, derived from the records);
- the operator: :class:`OperatorReads`, :class:`OperatorWrites` (maintenance: confirm,
  deny, revoke, sweep) and :class:`OperatorViews` (the console's read-only pages);
- backup and restore: :class:`BackupReads`, :class:`RestoreWrites`; key rotation:
  :class:`KeyWrites`; the physical cleanup after a forget: :class:`PurgeWrites`.

:class:`MemoryReader` (a snapshot) and :class:`MemoryTransaction` (a write) are their
unions, what :class:`MemoryStore` hands out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

__all__ = [
    "DAY_MS",
    "ActivityRow",
    "AgentReads",
    "AgentWrites",
    "AuditEntry",
    "BackupReads",
    "CandidateRow",
    "ConfirmationRow",
    "Event",
    "HeldCandidate",
    "IdempotencyRow",
    "JournalEvent",
    "KeyWrites",
    "MemoryReader",
    "MemoryStore",
    "MemoryTransaction",
    "OperatorReads",
    "OperatorViews",
    "OperatorWrites",
    "ProjectionReads",
    "ProjectionWrites",
    "PurgeWrites",
    "RecordRow",
    "RecordSummary",
    "RestoreWrites",
]


@dataclass(frozen=True, slots=True)
class CandidateRow:
    candidate_id: str
    scope_id: str
    principal: str
    state: str
    payload_digest: str
    record_digest: str
    sealed: bytes | None
    captured_ms: int
    retention: dict[str, Any]
    capture_cursor: int
    record_id: str | None = None
    decision: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RecordRow:
    record_id: str
    scope_id: str
    candidate_id: str
    state: str
    record_digest: str
    payload_digest: str
    sealed: bytes | None
    valid_t: int
    valid_t_end: int | None
    expires_ms: int | None
    admitted_ms: int
    admit_cursor: int


@dataclass(frozen=True, slots=True)
class Event:
    cursor: int
    event_digest: str


@dataclass(frozen=True, slots=True)
class IdempotencyRow:
    tool: str
    intent_digest: str
    outcome: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ConfirmationRow:
    request_id: str
    scope_id: str
    principal: str
    tool: str
    target: str
    operation_digest: str
    created_ms: int
    approved_ms: int | None = None
    consumed_ms: int | None = None
    display: dict[str, Any] = field(default_factory=dict)
    #: The agent id of the binding the call was bound to (the principal is above); ``None``
    #: for a request an engram before this column stored.
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class AuditEntry:
    audit_id: str
    scope_id: str
    at_ms: int
    tool: str
    outcome: str
    identity: dict[str, str]
    digests: dict[str, str]


@dataclass(frozen=True, slots=True)
class RecordSummary:
    """A record's row without its ciphertext."""

    record_id: str
    state: str
    admitted_ms: int
    expires_ms: int | None
    valid_t: int
    valid_t_end: int | None
    record_digest: str


@dataclass(frozen=True, slots=True)
class JournalEvent:
    """One event of a scope's journal; ``body`` is what was chained, the other fields
    are read from it (``at``: epoch milliseconds)."""

    cursor: int
    event_digest: str
    operation: str
    target: str | None
    from_state: str | None
    to_state: str | None
    at: int | None
    body: dict[str, Any]


#: A UTC day in milliseconds: an event's day in ``activity`` is its ``at // DAY_MS``.
DAY_MS: Final = 86_400_000


@dataclass(frozen=True, slots=True)
class ActivityRow:
    """How many events of one operation and resulting state a UTC day of a scope saw
    (``day``: epoch milliseconds // 86,400,000; ``to_state`` ``""`` when none)."""

    day: int
    operation: str
    to_state: str
    events: int


@dataclass(frozen=True, slots=True)
class HeldCandidate:
    """A candidate held as ``pending_adjudication`` and the tombstoned record whose
    payload it repeats (the reason it is held; ``None`` once that record is gone)."""

    candidate_id: str
    captured_ms: int
    principal: str
    record_digest: str
    tombstone_id: str | None


# --- The agent's path ------------------------------------------------------------------


class AgentReads(Protocol):
    """What the six tools read: candidates, records, data keys, the journal's head and
    the scope's revocations."""

    def candidate(self, scope_id: str, candidate_id: str) -> CandidateRow | None: ...

    def record(self, scope_id: str, record_id: str) -> RecordRow | None: ...

    def records(self, scope_id: str, record_ids: Sequence[str]) -> list[RecordRow]:
        """The scope's records of these ids that exist, in the order asked."""
        ...

    def data_key(self, owner: str) -> tuple[str, bytes] | None:
        """``(kek id, wrapped key)`` of a candidate's or record's data key."""
        ...

    def prefetch_data_keys(self, owners: Sequence[str]) -> None:
        """Read these owners' keys at once; :meth:`data_key` answers from them for the
        rest of this snapshot (a page of search results costs one read, not one each)."""
        ...

    def head(self, scope_id: str) -> Event:
        """The scope's last journal event (cursor 0 and the genesis digest when none)."""
        ...

    def records_version(self, scope_id: str) -> int:
        """The cursor of the scope's last event that changed its records (0: none)."""
        ...

    def is_revoked(self, scope_id: str, principal: str) -> bool:
        """Whether the principal, or every principal (``*``), is revoked in the scope."""
        ...


class AgentWrites(Protocol):
    """What the six tools write, inside one transaction."""

    def idempotency(
        self, scope_id: str, principal: str, key: str, hashed: bool
    ) -> IdempotencyRow | None:
        """The row of a key: ``hashed``, the key's :func:`stored_key`; else a key an older
        engram stored in clear."""
        ...

    def remember(self, scope_id: str, principal: str, key: str, row: IdempotencyRow) -> None:
        """Store a row under a hashed key (a key already stored: the write fails)."""
        ...

    def add_candidate(self, row: CandidateRow) -> None: ...

    def update_candidate(self, candidate_id: str, **changes: Any) -> None: ...

    def add_record(self, row: RecordRow) -> None: ...

    def update_record(self, record_id: str, **changes: Any) -> None: ...

    def record_with_payload(
        self,
        scope_id: str,
        payload_digest: str,
        states: Sequence[str],
        unexpired_at: int | None = None,
    ) -> str | None:
        """The first admitted record of the scope with this payload in one of ``states``
        (alive at ``unexpired_at`` when given)."""
        ...

    def put_data_key(self, owner: str, scope_id: str, kek_id: str, wrapped: bytes) -> None: ...

    def delete_data_key(self, owner: str) -> None: ...

    def append_event(self, scope_id: str, body: dict[str, Any], touches_records: bool) -> Event:
        """Chain an event to the scope's journal; ``touches_records`` moves its records
        version to the new cursor."""
        ...

    def audit(self, entry: AuditEntry, if_absent: bool = False) -> None:
        """Append an audit entry (one of the same id: the write fails, unless
        ``if_absent``, which keeps the first)."""
        ...

    def add_confirmation(self, row: ConfirmationRow) -> None: ...

    def live_approval(
        self,
        scope_id: str,
        principal: str,
        tool: str,
        target: str,
        operation_digest: str,
        approved_since_ms: int,
    ) -> ConfirmationRow | None:
        """The first approved, unspent confirmation of exactly this operation."""
        ...

    def consume_confirmation(self, request_id: str, now_ms: int) -> None:
        """Spend a confirmation (one already spent keeps its first instant)."""
        ...

    def open_request_exists(
        self, scope_id: str, principal: str, operation_digest: str, created_since_ms: int
    ) -> bool:
        """Whether this operation was asked since then and is neither spent nor approved
        (a denied one, spent without an approval, counts as open)."""
        ...

    def open_requests(self, scope_id: str, principal: str, created_since_ms: int) -> int:
        """How many of the principal's requests created since then wait for the operator
        (neither approved nor spent)."""
        ...

    def add_purge(self, scope_id: str, owner: str, kind: str, now_ms: int) -> None:
        """Owe a purge (one already owed for the owner is kept as it is)."""
        ...


# --- The projections -------------------------------------------------------------------


class ProjectionReads(Protocol):
    """The lexical and semantic projections of a scope's records, as a search reads them."""

    def search(
        self, scope_id: str, groups: list[tuple[str, ...]], limit: int, stage: int = 0
    ) -> list[tuple[RecordRow, float]] | None:
        """The scope's records ranked by BM25 for these query terms (groups of stem
        variants, :func:`engram.search.analysis.query_groups`), best first.

        A large index matches in stages (common terms last, see
        :func:`engram.search.lexical.search_stages`); ``None`` when there is no
        such stage.
        """
        ...

    def indexed(self, scope_id: str, record_id: str) -> bool:
        """Whether the record has an entry in the scope's lexical projection."""
        ...

    def indexed_count(self, scope_id: str) -> int:
        """How many records the scope's lexical projection holds."""
        ...

    def records_by_rowid(self, scope_id: str, rowids: Sequence[int]) -> dict[int, RecordRow]:
        """The scope's records by their row ids (those that exist in the scope)."""
        ...

    def vectors(self, scope_id: str, model: str) -> list[tuple[int, bytes]]:
        """The scope's semantic projection for ``model``: ``(record rowid, float32 bytes)``."""
        ...

    def vector_version(self, scope_id: str, model: str) -> tuple[int, int, int]:
        """What identifies the scope's projection: how many vectors, the largest of
        their record rowids and how many changes it saw (any change shows)."""
        ...

    def unembedded(self, scope_id: str, model: str, limit: int) -> list[tuple[int, RecordRow]]:
        """Records in the lexical projection without a vector for ``model``."""
        ...

    def lexical_current(self, scope_id: str) -> bool:
        """Whether the scope's lexical projection was built under this analyzer's tag
        (:func:`engram.search.analysis.analyzer_tag`) alone."""
        ...


class ProjectionWrites(Protocol):
    """Keeping the projections in step with the records, inside a transaction."""

    def index(self, scope_id: str, record_id: str, text: str) -> None:
        """Add a record's analyzed text to the scope's lexical projection."""
        ...

    def unindex(self, scope_id: str, record_id: str, text: str) -> None:
        """Take a record out of every projection of the scope (its vectors too)."""
        ...

    def put_vector(self, scope_id: str, rowid: int, model: str, vector: bytes) -> None:
        """Store a record's vector, unless it left the lexical projection meanwhile."""
        ...

    def drop_other_vectors(self, scope_id: str, model: str) -> None:
        """Remove the scope's vectors of every other projection key (another model, or
        vectors made another way): they can never rank again."""
        ...

    def legacy_indexed(self, scope_id: str) -> list[RecordRow]:
        """The records an older analyzer's projection of the scope holds."""
        ...

    def drop_legacy_index(self, scope_id: str) -> None:
        """Remove older analyzers' projections of the scope (after re-indexing their
        records) and recount the current one."""
        ...


# --- The operator ----------------------------------------------------------------------


class OperatorReads(Protocol):
    """What the operator's verbs read (engram.memory.maintenance): the journal whole,
    requests waiting, purges owed, candidates by state, records past their expiry."""

    def journal(self, scope_id: str) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
        """``(cursor, digest, previous digest, body)`` of each event, in cursor order."""
        ...

    def candidates_in_state(self, scope_id: str, state: str) -> list[str]:
        """The scope's candidates in ``state``, oldest capture first."""
        ...

    def expired_records(self, scope_id: str, now_ms: int) -> list[RecordRow]:
        """The scope's live records whose expiry is at or before ``now_ms``."""
        ...

    def confirmations(self, scope_id: str, created_since_ms: int = 0) -> list[ConfirmationRow]:
        """The scope's confirmation requests created since then, oldest first."""
        ...

    def confirmation(self, scope_id: str, request_id: str) -> ConfirmationRow | None: ...

    def purge_row(self, owner: str) -> dict[str, Any] | None:
        """``{scope_id, kind, created_ms, done_ms}`` of the purge owed for an owner."""
        ...

    def pending_purges(self, scope_id: str) -> list[tuple[str, str]]:
        """``(owner, kind)`` of the scope's purges not done, oldest first."""
        ...


class OperatorWrites(Protocol):
    """What the operator's verbs write beyond the agent's path."""

    def approve_confirmation(self, request_id: str, now_ms: int) -> None: ...

    def revoke(self, scope_id: str, principal: str, now_ms: int) -> None: ...


class OperatorViews(Protocol):
    """The host's read-only views of a scope (engram.memory.overview): one index range
    each, so a page costs the same at 100,000 records as at 100."""

    def record_page(
        self, scope_id: str, state: str | None, after: tuple[int, int] | None, limit: int
    ) -> list[tuple[int, RecordSummary]]:
        """``(rowid, record)`` of the scope's records (in ``state`` when given), newest
        admitted first: ``(admitted_ms, rowid)`` descending, below ``after``."""
        ...

    def record_counts(
        self, scope_id: str, admitted_after: Sequence[int]
    ) -> tuple[dict[str, int], list[int]]:
        """How many of the scope's records are in each state (states with none may be left
        out), and how many were admitted after each of these instants."""
        ...

    def journal_page(self, scope_id: str, before: int | None, limit: int) -> list[JournalEvent]:
        """The scope's events newest first, with a cursor below ``before``."""
        ...

    def events_of(self, scope_id: str, targets: Sequence[str]) -> list[JournalEvent]:
        """The scope's events whose target is one of ``targets``, in cursor order."""
        ...

    def audit_page(
        self,
        scope_id: str,
        principal: str | None,
        tool: str | None,
        outcome: str | None,
        before: tuple[int, int] | None,
        limit: int,
    ) -> list[tuple[int, AuditEntry]]:
        """``(insertion order, entry)`` of the scope's audit entries that match every
        filter given, newest first: ``(at_ms, insertion order)`` descending, below
        ``before``."""
        ...

    def activity_counts(self, scope_id: str, first_day: int, last_day: int) -> list[ActivityRow]:
        """The scope's events per day, operation and resulting state, in these days."""
        ...

    def held_candidates(self, scope_id: str, limit: int) -> list[HeldCandidate]:
        """Candidates held as ``pending_adjudication``, oldest capture first."""
        ...


# --- Backup, restore, keys, purge ------------------------------------------------------


class BackupReads(Protocol):
    """What a backup reads of the whole store."""

    def export_rows(self) -> dict[str, Any]:
        """Every row a backup carries (pending, rejected and withdrawn candidates stay out)."""
        ...

    def is_empty(self) -> bool:
        """Whether the store holds no record, event or candidate (a restore's target)."""
        ...

    def kek_ids_in_use(self) -> set[str]:
        """The KEKs some data key is wrapped under."""
        ...


class RestoreWrites(Protocol):
    """What a restore writes into an empty store."""

    def import_rows(self, rows: dict[str, Any]) -> None:
        """The rows of :meth:`BackupReads.export_rows`, as they were (new row ids)."""
        ...


class KeyWrites(Protocol):
    """Rotating the KEK and hashing idempotency keys an older engram kept in clear."""

    def clear_idempotency_keys(self) -> list[tuple[str, str, str]]:
        """``(scope, principal, key)`` of rows an older engram stored with the key in clear."""
        ...

    def hash_idempotency_key(self, scope_id: str, principal: str, key: str, hashed: str) -> None:
        """Replace a clear key by its hash."""
        ...

    def data_keys_not_under(self, kek_id: str, limit: int) -> list[tuple[str, str, bytes]]:
        """``(owner, kek id, wrapped)`` of data keys under another KEK, by owner."""
        ...

    def set_data_key(self, owner: str, kek_id: str, wrapped: bytes) -> None: ...


class PurgeWrites(Protocol):
    """The physical cleanup after a withdraw or forget (:mod:`engram.memory.purge`)."""

    def purge_row(self, owner: str) -> dict[str, Any] | None: ...

    def purge_index(self, scope_id: str) -> None:
        """Merge the scope's lexical projection so deleted entries leave no trace."""
        ...

    def indexed(self, scope_id: str, record_id: str) -> bool: ...

    def has_vector(self, record_id: str) -> bool:
        """Whether any vector of the record is left."""
        ...

    def data_key(self, owner: str) -> tuple[str, bytes] | None: ...

    def mark_purged(self, owner: str, now_ms: int) -> None: ...


# --- The store -------------------------------------------------------------------------


class MemoryReader(
    AgentReads, ProjectionReads, OperatorReads, OperatorViews, BackupReads, Protocol
):
    """One consistent snapshot of what is committed: every role's reads."""


class MemoryTransaction(
    MemoryReader,
    AgentWrites,
    ProjectionWrites,
    OperatorWrites,
    RestoreWrites,
    KeyWrites,
    PurgeWrites,
    Protocol,
):
    """One atomic unit of writes (``BEGIN IMMEDIATE`` on SQLite, the store's advisory
    lock on PostgreSQL, the store's lock in memory): every role's reads and writes, and
    it sees its own writes."""


class MemoryStore(Protocol):
    """A governed-memory store."""

    def read(self) -> AbstractContextManager[MemoryReader]: ...

    def write(self, durable: bool = True) -> AbstractContextManager[MemoryTransaction]:
        """A transaction: everything it wrote commits when the block ends, nothing when
        it raises. A write the store refuses (a key already there) is
        ``StoreUnavailable``; a commit that may or may not have happened is
        ``MutationOutcomeUnknown``."""
        ...

    def checkpoint(self) -> bool:
        """Remove what deleted rows leave behind (SQLite's write-ahead log, PostgreSQL's
        dead row versions); ``True`` when fully done."""
        ...

    def finish_purge(self, owner: str, now_ms: int) -> dict[str, Any] | None:
        """Physical cleanup for one withdrawn or forgotten item (see ``purge``)."""
        ...

    def close(self) -> None:
        """Release the store's connections; nothing may use it afterwards."""
        ...
