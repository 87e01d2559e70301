"""Remembered document frequencies: exact, and forgotten on every commit."""

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
        for text in ("alpha beta", "alpha gamma", "alpha beta beta"):
            db.execute("INSERT INTO docs (text) VALUES (?)", (text,))
    return database


def _lookup(database: Database, cache: DocumentFrequencies, words: list[str]) -> dict[str, int]:
    with database.snapshot() as db:
        return cache.lookup(db, "docs_terms", words)


def test_counts_documents_not_occurrences_and_leaves_out_absent_words(
    database: Database,
) -> None:
    cache = DocumentFrequencies(database)
    assert _lookup(database, cache, ["alpha", "beta", "delta", "beta"]) == {
        "alpha": 3,
        "beta": 2,
    }
    assert _lookup(database, cache, ["gamma", "beta"]) == {"gamma": 1, "beta": 2}


def test_a_commit_of_this_process_is_seen_at_once(database: Database) -> None:
    cache = DocumentFrequencies(database)
    assert _lookup(database, cache, ["beta"]) == {"beta": 2}
    with database.transaction() as db:
        db.execute("INSERT INTO docs (text) VALUES ('beta delta')")
    assert _lookup(database, cache, ["beta", "delta"]) == {"beta": 3, "delta": 1}


def test_a_commit_of_another_connection_is_seen_at_once(database: Database) -> None:
    cache = DocumentFrequencies(database)
    assert _lookup(database, cache, ["gamma"]) == {"gamma": 1}
    other = sqlite3.connect(database.path, isolation_level=None)
    other.execute("INSERT INTO docs (text) VALUES ('gamma')")
    other.close()
    assert _lookup(database, cache, ["gamma"]) == {"gamma": 2}


def test_the_memory_is_bounded(database: Database) -> None:
    cache = DocumentFrequencies(database)
    words = [f"w{number}" for number in range(LIMIT)]
    assert _lookup(database, cache, words) == {}
    assert _lookup(database, cache, ["alpha", "zeta"]) == {"alpha": 3}
    assert len(cache._counts) == 2
