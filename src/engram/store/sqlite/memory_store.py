"""The governed-memory store on SQLite (implements :mod:`engram.memory.ports`).

Tables: ``candidates`` and ``records`` (content only as ciphertext), ``data_keys``
(wrapped per-item keys; deleting a row destroys the item's content), ``journal`` (a
hash chain per scope), ``scope_state`` (per-scope cursor head and records version),
``idempotency`` (outcomes by principal-scoped key, surviving restarts),
``confirmations`` and ``audit`` (append-only: triggers refuse update and delete),
``activity`` and ``record_days`` (each day's events per operation, each day's
records per state: what the host's views count, kept as the journal and the records
change). Each scope's lexical projection is its own contentless FTS5 table, so one
tenant's index never holds another's terms and can be purged on its own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engram.memory.ports import RecordRow
from engram.memory.purge import PurgeFinisher
from engram.search.analysis import analyzer_tag
from engram.search.lexical import Group, common_cutoff, search_stages, variants
from engram.store.backup_rows import BackupRowReads, BackupRowWrites
from engram.store.governance_rows import GovernanceReads, GovernanceWrites
from engram.store.overview_rows import OverviewReads
from engram.store.rows import prefixed, to_record
from engram.store.sqlite.bm25 import stage_scores
from engram.store.sqlite.database import Database, Durability, migration
from engram.store.sqlite.vocabulary import DocumentCounts

__all__ = ["SqliteMemoryStore"]

SCHEMA = "memory"
#: An audit entry's principal, as the views filter on it (OverviewReads.AUDIT_PRINCIPAL).
_PRINCIPAL = "json_extract(identity, '$.principal')"


_SCHEMA_V1 = (
    (
        "CREATE TABLE IF NOT EXISTS candidates (candidate_id TEXT PRIMARY KEY, "
        "scope_id TEXT NOT NULL, principal TEXT NOT NULL, state TEXT NOT NULL, "
        "payload_digest TEXT NOT NULL, record_digest TEXT NOT NULL, sealed BLOB, "
        "captured_ms INTEGER NOT NULL, retention TEXT NOT NULL, "
        "capture_cursor INTEGER NOT NULL, record_id TEXT, decision TEXT)"
    ),
    (
        "CREATE TABLE IF NOT EXISTS records (rowid INTEGER PRIMARY KEY, "
        "record_id TEXT UNIQUE NOT NULL, scope_id TEXT NOT NULL, "
        "candidate_id TEXT NOT NULL, state TEXT NOT NULL, record_digest TEXT NOT NULL, "
        "payload_digest TEXT NOT NULL, sealed BLOB, valid_t INTEGER NOT NULL, "
        "valid_t_end INTEGER, expires_ms INTEGER, admitted_ms INTEGER NOT NULL, "
        "admit_cursor INTEGER NOT NULL)"
    ),
    ("CREATE INDEX IF NOT EXISTS records_by_payload ON records (scope_id, payload_digest)"),
    "CREATE INDEX IF NOT EXISTS records_by_expiry ON records (state, expires_ms)",
    (
        "CREATE TABLE IF NOT EXISTS data_keys (owner TEXT PRIMARY KEY, "
        "scope_id TEXT NOT NULL, kek_id TEXT NOT NULL, wrapped BLOB NOT NULL)"
    ),
    (
        "CREATE TABLE IF NOT EXISTS journal (scope_id TEXT NOT NULL, "
        "cursor INTEGER NOT NULL, event_digest TEXT NOT NULL, previous TEXT NOT NULL, "
        "body TEXT NOT NULL, PRIMARY KEY (scope_id, cursor))"
    ),
    (
        "CREATE TABLE IF NOT EXISTS scope_state (scope_id TEXT PRIMARY KEY, "
        "head_cursor INTEGER NOT NULL, head_digest TEXT NOT NULL, "
        "records_version INTEGER NOT NULL)"
    ),
    (
        "CREATE TABLE IF NOT EXISTS idempotency (scope_id TEXT NOT NULL, "
        "principal TEXT NOT NULL, key TEXT NOT NULL, tool TEXT NOT NULL, "
        "intent_digest TEXT NOT NULL, outcome TEXT NOT NULL, PRIMARY KEY (scope_id, "
        "principal, key))"
    ),
    (
        "CREATE TABLE IF NOT EXISTS confirmations (request_id TEXT PRIMARY KEY, "
        "scope_id TEXT NOT NULL, principal TEXT NOT NULL, tool TEXT NOT NULL, "
        "target TEXT NOT NULL, operation_digest TEXT NOT NULL, "
        "created_ms INTEGER NOT NULL, approved_ms INTEGER, consumed_ms INTEGER, "
        "display TEXT NOT NULL)"
    ),
    (
        "CREATE TABLE IF NOT EXISTS revocations (scope_id TEXT NOT NULL, "
        "principal TEXT NOT NULL, revoked_ms INTEGER NOT NULL, PRIMARY KEY (scope_id, "
        "principal))"
    ),
    (
        "CREATE TABLE IF NOT EXISTS audit (audit_id TEXT PRIMARY KEY, "
        "scope_id TEXT NOT NULL, at_ms INTEGER NOT NULL, tool TEXT NOT NULL, "
        "outcome TEXT NOT NULL, identity TEXT NOT NULL, digests TEXT NOT NULL)"
    ),
    (
        "CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit"
        " BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END"
    ),
    (
        "CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit"
        " BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END"
    ),
)


@migration(SCHEMA, 1)
def _create_tables(db: sqlite3.Connection) -> None:
    # One statement at a time: executescript() would commit the migration transaction.
    for statement in _SCHEMA_V1:
        db.execute(statement)


@migration(SCHEMA, 2)
def _count_indexed_documents(db: sqlite3.Connection) -> None:
    # How many records each scope's index holds: the N of BM25 for query planning.
    db.execute(
        "CREATE TABLE IF NOT EXISTS index_counts"
        " (scope_id TEXT PRIMARY KEY, documents INTEGER NOT NULL)"
    )


@migration(SCHEMA, 3)
def _create_purges(db: sqlite3.Connection) -> None:
    # Cleanup owed after a withdraw or forget (engram.memory.purge).
    db.execute(
        "CREATE TABLE IF NOT EXISTS purges (owner TEXT PRIMARY KEY, scope_id TEXT NOT NULL,"
        " kind TEXT NOT NULL, created_ms INTEGER NOT NULL, done_ms INTEGER)"
    )


@migration(SCHEMA, 5)
def _semantic_projection(db: sqlite3.Connection) -> None:
    # The semantic projection: one vector per indexed record and projection key (the
    # model and how a vector is made: memory/semantic.py), derived from the record's text
    # like the lexical index, and removed with it.
    db.execute(
        "CREATE TABLE IF NOT EXISTS vectors (record_rowid INTEGER NOT NULL,"
        " scope_id TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL,"
        " PRIMARY KEY (record_rowid, model))"
    )
    db.execute("CREATE INDEX IF NOT EXISTS vectors_by_scope ON vectors (scope_id, model)")


@migration(SCHEMA, 6)
def _vector_versions(db: sqlite3.Connection) -> None:
    # The projection's version per scope and model, kept by triggers: counting and
    # summing the vectors table on every search read all its blobs (150 ms at 100,000
    # records). ``changes`` grows with every insert, update and delete, so a replaced
    # vector is a new version too.
    db.execute(
        "CREATE TABLE IF NOT EXISTS vector_versions (scope_id TEXT NOT NULL,"
        " model TEXT NOT NULL, count INTEGER NOT NULL, largest INTEGER NOT NULL,"
        " changes INTEGER NOT NULL, PRIMARY KEY (scope_id, model))"
    )
    db.execute(
        "INSERT OR REPLACE INTO vector_versions SELECT scope_id, model, count(*),"
        " max(record_rowid), count(*) FROM vectors GROUP BY scope_id, model"
    )
    for statement in (
        "CREATE TRIGGER IF NOT EXISTS vectors_inserted AFTER INSERT ON vectors BEGIN"
        " INSERT INTO vector_versions VALUES (new.scope_id, new.model, 1, new.record_rowid, 1)"
        " ON CONFLICT (scope_id, model) DO UPDATE SET count = count + 1,"
        " largest = max(largest, excluded.largest), changes = changes + 1; END",
        "CREATE TRIGGER IF NOT EXISTS vectors_updated AFTER UPDATE ON vectors BEGIN"
        " UPDATE vector_versions SET changes = changes + 1"
        " WHERE scope_id = new.scope_id AND model = new.model; END",
        "CREATE TRIGGER IF NOT EXISTS vectors_deleted AFTER DELETE ON vectors BEGIN"
        " UPDATE vector_versions SET count = count - 1, changes = changes + 1"
        " WHERE scope_id = old.scope_id AND model = old.model; END",
    ):
        db.execute(statement)


@migration(SCHEMA, 7)
def _hashed_idempotency_keys(db: sqlite3.Connection) -> None:
    # Idempotency keys are agent-written: the store keeps their HMAC (memory/idempotency.py).
    # Rows from before stay in clear (hashed = 0) until an engine, which holds the MAC
    # key, hashes them (MemoryEngine.hash_legacy_keys).
    db.execute("ALTER TABLE idempotency ADD COLUMN hashed INTEGER NOT NULL DEFAULT 0")


@migration(SCHEMA, 8)
def _clear_keys_index(db: sqlite3.Connection) -> None:
    # Every server start looks for keys still in clear: without this, a scan of the table.
    db.execute(
        "CREATE INDEX IF NOT EXISTS idempotency_in_clear ON idempotency (scope_id) WHERE hashed = 0"
    )


@migration(SCHEMA, 4)
def _index_every_lookup(db: sqlite3.Connection) -> None:
    # With (scope_id, payload_digest) alone, the planner preferred records_by_expiry
    # for "state = ?", so every admission scanned each accepted record of the store;
    # listing pending candidates and matching a confirmation scanned their tables.
    db.execute("DROP INDEX IF EXISTS records_by_payload")
    db.execute(
        "CREATE INDEX IF NOT EXISTS records_by_payload_state"
        " ON records (scope_id, payload_digest, state)"
    )
    db.execute(
        "CREATE INDEX IF NOT EXISTS candidates_by_state"
        " ON candidates (scope_id, state, captured_ms)"
    )
    db.execute(
        "CREATE INDEX IF NOT EXISTS confirmations_by_operation"
        " ON confirmations (scope_id, principal, operation_digest)"
    )
    db.execute(
        "CREATE INDEX IF NOT EXISTS confirmations_by_creation"
        " ON confirmations (scope_id, created_ms, request_id)"
    )


@migration(SCHEMA, 9)
def _journal_targets(db: sqlite3.Connection) -> None:
    # A record's lifecycle (the host's views) is the events whose target is the record or
    # its candidate: the target in a column of its own, indexed, instead of in the body.
    db.execute("ALTER TABLE journal ADD COLUMN target TEXT")
    db.execute("UPDATE journal SET target = json_extract(body, '$.target')")
    db.execute("CREATE INDEX IF NOT EXISTS journal_by_target ON journal (scope_id, target)")


@migration(SCHEMA, 10)
def _activity(db: sqlite3.Connection) -> None:
    # Events per scope, UTC day, operation and resulting state, kept by append_event so
    # that a view of the last days never reads the journal; counted from it once here.
    db.execute(
        "CREATE TABLE IF NOT EXISTS activity (scope_id TEXT NOT NULL, day INTEGER NOT NULL,"
        " operation TEXT NOT NULL, to_state TEXT NOT NULL, events INTEGER NOT NULL,"
        " PRIMARY KEY (scope_id, day, operation, to_state))"
    )
    db.execute(
        "INSERT INTO activity SELECT scope_id, json_extract(body, '$.at') / 86400000,"
        " coalesce(json_extract(body, '$.operation'), ''),"
        " coalesce(json_extract(body, '$.to_state'), ''), count(*) FROM journal"
        " WHERE json_type(body, '$.at') = 'integer' GROUP BY 1, 2, 3, 4"
    )


@migration(SCHEMA, 11)
def _record_days(db: sqlite3.Connection) -> None:
    # Records per scope, state and UTC day of admission, kept by add_record and
    # update_record: counting them by state and age read every record of the scope
    # (11 ms at 100,000 on SQLite, more on PostgreSQL); counted from them once here.
    db.execute(
        "CREATE TABLE IF NOT EXISTS record_days (scope_id TEXT NOT NULL, state TEXT NOT NULL,"
        " day INTEGER NOT NULL, records INTEGER NOT NULL, PRIMARY KEY (scope_id, state, day))"
    )
    db.execute(
        "INSERT INTO record_days SELECT scope_id, state, admitted_ms / 86400000, count(*)"
        " FROM records GROUP BY 1, 2, 3"
    )


@migration(SCHEMA, 12)
def _overview_indexes(db: sqlite3.Connection) -> None:
    # The host's views page newest first by one index range each (store/overview_rows.py).
    for statement in (
        "CREATE INDEX IF NOT EXISTS records_by_admission ON records (scope_id, admitted_ms)",
        "CREATE INDEX IF NOT EXISTS records_by_state_admission"
        " ON records (scope_id, state, admitted_ms)",
        "CREATE INDEX IF NOT EXISTS audit_by_time ON audit (scope_id, at_ms)",
        # Each filter's index ends with the other filters' columns, so that a combination
        # is checked in the index. The principal is inside the identity JSON: the index
        # is on the expression, not on a column. The audit is append-only (its triggers
        # refuse UPDATE), so a new column could not be filled for the entries already
        # there without lifting that guarantee, and a side table would be a second row
        # to keep in step on every call; an index is built from the rows as they are.
        f"CREATE INDEX IF NOT EXISTS audit_by_principal ON audit"
        f" (scope_id, {_PRINCIPAL}, at_ms, tool, outcome)",
        f"CREATE INDEX IF NOT EXISTS audit_by_tool ON audit"
        f" (scope_id, tool, at_ms, outcome, {_PRINCIPAL})",
        f"CREATE INDEX IF NOT EXISTS audit_by_outcome ON audit"
        f" (scope_id, outcome, at_ms, tool, {_PRINCIPAL})",
    ):
        db.execute(statement)


@migration(SCHEMA, 13)
def _who_asked(db: sqlite3.Connection) -> None:
    # The operator is shown who asked for each confirmation: the agent id of the binding
    # beside its principal (rows from before have none: shown "unknown"), and the open
    # requests of one principal are counted against the host's cap by one index range.
    # SQLite has no ADD COLUMN IF NOT EXISTS: a store whose migration rows were lost keeps
    # its column.
    if "agent_id" not in {row[1] for row in db.execute("PRAGMA table_info(confirmations)")}:
        db.execute("ALTER TABLE confirmations ADD COLUMN agent_id TEXT")
    db.execute(
        "CREATE INDEX IF NOT EXISTS confirmations_by_principal"
        " ON confirmations (scope_id, principal, created_ms)"
    )


def _fts(scope_id: str) -> str:
    """The scope's FTS5 table for this analyzer (:func:`analyzer_tag`; the first, a plain
    tokenizer, had no tag: ``fts_<scope>``)."""
    # scope_id is our own 32-hex digest, never user text, so it is safe in a name.
    if len(scope_id) != 32 or not all(c in "0123456789abcdef" for c in scope_id):
        raise ValueError("not a scope id")
    return f"fts{analyzer_tag()}_{scope_id}"


class _Reader(BackupRowReads, GovernanceReads, OverviewReads):
    """Reads over one connection inside a transaction or snapshot."""

    db: sqlite3.Connection

    SCOPE_FILTER = "+scope_id"  # look records up by their unique id or rowid
    PAYLOAD_INDEX = " INDEXED BY records_by_payload_state"
    EXPIRY_INDEX = " INDEXED BY records_by_expiry"
    AUDIT_PRINCIPAL = _PRINCIPAL
    NAMES_AUDIT_INDEX = True

    def __init__(self, db: sqlite3.Connection, counts: DocumentCounts | None = None) -> None:
        self.db = db
        self.counts = counts  # shared by snapshots only: a transaction sees its own writes

    def search(
        self, scope_id: str, groups: list[Group], limit: int, stage: int = 0
    ) -> list[tuple[RecordRow, float]] | None:
        table = _fts(scope_id)
        if not groups or not self._has_table(table):
            return [] if stage == 0 else None
        documents = self._documents(scope_id)
        cutoff = common_cutoff(documents)
        # A transaction sees its own writes: it counts anew.
        counter = self.counts if self.counts is not None else DocumentCounts()
        # A small index ranks every term: its stages need no counts, only its scores.
        counts = {} if cutoff is None else counter.lookup(self.db, table, variants(groups), cutoff)
        stages = search_stages(groups, counts, documents)
        if stage >= len(stages):
            return None
        chosen = stages[stage]
        scored = stage_scores(
            table,
            "rank",
            chosen,
            counter.lookup(self.db, table, variants(list(chosen.groups)), documents),
            documents,
        )
        if scored is None:
            return []
        clause, parameters = scored
        rows = self.db.execute(
            f"{clause} SELECT {prefixed('r')}, f.score FROM (SELECT rowid, score FROM scores"
            " ORDER BY score LIMIT ?) AS f"
            " JOIN records AS r ON r.rowid = f.rowid ORDER BY f.score, r.record_id",
            (*parameters, limit),
        ).fetchall()
        return [(to_record(row[:-1]), -float(row[-1])) for row in rows]

    def _documents(self, scope_id: str) -> int:
        row = self.db.execute(
            "SELECT documents FROM index_counts WHERE scope_id = ?", (scope_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def indexed(self, scope_id: str, record_id: str) -> bool:
        """Whether the record's row still has an entry in the scope's index."""
        table = _fts(scope_id)
        if not self._has_table(table):
            return False
        return (
            self.db.execute(
                f"SELECT 1 FROM {table}_docsize WHERE id = (SELECT rowid FROM records"
                " WHERE record_id = ?)",
                (record_id,),
            ).fetchone()
            is not None
        )

    def indexed_count(self, scope_id: str) -> int:
        return self._documents(scope_id)

    def unembedded(self, scope_id: str, model: str, limit: int) -> list[tuple[int, RecordRow]]:
        """Indexed records of the scope without a vector for ``model`` (oldest first)."""
        table = _fts(scope_id)
        if not self._has_table(table):
            return []
        rows = self.db.execute(
            f"SELECT r.rowid, {prefixed('r')} FROM {table}_docsize AS d"
            " JOIN records AS r ON r.rowid = d.id"
            " WHERE NOT EXISTS (SELECT 1 FROM vectors AS v"
            "  WHERE v.record_rowid = r.rowid AND v.model = ?)"
            " ORDER BY r.rowid LIMIT ?",
            (model, limit),
        ).fetchall()
        return [(row[0], to_record(row[1:])) for row in rows]

    def _legacy_tables(self, scope_id: str) -> list[str]:
        """The scope's FTS5 tables built under another analyzer tag."""
        current = _fts(scope_id)
        return [
            name
            for (name,) in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'fts*'"
                " AND substr(name, -33) = ?",
                ("_" + scope_id,),
            )
            if name != current
        ]

    def lexical_current(self, scope_id: str) -> bool:
        return not self._legacy_tables(scope_id)

    def _has_table(self, name: str) -> bool:
        return (
            self.db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
            ).fetchone()
            is not None
        )


class _Transaction(_Reader, BackupRowWrites, GovernanceWrites):
    """Writes inside one ``BEGIN IMMEDIATE`` transaction."""

    CLEAR_KEYS_HINT = " INDEXED BY idempotency_in_clear"

    def index(self, scope_id: str, record_id: str, text: str) -> None:
        table = _fts(scope_id)
        # The text is already analyzed (lower-case stems without diacritics, separated
        # by spaces): the tokenizer only splits it.
        self.db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5("
            "text, content='', tokenize='unicode61 remove_diacritics 0')"
        )
        self.db.execute(
            f"INSERT INTO {table} (rowid, text) SELECT rowid, ? FROM records WHERE record_id = ?",
            (text, record_id),
        )
        self._count(scope_id, +1)

    def put_vector(self, scope_id: str, rowid: int, model: str, vector: bytes) -> None:
        # Only for a record still in the lexical index: one that left it meanwhile (a
        # forget between reading and writing) never gets a vector back.
        # An upsert, not OR REPLACE: a replacing delete fires no trigger, and the
        # projection's version must count it.
        table = _fts(scope_id)
        self.db.execute(
            "INSERT INTO vectors SELECT ?, ?, ?, ?"
            f" WHERE EXISTS (SELECT 1 FROM {table}_docsize WHERE id = ?)"
            " ON CONFLICT (record_rowid, model) DO UPDATE SET vector = excluded.vector",
            (rowid, scope_id, model, vector, rowid),
        )

    def drop_other_vectors(self, scope_id: str, model: str) -> None:
        for table in ("vectors", "vector_versions"):
            self.db.execute(
                f"DELETE FROM {table} WHERE scope_id = ? AND model <> ?", (scope_id, model)
            )

    def unindex(self, scope_id: str, record_id: str, text: str) -> None:
        # The record leaves every projection: its vectors go with its terms.
        self.db.execute(
            "DELETE FROM vectors WHERE record_rowid = (SELECT rowid FROM records"
            " WHERE record_id = ?)",
            (record_id,),
        )
        table = _fts(scope_id)
        if self._has_table(table):
            self.db.execute(
                f"INSERT INTO {table} ({table}, rowid, text)"
                " SELECT 'delete', rowid, ? FROM records WHERE record_id = ?",
                (text, record_id),
            )
            self._count(scope_id, -1)

    def legacy_indexed(self, scope_id: str) -> list[RecordRow]:
        rowids: set[int] = set()
        for table in self._legacy_tables(scope_id):
            rowids.update(row[0] for row in self.db.execute(f"SELECT id FROM {table}_docsize"))
        found = self.records_by_rowid(scope_id, sorted(rowids))
        return [found[rowid] for rowid in sorted(found)]

    def drop_legacy_index(self, scope_id: str) -> None:
        for table in self._legacy_tables(scope_id):
            self.db.execute(f"DROP TABLE IF EXISTS {table}")
        table = _fts(scope_id)
        documents = (
            self.db.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0]
            if self._has_table(table)
            else 0
        )
        self.db.execute(
            "INSERT INTO index_counts VALUES (?, ?) ON CONFLICT (scope_id)"
            " DO UPDATE SET documents = excluded.documents",
            (scope_id, documents),
        )

    def _count(self, scope_id: str, change: int) -> None:
        self.db.execute(
            "INSERT INTO index_counts VALUES (?, ?) ON CONFLICT (scope_id)"
            " DO UPDATE SET documents = documents + excluded.documents",
            (scope_id, change),
        )

    def purge_index(self, scope_id: str) -> None:
        """Merge the scope's index so deleted entries leave no trace in its pages."""
        table = _fts(scope_id)
        if self._has_table(table):
            self.db.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")


class SqliteMemoryStore(PurgeFinisher):
    """A governed-memory store in one SQLite file."""

    def __init__(self, path: Path, durability: Durability = "full") -> None:
        self.database = Database(path, durability, private=True)
        self.database.migrate(SCHEMA)
        self._counts = DocumentCounts()

    @contextmanager
    def read(self) -> Iterator[_Reader]:
        with self.database.snapshot() as connection:
            yield _Reader(connection, self._counts)

    @contextmanager
    def write(self, durable: bool = True) -> Iterator[_Transaction]:
        with self.database.transaction(durable) as connection:
            yield _Transaction(connection)

    def checkpoint(self) -> bool:
        return self.database.checkpoint()

    def close(self) -> None:
        self.database.close()
