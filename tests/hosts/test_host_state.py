"""What the hosts themselves decided, as measured with each host's own `mcp list` (Claude
Code 2.1.197 to 2.1.332, bisected at 2.1.206/2.1.207 and 2.1.231/2.1.232; Gemini CLI 0.27.4
to 0.61.0): approval of a project's server, folder trust, servers disabled by name, local
scope, and the host's own version where its behaviour differs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from engram.hosts.command import HostEnv
from engram.hosts.host_state import (
    CLAUDE_TRUST_SINCE,
    GEMINI_TRUST_SINCE,
    claude_approval,
    claude_local_entry,
    gemini_findings,
    host_version,
)
from engram.hosts.survey import survey


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_a_project_server_nobody_approved_is_pending(env: HostEnv) -> None:
    finding = claude_approval(env)

    assert finding is not None
    assert finding.check == "host.claude_approval"
    assert finding.fix == (
        'run `claude` here, trust the folder and approve engram (or add "engram" to'
        f" enabledMcpjsonServers in {env.workspace / '.claude' / 'settings.local.json'})"
    )


def test_approval_is_read_where_claude_records_it(env: HostEnv) -> None:
    local = env.workspace / ".claude" / "settings.local.json"
    trust = env.home / ".claude.json"
    _write(local, {"enabledMcpjsonServers": ["engram"]})
    # Claude Code 2.1.332: the project's approval counts once the folder is trusted.
    untrusted = claude_approval(env)
    assert untrusted is not None
    assert untrusted.fix == "run `claude` here and accept the trust dialog"
    assert untrusted.detail == (
        "engram is approved in the project's settings, but Claude Code (version unknown: taken"
        " as 2.1.207 or later) starts it only once the folder is trusted (`claude mcp list`"
        " shows it as pending approval)"
    )
    # Claude Code 2.1.206 started it without the folder's trust from an untracked
    # settings.local.json in a Git repository; 2.1.207 does not.
    (env.workspace / ".git").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=env.workspace, check=True)
    assert claude_approval(env, lambda: (2, 1, 206)) is None
    assert CLAUDE_TRUST_SINCE == (2, 1, 207)
    assert claude_approval(env, lambda: CLAUDE_TRUST_SINCE) is not None
    _write(trust, {"projects": {str(env.workspace): {"hasTrustDialogAccepted": True}}})
    assert claude_approval(env) is None

    _write(local, {"enableAllProjectMcpServers": True})
    assert claude_approval(env) is None

    local.unlink()
    project = {"hasTrustDialogAccepted": True, "enabledMcpjsonServers": ["engram"]}
    _write(trust, {"projects": {str(env.workspace): project}})
    assert claude_approval(env) is None  # an older Claude Code's place

    trust.unlink()
    _write(env.home / ".claude" / "settings.json", {"enabledMcpjsonServers": ["engram"]})
    assert claude_approval(env) is None  # the user's own settings: every project


def test_a_rejection_wins_over_an_approval(env: HostEnv) -> None:
    _write(
        env.workspace / ".claude" / "settings.local.json",
        {"enabledMcpjsonServers": ["engram"], "disabledMcpjsonServers": ["engram"]},
    )

    finding = claude_approval(env)

    assert finding is not None
    assert finding.detail == (
        "Claude Code was told not to start the project's engram server (rejected:"
        " `claude mcp list` leaves it out)"
    )
    assert "claude mcp reset-project-choices" in finding.fix


def test_claude_local_scope_is_seen_by_link_list(env: HostEnv) -> None:
    entry = {"type": "stdio", "command": "engram-mcp", "args": [], "env": {}}
    _write(
        env.home / ".claude.json",
        {"projects": {str(env.workspace): {"mcpServers": {"engram": entry}}}},
    )

    assert claude_local_entry(env) == entry
    [claude] = [s for s in survey(env) if s.target.name == "claude" and s.scope == "workspace"]
    assert (claude.state, claude.path) == ("linked", env.home / ".claude.json")
    assert claude.detail == "local scope (claude mcp add), in ~/.claude.json"
    assert claude.registration is not None
    assert claude.registration.argv == ["engram-mcp"]


def test_gemini_disables_servers_in_a_folder_it_does_not_trust(env: HostEnv) -> None:
    """The user's own servers too: `gemini mcp list` there says "User-level servers are
    also suppressed in untrusted folders"."""
    [finding] = gemini_findings(env)
    assert finding.check == "host.gemini_folder_trust"
    assert finding.fix == (
        f'run `gemini` here and trust the folder, or add "{env.workspace}": "TRUST_FOLDER"'
        f" to {env.home / '.gemini' / 'trustedFolders.json'}"
    )


def test_gemini_trust_by_rule_by_ancestor_or_turned_off(env: HostEnv) -> None:
    rules = env.home / ".gemini" / "trustedFolders.json"
    _write(rules, {str(env.workspace): "TRUST_FOLDER"})
    assert gemini_findings(env) == []
    _write(rules, {str(env.workspace.parent): "TRUST_FOLDER"})
    assert gemini_findings(env) == []
    _write(rules, {str(env.workspace / "child"): "TRUST_PARENT"})
    assert gemini_findings(env) == []
    _write(rules, {str(env.workspace.parent): "TRUST_FOLDER", str(env.workspace): "DO_NOT_TRUST"})
    assert [f.check for f in gemini_findings(env)] == ["host.gemini_folder_trust"]
    rules.unlink()
    _write(
        env.home / ".gemini" / "settings.json", {"security": {"folderTrust": {"enabled": False}}}
    )
    assert gemini_findings(env) == []


def test_gemini_servers_disabled_or_excluded_by_name(env: HostEnv) -> None:
    _write(env.home / ".gemini" / "mcp-server-enablement.json", {"engram": {"enabled": False}})
    _write(env.home / ".gemini" / "settings.json", {"mcp": {"excluded": ["engram"]}})

    _write(env.home / ".gemini" / "trustedFolders.json", {str(env.workspace): "TRUST_FOLDER"})
    checks = [finding.check for finding in gemini_findings(env)]

    assert checks == ["host.gemini_disabled", "host.gemini_blocked"]
    _write(env.home / ".gemini" / "settings.json", {"mcp": {"allowed": ["other"]}})
    assert [f.check for f in gemini_findings(env)][-1] == "host.gemini_blocked"


def test_a_state_file_engram_cannot_read_tells_nothing(env: HostEnv) -> None:
    (env.home / ".gemini").mkdir(parents=True)
    (env.home / ".gemini" / "mcp-server-enablement.json").write_text("{ not json")
    (env.home / ".claude.json").write_text("[1, 2")
    (env.home / ".gemini" / "trustedFolders.json").write_text("{ not json")

    assert [f.check for f in gemini_findings(env)] == ["host.gemini_folder_trust"]
    assert claude_local_entry(env) is None


def test_a_hosts_version_is_what_its_program_says(tmp_path: Path) -> None:
    """`claude --version` prints `2.1.332 (Claude Code)`; a program that fails, prints
    no version, or does not answer in time tells nothing."""
    program = tmp_path / "claude"
    program.write_text("#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
    program.chmod(0o755)
    assert host_version(str(program), 5.0) == (2, 1, 332)
    program.write_text("#!/bin/sh\necho 'no version here'\n")
    assert host_version(str(program), 5.0) is None
    program.write_text("#!/bin/sh\necho '1.2.3'; exit 3\n")
    assert host_version(str(program), 5.0) is None
    program.write_text("#!/bin/sh\nexec sleep 30\n")
    assert host_version(str(program), 0.2) is None
    assert host_version(str(tmp_path / "missing"), 5.0) is None


def test_claude_trust_is_keyed_by_real_paths_up_to_the_git_root(env: HostEnv) -> None:
    """From 2.1.232 a trusted parent above the repository counts no more (2.1.231 and
    older took it); the project's own shared settings approve once the folder is trusted."""
    root = env.workspace
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    _write(root / ".claude" / "settings.json", {"enabledMcpjsonServers": ["engram"]})
    above = {"projects": {str(root.parent.resolve()): {"hasTrustDialogAccepted": True}}}
    _write(env.home / ".claude.json", above)
    assert claude_approval(env, lambda: (2, 1, 231)) is None
    assert claude_approval(env, lambda: (2, 1, 232)) is not None
    assert claude_approval(env) is not None  # unknown: the newest behaviour
    _write(
        env.home / ".claude.json",
        {"projects": {str(root.resolve()): {"hasTrustDialogAccepted": True}}},
    )
    assert claude_approval(env, lambda: (2, 1, 332)) is None


def test_gemini_trust_by_variable_a_broken_rules_file_and_an_old_gemini(env: HostEnv) -> None:
    untrusted = HostEnv.from_environ(
        env.workspace, {"HOME": str(env.home), "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    )
    assert gemini_findings(untrusted) == []
    # Folder trust was off by default before 0.28.1.
    assert GEMINI_TRUST_SINCE == (0, 28, 1)
    assert gemini_findings(env, lambda: (0, 27, 4)) == []
    assert [f.check for f in gemini_findings(env, lambda: (0, 28, 1))] == [
        "host.gemini_folder_trust"
    ]
    rules = env.home / ".gemini" / "trustedFolders.json"
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text("{ broken")
    [broken] = gemini_findings(env)
    assert broken.detail == f"{rules} cannot be read: Gemini CLI stops at every command (exit 52)"
    # Of two matching rules as long as each other, the first written decides.
    folder = env.workspace.resolve()
    sibling = folder.parent / (folder.name[:-1] + "Z")  # its parent is the workspace's
    rules.write_text(json.dumps({str(sibling): "TRUST_PARENT", str(folder): "DO_NOT_TRUST"}))
    assert gemini_findings(env) == []
    rules.write_text(json.dumps({str(folder): "DO_NOT_TRUST", str(sibling): "TRUST_PARENT"}))
    assert [f.check for f in gemini_findings(env)] == ["host.gemini_folder_trust"]
