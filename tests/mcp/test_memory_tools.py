"""Governed memory on the wire: profiles, grants, binding, envelopes; every envelope the
server sends holds to its published output schema, the retired shadow tool names do
not exist, each server has its own session, a store that cannot be opened is a
STORE_UNAVAILABLE envelope, and a dialog that times out falls back to the host's
confirmation."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from engram.host.runtime import open_memory
from engram.host.setup import init_host
from engram.memory.maintenance import Maintenance
from engram.memory.schemas import OUTPUT_SCHEMAS, input_schema
from engram.testing import (
    MODERN_META,
    PURPOSE,
    LineClient,
    StartServer,
    StdioClient,
    call,
    current_capture_args,
    host_profile,
    legacy_init,
    value,
)


def _memory_tools(server: LineClient) -> list[str]:
    tools = server.request("tools/list")["result"]["tools"]
    return [tool["name"] for tool in tools if tool["name"].startswith("engram_memory_")]


def _capture(purpose: str = PURPOSE, **extra: Any) -> dict[str, Any]:
    return {**current_capture_args(purpose_ref=purpose), **extra}


def test_without_a_profile_no_memory_tool_exists(start_server: StartServer) -> None:
    server = start_server()
    assert _memory_tools(server) == []
    reply = call(server, "engram_memory_search", {"query": "x", "purpose_ref": PURPOSE})
    assert reply["error"] == {"code": -32602, "message": "Unknown tool"}


def test_only_granted_tools_are_listed_in_contract_order(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host", ["capture", "search", "forget"])
    server = start_server("--host-profile", str(profile))
    assert _memory_tools(server) == [
        "engram_memory_search",
        "engram_memory_capture",
        "engram_memory_forget",
    ]
    reply = call(server, "engram_memory_get", {"record_id": "mem_aa", "purpose_ref": PURPOSE})
    assert reply["error"] == {"code": -32602, "message": "Unknown tool"}


def test_default_grants_are_read_only(start_server: StartServer, tmp_path: Path) -> None:
    server = start_server("--host-profile", str(host_profile(tmp_path / "host", None)))
    assert _memory_tools(server) == ["engram_memory_search", "engram_memory_get"]


def test_the_profile_can_come_from_the_environment(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server(env={"ENGRAM_HOST_PROFILE": str(host_profile(tmp_path / "host"))})
    assert len(_memory_tools(server)) == 6


def test_a_disabled_profile_offers_no_memory_tool(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host")
    profile.write_text(profile.read_text().replace("enabled = true", "enabled = false"))
    server = start_server("--host-profile", str(profile))
    assert _memory_tools(server) == []
    assert call(server, "engram_memory_capture", _capture())["error"]["code"] == -32602


@pytest.mark.parametrize(
    "damage", ["world-writable", "unparseable", "missing", "no-principal", "string-flag"]
)
def test_an_untrusted_profile_makes_memory_calls_fail_with_32603(
    start_server: StartServer, tmp_path: Path, damage: str
) -> None:
    profile = host_profile(tmp_path / "host")
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
    reply = call(server, "engram_memory_search", {"query": "x", "purpose_ref": PURPOSE})
    assert reply["error"] == {"code": -32603, "message": "Trusted invocation context unavailable"}


def test_a_profile_that_cannot_be_used_is_said_on_stderr_at_start(tmp_path: Path) -> None:
    """A folder given for its host.toml: the operator learns it at start, not from an
    agent's refused call."""
    folder = host_profile(tmp_path / "host").parent
    with StdioClient(["--host-profile", str(folder)], cwd=tmp_path) as server:
        legacy_init(server)
        assert server.close() == 0
        assert server.stderr == (
            f"engram-mcp: WARNING --host-profile {folder} cannot be used: host profile is not"
            " a regular file (a folder: give its host.toml); no governed tool is served\n"
        )


def test_published_input_schema_is_the_enforced_schema_with_the_purpose_as_const(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server("--host-profile", str(host_profile(tmp_path / "host")))
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
    server = start_server("--host-profile", str(host_profile(tmp_path / "host")))
    reply = call(server, "engram_memory_search", {"query": "x", "purpose_ref": "other"})
    assert reply["error"] == {"code": -32603, "message": "Trusted invocation context unavailable"}
    capture = call(server, "engram_memory_capture", _capture(purpose="other"))
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
    server = start_server("--host-profile", str(host_profile(tmp_path / "host")))
    reply = call(
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
    server = start_server("--host-profile", str(host_profile(tmp_path / "host")))
    captured = call(server, "engram_memory_capture", _capture())["result"]
    assert captured["isError"] is False  # the contract: isError equals !ok
    assert json.loads(captured["content"][0]["text"]) == captured["structuredContent"]
    envelope = captured["structuredContent"]
    assert envelope["redactionClass"] == "high"
    assert re.fullmatch(r"aud_[a-z2-7]{26}", envelope["auditId"])
    candidate = envelope["output"]["value"]["candidate_id"]
    admitted = call(
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
    got = call(
        server, "engram_memory_get", {"record_id": admitted["record_id"], "purpose_ref": PURPOSE}
    )["result"]["structuredContent"]
    assert got["ok"] is True


def test_two_profiles_share_one_store_but_never_each_others_records(
    start_server: StartServer, tmp_path: Path
) -> None:
    first = host_profile(tmp_path / "a")
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
    candidate = call(alice, "engram_memory_capture", _capture())["result"]["structuredContent"][
        "output"
    ]["value"]["candidate_id"]
    admitted = call(
        alice,
        "engram_memory_request_admission",
        {"candidate_id": candidate, "idempotency_key": "admission-key-0001"},
    )["result"]["structuredContent"]["output"]["value"]["outcome"]
    lookup = {"record_id": admitted["record_id"], "purpose_ref": PURPOSE}
    assert call(alice, "engram_memory_get", lookup)["result"]["structuredContent"]["ok"] is True
    foreign = call(bob, "engram_memory_get", lookup)
    assert foreign["result"]["structuredContent"]["error"]["code"] == "NOT_FOUND"


# --- the wire's envelopes, sessions, the store, the dialog's fallback -----------------

TEXT = "Release tarballs are verified with sha256 digests before upload."
SESSION_ID = re.compile(r"ses_[a-z2-7]{16}")


def _confirm(profile: Path, target: str) -> None:
    """What ``engram host confirm`` does, from the operator's side of the store."""
    memory = open_memory(profile, sweep=False)
    host = Maintenance(memory.engine, memory.binding.scope)
    [request] = [row for row in host.pending().confirmations if row.target == target]
    host.confirm(request.request_id)
    memory.engine.store.close()


def test_every_envelope_on_the_wire_matches_the_published_output_schema(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host")
    server = start_server("--host-profile", str(profile))
    tools = {tool["name"]: tool for tool in server.request("tools/list")["result"]["tools"]}
    seen: dict[str, set[bool]] = {short: set() for short in OUTPUT_SCHEMAS}

    def checked(short: str, arguments: dict[str, Any]) -> dict[str, Any]:
        name = f"engram_memory_{short}"
        published = tools[name]["outputSchema"]
        assert published == OUTPUT_SCHEMAS[short]
        result = call(server, name, arguments)["result"]
        envelope: dict[str, Any] = result["structuredContent"]
        Draft202012Validator(published).validate(envelope)
        assert json.loads(result["content"][0]["text"]) == envelope
        assert result.get("isError", False) is (not envelope["ok"])
        seen[short].add(envelope["ok"])
        return envelope

    candidate = checked("capture", current_capture_args())["output"]["value"]["candidate_id"]
    checked("capture", current_capture_args(text="Other content."))  # DIGEST_CONFLICT
    admission = {"candidate_id": candidate, "idempotency_key": "admission-key-0001"}
    record = checked("request_admission", admission)["output"]["value"]["outcome"]["record_id"]
    checked("request_admission", {"candidate_id": "cand_" + "a" * 32, "idempotency_key": "k" * 16})
    found = checked("search", {"query": "release tarballs", "purpose_ref": PURPOSE})
    assert [p["record"]["record_id"] for p in found["output"]["value"]["records"]] == [record]
    checked("search", {"query": "x", "purpose_ref": PURPOSE, "page_cursor": "forged"})
    checked("get", {"record_id": record, "purpose_ref": PURPOSE})
    checked("get", {"record_id": "mem_" + "a" * 52, "purpose_ref": PURPOSE})
    draft = checked("capture", current_capture_args("A wrong draft.", "agent-a.task-42.capture-2"))
    withdraw = {
        "candidate_id": draft["output"]["value"]["candidate_id"],
        "idempotency_key": "withdraw-key-000001",
        "reason_ref": "reason:wrong-draft",
    }
    assert checked("withdraw", withdraw)["error"]["code"] == "gate_failed"
    _confirm(profile, withdraw["candidate_id"])
    assert checked("withdraw", withdraw)["output"]["value"]["key_destruction"] == "complete"
    forget = {"record_id": record, "idempotency_key": "forget-key-0000001", "reason_ref": "r:x"}
    assert checked("forget", forget)["error"]["code"] == "gate_failed"
    _confirm(profile, record)
    forgotten = checked("forget", forget)["output"]["value"]
    assert forgotten["projection_invalidation"] == "complete"

    assert seen == {short: {True, False} for short in OUTPUT_SCHEMAS}


@pytest.mark.parametrize(
    "name",
    [
        "engram_write_shadow",
        "engram_query_shadow",
        "engram_promote_fact",
        "engram_ack_promotion",
    ],
)
def test_the_retired_shadow_tools_are_unknown_even_with_every_grant(
    start_server: StartServer, tmp_path: Path, name: str
) -> None:
    server = start_server("--host-profile", str(host_profile(tmp_path / "host")))
    listed = [tool["name"] for tool in server.request("tools/list")["result"]["tools"]]

    reply = call(server, name, {"purpose_ref": PURPOSE, "query": "x"})

    assert name not in listed
    assert reply["error"] == {"code": -32602, "message": "Unknown tool"}


def _sessions(profile: Path, servers: list[LineClient]) -> list[list[str]]:
    """The audited session of two searches by each server, in call order."""
    audit_ids = [
        [
            call(server, "engram_memory_search", {"query": "x", "purpose_ref": PURPOSE})["result"][
                "structuredContent"
            ]["auditId"]
            for _ in range(2)
        ]
        for server in servers
    ]
    with closing(sqlite3.connect(profile.parent / "memory.db")) as db:
        identities = dict(db.execute("SELECT audit_id, identity FROM audit"))
    return [[json.loads(identities[a])["session"] for a in ids] for ids in audit_ids]


def test_each_server_process_binds_its_own_fresh_session(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host")
    servers = [start_server("--host-profile", str(profile)) for _ in range(2)]

    (first, again), (second, second_again) = _sessions(profile, servers)

    assert SESSION_ID.fullmatch(first)
    assert SESSION_ID.fullmatch(second)
    assert first == again
    assert second == second_again
    assert first != second


def test_a_session_fixed_by_the_profile_is_kept_by_every_process(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host", session="ses_fixed_by_the_host")
    servers = [start_server("--host-profile", str(profile)) for _ in range(2)]

    assert _sessions(profile, servers) == [["ses_fixed_by_the_host"] * 2] * 2


def test_a_store_that_cannot_be_opened_is_a_store_unavailable_envelope(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host")
    store = profile.parent / "memory.db"
    for leftover in (Path(f"{store}-wal"), Path(f"{store}-shm")):
        leftover.unlink(missing_ok=True)
    store.write_bytes(b"this is not a SQLite database\n" * 64)
    server = start_server("--host-profile", str(profile))

    result = call(server, "engram_memory_search", {"query": "x", "purpose_ref": PURPOSE})["result"]

    envelope = result["structuredContent"]
    assert result["isError"] is True
    assert envelope == {
        "ok": False,
        "auditId": envelope["auditId"],
        "redactionClass": "high",
        "error": {
            "code": "STORE_UNAVAILABLE",
            "message": "The store is unavailable; back off and retry.",
            "retriable": True,
        },
    }
    assert re.fullmatch(r"aud_[a-z2-7]{26}", envelope["auditId"])
    Draft202012Validator(OUTPUT_SCHEMAS["search"]).validate(envelope)


def test_a_dialog_that_times_out_falls_back_to_the_host_confirmation(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host", confirm_via="dialog")
    server = start_server(
        "--host-profile", str(profile), env={"ENGRAM_ELICITATION_TIMEOUT_S": "0.5"}
    )
    legacy_init(server, {"elicitation": {}})
    captured = call(server, "engram_memory_capture", current_capture_args())["result"]
    candidate = captured["structuredContent"]["output"]["value"]["candidate_id"]
    arguments = {
        "candidate_id": candidate,
        "idempotency_key": "withdraw-key-000001",
        "reason_ref": "reason:wrong-draft",
    }
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 90,
            "method": "tools/call",
            "params": {"name": "engram_memory_withdraw", "arguments": arguments},
        }
    )
    ask = server.receive()
    assert ask["method"] == "elicitation/create"

    cancelled = server.receive()  # no answer: the dialog times out
    reply = server.receive()

    assert cancelled == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": ask["id"], "reason": "timeout"},
    }
    assert reply["id"] == 90
    assert reply["result"]["isError"] is True
    assert reply["result"]["structuredContent"]["error"]["code"] == "gate_failed"
    server.send(  # a late answer approves nothing
        {
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {"action": "accept", "content": {"approve": True}},
        }
    )
    assert "result" in server.request("tools/list")  # the server read it and lives on
    memory = open_memory(profile, sweep=False)
    [request] = Maintenance(memory.engine, memory.binding.scope).pending().confirmations
    assert (request.tool, request.target) == ("withdraw", candidate)
    with memory.engine.store.read() as reader:
        stored = reader.candidate(memory.binding.scope.scope_id, candidate)
    assert stored is not None
    assert stored.state == "pending"


def test_a_server_builds_the_semantic_projection_in_the_background(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host", semantic=True)
    server = start_server("--host-profile", str(profile))
    arguments = current_capture_args(text="Webhooks are delivered through the outbox table.")
    captured = value(call(server, "engram_memory_capture", arguments))
    admission = {"candidate_id": captured["candidate_id"], "idempotency_key": "admission-key-0001"}
    value(call(server, "engram_memory_request_admission", admission))
    search = {
        "query": "how are event notifications sent?",
        "purpose_ref": PURPOSE,
        "capability_policy": {"minimum_channels": "lexical_and_semantic"},
    }
    deadline = time.monotonic() + 20
    while True:  # the record admitted after the build started is embedded by the next build
        reply = call(server, "engram_memory_search", search)
        structured = reply["result"]["structuredContent"]
        if structured["ok"] or time.monotonic() > deadline:
            break
        assert structured["error"]["code"] == "RANKING_UNAVAILABLE"
        time.sleep(0.05)
    found = value(reply)
    assert found["rank_receipt"]["channels"] == ["lexical", "semantic"]
    assert len(found["records"]) == 1
