"""engram linked into the real agent hosts (Claude Code, Gemini CLI, Codex, OpenCode),
installed from npm by scripts/setup-hosts, each in a temporary home and git project.

The host itself is asked whether engram is connected, and, where it can show them (Codex's
app-server), which tools it sees: exactly the tools engram-mcp lists. Next to engram's
entry the host adds (and removes) servers of its own with its own commands; engram's
upgrade and unlink then still work and keep the host's server. A missing install is a
failure naming scripts/setup-hosts, never a skip.
"""

from __future__ import annotations

import sys
from pathlib import Path

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
    # installed script, which `engram upgrade` later re-pins to the bare command.
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

    sandbox.engram("upgrade")
    assert host.servers(sandbox) == {
        "engram": host.connected("engram", ["engram-mcp", *host.engram_args], engram_tools),
        "other": other,
    }

    sandbox.engram("unlink", *host.link)
    assert host.servers(sandbox) == {"other": other}
