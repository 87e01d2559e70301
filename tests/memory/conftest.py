"""Fixtures for governed memory: a real SQLite store and real keys in a temp dir,
an engine with a controllable clock, and builders for valid arguments."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram.crypto.keyfiles import create_keyring
from engram.memory.binding import MEMORY_TOOLS, Binding
from engram.memory.engine import MemoryEngine
from engram.memory.settings import HostPolicy
from engram.store.sqlite.memory_store import SqliteMemoryStore

NOW = 1_800_000_000_000  # 2027-01-15T08:00:00.000Z
DIGEST = "sha256:" + hashlib.sha256(b"cited content").hexdigest()
PURPOSE = "purpose:release-engineering"


class Clock:
    def __init__(self, now: int = NOW) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def binding(
    tenant: str = "tenant-a",
    workspace: str = "ws-1",
    principal: str = "alice",
    grants: tuple[str, ...] = MEMORY_TOOLS,
) -> Binding:
    return Binding(
        tenant=tenant,
        workspace=workspace,
        principal=principal,
        agent_id=f"{principal}-agent",
        session="ses_test",
        purpose_ref=PURPOSE,
        grants=frozenset(grants),
    )


def capture_args(
    text: str = "Release tarballs are verified with sha256 digests before upload.",
    key: str = "agent-a.task-42.capture-1",
    **payload_changes: Any,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "schema_version": 2,
        "purpose_ref": PURPOSE,
        "valid_time": {"t": NOW - 86_400_000},
        "components": [
            {"component_id": "c1", "kind": "decision", "text": text, "citation_ids": ["cit1"]}
        ],
        "primary_component_id": "c1",
        "primary_event": {"at": NOW - 86_400_000, "type_ref": "decided", "citation_id": "cit1"},
        "citations": [
            {
                "citation_id": "cit1",
                "source_ref": "repo:engram",
                "locator": {"scheme": "file", "value": "docs/release.md"},
                "content_digest": DIGEST,
            }
        ],
    }
    payload.update(payload_changes)
    return {
        "idempotency_key": key,
        "payload": payload,
        "evidence": {
            "evidence_ref": "ev:review-7",
            "evidence_digest": DIGEST,
            "citation_ids": ["cit1"],
        },
    }


def mutate(arguments: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    copied = copy.deepcopy(arguments)
    change(copied)
    return copied


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

    def admit(self, text: str, key: str, who: Binding | None = None) -> str:
        captured = self.value("capture", capture_args(text=text, key=key + ".capture-000001"), who)
        outcome = self.value(
            "request_admission",
            {"candidate_id": captured["candidate_id"], "idempotency_key": key + ".admission-00001"},
            who,
        )["outcome"]
        assert outcome["status"] == "accepted", outcome
        return str(outcome["record_id"])

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
