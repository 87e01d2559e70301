"""``engram_memory_request_admission``: the host's policy decides on a pending candidate.

The policy is a small interface (:class:`AdmissionPolicy`); the default accepts a
candidate whose citations and evidence resolve and whose text holds nothing
credential-like. Around the policy's verdict the engine applies the contract's
rules: an accepting verdict on content identical to a current record in the scope is
``duplicate_exact`` (naming that record); on content identical to a *tombstoned*
record it is held as ``pending_adjudication`` for the host; a decision older than
300 s (or dated in the future) is ``POLICY_STALE``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from engram.canonical import canonical_bytes, digest, digest_bytes, record_id_from_digest
from engram.errors import NotFound, PolicyStale
from engram.memory.call import Write
from engram.memory.gate import Operation
from engram.memory.journal import transaction_receipt_digest
from engram.memory.lifecycle import check_candidate
from engram.memory.ports import MemoryTransaction, RecordRow
from engram.memory.records import index_text
from engram.memory.validation import format_instant, parse_instant
from engram.memory.vault import Vault

__all__ = [
    "DECISION_MAX_AGE_MS",
    "AdmissionPolicy",
    "Decision",
    "DefaultAdmissionPolicy",
    "admit_record",
    "request_admission",
]

DECISION_MAX_AGE_MS: Final = 300_000


@dataclass(frozen=True)
class Decision:
    """A policy verdict: accept or not, with reason codes (never content)."""

    accept: bool
    policy_id: str
    decided_ms: int
    reasons: tuple[str, ...] = field(default_factory=tuple)


class AdmissionPolicy(Protocol):
    """Decides whether a candidate's record may be admitted."""

    policy_id: str

    def decide(self, record: dict[str, Any], now_ms: int) -> Decision:
        """``record`` is the full record body the candidate would become."""
        ...


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _reading(content: dict[str, Any], evidence: dict[str, Any]) -> list[str]:
    """What a reader reads of a record, in order: each component's text, then the
    evidence attestation. A credential split between them is whole to the reader; the ids,
    kinds and refs between them in the record are not read with them."""
    texts = [str(component["text"]) for component in content["components"]]
    if evidence.get("attestation"):
        texts.append(str(evidence["attestation"]))
    return texts


class DefaultAdmissionPolicy:
    """Accept when citations and evidence resolve and no secret-like content appears.

    With a ``verifier_root`` (the host's checkout of the cited repository), a citation
    whose locator scheme is ``file`` must name a file under that root whose bytes hash
    to its ``content_digest`` (SHA-256 of the exact bytes); other schemes stay
    assertions, as the contract allows.
    """

    policy_id = "engram.admission.default/v1"

    def __init__(self, verifier_root: Path | None = None) -> None:
        self.verifier_root = verifier_root

    def decide(self, record: dict[str, Any], now_ms: int) -> Decision:
        from engram.safety.disguise import contains_disguised_secret

        content, evidence = record["content"], record["evidence"]
        citations = {citation["citation_id"] for citation in content["citations"]}
        reasons = []
        if not all(set(c["citation_ids"]) <= citations for c in content["components"]):
            reasons.append("citation_unresolved")
        if not set(evidence["citation_ids"]) <= citations:
            reasons.append("evidence_unresolved")
        if contains_disguised_secret(
            _reading(content, evidence), alone=_strings([content, evidence])
        ):
            reasons.append("secret_detected")
        if self.verifier_root is not None and not all(
            self._verified(citation) for citation in content["citations"]
        ):
            reasons.append("citation_digest_mismatch")
        return Decision(not reasons, self.policy_id, now_ms, tuple(reasons))

    def _verified(self, citation: dict[str, Any]) -> bool:
        from engram.memory.citations import citation_state

        if self.verifier_root is None:
            return True
        return citation_state(citation, self.verifier_root) in ("ok", "unchecked")


def request_admission(step: Write, policy: AdmissionPolicy | None = None) -> dict[str, Any]:
    """Decide inside the step's transaction; returns the output value. ``policy`` is the
    engine's admission policy unless given (benchmarks that script a refusal).

    Whatever the admission policy decides, a record whose body is larger than the host's
    ``max_record_bytes`` is rejected with the reason ``record_too_large``.
    """
    tx, vault, binding, now_ms = step.tx, step.services.vault, step.binding, step.now
    scope_id = binding.scope.scope_id
    candidate = tx.candidate(scope_id, step.arguments["candidate_id"])
    if candidate is None or candidate.principal != binding.principal:
        raise NotFound()
    check_candidate(candidate.state, {"pending"})
    if step.gate is not None:
        step.gate(Operation("request_admission", candidate.candidate_id, None, step.intent))
    # The sealed plaintext is the record body's canonical bytes (sealed at capture).
    plaintext = vault.open(tx, candidate.candidate_id, scope_id, candidate.sealed)
    body = json.loads(plaintext)
    decision = (policy or step.services.admission_policy).decide(body, now_ms)
    if not 0 <= now_ms - decision.decided_ms <= DECISION_MAX_AGE_MS:
        raise PolicyStale()
    if len(plaintext) > step.services.policy.max_record_bytes:
        reasons = (*decision.reasons, "record_too_large")
        decision = Decision(False, decision.policy_id, decision.decided_ms, reasons)
    status, record_id = _status(tx, scope_id, candidate.payload_digest, decision, now_ms)
    decision_receipt = digest(
        "receipt/decision",
        {
            "candidate_id": candidate.candidate_id,
            "status": status,
            "policy_id": decision.policy_id,
            "reasons": list(decision.reasons),
            "decided_at": format_instant(decision.decided_ms),
            "record_digest": candidate.record_digest,
        },
    )
    if status == "accepted":
        record_id = admit_record(
            tx, vault, body, candidate.candidate_id, scope_id, now_ms, plaintext
        )
    event = tx.append_event(
        scope_id,
        {
            "operation": "admission",
            "target": candidate.candidate_id,
            "from_state": "pending",
            "to_state": status,
            "at": now_ms,
            "record_id": record_id,
            "decision_receipt_digest": decision_receipt,
        },
        touches_records=status == "accepted",
    )
    _settle_candidate(tx, vault, candidate.candidate_id, status, record_id, decision_receipt)
    if status == "accepted" and record_id is not None:
        tx.update_record(record_id, admit_cursor=event.cursor)
    outcome: dict[str, Any] = {
        "status": status,
        "candidate_id": candidate.candidate_id,
        "cursor": str(event.cursor),
        "decision_receipt_digest": decision_receipt,
        "transaction_receipt_digest": transaction_receipt_digest(
            "admission", candidate.candidate_id, event, now_ms
        ),
    }
    if record_id is not None:
        outcome["record_id"] = record_id
    return {"outcome": outcome, "replayed": False}


def _status(
    tx: MemoryTransaction, scope_id: str, payload_digest: str, decision: Decision, now_ms: int
) -> tuple[str, str | None]:
    if not decision.accept:
        return "rejected", None
    # A duplicate is an identical record still readable: an expired one (not yet swept)
    # would take the new candidate's content with it.
    existing = tx.record_with_payload(scope_id, payload_digest, ["accepted_current"], now_ms)
    if existing is not None:
        return "duplicate_exact", existing
    if tx.record_with_payload(scope_id, payload_digest, ["tombstoned"]) is not None:
        return "pending_adjudication", None
    return "accepted", None


def admit_record(
    tx: MemoryTransaction,
    vault: Vault,
    body: dict[str, Any],
    candidate_id: str,
    scope_id: str,
    now_ms: int,
    body_bytes: bytes | None = None,
) -> str:
    """Create the record: content sealed under its own key, then indexed."""
    body_bytes = body_bytes if body_bytes is not None else canonical_bytes(body)
    record_digest = digest_bytes("record", body_bytes)
    record_id = record_id_from_digest(record_digest)
    content = body["content"]
    valid_time = content["valid_time"]
    tx.add_record(
        RecordRow(
            record_id=record_id,
            scope_id=scope_id,
            candidate_id=candidate_id,
            state="accepted_current",
            record_digest=record_digest,
            payload_digest=body["payload_digest"],
            sealed=vault.seal(tx, record_id, scope_id, body_bytes),
            valid_t=valid_time["t"],
            valid_t_end=valid_time.get("t_end"),
            expires_ms=parse_instant(body["retention"]["expires_at"]),
            admitted_ms=now_ms,
            admit_cursor=0,
        )
    )
    tx.index(scope_id, record_id, index_text(content))
    return record_id


def _settle_candidate(
    tx: MemoryTransaction,
    vault: Vault,
    candidate_id: str,
    status: str,
    record_id: str | None,
    decision_receipt: str,
) -> None:
    """Move the candidate out of ``pending``; its own key goes once it is not needed."""
    state = {"accepted": "accepted", "duplicate_exact": "accepted"}.get(status, status)
    changes: dict[str, Any] = {"state": state, "record_id": record_id}
    changes["decision"] = {"status": status, "decision_receipt_digest": decision_receipt}
    if state in ("accepted", "rejected"):
        # The record holds the content now (or it was refused): the pending body goes.
        vault.destroy(tx, candidate_id)
        changes["sealed"] = None
    tx.update_candidate(candidate_id, **changes)
