"""Lifecycle states and guards: only accepted_current is ever disclosed; illegal and
terminal transitions are refused; the tombstone guard holds forgotten content for the
host (issue 4, points 4 and 8)."""

from __future__ import annotations

from typing import Any

import pytest

from engram.errors import AlreadyTerminal, IllegalTransition, NotFound
from engram.memory.maintenance import Maintenance
from engram.testing import PURPOSE, binding, capture_args
from tests.memory.conftest import Memory

SCOPE_ID = binding().scope.scope_id
SECRET = "AKIA" + "Q7RZ4T2LX9MBN3VD"
TEXT = "Nightly builds publish to the staging bucket at 02:00 UTC."
QUERY = "nightly builds staging bucket"
UNKNOWN_RECORD = "mem_" + "a" * 52
TRANSITIONS = ("dispute", "undispute", "supersede", "expire", "invalidate_trust")


def _host(memory: Memory) -> Maintenance:
    return Maintenance(memory.engine, binding().scope)


def _get(memory: Memory, record_id: str) -> dict[str, Any]:
    return memory.call("get", {"record_id": record_id, "purpose_ref": PURPOSE})


def _candidate_state(memory: Memory, candidate_id: str) -> str:
    with memory.engine.store.read() as reader:
        candidate = reader.candidate(SCOPE_ID, candidate_id)
    assert candidate is not None
    return candidate.state


def _not_found_body(memory: Memory, record_id: str) -> dict[str, Any]:
    envelope = _get(memory, record_id)
    assert envelope["ok"] is False
    return {key: value for key, value in envelope.items() if key != "auditId"}


def _assert_hidden(memory: Memory, record_id: str) -> None:
    assert _not_found_body(memory, record_id) == _not_found_body(memory, UNKNOWN_RECORD)
    assert _get(memory, record_id)["error"] == {
        "code": "NOT_FOUND",
        "message": "The target is not available.",
        "retriable": False,
    }
    assert memory.found(QUERY) == []


def _assert_disclosed(memory: Memory, record_id: str) -> None:
    envelope = _get(memory, record_id)
    assert envelope["ok"] is True
    assert envelope["output"]["value"]["record"]["state"] == "accepted_current"
    assert memory.found(QUERY) == [record_id]


def _capture(memory: Memory, text: str, key: str, **arguments: Any) -> dict[str, Any]:
    args = capture_args(text=text, key=key)
    args.update(arguments)
    value: dict[str, Any] = memory.value("capture", args)
    return value


def _admission(memory: Memory, candidate_id: str, key: str) -> dict[str, Any]:
    return memory.call("request_admission", {"candidate_id": candidate_id, "idempotency_key": key})


def _gated(memory: Memory, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The host confirmation path: gate_failed, ``confirm``, then the agent's retry."""
    first = memory.call(tool, arguments)
    assert first["ok"] is False
    assert first["error"]["code"] == "gate_failed", first
    target = arguments.get("candidate_id") or arguments["record_id"]
    [request] = [row for row in _host(memory).pending().confirmations if row.target == target]
    _host(memory).confirm(request.request_id)
    return memory.call(tool, arguments)


def _forget_args(record_id: str, key: str = "forget-key-00000001") -> dict[str, Any]:
    return {"record_id": record_id, "idempotency_key": key, "reason_ref": "reason:obsolete"}


def _withdraw_args(candidate_id: str, key: str = "withdraw-key-000001") -> dict[str, Any]:
    return {"candidate_id": candidate_id, "idempotency_key": key, "reason_ref": "reason:wrong"}


def _forget(memory: Memory, record_id: str, key: str = "forget-key-00000001") -> dict[str, Any]:
    envelope = _gated(memory, "forget", _forget_args(record_id, key))
    assert envelope["ok"] is True, envelope
    value: dict[str, Any] = envelope["output"]["value"]
    return value


# --- one record through every state --------------------------------------------------


def test_one_record_is_disclosed_only_while_accepted_current_through_every_state(
    memory: Memory,
) -> None:
    captured = _capture(memory, TEXT, "walk.capture-0000001")
    assert memory.found(QUERY) == []
    assert _candidate_state(memory, captured["candidate_id"]) == "pending"
    outcome = _admission(memory, captured["candidate_id"], "walk.admission-00001")
    record_id = outcome["output"]["value"]["outcome"]["record_id"]
    assert memory.record_state(record_id) == "accepted_current"
    _assert_disclosed(memory, record_id)
    host = _host(memory)

    for operation, state, disclosed in (
        ("dispute", "accepted_disputed", False),
        ("undispute", "accepted_current", True),
        ("supersede", "historical", False),
        ("expire", "expired", False),
    ):
        assert host.transition(record_id, operation) == state
        assert memory.record_state(record_id) == state
        if disclosed:
            _assert_disclosed(memory, record_id)
        else:
            _assert_hidden(memory, record_id)

    forgotten = _forget(memory, record_id)
    assert (forgotten["receipt"]["from_state"], forgotten["receipt"]["to_state"]) == (
        "expired",
        "tombstoned",
    )
    assert memory.record_state(record_id) == "tombstoned"
    _assert_hidden(memory, record_id)
    with memory.engine.store.read() as reader:
        operations = [body["operation"] for *_, body in reader.journal(SCOPE_ID)]
    assert operations == [
        "capture",
        "admission",
        "dispute",
        "undispute",
        "supersede",
        "expire",
        "confirm",
        "tombstone",
    ]
    assert host.verify() == 8


def test_a_trust_invalidated_record_is_never_disclosed_and_can_still_be_forgotten(
    memory: Memory,
) -> None:
    record_id = memory.admit(TEXT, "trust")
    host = _host(memory)
    assert host.transition(record_id, "dispute") == "accepted_disputed"
    _assert_hidden(memory, record_id)

    assert host.transition(record_id, "invalidate_trust") == "trust_invalid"

    _assert_hidden(memory, record_id)
    forgotten = _forget(memory, record_id)
    assert forgotten["receipt"]["from_state"] == "trust_invalid"
    _assert_hidden(memory, record_id)


_PATHS: dict[str, tuple[str, ...]] = {
    "accepted_current": (),
    "accepted_disputed": ("dispute",),
    "historical": ("supersede",),
    "expired": ("expire",),
    "trust_invalid": ("invalidate_trust",),
}


@pytest.mark.parametrize("state", sorted(_PATHS))
def test_forget_works_from_every_admitted_state_and_reports_it(memory: Memory, state: str) -> None:
    record_id = memory.admit(TEXT, "forgettable")
    for operation in _PATHS[state]:
        _host(memory).transition(record_id, operation)

    forgotten = _forget(memory, record_id)

    assert forgotten["receipt"]["operation"] == "tombstone"
    assert forgotten["receipt"]["from_state"] == state
    assert forgotten["receipt"]["to_state"] == "tombstoned"
    assert forgotten["projection_invalidation"] == "complete"
    _assert_hidden(memory, record_id)


def test_candidates_in_every_state_are_never_disclosed(memory: Memory) -> None:
    pending = _capture(memory, TEXT, "pending.capture-00001")["candidate_id"]
    rejected = _capture(memory, f"{TEXT} Key {SECRET}.", "rejected.capture-0001")["candidate_id"]
    rejected_outcome = _admission(memory, rejected, "rejected.admission-1")
    assert rejected_outcome["output"]["value"]["outcome"]["status"] == "rejected"
    withdrawn = _capture(memory, f"{TEXT} Withdrawn.", "withdrawn.capture-001")["candidate_id"]
    assert _gated(memory, "withdraw", _withdraw_args(withdrawn))["ok"] is True

    assert [_candidate_state(memory, c) for c in (pending, rejected, withdrawn)] == [
        "pending",
        "rejected",
        "withdrawn",
    ]
    assert memory.found(QUERY) == []
    assert memory.found("withdrawn") == []
    assert memory.found(SECRET) == []


# --- illegal and terminal transitions -------------------------------------------------


_ILLEGAL = [
    ("accepted_current", "undispute"),
    ("accepted_disputed", "dispute"),
    *[("historical", op) for op in ("dispute", "undispute", "supersede")],
    *[("expired", op) for op in TRANSITIONS],
    *[("trust_invalid", op) for op in TRANSITIONS],
]


@pytest.mark.parametrize(("state", "operation"), _ILLEGAL)
def test_a_transition_the_state_forbids_is_illegal_and_changes_nothing(
    memory: Memory, state: str, operation: str
) -> None:
    record_id = memory.admit(TEXT, "illegal")
    host = _host(memory)
    for step in _PATHS[state]:
        host.transition(record_id, step)
    events = host.verify()

    with pytest.raises(IllegalTransition) as caught:
        host.transition(record_id, operation)

    assert caught.value.code == "ILLEGAL_TRANSITION"
    assert memory.record_state(record_id) == state
    assert host.verify() == events


@pytest.mark.parametrize("operation", TRANSITIONS)
def test_any_transition_of_a_tombstoned_record_is_already_terminal(
    memory: Memory, operation: str
) -> None:
    record_id = memory.admit(TEXT, "tombstoned")
    _forget(memory, record_id)

    with pytest.raises(AlreadyTerminal) as caught:
        _host(memory).transition(record_id, operation)

    assert caught.value.code == "ALREADY_TERMINAL"
    assert memory.record_state(record_id) == "tombstoned"


def test_an_unknown_transition_or_record_is_refused(memory: Memory) -> None:
    record_id = memory.admit(TEXT, "unknown-op")

    with pytest.raises(IllegalTransition):
        _host(memory).transition(record_id, "resurrect")
    with pytest.raises(NotFound):
        _host(memory).transition(UNKNOWN_RECORD, "dispute")
    with pytest.raises(NotFound):
        Maintenance(memory.engine, binding(tenant="tenant-b").scope).transition(
            record_id, "dispute"
        )
    assert memory.record_state(record_id) == "accepted_current"


def test_forgetting_a_tombstoned_record_again_is_already_terminal_without_a_confirmation(
    memory: Memory,
) -> None:
    record_id = memory.admit(TEXT, "twice-forgotten")
    first = _forget(memory, record_id)

    again = memory.call("forget", _forget_args(record_id, "forget-key-00000002"))
    replay = memory.value("forget", _forget_args(record_id))

    assert again["ok"] is False
    assert again["error"] == {
        "code": "ALREADY_TERMINAL",
        "message": "The target is already in a terminal state.",
        "retriable": False,
    }
    assert _host(memory).pending().confirmations == []
    assert replay["replayed"] is True
    assert replay["receipt"] == first["receipt"]


def test_withdrawing_a_rejected_candidate_is_already_terminal(memory: Memory) -> None:
    rejected = _capture(memory, f"Use {SECRET} to deploy.", "rejected.capture-0001")["candidate_id"]
    _admission(memory, rejected, "rejected.admission-1")

    envelope = memory.call("withdraw", _withdraw_args(rejected))

    assert envelope["error"]["code"] == "ALREADY_TERMINAL"
    assert envelope["error"]["retriable"] is False
    assert _host(memory).pending().confirmations == []
    assert _candidate_state(memory, rejected) == "rejected"


def test_when_admission_wins_the_race_withdrawal_never_becomes_forgetting(
    memory: Memory,
) -> None:
    candidate = _capture(memory, TEXT, "raced.capture-000001")["candidate_id"]
    first = memory.call("withdraw", _withdraw_args(candidate))
    assert first["error"]["code"] == "gate_failed"
    [request] = _host(memory).pending().confirmations
    admitted = _admission(memory, candidate, "raced.admission-0001")["output"]["value"]["outcome"]
    assert admitted["status"] == "accepted"
    _host(memory).confirm(request.request_id)

    retry = memory.call("withdraw", _withdraw_args(candidate))

    assert retry["ok"] is False
    assert retry["error"]["code"] == "ALREADY_TERMINAL"
    assert _candidate_state(memory, candidate) == "accepted"
    assert memory.record_state(admitted["record_id"]) == "accepted_current"
    _assert_disclosed(memory, admitted["record_id"])


def test_request_admission_of_a_withdrawn_candidate_is_already_terminal(memory: Memory) -> None:
    candidate = _capture(memory, TEXT, "withdrawn.capture-001")["candidate_id"]
    withdrawn = _gated(memory, "withdraw", _withdraw_args(candidate))
    assert withdrawn["output"]["value"]["receipt"]["to_state"] == "withdrawn"

    envelope = _admission(memory, candidate, "withdrawn.admission-1")

    assert envelope["error"]["code"] == "ALREADY_TERMINAL"
    assert _candidate_state(memory, candidate) == "withdrawn"
    assert memory.found(QUERY) == []


# --- the tombstone guard ----------------------------------------------------------------


def _payload_digest_of_record(memory: Memory, record_id: str) -> str:
    with memory.engine.store.read() as reader:
        record = reader.record(SCOPE_ID, record_id)
    assert record is not None
    return record.payload_digest


def _payload_digest_of_candidate(memory: Memory, candidate_id: str) -> str:
    with memory.engine.store.read() as reader:
        candidate = reader.candidate(SCOPE_ID, candidate_id)
    assert candidate is not None
    return candidate.payload_digest


def test_forgotten_content_captured_again_is_held_for_the_host_to_adjudicate(
    memory: Memory,
) -> None:
    original = memory.value("capture", capture_args(text=TEXT, key="origin.capture-00001"))
    first = _admission(memory, original["candidate_id"], "origin.admission-001")
    forgotten_id = first["output"]["value"]["outcome"]["record_id"]
    _forget(memory, forgotten_id)

    again = memory.value("capture", capture_args(text=TEXT, key="again.capture-000001"))
    assert again["status"] == "committed_pending"
    held = _admission(memory, again["candidate_id"], "again.admission-0001")["output"]["value"]
    assert held["replayed"] is False
    assert held["outcome"]["status"] == "pending_adjudication"
    assert "record_id" not in held["outcome"]
    assert _candidate_state(memory, again["candidate_id"]) == "pending_adjudication"
    assert memory.found(QUERY) == []

    replay = memory.value("capture", capture_args(text=TEXT, key="origin.capture-00001"))
    assert replay["status"] == "duplicate_exact"
    assert replay["candidate_id"] == original["candidate_id"]
    assert replay["cursor"] == original["cursor"]

    another = memory.value("capture", capture_args(text=TEXT, key="another.capture-0001"))
    held_too = _admission(memory, another["candidate_id"], "another.admission-01")
    assert held_too["output"]["value"]["outcome"]["status"] == "pending_adjudication"
    assert _host(memory).pending().adjudications == [again["candidate_id"], another["candidate_id"]]

    record_id = _host(memory).adjudicate(again["candidate_id"], accept=True)

    assert record_id is not None
    assert record_id.startswith("mem_")
    assert record_id != forgotten_id
    _assert_disclosed(memory, record_id)
    assert _candidate_state(memory, again["candidate_id"]) == "accepted"
    assert _host(memory).adjudicate(another["candidate_id"], accept=False) is None
    assert _candidate_state(memory, another["candidate_id"]) == "rejected"
    assert _host(memory).pending().adjudications == []
    assert memory.found(QUERY) == [record_id]
    with pytest.raises(AlreadyTerminal):
        _host(memory).adjudicate(another["candidate_id"], accept=True)
    with memory.engine.store.read() as reader:
        assert reader.data_key(another["candidate_id"]) is None
    assert _host(memory).verify() > 0


def test_an_ordinary_rejection_of_forgotten_content_stays_rejected(memory: Memory) -> None:
    forgotten_id = memory.admit(TEXT, "origin")
    _forget(memory, forgotten_id)
    arguments = capture_args(text=TEXT, key="secret.capture-00001")
    arguments["evidence"]["evidence_ref"] = f"ev:{SECRET}"

    captured = memory.value("capture", arguments)
    envelope = _admission(memory, captured["candidate_id"], "secret.admission-001")

    assert _payload_digest_of_candidate(memory, captured["candidate_id"]) == (
        _payload_digest_of_record(memory, forgotten_id)
    )
    outcome = envelope["output"]["value"]["outcome"]
    assert outcome["status"] == "rejected"
    assert "record_id" not in outcome
    assert SECRET not in str(envelope)
    assert _host(memory).pending().adjudications == []


def test_a_candidate_that_is_not_held_cannot_be_adjudicated(memory: Memory) -> None:
    pending = _capture(memory, TEXT, "pending.capture-00001")["candidate_id"]
    accepted = memory.value("capture", capture_args(text="Other.", key="other.capture-000001"))
    _admission(memory, accepted["candidate_id"], "other.admission-0001")

    with pytest.raises(IllegalTransition):
        _host(memory).adjudicate(pending, accept=True)
    with pytest.raises(AlreadyTerminal):
        _host(memory).adjudicate(accepted["candidate_id"], accept=True)
    with pytest.raises(NotFound):
        _host(memory).adjudicate("cand_" + "a" * 32, accept=True)
    assert _candidate_state(memory, pending) == "pending"
