"""The operator's "no" (``Maintenance.deny``, ``engram host deny``, the console's Deny):
the request is spent without an approval, the agent's retry fails the gate, and the same
operation is not asked again until the request would have expired. On both backends."""

from __future__ import annotations

from typing import Any

import pytest

from engram.errors import GateFailed, NotFound
from engram.memory.gate import REQUEST_TTL_MS
from engram.memory.maintenance import Maintenance
from engram.testing import binding
from tests.memory.conftest import Memory

FORGET = {"idempotency_key": "forget-key-000000001", "reason_ref": "reason:obsolete"}


def _maintenance(memory: Memory) -> Maintenance:
    return Maintenance(memory.engine, binding().scope)


def _forget(memory: Memory, record_id: str) -> dict[str, Any]:
    envelope: dict[str, Any] = memory.call("forget", {"record_id": record_id, **FORGET})
    return envelope


def _asked(memory: Memory, record_id: str) -> str:
    assert _forget(memory, record_id)["error"]["code"] == "gate_failed"
    [request] = _maintenance(memory).pending().confirmations
    assert request.target == record_id
    return request.request_id


def test_a_denied_forget_is_refused_at_the_retry_and_the_record_stays(memory: Memory) -> None:
    record_id = memory.admit("Backups run nightly at 02:00 UTC.", "deny-1")
    request_id = _asked(memory, record_id)

    denied = _maintenance(memory).deny(request_id)

    assert (denied.tool, denied.target) == ("forget", record_id)
    retry = _forget(memory, record_id)
    assert retry["ok"] is False
    assert retry["error"]["code"] == "gate_failed"
    assert _maintenance(memory).pending().confirmations == []
    got = memory.value("get", {"record_id": record_id, "purpose_ref": binding().purpose_ref})
    assert got["record"]["record_id"] == record_id


def test_after_the_request_would_have_expired_the_agent_may_ask_again(memory: Memory) -> None:
    record_id = memory.admit("Backups run nightly at 02:00 UTC.", "deny-2")
    _maintenance(memory).deny(_asked(memory, record_id))

    memory.clock.now += REQUEST_TTL_MS + 1

    again = _asked(memory, record_id)
    assert again
    assert _maintenance(memory).pending().confirmations[0].request_id == again


def test_a_denial_is_journaled_with_the_request_and_the_chain_verifies(memory: Memory) -> None:
    record_id = memory.admit("Backups run nightly at 02:00 UTC.", "deny-3")
    request_id = _asked(memory, record_id)

    _maintenance(memory).deny(request_id)

    with memory.engine.store.read() as reader:
        *_, (_, _, _, body) = reader.journal(binding().scope.scope_id)
    assert {key: body[key] for key in ("operation", "target", "request_id", "tool")} == {
        "operation": "deny",
        "target": record_id,
        "request_id": request_id,
        "tool": "forget",
    }
    assert _maintenance(memory).verify() == 3


def test_a_request_cannot_be_denied_twice_or_approved_after_a_denial(memory: Memory) -> None:
    record_id = memory.admit("Backups run nightly at 02:00 UTC.", "deny-4")
    request_id = _asked(memory, record_id)
    _maintenance(memory).deny(request_id)

    with pytest.raises(GateFailed) as twice:
        _maintenance(memory).deny(request_id)
    with pytest.raises(GateFailed) as approved:
        _maintenance(memory).confirm(request_id)

    assert (
        twice.value.detail
        == approved.value.detail
        == (f"confirmation request {request_id} was already used")
    )


def test_denying_an_unknown_request_is_not_found(memory: Memory) -> None:
    with pytest.raises(NotFound):
        _maintenance(memory).deny("conf_" + "a" * 24)
