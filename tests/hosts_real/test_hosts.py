"""engram linked into the real agent hosts (Claude Code, Gemini CLI, Codex, OpenCode),
installed from npm by scripts/setup-hosts, each in a temporary home and git project.

The host itself is asked whether engram is connected, and, where it can show them (Codex's
app-server), which tools it sees: exactly the tools engram-mcp lists. Next to engram's
entry the host adds (and removes) servers of its own with its own commands; engram's
upgrade and unlink then still work and keep the host's server. A missing install is a
failure naming scripts/setup-hosts, never a skip.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.hosts_real.hosts import HOSTS, Host
from tests.hosts_real.sandbox import VENV_BIN, Sandbox

OTHER = [sys.executable, str(Path(__file__).with_name("other_server.py"))]

pytestmark = pytest.mark.e2e


@pytest.mark.timeout(180)
@pytest.mark.parametrize("host", HOSTS, ids=lambda host: host.name)
def test_the_host_runs_engram_next_to_its_own_servers_through_link_upgrade_and_unlink(
    host: Host, sandbox: Sandbox, engram_tools: list[str]
) -> None:
    # Linked from an environment without engram-mcp on PATH: the entry names the
    # installed script. Once the workspace file is committed for the team, `engram
    # upgrade` re-pins it to the portable command (a user's file keeps the path).
    sandbox.engram("link", *host.link, engram_mcp_on_path=False)
    host.trust(sandbox)
    host.add(sandbox, "other", OTHER)
    if host.removes:
        host.add(sandbox, "spare", OTHER)
        host.remove(sandbox, "spare")
    installed = [str(VENV_BIN / "engram-mcp"), *host.engram_args]
    other = host.connected("other", OTHER, ["ping"])
    assert host.servers(sandbox) == {
        "engram": host.connected("engram", installed, engram_tools),
        "other": other,
    }

    shared = "--global" not in host.link
    if shared:
        sandbox.run("git", "add", "-A", timeout=30)
        identity = ("-c", "user.name=Ada", "-c", "user.email=ada@example.com")
        sandbox.run("git", *identity, "commit", "-qm", "engram for the team", timeout=30)
    sandbox.engram("upgrade")
    upgraded = ["engram-mcp", *host.engram_args] if shared else installed
    assert host.servers(sandbox) == {
        "engram": host.connected("engram", upgraded, engram_tools),
        "other": other,
    }

    sandbox.engram("unlink", *host.link)
    assert host.servers(sandbox) == {"other": other}


def _doctor(sandbox: Sandbox) -> dict[str, Any]:
    done = subprocess.run(
        [str(VENV_BIN / "engram"), "doctor", "--json"],
        cwd=sandbox.project,
        env=sandbox.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    verdict: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == (0 if verdict["ok"] else 1), done.stderr
    return verdict


@pytest.mark.timeout(180)
@pytest.mark.parametrize("host", [h for h in HOSTS if h.gate], ids=lambda host: host.name)
def test_doctor_says_what_the_host_says_before_and_after_the_person_trusts_the_project(
    host: Host, sandbox: Sandbox
) -> None:
    """`engram init && engram link <host>` in a fresh repository: the host itself does
    not start engram (pending approval, a disabled server, a file it does not read)
    and doctor fails with the step; once the person took it, both agree it runs."""
    assert host.gate is not None
    sandbox.engram("link", host.name, engram_mcp_on_path=False)

    assert not host.starts_engram(sandbox)
    verdict = _doctor(sandbox)
    failed = [check["id"] for check in verdict["checks"] if check["status"] == "fail"]
    assert (verdict["ok"], failed) == (False, [host.gate])

    host.trust_project(sandbox)

    assert host.starts_engram(sandbox)
    verdict = _doctor(sandbox)
    assert verdict["ok"] is True
    assert [c["status"] for c in verdict["checks"] if c["id"] == host.gate] == ["pass"]
