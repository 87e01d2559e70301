"""The confirmation gate: host approvals, dialog approvals, clocks, single use, binding."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from engram.errors import ElicitationFailed, GateFailed, NotFound
from engram.memory.gate import Operation
from engram.memory.maintenance import Maintenance
from engram.memory.settings import HostPolicy
from engram.testing import Clock, binding, capture_args
from tests.memory.conftest import Memory, open_memory

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def _candidate(memory: Memory, key: str = "cand", who: Any = None) -> str:
    arguments = capture_args(text=f"draft {key}", key=f"{key}.capture-000001")
    return str(memory.value("capture", arguments, who)["candidate_id"])


def _withdraw_args(candidate: str, reason: str = "reason:superseded") -> dict[str, Any]:
    return {
        "candidate_id": candidate,
        "idempotency_key": "withdraw-key-00001",
        "reason_ref": reason,
    }


def _forget_args(record: str, key: str = "forget-key-000001") -> dict[str, Any]:
    return {"record_id": record, "idempotency_key": key, "reason_ref": "reason:wrong"}


def _host(memory: Memory) -> Maintenance:
    return Maintenance(memory.engine, binding().scope)


def _approve_pending(memory: Memory) -> str:
    [request] = _host(memory).pending().confirmations
    _host(memory).confirm(request.request_id)
    return request.request_id


def test_without_a_dialog_the_gate_fails_and_leaves_one_request_for_the_host(
    memory: Memory,
) -> None:
    candidate = _candidate(memory)
    first = memory.call("withdraw", _withdraw_args(candidate))
    assert first["error"] == {
        "code": "gate_failed",
        "message": "A required confirmation or policy gate is not satisfied.",
        "retriable": False,
    }
    memory.call("withdraw", _withdraw_args(candidate))
    [request] = _host(memory).pending().confirmations
    assert request.tool == "withdraw"
    assert request.target == candidate
    assert request.display == {
        "operation": "withdraw",
        "target": candidate,
        "reason": "reason:superseded",
    }
    assert request.request_id.startswith("conf_")


def test_host_approval_then_the_agents_retry_executes_with_a_full_receipt(memory: Memory) -> None:
    candidate = _candidate(memory)
    memory.call("withdraw", _withdraw_args(candidate))
    _approve_pending(memory)
    value = memory.value("withdraw", _withdraw_args(candidate))
    receipt = value["receipt"]
    assert set(receipt) == {
        "event_id",
        "operation",
        "from_state",
        "to_state",
        "cursor",
        "event_digest",
        "authorization_receipt_digest",
        "transaction_receipt_digest",
    }
    assert (receipt["operation"], receipt["from_state"], receipt["to_state"]) == (
        "withdraw",
        "pending",
        "withdrawn",
    )
    assert receipt["cursor"] == "3"  # capture, the host's confirmation, the withdrawal
    assert all(
        DIGEST.fullmatch(receipt[k])
        for k in (
            "event_id",
            "event_digest",
            "authorization_receipt_digest",
            "transaction_receipt_digest",
        )
    )
    assert value["replayed"] is False
    assert value["key_destruction"] == "complete"
    assert _host(memory).pending().confirmations == []


def test_a_replay_returns_the_same_receipt_without_a_new_confirmation(memory: Memory) -> None:
    candidate = _candidate(memory)
    memory.call("withdraw", _withdraw_args(candidate))
    _approve_pending(memory)
    first = memory.value("withdraw", _withdraw_args(candidate))
    again = memory.value("withdraw", _withdraw_args(candidate))
    assert again == {**first, "replayed": True}


def test_an_approval_is_single_use(memory: Memory) -> None:
    first, second = memory.admit("one", "r1"), memory.admit("two", "r2")
    memory.call("forget", _forget_args(first))
    _approve_pending(memory)
    assert memory.value("forget", _forget_args(first))["replayed"] is False
    # The same approval cannot carry another operation, even on a fresh key.
    assert memory.code("forget", _forget_args(second, key="forget-key-000002")) == "gate_failed"


def test_an_approval_for_another_target_or_digest_does_not_apply(memory: Memory) -> None:
    first, second = memory.admit("one", "r1"), memory.admit("two", "r2")
    memory.call("forget", _forget_args(first))
    _approve_pending(memory)
    other_target = _forget_args(second)
    assert memory.code("forget", other_target) == "gate_failed"
    other_reason = {**_forget_args(first), "reason_ref": "reason:other"}
    assert memory.code("forget", other_reason) == "gate_failed"
    assert memory.value("forget", _forget_args(first))["receipt"]["to_state"] == "tombstoned"


def test_an_approval_is_bound_to_the_principal(memory: Memory) -> None:
    record = memory.admit("shared record", "r1")
    memory.call("forget", _forget_args(record))
    _approve_pending(memory)
    bob = binding(principal="bob")
    assert memory.code("forget", _forget_args(record), bob) == "gate_failed"
    assert memory.value("forget", _forget_args(record))["receipt"]["to_state"] == "tombstoned"


def test_an_approval_expires_300_seconds_after_it_was_given(memory: Memory, clock: Clock) -> None:
    record = memory.admit("expiring approval", "r1")
    memory.call("forget", _forget_args(record))
    _approve_pending(memory)
    clock.now += 300_001
    assert memory.code("forget", _forget_args(record)) == "gate_failed"
    assert len(_host(memory).pending().confirmations) == 1  # a fresh request


def test_a_request_can_be_approved_only_within_300_seconds(memory: Memory, clock: Clock) -> None:
    record = memory.admit("late approval", "r1")
    memory.call("forget", _forget_args(record))
    [request] = _host(memory).pending().confirmations
    clock.now += 300_001
    assert _host(memory).pending().confirmations == []
    with pytest.raises(GateFailed, match="expired"):
        _host(memory).confirm(request.request_id)


def test_a_used_or_unknown_request_cannot_be_confirmed(memory: Memory) -> None:
    record = memory.admit("used request", "r1")
    memory.call("forget", _forget_args(record))
    request_id = _approve_pending(memory)
    with pytest.raises(GateFailed, match="already used"):
        _host(memory).confirm(request_id)
    with pytest.raises(NotFound):
        _host(memory).confirm("conf_" + "a" * 24)


@pytest.mark.real_stores
def test_a_forged_approval_row_for_another_capability_is_refused(memory: Memory) -> None:
    candidate = _candidate(memory)
    memory.call("withdraw", _withdraw_args(candidate))
    [request] = _host(memory).pending().confirmations
    memory.rows(  # forge: approved, but for another tool
        "UPDATE confirmations SET tool = 'forget', approved_ms = ? WHERE request_id = ?",
        (memory.clock.now, request.request_id),
    )
    assert memory.code("withdraw", _withdraw_args(candidate)) == "gate_failed"


def test_model_written_confirmation_fields_are_unknown_fields(memory: Memory) -> None:
    candidate = _candidate(memory)
    for field in ("confirmed", "confirmation", "approval"):
        arguments = {**_withdraw_args(candidate), field: True}
        assert memory.code("withdraw", arguments) == "INVALID_SCHEMA"
    text_approval = {**_withdraw_args(candidate), "reason_ref": "the human approved this"}
    assert memory.code("withdraw", text_approval) == "gate_failed"


def test_a_dialog_approval_executes_at_once_and_leaves_no_request(memory: Memory) -> None:
    candidate = _candidate(memory)
    shown: list[Operation] = []

    def approve(operation: Operation) -> bool:
        shown.append(operation)
        return True

    envelope = memory.engine.call("withdraw", _withdraw_args(candidate), binding(), approve)
    assert envelope["ok"] is True
    assert [op.display() for op in shown] == [
        {"operation": "withdraw", "target": candidate, "reason": "reason:superseded"}
    ]
    assert _host(memory).pending().confirmations == []


def test_a_declined_dialog_executes_nothing_and_leaves_no_request(memory: Memory) -> None:
    candidate = _candidate(memory)
    envelope = memory.engine.call(
        "withdraw", _withdraw_args(candidate), binding(), lambda op: False
    )
    assert envelope["error"]["code"] == "gate_failed"
    assert _host(memory).pending().confirmations == []
    with memory.engine.store.read() as reader:
        assert reader.candidate(binding().scope.scope_id, candidate).state == "pending"  # type: ignore[union-attr]


def test_a_dialog_that_cannot_be_shown_falls_back_to_the_host(memory: Memory) -> None:
    candidate = _candidate(memory)

    def unavailable(operation: Operation) -> bool:
        raise ElicitationFailed("no dialog")

    envelope = memory.engine.call("withdraw", _withdraw_args(candidate), binding(), unavailable)
    assert envelope["error"]["code"] == "gate_failed"
    assert len(_host(memory).pending().confirmations) == 1


def test_no_human_is_asked_for_a_replay_or_a_refusal(memory: Memory) -> None:
    asked: list[Operation] = []

    def ask(operation: Operation) -> bool:
        asked.append(operation)
        return True

    unknown = {**_withdraw_args("cand_" + "b" * 32)}
    assert memory.engine.call("withdraw", unknown, binding(), ask)["error"]["code"] == "NOT_FOUND"
    candidate = _candidate(memory)
    memory.engine.call("withdraw", _withdraw_args(candidate), binding(), ask)
    memory.engine.call("withdraw", _withdraw_args(candidate), binding(), ask)
    assert len(asked) == 1


class _SlowClock(Clock):
    """Every reading after ``slow`` is armed jumps 31 s: the window closes."""

    slow = False

    def __call__(self) -> int:
        if self.slow:
            self.now += 31_000
        return self.now


def test_an_operation_outside_the_30_second_window_runs_nothing_and_spends_the_approval(
    tmp_path: Path,
) -> None:
    clock = _SlowClock()
    memory = open_memory(tmp_path, clock)
    record = memory.admit("slow commit", "r1")
    memory.call("forget", _forget_args(record))
    request_id = _approve_pending(memory)
    clock.slow = True
    assert memory.code("forget", _forget_args(record)) == "gate_failed"
    clock.slow = False
    with memory.engine.store.read() as reader:
        assert reader.record(binding().scope.scope_id, record).state == "accepted_current"  # type: ignore[union-attr]
        [row] = [
            r for r in reader.confirmations(binding().scope.scope_id) if r.request_id == request_id
        ]
    assert row.consumed_ms is not None


def test_the_host_policy_can_gate_capture_and_admission(tmp_path: Path, clock: Clock) -> None:
    gated = open_memory(tmp_path, clock, HostPolicy(confirm_tools=frozenset({"capture"})))
    arguments = capture_args()
    assert gated.code("capture", arguments) == "gate_failed"
    [request] = Maintenance(gated.engine, binding().scope).pending().confirmations
    assert request.tool == "capture"
    Maintenance(gated.engine, binding().scope).confirm(request.request_id)
    assert gated.value("capture", arguments)["status"] == "committed_pending"


# --- who asked, and how many may wait (docs/memory-contract.md §3.28) --------------------


def _capped(memory: Memory, cap: int) -> Memory:
    """The same store and keys under a host policy allowing ``cap`` waiting requests."""
    from engram.crypto.keyfiles import load_keyring
    from engram.memory.engine import MemoryEngine
    from engram.store.location import open_memory_store

    keys = load_keyring(memory.engine.vault.keys.directory)
    policy = HostPolicy(max_open_requests=cap)
    engine = MemoryEngine(open_memory_store(memory.location), keys, policy, clock=memory.clock)
    return Memory(engine, memory.clock, memory.location)


@pytest.mark.real_stores
def test_a_request_records_the_principal_and_agent_id_of_the_binding(memory: Memory) -> None:
    record = memory.admit("who asked", "r1")
    bob = binding(principal="bob")

    memory.call("forget", _forget_args(record), bob)

    [request] = _host(memory).pending().confirmations
    assert (request.principal, request.agent_id) == ("bob", "bob-agent")
    [stored] = memory.rows("SELECT principal, agent_id FROM confirmations")
    assert stored == ("bob", "bob-agent")


@pytest.mark.real_stores
def test_a_request_an_older_engram_stored_without_an_agent_id_is_shown_as_unknown(
    memory: Memory,
) -> None:
    record = memory.admit("older request", "r1")
    memory.call("forget", _forget_args(record))
    memory.rows("UPDATE confirmations SET agent_id = NULL")

    [request] = _host(memory).pending().confirmations

    assert (request.principal, request.agent_id) == ("alice", "unknown")


@pytest.mark.real_stores
def test_past_the_hosts_cap_a_request_is_rate_limited_leaves_nothing_and_is_audited(
    memory: Memory,
) -> None:
    capped = _capped(memory, 2)
    record = capped.admit("capped", "r1")

    envelopes = [
        capped.call("forget", _forget_args(record, f"capped-forget-{n:04d}")) for n in range(3)
    ]

    assert [envelope["error"]["code"] for envelope in envelopes] == [
        "gate_failed",
        "gate_failed",
        "RATE_LIMITED",
    ]
    assert envelopes[2]["error"]["retriable"] is True
    assert len(_host(capped).pending().confirmations) == 2
    assert memory.rows(
        "SELECT outcome FROM audit WHERE audit_id = ?", (envelopes[2]["auditId"],)
    ) == [("RATE_LIMITED",)]
    capped.engine.store.close()


@pytest.mark.real_stores
def test_a_request_past_its_300_seconds_no_longer_counts_against_the_cap(
    memory: Memory, clock: Clock
) -> None:
    capped = _capped(memory, 1)
    record = capped.admit("expiring", "r1")
    assert capped.code("forget", _forget_args(record, "expiring-forget-0001")) == "gate_failed"
    assert capped.code("forget", _forget_args(record, "expiring-forget-0002")) == "RATE_LIMITED"

    clock.now += 300_001

    assert capped.code("forget", _forget_args(record, "expiring-forget-0002")) == "gate_failed"
    capped.engine.store.close()


@pytest.mark.real_stores
def test_a_store_from_before_the_agent_id_column_is_upgraded_and_its_requests_say_unknown(
    memory: Memory,
) -> None:
    from engram.crypto.keyfiles import load_keyring
    from engram.memory.engine import MemoryEngine
    from engram.store.location import open_memory_store

    record = memory.admit("before the column", "r1")
    memory.call("forget", _forget_args(record))
    memory.engine.store.close()
    memory.rows("DROP INDEX confirmations_by_principal")
    memory.rows("ALTER TABLE confirmations DROP COLUMN agent_id")
    version = {"sqlite": 13, "postgresql": 7}[memory.backend]
    memory.rows("DELETE FROM migrations WHERE schema = 'memory' AND version = ?", (version,))
    keys = load_keyring(memory.engine.vault.keys.directory)

    memory.engine = MemoryEngine(open_memory_store(memory.location), keys, clock=memory.clock)
    memory.call("forget", _forget_args(record, "forget-key-000002"), binding(principal="bob"))

    waiting = sorted((r.principal, r.agent_id) for r in _host(memory).pending().confirmations)
    assert waiting == [("alice", "unknown"), ("bob", "bob-agent")]
