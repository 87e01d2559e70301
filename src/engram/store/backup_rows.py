"""Backups, restores and key rotation in SQL both backends speak.

What a backup carries (records with their wrapped keys, the journal, scope heads, audit,
revocations, the replays of idempotency keys whose candidates live on as records), its
restore into an empty store, and the walks of key rotation and of idempotency keys an
older engram kept in clear; written once with ``?`` placeholders like
:mod:`engram.store.rows`, on top of its rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, ClassVar

from engram.store.rows import (
    RECORD_COLUMNS,
    RECORD_FIELDS,
    RowReads,
    RowWrites,
    as_json,
    blob,
    marks,
    prefixed,
)

__all__ = ["BackupRowReads", "BackupRowWrites"]


class BackupRowReads(RowReads):
    """What a backup reads of the whole store."""

    def export_rows(self) -> dict[str, Any]:
        """What a backup carries (pending, rejected and withdrawn candidates stay out)."""
        records = []
        for row in self.db.execute(
            f"SELECT {prefixed('r')}, k.kek_id, k.wrapped"
            " FROM records AS r LEFT JOIN data_keys AS k ON k.owner = r.record_id"
            " ORDER BY r.rowid"
        ):
            record = dict(zip(RECORD_FIELDS, row[:-2], strict=True))
            record["sealed"] = blob(record["sealed"])
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


class BackupRowWrites(RowWrites, BackupRowReads):
    """A restore's writes, the key-rotation walk and the hashing of clear keys, inside one
    transaction."""

    #: The SQLite planner hint naming the partial index of keys still in clear.
    CLEAR_KEYS_HINT: ClassVar[str] = ""

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

    def import_rows(self, rows: dict[str, Any]) -> None:
        for record in rows["records"]:
            self.db.execute(
                f"INSERT INTO records ({RECORD_COLUMNS}) VALUES ({marks(len(RECORD_FIELDS))})",
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
                    as_json(a["identity"]),
                    as_json(a["digests"]),
                )
                for a in rows["audit"]
            ),
        )

    def _insert_all(self, into: str, rows: Iterable[tuple[Any, ...]]) -> None:
        for row in rows:
            self.db.execute(f"INSERT INTO {into} VALUES ({marks(len(row))})", row)

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
