"""The dispatcher's boundary, in memory: whatever goes wrong while answering a request
becomes an answer, and nothing the request carried reaches the log."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from engram.mcp.connection import Connection
from engram.mcp.dispatcher import Dispatcher, ServerIdentity
from engram.mcp.tools import CallContext, Tool, ToolResult, ToolTable
from engram.protocol.jsonrpc import Request

SECRET = "text-only-the-client-should-see"
INTERNAL_ERROR = b'{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}'


def _dispatcher(structured: Mapping[str, Any]) -> Dispatcher:
    def handler(arguments: Mapping[str, Any], context: CallContext) -> ToolResult:
        return ToolResult(structured)

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


def _call(dispatcher: Dispatcher) -> bytes | None:
    request = Request(7, "tools/call", {"name": "answer", "arguments": {"note": SECRET}})
    return dispatcher.handle(request, Connection(lambda message: None))


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
        assert _call(_dispatcher(structured)) == INTERNAL_ERROR
    [record] = caplog.records
    assert record.getMessage().splitlines()[0] == f"internal error in tools/call: {failure}"
    assert SECRET not in caplog.text


def test_a_lone_surrogate_in_a_tool_result_travels_as_its_escape() -> None:
    line = _call(_dispatcher({"note": "\ud800"}))
    assert line == (
        b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":'
        b'"{\\"note\\":\\"\\ud800\\"}"}],"structuredContent":{"note":"\\ud800"}}}'
    )
