"""engram_memory_capture: sealing, idempotency, retention and host consent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engram.memory.settings import HostPolicy
from engram.testing import Clock, binding, capture_args
from tests.memory.conftest import Memory, open_memory

DAY = 86_400_000


def test_capture_returns_committed_pending_with_candidate_cursor_and_receipt(
    memory: Memory,
) -> None:
    value = memory.value("capture", capture_args())
    assert value["status"] == "committed_pending"
    assert re.fullmatch(r"cand_[a-z2-7]{32}", value["candidate_id"])
    assert value["cursor"] == "1"
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", value["transaction_receipt_digest"])
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", value["record_digest"])
    assert set(value) == {
        "status",
        "candidate_id",
        "cursor",
        "transaction_receipt_digest",
        "record_digest",
    }


@pytest.mark.real_stores
def test_pending_candidate_plaintext_never_reaches_the_store_file(memory: Memory) -> None:
    marker = "PLAINTEXT-MARKER-7f3a9c"
    memory.value("capture", capture_args(text=f"the secret recipe is {marker}"))
    memory.engine.store.checkpoint()
    data = memory.store_bytes()
    assert marker.encode() not in data
    assert marker.encode("utf-16-le") not in data


def test_same_key_and_content_is_duplicate_exact_with_the_same_candidate(memory: Memory) -> None:
    first = memory.value("capture", capture_args())
    again = memory.value("capture", capture_args())
    assert again == {**first, "status": "duplicate_exact"}


def test_idempotency_survives_a_restart_of_the_engine(tmp_path: Path, clock: Clock) -> None:
    first = open_memory(tmp_path, clock).value("capture", capture_args())
    reopened = open_memory(tmp_path, clock)
    assert reopened.value("capture", capture_args()) == {**first, "status": "duplicate_exact"}


def test_same_key_with_other_content_is_digest_conflict(memory: Memory) -> None:
    memory.value("capture", capture_args())
    assert memory.code("capture", capture_args(text="different content")) == "DIGEST_CONFLICT"


def test_same_key_for_another_tool_is_digest_conflict(memory: Memory) -> None:
    captured = memory.value("capture", capture_args(key="shared-key-000001"))
    admission = {"candidate_id": captured["candidate_id"], "idempotency_key": "shared-key-000001"}
    assert memory.code("request_admission", admission) == "DIGEST_CONFLICT"


def test_idempotency_keys_are_scoped_to_the_principal(memory: Memory) -> None:
    alice = memory.value("capture", capture_args(), binding(principal="alice"))
    bob = memory.value("capture", capture_args(), binding(principal="bob"))
    assert bob["status"] == "committed_pending"
    assert bob["candidate_id"] != alice["candidate_id"]


def test_a_retry_reuses_the_retention_resolved_at_first_capture(
    memory: Memory, clock: Clock
) -> None:
    expires = "2027-01-20T08:00:00.000Z"  # five days after NOW, within the 30-day ceiling
    arguments = capture_args(retention={"expires_at": expires})
    first = memory.value("capture", arguments)
    clock.now += 10 * DAY  # expires_at is now in the past: a fresh capture would be refused
    assert memory.value("capture", arguments) == {**first, "status": "duplicate_exact"}
    fresh = capture_args(key="another-key-000001", retention={"expires_at": expires})
    assert memory.code("capture", fresh) == "INVALID_SCHEMA"


def test_expires_at_not_after_capture_time_is_invalid_schema(memory: Memory) -> None:
    at_now = capture_args(retention={"expires_at": "2027-01-15T08:00:00.000Z"})
    assert memory.code("capture", at_now) == "INVALID_SCHEMA"


def test_expires_at_beyond_the_host_ceiling_is_unauthorized(memory: Memory) -> None:
    late = capture_args(retention={"expires_at": "2027-02-15T08:00:00.001Z"})
    assert memory.code("capture", late) == "UNAUTHORIZED"
    at_ceiling = capture_args(
        key="ceiling-key-00001", retention={"expires_at": "2027-02-14T08:00:00.000Z"}
    )
    assert memory.value("capture", at_ceiling)["status"] == "committed_pending"


def test_retain_needs_a_host_allowance(tmp_path: Path, clock: Clock) -> None:
    retain = capture_args(retention={"derivative_rule": "retain"})
    assert open_memory(tmp_path / "a", clock).code("capture", retain) == "UNAUTHORIZED"
    allowed = open_memory(tmp_path / "b", clock, HostPolicy(allow_retain=True))
    assert allowed.value("capture", retain)["status"] == "committed_pending"


def test_reconciliation_families_need_host_consent(tmp_path: Path, clock: Clock) -> None:
    families = capture_args(reconciliation={"family_refs": ["fam:a", "fam:b"]})
    assert open_memory(tmp_path / "a", clock).code("capture", families) == "UNAUTHORIZED"
    consenting = open_memory(
        tmp_path / "b", clock, HostPolicy(reconciliation_families=frozenset({"fam:a", "fam:b"}))
    )
    assert consenting.value("capture", families)["status"] == "committed_pending"


def test_a_refused_capture_writes_nothing_but_its_audit_entry(memory: Memory) -> None:
    memory.code("capture", capture_args(retention={"derivative_rule": "retain"}))
    with memory.engine.store.read() as reader:
        assert reader.head(binding().scope.scope_id).cursor == 0


def test_cursors_are_per_scope_and_monotonic(memory: Memory) -> None:
    cursors = [
        memory.value("capture", capture_args(key=f"key-number-{i:08d}"))["cursor"] for i in range(3)
    ]
    other = memory.value("capture", capture_args(), binding(tenant="tenant-b"))["cursor"]
    assert cursors == ["1", "2", "3"]
    assert other == "1"
