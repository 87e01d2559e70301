"""Fixtures for governed memory: a real SQLite store and real keys in a temp dir, and
an engine on a clock the test controls (the builders are in :mod:`engram.testing`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engram.crypto.keyfiles import create_keyring
from engram.memory.binding import Binding
from engram.memory.engine import MemoryEngine
from engram.memory.settings import HostPolicy
from engram.store.sqlite.memory_store import SqliteMemoryStore
from engram.testing import PURPOSE, Clock, binding, capture_args


class Memory:
    """An engine plus helpers that unwrap envelopes."""

    def __init__(self, engine: MemoryEngine, clock: Clock, path: Path) -> None:
        self.engine, self.clock, self.path = engine, clock, path

    def call(
        self, tool: str, arguments: dict[str, Any], who: Binding | None = None
    ) -> dict[str, Any]:
        return self.engine.call(tool, arguments, who or binding())

    def value(self, tool: str, arguments: dict[str, Any], who: Binding | None = None) -> Any:
        envelope = self.call(tool, arguments, who)
        assert envelope["ok"] is True, envelope
        return envelope["output"]["value"]

    def code(self, tool: str, arguments: dict[str, Any], who: Binding | None = None) -> str:
        envelope = self.call(tool, arguments, who)
        assert envelope["ok"] is False, envelope
        return str(envelope["error"]["code"])

    def capture(self, text: str, key: str, who: Binding | None = None, **payload: Any) -> str:
        """Capture ``text`` under ``key``; the candidate id."""
        arguments = capture_args(text=text, key=key, **payload)
        return str(self.value("capture", arguments, who)["candidate_id"])

    def admit(self, text: str, key: str, who: Binding | None = None) -> str:
        captured = self.value("capture", capture_args(text=text, key=key + ".capture-000001"), who)
        outcome = self.value(
            "request_admission",
            {"candidate_id": captured["candidate_id"], "idempotency_key": key + ".admission-00001"},
            who,
        )["outcome"]
        assert outcome["status"] == "accepted", outcome
        return str(outcome["record_id"])

    def found(self, query: str, who: Binding | None = None) -> list[str]:
        """The record ids a search finds, in rank order."""
        value = self.value("search", {"query": query, "purpose_ref": PURPOSE}, who)
        return [packet["record"]["record_id"] for packet in value["records"]]

    def record_state(self, record_id: str, who: Binding | None = None) -> str:
        """The lifecycle state of a record of ``who``'s scope, read from the store."""
        with self.engine.store.read() as reader:
            record = reader.record((who or binding()).scope.scope_id, record_id)
        assert record is not None
        return record.state

    def store_bytes(self) -> bytes:
        data = b""
        for suffix in ("", "-wal", "-shm"):
            candidate = Path(str(self.path) + suffix)
            if candidate.exists():
                data += candidate.read_bytes()
        return data


def open_memory(tmp_path: Path, clock: Clock, policy: HostPolicy | None = None) -> Memory:
    path = tmp_path / "memory.db"
    keys = create_keyring(tmp_path / "memory.db.keys")
    engine = MemoryEngine(SqliteMemoryStore(path), keys, policy, clock=clock)
    return Memory(engine, clock, path)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def memory(tmp_path: Path, clock: Clock) -> Memory:
    return open_memory(tmp_path, clock)
