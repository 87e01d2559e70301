"""The store contract: one suite, run on every implementation of
:class:`engram.memory.ports.MemoryStore`.

``store`` is a new, empty store on SQLite, on PostgreSQL and in memory
(:class:`engram.testing.InMemoryStore`) in turn. The in-memory store is what the domain's
tests run on; this suite is what keeps it honest: whatever the domain may rely on is
asserted here, with the same exact values on the three.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.memory.ports import CandidateRow, MemoryStore, RecordRow
from engram.store.location import DatabaseUrl, open_memory_store
from engram.testing.memory_store import InMemoryStore
from engram.testing.postgres import PostgresRun

#: Two scopes (a scope id is a 32-hex digest; SQLite names a table after it).
SCOPE, OTHER = "a" * 32, "b" * 32
DAY = 86_400_000

NewStore = Callable[[], MemoryStore]


@pytest.fixture(params=["sqlite", "postgresql", "memory"])
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[NewStore]:
    """Opens empty stores of one implementation (each call a new one); closed after."""
    opened: list[MemoryStore] = []
    given: list[DatabaseUrl] = []
    run: PostgresRun | None = (
        request.getfixturevalue("postgres_run") if request.param == "postgresql" else None
    )

    def new() -> MemoryStore:
        store: MemoryStore
        if request.param == "memory":
            store = InMemoryStore()
        elif run is None:
            store = open_memory_store(tmp_path / f"store-{len(opened)}.db")
        else:
            given.append(run.empty_store())
            store = open_memory_store(given[-1])
        opened.append(store)
        return store

    yield new
    for store in opened:
        store.close()
    for url in given:
        assert run is not None
        run.give_back(url)


@pytest.fixture
def store(new_store: NewStore) -> MemoryStore:
    """A new, empty store of each implementation in turn."""
    return new_store()


def candidate(candidate_id: str, scope_id: str = SCOPE, **fields: Any) -> CandidateRow:
    """A pending candidate with plain values (``fields`` replace them)."""
    values: dict[str, Any] = {
        "candidate_id": candidate_id,
        "scope_id": scope_id,
        "principal": "agent-a",
        "state": "pending",
        "payload_digest": "sha256:" + "1" * 64,
        "record_digest": "sha256:" + "2" * 64,
        "sealed": b"\x00sealed\xff",
        "captured_ms": 1_000,
        "retention": {"class": "standard", "days": 30},
        "capture_cursor": 1,
    }
    return CandidateRow(**(values | fields))


def record(record_id: str, scope_id: str = SCOPE, **fields: Any) -> RecordRow:
    """A current record with plain values (``fields`` replace them)."""
    values: dict[str, Any] = {
        "record_id": record_id,
        "scope_id": scope_id,
        "candidate_id": "cand_" + record_id.removeprefix("mem_"),
        "state": "accepted_current",
        "record_digest": "sha256:" + "3" * 64,
        "payload_digest": "sha256:" + "4" * 64,
        "sealed": b"ciphertext",
        "valid_t": 5_000,
        "valid_t_end": None,
        "expires_ms": None,
        "admitted_ms": 10 * DAY + 7,
        "admit_cursor": 2,
    }
    return RecordRow(**(values | fields))
