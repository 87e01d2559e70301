"""The host's read-only views of a scope, in SQL both backends speak.

What :class:`engram.memory.overview.Overview` reads, written once with ``?``
placeholders like :mod:`engram.store.rows` and mixed into each backend's reader beside
:class:`~engram.store.rows.RowReads`. Every statement reads one range of an index, so a
page costs the same at 100,000 records as at 100:

- records by ``(scope_id, admitted_ms)`` or ``(scope_id, state, admitted_ms)``, newest
  first, a page starting below the ``(admitted_ms, rowid)`` of the last one (a keyset,
  never an offset);
- the journal by its key ``(scope_id, cursor)``, or by ``(scope_id, target)``;
- the audit by ``(scope_id, at_ms)``, or by the filter's own index (principal, tool,
  outcome), below ``(at_ms, rowid)``;
- per-day counts of events from the derived table ``activity`` (kept by
  :meth:`engram.store.rows.RowWrites.append_event`), never from the journal;
- held candidates by ``(scope_id, state)``, each with its tombstone by
  ``(scope_id, payload_digest, state)``.

The one thing the backends write differently is the principal of an audit entry (inside
its ``identity`` JSON text): :attr:`OverviewReads.AUDIT_PRINCIPAL`, the expression the
backend's index is built on, and :meth:`OverviewReads.audit_principal`, a principal as
that expression gives it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from engram.memory.ports import (
    DAY_MS,
    ActivityRow,
    AuditEntry,
    HeldCandidate,
    JournalEvent,
    RecordSummary,
)
from engram.store.rows import Connection

__all__ = ["OverviewReads", "journal_event"]

_SUMMARY_COLUMNS = (
    "rowid, record_id, state, admitted_ms, expires_ms, valid_t, valid_t_end, record_digest"
)


class OverviewReads:
    """The views' reads, over one connection inside a snapshot or transaction."""

    db: Connection
    #: An audit entry's principal: the expression the backend's index is built on.
    AUDIT_PRINCIPAL: ClassVar[str] = "json_extract(identity, '$.principal')"
    #: Whether an audit page names the index it reads (SQLite: without statistics, its
    #: planner prefers the index that orders every entry to the one that finds them).
    NAMES_AUDIT_INDEX: ClassVar[bool] = False
    #: As :attr:`engram.store.rows.RowReads.PAYLOAD_INDEX`.
    PAYLOAD_INDEX: ClassVar[str] = ""

    @staticmethod
    def audit_principal(principal: str) -> str:
        """A principal as :attr:`AUDIT_PRINCIPAL` gives it (SQLite: decoded)."""
        return principal

    def record_page(
        self, scope_id: str, state: str | None, after: tuple[int, int] | None, limit: int
    ) -> list[tuple[int, RecordSummary]]:
        where, parameters = _filters(scope_id, (("state", state),))
        where += _below("admitted_ms", after, parameters)
        rows = self.db.execute(
            f"SELECT {_SUMMARY_COLUMNS} FROM records WHERE {where}"
            " ORDER BY admitted_ms DESC, rowid DESC LIMIT ?",
            (*parameters, limit),
        ).fetchall()
        return [(int(row[0]), RecordSummary(*row[1:])) for row in rows]

    def record_counts(
        self, scope_id: str, admitted_after: Sequence[int]
    ) -> tuple[dict[str, int], list[int]]:
        # Whole days from the scope's rows of record_days (a few per day: never the
        # records), the day each instant falls in from the records admitted in it after
        # the instant (one range of records_by_admission, within one day).
        since = "".join(", sum(CASE WHEN day > ? THEN records ELSE 0 END)" for _ in admitted_after)
        rows = self.db.execute(
            f"SELECT state, sum(records){since} FROM record_days WHERE scope_id = ? GROUP BY state",
            (*(instant // DAY_MS for instant in admitted_after), scope_id),
        ).fetchall()
        states = {row[0]: int(row[1]) for row in rows}
        after = []
        for index, instant in enumerate(admitted_after, start=2):
            (rest_of_day,) = self.db.execute(
                "SELECT count(*) FROM records WHERE scope_id = ? AND admitted_ms > ?"
                " AND admitted_ms < ?",
                (scope_id, instant, (instant // DAY_MS + 1) * DAY_MS),
            ).fetchone()
            after.append(sum(int(row[index]) for row in rows) + int(rest_of_day))
        return states, after

    def journal_page(self, scope_id: str, before: int | None, limit: int) -> list[JournalEvent]:
        below = "" if before is None else " AND cursor < ?"
        rows = self.db.execute(
            "SELECT cursor, event_digest, body FROM journal WHERE scope_id = ?"
            f"{below} ORDER BY cursor DESC LIMIT ?",
            (scope_id, *(() if before is None else (before,)), limit),
        ).fetchall()
        return [journal_event(*row) for row in rows]

    def events_of(self, scope_id: str, targets: Sequence[str]) -> list[JournalEvent]:
        if not targets:
            return []
        marks = ", ".join("?" * len(targets))
        # Sorted here: asked to return them in cursor order, the SQLite planner walks
        # the scope's whole journal by its key instead of looking the targets up.
        rows = self.db.execute(
            "SELECT cursor, event_digest, body FROM journal"
            f" WHERE scope_id = ? AND target IN ({marks})",
            (scope_id, *targets),
        ).fetchall()
        return sorted((journal_event(*row) for row in rows), key=lambda event: event.cursor)

    def audit_page(
        self,
        scope_id: str,
        principal: str | None,
        tool: str | None,
        outcome: str | None,
        before: tuple[int, int] | None,
        limit: int,
    ) -> list[tuple[int, AuditEntry]]:
        where, parameters = _filters(
            scope_id,
            (
                (
                    self.AUDIT_PRINCIPAL,
                    None if principal is None else self.audit_principal(principal),
                ),
                ("tool", tool),
                ("outcome", outcome),
            ),
        )
        where += _below("at_ms", before, parameters)
        hint = f" INDEXED BY {_audit_index(principal, tool, outcome)}"
        rows = self.db.execute(
            "SELECT rowid, audit_id, scope_id, at_ms, tool, outcome, identity, digests"
            f" FROM audit{hint if self.NAMES_AUDIT_INDEX else ''} WHERE {where}"
            " ORDER BY at_ms DESC, rowid DESC LIMIT ?",
            (*parameters, limit),
        ).fetchall()
        return [(int(row[0]), _audit_entry(row[1:])) for row in rows]

    def activity_counts(self, scope_id: str, first_day: int, last_day: int) -> list[ActivityRow]:
        rows = self.db.execute(
            "SELECT day, operation, to_state, events FROM activity"
            " WHERE scope_id = ? AND day >= ? AND day <= ? ORDER BY day, operation, to_state",
            (scope_id, first_day, last_day),
        ).fetchall()
        return [ActivityRow(int(d), o, s, int(n)) for d, o, s, n in rows]

    def held_candidates(self, scope_id: str, limit: int) -> list[HeldCandidate]:
        # The tombstone is found as admission finds it (record_with_payload): the first
        # tombstoned record of the scope with the candidate's payload digest.
        rows = self.db.execute(
            "SELECT c.candidate_id, c.captured_ms, c.principal, c.record_digest,"
            f" (SELECT r.record_id FROM records AS r{self.PAYLOAD_INDEX}"
            "  WHERE r.scope_id = c.scope_id AND r.payload_digest = c.payload_digest"
            "  AND r.state = 'tombstoned'"
            "  ORDER BY r.admitted_ms, r.rowid LIMIT 1)"
            " FROM candidates AS c WHERE c.scope_id = ? AND c.state = 'pending_adjudication'"
            " ORDER BY c.captured_ms, c.capture_cursor, c.candidate_id LIMIT ?",
            (scope_id, limit),
        ).fetchall()
        return [HeldCandidate(*row) for row in rows]


def journal_event(cursor: int, event_digest: str, body: str) -> JournalEvent:
    """An event from its row: what the view shows is read from the chained body."""
    data: dict[str, Any] = json.loads(body)
    at = data.get("at")
    return JournalEvent(
        cursor=int(cursor),
        event_digest=event_digest,
        operation=str(data.get("operation", "")),
        target=_text(data.get("target")),
        from_state=_text(data.get("from_state")),
        to_state=_text(data.get("to_state")),
        at=at if isinstance(at, int) else None,
        body=data,
    )


def _audit_entry(row: Sequence[Any]) -> AuditEntry:
    audit_id, scope_id, at_ms, tool, outcome, identity, digests = row
    return AuditEntry(
        audit_id, scope_id, int(at_ms), tool, outcome, json.loads(identity), json.loads(digests)
    )


def _audit_index(principal: str | None, tool: str | None, outcome: str | None) -> str:
    """The index an audit page reads: the first filter's. Each filter's index ends with
    the other filters' columns, so a combination that matches rarely is checked in the
    index, entry by entry, never by reading the entries' rows."""
    for column, value in (("principal", principal), ("tool", tool), ("outcome", outcome)):
        if value is not None:
            return f"audit_by_{column}"
    return "audit_by_time"


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _filters(scope_id: str, filters: Sequence[tuple[str, str | None]]) -> tuple[str, list[Any]]:
    """``scope_id = ?`` and ``column = ?`` for each filter given; its parameters."""
    where, parameters = ["scope_id = ?"], [scope_id]
    for column, value in filters:
        if value is not None:
            where.append(f"{column} = ?")
            parameters.append(value)
    return " AND ".join(where), parameters


def _below(column: str, key: tuple[int, int] | None, parameters: list[Any]) -> str:
    """The keyset condition: rows strictly after ``key`` in ``(column, rowid)`` descending."""
    if key is None:
        return ""
    parameters.extend(key)
    return f" AND ({column}, rowid) < (?, ?)"
