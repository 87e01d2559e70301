"""Idempotency: one key per logical operation, scoped to the principal.

The key binds the tool and the exact arguments (the *intent*). The same key with the
same intent replays the stored outcome; the same key with another tool or other
arguments is ``DIGEST_CONFLICT``. Outcomes are stored in the store, so replays
survive restarts.

The key itself is agent-written and may hold anything, a credential included, so the
store keeps only its HMAC-SHA256 under the store's MAC key (:func:`stored_key`): a replay
computes the same digest, and nothing of the key is written in clear. Rows an older
engram stored with the key in clear are still found, and hashed by
:meth:`engram.memory.engine.MemoryEngine.hash_legacy_keys`.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

from engram.canonical import canonical_bytes, digest_bytes
from engram.errors import DigestConflict
from engram.memory.binding import Binding
from engram.memory.ports import AgentWrites, IdempotencyRow
from engram.memory.vault import Vault

__all__ = ["Idempotency", "intent_digest", "remember", "replay", "stored_key"]


def stored_key(vault: Vault, key: str) -> str:
    """What the store keeps of an idempotency key: its HMAC under the store's MAC key."""
    data = b"engram/idempotency-key/v1\0" + key.encode("utf-8")
    return hmac.new(vault.keys.mac_key, data, hashlib.sha256).hexdigest()


def intent_digest(tool: str, arguments: dict[str, Any], canonical: bytes | None = None) -> str:
    """What an idempotency key is bound to: the tool and its exact arguments.

    ``canonical`` is the RFC 8785 form of ``arguments`` when the caller has it already.
    """
    data = canonical if canonical is not None else canonical_bytes(arguments)
    return digest_bytes("intent", tool.encode("ascii") + b"\0" + data)


@dataclass(frozen=True, slots=True)
class Idempotency:
    """One mutation's idempotency facts, computed once per call: its key as the agent
    wrote it (never stored), the key's HMAC (what is stored), and the intent the key is
    bound to."""

    tool: str
    key: str
    stored: str
    intent: str

    @classmethod
    def of(
        cls, vault: Vault, tool: str, arguments: dict[str, Any], canonical: bytes | None = None
    ) -> Idempotency:
        key = arguments["idempotency_key"]
        return cls(tool, key, stored_key(vault, key), intent_digest(tool, arguments, canonical))


def replay(tx: AgentWrites, binding: Binding, call: Idempotency) -> dict[str, Any] | None:
    """The stored outcome of this key, or ``None``; ``DIGEST_CONFLICT`` if it differs."""
    scope_id, principal = binding.scope.scope_id, binding.principal
    prior = tx.idempotency(scope_id, principal, call.stored, hashed=True)
    if prior is None:  # a row an older engram stored with the key in clear
        prior = tx.idempotency(scope_id, principal, call.key, hashed=False)
    if prior is None:
        return None
    if prior.tool != call.tool or prior.intent_digest != call.intent:
        raise DigestConflict()
    return prior.outcome


def remember(tx: AgentWrites, binding: Binding, call: Idempotency, outcome: dict[str, Any]) -> None:
    """Store the outcome of the operation this key names."""
    tx.remember(
        binding.scope.scope_id,
        binding.principal,
        call.stored,
        IdempotencyRow(call.tool, call.intent, outcome),
    )
