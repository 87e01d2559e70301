"""The sandbox each real-host test runs in, and the tools engram itself lists there."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from engram.testing import InProcessClient, legacy_init
from tests.hosts_real.sandbox import Sandbox, host_commands


@pytest.fixture(scope="session")
def host_clis() -> Path:
    """The folder of the host CLIs' commands (a failure naming scripts/setup-hosts when
    they are absent)."""
    return host_commands()


@pytest.fixture
def sandbox(host_clis: Path, tmp_path: Path) -> Sandbox:
    """A temporary home, and in it a git repository where ``engram init`` ran."""
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    box = Sandbox(home=home, project=project.resolve(), clis=host_clis)
    subprocess.run(["git", "init", "-q"], cwd=project, env=box.env(), check=True, timeout=30)
    box.engram("init")
    return box


@pytest.fixture
def engram_tools(sandbox: Sandbox) -> list[str]:
    """The names of the tools engram-mcp lists in the sandbox's project (tools/list)."""
    names: list[str] = []
    with InProcessClient(cwd=sandbox.project, env=sandbox.env()) as client:
        legacy_init(client)
        cursor = None
        while True:
            reply = client.request("tools/list", {"cursor": cursor} if cursor else {})
            names += [tool["name"] for tool in reply["result"]["tools"]]
            cursor = reply["result"].get("nextCursor")
            if not cursor:
                return names
