"""Remembered document frequencies: exact, and forgotten whenever the index changes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engram.store.sqlite.database import Database
from engram.store.sqlite.vocabulary import LIMIT, DocumentFrequencies


@pytest.fixture
def database(tmp_path: Path) -> Database:
    database = Database(tmp_path / "index.sqlite", "normal")
    with database.transaction() as db:
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(text)")
        db.execute("CREATE VIRTUAL TABLE docs_terms USING fts5vocab(docs, 'row')")
        db.execute("CREATE TABLE notes (text TEXT)")
        for text in ("alpha beta", "alpha gamma", "alpha beta beta"):
            db.execute("INSERT INTO docs (text) VALUES (?)", (text,))
    return database


def _lookup(database: Database, cache: DocumentFrequencies, words: list[str]) -> dict[str, int]:
    with database.snapshot() as db:
        return cache.lookup(db, "docs", "docs_terms", words)


def _counted(cache: DocumentFrequencies) -> set[str]:
    return {word for _, word in cache._counts}


def test_counts_documents_not_occurrences_and_leaves_out_absent_words(
    database: Database,
) -> None:
    cache = DocumentFrequencies()
    assert _lookup(database, cache, ["alpha", "beta", "delta", "beta"]) == {
        "alpha": 3,
        "beta": 2,
    }
    assert _lookup(database, cache, ["gamma", "beta"]) == {"gamma": 1, "beta": 2}


def test_a_change_of_the_index_by_this_connection_is_seen_at_once(database: Database) -> None:
    cache = DocumentFrequencies()
    assert _lookup(database, cache, ["beta"]) == {"beta": 2}
    with database.transaction() as db:
        db.execute("INSERT INTO docs (text) VALUES ('beta delta')")
    assert _lookup(database, cache, ["beta", "delta"]) == {"beta": 3, "delta": 1}
    with database.transaction() as db:
        db.execute("DELETE FROM docs WHERE text = 'alpha beta'")
    assert _lookup(database, cache, ["beta", "alpha"]) == {"beta": 2, "alpha": 2}


def test_a_change_by_another_connection_is_seen_at_once(database: Database) -> None:
    cache = DocumentFrequencies()
    assert _lookup(database, cache, ["gamma"]) == {"gamma": 1}
    other = sqlite3.connect(database.path, isolation_level=None)
    other.execute("INSERT INTO docs (text) VALUES ('gamma')")
    other.close()
    assert _lookup(database, cache, ["gamma"]) == {"gamma": 2}


def test_a_commit_that_leaves_the_index_alone_keeps_the_counts(database: Database) -> None:
    cache = DocumentFrequencies()
    assert _lookup(database, cache, ["alpha"]) == {"alpha": 3}
    with database.transaction() as db:
        db.execute("INSERT INTO notes VALUES ('an audit entry')")
    assert _counted(cache) == {"alpha"}
    assert _lookup(database, cache, ["alpha", "beta"]) == {"alpha": 3, "beta": 2}


def test_the_memory_is_bounded(database: Database) -> None:
    cache = DocumentFrequencies()
    words = [f"w{number}" for number in range(LIMIT)]
    assert _lookup(database, cache, words) == {}
    assert _lookup(database, cache, ["alpha", "zeta"]) == {"alpha": 3}
    assert _counted(cache) == {"alpha", "zeta"}
