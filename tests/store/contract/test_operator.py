"""The operator's reads: what the verbs of maintenance read (``OperatorReads``) and the
console's read-only views of a scope (``OperatorViews``), newest first by keysets."""

from __future__ import annotations

from typing import Any

from engram.memory.journal import GENESIS, event_digest
from engram.memory.ports import (
    ActivityRow,
    AuditEntry,
    HeldCandidate,
    JournalEvent,
    MemoryStore,
    RecordSummary,
)
from tests.store.contract.conftest import DAY, OTHER, SCOPE, candidate, record


def test_candidates_in_a_state_come_oldest_capture_first(store: MemoryStore) -> None:
    with store.write() as tx:
        tx.add_candidate(candidate("cand_c", captured_ms=2_000, capture_cursor=1))
        tx.add_candidate(candidate("cand_b", captured_ms=1_000, capture_cursor=2))
        tx.add_candidate(candidate("cand_a", captured_ms=1_000, capture_cursor=2))
        tx.add_candidate(candidate("cand_0", captured_ms=1_000, capture_cursor=1))
        tx.add_candidate(candidate("cand_x", captured_ms=1, state="accepted"))
        tx.add_candidate(candidate("cand_y", captured_ms=1, scope_id=OTHER))
    with store.read() as reader:
        assert reader.candidates_in_state(SCOPE, "pending") == [
            "cand_0",
            "cand_a",
            "cand_b",
            "cand_c",
        ]
        assert reader.candidates_in_state(SCOPE, "accepted") == ["cand_x"]


def test_expired_records_are_the_live_ones_at_or_past_their_expiry_in_admission_order(
    store: MemoryStore,
) -> None:
    with store.write() as tx:
        tx.add_record(record("mem_2", expires_ms=500))
        tx.add_record(record("mem_1", expires_ms=1_000, state="historical"))
        tx.add_record(record("mem_3", expires_ms=1_001))
        tx.add_record(record("mem_4", expires_ms=10, state="tombstoned"))
        tx.add_record(record("mem_5", expires_ms=10, state="accepted_disputed"))
        tx.add_record(record("mem_6"))
        tx.add_record(record("mem_7", expires_ms=10, scope_id=OTHER))
    with store.read() as reader:
        assert [row.record_id for row in reader.expired_records(SCOPE, 1_000)] == [
            "mem_2",
            "mem_1",
            "mem_5",
        ]


def test_confirmations_since_an_instant_come_oldest_first_then_by_id(store: MemoryStore) -> None:
    from engram.memory.ports import ConfirmationRow

    def asked(request_id: str, created_ms: int, scope_id: str = SCOPE) -> ConfirmationRow:
        return ConfirmationRow(
            request_id, scope_id, "agent-a", "forget", "mem_1", "d", created_ms, display={}
        )

    with store.write() as tx:
        for row in (asked("conf_b", 2_000), asked("conf_a", 2_000), asked("conf_c", 1_000)):
            tx.add_confirmation(row)
        tx.add_confirmation(asked("conf_d", 1_500, OTHER))
    with store.read() as reader:
        assert [row.request_id for row in reader.confirmations(SCOPE)] == [
            "conf_c",
            "conf_a",
            "conf_b",
        ]
        assert reader.confirmations(SCOPE, 2_000) == [
            asked("conf_a", 2_000),
            asked("conf_b", 2_000),
        ]


def _event(tx: Any, scope_id: str, **body: Any) -> None:
    tx.append_event(scope_id, body, touches_records=False)


def test_the_journal_pages_newest_first_and_finds_the_events_of_targets(
    store: MemoryStore,
) -> None:
    with store.write() as tx:
        _event(tx, SCOPE, operation="capture", target="cand_1", to_state="pending", at=DAY + 1)
        _event(tx, SCOPE, operation="admit", target="mem_1", from_state=None, at=DAY + 2)
        _event(tx, SCOPE, operation="rotate", at="not a number")
        _event(tx, SCOPE, operation="forget", target="mem_1", to_state="tombstoned", at=3 * DAY)
        _event(tx, OTHER, operation="admit", target="mem_1", at=DAY)
    with store.read() as reader:
        page = reader.journal_page(SCOPE, None, 2)
        assert [event.cursor for event in page] == [4, 3]
        assert page[1] == JournalEvent(
            cursor=3,
            event_digest=page[1].event_digest,
            operation="rotate",
            target=None,
            from_state=None,
            to_state=None,
            at=None,
            body={"operation": "rotate", "at": "not a number"},
        )
        assert [event.cursor for event in reader.journal_page(SCOPE, 3, 10)] == [2, 1]
        assert reader.journal_page(SCOPE, 1, 10) == []
        events = reader.events_of(SCOPE, ["mem_1", "cand_1", "mem_9"])
        assert [(e.cursor, e.operation, e.to_state) for e in events] == [
            (1, "capture", "pending"),
            (2, "admit", None),
            (4, "forget", "tombstoned"),
        ]
        assert events[0].event_digest == event_digest(SCOPE, 1, GENESIS, events[0].body)
        assert events[0].at == DAY + 1
        assert reader.events_of(SCOPE, []) == []
        assert reader.activity_counts(SCOPE, 0, 10) == [
            ActivityRow(1, "admit", "", 1),
            ActivityRow(1, "capture", "pending", 1),
            ActivityRow(3, "forget", "tombstoned", 1),
        ]
        assert reader.activity_counts(SCOPE, 2, 3) == [ActivityRow(3, "forget", "tombstoned", 1)]


def test_records_page_newest_admitted_first_below_a_keyset(store: MemoryStore) -> None:
    with store.write() as tx:
        tx.add_record(record("mem_1", admitted_ms=DAY + 5))
        tx.add_record(record("mem_2", admitted_ms=2 * DAY + 5, state="tombstoned"))
        tx.add_record(record("mem_3", admitted_ms=DAY + 5))
        tx.add_record(record("mem_4", admitted_ms=DAY + 9, scope_id=OTHER))
    with store.read() as reader:
        page = reader.record_page(SCOPE, None, None, 2)
        assert [summary.record_id for _, summary in page] == ["mem_2", "mem_3"]
        assert page[0][1] == RecordSummary(
            "mem_2", "tombstoned", 2 * DAY + 5, None, 5_000, None, "sha256:" + "3" * 64
        )
        rest = reader.record_page(SCOPE, None, (DAY + 5, page[1][0]), 10)
        assert [summary.record_id for _, summary in rest] == ["mem_1"]
        current = reader.record_page(SCOPE, "accepted_current", None, 10)
        assert [summary.record_id for _, summary in current] == ["mem_3", "mem_1"]


def test_record_counts_follow_each_state_change_and_admission_instant(store: MemoryStore) -> None:
    with store.write() as tx:
        tx.add_record(record("mem_1", admitted_ms=DAY + 5))
        tx.add_record(record("mem_2", admitted_ms=DAY + 50))
        tx.add_record(record("mem_3", admitted_ms=3 * DAY))
        tx.update_record("mem_1", state="tombstoned")
        tx.update_record("mem_2", expires_ms=4 * DAY)
    with store.read() as reader:
        states, after = reader.record_counts(SCOPE, [DAY + 5, DAY + 4, 0, 3 * DAY])
        assert {state: n for state, n in states.items() if n} == {
            "accepted_current": 2,
            "tombstoned": 1,
        }
        assert after == [2, 3, 3, 0]
        assert reader.record_counts(OTHER, [0]) == ({}, [0])


def test_audit_pages_newest_first_by_every_filter_below_a_keyset(store: MemoryStore) -> None:
    entries = [
        AuditEntry("aud_1", SCOPE, 1_000, "search", "ok", {"principal": "agent-a"}, {}),
        AuditEntry("aud_2", SCOPE, 2_000, "capture", "ok", {"principal": "agent-b"}, {}),
        AuditEntry("aud_3", SCOPE, 2_000, "search", "refused", {"principal": "agent-a"}, {}),
        AuditEntry("aud_4", SCOPE, 1_500, "search", "ok", {"principal": 'quote"d\u00e9'}, {}),
        AuditEntry("aud_5", OTHER, 3_000, "search", "ok", {"principal": "agent-a"}, {}),
    ]
    with store.write() as tx:
        for entry in entries:
            tx.audit(entry)
    with store.read() as reader:

        def ids(
            principal: str | None,
            tool: str | None,
            outcome: str | None,
            before: tuple[int, int] | None = None,
        ) -> list[str]:
            page = reader.audit_page(SCOPE, principal, tool, outcome, before, 10)
            return [entry.audit_id for _, entry in page]

        assert ids(None, None, None) == ["aud_3", "aud_2", "aud_4", "aud_1"]
        assert ids("agent-a", None, None) == ["aud_3", "aud_1"]
        assert ids('quote"d\u00e9', None, None) == ["aud_4"]
        assert ids(None, "search", None) == ["aud_3", "aud_4", "aud_1"]
        assert ids(None, "search", "ok") == ["aud_4", "aud_1"]
        assert ids("agent-a", "search", "refused") == ["aud_3"]
        assert ids("agent-c", None, None) == []
        first = reader.audit_page(SCOPE, None, None, None, None, 2)
        last_order = first[-1][0]
        assert ids(None, None, None, before=(2_000, last_order)) == ["aud_4", "aud_1"]


def test_held_candidates_name_the_first_tombstone_with_their_payload(store: MemoryStore) -> None:
    same, other = "sha256:" + "7" * 64, "sha256:" + "8" * 64
    with store.write() as tx:
        tx.add_candidate(
            candidate(
                "cand_2", state="pending_adjudication", payload_digest=same, captured_ms=2_000
            )
        )
        tx.add_candidate(
            candidate(
                "cand_1", state="pending_adjudication", payload_digest=other, captured_ms=1_000
            )
        )
        tx.add_candidate(candidate("cand_3", state="pending", payload_digest=same))
        tx.add_record(record("mem_b", payload_digest=same, state="tombstoned", admitted_ms=9))
        tx.add_record(record("mem_a", payload_digest=same, state="tombstoned", admitted_ms=10))
        tx.add_record(record("mem_c", payload_digest=same, admitted_ms=1))
    with store.read() as reader:
        assert reader.held_candidates(SCOPE, 10) == [
            HeldCandidate("cand_1", 1_000, "agent-a", "sha256:" + "2" * 64, None),
            HeldCandidate("cand_2", 2_000, "agent-a", "sha256:" + "2" * 64, "mem_b"),
        ]
        assert len(reader.held_candidates(SCOPE, 1)) == 1
