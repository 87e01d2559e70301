"""Who proposed: what ``engram-mcp`` records with a proposal for the person who reviews
it. The client as it names itself (``clientInfo`` of a legacy ``initialize``, or of a
2026-07-28 request's envelope), the server process's session, and the agent id of the
host profile binding the server; never anything the tool's arguments say."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from engram.testing import (
    MODERN_META,
    LineClient,
    Project,
    StartServer,
    call,
    data_of,
    host_profile,
    legacy_init,
    new_project,
)

CLAUDE = {"name": "claude-code", "title": "Claude Code", "version": "2.1.3"}
LINE = "TYPE: rule | TEXT: Tag releases from main only\n"
SESSION = re.compile(r"ses_[0-9a-f]{16}")


@pytest.fixture
def project(tmp_path: Path, start_server: StartServer) -> Project:
    return new_project(tmp_path / "project", start_server)


def _proposers(project: Project) -> list[dict[str, Any]]:
    """The proposer of each stored proposal, oldest first."""
    entries = sorted(project.pending_proposals().values(), key=lambda e: e["created_ms"])
    return [entry["proposer"] for entry in entries]


def _propose(server: LineClient, **extra: Any) -> None:
    reply = call(server, "engram_save_session", {"text": LINE}, **extra)
    assert data_of(reply)["saved"] is False


def test_a_proposal_records_the_client_initialize_named_and_the_servers_session(
    project: Project,
) -> None:
    with project.start() as server:
        legacy_init(server, client_info=CLAUDE)
        _propose(server)
        _propose(server)
    with project.start() as other:
        legacy_init(other, client_info={"name": "codex-mcp-client", "version": "0.63.0"})
        _propose(other)

    first, second, third = _proposers(project)
    assert SESSION.fullmatch(first["session"])
    assert first == {
        "agent": "",
        "client": "claude-code",
        "session": first["session"],
        "title": "Claude Code",
        "version": "2.1.3",
    }
    assert second == first  # one server process, one session
    assert SESSION.fullmatch(third["session"])
    assert third == {
        "agent": "",
        "client": "codex-mcp-client",
        "session": third["session"],
        "title": "",
        "version": "0.63.0",
    }
    assert third["session"] != first["session"]


def test_a_2026_07_28_request_records_the_client_its_envelope_names(project: Project) -> None:
    meta = {
        **MODERN_META,
        "io.modelcontextprotocol/clientInfo": {"name": "gemini-cli", "version": "0.61.0"},
    }
    with project.start() as server:
        _propose(server, _meta=meta)

    [proposer] = _proposers(project)
    assert proposer == {
        "agent": "",
        "client": "gemini-cli",
        "session": proposer["session"],
        "title": "",
        "version": "0.61.0",
    }


def test_a_server_bound_by_a_host_profile_records_its_agent_id(
    project: Project, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host", principal="alice", agent_id="agent-7")
    with project.start("--host-profile", str(profile)) as server:
        legacy_init(server, client_info=CLAUDE)
        _propose(server)

    [proposer] = _proposers(project)
    assert (proposer["client"], proposer["agent"]) == ("claude-code", "agent-7")


def test_client_info_that_is_not_text_is_left_out_and_long_text_is_cut(project: Project) -> None:
    with project.start() as server:
        legacy_init(server, client_info={"name": "n" * 500, "title": None, "version": 3})
        _propose(server)

    [proposer] = _proposers(project)
    assert (proposer["client"], proposer["title"], proposer["version"]) == ("n" * 200, "", "")


def test_a_client_that_never_initialized_is_recorded_without_a_name(project: Project) -> None:
    with project.start() as server:  # a bare legacy call, as the tests' clients make
        _propose(server)

    [proposer] = _proposers(project)
    assert proposer == {
        "agent": "",
        "client": "",
        "session": proposer["session"],
        "title": "",
        "version": "",
    }


def test_a_note_waiting_for_approval_records_who_proposed_it(project: Project) -> None:
    with project.start() as server:
        legacy_init(server, client_info=CLAUDE)
        reply = call(server, "engram_note", {"text": "The login test is flaky on CI"})
        assert data_of(reply)["saved"] is False

    [proposer] = _proposers(project)
    assert (proposer["client"], proposer["title"], proposer["version"]) == (
        "claude-code",
        "Claude Code",
        "2.1.3",
    )
