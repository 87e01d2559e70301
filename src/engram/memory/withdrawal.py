"""``engram_memory_withdraw`` and ``engram_memory_forget``: the two terminal exits.

withdraw: a pending candidate -> ``withdrawn``; its data key is destroyed, so its
ciphertext can never be opened again. forget: an admitted record -> ``tombstoned``;
it leaves search and get in the same transaction, leaves the lexical projection, and
its content key is destroyed. Both pass the confirmation gate after the idempotency
replay (the engine's pipeline) and the target checks (a foreign or unknown target is
``NOT_FOUND`` without ever asking a human). What "complete" means for key destruction and projection
invalidation is decided by :mod:`engram.memory.purge` after the commit.
"""

from __future__ import annotations

import json
from typing import Any

from engram.canonical import digest
from engram.crypto.ledger import Shredding
from engram.errors import NotFound
from engram.memory.binding import Binding
from engram.memory.call import Write
from engram.memory.gate import Operation
from engram.memory.journal import transaction_receipt_digest
from engram.memory.lifecycle import FORGETTABLE, check_candidate, check_record
from engram.memory.ports import MemoryTransaction
from engram.memory.records import index_text
from engram.memory.vault import Vault

__all__ = ["forget", "withdraw"]


def _receipt(
    tx: MemoryTransaction,
    binding: Binding,
    operation: str,
    target: str,
    from_state: str,
    to_state: str,
    now_ms: int,
    authorization: str,
    touches_records: bool,
) -> dict[str, Any]:
    event_id = digest(
        "event-id", {"scope": binding.scope.scope_id, "target": target, "operation": operation}
    )
    event = tx.append_event(
        binding.scope.scope_id,
        {
            "event_id": event_id,
            "operation": operation,
            "target": target,
            "from_state": from_state,
            "to_state": to_state,
            "at": now_ms,
            "authorization_receipt_digest": authorization,
        },
        touches_records=touches_records,
    )
    return {
        "event_id": event_id,
        "operation": operation,
        "from_state": from_state,
        "to_state": to_state,
        "cursor": str(event.cursor),
        "event_digest": event.event_digest,
        "authorization_receipt_digest": authorization,
        "transaction_receipt_digest": transaction_receipt_digest(operation, target, event, now_ms),
    }


def withdraw(step: Write) -> dict[str, Any]:
    """Withdraw inside the step's transaction; the value before the purge status is known."""
    tx, vault, binding, arguments, now_ms = (
        step.tx,
        step.services.vault,
        step.binding,
        step.arguments,
        step.now,
    )
    candidate = tx.candidate(binding.scope.scope_id, arguments["candidate_id"])
    if candidate is None or candidate.principal != binding.principal:
        raise NotFound()
    check_candidate(candidate.state, {"pending"})
    operation = Operation(
        "withdraw",
        candidate.candidate_id,
        arguments["reason_ref"],
        step.intent,
    )
    authorization = step.confirmed()(operation).receipt(binding, operation)
    receipt = _receipt(
        tx,
        binding,
        "withdraw",
        candidate.candidate_id,
        "pending",
        "withdrawn",
        now_ms,
        authorization,
        touches_records=False,
    )
    vault.destroy(tx, candidate.candidate_id)
    tx.update_candidate(candidate.candidate_id, state="withdrawn", sealed=None)
    tx.add_purge(binding.scope.scope_id, candidate.candidate_id, "key", now_ms)
    return {"receipt": receipt, "replayed": False}


def forget(step: Write) -> dict[str, Any]:
    """Forget inside the step's transaction: the record leaves recall when this commits."""
    tx, vault, binding, arguments, now_ms = (
        step.tx,
        step.services.vault,
        step.binding,
        step.arguments,
        step.now,
    )
    record = tx.record(binding.scope.scope_id, arguments["record_id"])
    if record is None:
        raise NotFound()
    check_record(record.state, FORGETTABLE)
    operation = Operation("forget", record.record_id, arguments["reason_ref"], step.intent)
    authorization = step.confirmed()(operation).receipt(binding, operation)
    receipt = _receipt(
        tx,
        binding,
        "tombstone",
        record.record_id,
        record.state,
        "tombstoned",
        now_ms,
        authorization,
        touches_records=True,
    )
    if tx.indexed(binding.scope.scope_id, record.record_id):
        body = json.loads(vault.open(tx, record.record_id, record.scope_id, record.sealed))
        tx.unindex(binding.scope.scope_id, record.record_id, index_text(body["content"]))
    vault.destroy(tx, record.record_id)
    tx.update_record(record.record_id, state="tombstoned", sealed=None)
    tx.add_purge(binding.scope.scope_id, record.record_id, "projection", now_ms)
    return {"receipt": receipt, "replayed": False}


def forget_again(
    tx: MemoryTransaction,
    vault: Vault,
    scope_id: str,
    record: dict[str, Any],
    shredding: Shredding | None,
    now_ms: int,
) -> None:
    """Apply once more a forget to a record a restored backup brought back (the shred
    ledger records it, or its escrow key is gone, ``shredding`` ``None``): tombstoned, its
    data key destroyed, the journal told why."""
    target = record["record_id"]
    tx.append_event(
        scope_id,
        {
            "event_id": digest(
                "event-id", {"scope": scope_id, "target": target, "operation": "tombstone"}
            ),
            "operation": "tombstone",
            "target": target,
            "from_state": record["state"],
            "to_state": "tombstoned",
            "at": now_ms,
            "authorization_receipt_digest": digest(
                "receipt/shred-ledger",
                {
                    "target": target,
                    "scope": scope_id,
                    "forgotten_at": None if shredding is None else shredding.at_ms,
                },
            ),
        },
        touches_records=True,
    )
    vault.destroy(tx, target)
    tx.update_record(target, state="tombstoned", sealed=None)
    tx.add_purge(scope_id, target, "projection", now_ms)
