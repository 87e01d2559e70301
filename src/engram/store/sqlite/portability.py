"""Moving governed memory in and out of a SQLite store: backup rows, restore rows,
and the data-key walk of a key rotation. Mixed into the store's transaction."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

__all__ = ["PortableRows"]

_RECORD_FIELDS = (
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


class PortableRows:
    """Export and import of the rows a backup carries."""

    db: sqlite3.Connection

    def export_rows(self) -> dict[str, Any]:
        records = []
        for row in self.db.execute(
            f"SELECT {', '.join('r.' + f for f in _RECORD_FIELDS)}, k.kek_id, k.wrapped"
            " FROM records AS r LEFT JOIN data_keys AS k ON k.owner = r.record_id"
            " ORDER BY r.rowid"
        ):
            record = dict(zip(_RECORD_FIELDS, row[:-2], strict=True))
            record["wrapped_key"] = [row[-2], row[-1]] if row[-1] is not None else None
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
            for s, c, d, v in self.db.execute("SELECT * FROM scope_state ORDER BY scope_id")
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
            for a, s, t, tool, o, i, d in self.db.execute("SELECT * FROM audit ORDER BY at_ms")
        ]
        revocations = [
            {"scope_id": s, "principal": p, "revoked_ms": t}
            for s, p, t in self.db.execute("SELECT * FROM revocations ORDER BY scope_id, principal")
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
                "SELECT * FROM idempotency ORDER BY scope_id, principal, key"
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

    def import_rows(self, rows: dict[str, Any]) -> None:
        for record in rows["records"]:
            self.db.execute(
                f"INSERT INTO records ({', '.join(_RECORD_FIELDS)}) VALUES"
                f" ({', '.join('?' * len(_RECORD_FIELDS))})",
                tuple(record[field] for field in _RECORD_FIELDS),
            )
            if record["wrapped_key"] is not None:
                kek_id, wrapped = record["wrapped_key"]
                self.db.execute(
                    "INSERT INTO data_keys VALUES (?, ?, ?, ?)",
                    (record["record_id"], record["scope_id"], kek_id, wrapped),
                )
        for event in rows["journal"]:
            self.db.execute(
                "INSERT INTO journal VALUES (?, ?, ?, ?, ?)",
                (
                    event["scope_id"],
                    event["cursor"],
                    event["event_digest"],
                    event["previous"],
                    json.dumps(event["body"], sort_keys=True),
                ),
            )
        for scope in rows["scope_state"]:
            self.db.execute(
                "INSERT INTO scope_state VALUES (?, ?, ?, ?)",
                (
                    scope["scope_id"],
                    scope["head_cursor"],
                    scope["head_digest"],
                    scope["records_version"],
                ),
            )
        for row in rows.get("idempotency", []):
            self.db.execute(
                "INSERT INTO idempotency VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    row["scope_id"],
                    row["principal"],
                    row["key"],
                    row["tool"],
                    row["intent_digest"],
                    json.dumps(row["outcome"]),
                    row.get("hashed", 0),  # a backup from before holds clear keys
                ),
            )
        for revocation in rows.get("revocations", []):
            self.db.execute(
                "INSERT INTO revocations VALUES (?, ?, ?)",
                (revocation["scope_id"], revocation["principal"], revocation["revoked_ms"]),
            )
        for entry in rows["audit"]:
            self.db.execute(
                "INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    entry["audit_id"],
                    entry["scope_id"],
                    entry["at_ms"],
                    entry["tool"],
                    entry["outcome"],
                    json.dumps(entry["identity"], sort_keys=True),
                    json.dumps(entry["digests"], sort_keys=True),
                ),
            )

    def data_keys_not_under(self, kek_id: str, limit: int) -> list[tuple[str, str, bytes]]:
        return list(
            self.db.execute(
                "SELECT owner, kek_id, wrapped FROM data_keys WHERE kek_id != ? LIMIT ?",
                (kek_id, limit),
            )
        )

    def set_data_key(self, owner: str, kek_id: str, wrapped: bytes) -> None:
        self.db.execute(
            "UPDATE data_keys SET kek_id = ?, wrapped = ? WHERE owner = ?", (kek_id, wrapped, owner)
        )

    def kek_ids_in_use(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT DISTINCT kek_id FROM data_keys")}
