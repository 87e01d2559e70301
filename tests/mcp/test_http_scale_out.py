"""Several ``engram-mcp --http`` processes over one store (issue 15, item 4, on SQLite):
clients that move between servers see one memory. Replays of an idempotency key are exact
whichever server answers, a candidate captured on one is admitted on another, and a page
cursor handed out by one server opens the next page on a third."""

from __future__ import annotations

import contextlib
import json
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from engram.host.profile import load_profile
from engram.host.tokens import issue_token
from engram.testing import MODERN_META, host_profile
from engram.testing.governed import PURPOSE, current_capture_args
from engram.testing.http import HttpServer

MODERN = "2026-07-28"
META = MODERN_META  # the 2026-07-28 envelope of a client with no capabilities
SERVERS = 3


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[int], str]]:
    profile = host_profile(tmp_path_factory.mktemp("scale") / "host")
    with contextlib.ExitStack() as running:
        started = [running.enter_context(HttpServer(profile)) for _ in range(SERVERS)]
        yield (
            [server.port for server in started],
            issue_token(load_profile(profile), int(time.time())),
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
    servers: tuple[list[int], str],
) -> None:
    ports, token = servers
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
