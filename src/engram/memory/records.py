"""What a capture becomes: the effective payload, the record body, its projection.

The *effective payload* is the content-bearing part of a capture (valid time,
components, primary component and event, citations), without purpose, retention and
reconciliation, which are policy rather than content: the tombstone guard and the
admission ``duplicate_exact`` rule compare it. The *record body* adds scope,
provenance, evidence and resolved retention; its digest is the record digest and
names the record (``mem_`` + base32). The *projection* is what search and get
disclose: an allow-list of fields, never partly exposed. ``redacted_fields`` lists
the recorded facts withheld from the caller (provenance, the derivative rule, the
attestation, reconciliation); the body's own bookkeeping (scope, candidate id,
payload digest, schema version) is never part of a projection and is not listed.
"""

from __future__ import annotations

from typing import Any, Final

from engram.canonical import digest, record_id_from_digest
from engram.memory.binding import Binding
from engram.memory.validation import format_instant
from engram.search.analysis import index_terms

__all__ = [
    "REDACTION_POLICY",
    "content_text",
    "effective_payload",
    "index_text",
    "payload_digest",
    "project",
    "record_body",
    "record_identity",
    "redaction_receipt_digest",
    "semantic_views",
]

REDACTION_POLICY: Final = "engram.redaction/v1"
_CONTENT_FIELDS: Final = (
    "valid_time",
    "components",
    "primary_component_id",
    "primary_event",
    "citations",
)


def effective_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The content-bearing fields of a payload."""
    return {name: payload[name] for name in _CONTENT_FIELDS}


def payload_digest(payload: dict[str, Any]) -> str:
    return digest("payload", effective_payload(payload))


def record_body(
    candidate_id: str,
    binding: Binding,
    captured_ms: int,
    arguments: dict[str, Any],
    retention: dict[str, Any],
) -> dict[str, Any]:
    """The full record a candidate becomes if admitted (sealed at rest)."""
    payload = arguments["payload"]
    body: dict[str, Any] = {
        "schema_version": 1,
        "scope": binding.scope.scope_id,
        "candidate_id": candidate_id,
        "captured_at": format_instant(captured_ms),
        "captured_by": {
            "principal": binding.principal,
            "agent_id": binding.agent_id,
            "session": binding.session,
        },
        "purpose_ref": payload["purpose_ref"],
        "payload_digest": payload_digest(payload),
        "content": effective_payload(payload),
        "evidence": arguments["evidence"],
        "retention": retention,
    }
    if "reconciliation" in payload:
        body["reconciliation"] = payload["reconciliation"]
    return body


def record_identity(body: dict[str, Any]) -> tuple[str, str]:
    """``(record_digest, record_id)`` of a record body (digest of its canonical bytes)."""
    record_digest = digest("record", body)
    return record_digest, record_id_from_digest(record_digest)


def content_text(content: dict[str, Any]) -> str:
    """Every component's text: what the projections (lexical, semantic) are made from."""
    return "\n".join(component["text"] for component in content["components"])


def semantic_views(content: dict[str, Any]) -> list[str]:
    """What the semantic projection embeds of a record: the whole of it (the text of
    :func:`content_text`) and, when other components go with it, its primary component
    alone. The record's vector is the mean of theirs (:mod:`engram.memory.semantic`)."""
    whole = content_text(content)
    primary = next(
        component["text"]
        for component in content["components"]
        if component["component_id"] == content["primary_component_id"]
    )
    return [whole] if primary == whole else [whole, primary]


def index_text(content: dict[str, Any]) -> str:
    """What the lexical projection indexes: the analyzed terms of :func:`content_text`
    (the same terms again when the record leaves the projection)."""
    return index_terms(content_text(content))


def project(
    record_id: str, record_digest: str, body: dict[str, Any], admitted_ms: int
) -> tuple[dict[str, Any], list[str]]:
    """The disclosed record and the sorted paths of what was omitted."""
    evidence = body["evidence"]
    record: dict[str, Any] = {
        "record_id": record_id,
        "record_digest": record_digest,
        "state": "accepted_current",
        "purpose_ref": body["purpose_ref"],
        **body["content"],
        "evidence": {
            "evidence_ref": evidence["evidence_ref"],
            "evidence_digest": evidence["evidence_digest"],
            "citation_ids": evidence["citation_ids"],
        },
        "captured_at": body["captured_at"],
        "admitted_at": format_instant(admitted_ms),
    }
    if "expires_at" in body["retention"]:
        record["expires_at"] = body["retention"]["expires_at"]
    redacted = ["captured_by", "retention.derivative_rule"]
    if "attestation" in evidence:
        redacted.append("evidence.attestation")
    if "reconciliation" in body:
        redacted.append("reconciliation")
    return record, sorted(redacted)


def redaction_receipt_digest(record_id: str, record_digest: str, redacted: list[str]) -> str:
    return digest(
        "receipt/redaction",
        {
            "record_id": record_id,
            "record_digest": record_digest,
            "policy": REDACTION_POLICY,
            "redacted_fields": redacted,
        },
    )
