"""The governed memory engine: one entry point, :meth:`MemoryEngine.call`, per tool.

``call`` applies the contract's outer rules in order: the tool must be granted (else
-32602 Unknown tool), ``purpose_ref`` must equal the bound purpose (else -32603
Trusted invocation context unavailable), the arguments must match the closed schema;
then the operation runs inside one store transaction together with its audit entry.
A contract refusal is an envelope with ``ok: false``; its audit entry is written in a
transaction of its own. The engine is what a host embeds (see ``docs/embedding.md``);
the MCP adapter is a thin layer over it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from engram.canonical import digest
from engram.crypto.keyfiles import KeyRing
from engram.errors import ContractError, TrustedContextUnavailable, UnknownTool
from engram.memory import admission, capture, recall
from engram.memory.binding import MEMORY_TOOLS, Binding
from engram.memory.envelope import failure, new_audit_id, success
from engram.memory.ports import AuditEntry, MemoryStore
from engram.memory.settings import HostPolicy
from engram.memory.validation import format_instant, validate_arguments
from engram.memory.vault import Vault

__all__ = ["Clock", "MemoryEngine"]

Clock = Callable[[], int]
_PURPOSE_TOOLS = frozenset({"search", "get", "capture"})
_READS = frozenset({"search", "get"})


def system_clock() -> int:
    return int(time.time() * 1000)


def _purpose_of(tool: str, arguments: Mapping[str, Any]) -> object:
    if not isinstance(arguments, Mapping):
        return None
    holder = arguments.get("payload") if tool == "capture" else arguments
    return holder.get("purpose_ref") if isinstance(holder, dict) else None


class MemoryEngine:
    """The six tools over a store, a keyring, an admission policy and a host policy."""

    def __init__(
        self,
        store: MemoryStore,
        keys: KeyRing,
        policy: HostPolicy | None = None,
        admission_policy: admission.AdmissionPolicy | None = None,
        clock: Clock = system_clock,
    ) -> None:
        self.store = store
        self.vault = Vault(keys)
        self.cursors = recall.PageCursors(keys.mac_key)
        self.policy = policy or HostPolicy()
        self.admission_policy = admission_policy or admission.DefaultAdmissionPolicy()
        self.clock = clock

    def call(self, tool: str, arguments: Mapping[str, Any], binding: Binding) -> dict[str, Any]:
        """Run one tool (short name, e.g. ``"search"``) for ``binding``; the envelope."""
        if tool not in MEMORY_TOOLS or tool not in binding.grants:
            raise UnknownTool()
        purpose = _purpose_of(tool, arguments)
        if tool in _PURPOSE_TOOLS and isinstance(purpose, str) and purpose != binding.purpose_ref:
            self._audit_refusal(tool, binding, arguments, "PURPOSE_MISMATCH")
            raise TrustedContextUnavailable("purpose_ref does not match the bound purpose")
        audit_id = new_audit_id()
        now = self.clock()
        try:
            validate_arguments(tool, arguments)
            value = self._run(tool, dict(arguments), binding, now, audit_id)
        except ContractError as error:
            self._audit(tool, binding, arguments, error.code, audit_id, now, None)
            return failure(error, audit_id)
        return success(value, audit_id)

    # --- operations ----------------------------------------------------------------

    def _run(
        self, tool: str, arguments: dict[str, Any], binding: Binding, now: int, audit_id: str
    ) -> dict[str, Any]:
        if tool in _READS:
            with self.store.read() as reader:
                if tool == "search":
                    value = recall.search(
                        reader,
                        self.vault,
                        self.cursors,
                        binding,
                        arguments,
                        now,
                        self.policy.semantic_channel,
                    )
                else:
                    value = recall.get(
                        reader,
                        self.vault,
                        binding,
                        arguments,
                        now,
                        self._authorization(tool, binding, now),
                    )
            self._audit(tool, binding, arguments, "ok", audit_id, now, value)
            return value
        with self.store.write() as tx:
            if tool == "capture":
                value = capture.capture(tx, self.vault, self.policy, binding, arguments, now)
            elif tool == "request_admission":
                value = admission.request_admission(
                    tx, self.vault, self.admission_policy, binding, arguments, now
                )
            else:
                raise UnknownTool()
            tx.audit(self._entry(tool, binding, arguments, "ok", audit_id, now, value))
        return value

    def _authorization(self, tool: str, binding: Binding, now: int) -> str:
        return digest(
            "receipt/authorization",
            {
                "tool": tool,
                "scope": binding.scope.scope_id,
                "actor": digest("actor", binding.identity()),
                "purpose_ref": binding.purpose_ref,
                "at": format_instant(now),
            },
        )

    # --- audit -------------------------------------------------------------------

    @staticmethod
    def _entry(
        tool: str,
        binding: Binding,
        arguments: Mapping[str, Any],
        outcome: str,
        audit_id: str,
        now: int,
        value: Mapping[str, Any] | None,
    ) -> AuditEntry:
        digests = {"arguments": _safe_digest("arguments", arguments)}
        if value is not None:
            digests["value"] = _safe_digest("value", value)
        return AuditEntry(
            audit_id=audit_id,
            scope_id=binding.scope.scope_id,
            at_ms=now,
            tool=tool,
            outcome=outcome,
            identity=binding.identity(),
            digests=digests,
        )

    def _audit(
        self,
        tool: str,
        binding: Binding,
        arguments: Mapping[str, Any],
        outcome: str,
        audit_id: str,
        now: int,
        value: Mapping[str, Any] | None,
    ) -> None:
        entry = self._entry(tool, binding, arguments, outcome, audit_id, now, value)
        with self.store.write(durable=False) as tx:
            tx.audit(entry)

    def _audit_refusal(
        self, tool: str, binding: Binding, arguments: Mapping[str, Any], outcome: str
    ) -> None:
        self._audit(tool, binding, arguments, outcome, new_audit_id(), self.clock(), None)


def _safe_digest(kind: str, value: Any) -> str:
    # Arguments may hold values JCS cannot encode (floats out of range, lone
    # surrogates); the audit entry then records that, never the value.
    try:
        return digest(kind, value)
    except (TypeError, ValueError, OverflowError, UnicodeError, RecursionError):
        return "unencodable"
