"""Framing rules of engram-mcp: raw lines in, whole responses out.

In this process over OS pipes (the same reader, framing and writer as stdio); what
only the real process shows (its stderr, stdout hygiene, memory, exit) runs the real
``engram-mcp``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from engram.protocol.framing import MAX_LINE_BYTES
from engram.testing import StartServer, StdioClient, serve_lines

PING = b'{"jsonrpc":"2.0","id":99,"method":"ping"}'
PONG = {"jsonrpc": "2.0", "id": 99, "result": {}}
PONG_LINE = b'{"jsonrpc":"2.0","id":99,"result":{}}'


def test_malformed_json_line_gets_parse_error_with_null_id_and_server_keeps_serving(
    tmp_path: Path,
) -> None:
    served = serve_lines([b"{not json", PING], cwd=tmp_path)
    messages, status = served.messages, served.status
    assert messages == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        PONG,
    ]
    assert status == 0


def test_invalid_utf8_nan_and_numbers_beyond_a_double_are_parse_errors(tmp_path: Path) -> None:
    lines = [
        b'{"jsonrpc":"2.0","id":1,"method":"\xff"}',
        b'{"jsonrpc":"2.0","id":NaN}',
        b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":1e400}}',
        PING,
    ]
    messages = serve_lines(lines, cwd=tmp_path).messages
    parse_error = {"code": -32700, "message": "Parse error"}
    assert messages == [
        *({"jsonrpc": "2.0", "id": None, "error": parse_error} for _ in range(3)),
        PONG,
    ]


def test_structurally_invalid_requests_get_invalid_request_with_their_id_when_readable(
    tmp_path: Path,
) -> None:
    lines = [
        b"[]",
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
        b'"ping"',
        b'{"jsonrpc":"1.0","id":3,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":4,"method":5}',
        b'{"jsonrpc":"2.0","id":5,"method":"ping","params":[1]}',
        b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":"r7"}',
        PING,
    ]
    messages = serve_lines(lines, cwd=tmp_path).messages
    invalid = {"code": -32600, "message": "Invalid Request"}
    expected_ids = [None, None, None, 3, 4, 5, None, None, "r7"]
    assert messages == [
        *({"jsonrpc": "2.0", "id": request_id, "error": invalid} for request_id in expected_ids),
        PONG,
    ]


@pytest.mark.e2e
def test_a_request_whose_id_is_a_lone_surrogate_is_answered_and_serving_goes_on(
    tmp_path: Path,
) -> None:
    # "\ud800" is valid JSON that no UTF-8 can encode: it travels back as its escape.
    supported = b'["2026-07-28"]'  # what a request's _meta can name
    modern_meta = (
        b'{"io.modelcontextprotocol/protocolVersion":"\\udfff",'
        b'"io.modelcontextprotocol/clientCapabilities":{}}'
    )
    lines = [
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
        b'{"jsonrpc":"2.0","id":"\\udc00x","method":"tools/list","params":{"_meta":'
        + modern_meta
        + b"}}",
        PING,
    ]
    process = serve_lines(lines, cwd=tmp_path, in_process=False)
    assert process.stdout.splitlines() == [
        b'{"jsonrpc":"2.0","id":"\\ud800","result":{}}',
        b'{"jsonrpc":"2.0","id":"\\udc00x","error":{"code":-32022,'
        b'"message":"Unsupported protocol version","data":{"supported":'
        + supported
        + b',"requested":"\\udfff"}}}',
        PONG_LINE,
    ]
    assert (process.stderr, process.status) == ("", 0)


@pytest.mark.e2e
def test_an_invalid_request_whose_id_is_a_lone_surrogate_is_refused_and_serving_goes_on(
    tmp_path: Path,
) -> None:
    lines = [b'{"jsonrpc":"1.0","id":"\\ud800","method":"ping"}', PING]
    process = serve_lines(lines, cwd=tmp_path, in_process=False)
    assert process.stdout.splitlines() == [
        b'{"jsonrpc":"2.0","id":"\\ud800","error":{"code":-32600,"message":"Invalid Request"}}',
        PONG_LINE,
    ]
    assert (process.stderr, process.status) == ("", 0)


def test_notifications_get_no_answer_not_even_for_unknown_methods(tmp_path: Path) -> None:
    lines = [
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","method":"no/such/notification","params":{}}',
        b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nope"}}',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
        PING,
    ]
    messages = serve_lines(lines, cwd=tmp_path).messages
    assert messages == [PONG]


def test_blank_lines_and_crlf_are_tolerated(tmp_path: Path) -> None:
    messages = serve_lines([b"", b"   ", PING + b"\r"], cwd=tmp_path).messages
    assert messages == [PONG]


@pytest.mark.e2e
def test_end_of_input_exits_promptly_with_status_zero(start_stdio_server: StartServer) -> None:
    client = start_stdio_server()
    assert client.request("ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    started = time.monotonic()
    assert client.close() == 0
    assert time.monotonic() - started < 5


@pytest.mark.e2e
def test_stdout_carries_only_json_rpc_lines(tmp_path: Path) -> None:
    lines = [
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}',
        b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
        b"garbage",
    ]
    served = serve_lines(lines, "--unknown-flag", cwd=tmp_path, in_process=False)
    assert [json.loads(line)["jsonrpc"] for line in served.stdout.splitlines()] == ["2.0"] * 3


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.e2e
def test_oversized_lines_are_refused_without_dying_or_growing_memory(tmp_path: Path) -> None:
    with StdioClient(cwd=tmp_path, timeout=20) as client:
        assert client.request("ping")["result"] == {}
        baseline = _rss_kib(client.process.pid)
        too_large = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * (
            4 * 1024 * 1024
        )
        for _ in range(5):  # 20 MiB in all, each line far past the limit
            client.send(too_large + b'"}}')
            assert client.receive() == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "Message too large"},
            }
        assert client.request("ping")["result"] == {}
        grown_kib = _rss_kib(client.process.pid) - baseline
        assert grown_kib < 4 * MAX_LINE_BYTES // 1024
        assert client.close() == 0


def test_a_line_just_under_the_limit_is_still_served(start_server: StartServer) -> None:
    client = start_server()
    padding = "b" * (MAX_LINE_BYTES - 200)
    message = {"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"_pad": padding}}
    client.send(json.dumps(message).encode())
    assert client.receive() == {"jsonrpc": "2.0", "id": 7, "result": {}}
