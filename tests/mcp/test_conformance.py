"""The official MCP conformance runner (``@modelcontextprotocol/conformance``, on Node 22,
both installed by scripts/setup-node) against ``engram-mcp --http`` (issue 15, item 6).

The runner sends no token, so a loopback gateway adds a host-issued one to each request
(``TokenGateway``); the server still judges ``Host`` and ``Origin`` as sent. The
scenarios that apply to a server offering governed tools only are run; docs/protocol.md
("Conformance") lists the others and why they do not apply.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.host.profile import load_profile
from engram.host.tokens import issue_token
from engram.testing import host_profile
from engram.testing.http import HttpServer, TokenGateway, free_port

BIN = Path(__file__).resolve().parents[1] / "clients" / "node_modules" / ".bin"
SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TokenGateway]:
    if not (BIN / "conformance").exists():
        pytest.fail("the conformance runner is missing: run scripts/setup-node")
    profile = host_profile(tmp_path_factory.mktemp("conformance") / "host")
    token = issue_token(load_profile(profile), int(time.time()))
    port = free_port()
    with (
        HttpServer(profile, env={"ENGRAM_HTTP_ALLOWED_HOSTS": f"127.0.0.1:{port}"}) as server,
        TokenGateway(server.port, token, port=port) as front,
    ):
        yield front


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_official_conformance_scenario_passes(gateway: TokenGateway, scenario: str) -> None:
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    version = subprocess.run(
        ["node", "--version"], env=environment, capture_output=True, text=True, check=True
    )
    assert version.stdout.startswith("v22."), version.stdout
    run = subprocess.run(
        ["conformance", "server", "--url", gateway.url, "--scenario", scenario],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " 0 failed" in run.stdout, run.stdout[-3000:]
    assert "Passed: 0/" not in run.stdout, run.stdout[-3000:]
