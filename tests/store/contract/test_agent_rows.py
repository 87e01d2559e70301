"""The agent's path: candidates, records, data keys, the journal, idempotency, audit and
confirmations, as the six tools write and read them (``AgentReads``, ``AgentWrites``)."""

from __future__ import annotations

import dataclasses

import pytest

from engram.errors import StoreUnavailable
from engram.memory.journal import GENESIS, event_digest
from engram.memory.ports import (
    AuditEntry,
    ConfirmationRow,
    Event,
    IdempotencyRow,
    MemoryStore,
)
from tests.store.contract.conftest import OTHER, SCOPE, candidate, record


def test_a_candidate_is_read_back_whole_and_only_in_its_scope(store: MemoryStore) -> None:
    row = candidate("cand_1", decision={"reason": "ok", "score": 0.5})
    with store.write() as tx:
        tx.add_candidate(row)
    with store.read() as reader:
        assert reader.candidate(SCOPE, "cand_1") == row
        assert reader.candidate(OTHER, "cand_1") is None
        assert reader.candidate(SCOPE, "cand_2") is None


def test_a_candidate_read_back_is_a_new_object_not_the_one_written(store: MemoryStore) -> None:
    row = candidate("cand_1")
    with store.write() as tx:
        tx.add_candidate(row)
    row.retention["days"] = 99
    with store.read() as reader:
        found = reader.candidate(SCOPE, "cand_1")
        assert found is not None
        assert found.retention == {"class": "standard", "days": 30}
        found.retention["days"] = 1
    with store.read() as reader:
        again = reader.candidate(SCOPE, "cand_1")
        assert again is not None
        assert again.retention == {"class": "standard", "days": 30}


def test_updating_a_candidate_changes_only_the_columns_named(store: MemoryStore) -> None:
    with store.write() as tx:
        tx.add_candidate(candidate("cand_1"))
        tx.update_candidate(
            "cand_1", state="accepted", record_id="mem_1", decision={"verdict": "accept"}
        )
        tx.update_candidate("cand_missing", state="accepted")
    with store.read() as reader:
        assert reader.candidate(SCOPE, "cand_1") == candidate(
            "cand_1", state="accepted", record_id="mem_1", decision={"verdict": "accept"}
        )
        assert reader.candidate(SCOPE, "cand_missing") is None


def test_a_second_candidate_of_the_same_id_fails_the_write_and_keeps_nothing(
    store: MemoryStore,
) -> None:
    with store.write() as tx:
        tx.add_candidate(candidate("cand_1"))

    def add_both() -> None:
        with store.write() as tx:
            tx.add_candidate(candidate("cand_2"))
            tx.add_candidate(candidate("cand_1", principal="agent-b"))

    with pytest.raises(StoreUnavailable):
        add_both()
    with store.read() as reader:
        assert reader.candidate(SCOPE, "cand_2") is None
        assert reader.candidate(SCOPE, "cand_1") == candidate("cand_1")


def test_a_write_that_raises_commits_nothing(store: MemoryStore) -> None:
    def fail() -> None:
        with store.write() as tx:
            tx.add_candidate(candidate("cand_1"))
            tx.append_event(SCOPE, {"operation": "capture"}, touches_records=False)
            raise KeyError("the body failed")

    with pytest.raises(KeyError):
        fail()
    with store.read() as reader:
        assert reader.candidate(SCOPE, "cand_1") is None
        assert reader.head(SCOPE) == Event(0, GENESIS)
        assert reader.is_empty()


def test_a_transaction_sees_its_own_writes(store: MemoryStore) -> None:
    with store.write() as tx:
        tx.add_record(record("mem_1"))
        tx.put_data_key("mem_1", SCOPE, "kek-1", b"wrapped")
        assert tx.record(SCOPE, "mem_1") == record("mem_1")
        assert tx.data_key("mem_1") == ("kek-1", b"wrapped")
        tx.prefetch_data_keys(["mem_1"])
        tx.delete_data_key("mem_1")
        assert tx.data_key("mem_1") is None


def test_records_are_read_by_id_in_the_order_asked_and_only_in_their_scope(
    store: MemoryStore,
) -> None:
    with store.write() as tx:
        for name in ("mem_1", "mem_2", "mem_3"):
            tx.add_record(record(name))
        tx.add_record(record("mem_9", scope_id=OTHER))
    with store.read() as reader:
        assert reader.record(SCOPE, "mem_2") == record("mem_2")
        assert reader.record(SCOPE, "mem_9") is None
        assert reader.record(OTHER, "mem_9") == record("mem_9", scope_id=OTHER)
        found = reader.records(SCOPE, ["mem_3", "mem_9", "mem_missing", "mem_1"])
        assert [row.record_id for row in found] == ["mem_3", "mem_1"]
        assert reader.records(SCOPE, []) == []


def test_updating_a_record_changes_only_the_columns_named(store: MemoryStore) -> None:
    with store.write() as tx:
        tx.add_record(record("mem_1"))
        tx.update_record("mem_1", state="historical", valid_t_end=6_000, sealed=None)
    with store.read() as reader:
        assert reader.record(SCOPE, "mem_1") == record(
            "mem_1", state="historical", valid_t_end=6_000, sealed=None
        )


def test_a_record_with_a_payload_is_the_first_admitted_in_the_states_asked(
    store: MemoryStore,
) -> None:
    same = "sha256:" + "9" * 64
    with store.write() as tx:
        tx.add_record(record("mem_late", payload_digest=same, admitted_ms=3_000))
        tx.add_record(record("mem_early", payload_digest=same, admitted_ms=2000, expires_ms=2500))
        tx.add_record(
            record("mem_gone", payload_digest=same, admitted_ms=1_000, state="tombstoned")
        )
        tx.add_record(record("mem_other", scope_id=OTHER, payload_digest=same, admitted_ms=1))
        live = ("accepted_current", "accepted_disputed")
        assert tx.record_with_payload(SCOPE, same, live) == "mem_early"
        assert tx.record_with_payload(SCOPE, same, live, unexpired_at=2500) == "mem_late"
        assert tx.record_with_payload(SCOPE, same, live, unexpired_at=2_499) == "mem_early"
        assert tx.record_with_payload(SCOPE, same, ("tombstoned",)) == "mem_gone"
        assert tx.record_with_payload(SCOPE, "sha256:" + "8" * 64, live) is None


def test_data_keys_are_replaced_deleted_and_read_ahead_in_a_snapshot(store: MemoryStore) -> None:
    with store.write() as tx:
        tx.put_data_key("cand_1", SCOPE, "kek-1", b"one")
        tx.put_data_key("cand_1", SCOPE, "kek-2", b"two")
        tx.put_data_key("mem_1", SCOPE, "kek-1", b"three")
        tx.delete_data_key("mem_1")
        tx.delete_data_key("mem_never")
    with store.read() as reader:
        reader.prefetch_data_keys(["cand_1", "mem_1", "mem_never"])
        assert reader.data_key("cand_1") == ("kek-2", b"two")
        assert reader.data_key("mem_1") is None
        assert reader.data_key("mem_never") is None
        reader.prefetch_data_keys([])
        assert reader.data_key("cand_1") == ("kek-2", b"two")


def test_events_chain_per_scope_and_only_record_events_move_the_records_version(
    store: MemoryStore,
) -> None:
    first = {"operation": "capture", "at": 1_000, "target": "cand_1", "to_state": "pending"}
    second = {"operation": "admit", "at": 2_000, "target": "mem_1", "from_state": None}
    with store.write() as tx:
        assert tx.append_event(SCOPE, first, touches_records=False) == Event(
            1, event_digest(SCOPE, 1, GENESIS, first)
        )
        one = event_digest(SCOPE, 1, GENESIS, first)
        assert tx.append_event(SCOPE, second, touches_records=True) == Event(
            2, event_digest(SCOPE, 2, one, second)
        )
        tx.append_event(SCOPE, {"operation": "read"}, touches_records=False)
        tx.append_event(OTHER, {"operation": "admit"}, touches_records=True)
    two = event_digest(SCOPE, 2, one, second)
    third = event_digest(SCOPE, 3, two, {"operation": "read"})
    with store.read() as reader:
        assert reader.head(SCOPE) == Event(3, third)
        assert reader.records_version(SCOPE) == 2
        assert reader.records_version(OTHER) == 1
        assert reader.head("c" * 32) == Event(0, GENESIS)
        assert reader.records_version("c" * 32) == 0
        assert list(reader.journal(SCOPE)) == [
            (1, one, GENESIS, first),
            (2, two, one, second),
            (3, third, two, {"operation": "read"}),
        ]


def test_the_first_event_of_a_scope_that_leaves_records_alone_has_version_zero(
    store: MemoryStore,
) -> None:
    with store.write() as tx:
        tx.append_event(SCOPE, {"operation": "capture"}, touches_records=False)
    with store.read() as reader:
        assert reader.records_version(SCOPE) == 0


def test_an_idempotency_row_is_found_by_its_hashed_key_only(store: MemoryStore) -> None:
    row = IdempotencyRow("capture", "sha256:" + "5" * 64, {"candidate_id": "cand_1", "n": [1]})
    with store.write() as tx:
        tx.remember(SCOPE, "agent-a", "hmac-of-key", row)
        assert tx.idempotency(SCOPE, "agent-a", "hmac-of-key", hashed=True) == row
        assert tx.idempotency(SCOPE, "agent-a", "hmac-of-key", hashed=False) is None
        assert tx.idempotency(SCOPE, "agent-b", "hmac-of-key", hashed=True) is None
        assert tx.idempotency(OTHER, "agent-a", "hmac-of-key", hashed=True) is None
        assert tx.clear_idempotency_keys() == []


def test_remembering_a_key_twice_fails_the_write(store: MemoryStore) -> None:
    row = IdempotencyRow("capture", "sha256:" + "5" * 64, {})
    with store.write() as tx:
        tx.remember(SCOPE, "agent-a", "key", row)
    with pytest.raises(StoreUnavailable), store.write() as tx:
        tx.remember(SCOPE, "agent-a", "key", row)


def test_an_audit_entry_is_appended_once(store: MemoryStore) -> None:
    entry = AuditEntry("aud_1", SCOPE, 1_000, "search", "ok", {"principal": "a"}, {"q": "d"})
    with store.write() as tx:
        tx.audit(entry)
        tx.audit(dataclasses.replace(entry, outcome="refused"), if_absent=True)
    with pytest.raises(StoreUnavailable), store.write() as tx:
        tx.audit(dataclasses.replace(entry, outcome="refused"))
    with store.read() as reader:
        assert [found for _, found in reader.audit_page(SCOPE, None, None, None, None, 10)] == [
            entry
        ]


def _confirmation(request_id: str, **fields: object) -> ConfirmationRow:
    values: dict[str, object] = {
        "request_id": request_id,
        "scope_id": SCOPE,
        "principal": "agent-a",
        "tool": "forget",
        "target": "mem_1",
        "operation_digest": "sha256:" + "6" * 64,
        "created_ms": 1_000,
        "display": {"tool": "forget", "b": 1, "a": 2},
        "agent_id": "agent-id-1",
    }
    return ConfirmationRow(**(values | fields))  # type: ignore[arg-type]


def test_an_approval_is_live_until_spent_and_only_for_its_exact_operation(
    store: MemoryStore,
) -> None:
    digest = "sha256:" + "6" * 64
    with store.write() as tx:
        tx.add_confirmation(_confirmation("conf_b"))
        tx.add_confirmation(_confirmation("conf_a"))
        assert tx.live_approval(SCOPE, "agent-a", "forget", "mem_1", digest, 0) is None
        tx.approve_confirmation("conf_b", 5_000)
        tx.approve_confirmation("conf_a", 5_000)
        live = tx.live_approval(SCOPE, "agent-a", "forget", "mem_1", digest, 5_000)
        assert live == _confirmation("conf_a", approved_ms=5_000)
        assert tx.live_approval(SCOPE, "agent-a", "forget", "mem_1", digest, 5_001) is None
        assert tx.live_approval(SCOPE, "agent-b", "forget", "mem_1", digest, 0) is None
        assert tx.live_approval(SCOPE, "agent-a", "forget", "mem_2", digest, 0) is None
        assert tx.live_approval(SCOPE, "agent-a", "withdraw", "mem_1", digest, 0) is None
        tx.consume_confirmation("conf_a", 6_000)
        tx.consume_confirmation("conf_a", 7_000)
        assert tx.live_approval(SCOPE, "agent-a", "forget", "mem_1", digest, 0) == _confirmation(
            "conf_b", approved_ms=5_000
        )
    with store.read() as reader:
        assert reader.confirmation(SCOPE, "conf_a") == _confirmation(
            "conf_a", approved_ms=5_000, consumed_ms=6_000
        )
        assert reader.confirmation(OTHER, "conf_a") is None


def test_open_requests_are_neither_approved_nor_spent_and_an_asked_one_waits_till_spent(
    store: MemoryStore,
) -> None:
    digest = "sha256:" + "6" * 64
    with store.write() as tx:
        tx.add_confirmation(_confirmation("conf_1", created_ms=1_000))
        tx.add_confirmation(_confirmation("conf_2", created_ms=2_000, operation_digest="d2"))
        tx.add_confirmation(_confirmation("conf_3", created_ms=3_000, operation_digest="d3"))
        tx.add_confirmation(_confirmation("conf_4", created_ms=3_000, principal="agent-b"))
        assert tx.open_requests(SCOPE, "agent-a", 0) == 3
        assert tx.open_requests(SCOPE, "agent-a", 2_000) == 2
        tx.approve_confirmation("conf_2", 4_000)
        tx.consume_confirmation("conf_3", 4_000)  # denied: spent without an approval
        assert tx.open_requests(SCOPE, "agent-a", 0) == 1
        assert tx.open_request_exists(SCOPE, "agent-a", digest, 1_000)
        assert not tx.open_request_exists(SCOPE, "agent-a", digest, 1_001)
        assert tx.open_request_exists(SCOPE, "agent-a", "d2", 0)  # approved, not yet spent
        assert tx.open_request_exists(SCOPE, "agent-a", "d3", 0)  # denied
        tx.approve_confirmation("conf_1", 5_000)
        tx.consume_confirmation("conf_1", 5_000)
        assert not tx.open_request_exists(SCOPE, "agent-a", digest, 0)  # confirmed and spent
        assert tx.open_request_exists(SCOPE, "agent-b", digest, 0)


def test_a_second_request_of_the_same_id_fails_the_write(store: MemoryStore) -> None:
    with store.write() as tx:
        tx.add_confirmation(_confirmation("conf_1"))
    with pytest.raises(StoreUnavailable), store.write() as tx:
        tx.add_confirmation(_confirmation("conf_1"))


def test_a_revocation_covers_its_principal_or_with_star_every_principal_of_the_scope(
    store: MemoryStore,
) -> None:
    with store.write() as tx:
        tx.revoke(SCOPE, "agent-a", 1_000)
        tx.revoke(SCOPE, "agent-a", 2_000)
        tx.revoke(OTHER, "*", 1_000)
    with store.read() as reader:
        assert reader.is_revoked(SCOPE, "agent-a")
        assert not reader.is_revoked(SCOPE, "agent-b")
        assert reader.is_revoked(OTHER, "agent-b")
        assert reader.export_rows()["revocations"] == [
            {"scope_id": SCOPE, "principal": "agent-a", "revoked_ms": 2_000},
            {"scope_id": OTHER, "principal": "*", "revoked_ms": 1_000},
        ]
