"""engram_memory_request_admission: policy outcomes, replays, lifecycle guards."""

from __future__ import annotations

import re
from typing import Any

from engram.memory.admission import Decision
from engram.testing import PURPOSE, binding, capture_args
from tests.memory.conftest import Memory


def _captured(memory: Memory, text: str = "Builds are reproducible.", key: str = "k") -> str:
    args = capture_args(text=text, key=f"{key}.capture-00000001")
    return str(memory.value("capture", args)["candidate_id"])


def _admit(memory: Memory, candidate_id: str, key: str = "admission-key-0001", **kw: Any) -> Any:
    return memory.call(
        "request_admission", {"candidate_id": candidate_id, "idempotency_key": key}, **kw
    )


def test_default_policy_accepts_cited_clean_content_with_a_record_id(memory: Memory) -> None:
    candidate = _captured(memory)
    value = _admit(memory, candidate)["output"]["value"]
    outcome = value["outcome"]
    assert value["replayed"] is False
    assert outcome["status"] == "accepted"
    assert outcome["candidate_id"] == candidate
    assert re.fullmatch(r"mem_[a-z2-7]{52}", outcome["record_id"])
    assert outcome["cursor"] == "2"
    assert set(outcome) == {
        "status",
        "candidate_id",
        "record_id",
        "cursor",
        "decision_receipt_digest",
        "transaction_receipt_digest",
    }


def test_record_id_is_the_base32_of_the_record_digest_announced_at_capture(memory: Memory) -> None:
    import base64

    captured = memory.value("capture", capture_args())
    outcome = _admit(memory, captured["candidate_id"])["output"]["value"]["outcome"]
    raw = bytes.fromhex(captured["record_digest"].removeprefix("sha256:"))
    assert outcome["record_id"] == "mem_" + base64.b32encode(raw).decode().rstrip("=").lower()


def test_a_replay_returns_the_stored_outcome_with_replayed_true(memory: Memory) -> None:
    candidate = _captured(memory)
    first = _admit(memory, candidate)["output"]["value"]
    again = _admit(memory, candidate)["output"]["value"]
    assert again == {"outcome": first["outcome"], "replayed": True}


def test_credential_like_content_is_rejected_without_echoing_it(memory: Memory) -> None:
    secret = "AKIA" + "Q7RZ4T2LX9MBN3VD"
    candidate = _captured(memory, text=f"deploy with aws key {secret}")
    envelope = _admit(memory, candidate)
    outcome = envelope["output"]["value"]["outcome"]
    assert outcome["status"] == "rejected"
    assert "record_id" not in outcome
    assert secret not in str(envelope)


def test_unknown_foreign_and_other_principals_candidates_are_not_found(memory: Memory) -> None:
    candidate = _captured(memory)
    unknown = "cand_" + "a" * 32
    assert _admit(memory, unknown)["error"]["code"] == "NOT_FOUND"
    other_tenant = _admit(memory, candidate, who=binding(tenant="tenant-b"))
    other_principal = _admit(memory, candidate, who=binding(principal="bob"))
    assert other_tenant["error"]["code"] == "NOT_FOUND"
    assert other_principal["error"]["code"] == "NOT_FOUND"


def test_a_decided_candidate_refuses_a_new_admission_key(memory: Memory) -> None:
    accepted = _captured(memory, key="one")
    _admit(memory, accepted)
    assert _admit(memory, accepted, key="admission-key-0002")["error"]["code"] == (
        "ALREADY_TERMINAL"
    )


def test_identical_content_already_current_is_duplicate_exact_naming_that_record(
    memory: Memory,
) -> None:
    first = _admit(memory, _captured(memory, key="a"))["output"]["value"]["outcome"]
    second = _admit(memory, _captured(memory, key="b"), key="admission-key-0002")
    outcome = second["output"]["value"]["outcome"]
    assert outcome["status"] == "duplicate_exact"
    assert outcome["record_id"] == first["record_id"]


def test_identical_content_whose_record_expired_is_admitted_as_a_new_record(
    memory: Memory,
) -> None:
    first = _admit(memory, _captured(memory, key="a"))["output"]["value"]["outcome"]
    memory.clock.now += 31 * 86_400_000  # past the default 30-day ceiling; no sweep ran

    second = _admit(memory, _captured(memory, key="b"), key="admission-key-0002")
    outcome = second["output"]["value"]["outcome"]
    assert outcome["status"] == "accepted"
    assert outcome["record_id"] != first["record_id"]
    get = {"record_id": outcome["record_id"], "purpose_ref": PURPOSE}
    assert memory.value("get", get)["record"]["record_id"] == outcome["record_id"]
    stale = {"record_id": first["record_id"], "purpose_ref": PURPOSE}
    assert memory.call("get", stale)["error"]["code"] == "NOT_FOUND"


class _Slow:
    policy_id = "slow"

    def decide(self, record: dict[str, Any], now_ms: int) -> Decision:
        return Decision(True, self.policy_id, now_ms - 300_001)


def test_a_decision_older_than_300_seconds_is_policy_stale_and_retriable(memory: Memory) -> None:
    candidate = _captured(memory)
    memory.engine.admission_policy = _Slow()
    envelope = _admit(memory, candidate)
    assert envelope["error"] == {
        "code": "POLICY_STALE",
        "message": "The host policy decision is stale; retry.",
        "retriable": True,
    }


def test_a_file_verifier_rejects_a_citation_whose_digest_does_not_match(
    tmp_path: Any, clock: Any
) -> None:
    import hashlib

    from engram.memory.admission import DefaultAdmissionPolicy
    from tests.memory.conftest import open_memory

    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "release.md").write_bytes(b"cited content")
    memory = open_memory(tmp_path / "store", clock)
    memory.engine.admission_policy = DefaultAdmissionPolicy(repo)
    good = _captured(memory, key="good")  # capture_args cites docs/release.md with this digest
    assert (
        "sha256:" + hashlib.sha256(b"cited content").hexdigest()
        == capture_args()["payload"]["citations"][0]["content_digest"]
    )
    assert _admit(memory, good)["output"]["value"]["outcome"]["status"] == "accepted"
    (repo / "docs" / "release.md").write_bytes(b"edited since")
    changed = _captured(memory, text="Another fact.", key="bad")
    outcome = _admit(memory, changed, key="admission-key-0002")["output"]["value"]["outcome"]
    assert outcome["status"] == "rejected"
