"""Governed memory over the real engram-mcp, for what gap G24 left untested on the
wire: the published output schemas hold every envelope the server sends, the retired
shadow tool names do not exist, each server process has its own session, a store
that cannot be opened is a STORE_UNAVAILABLE envelope, and a dialog that times out
falls back to the host's confirmation."""

from __future__ import annotations

import json
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
from engram.memory.schemas import OUTPUT_SCHEMAS
from engram.testing import LineClient, StartServer, capture_args, legacy_init

PURPOSE = "purpose:release-engineering"
TEXT = "Release tarballs are verified with sha256 digests before upload."
SESSION_ID = re.compile(r"ses_[a-z2-7]{16}")


def _profile(tmp_path: Path, name: str = "host", session: str = "") -> Path:
    return init_host(
        tmp_path / name,
        tenant="tenant-a",
        workspace="ws-1",
        principal="alice",
        purpose=PURPOSE,
        grants=["all"],
        session=session,
    )


def _call(server: LineClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return server.request("tools/call", {"name": name, "arguments": arguments})


def _capture_args(text: str = TEXT, key: str = "agent-a.task-42.capture-1") -> dict[str, Any]:
    arguments = capture_args(text=text, key=key)
    # The server runs on the real clock: make the record current now.
    arguments["payload"]["valid_time"] = {"t": int(time.time() * 1000) - 60_000}
    return arguments


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
    profile = _profile(tmp_path)
    server = start_server("--host-profile", str(profile))
    tools = {tool["name"]: tool for tool in server.request("tools/list")["result"]["tools"]}
    seen: dict[str, set[bool]] = {short: set() for short in OUTPUT_SCHEMAS}

    def call(short: str, arguments: dict[str, Any]) -> dict[str, Any]:
        name = f"engram_memory_{short}"
        published = tools[name]["outputSchema"]
        assert published == OUTPUT_SCHEMAS[short]
        result = _call(server, name, arguments)["result"]
        envelope: dict[str, Any] = result["structuredContent"]
        Draft202012Validator(published).validate(envelope)
        assert json.loads(result["content"][0]["text"]) == envelope
        assert result.get("isError", False) is (not envelope["ok"])
        seen[short].add(envelope["ok"])
        return envelope

    candidate = call("capture", _capture_args())["output"]["value"]["candidate_id"]
    call("capture", _capture_args(text="Other content."))  # DIGEST_CONFLICT
    admission = {"candidate_id": candidate, "idempotency_key": "admission-key-0001"}
    record = call("request_admission", admission)["output"]["value"]["outcome"]["record_id"]
    call("request_admission", {"candidate_id": "cand_" + "a" * 32, "idempotency_key": "k" * 16})
    found = call("search", {"query": "release tarballs", "purpose_ref": PURPOSE})
    assert [p["record"]["record_id"] for p in found["output"]["value"]["records"]] == [record]
    call("search", {"query": "x", "purpose_ref": PURPOSE, "page_cursor": "forged"})
    call("get", {"record_id": record, "purpose_ref": PURPOSE})
    call("get", {"record_id": "mem_" + "a" * 52, "purpose_ref": PURPOSE})
    draft = call("capture", _capture_args("A wrong draft.", "agent-a.task-42.capture-2"))
    withdraw = {
        "candidate_id": draft["output"]["value"]["candidate_id"],
        "idempotency_key": "withdraw-key-000001",
        "reason_ref": "reason:wrong-draft",
    }
    assert call("withdraw", withdraw)["error"]["code"] == "gate_failed"
    _confirm(profile, withdraw["candidate_id"])
    assert call("withdraw", withdraw)["output"]["value"]["key_destruction"] == "complete"
    forget = {"record_id": record, "idempotency_key": "forget-key-0000001", "reason_ref": "r:x"}
    assert call("forget", forget)["error"]["code"] == "gate_failed"
    _confirm(profile, record)
    forgotten = call("forget", forget)["output"]["value"]
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
    server = start_server("--host-profile", str(_profile(tmp_path)))
    listed = [tool["name"] for tool in server.request("tools/list")["result"]["tools"]]

    reply = _call(server, name, {"purpose_ref": PURPOSE, "query": "x"})

    assert name not in listed
    assert reply["error"] == {"code": -32602, "message": "Unknown tool"}


def _sessions(profile: Path, servers: list[LineClient]) -> list[list[str]]:
    """The audited session of two searches by each server, in call order."""
    audit_ids = [
        [
            _call(server, "engram_memory_search", {"query": "x", "purpose_ref": PURPOSE})["result"][
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
    profile = _profile(tmp_path)
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
    profile = _profile(tmp_path, session="ses_fixed_by_the_host")
    servers = [start_server("--host-profile", str(profile)) for _ in range(2)]

    assert _sessions(profile, servers) == [["ses_fixed_by_the_host"] * 2] * 2


def test_a_store_that_cannot_be_opened_is_a_store_unavailable_envelope(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = _profile(tmp_path)
    store = profile.parent / "memory.db"
    for leftover in (Path(f"{store}-wal"), Path(f"{store}-shm")):
        leftover.unlink(missing_ok=True)
    store.write_bytes(b"this is not a SQLite database\n" * 64)
    server = start_server("--host-profile", str(profile))

    result = _call(server, "engram_memory_search", {"query": "x", "purpose_ref": PURPOSE})["result"]

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
    profile = _profile(tmp_path)
    server = start_server(
        "--host-profile", str(profile), env={"ENGRAM_ELICITATION_TIMEOUT_S": "0.5"}
    )
    legacy_init(server, {"elicitation": {}})
    captured = _call(server, "engram_memory_capture", _capture_args())["result"]
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
