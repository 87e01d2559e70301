"""Several ``engram-mcp --http`` processes over one store, on SQLite and on PostgreSQL
(issue 15, item 4): clients that move between servers see one memory. Replays of an
idempotency key are exact whichever server answers, a candidate captured on one is
admitted on another, a page cursor handed out by one server opens the next page on a
third, a forget asked on one and approved by the host is done on another, and the
tombstone it leaves holds the same content back on the third."""

from __future__ import annotations

import contextlib
import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.host.profile import load_profile
from engram.host.runtime import open_memory
from engram.host.tokens import issue_token
from engram.memory.maintenance import Maintenance
from engram.testing import MODERN_META, host_profile
from engram.testing.governed import PURPOSE, current_capture_args
from engram.testing.http import HttpServer
from engram.testing.postgres import PostgresRun

MODERN = "2026-07-28"
META = MODERN_META  # the 2026-07-28 envelope of a client with no capabilities
SERVERS = 3


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def servers(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[list[int], str, Path]]:
    store: dict[str, Any] = {}
    if request.param == "postgresql":
        run: PostgresRun = request.getfixturevalue("postgres_run")
        store = {"store": run.new_store().url}
    profile = host_profile(tmp_path_factory.mktemp("scale") / "host", **store)
    with contextlib.ExitStack() as running:
        started = [running.enter_context(HttpServer(profile)) for _ in range(SERVERS)]
        yield (
            [server.port for server in started],
            issue_token(load_profile(profile), int(time.time())),
            profile,
        )


def _call(port: int, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": META},
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        json.dumps(body).encode(),
        {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {token}",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": tool,
        },
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        structured: dict[str, Any] = json.loads(response.read())["result"]["structuredContent"]
        return structured


def test_replays_admissions_and_cursors_hold_across_servers(
    servers: tuple[list[int], str, Path],
) -> None:
    ports, token, _ = servers
    candidates = []
    for index in range(6):
        capture = current_capture_args(
            f"The kiwi orchard {index} is harvested in March.",
            key=f"agent-a.kiwi-capture-{index:04d}",
        )
        first = _call(ports[index % SERVERS], token, "engram_memory_capture", capture)
        replay = _call(ports[(index + 1) % SERVERS], token, "engram_memory_capture", capture)
        assert first["ok"] is True, first
        # The contract's replay, from another server: duplicate_exact, the same candidate.
        replayed, original = replay["output"]["value"], first["output"]["value"]
        assert (replayed["status"], original["status"]) == ("duplicate_exact", "committed_pending")
        assert replayed["candidate_id"] == original["candidate_id"]
        assert replayed["record_digest"] == original["record_digest"]
        candidates.append(first["output"]["value"]["candidate_id"])
    for index, candidate in enumerate(candidates):
        admitted = _call(
            ports[(index + 2) % SERVERS],
            token,
            "engram_memory_request_admission",
            {"candidate_id": candidate, "idempotency_key": f"agent-a.kiwi-admit-{index:04d}"},
        )
        assert admitted["output"]["value"]["outcome"]["status"] == "accepted"

    seen: list[str] = []
    arguments: dict[str, Any] = {"query": "kiwi orchard", "purpose_ref": PURPOSE, "limit": 2}
    for page in range(SERVERS):
        found = _call(ports[page], token, "engram_memory_search", arguments)["output"]["value"]
        seen += [hit["record"]["record_id"] for hit in found["records"]]
        if "next_page_cursor" not in found:
            break
        arguments = {**arguments, "page_cursor": found["next_page_cursor"]}

    assert len(seen) == len(set(seen)) == 6  # every record once, pages from three servers


def test_a_forget_approved_by_the_host_is_done_anywhere_and_its_tombstone_holds_everywhere(
    servers: tuple[list[int], str, Path],
) -> None:
    ports, token, profile = servers
    first = current_capture_args(
        "The quince orchard is pruned in November.", key="agent-b.quince-capture-01"
    )
    captured = _call(ports[0], token, "engram_memory_capture", first)
    admitted = _call(
        ports[1],
        token,
        "engram_memory_request_admission",
        {
            "candidate_id": captured["output"]["value"]["candidate_id"],
            "idempotency_key": "agent-b.quince-admit-0001",
        },
    )["output"]["value"]["outcome"]
    forget = {
        "record_id": admitted["record_id"],
        "idempotency_key": "agent-b.quince-forget-01",
        "reason_ref": "reason:obsolete",
    }
    asked = _call(ports[2], token, "engram_memory_forget", forget)
    assert asked["ok"] is False, asked
    assert asked["error"]["code"] == "gate_failed", asked
    host = open_memory(profile, sweep=False, semantic=False)  # engram host confirm
    try:
        maintenance = Maintenance(host.engine, host.binding.scope)
        [request] = maintenance.pending().confirmations
        maintenance.confirm(request.request_id)
    finally:
        host.close()

    done = _call(ports[0], token, "engram_memory_forget", forget)
    replayed = _call(ports[1], token, "engram_memory_forget", forget)
    same_content = {**first, "idempotency_key": "agent-b.quince-capture-02"}
    again = _call(ports[2], token, "engram_memory_capture", same_content)
    held = _call(
        ports[0],
        token,
        "engram_memory_request_admission",
        {
            "candidate_id": again["output"]["value"]["candidate_id"],
            "idempotency_key": "agent-b.quince-admit-0002",
        },
    )

    assert done["ok"] is True, done
    assert replayed["output"]["value"] == {**done["output"]["value"], "replayed": True}
    assert held["output"]["value"]["outcome"]["status"] == "pending_adjudication"
    for port in ports:  # gone on every server
        found = _call(
            port, token, "engram_memory_search", {"query": "quince orchard", "purpose_ref": PURPOSE}
        )
        hits = [hit["record"]["record_id"] for hit in found["output"]["value"]["records"]]
        assert admitted["record_id"] not in hits
