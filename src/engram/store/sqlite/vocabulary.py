"""Document frequencies of query terms, remembered until the database changes.

Both faces drop terms that occur in most documents before they rank (see
:func:`engram.search.lexical.informative_terms`), which needs each query term's
document count. An ``fts5vocab`` table computes that count by walking the term's
whole posting list, so a common word, the very kind that is dropped, costs the most:
about a quarter of a millisecond at 10,000 documents. Counts are kept per process and
forgotten as soon as :meth:`Database.version` moves, so a commit by this process or
by any other one is never answered from a stale count.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from engram.store.sqlite.database import Database

__all__ = ["DocumentFrequencies"]

#: Remembered (table, term) pairs before the memory starts over.
LIMIT: Final = 8192


class DocumentFrequencies:
    """``term -> documents holding it`` for the ``<table>_terms`` vocabulary tables
    of one :class:`Database`."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._version: tuple[int, int] | None = None
        self._counts: dict[tuple[str, str], int] = {}

    def lookup(self, db: sqlite3.Connection, vocabulary: str, words: list[str]) -> dict[str, int]:
        """The count of each of ``words`` found in ``vocabulary`` (absent words left out).

        ``db`` is the connection of a read snapshot of the same database; the caller's
        snapshot holds its lock.
        """
        version = self._database.version()
        if version != self._version or len(self._counts) + len(words) > LIMIT:
            self._counts.clear()
            self._version = version
        missing = [word for word in dict.fromkeys(words) if (vocabulary, word) not in self._counts]
        if missing:
            marks = ",".join("?" * len(missing))
            found = dict(
                db.execute(f"SELECT term, doc FROM {vocabulary} WHERE term IN ({marks})", missing)
            )
            for word in missing:
                self._counts[(vocabulary, word)] = int(found.get(word, 0))
        return {word: count for word in words if (count := self._counts[(vocabulary, word)])}
