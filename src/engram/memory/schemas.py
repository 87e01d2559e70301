"""The closed input schemas of the six tools, and their output schemas.

These dictionaries are published in ``tools/list`` and are the very schemas the
server enforces (:mod:`engram.memory.validation`). JSON Schema 2020-12 cannot count
UTF-8 bytes, check Unicode normalization or validate a calendar instant, so three
keywords of our own carry those rules (unknown keywords are ignored by other
validators, so the schema stays valid for every client):

- ``x-engram-utf8Bytes: {"min": m, "max": n}``: the string's UTF-8 length;
- ``x-engram-nfc: true``: the string is in Unicode Normalization Form C (opaque
  references and idempotency keys, which are compared byte for byte; free text,
  queries and attestations are taken as written);
- ``x-engram-instant: true``: ``YYYY-MM-DDTHH:mm:ss.sssZ`` naming a real instant.

``maxLength`` mirrors the byte maximum (a string never has more characters than
bytes) so that generic clients catch most oversize input themselves. Cross-reference
rules (citations resolve, ids unique, ``t_end >= t``, sorted family refs) are not
expressible in JSON Schema; they are listed in each tool's description and enforced
in :mod:`engram.memory.validation`.
"""

from __future__ import annotations

import copy
from typing import Any, Final

__all__ = [
    "ARGUMENT_CEILING_BYTES",
    "CANDIDATE_ID_PATTERN",
    "INPUT_SCHEMAS",
    "OUTPUT_SCHEMAS",
    "RECORD_ID_PATTERN",
    "input_schema",
]

ARGUMENT_CEILING_BYTES: Final = 1_048_576
SAFE_INTEGER: Final = 9_007_199_254_740_991
RECORD_ID_PATTERN: Final = r"^mem_[a-z2-7]+$"
CANDIDATE_ID_PATTERN: Final = r"^cand_[a-z2-7]+$"
DIGEST_PATTERN: Final = r"^sha256:[0-9a-f]{64}$"
INSTANT_PATTERN: Final = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$"
_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"


def _text(low: int, high: int, *, nfc: bool = True) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "string",
        "minLength": min(low, 1),
        "maxLength": high,
        "x-engram-utf8Bytes": {"min": low, "max": high},
    }
    if nfc:
        schema["x-engram-nfc"] = True
    return schema


#: A ref or a key: opaque to engram, but shown to people (the operator's terminal, a
#: dialog), so it may hold no control, line separator or invisible format character
#: (``engram.safety.display``): INVALID_SCHEMA, like any other schema violation.
OPAQUE: Final = {**_text(1, 512), "x-engram-displayable": True}
DIGEST: Final = {"type": "string", "pattern": DIGEST_PATTERN}
INSTANT: Final = {"type": "string", "pattern": INSTANT_PATTERN, "x-engram-instant": True}
SAFE_INT: Final = {"type": "integer", "minimum": -SAFE_INTEGER, "maximum": SAFE_INTEGER}
#: A reason is stored in clear with its confirmation request, for the operator to read: it
#: may hold no credential, even disguised (``engram.safety.disguise``).
REASON: Final = {**OPAQUE, "x-engram-no-secret": True}
IDEMPOTENCY_KEY: Final = {**_text(16, 256), "minLength": 4, "x-engram-displayable": True}
RECORD_ID: Final = {"type": "string", "pattern": RECORD_ID_PATTERN, "maxLength": 512}
CANDIDATE_ID: Final = {"type": "string", "pattern": CANDIDATE_ID_PATTERN, "maxLength": 512}
MAX_PACKET_BYTES: Final = {"type": "integer", "minimum": 4096, "maximum": 1_048_576}


def _ids(low: int, high: int) -> dict[str, Any]:
    return {
        "type": "array",
        "minItems": low,
        "maxItems": high,
        "uniqueItems": True,
        "items": OPAQUE,
    }


def _closed(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": required,
        "properties": properties,
    }


COMPONENT: Final = _closed(
    ["component_id", "kind", "text", "citation_ids"],
    {
        "component_id": OPAQUE,
        "kind": {"type": "string", "enum": ["context", "decision", "evidence"]},
        "text": _text(1, 65_536, nfc=False),
        "citation_ids": _ids(1, 256),
    },
)

CITATION: Final = _closed(
    ["citation_id", "source_ref", "locator", "content_digest"],
    {
        "citation_id": OPAQUE,
        "source_ref": OPAQUE,
        "locator": _closed(["scheme", "value"], {"scheme": OPAQUE, "value": OPAQUE}),
        "content_digest": DIGEST,
        "observed_at": INSTANT,
    },
)

PAYLOAD: Final = _closed(
    [
        "schema_version",
        "purpose_ref",
        "valid_time",
        "components",
        "primary_component_id",
        "primary_event",
        "citations",
    ],
    {
        "schema_version": {"type": "integer", "const": 2},
        "purpose_ref": OPAQUE,
        "valid_time": _closed(["t"], {"t": SAFE_INT, "t_end": SAFE_INT}),
        "components": {"type": "array", "minItems": 1, "maxItems": 64, "items": COMPONENT},
        "primary_component_id": OPAQUE,
        "primary_event": _closed(
            ["at", "type_ref", "citation_id"],
            {"at": SAFE_INT, "type_ref": OPAQUE, "citation_id": OPAQUE},
        ),
        "citations": {"type": "array", "minItems": 1, "maxItems": 256, "items": CITATION},
        "retention": _closed(
            [],
            {
                "derivative_rule": {"type": "string", "enum": ["retain", "make-ineligible"]},
                "expires_at": INSTANT,
            },
        ),
        "reconciliation": _closed(
            ["family_refs"],
            {
                "family_refs": {
                    "type": "array",
                    "maxItems": 64,
                    "uniqueItems": True,
                    "items": OPAQUE,
                }
            },
        ),
    },
)

EVIDENCE: Final = _closed(
    ["evidence_ref", "evidence_digest", "citation_ids"],
    {
        "evidence_ref": OPAQUE,
        "evidence_digest": DIGEST,
        "citation_ids": _ids(1, 256),
        "attestation": _text(0, 4096, nfc=False),
    },
)

CAPABILITY_POLICY: Final = _closed(
    [],
    {
        "minimum_channels": {"type": "string", "enum": ["lexical", "lexical_and_semantic"]},
        "network": {"type": "string", "enum": ["forbid", "allow"]},
        # engram's own: records whose confidence (engram.search.confidence) is under it
        # are left out of the page (docs/memory-contract.md §2 engram_memory_search).
        "minimum_confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
)

INPUT_SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "search": _closed(
        ["query", "purpose_ref"],
        {
            "query": _text(1, 8192, nfc=False),
            "purpose_ref": OPAQUE,
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
            "max_packet_bytes": {**MAX_PACKET_BYTES, "default": 65_536},
            "capability_policy": CAPABILITY_POLICY,
            "page_cursor": {"type": "string", "minLength": 1, "maxLength": 2048},
        },
    ),
    "get": _closed(
        ["record_id", "purpose_ref"],
        {"record_id": RECORD_ID, "purpose_ref": OPAQUE, "max_packet_bytes": MAX_PACKET_BYTES},
    ),
    "capture": _closed(
        ["idempotency_key", "payload", "evidence"],
        {"idempotency_key": IDEMPOTENCY_KEY, "payload": PAYLOAD, "evidence": EVIDENCE},
    ),
    "request_admission": _closed(
        ["candidate_id", "idempotency_key"],
        {"candidate_id": CANDIDATE_ID, "idempotency_key": IDEMPOTENCY_KEY},
    ),
    "withdraw": _closed(
        ["candidate_id", "idempotency_key", "reason_ref"],
        {"candidate_id": CANDIDATE_ID, "idempotency_key": IDEMPOTENCY_KEY, "reason_ref": REASON},
    ),
    "forget": _closed(
        ["record_id", "idempotency_key", "reason_ref"],
        {"record_id": RECORD_ID, "idempotency_key": IDEMPOTENCY_KEY, "reason_ref": REASON},
    ),
}


def input_schema(tool: str, purpose_ref: str | None = None) -> dict[str, Any]:
    """The published (and enforced) input schema, with the bound purpose as a const.

    The purpose is published so the agent learns it from ``tools/list``; a different
    value is refused before schema validation with -32603, as the contract says.
    """
    schema = copy.deepcopy(INPUT_SCHEMAS[tool])
    schema["$schema"] = _DIALECT
    if purpose_ref is not None:
        targets = [schema["properties"]]
        if tool == "capture":
            targets = [schema["properties"]["payload"]["properties"]]
        for properties in targets:
            if "purpose_ref" in properties:
                properties["purpose_ref"] = {**properties["purpose_ref"], "const": purpose_ref}
    return schema


# --- outputs -------------------------------------------------------------------------

_ERROR: Final = _closed(
    ["code", "message", "retriable"],
    {"code": {"type": "string"}, "message": {"type": "string"}, "retriable": {"type": "boolean"}},
)


def _envelope(value: dict[str, Any]) -> dict[str, Any]:
    success = _closed(
        ["ok", "output", "auditId", "redactionClass"],
        {
            "ok": {"const": True},
            "output": _closed(
                ["schema_version", "value"], {"schema_version": {"const": 1}, "value": value}
            ),
            "auditId": {"type": "string"},
            "redactionClass": {"const": "high"},
        },
    )
    failure = _closed(
        ["ok", "auditId", "redactionClass", "error"],
        {
            "ok": {"const": False},
            "auditId": {"type": "string"},
            "redactionClass": {"const": "high"},
            "error": _ERROR,
        },
    )
    return {"$schema": _DIALECT, "type": "object", "oneOf": [success, failure]}


def _object(required: list[str]) -> dict[str, Any]:
    return {"type": "object", "required": required}


_RECEIPT: Final = _object(
    [
        "event_id",
        "operation",
        "from_state",
        "to_state",
        "cursor",
        "event_digest",
        "authorization_receipt_digest",
        "transaction_receipt_digest",
    ]
)

OUTPUT_SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "search": _envelope(_object(["records", "rank_receipt", "response_digest"])),
    "get": _envelope(
        _object(
            [
                "record",
                "redacted_fields",
                "redaction_receipt_digest",
                "read_receipt",
                "packet_digest",
            ]
        )
    ),
    "capture": _envelope(
        _object(["status", "candidate_id", "cursor", "transaction_receipt_digest"])
    ),
    "request_admission": _envelope(
        _closed(
            ["outcome", "replayed"],
            {
                "outcome": _object(
                    [
                        "status",
                        "candidate_id",
                        "cursor",
                        "decision_receipt_digest",
                        "transaction_receipt_digest",
                    ]
                ),
                "replayed": {"type": "boolean"},
            },
        )
    ),
    "withdraw": _envelope(
        _closed(
            ["receipt", "replayed", "key_destruction"],
            {
                "receipt": _RECEIPT,
                "replayed": {"type": "boolean"},
                "key_destruction": {"type": "string", "enum": ["pending", "complete"]},
            },
        )
    ),
    "forget": _envelope(
        _closed(
            ["receipt", "replayed", "projection_invalidation"],
            {
                "receipt": _RECEIPT,
                "replayed": {"type": "boolean"},
                "projection_invalidation": {"type": "string", "enum": ["pending", "complete"]},
                "coverage_receipt_digest": DIGEST,
            },
        )
    ),
}
