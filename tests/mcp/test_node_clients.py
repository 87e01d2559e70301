"""Independent Node clients against the real engram-mcp: the official TypeScript SDK
client (legacy era) and the MCP Inspector CLI (legacy, auto and modern eras).

Both are installed by ``scripts/setup-node`` (part of the test command) into
``tests/clients/node_modules``; a missing install is a failure, never a skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engram.project.layout import init_layout
from engram.testing import server_command

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
ELICIT_SERVER = str(Path(__file__).with_name("elicit_server.py"))

pytestmark = [pytest.mark.node, pytest.mark.e2e]


@pytest.fixture(scope="module")
def node_clients() -> Path:
    modules = CLIENTS / "node_modules"
    assert (modules / "@modelcontextprotocol" / "sdk").is_dir(), "run scripts/setup-node"
    return modules


def _ts(plan: dict[str, Any], command: list[str], cwd: Path, **env: str) -> dict[str, Any]:
    process = subprocess.run(
        ["node", str(CLIENTS / "ts_client.mjs"), json.dumps(plan), *command],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, **env},
        timeout=60,
        check=True,
    )
    result: dict[str, Any] = json.loads(process.stdout)
    return result


def test_typescript_sdk_client_lists_and_calls_tools(node_clients: Path, tmp_path: Path) -> None:
    init_layout(tmp_path)
    plan = {"calls": [{"name": "engram_status"}, {"name": "engram_no_such_tool"}]}
    outcome = _ts(plan, server_command(), tmp_path)
    assert outcome["serverVersion"]["name"] == "engram"
    assert "engram_status" in outcome["tools"]
    status, unknown = outcome["results"]
    human, copy = status["content"]
    # A project tool answers in content only: its words, then the envelope without them.
    assert "structuredContent" not in status
    assert human["text"].startswith("engram ")
    assert json.loads(copy["text"])["ok"] is True
    assert unknown == {"protocolError": -32602}


def test_typescript_sdk_client_completes_an_elicitation_round_trip(
    node_clients: Path, tmp_path: Path
) -> None:
    log = tmp_path / "written.log"
    plan = {
        "calls": [{"name": "confirm_write", "arguments": {"note": "from-ts"}}],
        "elicit": "accept",
        "content": {"approve": True},
    }
    outcome = _ts(plan, [sys.executable, ELICIT_SERVER], tmp_path, ELICIT_LOG=str(log))
    assert outcome["elicited"] == ["Write note 'from-ts'?"]
    assert outcome["results"][0]["structuredContent"] == {"outcome": "written"}
    assert log.read_text() == "from-ts\n"


def _inspector(cwd: Path, *args: str) -> dict[str, Any]:
    binary = CLIENTS / "node_modules" / ".bin" / "mcp-inspector"
    process = subprocess.run(
        [str(binary), "--cli", *server_command(), *args, "--format", "json", "-q"],
        capture_output=True,
        cwd=cwd,
        timeout=60,
        check=True,
    )
    result: dict[str, Any] = json.loads(process.stdout)["result"]
    return result


@pytest.mark.parametrize("era", ["legacy", "auto", "modern"])
def test_inspector_cli_lists_and_calls_tools_in_each_era(
    node_clients: Path, tmp_path: Path, era: str
) -> None:
    init_layout(tmp_path)
    listed = _inspector(tmp_path, "--protocol-era", era, "--method", "tools/list")
    assert "engram_status" in [tool["name"] for tool in listed["tools"]]
    called = _inspector(
        tmp_path,
        "--protocol-era",
        era,
        "--method",
        "tools/call",
        "--tool-name",
        "engram_status",
    )
    assert json.loads(called["content"][-1]["text"])["ok"] is True
    # Only a 2026-07-28 answer carries the server's identity in every result.
    assert ("_meta" in called) is (era != "legacy")
