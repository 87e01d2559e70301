"""The real ``engram-mcp`` process over stdio, as an agent host runs it: a whole session
in each protocol era, and a server killed in the middle of a stream of writes.

Everything else about the wire is tested in this process (``engram.testing``); these
check what only the installed command shows: its start, its clean stderr, its exit
status, and what survives a crash.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from engram import __version__
from engram.memory.binding import Scope
from engram.memory.journal import first_bad_cursor
from engram.store.sqlite.memory_store import SqliteMemoryStore
from engram.testing import (
    MODERN_META,
    StartServer,
    StdioClient,
    call,
    current_capture_args,
    envelope,
    host_profile,
    legacy_init,
    new_project,
    now_ms,
    tool_request,
)

pytestmark = pytest.mark.e2e

PROJECT_TOOLS = 11
#: One valid-time start for every capture, so that a replay is the same payload.
VALID_T = now_ms() - 60_000


def _project_with_a_rule(tmp_path: Path, start: StartServer) -> Any:
    project = new_project(tmp_path / "repo", start)
    project.write_memory("release-rule", "rule", "Cut releases from main with a signed tag.")
    return project


def test_a_legacy_session_initializes_lists_calls_and_exits_zero(
    tmp_path: Path, start_stdio_server: StartServer
) -> None:
    server = _project_with_a_rule(tmp_path, start_stdio_server).start()
    legacy_init(server)
    tools = server.request("tools/list")["result"]["tools"]
    assert len(tools) == PROJECT_TOOLS
    loaded = envelope(call(server, "engram_load", {"query": "how do we cut a release"}))
    assert loaded["ok"] is True
    assert loaded["data"]["selected_keys"] == ["release-rule"]
    assert server.close() == 0
    assert server.stderr == ""


def test_a_modern_session_discovers_lists_calls_and_exits_zero(
    tmp_path: Path, start_stdio_server: StartServer
) -> None:
    server = _project_with_a_rule(tmp_path, start_stdio_server).start()
    meta = {"_meta": MODERN_META}
    discovered = server.request("server/discover", meta)["result"]
    assert "2026-07-28" in discovered["supportedVersions"]
    listed = server.request("tools/list", meta)["result"]
    assert (listed["resultType"], len(listed["tools"])) == ("complete", PROJECT_TOOLS)
    loaded = envelope(call(server, "engram_load", {"query": "how do we cut a release"}, **meta))
    assert loaded["data"]["selected_keys"] == ["release-rule"]
    assert server.close() == 0
    assert server.stderr == ""


def _capture(number: int) -> dict[str, Any]:
    arguments = current_capture_args(
        text=f"Fact {number}: release step {number} is verified twice.",
        key=f"agent-a.crash.capture-{number:04d}",
        valid_time={"t": VALID_T},
    )
    return tool_request(number, "engram_memory_capture", arguments)


def test_a_server_killed_mid_stream_keeps_every_acknowledged_capture(tmp_path: Path) -> None:
    profile = host_profile(tmp_path / "host")
    sent, acknowledged = 60, 10
    with StdioClient(["--host-profile", str(profile)], cwd=tmp_path, timeout=30) as server:
        for number in range(sent):
            server.send(_capture(number))
        answers = [server.receive() for _ in range(acknowledged)]
        server.process.send_signal(signal.SIGKILL)
        assert server.process.wait(timeout=30) == -signal.SIGKILL
    first = {
        answer["id"]: envelope(answer)["output"]["value"]["candidate_id"] for answer in answers
    }

    # Whatever the kill interrupted, a new server finds every acknowledged capture
    # again under its key, and the journal is whole.
    with StdioClient(["--host-profile", str(profile)], cwd=tmp_path, timeout=30) as server:
        for number in range(sent):
            server.send(_capture(number))
        again = [envelope(server.receive())["output"]["value"] for _ in range(sent)]
        assert server.close() == 0
    assert {number: again[number]["candidate_id"] for number in first} == first
    assert {again[number]["status"] for number in first} == {"duplicate_exact"}
    assert len({value["candidate_id"] for value in again}) == sent
    store = SqliteMemoryStore(tmp_path / "host" / "memory.db")
    try:
        scope_id = Scope("tenant-a", "ws-1").scope_id
        with store.read() as reader:
            events = list(reader.journal(scope_id))
        assert first_bad_cursor(scope_id, events) is None
        assert [cursor for cursor, *_ in events] == list(range(1, sent + 1))
    finally:
        store.close()


def test_the_installed_command_prints_its_version_and_serves_nothing(tmp_path: Path) -> None:
    with StdioClient(["--version"], cwd=tmp_path, timeout=30) as server:
        with pytest.raises(EOFError):
            server.receive()
        assert server.close() == 0
    assert server.stderr == f"engram-mcp {__version__}\n"
