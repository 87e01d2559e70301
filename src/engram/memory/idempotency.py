"""Idempotency: one key per logical operation, scoped to the principal.

The key binds the tool and the exact arguments (the *intent*). The same key with the
same intent replays the stored outcome; the same key with another tool or other
arguments is ``DIGEST_CONFLICT``. Outcomes are stored in the store, so replays
survive restarts.
"""

from __future__ import annotations

from typing import Any

from engram.canonical import canonical_bytes, digest_bytes
from engram.errors import DigestConflict
from engram.memory.binding import Binding
from engram.memory.ports import IdempotencyRow, MemoryTransaction

__all__ = ["intent_digest", "remember", "replay"]


def intent_digest(tool: str, arguments: dict[str, Any], canonical: bytes | None = None) -> str:
    """What an idempotency key is bound to: the tool and its exact arguments.

    ``canonical`` is the RFC 8785 form of ``arguments`` when the caller has it already.
    """
    data = canonical if canonical is not None else canonical_bytes(arguments)
    return digest_bytes("intent", tool.encode("ascii") + b"\0" + data)


def replay(
    tx: MemoryTransaction, tool: str, binding: Binding, arguments: dict[str, Any], intent: str
) -> dict[str, Any] | None:
    """The stored outcome of this key, or ``None``; ``DIGEST_CONFLICT`` if it differs."""
    prior = tx.idempotency(binding.scope.scope_id, binding.principal, arguments["idempotency_key"])
    if prior is None:
        return None
    if prior.tool != tool or prior.intent_digest != intent:
        raise DigestConflict()
    return prior.outcome


def remember(
    tx: MemoryTransaction,
    tool: str,
    binding: Binding,
    arguments: dict[str, Any],
    intent: str,
    outcome: dict[str, Any],
) -> None:
    """Store the outcome of the operation this key names."""
    tx.remember(
        binding.scope.scope_id,
        binding.principal,
        arguments["idempotency_key"],
        IdempotencyRow(tool, intent, outcome),
    )
