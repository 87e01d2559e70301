"""Probes for isolation tests: the same scenario for the engine and for the wire.

One scope is seeded with :data:`TEXTS` (a current record, a second one, a tombstoned
one, a pending and a withdrawn candidate), all found by :data:`QUERY`. Another scope
then probes with the seeded ids and keys (:func:`probe_arguments`), and its answers are
compared with the answers for ids that never existed (:func:`unknown_like`), with the
audit id left out (:func:`without_audit_id`).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from engram.testing.governed import PURPOSE

__all__ = [
    "QUERY",
    "REASON",
    "TEXTS",
    "error_code",
    "probe_arguments",
    "unknown_like",
    "without_audit_id",
]

#: The query that finds every seeded text.
QUERY = "releases runbook"
#: The reason given for withdraw and forget.
REASON = "reason:obsolete"
#: What the seeded scope holds, by the state each item is left in.
TEXTS = {
    "record": "Tenant A ships releases through the blue-green runbook.",
    "second": "Tenant A signs releases with the hardware-key runbook.",
    "tombstoned": "Tenant A once published releases from the legacy runbook.",
    "pending": "Tenant A drafts releases with a pending runbook.",
    "withdrawn": "Tenant A withdrew this releases runbook draft.",
}


def error_code(envelope: dict[str, Any]) -> str:
    """A governed envelope's error code, or ``"ok"``."""
    return str(envelope["error"]["code"]) if envelope["ok"] is False else "ok"


def without_audit_id(envelope: dict[str, Any]) -> str:
    """The envelope as canonical-enough JSON, without its (always fresh) audit id."""
    return json.dumps({k: v for k, v in envelope.items() if k != "auditId"}, sort_keys=True)


def unknown_like(known: str) -> str:
    """A syntactically valid id of the same shape as ``known`` that never existed."""
    prefix, body = known.split("_", 1)
    return prefix + "_" + "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in body)


def probe_arguments(tool: str, target: str, key: str = "probe.key.00000001") -> dict[str, Any]:
    """Valid arguments of ``tool`` (``get``, ``request_admission``, ``withdraw``,
    ``forget``) aimed at the id ``target``."""
    if tool == "get":
        return {"record_id": target, "purpose_ref": PURPOSE}
    field = "record_id" if tool == "forget" else "candidate_id"
    arguments = {field: target, "idempotency_key": key}
    if tool in ("withdraw", "forget"):
        arguments["reason_ref"] = REASON
    return arguments
