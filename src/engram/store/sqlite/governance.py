"""The governance tables of the SQLite memory store: confirmations, revocations,
purges (cleanup after withdraw and forget). Mixed into the store's transaction."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from engram.memory.ports import ConfirmationRow
from engram.store.sqlite.database import migration

__all__ = ["GovernanceReads", "GovernanceWrites", "confirmation_from_row"]

_CONFIRMATION_COLUMNS = (
    "request_id, scope_id, principal, tool, target, operation_digest, created_ms,"
    " approved_ms, consumed_ms, display"
)


@migration("memory", 3)
def _create_purges(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE IF NOT EXISTS purges (owner TEXT PRIMARY KEY, scope_id TEXT NOT NULL,"
        " kind TEXT NOT NULL, created_ms INTEGER NOT NULL, done_ms INTEGER)"
    )


def confirmation_from_row(row: tuple[Any, ...]) -> ConfirmationRow:
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
    )


class GovernanceReads:
    """Reads of the governance tables."""

    db: sqlite3.Connection

    def is_revoked(self, scope_id: str, principal: str) -> bool:
        return (
            self.db.execute(
                "SELECT 1 FROM revocations WHERE scope_id = ? AND principal IN (?, '*')",
                (scope_id, principal),
            ).fetchone()
            is not None
        )

    def confirmations(self, scope_id: str) -> list[ConfirmationRow]:
        return [
            confirmation_from_row(row)
            for row in self.db.execute(
                f"SELECT {_CONFIRMATION_COLUMNS} FROM confirmations WHERE scope_id = ?"
                " ORDER BY created_ms, request_id",
                (scope_id,),
            )
        ]

    def purge_row(self, owner: str) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT scope_id, kind, created_ms, done_ms FROM purges WHERE owner = ?", (owner,)
        ).fetchone()
        if row is None:
            return None
        return {"scope_id": row[0], "kind": row[1], "created_ms": row[2], "done_ms": row[3]}

    def pending_purges(self, scope_id: str) -> list[tuple[str, str]]:
        return list(
            self.db.execute(
                "SELECT owner, kind FROM purges WHERE done_ms IS NULL AND scope_id = ?",
                (scope_id,),
            )
        )


class GovernanceWrites(GovernanceReads):
    """Writes of the governance tables, inside one transaction."""

    def add_confirmation(self, row: ConfirmationRow) -> None:
        self.db.execute(
            f"INSERT INTO confirmations ({_CONFIRMATION_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
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
            " ORDER BY approved_ms LIMIT 1",
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
                "SELECT 1 FROM confirmations WHERE scope_id = ? AND principal = ?"
                " AND operation_digest = ? AND consumed_ms IS NULL AND created_ms >= ?",
                (scope_id, principal, operation_digest, created_since_ms),
            ).fetchone()
            is not None
        )

    def approve_confirmation(self, request_id: str, now_ms: int) -> None:
        self.db.execute(
            "UPDATE confirmations SET approved_ms = ? WHERE request_id = ?", (now_ms, request_id)
        )

    def revoke(self, scope_id: str, principal: str, now_ms: int) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO revocations VALUES (?, ?, ?)", (scope_id, principal, now_ms)
        )

    def add_purge(self, scope_id: str, owner: str, kind: str, now_ms: int) -> None:
        self.db.execute(
            "INSERT OR IGNORE INTO purges VALUES (?, ?, ?, ?, NULL)",
            (owner, scope_id, kind, now_ms),
        )

    def mark_purged(self, owner: str, now_ms: int) -> None:
        self.db.execute("UPDATE purges SET done_ms = ? WHERE owner = ?", (now_ms, owner))
