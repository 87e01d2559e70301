"""JSON-RPC batches over real stdio: served on a connection that negotiated 2025-03-26
(the one MCP version that has them), refused with one -32600 everywhere else."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engram.testing import LineClient, StartServer, legacy_init

INVALID = {"code": -32600, "message": "Invalid Request"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
PONG = {"jsonrpc": "2.0", "id": 1, "result": {}}


def _connect(start_server: StartServer, version: str | None) -> LineClient:
    client = start_server()
    if version is not None:
        legacy_init(client, version=version)
    return client


def _exchange(client: LineClient, batch: list[Any]) -> Any:
    """Send a batch, then a ping; what came back before the ping's answer."""
    client.send(json.dumps(batch).encode())
    client.send(json.dumps({"jsonrpc": "2.0", "id": "after", "method": "ping"}).encode())
    answers = []
    while (message := client.receive()) != {"jsonrpc": "2.0", "id": "after", "result": {}}:
        answers.append(message)
    return answers


def test_a_batch_gets_one_array_answering_its_requests_in_order(
    start_server: StartServer,
) -> None:
    client = _connect(start_server, "2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "no/such/method"},
        {"jsonrpc": "2.0", "method": "no/such/notification"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    answers = _exchange(client, batch)
    alone = client.request("tools/list")
    assert answers == [
        [
            {"jsonrpc": "2.0", "id": "a", "result": {}},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "error": {"code": -32601, "message": "Method not found"},
            },
            {"jsonrpc": "2.0", "id": 3, "result": alone["result"]},
        ]
    ]


def test_each_invalid_member_of_a_batch_gets_its_own_error(start_server: StartServer) -> None:
    client = _connect(start_server, "2025-03-26")
    initialize = {"protocolVersion": "2025-03-26", "capabilities": {}}
    batch = [
        1,
        {"jsonrpc": "1.0", "id": 4, "method": "ping"},
        [],
        {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "id": 6, "method": "ping", "params": [1]},
        {"jsonrpc": "2.0", "id": "r7"},
        PING,
    ]
    assert _exchange(client, batch) == [
        [
            {"jsonrpc": "2.0", "id": None, "error": INVALID},
            {"jsonrpc": "2.0", "id": 4, "error": INVALID},
            {"jsonrpc": "2.0", "id": None, "error": INVALID},
            {"jsonrpc": "2.0", "id": 5, "error": INVALID},
            {"jsonrpc": "2.0", "id": 6, "error": INVALID},
            {"jsonrpc": "2.0", "id": "r7", "error": INVALID},
            PONG,
        ]
    ]


def test_a_batch_of_only_notifications_and_replies_gets_no_answer_at_all(
    start_server: StartServer,
) -> None:
    client = _connect(start_server, "2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}},
        {"jsonrpc": "2.0", "id": "engram-9", "result": {}},
        {"jsonrpc": "2.0", "method": "no/such/notification"},
    ]
    assert _exchange(client, batch) == []


def test_an_empty_batch_is_one_invalid_request_not_an_array(start_server: StartServer) -> None:
    client = _connect(start_server, "2025-03-26")
    assert _exchange(client, []) == [{"jsonrpc": "2.0", "id": None, "error": INVALID}]


@pytest.mark.parametrize("version", [None, "2024-11-05", "2025-06-18", "2025-11-25"])
def test_batches_are_refused_before_initialize_and_in_every_other_version(
    start_server: StartServer, version: str | None
) -> None:
    client = _connect(start_server, version)
    refused = [{"jsonrpc": "2.0", "id": None, "error": INVALID}]
    assert _exchange(client, [PING, {"jsonrpc": "2.0", "method": "no/such"}]) == refused
    assert _exchange(client, []) == refused
