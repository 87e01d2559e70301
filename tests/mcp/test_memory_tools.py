"""Governed memory over the real engram-mcp: profiles, grants, binding, envelopes."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from engram.host.setup import init_host
from engram.memory.schemas import input_schema
from engram.testing import MODERN_META, LineClient, StartServer, capture_args

PURPOSE = "purpose:release-engineering"


def _profile(tmp_path: Path, grants: list[str] | None = None, name: str = "host") -> Path:
    return init_host(
        tmp_path / name,
        tenant="tenant-a",
        workspace="ws-1",
        principal="alice",
        purpose=PURPOSE,
        grants=grants,
    )


def _memory_tools(server: LineClient) -> list[str]:
    tools = server.request("tools/list")["result"]["tools"]
    return [tool["name"] for tool in tools if tool["name"].startswith("engram_memory_")]


def _call(server: LineClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return server.request("tools/call", {"name": name, "arguments": arguments})


def _capture(purpose: str = PURPOSE, **extra: Any) -> dict[str, Any]:
    arguments = capture_args()
    arguments["payload"]["purpose_ref"] = purpose
    # The server runs on the real clock: make the record current now.
    arguments["payload"]["valid_time"] = {"t": int(time.time() * 1000) - 60_000}
    arguments.update(extra)
    return arguments


def test_without_a_profile_no_memory_tool_exists(start_server: StartServer) -> None:
    server = start_server()
    assert _memory_tools(server) == []
    reply = _call(server, "engram_memory_search", {"query": "x", "purpose_ref": PURPOSE})
    assert reply["error"] == {"code": -32602, "message": "Unknown tool"}


def test_only_granted_tools_are_listed_in_contract_order(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = _profile(tmp_path, ["capture", "search", "forget"])
    server = start_server("--host-profile", str(profile))
    assert _memory_tools(server) == [
        "engram_memory_search",
        "engram_memory_capture",
        "engram_memory_forget",
    ]
    reply = _call(server, "engram_memory_get", {"record_id": "mem_aa", "purpose_ref": PURPOSE})
    assert reply["error"] == {"code": -32602, "message": "Unknown tool"}


def test_default_grants_are_read_only(start_server: StartServer, tmp_path: Path) -> None:
    server = start_server("--host-profile", str(_profile(tmp_path)))
    assert _memory_tools(server) == ["engram_memory_search", "engram_memory_get"]


def test_the_profile_can_come_from_the_environment(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server(env={"ENGRAM_HOST_PROFILE": str(_profile(tmp_path, ["all"]))})
    assert len(_memory_tools(server)) == 6


def test_a_disabled_profile_offers_no_memory_tool(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = _profile(tmp_path, ["all"])
    profile.write_text(profile.read_text().replace("enabled = true", "enabled = false"))
    server = start_server("--host-profile", str(profile))
    assert _memory_tools(server) == []
    assert _call(server, "engram_memory_capture", _capture())["error"]["code"] == -32602


@pytest.mark.parametrize(
    "damage", ["world-writable", "unparseable", "missing", "no-principal", "string-flag"]
)
def test_an_untrusted_profile_makes_memory_calls_fail_with_32603(
    start_server: StartServer, tmp_path: Path, damage: str
) -> None:
    profile = _profile(tmp_path, ["all"])
    if damage == "world-writable":
        os.chmod(profile, 0o666)
    elif damage == "unparseable":
        profile.write_text("[memory\nenabled = ")
    elif damage == "missing":
        profile.unlink()
    elif damage == "string-flag":
        profile.write_text(
            profile.read_text().replace("allow_retain = false", 'allow_retain = "no"')
        )
    else:
        profile.write_text(profile.read_text().replace('principal = "alice"', ""))
    server = start_server("--host-profile", str(profile))
    assert _memory_tools(server) == []
    reply = _call(server, "engram_memory_search", {"query": "x", "purpose_ref": PURPOSE})
    assert reply["error"] == {"code": -32603, "message": "Trusted invocation context unavailable"}


def test_published_input_schema_is_the_enforced_schema_with_the_purpose_as_const(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server("--host-profile", str(_profile(tmp_path, ["all"])))
    tools = {tool["name"]: tool for tool in server.request("tools/list")["result"]["tools"]}
    for short in ("search", "get", "capture", "request_admission", "withdraw", "forget"):
        published = tools[f"engram_memory_{short}"]["inputSchema"]
        assert published == input_schema(short, PURPOSE)
        assert published["additionalProperties"] is False
    assert tools["engram_memory_search"]["inputSchema"]["properties"]["purpose_ref"]["const"] == (
        PURPOSE
    )
    assert tools["engram_memory_search"]["annotations"]["readOnlyHint"] is True
    assert tools["engram_memory_capture"]["annotations"]["readOnlyHint"] is False


def test_a_purpose_mismatch_is_32603_not_an_envelope(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server("--host-profile", str(_profile(tmp_path, ["all"])))
    reply = _call(server, "engram_memory_search", {"query": "x", "purpose_ref": "other"})
    assert reply["error"] == {"code": -32603, "message": "Trusted invocation context unavailable"}
    capture = _call(server, "engram_memory_capture", _capture(purpose="other"))
    assert capture["error"]["code"] == -32603


@pytest.mark.parametrize(
    "field",
    [
        "tenant",
        "workspace",
        "scope",
        "principal",
        "agent_id",
        "session",
        "credential",
        "auditId",
        "deadline",
        "cancellation",
        "confirmation",
        "confirmed",
    ],
)
def test_host_owned_fields_in_arguments_are_invalid_schema(
    start_server: StartServer, tmp_path: Path, field: str
) -> None:
    server = start_server("--host-profile", str(_profile(tmp_path, ["all"])))
    reply = _call(
        server, "engram_memory_search", {"query": "x", "purpose_ref": PURPOSE, field: "t"}
    )["result"]
    assert reply["isError"] is True
    assert reply["structuredContent"]["error"] == {
        "code": "INVALID_SCHEMA",
        "message": "Arguments do not match the tool's closed schema.",
        "retriable": False,
    }


def test_capture_admit_search_get_over_stdio_in_both_eras(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server("--host-profile", str(_profile(tmp_path, ["all"])))
    captured = _call(server, "engram_memory_capture", _capture())["result"]
    assert captured["isError"] is False  # the contract: isError equals !ok
    assert json.loads(captured["content"][0]["text"]) == captured["structuredContent"]
    envelope = captured["structuredContent"]
    assert envelope["redactionClass"] == "high"
    assert re.fullmatch(r"aud_[a-z2-7]{26}", envelope["auditId"])
    candidate = envelope["output"]["value"]["candidate_id"]
    admitted = _call(
        server,
        "engram_memory_request_admission",
        {"candidate_id": candidate, "idempotency_key": "admission-key-0001"},
    )["result"]["structuredContent"]["output"]["value"]["outcome"]
    search = server.request(
        "tools/call",
        {
            "name": "engram_memory_search",
            "arguments": {"query": "release tarballs", "purpose_ref": PURPOSE},
            "_meta": MODERN_META,
        },
    )["result"]
    assert search["resultType"] == "complete"
    records = search["structuredContent"]["output"]["value"]["records"]
    assert [r["record"]["record_id"] for r in records] == [admitted["record_id"]]
    got = _call(
        server, "engram_memory_get", {"record_id": admitted["record_id"], "purpose_ref": PURPOSE}
    )["result"]["structuredContent"]
    assert got["ok"] is True


def test_two_profiles_share_one_store_but_never_each_others_records(
    start_server: StartServer, tmp_path: Path
) -> None:
    first = _profile(tmp_path, ["all"], "a")
    second = init_host(
        tmp_path / "b",
        tenant="tenant-b",
        workspace="ws-1",
        principal="bob",
        purpose=PURPOSE,
        grants=["all"],
        store=tmp_path / "a" / "memory.db",
    )
    assert "memory.db" in second.read_text()
    alice = start_server("--host-profile", str(first))
    bob = start_server("--host-profile", str(second))
    candidate = _call(alice, "engram_memory_capture", _capture())["result"]["structuredContent"][
        "output"
    ]["value"]["candidate_id"]
    admitted = _call(
        alice,
        "engram_memory_request_admission",
        {"candidate_id": candidate, "idempotency_key": "admission-key-0001"},
    )["result"]["structuredContent"]["output"]["value"]["outcome"]
    lookup = {"record_id": admitted["record_id"], "purpose_ref": PURPOSE}
    assert _call(alice, "engram_memory_get", lookup)["result"]["structuredContent"]["ok"] is True
    foreign = _call(bob, "engram_memory_get", lookup)
    assert foreign["result"]["structuredContent"]["error"]["code"] == "NOT_FOUND"
