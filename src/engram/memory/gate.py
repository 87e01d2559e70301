"""The confirmation gate: a human approval bound to capability, target and operation.

``withdraw`` and ``forget`` always pass it; ``capture`` and ``request_admission`` when
the host policy lists them. An approval comes from one of two places:

- **the dialog**: the caller of the engine supplies a :class:`Confirmer` (the MCP
  adapter asks through the client's form dialog). Accept approves, at the instant the
  answer arrives; decline, cancel or a timeout fail the gate and nothing runs;
- **the host operator**: without a dialog the gate fails with ``gate_failed`` and
  leaves a confirmation request. ``engram host confirm REQUEST_ID`` approves it, and
  the agent's retry with the same idempotency key and arguments consumes it.

Clocks (all epoch milliseconds on the engine's clock):

- a confirmation *request* can be approved for :data:`REQUEST_TTL_MS` after it was
  created; later it is expired and ``engram host confirm`` refuses it;
- an *approval* is valid for :data:`APPROVAL_TTL_MS` from the instant the human gave
  it (the ``confirm`` command, or the dialog's answer); a gate check after that fails;
- the gate check that consumes an approval starts the *execution window*: the
  operation's transaction must commit within :data:`EXECUTION_WINDOW_MS`, else it rolls
  back with ``gate_failed`` and the approval stays spent.

An approval is single-use, and matches only the same principal, scope, tool, target
and operation digest (the digest of the tool and its exact arguments, idempotency key
included). Nothing the model writes can approve: there is no argument for it.

A request records who asked as the host bound the call (principal and agent id), never
as the agent wrote it. One principal may have at most the host's ``max_open_requests``
requests waiting in a scope: the call that would leave one more is ``RATE_LIMITED``
(retriable), so that an agent cannot bury the operator's list (:func:`leave_request`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol

from engram.canonical import digest
from engram.crypto.ids import random_id
from engram.errors import RateLimited
from engram.memory.binding import Binding
from engram.memory.ports import AgentWrites, ConfirmationRow
from engram.safety.display import escaped

__all__ = [
    "APPROVAL_TTL_MS",
    "EXECUTION_WINDOW_MS",
    "REQUEST_TTL_MS",
    "Approval",
    "Confirmer",
    "Gate",
    "NeedsApproval",
    "Operation",
    "PendingConfirmation",
    "WindowClosed",
    "consume_host_approval",
    "host_approval",
    "leave_request",
    "new_request_id",
]

APPROVAL_TTL_MS: Final = 300_000
REQUEST_TTL_MS: Final = 300_000
EXECUTION_WINDOW_MS: Final = 30_000


@dataclass(frozen=True)
class Operation:
    """What a human is asked to approve (never memory text)."""

    tool: str
    target: str
    reason_ref: str | None
    operation_digest: str

    def display(self) -> dict[str, Any]:
        """What a person is shown: the server's own operation and target, and the agent's
        reason with anything that could rewrite the display escaped."""
        shown: dict[str, Any] = {"operation": self.tool, "target": self.target}
        if self.reason_ref is not None:
            shown["reason"] = escaped(self.reason_ref)
        return shown


class Confirmer(Protocol):
    """Asks the human in a dialog; ``True`` for an explicit approval.

    Raises ``ElicitationFailed`` when no dialog can be shown, so the gate falls back
    to the host operator path. A confirmer may also offer ``answer_for(operation_digest)
    -> bool | None``, the answer a person already gave about exactly that operation (the
    2026-07-28 era's retry carries it): the engine then skips the dry run that would
    build the question again.
    """

    def __call__(self, operation: Operation) -> bool: ...


@dataclass(frozen=True)
class Approval:
    """A consumed approval: where it came from and when the gate accepted it."""

    source: str
    gate_ms: int
    request_id: str | None = None

    def receipt(self, binding: Binding, operation: Operation) -> str:
        """The authorization receipt digest recorded with the operation."""
        return digest(
            "receipt/authorization",
            {
                "tool": operation.tool,
                "target": operation.target,
                "operation_digest": operation.operation_digest,
                "scope": binding.scope.scope_id,
                "actor": binding.actor,
                "confirmation": self.source,
                "request_id": self.request_id,
                "gate_at": self.gate_ms,
            },
        )


Gate = Callable[[Operation], Approval]


class NeedsApproval(Exception):
    """A dry run reached the gate: the engine asks the dialog, then runs again."""

    def __init__(self, operation: Operation) -> None:
        super().__init__()
        self.operation = operation


class WindowClosed(Exception):  # control flow: answered as gate_failed
    """The operation did not commit within the execution window; nothing ran.

    The approval it consumed stays spent (the engine records that after the rollback).
    """

    def __init__(self, request_id: str | None) -> None:
        super().__init__()
        self.request_id = request_id


class PendingConfirmation(Exception):  # control flow: answered as gate_failed
    """No live approval: the call is ``gate_failed`` and leaves a confirmation request.

    The failing transaction rolls back; the engine stores ``row`` in one of its own.
    """

    def __init__(self, row: ConfirmationRow | None) -> None:
        super().__init__()
        self.row = row


def new_request_id() -> str:
    return random_id("conf_", 24)


def host_approval(
    tx: AgentWrites, binding: Binding, operation: Operation, now_ms: int
) -> ConfirmationRow | None:
    """The operator's live, unconsumed approval of exactly this operation, if any."""
    return tx.live_approval(
        binding.scope.scope_id,
        binding.principal,
        operation.tool,
        operation.target,
        operation.operation_digest,
        now_ms - APPROVAL_TTL_MS,
    )


def consume_host_approval(
    tx: AgentWrites, binding: Binding, operation: Operation, now_ms: int
) -> Approval:
    """Consume a matching live approval, or fail the gate leaving a request."""
    match = host_approval(tx, binding, operation, now_ms)
    if match is not None:
        tx.consume_confirmation(match.request_id, now_ms)
        return Approval("host", now_ms, match.request_id)
    if tx.open_request_exists(
        binding.scope.scope_id,
        binding.principal,
        operation.operation_digest,
        now_ms - REQUEST_TTL_MS,
    ):
        raise PendingConfirmation(None)
    raise PendingConfirmation(
        ConfirmationRow(
            request_id=new_request_id(),
            scope_id=binding.scope.scope_id,
            principal=binding.principal,
            tool=operation.tool,
            target=operation.target,
            operation_digest=operation.operation_digest,
            created_ms=now_ms,
            display=operation.display(),
            agent_id=binding.agent_id,
        )
    )


def leave_request(tx: AgentWrites, row: ConfirmationRow, max_open: int) -> None:
    """Record a confirmation request for the operator, unless its principal already has
    ``max_open`` waiting in the scope: then ``RATE_LIMITED`` and nothing is recorded.

    Counted in the transaction that records it (writers take turns on both backends), so
    principals calling at once cannot pass the cap together. A request the operator
    confirmed or denied, or one past its :data:`REQUEST_TTL_MS`, no longer counts.
    """
    since = row.created_ms - REQUEST_TTL_MS
    if tx.open_requests(row.scope_id, row.principal, since) >= max_open:
        raise RateLimited()
    tx.add_confirmation(row)
