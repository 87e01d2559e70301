"""The governed store's rows in SQL both backends speak: everything but the projections.

Candidates, records, data keys, the journal, idempotency, audit, confirmations,
revocations, purges, backup rows and the key-rotation walk are the same tables with the
same columns on SQLite and PostgreSQL, so their statements are written once here, with
``?`` placeholders (the PostgreSQL connection translates them). Each backend mixes these
classes into its reader and transaction and adds its own lexical and semantic projection
(FTS5 tables on SQLite, postings tables on PostgreSQL) and its planner hints.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, ClassVar, Protocol

from engram.memory.journal import GENESIS, event_digest
from engram.memory.ports import (
    DAY_MS,
    AuditEntry,
    CandidateRow,
    ConfirmationRow,
    Event,
    IdempotencyRow,
    RecordRow,
)

__all__ = [
    "RECORD_COLUMNS",
    "Connection",
    "Cursor",
    "RowReads",
    "RowWrites",
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
_CONFIRMATION_COLUMNS = (
    "request_id, scope_id, principal, tool, target, operation_digest, created_ms,"
    " approved_ms, consumed_ms, display, agent_id"
)


def prefixed(alias: str) -> str:
    """The record columns of a table alias (``r.record_id, r.scope_id, …``)."""
    return ", ".join(f"{alias}.{column}" for column in RECORD_FIELDS)


def confirmation_from_row(row: Sequence[Any]) -> ConfirmationRow:
    return ConfirmationRow(
        request_id=row[0],
        scope_id=row[1],
        principal=row[2],
        tool=row[3],
        target=row[4],
        operation_digest=row[5],
        created_ms=row[6],
        approved_ms=row[7],
        consumed_ms=row[8],
        display=json.loads(row[9]),
        agent_id=row[10],
    )


def _marks(count: int) -> str:
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
            sealed=_bytes(row[6]),
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
                f" AND record_id IN ({_marks(len(chunk))})",
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
                f" WHERE rowid IN ({_marks(len(chunk))}) AND {self.SCOPE_FILTER} = ?",
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
            marks = _marks(len(chunk))
            for owner, kek_id, wrapped in self.db.execute(
                f"SELECT owner, kek_id, wrapped FROM data_keys WHERE owner IN ({marks})", chunk
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

    # Governance: revocations, confirmations, purges.

    def is_revoked(self, scope_id: str, principal: str) -> bool:
        return (
            self.db.execute(
                "SELECT 1 FROM revocations WHERE scope_id = ? AND principal IN (?, '*')",
                (scope_id, principal),
            ).fetchone()
            is not None
        )

    def confirmations(self, scope_id: str, created_since_ms: int = 0) -> list[ConfirmationRow]:
        # One range of confirmations_by_creation: the table only grows, and a page of what
        # waits now must not read every request the scope ever made.
        return [
            confirmation_from_row(row)
            for row in self.db.execute(
                f"SELECT {_CONFIRMATION_COLUMNS} FROM confirmations WHERE scope_id = ?"
                " AND created_ms >= ? ORDER BY created_ms, request_id",
                (scope_id, created_since_ms),
            )
        ]

    def confirmation(self, scope_id: str, request_id: str) -> ConfirmationRow | None:
        row = self.db.execute(
            f"SELECT {_CONFIRMATION_COLUMNS} FROM confirmations"
            " WHERE request_id = ? AND scope_id = ?",
            (request_id, scope_id),
        ).fetchone()
        return confirmation_from_row(row) if row else None

    def purge_row(self, owner: str) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT scope_id, kind, created_ms, done_ms FROM purges WHERE owner = ?", (owner,)
        ).fetchone()
        if row is None:
            return None
        return {"scope_id": row[0], "kind": row[1], "created_ms": row[2], "done_ms": row[3]}

    def pending_purges(self, scope_id: str) -> list[tuple[str, str]]:
        return [
            (owner, kind)
            for owner, kind in self.db.execute(
                "SELECT owner, kind FROM purges WHERE done_ms IS NULL AND scope_id = ?"
                " ORDER BY created_ms, owner",
                (scope_id,),
            )
        ]

    # Backups and key rotation.

    def export_rows(self) -> dict[str, Any]:
        """What a backup carries (pending, rejected and withdrawn candidates stay out)."""
        records = []
        for row in self.db.execute(
            f"SELECT {prefixed('r')}, k.kek_id, k.wrapped"
            " FROM records AS r LEFT JOIN data_keys AS k ON k.owner = r.record_id"
            " ORDER BY r.rowid"
        ):
            record = dict(zip(RECORD_FIELDS, row[:-2], strict=True))
            record["sealed"] = _bytes(record["sealed"])
            record["wrapped_key"] = [row[-2], bytes(row[-1])] if row[-1] is not None else None
            records.append(record)
        journal = [
            {"scope_id": s, "cursor": c, "event_digest": d, "previous": p, "body": json.loads(b)}
            for s, c, d, p, b in self.db.execute(
                "SELECT scope_id, cursor, event_digest, previous, body FROM journal"
                " ORDER BY scope_id, cursor"
            )
        ]
        scopes = [
            {"scope_id": s, "head_cursor": c, "head_digest": d, "records_version": v}
            for s, c, d, v in self.db.execute(
                "SELECT scope_id, head_cursor, head_digest, records_version FROM scope_state"
                " ORDER BY scope_id"
            )
        ]
        audit = [
            {
                "audit_id": a,
                "scope_id": s,
                "at_ms": t,
                "tool": tool,
                "outcome": o,
                "identity": json.loads(i),
                "digests": json.loads(d),
            }
            for a, s, t, tool, o, i, d in self.db.execute(
                "SELECT audit_id, scope_id, at_ms, tool, outcome, identity, digests FROM audit"
                " ORDER BY at_ms, rowid"
            )
        ]
        revocations = [
            {"scope_id": s, "principal": p, "revoked_ms": t}
            for s, p, t in self.db.execute(
                "SELECT scope_id, principal, revoked_ms FROM revocations"
                " ORDER BY scope_id, principal"
            )
        ]
        idempotency = [
            {
                "scope_id": s,
                "principal": p,
                "key": k,
                "tool": t,
                "intent_digest": i,
                "outcome": json.loads(o),
                "hashed": h,
            }
            for s, p, k, t, i, o, h in self.db.execute(
                "SELECT scope_id, principal, key, tool, intent_digest, outcome, hashed"
                " FROM idempotency ORDER BY scope_id, principal, key"
            )
        ]
        # A capture's replay names its candidate: keep it only when that candidate lives
        # on as a record (pending, rejected and withdrawn candidates stay out of backups).
        accepted = {
            row[0]
            for row in self.db.execute(
                "SELECT candidate_id FROM candidates WHERE state = 'accepted'"
            )
        }
        idempotency = [
            row
            for row in idempotency
            if row["tool"] != "capture" or row["outcome"].get("candidate_id") in accepted
        ]
        return {
            "records": records,
            "journal": journal,
            "scope_state": scopes,
            "audit": audit,
            "revocations": revocations,
            "idempotency": idempotency,
        }

    def is_empty(self) -> bool:
        return all(
            self.db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is None
            for table in ("records", "journal", "candidates")
        )

    def kek_ids_in_use(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT DISTINCT kek_id FROM data_keys")}


class RowWrites(RowReads):
    """Writes of the shared tables, inside one transaction."""

    #: The SQLite planner hint naming the partial index of keys still in clear.
    CLEAR_KEYS_HINT: ClassVar[str] = ""

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

    def clear_idempotency_keys(self) -> list[tuple[str, str, str]]:
        return [
            (scope, principal, key)
            for scope, principal, key in self.db.execute(
                f"SELECT scope_id, principal, key FROM idempotency{self.CLEAR_KEYS_HINT}"
                " WHERE hashed = 0"
            )
        ]

    def hash_idempotency_key(self, scope_id: str, principal: str, key: str, hashed: str) -> None:
        self.db.execute(
            "UPDATE idempotency SET key = ?, hashed = 1"
            " WHERE scope_id = ? AND principal = ? AND key = ? AND hashed = 0",
            (hashed, scope_id, principal, key),
        )

    def add_candidate(self, row: CandidateRow) -> None:
        self.db.execute(
            "INSERT INTO candidates (candidate_id, scope_id, principal, state, payload_digest,"
            " record_digest, sealed, captured_ms, retention, capture_cursor, record_id,"
            f" decision) VALUES ({_marks(12)})",
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
            f"INSERT INTO records ({RECORD_COLUMNS}) VALUES ({_marks(len(RECORD_FIELDS))})",
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
            f" AND state IN ({_marks(len(states))}){alive} ORDER BY admitted_ms, rowid LIMIT 1",
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
            (scope_id, cursor, digest, previous, _json(body), _optional(target)),
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

    # Governance.

    def add_confirmation(self, row: ConfirmationRow) -> None:
        self.db.execute(
            f"INSERT INTO confirmations ({_CONFIRMATION_COLUMNS}) VALUES ({_marks(11)})",
            (
                row.request_id,
                row.scope_id,
                row.principal,
                row.tool,
                row.target,
                row.operation_digest,
                row.created_ms,
                row.approved_ms,
                row.consumed_ms,
                json.dumps(row.display, sort_keys=True),
                row.agent_id,
            ),
        )

    def live_approval(
        self,
        scope_id: str,
        principal: str,
        tool: str,
        target: str,
        operation_digest: str,
        approved_since_ms: int,
    ) -> ConfirmationRow | None:
        row = self.db.execute(
            f"SELECT {_CONFIRMATION_COLUMNS} FROM confirmations WHERE scope_id = ?"
            " AND principal = ? AND tool = ? AND target = ? AND operation_digest = ?"
            " AND approved_ms IS NOT NULL AND approved_ms >= ? AND consumed_ms IS NULL"
            " ORDER BY approved_ms, request_id LIMIT 1",
            (scope_id, principal, tool, target, operation_digest, approved_since_ms),
        ).fetchone()
        return confirmation_from_row(row) if row else None

    def consume_confirmation(self, request_id: str, now_ms: int) -> None:
        self.db.execute(
            "UPDATE confirmations SET consumed_ms = ? WHERE request_id = ? AND consumed_ms IS NULL",
            (now_ms, request_id),
        )

    def open_request_exists(
        self, scope_id: str, principal: str, operation_digest: str, created_since_ms: int
    ) -> bool:
        return (
            self.db.execute(
                # A request the operator denied (spent, never approved) counts as open
                # until it would have expired: a denied operation is not asked again.
                "SELECT 1 FROM confirmations WHERE scope_id = ? AND principal = ?"
                " AND operation_digest = ? AND created_ms >= ?"
                " AND (consumed_ms IS NULL OR approved_ms IS NULL)",
                (scope_id, principal, operation_digest, created_since_ms),
            ).fetchone()
            is not None
        )

    def open_requests(self, scope_id: str, principal: str, created_since_ms: int) -> int:
        # One range of confirmations_by_principal: a principal's past requests stay out.
        row = self.db.execute(
            "SELECT count(*) FROM confirmations WHERE scope_id = ? AND principal = ?"
            " AND created_ms >= ? AND approved_ms IS NULL AND consumed_ms IS NULL",
            (scope_id, principal, created_since_ms),
        ).fetchone()
        return int(row[0])

    def approve_confirmation(self, request_id: str, now_ms: int) -> None:
        self.db.execute(
            "UPDATE confirmations SET approved_ms = ? WHERE request_id = ?", (now_ms, request_id)
        )

    def revoke(self, scope_id: str, principal: str, now_ms: int) -> None:
        self.db.execute(
            "INSERT INTO revocations (scope_id, principal, revoked_ms) VALUES (?, ?, ?)"
            " ON CONFLICT (scope_id, principal) DO UPDATE SET revoked_ms = excluded.revoked_ms",
            (scope_id, principal, now_ms),
        )

    def add_purge(self, scope_id: str, owner: str, kind: str, now_ms: int) -> None:
        self.db.execute(
            "INSERT INTO purges (owner, scope_id, kind, created_ms, done_ms)"
            " VALUES (?, ?, ?, ?, NULL) ON CONFLICT DO NOTHING",
            (owner, scope_id, kind, now_ms),
        )

    def mark_purged(self, owner: str, now_ms: int) -> None:
        self.db.execute("UPDATE purges SET done_ms = ? WHERE owner = ?", (now_ms, owner))

    # Backups and key rotation.

    def import_rows(self, rows: dict[str, Any]) -> None:
        for record in rows["records"]:
            self.db.execute(
                f"INSERT INTO records ({RECORD_COLUMNS}) VALUES ({_marks(len(RECORD_FIELDS))})",
                tuple(record[field] for field in RECORD_FIELDS),
            )
            self._count_record(record["scope_id"], record["state"], record["admitted_ms"], +1)
            if record["wrapped_key"] is not None:
                kek_id, wrapped = record["wrapped_key"]
                self.put_data_key(record["record_id"], record["scope_id"], kek_id, wrapped)
        for e in rows["journal"]:
            self._insert_event(
                e["scope_id"], e["cursor"], e["event_digest"], e["previous"], e["body"]
            )
        self._insert_all(
            "scope_state (scope_id, head_cursor, head_digest, records_version)",
            (
                (s["scope_id"], s["head_cursor"], s["head_digest"], s["records_version"])
                for s in rows["scope_state"]
            ),
        )
        self._insert_all(
            "idempotency (scope_id, principal, key, tool, intent_digest, outcome, hashed)",
            (
                (
                    row["scope_id"],
                    row["principal"],
                    row["key"],
                    row["tool"],
                    row["intent_digest"],
                    json.dumps(row["outcome"]),
                    row.get("hashed", 0),  # a backup from before holds clear keys
                )
                for row in rows.get("idempotency", [])
            ),
        )
        self._insert_all(
            "revocations (scope_id, principal, revoked_ms)",
            ((r["scope_id"], r["principal"], r["revoked_ms"]) for r in rows.get("revocations", [])),
        )
        self._insert_all(
            "audit (audit_id, scope_id, at_ms, tool, outcome, identity, digests)",
            (
                (
                    a["audit_id"],
                    a["scope_id"],
                    a["at_ms"],
                    a["tool"],
                    a["outcome"],
                    _json(a["identity"]),
                    _json(a["digests"]),
                )
                for a in rows["audit"]
            ),
        )

    def _insert_all(self, into: str, rows: Iterable[tuple[Any, ...]]) -> None:
        for row in rows:
            self.db.execute(f"INSERT INTO {into} VALUES ({_marks(len(row))})", row)

    def data_keys_not_under(self, kek_id: str, limit: int) -> list[tuple[str, str, bytes]]:
        return [
            (owner, kek, bytes(wrapped))
            for owner, kek, wrapped in self.db.execute(
                "SELECT owner, kek_id, wrapped FROM data_keys WHERE kek_id != ?"
                " ORDER BY owner LIMIT ?",
                (kek_id, limit),
            )
        ]

    def set_data_key(self, owner: str, kek_id: str, wrapped: bytes) -> None:
        self.db.execute(
            "UPDATE data_keys SET kek_id = ?, wrapped = ? WHERE owner = ?", (kek_id, wrapped, owner)
        )


def to_record(row: Sequence[Any]) -> RecordRow:
    """A record from its :data:`RECORD_COLUMNS`."""
    values = list(row)
    values[6] = _bytes(values[6])  # sealed: bytes on both backends
    return RecordRow(*values)


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)
