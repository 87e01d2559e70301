"""The hash-chained journal: every state change is an event chained to the last.

Each scope has its own chain and its own cursor sequence (1, 2, 3, ...), so cursors
reveal nothing about other tenants' activity. An event's digest covers its scope,
cursor, the previous event's digest and its body; changing any past event breaks
every digest after it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from engram.canonical import digest
from engram.memory.ports import Event
from engram.memory.validation import format_instant

__all__ = ["GENESIS", "event_digest", "first_bad_cursor", "transaction_receipt_digest"]

GENESIS: Final = "sha256:" + "0" * 64


def event_digest(scope_id: str, cursor: int, previous: str, body: dict[str, Any]) -> str:
    """The digest that chains an event to its predecessor."""
    return digest(
        "event", {"scope": scope_id, "cursor": str(cursor), "previous": previous, "body": body}
    )


def transaction_receipt_digest(operation: str, target: str, event: Event, now_ms: int) -> str:
    """The receipt of a committed mutation: what it did, to what, at which event."""
    return digest(
        "receipt/transaction",
        {
            "operation": operation,
            "target": target,
            "cursor": str(event.cursor),
            "event_digest": event.event_digest,
            "at": format_instant(now_ms),
        },
    )


def first_bad_cursor(
    scope_id: str,
    events: Iterable[tuple[int, str, str, dict[str, Any]]],
    head: tuple[int, str] | None = None,
) -> int | None:
    """Walk a scope's chain; the first cursor that is wrong or missing, else None.

    ``events`` are ``(cursor, event_digest, previous, body)`` in cursor order;
    ``head`` is the recorded ``(cursor, digest)`` of the last event, so a chain cut
    short at its end is caught too.
    """
    expected_previous, expected_cursor = GENESIS, 1
    for cursor, recorded, previous, body in events:
        if cursor != expected_cursor:
            return expected_cursor  # a missing event
        if (
            previous != expected_previous
            or event_digest(scope_id, cursor, previous, body) != recorded
        ):
            return cursor
        expected_previous, expected_cursor = recorded, cursor + 1
    if head is not None and head != (expected_cursor - 1, expected_previous):
        return expected_cursor if head[0] >= expected_cursor else head[0]
    return None
