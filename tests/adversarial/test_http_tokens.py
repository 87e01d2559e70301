"""Attacks on ``engram-mcp --http`` through its tokens (issue 26, items 2 and 3).

An agent holding a token for its own profile tries to be served under another profile's
policy (the one the server was started with): to answer its own dialog where its profile
says the host confirms, or to have a record admitted past its profile's size ceiling; to
replay a dialog's ``requestState`` after the operator changed the policy; and to keep
using its token after the operator disabled its profile, cut its grants, deleted its
``host.toml`` or revoked the token on another machine. Every attack runs against real
servers (uvicorn on loopback) over one store with three profiles (``via`` host, dialog
and both), on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engram.cli.main import cli
from engram.host.profile import load_profile
from engram.host.runtime import open_memory
from engram.host.tokens import issue_token
from engram.memory.maintenance import Maintenance
from engram.testing import MODERN_META, elicit_meta, host_profile
from engram.testing.governed import PURPOSE, current_capture_args
from engram.testing.http import HttpServer
from engram.testing.postgres import PostgresRun

MODERN = "2026-07-28"
ACCEPT = {"action": "accept", "content": {"approve": True}}
UNAUTHORIZED = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Unauthorized"}}
INVALID_STATE = {"code": -32602, "message": "Invalid or expired requestState"}
ALL_TOOLS = sorted(
    f"engram_memory_{name}"
    for name in ("search", "get", "capture", "request_admission", "withdraw", "forget")
)


@dataclass
class Store:
    """One store, its three profiles (by ``via``), and what joins another profile to it."""

    profiles: dict[str, Path]
    join: dict[str, Any]
    tokens: dict[str, str]


@dataclass
class Servers:
    """Servers of the store: ``dialog`` and ``host`` started with those profiles;
    ``elsewhere`` started with a profile of its own whose key directory is a copy (a
    second machine that shares only the database, or the store file)."""

    store: Store
    ports: dict[str, int]


def _post(port: int, token: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        json.dumps(body).encode(),
        {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        data = error.read()
        return error.code, json.loads(data) if data else None


def _modern(
    port: int, token: str, method: str, params: dict[str, Any], meta: dict[str, Any] | None = None
) -> tuple[int, Any]:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method == "tools/call":
        headers["Mcp-Name"] = params["name"]
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {**params, "_meta": meta or MODERN_META},
    }
    return _post(port, token, body, headers)


def _call(
    port: int, token: str, tool: str, arguments: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    meta = extra.pop("meta", None)
    status, answer = _modern(
        port, token, "tools/call", {"name": tool, "arguments": arguments, **extra}, meta
    )
    assert status in (200, 400), (status, answer)
    result: dict[str, Any] = answer.get("result") or {"error": answer["error"]}
    return result


def _listed(port: int, token: str) -> tuple[int, Any]:
    status, answer = _modern(port, token, "tools/list", {})
    if status != 200:
        return status, answer
    return status, sorted(tool["name"] for tool in answer["result"]["tools"])


def _admitted(port: int, token: str, text: str, key: str) -> dict[str, Any]:
    captured = _call(
        port,
        token,
        "engram_memory_capture",
        current_capture_args(text, key=f"{key}.capture-0000001"),
    )["structuredContent"]
    assert captured["ok"] is True, captured
    admission = {
        "candidate_id": captured["output"]["value"]["candidate_id"],
        "idempotency_key": f"{key}.admit-00000001",
    }
    admitted = _call(port, token, "engram_memory_request_admission", admission)
    outcome: dict[str, Any] = admitted["structuredContent"]["output"]["value"]["outcome"]
    return outcome


def _record(port: int, token: str, key: str) -> str:
    outcome = _admitted(port, token, f"The {key} orchard is pruned in November.", key)
    assert outcome["status"] == "accepted", outcome
    return str(outcome["record_id"])


def _forget(record: str, key: str) -> dict[str, Any]:
    return {
        "record_id": record,
        "idempotency_key": f"{key}.forget-0000001",
        "reason_ref": "reason:x",
    }


def _still_there(port: int, token: str, record: str) -> bool:
    got = _call(port, token, "engram_memory_get", {"record_id": record, "purpose_ref": PURPOSE})
    return bool(got["structuredContent"]["ok"])


def _edit(profile: Path, old: str, new: str) -> None:
    text = profile.read_text(encoding="utf-8")
    assert old in text, old
    profile.write_text(text.replace(old, new), encoding="utf-8")


def _new_profile(store: Store, directory: Path, principal: str, **options: Any) -> Path:
    return host_profile(
        directory, principal=principal, tenant="acme", workspace="w", **store.join, **options
    )


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def servers(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Servers]:
    root = tmp_path_factory.mktemp("tokens")
    first: dict[str, Any] = {}
    if request.param == "postgresql":
        run: PostgresRun = request.getfixturevalue("postgres_run")
        first = {"store": run.new_store().url}
    binding: dict[str, Any] = {"tenant": "acme", "workspace": "w"}
    host = host_profile(root / "host", principal="agent-host", **binding, **first)
    loaded = load_profile(host)
    join: dict[str, Any] = {"store": first.get("store", loaded.store), "keys": loaded.keys}
    profiles = {
        "host": host,
        "dialog": host_profile(
            root / "dialog", principal="agent-dialog", confirm_via="dialog", **binding, **join
        ),
        "both": host_profile(
            root / "both", principal="agent-both", confirm_via="both", **binding, **join
        ),
    }
    # The host profile admits records of at most 2,048 bytes; the others 16,384.
    _edit(host, "max_record_bytes = 16384", "max_record_bytes = 2048")
    now = int(time.time())
    tokens = {via: issue_token(load_profile(path), now) for via, path in profiles.items()}
    # A second machine: its own key directory (a copy, made once) and its own profile.
    copied = root / "elsewhere.keys"
    shutil.copytree(loaded.keys, copied)
    elsewhere = host_profile(
        root / "elsewhere", principal="agent-elsewhere", **binding, **{**join, "keys": copied}
    )
    store = Store(profiles, join, tokens)
    with contextlib.ExitStack() as running:
        started = {
            "dialog": running.enter_context(HttpServer(profiles["dialog"])),
            "host": running.enter_context(HttpServer(profiles["host"])),
            "elsewhere": running.enter_context(HttpServer(elsewhere)),
        }
        yield Servers(store, {name: server.port for name, server in started.items()})
    for server in started.values():
        assert server.stdout == b""
        log = server.stderr.decode("utf-8", "replace")
        assert not any(token in log for token in tokens.values())  # never a token in a log
        assert "engram1." not in log


# --- item 2: the token's profile decides who confirms, and under which policy ---------


def test_a_host_profiles_agent_cannot_answer_its_own_dialog_on_a_server_started_with_dialog(
    servers: Servers,
) -> None:
    port, token = servers.ports["dialog"], servers.store.tokens["host"]
    record = _record(port, token, "apple")

    first = _call(port, token, "engram_memory_forget", _forget(record, "apple"), meta=elicit_meta())
    forged = _call(
        port,
        token,
        "engram_memory_forget",
        _forget(record, "apple"),
        meta=elicit_meta(),
        inputResponses={"confirm": ACCEPT},
    )

    assert first["resultType"] == "complete"  # no dialog was offered to the agent's client
    assert first["structuredContent"]["error"]["code"] == "gate_failed"
    assert forged == {"error": INVALID_STATE}
    assert _still_there(port, token, record)


def test_a_dialog_profiles_agent_gets_its_dialog_on_a_server_started_with_host(
    servers: Servers,
) -> None:
    port, token = servers.ports["host"], servers.store.tokens["dialog"]
    record = _record(port, token, "pear")

    first = _call(port, token, "engram_memory_forget", _forget(record, "pear"), meta=elicit_meta())
    assert first["resultType"] == "input_required", first
    final = _call(
        port,
        token,
        "engram_memory_forget",
        _forget(record, "pear"),
        meta=elicit_meta(),
        requestState=first["requestState"],
        inputResponses={"confirm": ACCEPT},
    )

    assert final["structuredContent"]["output"]["value"]["receipt"]["to_state"] == "tombstoned"


def test_a_both_profiles_agent_needs_the_operator_first_on_a_server_started_with_dialog(
    servers: Servers,
) -> None:
    port, token = servers.ports["dialog"], servers.store.tokens["both"]
    record = _record(port, token, "plum")
    forget = _forget(record, "plum")

    first = _call(port, token, "engram_memory_forget", forget, meta=elicit_meta())
    assert first["resultType"] == "complete"  # the operator first: no dialog yet
    assert first["structuredContent"]["error"]["code"] == "gate_failed"
    host = open_memory(servers.store.profiles["both"], sweep=False, semantic=False)
    try:
        maintenance = Maintenance(host.engine, host.binding.scope)
        [asked] = [
            row for row in maintenance.pending().confirmations if row.principal == "agent-both"
        ]
        maintenance.confirm(asked.request_id)
    finally:
        host.close()
    second = _call(port, token, "engram_memory_forget", forget, meta=elicit_meta())
    assert second["resultType"] == "input_required", second
    final = _call(
        port,
        token,
        "engram_memory_forget",
        forget,
        meta=elicit_meta(),
        requestState=second["requestState"],
        inputResponses={"confirm": ACCEPT},
    )

    assert final["structuredContent"]["output"]["value"]["receipt"]["to_state"] == "tombstoned"


def test_admission_applies_the_tokens_profiles_record_ceiling_not_the_servers(
    servers: Servers,
) -> None:
    port = servers.ports["dialog"]  # started with a profile admitting 16,384 bytes
    text = "The long orchard notebook says " + "graft and prune, " * 200  # about 3.4 KiB

    under_host = _admitted(port, servers.store.tokens["host"], text, "ceiling-host")
    under_dialog = _admitted(port, servers.store.tokens["dialog"], text, "ceiling-dialog")

    assert under_host["status"] == "rejected"  # record_too_large, in the decision receipt
    assert under_dialog["status"] == "accepted"


def test_a_request_state_sealed_under_one_policy_is_refused_under_another(
    servers: Servers, tmp_path: Path
) -> None:
    port = servers.ports["dialog"]  # whose own policy would have let the old state through
    profile = _new_profile(servers.store, tmp_path / "p", "agent-change", confirm_via="dialog")
    token = issue_token(load_profile(profile), int(time.time()))
    record = _record(port, token, "fig")
    forget = _forget(record, "fig")
    first = _call(port, token, "engram_memory_forget", forget, meta=elicit_meta())
    assert first["resultType"] == "input_required", first

    _edit(profile, "max_days = 30", "max_days = 29")  # the operator changes the policy
    retried = _call(
        port,
        token,
        "engram_memory_forget",
        forget,
        meta=elicit_meta(),
        requestState=first["requestState"],
        inputResponses={"confirm": ACCEPT},
    )

    assert retried == {"error": INVALID_STATE}
    assert _still_there(port, token, record)


# --- item 3: a token follows its profile, on every server ------------------------------


@pytest.mark.parametrize(
    "change",
    [
        ("enabled = true", "enabled = false"),  # the operator disables memory
        ('principal = "agent-gone"', 'principal = "someone-else"'),  # rebinds the profile
        ("__delete__", ""),  # deletes host.toml
        ("__other_store__", ""),  # points it at another store
    ],
    ids=["disabled", "rebound", "deleted", "other-store"],
)
def test_a_token_is_refused_once_its_profile_no_longer_allows_it(
    servers: Servers, tmp_path: Path, change: tuple[str, str]
) -> None:
    profile = _new_profile(servers.store, tmp_path / "p", "agent-gone")
    token = issue_token(load_profile(profile), int(time.time()))
    assert _listed(servers.ports["dialog"], token) == (200, ALL_TOOLS)

    old, new = change
    if old == "__delete__":
        profile.unlink()
    elif old == "__other_store__":
        other = load_profile(host_profile(tmp_path / "other"))
        text = profile.read_text(encoding="utf-8")
        where = text.split("[store]", 1)[1].splitlines()[1]  # path = … or url = …
        _edit(profile, where, f'path = "{other.store}"')
    else:
        _edit(profile, old, new)

    for port in servers.ports.values():  # every server, none restarted
        assert _listed(port, token) == (401, UNAUTHORIZED)


def test_a_cut_grant_leaves_tools_list_and_its_call_is_refused(
    servers: Servers, tmp_path: Path
) -> None:
    profile = _new_profile(servers.store, tmp_path / "p", "agent-cut")
    token = issue_token(load_profile(profile), int(time.time()))
    port = servers.ports["dialog"]
    record = _record(port, token, "cherry")
    assert _listed(port, token) == (200, ALL_TOOLS)

    text = profile.read_text(encoding="utf-8")
    granted = next(line for line in text.splitlines() if line.startswith("tools = "))
    _edit(profile, granted, 'tools = ["search", "get"]')
    refused = _call(port, token, "engram_memory_forget", _forget(record, "cherry"))

    assert _listed(port, token) == (200, ["engram_memory_get", "engram_memory_search"])
    assert refused == {"error": {"code": -32602, "message": "Unknown tool"}}
    assert _still_there(port, token, record)


def test_issue_token_refuses_a_disabled_profile(servers: Servers, tmp_path: Path) -> None:
    profile = _new_profile(servers.store, tmp_path / "p", "agent-off")
    _edit(profile, "enabled = true", "enabled = false")

    issued = CliRunner().invoke(cli, ["host", "issue-token", "--host-profile", str(profile)])

    assert issued.exit_code == 1
    assert issued.stdout == ""
    assert issued.stderr == (
        "engram: this profile's memory is disabled ([memory] enabled = false): no token is"
        " issued for it\n"
    )


def test_a_token_revoked_on_one_machine_is_refused_by_a_server_sharing_only_the_store(
    servers: Servers, tmp_path: Path
) -> None:
    profile = _new_profile(servers.store, tmp_path / "p", "agent-revoked")
    token = issue_token(load_profile(profile), int(time.time()))
    for port in servers.ports.values():
        assert _listed(port, token) == (200, ALL_TOOLS)

    revoked = CliRunner().invoke(
        cli, ["host", "revoke-token", token, "--host-profile", str(profile)]
    )

    assert revoked.exit_code == 0, revoked.output
    for port in servers.ports.values():  # "elsewhere" has its own copy of the keys
        assert _listed(port, token) == (401, UNAUTHORIZED)


def test_a_legacy_session_open_when_a_grant_is_cut_loses_the_tool_at_its_next_request(
    servers: Servers, tmp_path: Path
) -> None:
    profile = _new_profile(servers.store, tmp_path / "p", "agent-legacy")
    token = issue_token(load_profile(profile), int(time.time()))
    port = servers.ports["host"]
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "attacker", "version": "1"},
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}
        ).encode(),
        {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
        },
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        session = response.headers["Mcp-Session-Id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    before = _post(port, token, listing, {"Mcp-Session-Id": session})

    text = profile.read_text(encoding="utf-8")
    granted = next(line for line in text.splitlines() if line.startswith("tools = "))
    _edit(profile, granted, 'tools = ["search"]')
    after = _post(port, token, listing, {"Mcp-Session-Id": session})

    assert before[0] == 200
    assert sorted(tool["name"] for tool in before[1]["result"]["tools"]) == ALL_TOOLS
    assert after[0] == 200
    assert [tool["name"] for tool in after[1]["result"]["tools"]] == ["engram_memory_search"]


def _open_session(port: int, token: str) -> str:
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "attacker", "version": "1"},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        json.dumps(body).encode(),
        {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
        },
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return str(response.headers["Mcp-Session-Id"])


def test_an_agent_that_opens_sessions_without_end_ends_its_own_oldest_and_no_one_elses(
    servers: Servers, tmp_path: Path
) -> None:
    port = servers.ports["host"]
    others = issue_token(load_profile(servers.store.profiles["dialog"]), int(time.time()))
    theirs = _open_session(port, others)
    profile = _new_profile(servers.store, tmp_path / "p", "agent-sessions")
    token = issue_token(load_profile(profile), int(time.time()))
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}

    opened = [_open_session(port, token) for _ in range(65)]  # one past the 64 kept

    assert _post(port, token, listing, {"Mcp-Session-Id": opened[0]})[0] == 404
    assert _post(port, token, listing, {"Mcp-Session-Id": opened[1]})[0] == 200
    assert _post(port, token, listing, {"Mcp-Session-Id": opened[-1]})[0] == 200
    assert _post(port, others, listing, {"Mcp-Session-Id": theirs})[0] == 200


def test_a_refusal_is_logged_with_its_reason_and_never_with_the_token(tmp_path: Path) -> None:
    served = host_profile(tmp_path / "served")
    store = load_profile(served)
    profile = host_profile(tmp_path / "p", principal="agent-log", store=store.store)
    now = int(time.time())
    revoked, disabled = (issue_token(load_profile(profile), now) for _ in range(2))
    with HttpServer(served) as server:
        assert _listed(server.port, revoked)[0] == 200
        assert (
            CliRunner()
            .invoke(cli, ["host", "revoke-token", revoked, "--host-profile", str(profile)])
            .exit_code
            == 0
        )
        assert _listed(server.port, revoked) == (401, UNAUTHORIZED)
        _edit(profile, "enabled = true", "enabled = false")
        assert _listed(server.port, disabled) == (401, UNAUTHORIZED)

    log = server.stderr.decode("utf-8", "replace")
    assert "refused a request: token revoked" in log
    assert "refused a request: the token's profile is disabled ([memory] enabled = false)" in log
    assert revoked not in log
    assert disabled not in log


def test_no_token_is_let_through_while_the_revocation_list_cannot_be_read(
    postgres_run: PostgresRun, tmp_path: Path
) -> None:
    url = postgres_run.new_store()
    profile = host_profile(tmp_path / "host", store=url.url)
    token = issue_token(load_profile(profile), int(time.time()))
    with HttpServer(profile) as server:
        assert _listed(server.port, token) == (200, ALL_TOOLS)
        postgres_run.drop_store(url)  # the revocation list is gone with its schema

        status, answer = _listed(server.port, token)

    assert status == 503
    assert answer == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32603, "message": "The store is unavailable; back off and retry."},
    }
    assert token not in server.stderr.decode("utf-8", "replace")
