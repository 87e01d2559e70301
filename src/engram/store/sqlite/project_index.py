"""The derived index of project memory: a SQLite file next to the memory files.

It mirrors the files (never the source of truth): each file's fingerprint (mtime,
size, SHA-256), its parsed memory or the reason it is invalid, an FTS5 table of the
analyzed terms (:mod:`engram.search.analysis`) for BM25 search (title weighted above
tags above body), the semantic channel's vectors (keyed by the digest of the text they
were made from, so re-indexing an unchanged memory keeps its vector), and usage counts
(which survive re-indexing, because they are not derived from the files).
Deleting the file loses nothing but time (and the usage counts): the next call
rebuilds it. A file SQLite finds damaged is deleted and rebuilt the same way, when it is
opened (with ``check``, the whole file is checked first) or when a read meets the damage
(:attr:`ProjectIndex.damaged`; the call fails with :class:`IndexDamaged`, the next one
rebuilds).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from engram.errors import IndexDamaged, StoreUnavailable
from engram.project.memory_file import Memory
from engram.project.ports import FileState, Progress, no_progress
from engram.search.analysis import index_terms
from engram.search.lexical import (
    PROJECT_WEIGHTS,
    Group,
    common_cutoff,
    query_groups,
    search_stages,
    variants,
)
from engram.store.sqlite.bm25 import stage_scores
from engram.store.sqlite.database import Database, migration
from engram.store.sqlite.vocabulary import DocumentCounts

__all__ = ["ProjectIndex"]

SCHEMA = "project-index"
#: How many files are indexed between two reports of progress.
_PROGRESS_EVERY: Final = 64


@migration(SCHEMA, 1)
def _create(db: sqlite3.Connection) -> None:
    for statement in (
        "CREATE TABLE files (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL,"
        " size INTEGER NOT NULL, sha256 TEXT NOT NULL, memory_id TEXT, problem TEXT)",
        "CREATE TABLE memories (rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL,"
        " path TEXT NOT NULL, type TEXT NOT NULL, scope TEXT NOT NULL, title TEXT NOT NULL,"
        " fields TEXT NOT NULL, body TEXT NOT NULL)",
        "CREATE VIRTUAL TABLE memories_fts USING fts5(title, tags, body,"
        " tokenize='porter unicode61 remove_diacritics 2')",
        "CREATE TABLE usage (id TEXT PRIMARY KEY, count INTEGER NOT NULL)",
    ):
        db.execute(statement)


@migration(SCHEMA, 2)
def _index_paths(db: sqlite3.Connection) -> None:
    # Re-indexing looks memories up by file on every change.
    db.execute("CREATE INDEX IF NOT EXISTS memories_by_path ON memories (path)")


@migration(SCHEMA, 3)
def _vocabulary(db: sqlite3.Connection) -> None:
    # Document frequencies, so queries can leave out terms too common to rank by.
    db.execute("CREATE VIRTUAL TABLE memories_terms USING fts5vocab(memories_fts, 'row')")


@migration(SCHEMA, 4)
def _index_problems(db: sqlite3.Connection) -> None:
    # Every answer lists invalid files: without this, each call scanned every file row.
    db.execute(
        "CREATE INDEX IF NOT EXISTS files_with_problems ON files (path) WHERE problem IS NOT NULL"
    )


@migration(SCHEMA, 5)
def _no_vocabulary(db: sqlite3.Connection) -> None:
    # Document counts now come from bounded MATCH queries (store/sqlite/vocabulary.py).
    db.execute("DROP TABLE IF EXISTS memories_terms")


@migration(SCHEMA, 6)
def _analyzed(db: sqlite3.Connection) -> None:
    # The FTS5 table now holds analyzed terms (engram.search.analysis: stems of the text's
    # language, identifiers split, no stop words), the same for both faces. Everything
    # derived from the files is rebuilt from them by the next call; usage counts stay.
    db.execute("DROP TABLE IF EXISTS memories_fts")
    db.execute(
        "CREATE VIRTUAL TABLE memories_fts USING fts5(title, tags, body,"
        " tokenize='unicode61 remove_diacritics 0')"
    )
    db.execute("DELETE FROM memories")
    db.execute("DELETE FROM files")


@migration(SCHEMA, 7)
def _vectors(db: sqlite3.Connection) -> None:
    # The semantic channel: a vector per distinct passage (Memory.passage) and model.
    db.execute(
        "CREATE TABLE vectors (digest TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL,"
        " PRIMARY KEY (digest, model)) WITHOUT ROWID"
    )
    db.execute("ALTER TABLE memories ADD COLUMN passage_digest TEXT NOT NULL DEFAULT ''")
    db.execute("DELETE FROM memories_fts")
    db.execute("DELETE FROM memories")
    db.execute("DELETE FROM files")


class ProjectIndex:
    """The index of one project's memory files."""

    def __init__(self, path: Path, check: bool = False) -> None:
        self.path = path
        #: Whether a read met a damaged file (the owner calls :meth:`reset`).
        self.damaged = False
        #: Whether opening found the file damaged and started a new one.
        self.rebuilt = False
        try:
            self.database = self._open(check)
        except (StoreUnavailable, sqlite3.DatabaseError) as exc:
            if not _is_damage(exc):
                raise
            _discard(path)
            self.database = self._open(check=False)
            self.rebuilt = True
        self._counts = DocumentCounts()

    def _open(self, check: bool) -> Database:
        database = Database(self.path, "normal")
        try:
            if check:
                with database.snapshot() as db:
                    verdict = db.execute("PRAGMA quick_check(1)").fetchone()[0]
                if verdict != "ok":
                    raise _Damaged(verdict)
            database.migrate(SCHEMA)
        except BaseException:
            database.close()
            raise
        return database

    def reset(self) -> None:
        """Start again from an empty index (the caller re-reads every file)."""
        self.database.close()
        _discard(self.path)
        self.database = self._open(check=False)
        self._counts = DocumentCounts()
        self.damaged = False

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._noticing_damage(), self.database.transaction(durable=False) as db:
            yield db

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._noticing_damage(), self.database.snapshot() as db:
            yield db

    @contextmanager
    def _noticing_damage(self) -> Iterator[None]:
        try:
            yield
        except (StoreUnavailable, sqlite3.DatabaseError) as exc:
            if not _is_damage(exc):
                raise
            self.damaged = True
            raise IndexDamaged(
                f"{self.path.name} (derived from the memory files) is damaged: it is rebuilt"
                " at the next call; run the command again"
            ) from exc

    # --- files ---------------------------------------------------------------------

    def files(self) -> dict[str, FileState]:
        with self._read() as db:
            return {row[0]: FileState(*row) for row in db.execute("SELECT * FROM files")}

    def update(
        self,
        changed: Sequence[tuple[FileState, Memory | None]],
        removed: Iterable[str],
        progress: Progress = no_progress,
    ) -> None:
        """Apply parsed files and removals in one transaction."""
        with self._write() as db:
            for path in removed:
                self._forget_file(db, path)
            for done, (state, memory) in enumerate(changed):
                if done % _PROGRESS_EVERY == 0:
                    progress("indexing memory files", done, len(changed))
                self._forget_file(db, state.path)
                problem = state.problem
                if memory is not None and problem is None:
                    problem = self._add_memory(db, state.path, memory)
                db.execute(
                    "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        state.path,
                        state.mtime_ns,
                        state.size,
                        state.sha256,
                        memory.id if memory is not None and problem is None else None,
                        problem,
                    ),
                )
            progress("indexing memory files", len(changed), len(changed))

    def _forget_file(self, db: sqlite3.Connection, path: str, keep_file: bool = False) -> None:
        row = db.execute("SELECT rowid FROM memories WHERE path = ?", (path,)).fetchone()
        if row is not None:
            db.execute("DELETE FROM memories_fts WHERE rowid = ?", (row[0],))
            db.execute("DELETE FROM memories WHERE rowid = ?", (row[0],))
        if not keep_file:
            db.execute("DELETE FROM files WHERE path = ?", (path,))

    def duplicate_paths(self) -> list[str]:
        """Files refused only because another file had their id first."""
        with self._read() as db:
            return [
                row[0]
                for row in db.execute(
                    "SELECT path FROM files WHERE problem LIKE 'duplicate id %'"
                    " OR problem LIKE 'shadowed by %'"
                )
            ]

    def _add_memory(self, db: sqlite3.Connection, path: str, memory: Memory) -> str | None:
        """Index a memory; the reason it is not indexed, if it is not.

        Ids are unique across the workspace and the global root. A workspace memory
        shadows a global one with the same id (not an error); two files of one root
        with the same id are an error, and the first in folder order keeps the id.
        """
        clash = db.execute("SELECT path FROM memories WHERE id = ?", (memory.id,)).fetchone()
        if clash is not None:
            other = str(clash[0])
            if _is_global(path) and not _is_global(other):
                return f"shadowed by {other}"
            workspace_wins = _is_global(other) and not _is_global(path)
            same_root = _is_global(other) == _is_global(path)
            # Within one root the file first in folder order (rules, skills, knowledge,
            # working) then path keeps the id, whatever the order files were indexed in:
            # the same files always give the same result.
            if not workspace_wins and not (same_root and _precedence(path) < _precedence(other)):
                return f"duplicate id {memory.id} (also in {other})"
            reason = (
                f"shadowed by {path}"
                if workspace_wins
                else f"duplicate id {memory.id} (also in {path})"
            )
            self._forget_file(db, other, keep_file=True)
            db.execute(
                "UPDATE files SET memory_id = NULL, problem = ? WHERE path = ?", (reason, other)
            )
        cursor = db.execute(
            "INSERT INTO memories (id, path, type, scope, title, fields, body, passage_digest)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                memory.id,
                path,
                memory.type,
                memory.scope,
                memory.title,
                json.dumps(memory.fields, sort_keys=True),
                memory.body,
                _digest(memory.passage),
            ),
        )
        db.execute(
            "INSERT INTO memories_fts (rowid, title, tags, body) VALUES (?, ?, ?, ?)",
            (
                cursor.lastrowid,
                index_terms(memory.title),
                index_terms(" ".join(memory.tags)),
                index_terms(memory.body),
            ),
        )
        return None

    # --- memories ------------------------------------------------------------------

    def memories(self) -> list[Memory]:
        """Every valid memory, ordered by id."""
        with self._read() as db:
            return [
                _memory(row)
                for row in db.execute(
                    "SELECT id, type, scope, title, body, fields FROM memories ORDER BY id"
                )
            ]

    def memory(self, memory_id: str) -> Memory | None:
        with self._read() as db:
            row = db.execute(
                "SELECT id, type, scope, title, body, fields FROM memories WHERE id = ?",
                (memory_id,),
            ).fetchone()
        return _memory(row) if row else None

    def problems(self) -> list[tuple[str, str]]:
        with self._read() as db:
            return list(
                db.execute(
                    "SELECT path, problem FROM files WHERE problem IS NOT NULL"
                    " AND problem NOT LIKE 'shadowed by %' ORDER BY path"
                )
            )

    def search(self, text: str, limit: int) -> list[tuple[str, float, list[str]]]:
        """``(id, score, matched terms)`` by BM25 (title 3x, tags 2x, body 1x), best first;
        a matched term is shown as its first stem variant."""
        groups = query_groups(text)
        if not groups:
            return []
        with self._read() as db:
            documents = db.execute("SELECT count(*) FROM memories").fetchone()[0]
            # Past the number of memories nothing more is found, and an arbitrarily
            # large limit must not reach SQLite (a 64-bit LIMIT).
            limit = min(limit, max(documents, 1))
            cutoff = common_cutoff(documents)
            counts = (
                {}
                if cutoff is None
                else self._counts.lookup(db, "memories_fts", variants(groups), cutoff)
            )
            rows: list[Any] = []
            for stage in search_stages(groups, counts, documents):
                exact = self._counts.lookup(
                    db, "memories_fts", variants(list(stage.groups)), documents
                )
                scored = stage_scores("memories_fts", _BM25, stage, exact, documents)
                if scored is None:
                    continue
                clause, parameters = scored
                # Rank first, join the few winners after; twice the limit, so equal scores
                # at the edge still sort by id.
                rows = db.execute(
                    f"{clause} SELECT m.id, f.score, m.title || ' ' || m.body FROM"
                    " (SELECT rowid, score FROM scores ORDER BY score LIMIT ?) AS f"
                    " JOIN memories AS m ON m.rowid = f.rowid ORDER BY f.score, m.id LIMIT ?",
                    (*parameters, 2 * limit, limit),
                ).fetchall()
                if rows:
                    break
        return [
            (memory_id, round(-score, 6), _matched(groups, text_))
            for memory_id, score, text_ in rows
        ]

    # --- the semantic channel ---------------------------------------------------------

    def vector_counts(self, model: str) -> tuple[int, int]:
        """``(memories, memories with a vector for model)``."""
        with self._read() as db:
            row = db.execute(
                "SELECT count(*), count(v.digest) FROM memories AS m"
                " LEFT JOIN vectors AS v ON v.digest = m.passage_digest AND v.model = ?",
                (model,),
            ).fetchone()
        return int(row[0]), int(row[1])

    def unembedded(self, model: str, limit: int) -> list[tuple[str, str]]:
        """``(digest, passage)`` of up to ``limit`` passages with no vector for model."""
        with self._read() as db:
            rows = db.execute(
                "SELECT m.passage_digest, m.id, m.type, m.scope, m.title, m.body, m.fields"
                " FROM memories AS m"
                " LEFT JOIN vectors AS v ON v.digest = m.passage_digest AND v.model = ?"
                " WHERE v.digest IS NULL GROUP BY m.passage_digest ORDER BY m.passage_digest"
                " LIMIT ?",
                (model, limit),
            ).fetchall()
        return [(row[0], _memory(row[1:]).passage) for row in rows]

    def put_vectors(self, model: str, vectors: Iterable[tuple[str, bytes]]) -> None:
        """Store vectors; drop those no memory's passage has any more."""
        with self._write() as db:
            db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [(digest, model, vector) for digest, vector in vectors],
            )
            db.execute(
                "DELETE FROM vectors WHERE digest NOT IN (SELECT passage_digest FROM memories)"
            )

    def vectors(self, model: str) -> list[tuple[str, bytes]]:
        """``(memory id, float32 bytes)`` of every memory with a vector, by id."""
        with self._read() as db:
            return list(
                db.execute(
                    "SELECT m.id, v.vector FROM memories AS m JOIN vectors AS v"
                    " ON v.digest = m.passage_digest AND v.model = ? ORDER BY m.id",
                    (model,),
                )
            )

    # --- usage ---------------------------------------------------------------------

    def count_use(self, memory_ids: Iterable[str]) -> None:
        with self._write() as db:
            for memory_id in memory_ids:
                db.execute(
                    "INSERT INTO usage VALUES (?, 1) ON CONFLICT (id)"
                    " DO UPDATE SET count = count + 1",
                    (memory_id,),
                )

    def generation(self) -> int:
        """SQLite's ``data_version``: it changes when another connection commits."""
        with self._read() as db:
            value: int = db.execute("PRAGMA data_version").fetchone()[0]
        return value

    def most_used(self, limit: int) -> list[str]:
        with self._read() as db:
            return [
                row[0]
                for row in db.execute(
                    "SELECT u.id FROM usage AS u JOIN memories AS m ON m.id = u.id"
                    " ORDER BY u.count DESC, u.id LIMIT ?",
                    (limit,),
                )
            ]

    def close(self) -> None:
        self.database.close()


_FOLDER_ORDER = ("rules", "skills", "knowledge", "working")


#: SQLite's primary result codes for a damaged file: SQLITE_CORRUPT, SQLITE_NOTADB.
_DAMAGE_CODES: Final = (11, 26)


class _Damaged(sqlite3.DatabaseError):
    """``PRAGMA quick_check`` found the file damaged."""


def _is_damage(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) is SQLite finding the file damaged."""
    if isinstance(error, _Damaged):
        return True
    for cause in (error, error.__cause__):
        code = getattr(cause, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in _DAMAGE_CODES:
            return True
    return False


def _discard(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def _precedence(path: str) -> tuple[int, str]:
    folder = path.removeprefix("global:").split("/", 1)[0]
    rank = _FOLDER_ORDER.index(folder) if folder in _FOLDER_ORDER else len(_FOLDER_ORDER)
    return rank, path


def _is_global(path: str) -> bool:
    return path.startswith("global:")


def _digest(passage: str) -> str:
    return hashlib.sha256(passage.encode()).hexdigest()


#: FTS5's ranking function with each column's weight, in the table's column order.
_BM25: Final = "bm25(memories_fts, {title}, {tags}, {body})".format(**PROJECT_WEIGHTS)


def _matched(groups: list[Group], text: str) -> list[str]:
    present = set(index_terms(text).split())
    return [group[0] for group in groups if present.intersection(group)]


def _memory(row: tuple[Any, ...]) -> Memory:
    return Memory(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]))
