"""A mutation stream under fire (issue 15, item 5), on SQLite and on PostgreSQL: a server
killed with SIGKILL at 50 random points of it, and on PostgreSQL the server's database
connections dropped mid-stream too. Afterwards every acknowledged mutation is present
exactly once (its replay is exact), and every unacknowledged one, retried, settles to one
outcome that a second retry repeats."""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from engram.memory.binding import Scope
from engram.memory.journal import first_bad_cursor
from engram.store.location import DatabaseUrl, StoreLocation, open_memory_store
from engram.testing import StdioClient, current_capture_args, host_profile, tool_request

KILLS = 50
#: Captures sent in each round, and admissions of earlier acknowledged captures.
CAPTURES, ADMISSIONS = 8, 4
#: Rounds (PostgreSQL only) whose server loses its database connections instead.
DROPS = 10
RETRIABLE = {"STORE_UNAVAILABLE", "MUTATION_OUTCOME_UNKNOWN"}


class Stream:
    """What was sent, and what the agent was told, across the rounds."""

    def __init__(self) -> None:
        self.sent: dict[str, tuple[str, dict[str, Any]]] = {}  # request id -> (tool, arguments)
        self.told: dict[str, dict[str, Any]] = {}  # request id -> acknowledged value
        self.admitted: set[str] = set()  # candidates an admission was sent for

    def round(self, number: int) -> list[str]:
        ids = []
        for index in range(CAPTURES):
            key = f"agent-a.fire-{number:03d}-{index:03d}"
            self.sent[key] = (
                "engram_memory_capture",
                current_capture_args(f"Fact {key}.", key=key),
            )
            ids.append(key)
        waiting = [
            value["candidate_id"]
            for key, value in self.told.items()
            if "candidate_id" in value and value["candidate_id"] not in self.admitted
        ]
        for candidate in waiting[:ADMISSIONS]:
            key = f"agent-a.admit-{candidate[-12:]}"
            self.admitted.add(candidate)
            self.sent[key] = (
                "engram_memory_request_admission",
                {"candidate_id": candidate, "idempotency_key": key},
            )
            ids.append(key)
        return ids

    def hear(self, reply: dict[str, Any]) -> None:
        envelope = reply["result"]["structuredContent"]
        if envelope["ok"]:
            self.told[reply["id"]] = envelope["output"]["value"]
        else:  # never a refusal other than "try again"
            assert envelope["error"]["code"] in RETRIABLE, envelope


def _serve(profile: Path, cwd: Path) -> StdioClient:
    return StdioClient(["--host-profile", str(profile)], cwd=cwd, timeout=60)


def _drop_connections(url: DatabaseUrl) -> None:
    import psycopg

    with psycopg.connect(url.url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.mark.e2e
def test_fifty_kills_lose_no_acknowledged_mutation_and_duplicate_none(
    tmp_path: Path, store_location: StoreLocation
) -> None:
    store = store_location.url if isinstance(store_location, DatabaseUrl) else str(store_location)
    profile = host_profile(tmp_path / "host", store=store)
    chosen = random.Random(15)
    stream = Stream()
    drops = DROPS if isinstance(store_location, DatabaseUrl) else 0
    for number in range(KILLS + drops):
        server = _serve(profile, tmp_path)
        ids = stream.round(number)
        for request_id in ids:
            tool, arguments = stream.sent[request_id]
            server.send(tool_request(request_id, tool, arguments))
        heard = chosen.randint(0, len(ids) - 1)
        for _ in range(heard):
            stream.hear(server.receive())
        time.sleep(chosen.random() * 0.01)  # a random point of the next mutation
        if number < KILLS:
            os.kill(server.process.pid, signal.SIGKILL)
            server.stop()
            continue
        assert isinstance(store_location, DatabaseUrl)
        _drop_connections(store_location)  # the server lives on and must recover
        for _ in range(len(ids) - heard):
            stream.hear(server.receive())
        assert server.close() == 0

    server = _serve(profile, tmp_path)
    settled: dict[str, dict[str, Any]] = {}
    for request_id, (tool, arguments) in stream.sent.items():
        for attempt in range(2):  # the retry, then the retry of the retry: one outcome
            server.send(tool_request(request_id, tool, arguments))
            envelope = server.receive()["result"]["structuredContent"]
            assert envelope["ok"] is True, (request_id, envelope)
            value = envelope["output"]["value"]
            if attempt == 0 and request_id in stream.told:  # acknowledged: an exact replay
                _assert_replay(tool, value, stream.told[request_id])
            if attempt == 1:
                _assert_replay(tool, value, settled[request_id])
            settled.setdefault(request_id, value)
    assert server.close() == 0

    captures = [v for k, v in settled.items() if stream.sent[k][0] == "engram_memory_capture"]
    candidates = {value["candidate_id"] for value in captures}
    assert len(candidates) == len(captures) == KILLS * CAPTURES + drops * CAPTURES
    scope_id = Scope("tenant-a", "ws-1").scope_id
    reader_store = open_memory_store(store_location)
    with reader_store.read() as reader:
        events = list(reader.journal(scope_id))
        pending = reader.candidates_in_state(scope_id, "pending")
        accepted = reader.candidates_in_state(scope_id, "accepted")
    reader_store.close()
    admissions = len(settled) - len(captures)
    assert len(events) == len(captures) + admissions  # one event each, none twice
    assert [cursor for cursor, *_ in events] == list(range(1, len(events) + 1))
    assert first_bad_cursor(scope_id, events) is None
    assert len(accepted) == admissions
    assert sorted(pending + accepted) == sorted(candidates)
    assert len(stream.told) > 0
    assert len(stream.told) < len(stream.sent)  # some were cut off, and retried


def _assert_replay(tool: str, value: dict[str, Any], first: dict[str, Any]) -> None:
    if tool == "engram_memory_capture":
        assert value["status"] == "duplicate_exact", value
        assert value["candidate_id"] == first["candidate_id"]
        assert value["cursor"] == first["cursor"]
    else:
        assert value["replayed"] is True, value
        assert value["outcome"] == first["outcome"]
