"""Adversarial isolation over the real engram-mcp: three host profiles on one store.

tenant-a/ws-1 (alice), tenant-a/ws-2 (alice again) and tenant-b/ws-1 (bob) each run
their own ``engram-mcp --host-profile``. Every server declares form elicitation, so a
call that reached the confirmation gate would open a dialog: foreign ids must never.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engram.crypto.keyfiles import load_keyring
from engram.host.setup import keys_for_store
from engram.mcp.options import ServerOptions
from engram.mcp.project_tools import ProjectTools, project_tools
from engram.memory.binding import Scope, tool_name
from engram.memory.engine import MemoryEngine
from engram.memory.maintenance import Maintenance
from engram.memory.tools import MEMORY_TOOLS
from engram.store.sqlite.memory_store import SqliteMemoryStore
from engram.testing import (
    ELICIT_CAPS,
    MODERN_META,
    PURPOSE,
    LineClient,
    StartServer,
    current_capture_args,
    host_profile,
    legacy_init,
)
from engram.testing.isolation import (
    QUERY,
    TEXTS,
    error_code,
    probe_arguments,
    unknown_like,
    without_audit_id,
)

BINDINGS = {
    "a1": ("tenant-a", "ws-1", "alice"),
    "a2": ("tenant-a", "ws-2", "alice"),
    "b1": ("tenant-b", "ws-1", "bob"),
}
HOST_ONLY = (
    "backup",
    "restore",
    "rotate",
    "revoke",
    "confirm",
    "adjudicate",
    "sweep",
    "verify",
    "pending",
    "transition",
    "admin",
    "maintain",
)
ACCEPT = {"action": "accept", "content": {"approve": True}}
DECLINE = {"action": "decline"}


@dataclass
class Host:
    """One server, its scope, and every dialog it ever opened."""

    server: LineClient
    scope: Scope
    dialogs: list[dict[str, Any]] = field(default_factory=list)

    def reply(self, tool: str, arguments: dict[str, Any], approve: bool = False) -> dict[str, Any]:
        def answer(request: dict[str, Any]) -> dict[str, Any]:
            self.dialogs.append(request)
            return ACCEPT if approve else DECLINE

        params = {"name": tool_name(tool), "arguments": arguments}
        return self.server.request("tools/call", params, answer)

    def call(self, tool: str, arguments: dict[str, Any], approve: bool = False) -> dict[str, Any]:
        """The envelope; its JSON text copy and ``isError`` must agree with it."""
        result = self.reply(tool, arguments, approve)["result"]
        envelope: dict[str, Any] = result["structuredContent"]
        assert json.loads(result["content"][0]["text"]) == envelope
        assert result.get("isError", False) is (not envelope["ok"])
        return envelope

    def value(self, tool: str, arguments: dict[str, Any], approve: bool = False) -> Any:
        envelope = self.call(tool, arguments, approve)
        assert envelope["ok"] is True, envelope
        return envelope["output"]["value"]


@dataclass
class Shared:
    hosts: dict[str, Host]
    engine: MemoryEngine
    ids: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    own: dict[str, set[str]] = field(default_factory=dict)


def _own_texts(name: str) -> tuple[str, str]:
    return f"{name} documents releases.", f"{name} audits releases."


def _capture(host: Host, text: str, key: str) -> str:
    return str(host.value("capture", current_capture_args(text, key))["candidate_id"])


def _admit(host: Host, candidate: str, key: str) -> str:
    outcome = host.value("request_admission", probe_arguments("request_admission", candidate, key))
    assert outcome["outcome"]["status"] == "accepted", outcome
    return str(outcome["outcome"]["record_id"])


def _search(host: Host, query: str = QUERY, **extra: Any) -> dict[str, Any]:
    return host.call("search", {"query": query, "purpose_ref": PURPOSE, **extra})


def _heads(shared: Shared) -> dict[str, int]:
    with shared.engine.store.read() as reader:
        return {
            name: reader.head(host.scope.scope_id).cursor for name, host in shared.hosts.items()
        }


def _open_confirmations(shared: Shared) -> list[Any]:
    return [
        row
        for host in shared.hosts.values()
        for row in Maintenance(shared.engine, host.scope).pending().confirmations
    ]


@pytest.fixture
def hosts(start_server: StartServer, tmp_path: Path) -> Iterator[Shared]:
    store = tmp_path / "shared" / "memory.db"
    started: dict[str, Host] = {}
    for name, (tenant, workspace, principal) in BINDINGS.items():
        profile = host_profile(
            tmp_path / name,
            tenant=tenant,
            workspace=workspace,
            principal=principal,
            store=store,
            confirm_via="dialog",  # a dialog would be asked: foreign ids must never reach it
        )
        server = start_server("--host-profile", str(profile))
        legacy_init(server, ELICIT_CAPS)
        started[name] = Host(server, Scope(tenant, workspace))
    inspector = SqliteMemoryStore(store)
    yield Shared(started, MemoryEngine(inspector, load_keyring(keys_for_store(store))))
    inspector.close()


@pytest.fixture
def shared(hosts: Shared) -> Shared:
    """Alice's items in tenant-a/ws-1 by role; two records of their own in the others."""
    a1, ids, keys = hosts.hosts["a1"], hosts.ids, hosts.keys
    keys.update({role: f"alice.{role}.key.000001" for role in ("admit", "forget", "withdraw")})
    ids["accepted"] = _capture(a1, TEXTS["record"], "alice.record.capture01")
    ids["record"] = _admit(a1, ids["accepted"], keys["admit"])
    ids["second"] = _admit(
        a1, _capture(a1, TEXTS["second"], "alice.second.capt01"), "alice.second.admission1"
    )
    gone = _capture(a1, TEXTS["tombstoned"], "alice.gone.capture0001")
    ids["tombstoned"] = _admit(a1, gone, "alice.gone.admission01")
    a1.value("forget", probe_arguments("forget", ids["tombstoned"], keys["forget"]), approve=True)
    ids["pending"] = _capture(a1, TEXTS["pending"], "alice.pending.capture1")
    ids["withdrawn"] = _capture(a1, TEXTS["withdrawn"], "alice.withdrawn.capt1")
    a1.value(
        "withdraw", probe_arguments("withdraw", ids["withdrawn"], keys["withdraw"]), approve=True
    )
    assert [dialog["method"] for dialog in a1.dialogs] == ["elicitation/create"] * 2  # live
    hosts.own["a1"] = {*ids.values(), gone}
    for name in ("a2", "b1"):
        host = hosts.hosts[name]
        hosts.own[name] = set()
        for n, text in enumerate(_own_texts(name)):
            candidate = _capture(host, text, f"{name}.own.capture.{n:04}")
            hosts.own[name] |= {candidate, _admit(host, candidate, f"{name}.own.admission.{n:04}")}
    return hosts


# --- get, request_admission, withdraw, forget with another scope's ids -------------

PROBES = [
    ("get", "record", None),
    ("get", "second", None),
    ("get", "tombstoned", None),
    ("forget", "record", None),
    ("forget", "tombstoned", "forget"),  # alice's exact forget, key included
    ("request_admission", "pending", None),
    ("request_admission", "accepted", "admit"),  # alice's exact admission request
    ("request_admission", "withdrawn", None),
    ("withdraw", "pending", None),
    ("withdraw", "accepted", None),
    ("withdraw", "withdrawn", "withdraw"),  # alice's exact withdrawal
]


@pytest.mark.parametrize("prober", ["a2", "b1"])
def test_foreign_ids_over_the_wire_are_the_not_found_of_ids_that_never_existed(
    shared: Shared, prober: str
) -> None:
    host, heads = shared.hosts[prober], _heads(shared)
    for tool, role, owner_key in PROBES:
        target = shared.ids[role]
        arguments = probe_arguments(
            tool, target, shared.keys[owner_key] if owner_key else "probe.key.00000001"
        )
        unknown = {
            **arguments,
            next(k for k in arguments if k.endswith("_id")): unknown_like(target),
        }
        foreign, baseline = host.call(tool, arguments), host.call(tool, unknown)
        assert error_code(foreign) == "NOT_FOUND", (tool, role, foreign)
        assert without_audit_id(foreign) == without_audit_id(baseline), (tool, role)
    assert host.dialogs == []
    assert _open_confirmations(shared) == []
    assert _heads(shared) == heads
    # Alice still has everything the probes named.
    got = shared.hosts["a1"].value("get", probe_arguments("get", shared.ids["record"]))
    assert got["record"]["record_id"] == shared.ids["record"]


def _modern(host: Host, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    meta = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    params = {"name": tool_name(tool), "arguments": arguments, "_meta": meta}
    result: dict[str, Any] = host.server.request("tools/call", params)["result"]
    return result


def test_foreign_withdraw_and_forget_finish_as_not_found_where_a_dialog_would_be_asked(
    shared: Shared,
) -> None:
    heads = _heads(shared)
    # Control: alice's own forget reaches the gate and asks for a dialog.
    own = _modern(shared.hosts["a1"], "forget", probe_arguments("forget", shared.ids["second"]))
    assert own["resultType"] == "input_required"
    for prober in ("a2", "b1"):
        host = shared.hosts[prober]
        for tool, role in (("forget", "record"), ("withdraw", "pending")):
            result = _modern(host, tool, probe_arguments(tool, shared.ids[role]))
            assert result["resultType"] == "complete"
            assert result["structuredContent"]["error"]["code"] == "NOT_FOUND"
    assert _open_confirmations(shared) == []
    assert _heads(shared) == heads


# --- search --------------------------------------------------------------------------


def _leaks(reply: dict[str, Any], foreign: set[str]) -> list[str]:
    text = json.dumps(reply, sort_keys=True, ensure_ascii=False)
    value = reply["result"]["structuredContent"].get("output", {}).get("value", {})
    for part in value.get("next_page_cursor", "").split("."):
        text += base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("utf-8", "replace")
    return sorted(item for item in foreign if item in text)


@pytest.mark.parametrize("prober", ["a2", "b1"])
def test_search_over_the_wire_never_returns_another_scopes_records_or_ids(
    shared: Shared, prober: str
) -> None:
    host = shared.hosts[prober]
    foreign = {
        *(item for name, items in shared.own.items() if name != prober for item in items),
        *TEXTS.values(),
        *(text for name in shared.own if name not in ("a1", prober) for text in _own_texts(name)),
        *(other.scope.scope_id for name, other in shared.hosts.items() if name != prober),
    }
    for query in (*TEXTS.values(), QUERY):
        arguments = {"query": query, "purpose_ref": PURPOSE, "limit": 1}
        reply = host.reply("search", arguments)
        records = reply["result"]["structuredContent"]["output"]["value"]["records"]
        assert [packet["record"]["record_id"] in shared.own[prober] for packet in records] == [True]
        assert _leaks(reply, foreign) == []


def test_a_page_cursor_from_another_servers_scope_is_stale_page(hosts: Shared) -> None:
    # The same writes everywhere: a1 and a2 (both alice) differ only in their scope.
    for host in hosts.hosts.values():
        for n in range(3):
            _admit(
                host,
                _capture(host, f"Mirrored releases {n}.", f"mirror.capture.{n:04}"),
                f"mirror.admit.{n:04}",
            )
    cursors = {
        name: _search(host, limit=1)["output"]["value"]["next_page_cursor"]
        for name, host in hosts.hosts.items()
    }
    for name, host in hosts.hosts.items():
        assert error_code(_search(host, limit=1, page_cursor=cursors[name])) == "ok"
        for other, cursor in cursors.items():
            if other != name:
                assert error_code(_search(host, limit=1, page_cursor=cursor)) == "STALE_PAGE"


# --- what the servers expose -----------------------------------------------------------


def test_each_server_lists_only_the_project_tools_and_its_granted_memory_tools(
    hosts: Shared,
) -> None:
    options = ServerOptions()
    project = [tool.name for tool in project_tools(ProjectTools(options), options)]
    for host in hosts.hosts.values():
        names = [tool["name"] for tool in host.server.request("tools/list")["result"]["tools"]]
        assert names == [*project, *(tool_name(short) for short in MEMORY_TOOLS)]
        # engram_verify is the project's hash check, not the host's journal verification.
        governed = [name for name in names if name != "engram_verify"]
        assert [name for name in governed if any(word in name for word in HOST_ONLY)] == []


@pytest.mark.parametrize("word", HOST_ONLY)
def test_no_host_only_operation_is_a_tool(hosts: Shared, word: str) -> None:
    for host in hosts.hosts.values():
        spellings = [f"engram_memory_{word}", f"engram_host_{word}", f"engram_{word}", word]
        # engram_verify is the project's hash check (a read-only project tool).
        for name in [name for name in spellings if name != "engram_verify"]:
            reply = host.server.request("tools/call", {"name": name, "arguments": {}})
            assert reply["error"] == {"code": -32602, "message": "Unknown tool"}, name
