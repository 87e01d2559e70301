"""The governed memory engine: one entry point, :meth:`MemoryEngine.call`, per tool.

``call`` applies the contract's outer rules in order: the tool must be granted (else
-32602 Unknown tool), ``purpose_ref`` must equal the bound purpose (else -32603
Trusted invocation context unavailable), the arguments must match the closed schema,
the binding must not be revoked; then the operation runs inside one store transaction
together with its audit entry. A contract refusal is an envelope with ``ok: false``;
its audit entry is written in a transaction of its own. Gated mutations pass
:mod:`engram.memory.gate`. Host-only operations live in
:mod:`engram.memory.maintenance`, never here. The engine is what a host embeds (see
``docs/embedding.md``); the MCP adapter is a thin layer over it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from engram.canonical import canonical_bytes, digest, digest_bytes
from engram.crypto.escrow import EscrowKeys
from engram.crypto.keyfiles import KeyRing
from engram.crypto.ledger import Shredding, ShredLedger
from engram.errors import (
    AuthorizationRevoked,
    ContractError,
    ElicitationFailed,
    GateFailed,
    RateLimited,
    TrustedContextUnavailable,
    UnknownTool,
)
from engram.memory import admission, recall
from engram.memory.binding import Binding, Scope
from engram.memory.call import Read, Write
from engram.memory.envelope import failure, new_audit_id, success
from engram.memory.gate import (
    EXECUTION_WINDOW_MS,
    Approval,
    Confirmer,
    Gate,
    NeedsApproval,
    Operation,
    PendingConfirmation,
    WindowClosed,
    consume_host_approval,
    host_approval,
    leave_request,
)
from engram.memory.idempotency import Idempotency, remember, replay, stored_key
from engram.memory.ports import AgentReads, AuditEntry, MemoryStore, MemoryTransaction
from engram.memory.purge import coverage_receipt
from engram.memory.records import index_text
from engram.memory.semantic import SemanticProjection
from engram.memory.settings import HostPolicy
from engram.memory.tools import TOOLS, ToolSpec
from engram.memory.validation import validate_arguments
from engram.memory.vault import Vault

if TYPE_CHECKING:
    from engram.search.embedding import Embedder

__all__ = ["Clock", "MemoryEngine"]

log = logging.getLogger("engram.memory")

Clock = Callable[[], int]


def system_clock() -> int:
    return int(time.time() * 1000)


def _purpose_of(spec: ToolSpec, arguments: Mapping[str, Any]) -> object:
    if not isinstance(arguments, Mapping):
        return None
    holder = arguments.get("payload") if spec.purpose == "payload" else arguments
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
        embedder: Embedder | None = None,
    ) -> None:
        self.store = store
        #: The semantic channel's embedder (``None``: lexical search only).
        self.semantic = SemanticProjection(store, embedder) if embedder is not None else None
        self.vault = Vault(keys)
        #: Every forget and withdraw, beside the keys: a restore re-applies them.
        self.ledger = ShredLedger(keys.directory)
        #: The keys backups seal records' data keys under; a forget destroys its record's.
        self.escrow = EscrowKeys(keys.directory)
        self.cursors = recall.PageCursors(keys.mac_key)
        self.policy = policy or HostPolicy()
        self.admission_policy = admission_policy or admission.DefaultAdmissionPolicy()
        #: Scopes whose lexical projection this engine found (or made) current.
        self._lexical_current: set[str] = set()
        self.clock = clock

    def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        binding: Binding,
        confirm: Confirmer | None = None,
    ) -> dict[str, Any]:
        """Run one tool (short name, e.g. ``"search"``) for ``binding``; the envelope.

        ``confirm`` asks the human in a dialog for gated operations; without it the
        gate uses host confirmations (``engram host confirm``).
        """
        spec = TOOLS.get(tool)
        if spec is None or tool not in binding.grants:
            raise UnknownTool()
        purpose = _purpose_of(spec, arguments)
        if spec.purpose and isinstance(purpose, str) and purpose != binding.purpose_ref:
            self._audit(tool, binding, arguments, "PURPOSE_MISMATCH", new_audit_id(), None)
            raise TrustedContextUnavailable("purpose_ref does not match the bound purpose")
        audit_id = new_audit_id()
        try:
            validate_arguments(tool, arguments)
            value = self._run(spec, dict(arguments), binding, audit_id, confirm)
        except PendingConfirmation as pending:
            return failure(
                self._leave_request(tool, binding, arguments, audit_id, pending), audit_id
            )
        except WindowClosed as closed:
            self._spend(closed, tool, binding, arguments, audit_id)
            return failure(GateFailed(), audit_id)
        except ContractError as error:
            self._audit(tool, binding, arguments, error.code, audit_id, None)
            return failure(error, audit_id)
        return success(value, audit_id)

    def refresh_lexical(self, scope: Scope) -> int:
        """Re-index the scope's records if an older analyzer built its lexical projection
        (an upgrade changed the terms); returns how many records were re-indexed.

        Runs before anything else touches the scope in this process: a record must
        leave the projection with exactly the terms it entered it with.
        """
        scope_id = scope.scope_id
        if scope_id in self._lexical_current:
            return 0
        with self.store.read() as reader:
            current = reader.lexical_current(scope_id)
        moved = 0
        if not current:
            with self.store.write() as tx:  # checked again under the write lock
                for record in tx.legacy_indexed(scope_id):
                    body = json.loads(
                        self.vault.open(tx, record.record_id, scope_id, record.sealed)
                    )
                    tx.index(scope_id, record.record_id, index_text(body["content"]))
                    moved += 1
                tx.drop_legacy_index(scope_id)
        self._lexical_current.add(scope_id)
        return moved

    def refresh_semantic(
        self,
        scope: Scope,
        progress: Callable[[int, int], None] | None = None,
        stop: threading.Event | None = None,
    ) -> int:
        """Embed the scope's records that have no vector yet; returns how many were.

        Off the request path: searches meanwhile rank lexically (or answer
        ``RANKING_UNAVAILABLE`` when they require the semantic channel). ``progress`` is
        told ``(done, total)`` after each batch. Resumable: each batch commits on its own.
        """
        if self.semantic is None:
            return 0
        self.refresh_lexical(scope)
        return self.semantic.build(self.vault, scope, progress, stop)

    def hash_legacy_keys(self) -> int:
        """Replace the idempotency keys an older engram stored in clear by their HMAC
        (:func:`engram.memory.idempotency.stored_key`); returns how many. Replays find
        either form, so this only takes agent-written text off the disk."""
        with self.store.write() as tx:
            clear = tx.clear_idempotency_keys()
            for scope_id, principal, key in clear:
                tx.hash_idempotency_key(scope_id, principal, key, stored_key(self.vault, key))
        if clear:
            self.store.checkpoint()  # the clear keys' old pages leave the WAL
        return len(clear)

    # --- operations ----------------------------------------------------------------

    def _run(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        binding: Binding,
        audit_id: str,
        confirm: Confirmer | None,
    ) -> dict[str, Any]:
        self.refresh_lexical(binding.scope)
        tool = spec.name
        if spec.read is not None:
            # The question is embedded before the snapshot opens: it takes milliseconds,
            # and the snapshot holds the process's store lock.
            question = (
                self.semantic.embed_query(arguments[spec.question])
                if spec.question is not None and self.semantic is not None
                else None
            )
            with self.store.read() as reader:
                self._check_revoked(reader, binding)
                step = Read(self, reader, binding, arguments, self.clock(), question)
                value = spec.read(step)
            self._audit(tool, binding, arguments, "ok", audit_id, value)
            return value
        gated = spec.gated == "always" or (
            spec.gated == "policy" and tool in self.policy.confirm_tools
        )
        canonical = canonical_bytes(arguments)  # valid arguments are always encodable
        idempotency = Idempotency.of(self.vault, tool, arguments, canonical)
        approval = self._ask(spec, arguments, binding, confirm, idempotency) if gated else None
        with self.store.write() as tx:
            # Checked inside the mutation's own transaction: a revocation that commits
            # first is always seen.
            self._check_revoked(tx, binding)
            stored = replay(tx, binding, idempotency)
            if stored is not None:
                value = spec.replayed(stored)
            else:
                gate = (
                    _ConsumingGate(tx, binding, approval, self.clock, self.policy.confirm_via)
                    if gated
                    else None
                )
                value = self._mutate(spec, tx, binding, arguments, idempotency, gate)
                remember(tx, binding, idempotency, spec.remembered(value))
                # The operator's approval when one was consumed (``both``: it, not the
                # dialog's, is what a closed window must spend).
                self._check_window(gate.consumed if gate and gate.consumed else approval)
            tx.audit(self._entry(tool, binding, arguments, "ok", audit_id, value, canonical))
        if spec.shreds is not None:
            target = arguments[spec.shreds]
            self._record_shredding(spec, binding.scope.scope_id, target, stored is not None)
        return self._with_purge_status(spec, binding, arguments, value)

    def _record_shredding(self, spec: ToolSpec, scope_id: str, target: str, replayed: bool) -> None:
        """The shred ledger's line of a committed forget or withdraw. A replay writes it
        when it is missing (a commit whose line failed, or whose outcome was unknown); a
        failed append is logged, and the agent's retry writes it."""
        try:
            if not replayed or not self.ledger.holds(scope_id, spec.name, target):
                self.ledger.append(Shredding(scope_id, spec.name, target, self.clock()))
            if spec.forgets_record:  # every backup's copy of the record becomes unreadable
                self.escrow.destroy(target)
        except OSError as error:
            log.warning(
                "the shred ledger or escrow could not be written (%s)", type(error).__name__
            )

    @staticmethod
    def _check_revoked(reader: AgentReads, binding: Binding) -> None:
        if reader.is_revoked(binding.scope.scope_id, binding.principal):
            raise AuthorizationRevoked()

    def _mutate(
        self,
        spec: ToolSpec,
        tx: MemoryTransaction,
        binding: Binding,
        arguments: dict[str, Any],
        idempotency: Idempotency,
        gate: Gate | None,
    ) -> dict[str, Any]:
        """A mutation's body, inside ``tx``."""
        assert spec.mutate is not None  # a spec has a read or a mutation body
        return spec.mutate(Write(self, tx, binding, arguments, self.clock(), idempotency, gate))

    # --- the confirmation gate -----------------------------------------------------

    def _check_window(self, approval: Approval | None) -> None:
        """The commit must come within the execution window of the gate check."""
        if approval is not None and self.clock() - approval.gate_ms > EXECUTION_WINDOW_MS:
            raise WindowClosed(approval.request_id)

    def _spend(
        self,
        closed: WindowClosed,
        tool: str,
        binding: Binding,
        arguments: Mapping[str, Any],
        audit_id: str,
    ) -> None:
        entry = self._entry(tool, binding, arguments, GateFailed.code, audit_id, None)
        with self.store.write() as tx:
            if closed.request_id is not None:
                tx.consume_confirmation(closed.request_id, self.clock())
            tx.audit(entry)

    def _ask(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        binding: Binding,
        confirm: Confirmer | None,
        idempotency: Idempotency,
    ) -> Approval | None:
        """Ask the dialog when there is one and the call reaches the gate.

        A dry run in a rolled-back transaction finds out whether the call is a replay
        or a refusal (no human is asked for those) and what exactly it would do; the
        dialog then runs outside any transaction, so no lock is held while a human
        reads.
        """
        via = self.policy.confirm_via
        if confirm is None or via == "host":
            return None  # the host operator's approval, consumed inside the mutation
        # A retry that carries the person's answer (the 2026-07-28 era) needs no second
        # dry run: the answer is bound to this exact operation's digest, and the run
        # itself still checks replay and target.
        prior = getattr(confirm, "answer_for", None)
        answer = prior(idempotency.intent) if via == "dialog" and prior is not None else None
        if answer is not None:
            return self._answered(answer)
        operation = self._probe(spec, arguments, binding, idempotency)
        if operation is None:
            return None  # a replay, or a call that never reaches the gate
        if via == "both" and not self._host_approved(binding, operation):
            return None  # the operator first: the mutation leaves the request
        try:
            approved = confirm(operation)
        except ElicitationFailed:
            return None  # no dialog after all: the host confirmation path
        return self._answered(approved)

    def _probe(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        binding: Binding,
        idempotency: Idempotency,
    ) -> Operation | None:
        """The operation a person would be asked about: a dry run of the call up to its
        gate, rolled back; ``None`` for a replay or a call refused before the gate. When
        it reaches the gate, the audit says so (the call's own entry follows)."""

        def probe(operation: Operation) -> Approval:
            raise NeedsApproval(operation)

        try:
            with self.store.write() as tx:
                self._check_revoked(tx, binding)  # a revoked principal never reaches a human
                if replay(tx, binding, idempotency) is not None:
                    return None
                self._mutate(spec, tx, binding, arguments, idempotency, probe)
            return None
        except NeedsApproval as needed:
            self._audit(spec.name, binding, arguments, "gate_probed", new_audit_id(), None)
            return needed.operation

    def _answered(self, approved: bool) -> Approval:
        if not approved:
            raise GateFailed("declined in the dialog")
        return Approval("dialog", self.clock())

    def _host_approved(self, binding: Binding, operation: Operation) -> bool:
        with self.store.write() as tx:  # reads only; the approvals live on the write side
            return host_approval(tx, binding, operation, self.clock()) is not None

    def _leave_request(
        self,
        tool: str,
        binding: Binding,
        arguments: Mapping[str, Any],
        audit_id: str,
        pending: PendingConfirmation,
    ) -> ContractError:
        """Leave the request for the operator; what the call is refused with:
        ``gate_failed``, or ``RATE_LIMITED`` when its principal has the host's
        ``max_open_requests`` waiting already (nothing is left then)."""
        refusal: ContractError = GateFailed()
        entry = self._entry(tool, binding, arguments, GateFailed.code, audit_id, None)
        with self.store.write() as tx:
            if pending.row is not None:
                try:
                    leave_request(tx, pending.row, self.policy.max_open_requests)
                except RateLimited as limited:
                    refusal = limited
                    entry = dataclasses.replace(entry, outcome=limited.code)
            tx.audit(entry)
        return refusal

    # --- after the commit ----------------------------------------------------------

    def _with_purge_status(
        self, spec: ToolSpec, binding: Binding, arguments: dict[str, Any], value: dict[str, Any]
    ) -> dict[str, Any]:
        if spec.shreds is None or spec.purge_status is None:
            return value
        if self.semantic is not None:  # this process holds none of the scope's vectors
            self.semantic.forget_scope(binding.scope)
        owner = arguments[spec.shreds]
        row = self.store.finish_purge(owner, self.clock())
        done = row is not None and row["done_ms"] is not None
        result = {**value, spec.purge_status: "complete" if done else "pending"}
        if spec.forgets_record and done and row is not None:
            result["coverage_receipt_digest"] = coverage_receipt(
                binding.scope.scope_id, owner, int(row["done_ms"])
            )
        return result

    # --- audit -------------------------------------------------------------------

    def _entry(
        self,
        tool: str,
        binding: Binding,
        arguments: Mapping[str, Any],
        outcome: str,
        audit_id: str,
        value: Mapping[str, Any] | None,
        canonical: bytes | None = None,
    ) -> AuditEntry:
        """The audit entry; ``canonical`` is the arguments' JCS bytes when known."""
        if canonical is not None:
            digests = {"arguments": digest_bytes("arguments", canonical)}
        else:
            digests = {"arguments": _safe_digest("arguments", arguments)}
        if value is not None:
            digests["value"] = _safe_digest("value", value)
        return AuditEntry(
            audit_id=audit_id,
            scope_id=binding.scope.scope_id,
            at_ms=self.clock(),
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
        value: Mapping[str, Any] | None,
    ) -> None:
        entry = self._entry(tool, binding, arguments, outcome, audit_id, value)
        try:
            with self.store.write(durable=False) as tx:
                # A mutation whose commit reported failure may have committed its own
                # entry under this audit id: that entry stays, as the record of what
                # happened (the audit is append-only).
                tx.audit(entry, if_absent=True)
        except ContractError:
            # The store is unavailable: the caller still gets its envelope, with the
            # code that says so.
            log.warning("audit entry %s could not be written", audit_id)


class _ConsumingGate:
    """The gate inside a mutation, by the host's ``confirm_via``: the dialog's approval
    (``dialog``), a host approval consumed (``host``, or ``dialog`` without a dialog), or
    both (``both``: the operator's, consumed, and the dialog's at this retry)."""

    def __init__(
        self,
        tx: MemoryTransaction,
        binding: Binding,
        approval: Approval | None,
        clock: Clock,
        via: str,
    ) -> None:
        self.tx, self.binding, self.approval, self.clock = tx, binding, approval, clock
        self.via = via
        self.consumed: Approval | None = None

    def __call__(self, operation: Operation) -> Approval:
        if self.approval is not None and self.via != "both":
            return self.approval
        if self.via == "both" and self.approval is None and self._approved(operation):
            raise GateFailed("the operator approved; the dialog must approve too")
        self.consumed = consume_host_approval(self.tx, self.binding, operation, self.clock())
        if self.via == "both":
            return Approval("host+dialog", self.consumed.gate_ms, self.consumed.request_id)
        return self.consumed

    def _approved(self, operation: Operation) -> bool:
        return host_approval(self.tx, self.binding, operation, self.clock()) is not None


def _safe_digest(kind: str, value: Any) -> str:
    # Arguments may hold values JCS cannot encode (floats out of range, lone
    # surrogates, absurd nesting); the audit entry then records that, never the value.
    try:
        return digest(kind, value)
    except (TypeError, ValueError, OverflowError, UnicodeError, RecursionError):
        return "unencodable"
