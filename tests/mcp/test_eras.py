"""Both protocol eras on one engram-mcp process: handshake, discovery, routing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engram import __version__
from engram.mcp.instructions import INSTRUCTIONS, MAX_INSTRUCTIONS_CHARS
from engram.project.layout import init_layout
from engram.testing import MODERN_META, StartServer, serve_lines

SERVER_INFO = {"name": "engram", "title": "Engram", "version": __version__}


def _initialize(version: object) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t"}}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_initialize_answers_a_known_legacy_version_with_that_version(
    start_server: StartServer, version: str
) -> None:
    reply = start_server().request("initialize", _initialize(version))
    assert reply["result"]["protocolVersion"] == version


@pytest.mark.parametrize("version", ["2099-01-01", "2026-07-28", "", 20251125, None])
def test_initialize_never_echoes_an_unknown_version(
    start_server: StartServer, version: object
) -> None:
    reply = start_server().request("initialize", _initialize(version))
    assert reply["result"]["protocolVersion"] == "2025-11-25"


def test_initialize_result_is_exactly_what_we_implement(start_server: StartServer) -> None:
    reply = start_server().request("initialize", _initialize("2025-11-25"))
    assert reply == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        },
    }


def test_instructions_are_at_most_512_characters_and_name_the_commit_rule() -> None:
    assert len(INSTRUCTIONS) <= MAX_INSTRUCTIONS_CHARS
    assert "engram_load" in INSTRUCTIONS
    assert "engram_commit" in INSTRUCTIONS
    assert "human" in INSTRUCTIONS


def test_legacy_ping_initialized_notification_and_unknown_method(tmp_path: Path) -> None:
    lines = [
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":2,"method":"no/such/method"}',
        b'{"jsonrpc":"2.0","id":3,"method":"server/discover"}',
    ]
    messages = serve_lines(lines, cwd=tmp_path).messages
    not_found = {"code": -32601, "message": "Method not found"}
    assert messages == [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": 2, "error": not_found},
        {"jsonrpc": "2.0", "id": 3, "error": not_found},
    ]


def test_bare_tool_method_in_legacy_era_answers_plain_text(
    start_server: StartServer, tmp_path: Path
) -> None:
    init_layout(tmp_path)
    reply = start_server().request("engram_status", {})
    assert isinstance(reply["result"], str)
    assert reply["result"] == (
        f"engram {__version__} in {tmp_path.resolve()}: 0 rules, 0 skills, 0 knowledge,"
        " 0 notes; 0 invalid files, 0 hash problems"
    )


def test_modern_request_without_client_capabilities_is_invalid_params(
    start_server: StartServer,
) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    reply = start_server().request("tools/list", {"_meta": meta})
    assert reply == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32602,
            "message": "Missing io.modelcontextprotocol/clientCapabilities",
        },
    }


def test_modern_request_with_unsupported_version_gets_32022_with_supported_and_requested(
    start_server: StartServer,
) -> None:
    meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2030-01-01"}
    reply = start_server().request("tools/list", {"_meta": meta})
    assert reply == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {
                # Only what a request can name; the older versions go through initialize.
                "supported": ["2026-07-28"],
                "requested": "2030-01-01",
            },
        },
    }


def test_server_discover_returns_versions_capabilities_instructions_and_cache_fields(
    start_server: StartServer,
) -> None:
    reply = start_server().request("server/discover", {"_meta": MODERN_META})
    assert reply["result"] == {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
        "serverInfo": SERVER_INFO,
        "instructions": INSTRUCTIONS,
        "ttlMs": 300000,
        "cacheScope": "private",
        "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
    }


@pytest.mark.parametrize(
    ("method", "ttl"),
    [
        ("tools/list", 300000),
        ("prompts/list", 300000),
        ("resources/templates/list", 300000),
        ("resources/list", 0),
    ],
)
def test_modern_list_results_carry_result_type_server_info_ttl_and_cache_scope(
    start_server: StartServer, method: str, ttl: int
) -> None:
    result = start_server().request(method, {"_meta": MODERN_META})["result"]
    assert result["resultType"] == "complete"
    assert result["_meta"] == {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
    assert (result["ttlMs"], result["cacheScope"]) == (ttl, "private")


@pytest.mark.parametrize("method", ["ping", "initialize", "engram_status", "logging/setLevel"])
def test_modern_era_refuses_legacy_only_and_bare_tool_methods(
    start_server: StartServer, method: str
) -> None:
    reply = start_server().request(method, {"_meta": MODERN_META})
    assert reply["error"] == {"code": -32601, "message": "Method not found"}


def test_modern_and_legacy_requests_interleave_on_one_process(start_server: StartServer) -> None:
    server = start_server()
    before = server.request("tools/list", {"_meta": MODERN_META})["result"]
    server.request("initialize", _initialize("2025-03-26"))
    server.notify("notifications/initialized")
    legacy = server.request("tools/list")["result"]
    after = server.request("tools/list", {"_meta": MODERN_META})["result"]
    assert before == after
    assert legacy == {"tools": before["tools"]}
    assert server.request("ping")["result"] == {}


def test_legacy_requests_before_initialize_are_served(start_server: StartServer) -> None:
    tools = start_server().request("tools/list")["result"]["tools"]
    assert [tool["name"] for tool in tools][:3] == ["engram_load", "engram_route", "engram_search"]


def test_list_cursor_is_refused_because_every_list_is_one_page(start_server: StartServer) -> None:
    reply = start_server().request("tools/list", {"cursor": "abc"})
    assert reply["error"] == {"code": -32602, "message": "Invalid params"}


def test_unknown_option_is_ignored_with_a_note_on_stderr(tmp_path: Path) -> None:
    served = serve_lines(
        [b'{"jsonrpc":"2.0","id":1,"method":"ping"}'], "--frobnicate", "x", cwd=tmp_path
    )
    messages, stderr, status = served.messages, served.stderr, served.status
    assert messages == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    assert "ignoring unknown option --frobnicate" in stderr
    assert status == 0
