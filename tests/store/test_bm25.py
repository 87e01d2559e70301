"""A stage scored over FTS5 with engram's BM25: FTS5's rank part by part, reweighted to
:func:`engram.search.lexical.idf`, equals BM25 computed by hand, where FTS5's own IDF
would have weighed most of these words 1e-6."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator

import pytest

from engram.search.lexical import Group, Stage
from engram.store.sqlite.bm25 import stage_scores
from engram.store.sqlite.vocabulary import DocumentCounts

DOCUMENTS = ("alpha beta", "alpha gamma gamma", "alpha beta delta alpha", "epsilon")


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE VIRTUAL TABLE docs USING fts5(text)")
    connection.executemany("INSERT INTO docs (text) VALUES (?)", [(d,) for d in DOCUMENTS])
    yield connection
    connection.close()


def by_hand(phrases: list[str], every: list[Group] | None = None) -> dict[int, float]:
    """BM25 (k1 1.2, b 0.75, IDF ln(1 + (N - n + 0.5) / (n + 0.5))) of each document
    holding a phrase (and, with ``every``, a variant of each group), by rowid."""
    words = [text.split() for text in DOCUMENTS]
    average = sum(map(len, words)) / len(words)
    scores = {}
    for rowid, held in enumerate(words, start=1):
        if every and not all(any(v in held for v in group) for group in every):
            continue
        score = 0.0
        for phrase in phrases:
            holding = sum(phrase in other for other in words)
            tf = held.count(phrase)
            if tf:
                weight = math.log(1 + (len(words) - holding + 0.5) / (holding + 0.5))
                score += weight * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(held) / average))
        if score:
            scores[rowid] = score
    return scores


def scored(db: sqlite3.Connection, stage: Stage) -> dict[int, float]:
    phrases = list(dict.fromkeys(stage.phrases()))
    counts = DocumentCounts().lookup(db, "docs", phrases, len(DOCUMENTS))
    found = stage_scores("docs", "rank", stage, counts, len(DOCUMENTS))
    assert found is not None
    clause, parameters = found
    return {
        rowid: -score
        for rowid, score in db.execute(f"{clause} SELECT rowid, score FROM scores", parameters)
    }


def test_words_most_documents_hold_keep_a_weight_fts5_would_give_1e_6(
    db: sqlite3.Connection,
) -> None:
    stage = Stage((("alpha",), ("beta", "gamma")))
    assert scored(db, stage) == pytest.approx(by_hand(["alpha", "beta", "gamma"]), rel=1e-12)
    fts5 = dict(db.execute("SELECT rowid, -rank FROM docs WHERE docs MATCH 'alpha OR beta'"))
    assert max(fts5.values()) < 1e-5  # three of four hold alpha, two beta: both 1e-6
    # Worked by hand: alpha weighs ln(1 + 1.5 / 3.5), beta ln 2; the average length is 2.5.
    assert scored(db, Stage((("alpha",), ("beta",)))) == pytest.approx(
        {1: 1.143371, 2: 0.329700, 3: 0.976159}, abs=1e-6
    )


def test_a_phrase_in_two_groups_counts_twice(db: sqlite3.Connection) -> None:
    stage = Stage((("alpha",), ("alpha", "delta")))
    assert scored(db, stage) == pytest.approx(by_hand(["alpha", "alpha", "delta"]), rel=1e-12)


def test_a_stage_of_every_group_scores_only_documents_holding_all(
    db: sqlite3.Connection,
) -> None:
    groups = (("alpha",), ("beta", "epsilon"))
    found = scored(db, Stage(groups, every=True))
    assert sorted(found) == [1, 3]
    assert found == pytest.approx(by_hand(["alpha", "beta", "epsilon"], list(groups)))


def test_nothing_to_score_when_no_document_holds_a_phrase(db: sqlite3.Connection) -> None:
    assert stage_scores("docs", "rank", Stage((("zeta",),)), {"zeta": 0}, 4) is None


def test_a_count_that_drifted_above_the_tables_size_still_ranks(db: sqlite3.Connection) -> None:
    found = stage_scores("docs", "rank", Stage((("alpha",),)), {"alpha": 9}, 4)
    assert found is not None
    clause, parameters = found
    ranked = db.execute(f"{clause} SELECT rowid FROM scores ORDER BY score, rowid", parameters)
    assert [rowid for (rowid,) in ranked] == [3, 1, 2]  # twice in 4 words, then 2, then 3
