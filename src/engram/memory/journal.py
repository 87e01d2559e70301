"""The hash-chained journal: every state change is an event chained to the last.

Each scope has its own chain and its own cursor sequence (1, 2, 3, ...), so cursors
reveal nothing about other tenants' activity. An event's digest covers its scope,
cursor, the previous event's digest and its body; changing any past event breaks
every digest after it.
"""

from __future__ import annotations

from typing import Any, Final

from engram.canonical import digest

__all__ = ["GENESIS", "event_digest"]

GENESIS: Final = "sha256:" + "0" * 64


def event_digest(scope_id: str, cursor: int, previous: str, body: dict[str, Any]) -> str:
    """The digest that chains an event to its predecessor."""
    return digest(
        "event", {"scope": scope_id, "cursor": str(cursor), "previous": previous, "body": body}
    )
