"""Document counts: exact up to the cap, stemmed like the index, forgotten whenever the
index changes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engram.store.sqlite.database import Database
from engram.store.sqlite.vocabulary import LIMIT, DocumentCounts


@pytest.fixture
def database(tmp_path: Path) -> Database:
    database = Database(tmp_path / "index.sqlite", "normal")
    with database.transaction() as db:
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(text, tokenize='porter unicode61')")
        db.execute("CREATE TABLE notes (text TEXT)")
        for text in ("alpha beta", "alpha gamma", "alpha beta beta", "releases alpha"):
            db.execute("INSERT INTO docs (text) VALUES (?)", (text,))
    return database


def _lookup(
    database: Database, cache: DocumentCounts, words: list[str], cap: int = 10
) -> dict[str, int]:
    with database.snapshot() as db:
        return cache.lookup(db, "docs", words, cap)


def test_counts_documents_not_occurrences_through_the_indexs_tokenizer(
    database: Database,
) -> None:
    cache = DocumentCounts()
    assert _lookup(database, cache, ["alpha", "beta", "delta", "released"]) == {
        "alpha": 4,
        "beta": 2,
        "delta": 0,
        "released": 1,  # porter: released, releases -> releas
    }


def test_counting_stops_one_past_the_cap(database: Database) -> None:
    cache = DocumentCounts()
    assert _lookup(database, cache, ["alpha", "beta"], cap=2) == {"alpha": 3, "beta": 2}
    assert _lookup(database, cache, ["alpha"], cap=0) == {"alpha": 1}


def test_a_change_of_the_index_by_this_connection_is_seen_at_once(database: Database) -> None:
    cache = DocumentCounts()
    assert _lookup(database, cache, ["beta"]) == {"beta": 2}
    with database.transaction() as db:
        db.execute("INSERT INTO docs (text) VALUES ('beta delta')")
    assert _lookup(database, cache, ["beta", "delta"]) == {"beta": 3, "delta": 1}
    with database.transaction() as db:
        db.execute("DELETE FROM docs WHERE text = 'alpha beta'")
    assert _lookup(database, cache, ["beta", "alpha"]) == {"beta": 2, "alpha": 3}


def test_a_change_by_another_connection_is_seen_at_once(database: Database) -> None:
    cache = DocumentCounts()
    assert _lookup(database, cache, ["gamma"]) == {"gamma": 1}
    other = sqlite3.connect(database.path, isolation_level=None)
    other.execute("INSERT INTO docs (text) VALUES ('gamma')")
    other.close()
    assert _lookup(database, cache, ["gamma"]) == {"gamma": 2}


def test_a_commit_that_leaves_the_index_alone_keeps_the_counts(database: Database) -> None:
    cache = DocumentCounts()
    assert _lookup(database, cache, ["alpha"]) == {"alpha": 4}
    with database.transaction() as db:
        db.execute("INSERT INTO notes VALUES ('an audit entry')")
    assert set(cache._counts) == {("docs", "alpha")}


def test_the_memory_is_bounded(database: Database) -> None:
    cache = DocumentCounts()
    assert _lookup(database, cache, [f"w{number}" for number in range(LIMIT)])["w1"] == 0
    assert _lookup(database, cache, ["alpha", "zeta"]) == {"alpha": 4, "zeta": 0}
    assert set(cache._counts) == {("docs", "alpha"), ("docs", "zeta")}


def test_an_exact_count_serves_any_cap_and_one_stopped_at_its_cap_is_counted_again(
    database: Database,
) -> None:
    cache = DocumentCounts()
    assert _lookup(database, cache, ["alpha", "beta"], cap=2) == {"alpha": 3, "beta": 2}
    counted: list[str] = []
    with database.snapshot() as db:
        db.set_trace_callback(counted.append)
        assert cache.lookup(db, "docs", ["alpha", "beta"], 10) == {"alpha": 4, "beta": 2}
        assert cache.lookup(db, "docs", ["alpha", "beta"], 1) == {"alpha": 2, "beta": 2}
        db.set_trace_callback(None)
    assert [statement for statement in counted if "MATCH" in statement] == [
        """SELECT count(*) FROM (SELECT 1 FROM docs WHERE docs MATCH '"alpha"' LIMIT 11)"""
    ]
