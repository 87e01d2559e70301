"""Document frequencies of query terms, remembered until the index changes.

Searches leave common terms out of large indexes (see
:func:`engram.search.lexical.search_expressions`), which needs each query term's
document count. An ``fts5vocab`` table computes that count by walking the term's whole
posting list, so a common word, the very kind in question, costs the most: about 1 ms
for a word in most of 100,000 documents. Counts are kept per process and per FTS5
table, and dropped as soon as the table's *structure record* (the row FTS5 rewrites on
every change of the index, by any connection) differs from the one they were counted
under: no count is ever stale, and a search's own audit entry, which does not touch the
index, keeps them.
"""

from __future__ import annotations

import sqlite3
from typing import Final

__all__ = ["DocumentFrequencies"]

#: Remembered (table, term) pairs before the memory starts over.
LIMIT: Final = 8192
#: The ``<table>_data`` row holding the index structure (``FTS5_STRUCTURE_ROWID``).
STRUCTURE_ROW: Final = 10


class DocumentFrequencies:
    """``term -> documents holding it``, per FTS5 table, for read snapshots."""

    def __init__(self) -> None:
        self._structures: dict[str, bytes | None] = {}
        self._counts: dict[tuple[str, str], int] = {}

    def lookup(
        self, db: sqlite3.Connection, table: str, vocabulary: str, words: list[str]
    ) -> dict[str, int]:
        """The count of each of ``words`` in FTS5 ``table`` (absent words left out).

        ``db`` is in a read snapshot; ``vocabulary`` is the table's ``fts5vocab``
        (``row``) view.
        """
        row = db.execute(f"SELECT block FROM {table}_data WHERE id = ?", (STRUCTURE_ROW,))
        structure = (row.fetchone() or (None,))[0]
        if self._structures.get(table) != structure or table not in self._structures:
            self._counts = {key: n for key, n in self._counts.items() if key[0] != table}
            self._structures[table] = structure
        if len(self._counts) + len(words) > LIMIT:
            self._counts.clear()
        missing = [word for word in dict.fromkeys(words) if (table, word) not in self._counts]
        if missing:
            marks = ",".join("?" * len(missing))
            found = dict(
                db.execute(f"SELECT term, doc FROM {vocabulary} WHERE term IN ({marks})", missing)
            )
            for word in missing:
                self._counts[(table, word)] = int(found.get(word, 0))
        return {word: count for word in words if (count := self._counts[(table, word)])}
