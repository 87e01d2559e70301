"""``engram_memory_capture``: seal cited material as an encrypted pending candidate.

The engine's pipeline has answered a replay before this runs (a replay reuses
everything resolved at first capture, retention included). Order: retention and
reconciliation against the host policy, the gate when the host gates capture, then
sealing: the candidate's payload and evidence are encrypted under a fresh data
key; nothing of it is stored, logged or returned in the clear.
"""

from __future__ import annotations

from typing import Any

from engram.canonical import canonical_bytes, digest_bytes
from engram.crypto.ids import random_id
from engram.errors import InvalidSchema, Unauthorized
from engram.memory.call import Write
from engram.memory.gate import Operation
from engram.memory.journal import transaction_receipt_digest
from engram.memory.ports import CandidateRow
from engram.memory.records import record_body
from engram.memory.settings import HostPolicy
from engram.memory.validation import format_instant, parse_instant

__all__ = ["capture", "new_candidate_id", "resolve_retention"]


def new_candidate_id() -> str:
    return random_id("cand_", 32)


def resolve_retention(payload: dict[str, Any], policy: HostPolicy, now_ms: int) -> dict[str, Any]:
    """The concrete retention of a capture, or the contract's refusal."""
    asked = payload.get("retention", {})
    rule = asked.get("derivative_rule", "make-ineligible")
    if rule == "retain" and not policy.allow_retain:
        raise Unauthorized("retain is not allowed by host policy")
    ceiling = now_ms + policy.retention_max_ms
    if "expires_at" in asked:
        expires = parse_instant(asked["expires_at"])
        if expires is None or expires <= now_ms:
            raise InvalidSchema("expires_at is not after capture time")
        if expires > ceiling:
            raise Unauthorized("expires_at is beyond the host ceiling")
    else:
        expires = ceiling
    return {"derivative_rule": rule, "expires_at": format_instant(expires)}


def _check_families(payload: dict[str, Any], policy: HostPolicy) -> None:
    families = payload.get("reconciliation", {}).get("family_refs", [])
    if not set(families) <= policy.reconciliation_families:
        raise Unauthorized("reconciliation family without host consent")


def capture(step: Write) -> dict[str, Any]:
    """Capture inside the step's transaction; returns the output value."""
    binding, arguments, now_ms, vault = step.binding, step.arguments, step.now, step.services.vault
    tx, scope_id = step.tx, step.binding.scope.scope_id
    payload = arguments["payload"]
    retention = resolve_retention(payload, step.services.policy, now_ms)
    _check_families(payload, step.services.policy)
    if step.gate is not None:
        # The target a person sees: the key's digest, never the agent-written key.
        key = "key:" + step.idempotency.stored[:24]
        step.gate(Operation("capture", key, None, step.intent))
    candidate_id = new_candidate_id()
    body = record_body(candidate_id, binding, now_ms, arguments, retention)
    body_bytes = canonical_bytes(body)
    record_digest = digest_bytes("record", body_bytes)
    sealed = vault.seal(tx, candidate_id, scope_id, body_bytes)
    event = tx.append_event(
        scope_id,
        {
            "operation": "capture",
            "target": candidate_id,
            "from_state": None,
            "to_state": "pending",
            "at": now_ms,
            "actor": binding.actor,
            "record_digest": record_digest,
        },
        touches_records=False,
    )
    receipt = transaction_receipt_digest("capture", candidate_id, event, now_ms)
    tx.add_candidate(
        CandidateRow(
            candidate_id=candidate_id,
            scope_id=scope_id,
            principal=binding.principal,
            state="pending",
            payload_digest=body["payload_digest"],
            record_digest=record_digest,
            sealed=sealed,
            captured_ms=now_ms,
            retention=retention,
            capture_cursor=event.cursor,
        )
    )
    return {
        "status": "committed_pending",
        "candidate_id": candidate_id,
        "record_digest": record_digest,
        "cursor": str(event.cursor),
        "transaction_receipt_digest": receipt,
    }
