"""``subscriptions/listen`` (2026-07-28, Subscribe and Notify) on the real stdio server.

engram honours no notification type, so a stream is its acknowledgement (with an
empty subset), then silence until the client cancels it (nothing more is written)
or the input ends (its graceful close, an empty result).
"""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path
from typing import Any

import pytest

from engram import __version__
from engram.mcp.connection import Connection
from engram.mcp.dispatcher import Dispatcher, ServerIdentity
from engram.mcp.tools import ToolTable
from engram.protocol.jsonrpc import Notification, Request
from engram.testing import MODERN_META, StartServer, legacy_init, serve_lines

SERVER_INFO = {"name": "engram", "title": "Engram", "version": __version__}
EVERY_TYPE = {
    "toolsListChanged": True,
    "promptsListChanged": True,
    "resourcesListChanged": True,
    "resourceSubscriptions": ["engram://index"],
}


def _listen(request_id: object, notifications: object = EVERY_TYPE) -> dict[str, Any]:
    params = {"_meta": MODERN_META, "notifications": notifications}
    return {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}


def _cancel(request_id: object) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "done"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


def _ack(subscription_id: object) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": subscription_id},
            "notifications": {},
        },
    }


def _close(subscription_id: object) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": subscription_id,
        "result": {
            "resultType": "complete",
            "_meta": {
                "io.modelcontextprotocol/subscriptionId": subscription_id,
                "io.modelcontextprotocol/serverInfo": SERVER_INFO,
            },
        },
    }


def _lines(*messages: dict[str, Any]) -> list[bytes]:
    return [json.dumps(message).encode() for message in messages]


def test_a_listen_is_acknowledged_with_an_empty_subset_and_other_requests_are_served_meanwhile(
    start_server: StartServer,
) -> None:
    server = start_server()
    server.send(_listen("L"))  # the client's own request ids are 1, 2, 3
    assert server.receive() == _ack("L")
    tools = server.request("tools/list", {"_meta": MODERN_META})
    assert tools["id"] == 1
    assert tools["result"]["resultType"] == "complete"
    assert server.request("ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}
    server.notify("notifications/cancelled", _cancel("L")["params"])
    assert server.request("ping") == {"jsonrpc": "2.0", "id": 3, "result": {}}
    # The cancelled stream gets no answer at all, not even when the input ends.
    server.close_input()
    with pytest.raises(EOFError):
        server.receive()
    assert server.close() == 0


def test_a_cancelled_listen_gets_no_answer_even_when_the_input_ends(tmp_path: Path) -> None:
    served = serve_lines(_lines(_listen("s1"), _cancel("s1")), cwd=tmp_path)
    messages, status = served.messages, served.status
    assert messages == [_ack("s1")]
    assert status == 0


def test_end_of_input_closes_each_open_listen_gracefully_and_exits_zero_promptly(
    tmp_path: Path,
) -> None:
    lines = _lines(
        _listen("a"),
        _listen(7, {}),
        _listen(8),
        _cancel(8),
        _cancel(99),  # no such stream: ignored
        {"jsonrpc": "2.0", "id": 9, "method": "ping"},
    )
    started = time.monotonic()
    served = serve_lines(lines, cwd=tmp_path)
    assert time.monotonic() - started < 5
    assert served.status == 0
    messages = served.messages
    assert messages == [
        _ack("a"),
        _ack(7),
        _ack(8),
        {"jsonrpc": "2.0", "id": 9, "result": {}},
        _close("a"),
        _close(7),
    ]


def test_end_of_input_with_a_listen_open_on_a_live_server_exits_promptly(
    start_server: StartServer,
) -> None:
    server = start_server()
    server.send(_listen(1))
    assert server.receive() == _ack(1)
    started = time.monotonic()
    assert server.close() == 0
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    "notifications",
    [
        None,
        [],
        "toolsListChanged",
        {"toolsListChanged": "yes"},
        {"promptsListChanged": 1},
        {"resourceSubscriptions": "engram://index"},
        {"resourceSubscriptions": [1]},
    ],
)
def test_a_listen_without_a_valid_filter_is_invalid_params_and_opens_nothing(
    tmp_path: Path, notifications: object
) -> None:
    request = _listen(1, notifications)
    if notifications is None:
        del request["params"]["notifications"]
    served = serve_lines(_lines(request), cwd=tmp_path)
    messages, status = served.messages, served.status
    assert messages == [
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid params"}}
    ]
    assert status == 0


def test_a_listen_reusing_the_id_of_an_open_one_is_invalid_request_and_the_first_stays_open(
    tmp_path: Path,
) -> None:
    messages = serve_lines(_lines(_listen(1), _listen(1)), cwd=tmp_path).messages
    assert messages == [
        _ack(1),
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "Invalid Request"}},
        _close(1),
    ]


def test_a_listen_with_an_unsupported_version_is_32022(start_server: StartServer) -> None:
    meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    reply = start_server().request("subscriptions/listen", {"_meta": meta, "notifications": {}})
    assert reply["error"]["code"] == -32022


@pytest.mark.parametrize("initialize", [False, True])
def test_listen_is_method_not_found_in_the_legacy_era(
    start_server: StartServer, initialize: bool
) -> None:
    server = start_server()
    if initialize:
        legacy_init(server)
    reply = server.request("subscriptions/listen", {"notifications": EVERY_TYPE})
    assert reply["error"] == {"code": -32601, "message": "Method not found"}


# --- in memory -------------------------------------------------------------------------


def _memory() -> tuple[Dispatcher, Connection, queue.SimpleQueue[dict[str, Any]]]:
    sent: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
    identity = ServerIdentity("engram", "test", "Engram test", "Test server.")
    return Dispatcher(identity=identity, tools=ToolTable([])), Connection(sent.put), sent


def test_a_listen_leaves_no_answer_for_its_turn_and_its_cancel_ends_it() -> None:
    dispatcher, connection, sent = _memory()
    request = Request(5, "subscriptions/listen", _listen(5)["params"])
    assert dispatcher.handle(request, connection) is None
    assert sent.get_nowait() == _ack(5)
    dispatcher.handle(Notification("notifications/cancelled", {"requestId": 5}), connection)
    assert dispatcher.close_subscriptions(connection) == []
    assert sent.empty()


@pytest.mark.parametrize("request_id", ["5", True, None, 5.0, [5]])
def test_a_cancel_that_names_no_open_listen_leaves_it_open(request_id: object) -> None:
    dispatcher, connection, _ = _memory()
    dispatcher.handle(Request(5, "subscriptions/listen", _listen(5)["params"]), connection)
    cancel = Notification("notifications/cancelled", {"requestId": request_id})
    dispatcher.handle(cancel, connection)
    [line] = dispatcher.close_subscriptions(connection)
    assert json.loads(line)["id"] == 5
