"""Physical cleanup after withdraw and forget, and when it may be called complete.

The transaction that withdraws or forgets already makes the content unreadable
through the store (the data key row is deleted, ``secure_delete`` zeroes its cell,
the record leaves the lexical index). Older page images can still sit in the
write-ahead log, and a contentless FTS5 index keeps deleted terms in old segments
until they are merged. So after the commit:

- ``key`` purge (withdraw): the WAL is checkpointed and truncated. Only when that
  succeeds, and the key row is verifiably gone, is ``key_destruction`` ``complete``;
- ``projection`` purge (forget): the scope's index is merged (``optimize``) so no
  segment holds the record's terms, the record is verifiably absent from it, then
  the WAL is checkpointed. Only then is ``projection_invalidation`` ``complete``,
  with a coverage receipt naming every projection.

A checkpoint cannot finish while another process reads an old snapshot; the purge
then stays ``pending`` and ``engram host sweep`` (or the next server start) retries.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Final, Protocol

from engram.canonical import digest
from engram.memory.ports import PurgeWrites
from engram.memory.validation import format_instant

__all__ = ["PROJECTIONS", "PurgeFinisher", "Purging", "coverage_receipt"]

#: Every place a record's content can live besides its sealed body.
PROJECTIONS: Final = {
    "lexical_index": "removed_and_merged",
    "content_key": "destroyed",
    "semantic_vectors": "removed",
    "caches": "invalidated",
    "write_ahead_log": "checkpointed",
}


class Purging(Protocol):
    """A store as the end of a purge uses it: transactions and its checkpoint."""

    def write(self, durable: bool = True) -> AbstractContextManager[PurgeWrites]: ...

    def checkpoint(self) -> bool: ...


class PurgeFinisher:
    """The end of a withdraw's or forget's cleanup, the same on every store: verify in a
    transaction that nothing of the item is left (merging the index first), let the
    store remove what deleted rows leave behind (``checkpoint``: SQLite's WAL, or
    PostgreSQL's vacuum), then mark the purge done. A store mixes it in."""

    def finish_purge(self: Purging, owner: str, now_ms: int) -> dict[str, Any] | None:
        """Try the cleanup; the stored purge row (``done_ms`` set when complete)."""
        with self.write() as tx:
            row = tx.purge_row(owner)
            if row is None or row["done_ms"] is not None:
                return row
            if row["kind"] == "projection":
                tx.purge_index(row["scope_id"])
                if tx.indexed(row["scope_id"], owner) or tx.has_vector(owner):
                    return row
            if tx.data_key(owner) is not None:
                return row
        if not self.checkpoint():
            return row
        with self.write() as tx:
            tx.mark_purged(owner, now_ms)
            return tx.purge_row(owner)


def coverage_receipt(scope_id: str, record_id: str, verified_ms: int) -> str:
    """The digest naming what was invalidated for a forgotten record, and when."""
    return digest(
        "receipt/coverage",
        {
            "scope": scope_id,
            "record_id": record_id,
            "projections": PROJECTIONS,
            "verified_at": format_instant(verified_ms),
        },
    )
