"""Eight engram-mcp processes on one store capture, replay, admit and forget (confirmed by
the host) at once, 500 mutations each (end to end: real processes, one SQLite file or one
PostgreSQL schema)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from engram.host.runtime import open_memory
from engram.memory.binding import Scope
from engram.memory.journal import first_bad_cursor
from engram.memory.maintenance import Maintenance
from engram.store.location import DatabaseUrl, StoreLocation, open_memory_store
from engram.testing import LineClient, StdioClient, current_capture_args, host_profile, tool_request

PROCESSES = 8
#: Captures per process; as many admissions follow, then FORGETS of what was admitted:
#: 500 mutations each.
EACH = 240
FORGETS = 20


def _values(client: LineClient, count: int) -> list[dict[str, Any]]:
    replies = [client.receive() for _ in range(count)]
    envelopes = [reply["result"]["structuredContent"] for reply in replies]
    assert all(envelope["ok"] for envelope in envelopes), envelopes
    return [envelope["output"]["value"] for envelope in envelopes]


def _settled(forget: dict[str, Any]) -> dict[str, Any]:
    """A forget's outcome without what the background cleanup may change later."""
    assert forget["projection_invalidation"] in ("pending", "complete"), forget
    ignored = ("projection_invalidation", "coverage_receipt_digest")
    return {key: value for key, value in forget.items() if key not in ignored}


def _profile(tmp_path: Path, store: str, n: int) -> Path:
    """Agent ``n``'s host profile; every host of the store shares its keys, and each may
    have all its forgets waiting for the host at once (docs/memory-contract.md §3.28)."""
    profile = host_profile(
        tmp_path / f"agent{n}", principal=f"agent-{n}", store=store, keys=tmp_path / "keys"
    )
    text = profile.read_text(encoding="utf-8")
    assert "max_open_requests = 10" in text
    profile.write_text(text.replace("max_open_requests = 10", f"max_open_requests = {FORGETS}"))
    return profile


@pytest.mark.e2e
def test_eight_processes_capture_admit_and_forget_at_once_without_loss_or_duplicates(
    tmp_path: Path, store_location: StoreLocation
) -> None:
    store = str(store_location.url if isinstance(store_location, DatabaseUrl) else store_location)
    profiles = [_profile(tmp_path, store, n) for n in range(PROCESSES)]
    clients = [StdioClient(["--host-profile", str(p)], cwd=tmp_path, timeout=60) for p in profiles]
    for n, client in enumerate(clients):  # pipeline everything, then read
        for i in range(EACH):
            arguments = current_capture_args(
                text=f"fact {i} from agent {n}", key=f"agent-{n}-capture-{i:04d}"
            )
            client.send(tool_request(i, "engram_memory_capture", arguments))
        # The same key from one principal twice, racing itself: one candidate.
        client.send(tool_request(EACH, "engram_memory_capture", arguments))
    captured = [_values(client, EACH + 1) for client in clients]
    for values in captured:
        assert values[-1] == {**values[-2], "status": "duplicate_exact"}
    for n, client in enumerate(clients):
        for i, value in enumerate(captured[n][:EACH]):
            arguments = {
                "candidate_id": value["candidate_id"],
                "idempotency_key": f"agent-{n}-admit-{i:04d}",
            }
            client.send(tool_request(i, "engram_memory_request_admission", arguments))
    admitted = [_values(client, EACH) for client in clients]
    forgets = [
        [
            {
                "record_id": value["outcome"]["record_id"],
                "idempotency_key": f"agent-{n}-forget-{i:04d}",
                "reason_ref": "reason:obsolete",
            }
            for i, value in enumerate(admitted[n][:FORGETS])
        ]
        for n in range(PROCESSES)
    ]
    for n, client in enumerate(clients):  # each forget waits for the host first
        for i, arguments in enumerate(forgets[n]):
            client.send(tool_request(i, "engram_memory_forget", arguments))
    for client in clients:
        refusals = [client.receive()["result"]["structuredContent"] for _ in range(FORGETS)]
        assert {refusal["error"]["code"] for refusal in refusals} == {"gate_failed"}
    host = open_memory(profiles[0], sweep=False, semantic=False)  # engram host confirm
    maintenance = Maintenance(host.engine, host.binding.scope)
    requests = maintenance.pending().confirmations
    assert len(requests) == PROCESSES * FORGETS
    for request in requests:
        maintenance.confirm(request.request_id)
    host.close()
    for n, client in enumerate(clients):
        for i, arguments in enumerate(forgets[n]):
            client.send(tool_request(i, "engram_memory_forget", arguments))
        client.send(tool_request(FORGETS, "engram_memory_forget", forgets[n][0]))  # a replay
    forgotten = [_values(client, FORGETS + 1) for client in clients]
    for values in forgotten:  # the replay's cleanup may have finished meanwhile
        first, replay = (_settled(value) for value in (values[0], values[-1]))
        assert replay == {**first, "replayed": True}
    assert all(client.close() == 0 for client in clients)

    candidates = [value["candidate_id"] for values in captured for value in values[:EACH]]
    records = [value["outcome"]["record_id"] for values in admitted for value in values]
    assert len(set(candidates)) == PROCESSES * EACH
    assert Counter(v["outcome"]["status"] for vs in admitted for v in vs) == {
        "accepted": PROCESSES * EACH
    }
    assert len(set(records)) == PROCESSES * EACH
    scope_id = Scope("tenant-a", "ws-1").scope_id
    reader_store = open_memory_store(store_location)
    with reader_store.read() as reader:
        events = list(reader.journal(scope_id))
        assert Counter(body["operation"] for *_, body in events) == {
            "capture": PROCESSES * EACH,
            "admission": PROCESSES * EACH,
            "confirm": PROCESSES * FORGETS,  # the host's, one per forget
            "tombstone": PROCESSES * FORGETS,
        }
        assert [cursor for cursor, *_ in events] == list(range(1, len(events) + 1))
        assert first_bad_cursor(scope_id, events) is None
        states = Counter(row.state for row in reader.records(scope_id, records))
        assert states == {
            "accepted_current": PROCESSES * (EACH - FORGETS),
            "tombstoned": PROCESSES * FORGETS,
        }
    reader_store.close()
