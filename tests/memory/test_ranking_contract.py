"""Every store ranks alike: the same records, the same question, the same BM25 scores
in the same order, stage by stage (SQLite FTS5's ``bm25()``; PostgreSQL's postings
scored with its formula; the in-memory store the domain's tests run on, with the same)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engram.crypto.keyfiles import create_keyring
from engram.memory.engine import MemoryEngine
from engram.search import lexical
from engram.search.analysis import query_groups
from engram.store.location import DatabaseUrl
from engram.testing import Clock, InMemoryStore, binding
from tests.memory.conftest import Memory, open_memory

WORDS = (
    "deploy",
    "release",
    "tarball",
    "signed",
    "retry",
    "backoff",
    "payments",
    "ledger",
    "queue",
    "worker",
    "cache",
    "invalidation",
    "schema",
    "migration",
    "index",
    "vacuum",
    "token",
    "rotate",
    "key",
    "audit",
    "journal",
    "replay",
    "tenant",
    "workspace",
    "principal",
    "purpose",
    "capture",
    "admission",
    "forget",
    "withdraw",
    "nightly",
    "build",
    "green",
    "blue",
    "canary",
    "rollback",
    "flag",
    "feature",
    "owner",
    "service",
    "latency",
    "budget",
)
QUESTIONS = (
    "how do we deploy a signed release tarball",
    "retry backoff for payments",
    "nightly build green",
    "rotate the audit key",
    "cache invalidation after a schema migration",
    "canary rollback flag owner",
    "queue worker latency budget",
    "zebra",
)


def _texts(count: int) -> list[str]:
    chosen = random.Random(7)
    return [
        " ".join(chosen.choice(WORDS) for _ in range(chosen.randint(3, 14))) + f" note{number}"
        for number in range(count)
    ]


def _by_score(ranking: list[tuple[str, float]]) -> list[float]:
    return [score for _, score in ranking]


def _tie_order(found: tuple[str, float]) -> tuple[float, str]:
    return (-round(found[1], 9), found[0])


@pytest.mark.parametrize("prune_at", [lexical.PRUNE_MIN_DOCUMENTS, 40])
def test_every_store_gives_the_same_ranking_and_scores(
    tmp_path: Path, postgres_url: DatabaseUrl, monkeypatch: pytest.MonkeyPatch, prune_at: int
) -> None:
    monkeypatch.setattr(lexical, "PRUNE_MIN_DOCUMENTS", prune_at)  # 40: stages of common words
    texts = _texts(120)
    stores: list[tuple[Memory, dict[str, str]]] = []
    for name, location in (("sqlite", tmp_path / "memory.db"), ("postgresql", postgres_url)):
        (tmp_path / name).mkdir()
        memory = open_memory(tmp_path / name, Clock(), location=location)
        ids = {memory.admit(text, f"rank{number:04d}"): text for number, text in enumerate(texts)}
        stores.append((memory, ids))
    # The in-memory store the domain's tests run on ranks as the real ones do.
    clock = Clock()
    keys = create_keyring(tmp_path / "memory" / "memory.db.keys")
    memory = Memory(MemoryEngine(InMemoryStore(), keys, clock=clock), clock, None)
    ids = {memory.admit(text, f"rank{number:04d}"): text for number, text in enumerate(texts)}
    stores.append((memory, ids))
    scope_id = binding().scope.scope_id
    staged = 0
    for question in QUESTIONS:
        groups = query_groups(question)
        rankings = []
        for memory, ids in stores:
            stages = []
            for stage in range(4):
                with memory.engine.store.read() as reader:
                    found = reader.search(scope_id, groups, 50, stage)
                if found is None:
                    break
                stages.append([(ids[row.record_id], score) for row, score in found])
            rankings.append(stages)
        sqlite, *others = rankings
        staged += len(sqlite) > 1
        for other in others:  # PostgreSQL, then the in-memory store
            assert len(sqlite) == len(other), question
            for ours, theirs in zip(sqlite, other, strict=True):
                # Equal scores are ordered by record id, which differs between the stores.
                assert _by_score(theirs) == pytest.approx(_by_score(ours), rel=1e-9), question
                assert [text for text, _ in sorted(ours, key=_tie_order)] == [
                    text for text, _ in sorted(theirs, key=_tie_order)
                ], question
    for memory, _ in stores:
        memory.engine.store.close()
    assert staged > 0 if prune_at == 40 else staged == 0
