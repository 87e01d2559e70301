"""``engram-mcp --http``: the governed tools over MCP Streamable HTTP (issue 15), for real:
a server process on a loopback port, raw HTTP requests, and the official Python SDK
client in both protocol eras, every request with a host-issued bearer token."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from engram.host.profile import load_profile
from engram.host.tokens import issue_token
from engram.testing import MODERN_META, host_profile
from engram.testing.governed import PURPOSE
from engram.testing.http import HttpServer

MODERN = "2026-07-28"
META = MODERN_META  # the 2026-07-28 envelope of a client with no capabilities
GOVERNED = sorted(
    f"engram_memory_{name}"
    for name in ("search", "get", "capture", "request_admission", "withdraw", "forget")
)


class Server:
    def __init__(self, url: str, host: str, token: str, profile: Path) -> None:
        self.url, self.host, self.token, self.profile = url, host, token, profile

    def post(
        self, body: Any, headers: dict[str, str] | None = None, token: str | None = None
    ) -> tuple[int, dict[str, str], Any]:
        sent = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {self.token if token is None else token}",
            **(headers or {}),
        }
        return _exchange(urllib.request.Request(self.url, json.dumps(body).encode(), sent))

    def modern(self, method: str, params: dict[str, Any], name: str | None = None) -> Any:
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if name is not None:
            headers["Mcp-Name"] = name
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
        return self.post(body, headers)


def _exchange(request: urllib.request.Request) -> tuple[int, dict[str, str], Any]:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            data = response.read()
            status, headers = response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        data, status, headers = error.read(), error.code, dict(error.headers)
    try:
        body = json.loads(data) if data else None
    except ValueError:
        body = data.decode()
    return status, {key.lower(): value for key, value in headers.items()}, body


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    profile = host_profile(tmp_path_factory.mktemp("http") / "host")
    token = issue_token(load_profile(profile), int(time.time()))
    with HttpServer(profile) as running:
        yield Server(running.url, running.host, token, profile)
    assert running.stdout == b""  # nothing but HTTP answers leaves the server


# --- before anything is read: token, Host, Origin --------------------------------------


@pytest.mark.parametrize("token", ["", "engram1.e30.AAAA", "not-a-token"])
def test_a_request_without_a_valid_token_is_refused_with_401(server: Server, token: str) -> None:
    status, headers, body = server.post(
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}},
        {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"},
        token=token,
    )

    assert status == 401
    assert headers["www-authenticate"] == 'Bearer error="invalid_token"'
    assert body == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32001, "message": "Unauthorized"},
    }


def test_a_token_for_another_host_is_refused(server: Server, tmp_path: Path) -> None:
    other = issue_token(load_profile(host_profile(tmp_path / "other")), int(time.time()))

    status, _, _ = server.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, token=other)

    assert status == 401


@pytest.mark.parametrize(
    "headers",
    [{"Host": "evil.example:80"}, {"Origin": "http://evil.example"}],
)
def test_a_foreign_host_or_origin_is_refused_with_403(
    server: Server, headers: dict[str, str]
) -> None:
    status, _, _ = server.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers)

    assert status == 403


def test_get_offers_no_stream(server: Server) -> None:
    request = urllib.request.Request(
        server.url, headers={"Authorization": f"Bearer {server.token}"}, method="GET"
    )
    status, headers, _ = _exchange(request)

    assert (status, headers["allow"]) == (405, "POST, DELETE")


# --- 2026-07-28 ---------------------------------------------------------------------------


def test_modern_tools_list_answers_the_governed_tools(server: Server) -> None:
    status, headers, body = server.modern("tools/list", {})

    assert status == 200
    assert headers["content-type"] == "application/json"
    assert sorted(tool["name"] for tool in body["result"]["tools"]) == GOVERNED


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({"MCP-Protocol-Version": MODERN}, "Header mismatch: mcp-method is missing"),
        (
            {"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"},
            "Header mismatch: mcp-protocol-version does not match the request",
        ),
        (
            {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"},
            "Header mismatch: mcp-method does not match the request",
        ),
    ],
)
def test_modern_headers_that_disagree_with_the_body_are_32020(
    server: Server, headers: dict[str, str], message: str
) -> None:
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": META}}

    status, _, answer = server.post(body, headers)

    assert status == 400
    assert answer == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32020, "message": message}}


def test_a_modern_tool_call_names_its_tool_in_mcp_name(server: Server) -> None:
    arguments = {"name": "engram_memory_search", "arguments": {"query": "x"}}
    missing = server.modern("tools/call", arguments)
    wrong = server.modern("tools/call", arguments, name="engram_memory_forget")
    right = server.modern("tools/call", arguments, name="engram_memory_search")

    assert missing[2]["error"]["message"] == "Header mismatch: mcp-name is missing"
    assert wrong[2]["error"]["code"] == -32020
    assert right[0] == 200
    assert right[2]["result"]["resultType"] == "complete"


def test_an_unknown_method_is_404(server: Server) -> None:
    status, _, body = server.modern("no/such", {})

    assert (status, body["error"]["code"]) == (404, -32601)


# --- legacy sessions ------------------------------------------------------------------------


def _initialize(server: Server) -> str:
    status, headers, body = server.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {"form": {}}},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
    )
    assert status == 200
    assert body["result"]["protocolVersion"] == "2025-11-25"
    return headers["mcp-session-id"]


def test_a_legacy_session_begins_with_initialize_and_ends_with_delete(server: Server) -> None:
    session = _initialize(server)
    header = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}

    assert server.post(initialized, header)[0] == 202
    status, _, listed = server.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, header)
    assert status == 200
    assert sorted(tool["name"] for tool in listed["result"]["tools"]) == GOVERNED
    ended = _exchange(
        urllib.request.Request(
            server.url,
            headers={"Authorization": f"Bearer {server.token}", "Mcp-Session-Id": session},
            method="DELETE",
        )
    )
    assert ended[0] == 200
    assert server.post({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, header)[0] == 404


def test_a_legacy_request_without_a_session_is_400_and_an_unknown_one_404(
    server: Server,
) -> None:
    request = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}

    assert server.post(request)[0] == 400
    assert server.post(request, {"Mcp-Session-Id": "nope"})[0] == 404


# --- the official SDK client, both eras -----------------------------------------------------


async def _sdk(server: Server, mode: str) -> tuple[str, list[str], Any]:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(server.url, http_client=http), mode=mode) as client,
    ):
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        arguments = {"query": "release", "purpose_ref": PURPOSE}
        result = await client.call_tool("engram_memory_search", arguments)
        return client.protocol_version, tools, result


@pytest.mark.parametrize("mode", ["auto", "legacy", MODERN])
def test_the_sdk_client_lists_and_calls_over_http(server: Server, mode: str) -> None:
    version, tools, result = anyio.run(_sdk, server, mode)

    assert version == ("2025-11-25" if mode == "legacy" else MODERN)
    assert tools == GOVERNED
    assert result.is_error is False
    assert result.structured_content["ok"] is True
    assert result.structured_content["output"]["value"]["records"] == []


# --- one server, every binding of its store ----------------------------------------------


def test_a_token_for_another_profile_of_the_store_gets_that_bindings_tools(
    server: Server, tmp_path: Path
) -> None:
    """One server serves every profile sharing its store (and signing key): the token's
    binding is the request's, with that profile's grants and nothing more."""
    from engram.host.setup import init_host

    served = load_profile(server.profile)
    bob = load_profile(
        init_host(
            tmp_path / "bob",
            tenant=served.tenant,
            workspace=served.workspace,
            principal="bob",
            purpose=served.purpose,
            grants=["search"],
            store=served.store_file,
        )
    )
    token = issue_token(bob, int(time.time()))
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}

    status, _, listed = server.post(body, headers, token=token)
    call = {"name": "engram_memory_capture", "arguments": {}, "_meta": META}
    refused = server.post(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        {**headers, "Mcp-Method": "tools/call", "Mcp-Name": "engram_memory_capture"},
        token=token,
    )

    assert status == 200
    assert [tool["name"] for tool in listed["result"]["tools"]] == ["engram_memory_search"]
    assert refused[2]["error"]["code"] == -32602  # a tool bob was not granted does not exist


def test_a_legacy_session_belongs_to_the_binding_that_opened_it(
    server: Server, tmp_path: Path
) -> None:
    from engram.host.setup import init_host

    served = load_profile(server.profile)
    carol = load_profile(
        init_host(
            tmp_path / "carol",
            tenant=served.tenant,
            workspace=served.workspace,
            principal="carol",
            purpose=served.purpose,
            store=served.store_file,
        )
    )
    session = _initialize(server)

    status, _, _ = server.post(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"Mcp-Session-Id": session},
        token=issue_token(carol, int(time.time())),
    )

    assert status == 404
