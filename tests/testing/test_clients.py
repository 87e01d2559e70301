"""engram.testing's clients: what they start, what they leave behind, what they show."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest

from engram import __version__
from engram.mcp.options import parse_options
from engram.testing import (
    InProcessClient,
    StdioClient,
    serve_lines,
    server_command,
    start_in_process,
)

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def test_an_in_process_server_answers_and_ends_with_its_input(tmp_path: Path) -> None:
    with InProcessClient(cwd=tmp_path) as client:
        assert client.request("ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
        assert client.close() == 0
        assert client.close() == 0  # closing again answers the same
        assert client.running is False


def test_start_in_process_takes_each_argument_as_the_command_does(tmp_path: Path) -> None:
    client = start_in_process("--frobnicate", "--always-load", cwd=tmp_path)
    tools = client.request("tools/list")["result"]["tools"]
    assert tools[0]["_meta"] == {"anthropic/alwaysLoad": True}
    assert client.close() == 0
    assert client.stderr == "engram-mcp: ignoring unknown option --frobnicate\n"


def test_leaving_an_in_process_client_releases_its_log_handler_and_level(
    tmp_path: Path,
) -> None:
    engram = logging.getLogger("engram")
    handlers, level = list(engram.handlers), engram.level
    with InProcessClient(cwd=tmp_path, env={"ENGRAM_LOG_LEVEL": "DEBUG"}) as client:
        assert engram.getEffectiveLevel() == logging.DEBUG
        logging.getLogger("engram.mcp").debug("a debug line")
        assert client.stderr == "engram-mcp: DEBUG a debug line\n"
    assert (engram.handlers, engram.level) == (handlers, level)


def test_a_server_that_ended_by_itself_is_still_released(tmp_path: Path) -> None:
    engram = logging.getLogger("engram")
    handlers = list(engram.handlers)
    with InProcessClient(["--version"], cwd=tmp_path) as client:
        with pytest.raises(EOFError):
            client.receive()
        with pytest.raises(EOFError):  # the end stays the end
            client.receive()
    assert engram.handlers == handlers
    assert client.stderr == f"engram-mcp {__version__}\n"


@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "stdio"])
def test_serve_lines_to_a_server_that_reads_nothing_returns_what_it_said(
    tmp_path: Path, in_process: bool
) -> None:
    served = serve_lines([PING] * 2000, "--version", cwd=tmp_path, in_process=in_process)
    assert (served.stdout, served.stderr, served.status) == (
        b"",
        f"engram-mcp {__version__}\n",
        0,
    )


@pytest.mark.e2e
def test_leaving_a_stdio_client_closes_the_server_rather_than_killing_it(tmp_path: Path) -> None:
    with StdioClient(cwd=tmp_path, timeout=20) as client:
        assert client.request("ping")["result"] == {}
    assert client.process.returncode == 0


@pytest.mark.e2e
def test_version_and_help_print_even_with_stdout_closed(tmp_path: Path) -> None:
    expected = {"--version": f"engram-mcp {__version__}\n", "--help": "usage: engram-mcp "}
    for option, start in expected.items():
        # A host that starts the server with no stdout at all (``>&-``).
        done = subprocess.run(
            ["sh", "-c", 'exec "$@" >&-', "sh", *server_command(), option],
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            cwd=tmp_path,
            timeout=30,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stderr.decode().startswith(start), option


def test_a_profile_path_may_start_with_the_home_tilde(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    from_env = parse_options([], {"ENGRAM_HOST_PROFILE": "~/a/host.toml"}, cwd=tmp_path / "w")
    from_option = parse_options(["--host-profile", "~/b/host.toml"], {}, cwd=tmp_path / "w")
    relative = parse_options(["--root", "repo"], {}, cwd=tmp_path / "w")
    assert from_env.host_profile == tmp_path / "home" / "a" / "host.toml"
    assert from_option.host_profile == tmp_path / "home" / "b" / "host.toml"
    assert relative.root == tmp_path / "w" / "repo"
