"""How many documents hold each query term, counted up to a cap and remembered.

Searches leave common terms out of large indexes (see
:func:`engram.search.lexical.search_stages`), so they need to know, for each query term,
whether more than a given number of documents hold it; and they weigh the terms they
match on by how many do (:func:`engram.search.lexical.idf`). Counting stops at a cap: a
bounded ``MATCH`` reads at most that many postings, where ``fts5vocab`` would
walk the whole posting list (0.3 ms instead of 5 ms for a word in nearly all of
100,000 documents), and it goes through the table's own tokenizer, so a stemming
index counts the stem. Counts are kept per process and per FTS5 table, and dropped
as soon as the table's *structure record* (the row FTS5 rewrites on every change of
the index, by any connection) differs from the one they were counted under: no count
is ever stale, and a search's own audit entry, which does not touch the index, keeps
them. Not thread-safe by itself: it is used only inside snapshots, which a store's
``Database`` runs one at a time.
"""

from __future__ import annotations

import sqlite3
from typing import Final

__all__ = ["DocumentCounts"]

#: Remembered (table, term, cap) entries before the memory starts over.
LIMIT: Final = 8192
#: The ``<table>_data`` row holding the index structure (``FTS5_STRUCTURE_ROWID``).
STRUCTURE_ROW: Final = 10


class DocumentCounts:
    """``term -> min(documents holding it, cap + 1)``, per FTS5 table, for snapshots."""

    def __init__(self) -> None:
        self._structures: dict[str, bytes | None] = {}
        #: (table, term) -> (the count, the cap it was counted to): exact when not above it.
        self._counts: dict[tuple[str, str], tuple[int, int]] = {}

    def lookup(
        self, db: sqlite3.Connection, table: str, words: list[str], cap: int
    ) -> dict[str, int]:
        """For each of ``words`` (already-split terms), how many documents of FTS5
        ``table`` hold it, counting no further than ``cap + 1`` (with a ``cap`` of the
        table's size, exactly)."""
        row = db.execute(f"SELECT block FROM {table}_data WHERE id = ?", (STRUCTURE_ROW,))
        structure = (row.fetchone() or (None,))[0]
        if table not in self._structures or self._structures[table] != structure:
            self._counts = {key: n for key, n in self._counts.items() if key[0] != table}
            self._structures[table] = structure
        if len(self._counts) + len(words) > LIMIT:
            self._counts.clear()
        found: dict[str, int] = {}
        for word in words:
            known = self._counts.get((table, word))
            if known is None or known[0] > known[1] < cap:  # unknown, or counted too short
                count = db.execute(
                    f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                    (f'"{word}"', cap + 1),
                ).fetchone()[0]
                known = self._counts[(table, word)] = (count, cap)
            found[word] = min(known[0], cap + 1)
        return found
