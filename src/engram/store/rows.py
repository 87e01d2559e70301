"""The governed store's rows in SQL both backends speak: the agent's path.

Candidates, records, data keys, the journal, idempotency and audit are the same tables
with the same columns on SQLite and PostgreSQL, so their statements are written once here,
with ``?`` placeholders (the PostgreSQL connection translates them). So are the operator's
tables (confirmations, revocations, purges: :mod:`engram.store.governance_rows`), backups
and the key-rotation walk (:mod:`engram.store.backup_rows`) and the operator's views
(:mod:`engram.store.overview_rows`). Each backend mixes these classes into its reader and
transaction and adds its own lexical and semantic projection (FTS5 tables on SQLite,
postings tables on PostgreSQL) and its planner hints.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Protocol

from engram.memory.journal import GENESIS, event_digest
from engram.memory.ports import (
    DAY_MS,
    AuditEntry,
    CandidateRow,
    Event,
    IdempotencyRow,
    RecordRow,
)

__all__ = [
    "RECORD_COLUMNS",
    "RECORD_FIELDS",
    "Connection",
    "Cursor",
    "RowReads",
    "RowWrites",
    "as_json",
    "blob",
    "marks",
    "prefixed",
    "to_record",
]


class Cursor(Protocol):
    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What the rows need of a connection: ``execute`` with ``?`` placeholders."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...


RECORD_FIELDS = (
    "record_id",
    "scope_id",
    "candidate_id",
    "state",
    "record_digest",
    "payload_digest",
    "sealed",
    "valid_t",
    "valid_t_end",
    "expires_ms",
    "admitted_ms",
    "admit_cursor",
)
RECORD_COLUMNS = ", ".join(RECORD_FIELDS)


def prefixed(alias: str) -> str:
    """The record columns of a table alias (``r.record_id, r.scope_id, …``)."""
    return ", ".join(f"{alias}.{column}" for column in RECORD_FIELDS)


def marks(count: int) -> str:
    """``?, ?, …``: ``count`` placeholders."""
    return ", ".join("?" * count)


class RowReads:
    """Reads of the shared tables, over one connection inside a transaction or snapshot."""

    db: Connection
    #: How a lookup by a unique id names the scope column so that the planner does
    #: not pick the scope index instead (SQLite: ``+scope_id``).
    SCOPE_FILTER: ClassVar[str] = "scope_id"
    #: How a lookup of records by payload digest names its index, so that the planner
    #: does not walk every record of a state in admission order instead (SQLite:
    #: `` INDEXED BY records_by_payload_state``).
    PAYLOAD_INDEX: ClassVar[str] = ""
    #: How the expiry sweep names its index, so that the planner does not read every
    #: record of the scope to compare its expiry (SQLite: `` INDEXED BY records_by_expiry``).
    EXPIRY_INDEX: ClassVar[str] = ""

    def candidate(self, scope_id: str, candidate_id: str) -> CandidateRow | None:
        row = self.db.execute(
            "SELECT candidate_id, scope_id, principal, state, payload_digest, record_digest,"
            " sealed, captured_ms, retention, capture_cursor, record_id, decision"
            " FROM candidates WHERE candidate_id = ? AND scope_id = ?",
            (candidate_id, scope_id),
        ).fetchone()
        if row is None:
            return None
        return CandidateRow(
            candidate_id=row[0],
            scope_id=row[1],
            principal=row[2],
            state=row[3],
            payload_digest=row[4],
            record_digest=row[5],
            sealed=blob(row[6]),
            captured_ms=row[7],
            retention=json.loads(row[8]),
            capture_cursor=row[9],
            record_id=row[10],
            decision=json.loads(row[11]) if row[11] else None,
        )

    def record(self, scope_id: str, record_id: str) -> RecordRow | None:
        row = self.db.execute(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE record_id = ? AND {self.SCOPE_FILTER} = ?",
            (record_id, scope_id),
        ).fetchone()
        return to_record(row) if row else None

    def records(self, scope_id: str, record_ids: Sequence[str]) -> list[RecordRow]:
        found = {}
        for start in range(0, len(record_ids), 500):
            chunk = list(record_ids[start : start + 500])
            for row in self.db.execute(
                f"SELECT {RECORD_COLUMNS} FROM records WHERE {self.SCOPE_FILTER} = ?"
                f" AND record_id IN ({marks(len(chunk))})",
                (scope_id, *chunk),
            ):
                found[row[0]] = to_record(row)
        return [found[record_id] for record_id in record_ids if record_id in found]

    def records_by_rowid(self, scope_id: str, rowids: Sequence[int]) -> dict[int, RecordRow]:
        """The scope's records by their row ids (those that exist in the scope)."""
        found: dict[int, RecordRow] = {}
        for start in range(0, len(rowids), 500):
            chunk = list(rowids[start : start + 500])
            # Look the rows up by rowid: with an index on scope_id the SQLite planner
            # would scan every record of the scope (40 ms at 100,000).
            for row in self.db.execute(
                f"SELECT rowid, {RECORD_COLUMNS} FROM records"
                f" WHERE rowid IN ({marks(len(chunk))}) AND {self.SCOPE_FILTER} = ?",
                [*chunk, scope_id],
            ):
                found[row[0]] = to_record(row[1:])
        return found

    #: Keys read ahead by :meth:`prefetch_data_keys` (a snapshot's; a transaction never
    #: reads ahead, so it always sees its own writes).
    _keys: dict[str, tuple[str, bytes] | None] | None = None

    def data_key(self, owner: str) -> tuple[str, bytes] | None:
        if self._keys is not None and owner in self._keys:
            return self._keys[owner]
        row = self.db.execute(
            "SELECT kek_id, wrapped FROM data_keys WHERE owner = ?", (owner,)
        ).fetchone()
        return (row[0], bytes(row[1])) if row else None

    def prefetch_data_keys(self, owners: Sequence[str]) -> None:
        if not owners:
            return
        found: dict[str, tuple[str, bytes] | None] = dict.fromkeys(owners)
        for start in range(0, len(owners), 500):
            chunk = list(owners[start : start + 500])
            placeholders = marks(len(chunk))
            for owner, kek_id, wrapped in self.db.execute(
                f"SELECT owner, kek_id, wrapped FROM data_keys WHERE owner IN ({placeholders})",
                chunk,
            ):
                found[owner] = (kek_id, bytes(wrapped))
        self._keys = found

    def head(self, scope_id: str) -> Event:
        row = self.db.execute(
            "SELECT head_cursor, head_digest FROM scope_state WHERE scope_id = ?", (scope_id,)
        ).fetchone()
        return Event(row[0], row[1]) if row else Event(0, GENESIS)

    def records_version(self, scope_id: str) -> int:
        row = self.db.execute(
            "SELECT records_version FROM scope_state WHERE scope_id = ?", (scope_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def candidates_in_state(self, scope_id: str, state: str) -> list[str]:
        return [
            row[0]
            for row in self.db.execute(
                "SELECT candidate_id FROM candidates WHERE scope_id = ? AND state = ?"
                " ORDER BY captured_ms, capture_cursor, candidate_id",
                (scope_id, state),
            )
        ]

    def expired_records(self, scope_id: str, now_ms: int) -> list[RecordRow]:
        return [
            to_record(row)
            for row in self.db.execute(
                f"SELECT {RECORD_COLUMNS} FROM records{self.EXPIRY_INDEX} WHERE scope_id = ?"
                " AND state IN ('accepted_current', 'accepted_disputed', 'historical')"
                " AND expires_ms IS NOT NULL AND expires_ms <= ? ORDER BY rowid",
                (scope_id, now_ms),
            )
        ]

    def journal(self, scope_id: str) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
        for cursor, digest, previous, body in self.db.execute(
            "SELECT cursor, event_digest, previous, body FROM journal"
            " WHERE scope_id = ? ORDER BY cursor",
            (scope_id,),
        ):
            yield cursor, digest, previous, json.loads(body)

    def vectors(self, scope_id: str, model: str) -> list[tuple[int, bytes]]:
        """The scope's vectors for ``model``: ``(record rowid, float32 bytes)``."""
        return [
            (rowid, bytes(vector))
            for rowid, vector in self.db.execute(
                "SELECT record_rowid, vector FROM vectors WHERE scope_id = ? AND model = ?"
                " ORDER BY record_rowid",
                (scope_id, model),
            )
        ]

    def vector_version(self, scope_id: str, model: str) -> tuple[int, int, int]:
        """``(vectors, largest record rowid, changes)``: a new version whenever a vector
        of the scope and model is added, replaced or removed (kept by triggers)."""
        row = self.db.execute(
            "SELECT count, largest, changes FROM vector_versions WHERE scope_id = ? AND model = ?",
            (scope_id, model),
        ).fetchone()
        return (0, 0, 0) if row is None else (int(row[0]), int(row[1]), int(row[2]))

    def has_vector(self, record_id: str) -> bool:
        """Whether any vector of the record is left."""
        return (
            self.db.execute(
                "SELECT 1 FROM vectors WHERE record_rowid = (SELECT rowid FROM records"
                " WHERE record_id = ?)",
                (record_id,),
            ).fetchone()
            is not None
        )


class RowWrites(RowReads):
    """Writes of the shared tables, inside one transaction."""

    def prefetch_data_keys(self, owners: Sequence[str]) -> None:
        """Nothing: a transaction reads keys as it goes, so it sees its own writes."""

    def idempotency(
        self, scope_id: str, principal: str, key: str, hashed: bool
    ) -> IdempotencyRow | None:
        row = self.db.execute(
            "SELECT tool, intent_digest, outcome FROM idempotency"
            " WHERE scope_id = ? AND principal = ? AND key = ? AND hashed = ?",
            (scope_id, principal, key, int(hashed)),
        ).fetchone()
        return IdempotencyRow(row[0], row[1], json.loads(row[2])) if row else None

    def remember(self, scope_id: str, principal: str, key: str, row: IdempotencyRow) -> None:
        self.db.execute(
            "INSERT INTO idempotency (scope_id, principal, key, tool, intent_digest, outcome,"
            " hashed) VALUES (?, ?, ?, ?, ?, ?, 1)",
            (scope_id, principal, key, row.tool, row.intent_digest, json.dumps(row.outcome)),
        )

    def add_candidate(self, row: CandidateRow) -> None:
        self.db.execute(
            "INSERT INTO candidates (candidate_id, scope_id, principal, state, payload_digest,"
            " record_digest, sealed, captured_ms, retention, capture_cursor, record_id,"
            f" decision) VALUES ({marks(12)})",
            (
                row.candidate_id,
                row.scope_id,
                row.principal,
                row.state,
                row.payload_digest,
                row.record_digest,
                row.sealed,
                row.captured_ms,
                json.dumps(row.retention),
                row.capture_cursor,
                row.record_id,
                json.dumps(row.decision) if row.decision is not None else None,
            ),
        )

    def update_candidate(self, candidate_id: str, **changes: Any) -> None:
        self._update("candidates", "candidate_id", candidate_id, changes)

    def add_record(self, row: RecordRow) -> None:
        self.db.execute(
            f"INSERT INTO records ({RECORD_COLUMNS}) VALUES ({marks(len(RECORD_FIELDS))})",
            tuple(getattr(row, field) for field in RECORD_FIELDS),
        )
        self._count_record(row.scope_id, row.state, row.admitted_ms, +1)

    def update_record(self, record_id: str, **changes: Any) -> None:
        before = None
        if "state" in changes:
            before = self.db.execute(
                "SELECT scope_id, state, admitted_ms FROM records WHERE record_id = ?",
                (record_id,),
            ).fetchone()
        self._update("records", "record_id", record_id, changes)
        if before is not None and before[1] != changes["state"]:
            self._count_record(before[0], before[1], before[2], -1)
            self._count_record(before[0], changes["state"], before[2], +1)

    def _count_record(self, scope_id: str, state: str, admitted_ms: int, change: int) -> None:
        """Keep ``record_days``: the scope's records per state and day of admission (what
        the host's views count, instead of every record)."""
        self.db.execute(
            "INSERT INTO record_days (scope_id, state, day, records) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (scope_id, state, day)"
            " DO UPDATE SET records = record_days.records + excluded.records",
            (scope_id, state, admitted_ms // DAY_MS, change),
        )

    def _update(self, table: str, key: str, value: str, changes: dict[str, Any]) -> None:
        encoded = {
            column: json.dumps(item) if isinstance(item, dict) else item
            for column, item in changes.items()
        }
        assignments = ", ".join(f"{column} = ?" for column in encoded)
        self.db.execute(
            f"UPDATE {table} SET {assignments} WHERE {key} = ?", (*encoded.values(), value)
        )

    def record_with_payload(
        self,
        scope_id: str,
        payload_digest: str,
        states: Sequence[str],
        unexpired_at: int | None = None,
    ) -> str | None:
        alive = "" if unexpired_at is None else " AND (expires_ms IS NULL OR expires_ms > ?)"
        row = self.db.execute(
            f"SELECT record_id FROM records{self.PAYLOAD_INDEX}"
            " WHERE scope_id = ? AND payload_digest = ?"
            f" AND state IN ({marks(len(states))}){alive} ORDER BY admitted_ms, rowid LIMIT 1",
            (scope_id, payload_digest, *states, *(() if unexpired_at is None else (unexpired_at,))),
        ).fetchone()
        return str(row[0]) if row else None

    def put_data_key(self, owner: str, scope_id: str, kek_id: str, wrapped: bytes) -> None:
        self.db.execute(
            "INSERT INTO data_keys (owner, scope_id, kek_id, wrapped) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (owner) DO UPDATE SET scope_id = excluded.scope_id,"
            " kek_id = excluded.kek_id, wrapped = excluded.wrapped",
            (owner, scope_id, kek_id, wrapped),
        )

    def delete_data_key(self, owner: str) -> None:
        # The purge afterwards removes what the backend keeps of the deleted row.
        self.db.execute("DELETE FROM data_keys WHERE owner = ?", (owner,))

    def append_event(self, scope_id: str, body: dict[str, Any], touches_records: bool) -> Event:
        head = self.head(scope_id)
        cursor = head.cursor + 1
        digest = event_digest(scope_id, cursor, head.event_digest, body)
        self._insert_event(scope_id, cursor, digest, head.event_digest, body)
        # An event that leaves the records alone keeps the scope's records version.
        self.db.execute(
            "INSERT INTO scope_state (scope_id, head_cursor, head_digest, records_version)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (scope_id) DO UPDATE"
            " SET head_cursor = excluded.head_cursor, head_digest = excluded.head_digest"
            + (", records_version = excluded.records_version" if touches_records else ""),
            (scope_id, cursor, digest, cursor if touches_records else 0),
        )
        return Event(cursor, digest)

    def _insert_event(
        self, scope_id: str, cursor: int, digest: str, previous: str, body: dict[str, Any]
    ) -> None:
        """One journal row, with what the host's views look events up by: its target (a
        column of its own, indexed) and its count in the day's ``activity``."""
        target = body.get("target")
        self.db.execute(
            "INSERT INTO journal (scope_id, cursor, event_digest, previous, body, target)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (scope_id, cursor, digest, previous, as_json(body), _optional(target)),
        )
        at = body.get("at")
        if isinstance(at, int) and not isinstance(at, bool):
            self.db.execute(
                "INSERT INTO activity (scope_id, day, operation, to_state, events)"
                " VALUES (?, ?, ?, ?, 1) ON CONFLICT (scope_id, day, operation, to_state)"
                " DO UPDATE SET events = activity.events + 1",
                (
                    scope_id,
                    at // DAY_MS,
                    str(body.get("operation", "")),
                    str(body.get("to_state") or ""),
                ),
            )

    def audit(self, entry: AuditEntry, if_absent: bool = False) -> None:
        self.db.execute(
            "INSERT INTO audit (audit_id, scope_id, at_ms, tool, outcome, identity, digests)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)" + (" ON CONFLICT DO NOTHING" if if_absent else ""),
            (
                entry.audit_id,
                entry.scope_id,
                entry.at_ms,
                entry.tool,
                entry.outcome,
                json.dumps(entry.identity, sort_keys=True),
                json.dumps(entry.digests, sort_keys=True),
            ),
        )


def to_record(row: Sequence[Any]) -> RecordRow:
    """A record from its :data:`RECORD_COLUMNS`."""
    values = list(row)
    values[6] = blob(values[6])  # sealed: bytes on both backends
    return RecordRow(*values)


def blob(value: Any) -> bytes | None:
    """A BLOB column as bytes (PostgreSQL gives a memoryview)."""
    return None if value is None else bytes(value)


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)
