"""Host-only operations on governed memory. Never reachable through MCP.

Confirmations (list, approve, deny), adjudication of held candidates, host-side record
transitions (dispute, supersede, expire, invalidate trust), the retention sweep,
revocation of a binding and journal verification. Each change is journaled like an
agent's, with the host as actor. Backup, restore and key rotation live in
:mod:`engram.memory.backup` and :mod:`engram.memory.rotation`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Final

from engram.canonical import digest
from engram.errors import GateFailed, IllegalTransition, JournalCorrupt, NotFound
from engram.memory.admission import admit_record
from engram.memory.binding import Scope
from engram.memory.engine import MemoryEngine
from engram.memory.gate import REQUEST_TTL_MS
from engram.memory.journal import first_bad_cursor
from engram.memory.lifecycle import HOST_RECORD_TRANSITIONS, check_candidate, check_record
from engram.memory.ports import ConfirmationRow, MemoryTransaction, RecordRow
from engram.memory.records import index_text
from engram.safety.display import escaped, one_line

__all__ = ["REASON_COLUMNS", "UNKNOWN_AGENT", "Maintenance", "PendingItems"]

#: The most of an agent's reason a person is shown, in terminal columns (a reason_ref
#: holds up to 512 bytes; with escapes it could be six times as wide).
REASON_COLUMNS: Final = 200
#: Who asked, for a request an engram before the agent_id column stored.
UNKNOWN_AGENT: Final = "unknown"

_HOST = digest("actor", {"host": "operator"})


@dataclass(frozen=True)
class PendingItems:
    """What waits for the host operator in one scope."""

    confirmations: list[ConfirmationRow]
    adjudications: list[str]


class Maintenance:
    """Host operations for one scope of an engine's store."""

    def __init__(self, engine: MemoryEngine, scope: Scope) -> None:
        self.engine = engine
        self.scope = scope
        engine.refresh_lexical(scope)

    @property
    def _scope_id(self) -> str:
        return self.scope.scope_id

    def _event(self, tx: MemoryTransaction, body: dict[str, Any], touches: bool) -> None:
        tx.append_event(
            self._scope_id, {**body, "actor": _HOST, "at": self.engine.clock()}, touches
        )

    # --- confirmations and adjudication ------------------------------------------

    def pending(self) -> PendingItems:
        """Open confirmation requests and held candidates, fit to show a person.

        Who asked is the binding the server bound the call to (``principal``,
        ``agent_id``; ``unknown`` for a request an older engram stored), never text the
        agent wrote. Whatever an agent wrote in a request (its reason) is one field of at
        most :data:`REASON_COLUMNS` columns: escaped, whitespace runs collapsed, cut with
        a marker (:func:`engram.safety.display.one_line`), also in rows an older engram
        stored."""
        now = self.engine.clock()
        with self.engine.store.read() as reader:
            confirmations = [
                _shown(row)
                for row in reader.confirmations(self._scope_id, now - REQUEST_TTL_MS)
                if row.consumed_ms is None and row.approved_ms is None
            ]
            held = reader.candidates_in_state(self._scope_id, "pending_adjudication")
        return PendingItems(confirmations, held)

    def confirm(self, request_id: str) -> ConfirmationRow:
        """Approve one open request; the approval is valid for 300 s from now. The row
        returned is fit to show a person (see :meth:`pending`)."""
        return self._decide(request_id, "confirm")

    def deny(self, request_id: str) -> ConfirmationRow:
        """Refuse one open request: it is spent without an approval, so the agent's retry
        fails the gate, and until the request would have expired that retry leaves no
        new request (a person said no; asking again at once is not a question). The row
        returned is fit to show a person (see :meth:`pending`)."""
        return self._decide(request_id, "deny")

    def _decide(self, request_id: str, decision: str) -> ConfirmationRow:
        """Approve (``confirm``) or refuse (``deny``) an open request, journaled."""
        now = self.engine.clock()
        with self.engine.store.write() as tx:
            row = self._open_request(tx, request_id, now)
            if decision == "confirm":
                tx.approve_confirmation(request_id, now)
            else:
                tx.consume_confirmation(request_id, now)
            self._event(
                tx,
                {
                    "operation": decision,
                    "target": row.target,
                    "request_id": request_id,
                    "tool": row.tool,
                },
                False,
            )
        return _shown(row)

    def _open_request(self, tx: MemoryTransaction, request_id: str, now: int) -> ConfirmationRow:
        row = tx.confirmation(self._scope_id, request_id)
        if row is None:
            raise NotFound(f"no confirmation request {request_id} in this scope")
        if row.approved_ms is not None or row.consumed_ms is not None:
            raise GateFailed(f"confirmation request {request_id} was already used")
        if row.created_ms < now - REQUEST_TTL_MS:
            raise GateFailed(f"confirmation request {request_id} has expired")
        return row

    def adjudicate(self, candidate_id: str, accept: bool) -> str | None:
        """Decide a candidate held as ``pending_adjudication``; the record id if accepted."""
        vault, now = self.engine.vault, self.engine.clock()
        with self.engine.store.write() as tx:
            candidate = tx.candidate(self._scope_id, candidate_id)
            if candidate is None:
                raise NotFound(f"no candidate {candidate_id} in this scope")
            check_candidate(candidate.state, {"pending_adjudication"})
            record_id = None
            if accept:
                body = json.loads(vault.open(tx, candidate_id, self._scope_id, candidate.sealed))
                record_id = admit_record(tx, vault, body, candidate_id, self._scope_id, now)
            vault.destroy(tx, candidate_id)
            tx.update_candidate(
                candidate_id,
                state="accepted" if accept else "rejected",
                record_id=record_id,
                sealed=None,
            )
            self._event(
                tx,
                {
                    "operation": "adjudicate",
                    "target": candidate_id,
                    "from_state": "pending_adjudication",
                    "to_state": "accepted" if accept else "rejected",
                    "record_id": record_id,
                },
                accept,
            )
        return record_id

    # --- records -------------------------------------------------------------------

    def transition(self, record_id: str, operation: str) -> str:
        """A host-side record transition; returns the new state."""
        if operation not in HOST_RECORD_TRANSITIONS:
            raise IllegalTransition(f"unknown transition {operation}")
        allowed, target = HOST_RECORD_TRANSITIONS[operation]
        with self.engine.store.write() as tx:
            record = tx.record(self._scope_id, record_id)
            if record is None:
                raise NotFound(f"no record {record_id} in this scope")
            check_record(record.state, allowed)
            if target == "expired":
                self._leave_projection_if_ineligible(tx, record)
            tx.update_record(record_id, state=target)
            self._event(
                tx,
                {
                    "operation": operation,
                    "target": record_id,
                    "from_state": record.state,
                    "to_state": target,
                },
                True,
            )
        return target

    def sweep(self) -> dict[str, int]:
        """Expire records past their instant; retry pending purges. Idempotent."""
        now = self.engine.clock()
        expired = 0
        with self.engine.store.write() as tx:
            for record in tx.expired_records(self._scope_id, now):
                self._leave_projection_if_ineligible(tx, record)
                tx.update_record(record.record_id, state="expired")
                self._event(
                    tx,
                    {
                        "operation": "expire",
                        "target": record.record_id,
                        "from_state": record.state,
                        "to_state": "expired",
                    },
                    True,
                )
                expired += 1
            pending = tx.pending_purges(self._scope_id)
        finished = sum(
            1
            for owner, _ in pending
            if (row := self.engine.store.finish_purge(owner, now)) and row["done_ms"] is not None
        )
        return {"expired": expired, "purged": finished, "purges_pending": len(pending) - finished}

    def _leave_projection_if_ineligible(self, tx: MemoryTransaction, record: RecordRow) -> None:
        """At expiry a ``make-ineligible`` record leaves the lexical projection."""
        vault = self.engine.vault
        body = json.loads(vault.open(tx, record.record_id, self._scope_id, record.sealed))
        ineligible = body["retention"]["derivative_rule"] == "make-ineligible"
        if ineligible and tx.indexed(self._scope_id, record.record_id):
            tx.unindex(self._scope_id, record.record_id, index_text(body["content"]))

    def revoke(self, principal: str) -> None:
        """Revoke a principal's binding in this scope (``*``: every principal)."""
        with self.engine.store.write() as tx:
            tx.revoke(self._scope_id, principal, self.engine.clock())
            self._event(
                tx,
                {"operation": "revoke", "target": digest("actor", {"principal": principal})},
                False,
            )

    def verify(self) -> int:
        """Walk the scope's hash chain; the number of events, or ``JOURNAL_CORRUPT``."""
        with self.engine.store.read() as reader:
            events = list(reader.journal(self._scope_id))
            head = reader.head(self._scope_id)
        recorded = (head.cursor, head.event_digest) if head.cursor else None
        bad = first_bad_cursor(self._scope_id, events, recorded)
        if bad is not None:
            raise JournalCorrupt(f"journal corrupt at cursor {bad}", cursor=bad)
        return len(events)


def _shown(row: ConfirmationRow) -> ConfirmationRow:
    display = {k: escaped(v) if isinstance(v, str) else v for k, v in row.display.items()}
    if isinstance(row.display.get("reason"), str):
        display["reason"] = one_line(row.display["reason"], REASON_COLUMNS)
    return dataclasses.replace(
        row,
        target=escaped(row.target),
        display=display,
        # Host-written, but shown on the same screen: escaped all the same.
        principal=escaped(row.principal),
        agent_id=UNKNOWN_AGENT if row.agent_id is None else escaped(row.agent_id),
    )
