"""The dispatcher in memory: whatever goes wrong while answering a request becomes an
answer (and nothing the request carried reaches the log); the legacy handshake decides
when the server may ask the client."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from engram.mcp.connection import Connection
from engram.mcp.dispatcher import Dispatcher, ServerIdentity
from engram.mcp.tools import CallContext, Tool, ToolResult, ToolTable
from engram.protocol.jsonrpc import Notification, Request

SECRET = "text-only-the-client-should-see"
INTERNAL_ERROR = b'{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}'


def _dispatcher(structured: Mapping[str, Any]) -> Dispatcher:
    def handler(arguments: Mapping[str, Any], context: CallContext) -> ToolResult:
        return ToolResult({**structured, "dialog": context.elicitation.available})

    tool = Tool(
        name="answer",
        title="Answer",
        description="Returns a fixed result.",
        input_schema={"type": "object"},
        output_schema={"type": "object"},
        handler=handler,
    )
    identity = ServerIdentity("engram", "test", "Engram test", "Test server.")
    return Dispatcher(identity=identity, tools=ToolTable([tool]))


def _dispatch(dispatcher: Dispatcher, connection: Connection | None = None) -> bytes | None:
    request = Request(7, "tools/call", {"name": "answer", "arguments": {"note": SECRET}})
    return dispatcher.handle(request, connection or Connection(lambda message: None))


@pytest.mark.parametrize(
    ("structured", "failure"),
    [
        ({"note": SECRET, "score": float("nan")}, "ValueError"),
        ({"note": SECRET, "ids": {SECRET}}, "TypeError"),
    ],
    ids=["nan-is-not-json", "a-set-is-not-json"],
)
def test_an_answer_that_cannot_be_serialized_is_an_internal_error_with_the_request_id(
    caplog: pytest.LogCaptureFixture, structured: dict[str, Any], failure: str
) -> None:
    with caplog.at_level("ERROR", logger="engram.mcp"):
        assert _dispatch(_dispatcher(structured)) == INTERNAL_ERROR
    [record] = caplog.records
    assert record.getMessage().splitlines()[0] == f"internal error in tools/call: {failure}"
    assert SECRET not in caplog.text


def test_a_lone_surrogate_in_a_tool_result_travels_as_its_escape() -> None:
    line = _dispatch(_dispatcher({"note": "\ud800"}))
    assert line == (
        b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":'
        b'"{\\"note\\":\\"\\ud800\\",\\"dialog\\":false}"}],'
        b'"structuredContent":{"note":"\\ud800","dialog":false},"isError":false}}'
    )


def test_the_server_may_ask_only_between_initialized_and_the_next_initialize() -> None:
    dispatcher = _dispatcher({})
    connection = Connection(lambda message: None)
    initialized = Notification("notifications/initialized", {})
    initialize = Request(
        1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}}
    )

    def dialog_after(step: Request | Notification) -> bool:
        dispatcher.handle(step, connection)
        line = _dispatch(dispatcher, connection)
        assert line is not None
        return bool(json.loads(line)["result"]["structuredContent"]["dialog"])

    # An early notification completes no handshake; a new initialize starts another.
    steps: list[Request | Notification] = [initialized, initialize, initialized, initialize]
    assert [dialog_after(step) for step in steps] == [False, False, True, False]
