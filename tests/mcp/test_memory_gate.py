"""The confirmation gate over the real engram-mcp: the dialog in both eras, and the
host path (gate_failed, ``engram host confirm``, retry) when there is no dialog."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, types

from engram.testing import (
    MODERN_META,
    PURPOSE,
    LineClient,
    StartServer,
    call,
    capture_args,
    current_capture_args,
    host_profile,
    legacy_init,
    server_command,
    tool_request,
    value,
)

SECRET_TEXT = "Rotation runbook: deploy keys live in the vault, never in the repo."


def _profile(tmp_path: Path) -> Path:
    return host_profile(tmp_path / "host", tenant="t", workspace="w", confirm_via="dialog")


def _admit(server: LineClient, key: str = "r1") -> str:
    arguments = current_capture_args(text=SECRET_TEXT, key=f"{key}.capture-000001")
    candidate = value(call(server, "engram_memory_capture", arguments))["candidate_id"]
    admitted = value(
        call(
            server,
            "engram_memory_request_admission",
            {"candidate_id": candidate, "idempotency_key": f"{key}.admission-0001"},
        )
    )
    return str(admitted["outcome"]["record_id"])


def _forget(record: str) -> dict[str, Any]:
    return {
        "record_id": record,
        "idempotency_key": "forget-key-000001",
        "reason_ref": "reason:obsolete",
    }


def _pending(profile: Path) -> list[dict[str, Any]]:
    output = subprocess.run(
        [
            str(Path(sys.executable).with_name("engram")),
            "host",
            "pending",
            "--json",
            "--host-profile",
            str(profile),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    confirmations: list[dict[str, Any]] = json.loads(output)["confirmations"]
    return confirmations


def test_legacy_dialog_shows_operation_target_and_reason_never_memory_text(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server("--host-profile", str(_profile(tmp_path)))
    legacy_init(server, {"elicitation": {}})
    record = _admit(server)
    server.send(tool_request(90, "engram_memory_forget", _forget(record)))
    ask = server.receive()
    assert ask["method"] == "elicitation/create"
    message = ask["params"]["message"]
    assert message == f"An agent asks to forget {record} (reason: reason:obsolete)."
    assert "vault" not in json.dumps(ask)
    server.send(
        {
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {"action": "accept", "content": {"approve": True}},
        }
    )
    forgotten = value(server.receive())
    assert forgotten["receipt"]["to_state"] == "tombstoned"
    assert forgotten["projection_invalidation"] == "complete"
    assert forgotten["coverage_receipt_digest"].startswith("sha256:")


@pytest.mark.parametrize(
    "answer",
    [
        {"action": "decline"},
        {"action": "cancel"},
        {"action": "accept", "content": {"approve": False}},
    ],
)
def test_legacy_dialog_anything_but_approval_executes_nothing(
    start_server: StartServer, tmp_path: Path, answer: dict[str, Any]
) -> None:
    profile = _profile(tmp_path)
    server = start_server("--host-profile", str(profile))
    legacy_init(server, {"elicitation": {"form": {}}})
    record = _admit(server)
    server.send(tool_request(90, "engram_memory_forget", _forget(record)))
    ask = server.receive()
    server.send({"jsonrpc": "2.0", "id": ask["id"], "result": answer})
    reply = server.receive()["result"]
    assert reply["isError"] is True
    assert reply["structuredContent"]["error"]["code"] == "gate_failed"
    assert _pending(profile) == []
    got = call(server, "engram_memory_get", {"record_id": record, "purpose_ref": PURPOSE})
    assert got["result"]["structuredContent"]["ok"] is True


def test_modern_dialog_is_an_input_required_round_trip(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server("--host-profile", str(_profile(tmp_path)))
    record = _admit(server)
    meta = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    first = call(server, "engram_memory_forget", _forget(record), _meta=meta)["result"]
    assert first["resultType"] == "input_required"
    request = first["inputRequests"]["confirm"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["message"] == (
        f"An agent asks to forget {record} (reason: reason:obsolete)."
    )
    answer = {"confirm": {"action": "accept", "content": {"approve": True}}}
    final = call(
        server,
        "engram_memory_forget",
        _forget(record),
        _meta=meta,
        requestState=first["requestState"],
        inputResponses=answer,
    )["result"]
    assert final["resultType"] == "complete"
    assert final["structuredContent"]["output"]["value"]["receipt"]["to_state"] == "tombstoned"


def test_without_a_dialog_the_host_confirms_and_the_agent_retries(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = _profile(tmp_path)
    server = start_server("--host-profile", str(profile))
    legacy_init(server, {})
    record = _admit(server)
    refused = call(server, "engram_memory_forget", _forget(record))["result"]
    assert refused["structuredContent"]["error"]["code"] == "gate_failed"
    [request] = _pending(profile)
    assert (request["tool"], request["target"], request["reason"]) == (
        "forget",
        record,
        "reason:obsolete",
    )
    subprocess.run(
        [
            str(Path(sys.executable).with_name("engram")),
            "host",
            "confirm",
            request["request_id"],
            "--host-profile",
            str(profile),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    forgotten = value(call(server, "engram_memory_forget", _forget(record)))
    assert forgotten["receipt"]["to_state"] == "tombstoned"
    search = call(
        server, "engram_memory_search", {"query": "rotation runbook", "purpose_ref": PURPOSE}
    )
    assert value(search)["records"] == []


async def _sdk_withdraw(params: StdioServerParameters, mode: str) -> Any:
    asked: list[str] = []

    async def approve(context: Any, request: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(request.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with Client(params, mode=mode, cache=None, elicitation_callback=approve) as client:  # type: ignore[arg-type]
        arguments = capture_args(key="sdk-capture-key-0001")
        captured = await client.call_tool("engram_memory_capture", arguments)
        candidate = captured.structured_content["output"]["value"]["candidate_id"]
        withdrawn = await client.call_tool(
            "engram_memory_withdraw",
            {
                "candidate_id": candidate,
                "idempotency_key": "sdk-withdraw-key-01",
                "reason_ref": "reason:mistake",
            },
        )
    return asked, candidate, withdrawn.structured_content


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_sdk_client_confirms_a_withdrawal_in_the_dialog(tmp_path: Path, mode: str) -> None:
    command = server_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "--host-profile", str(_profile(tmp_path))],
        cwd=str(tmp_path),
        env={"PATH": os.environ.get("PATH", "")},
    )
    asked, candidate, envelope = anyio.run(_sdk_withdraw, params, mode)
    assert asked == [f"An agent asks to withdraw {candidate} (reason: reason:mistake)."]
    withdrawn = envelope["output"]["value"]
    assert (withdrawn["receipt"]["from_state"], withdrawn["receipt"]["to_state"]) == (
        "pending",
        "withdrawn",
    )
    assert withdrawn["key_destruction"] == "complete"


def test_a_modern_dialog_runs_the_gates_dry_run_once(
    start_server: StartServer, tmp_path: Path
) -> None:
    """The retry carries the answer: the body is not run again to rebuild the question
    (one dry run, audited as ``gate_probed``, then the operation itself)."""
    import sqlite3

    from engram.host.profile import load_profile

    profile = _profile(tmp_path)
    server = start_server("--host-profile", str(profile))
    record = _admit(server)
    meta = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    first = call(server, "engram_memory_forget", _forget(record), _meta=meta)["result"]
    final = call(
        server,
        "engram_memory_forget",
        _forget(record),
        _meta=meta,
        requestState=first["requestState"],
        inputResponses={"confirm": {"action": "accept", "content": {"approve": True}}},
    )["result"]

    assert final["structuredContent"]["output"]["value"]["receipt"]["to_state"] == "tombstoned"
    with sqlite3.connect(load_profile(profile).store_file) as db:
        outcomes = [row[0] for row in db.execute("SELECT outcome FROM audit WHERE tool = 'forget'")]
    assert sorted(outcomes) == ["gate_probed", "ok"]
