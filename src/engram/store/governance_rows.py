"""The operator's tables in SQL both backends speak: confirmations, revocations, purges.

What the gate leaves for the operator (confirmation requests), what the operator decides
(approvals, denials, revocations) and the cleanup owed after a withdraw or forget
(purges), written once with ``?`` placeholders like :mod:`engram.store.rows`; each
backend mixes :class:`GovernanceReads` into its reader and :class:`GovernanceWrites` into
its transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engram.memory.ports import ConfirmationRow
from engram.store.rows import Connection, marks

__all__ = ["GovernanceReads", "GovernanceWrites", "confirmation_from_row"]

_CONFIRMATION_COLUMNS = (
    "request_id, scope_id, principal, tool, target, operation_digest, created_ms,"
    " approved_ms, consumed_ms, display, agent_id"
)


def confirmation_from_row(row: Sequence[Any]) -> ConfirmationRow:
    """A confirmation from its columns."""
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


class GovernanceReads:
    """Reads of the operator's tables, over one connection inside a transaction or
    snapshot."""

    db: Connection

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


class GovernanceWrites(GovernanceReads):
    """Writes of the operator's tables, inside one transaction."""

    def add_confirmation(self, row: ConfirmationRow) -> None:
        self.db.execute(
            f"INSERT INTO confirmations ({_CONFIRMATION_COLUMNS}) VALUES ({marks(11)})",
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
