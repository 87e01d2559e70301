"""What the governed engine needs from storage: the store port and its row types.

Two implementations are intended (embedded SQLite in :mod:`engram.store.sqlite`,
PostgreSQL later); the engine sees only this protocol. Every mutation happens inside
one :meth:`MemoryStore.write` transaction, so a state change, its journal event, its
idempotency record and its audit entry commit together or not at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "AuditEntry",
    "CandidateRow",
    "ConfirmationRow",
    "Event",
    "IdempotencyRow",
    "MemoryReader",
    "MemoryStore",
    "MemoryTransaction",
    "RecordRow",
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


@dataclass(frozen=True, slots=True)
class AuditEntry:
    audit_id: str
    scope_id: str
    at_ms: int
    tool: str
    outcome: str
    identity: dict[str, str]
    digests: dict[str, str]


class MemoryReader(Protocol):
    """Reads that need no write lock."""

    def candidate(self, scope_id: str, candidate_id: str) -> CandidateRow | None: ...

    def record(self, scope_id: str, record_id: str) -> RecordRow | None: ...

    def records(self, scope_id: str, record_ids: Sequence[str]) -> list[RecordRow]: ...

    def data_key(self, owner: str) -> tuple[str, bytes] | None: ...

    def head(self, scope_id: str) -> Event: ...

    def records_version(self, scope_id: str) -> int: ...

    def search(self, scope_id: str, words: list[str], limit: int) -> list[tuple[RecordRow, float]]:
        """The scope's records ranked by BM25 for these query terms, best first."""
        ...

    def journal(self, scope_id: str) -> Iterator[tuple[int, str, str, dict[str, Any]]]: ...


class MemoryTransaction(MemoryReader, Protocol):
    """One atomic unit of writes (``BEGIN IMMEDIATE`` on SQLite)."""

    def idempotency(self, scope_id: str, principal: str, key: str) -> IdempotencyRow | None: ...

    def remember(self, scope_id: str, principal: str, key: str, row: IdempotencyRow) -> None: ...

    def add_candidate(self, row: CandidateRow) -> None: ...

    def update_candidate(self, candidate_id: str, **changes: Any) -> None: ...

    def add_record(self, row: RecordRow) -> None: ...

    def update_record(self, record_id: str, **changes: Any) -> None: ...

    def record_with_payload(
        self, scope_id: str, payload_digest: str, states: Sequence[str]
    ) -> str | None: ...

    def put_data_key(self, owner: str, scope_id: str, kek_id: str, wrapped: bytes) -> None: ...

    def delete_data_key(self, owner: str) -> bool: ...

    def index(self, scope_id: str, record_id: str, text: str) -> None: ...

    def unindex(self, scope_id: str, record_id: str, text: str) -> None: ...

    def append_event(self, scope_id: str, body: dict[str, Any], touches_records: bool) -> Event: ...

    def audit(self, entry: AuditEntry) -> None: ...


class MemoryStore(Protocol):
    """A governed-memory store."""

    def read(self) -> AbstractContextManager[MemoryReader]: ...

    def write(self, durable: bool = True) -> AbstractContextManager[MemoryTransaction]: ...
