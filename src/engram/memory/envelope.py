"""The result envelope every governed tool answers with (memory-contract §2).

Success: ``{ok: true, output: {schema_version: 1, value}, auditId, redactionClass:
"high"}``. Failure: ``{ok: false, auditId, redactionClass: "high", error: {code,
message, retriable}}``. Messages are the constant string of the error's class; the
caller acts on ``code`` and ``retriable`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engram.crypto.ids import random_id
from engram.errors import ContractError

__all__ = ["failure", "new_audit_id", "success"]


def new_audit_id() -> str:
    """A fresh, unguessable audit id (``aud_`` + 26 base32 characters)."""
    return random_id("aud_", 26)


def success(value: Mapping[str, Any], audit_id: str) -> dict[str, Any]:
    return {
        "ok": True,
        "output": {"schema_version": 1, "value": dict(value)},
        "auditId": audit_id,
        "redactionClass": "high",
    }


def failure(error: ContractError, audit_id: str) -> dict[str, Any]:
    return {
        "ok": False,
        "auditId": audit_id,
        "redactionClass": "high",
        "error": {"code": error.code, "message": error.message, "retriable": error.retriable},
    }
