"""What a host itself decided about engram's registration: approved, trusted, enabled.

A registration in a file is not a server the host starts. Claude Code waits for the
person to approve a project's ``.mcp.json`` server; Gemini CLI disables every MCP server
of a folder the person has not trusted, and skips one disabled or excluded by name.
These readers look at the host's own state files (never write them) and say what stands
between the registration and a running server, with the exact fix. Facts measured with
Claude Code 2.1.197 and Gemini CLI 0.61.0 (docs/hosts.md, "What the host decides").

Claude Code also keeps a *local* registration (``claude mcp add engram …`` without
``--scope``) in ``~/.claude.json`` under the project's path: :func:`claude_local_entry`.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from engram.errors import HostConfigError
from engram.hosts.command import HostEnv
from engram.hosts.files import git_state, read_text
from engram.hosts.jsonc import parse, to_python

__all__ = [
    "CLAUDE_TRUST_SINCE",
    "GEMINI_TRUST_SINCE",
    "HostFinding",
    "Version",
    "claude_approval",
    "claude_local_entry",
    "gemini_findings",
    "host_version",
]

SERVER = "engram"
Version = tuple[int, int, int]
#: The first Claude Code that starts a project's approved ``.mcp.json`` server only in a
#: folder whose trust dialog the person accepted (measured: 2.1.206 did not ask for it).
CLAUDE_TRUST_SINCE: Version = (2, 1, 207)


@dataclass(frozen=True)
class HostFinding:
    """One thing that keeps the host from starting engram's registration: what, and
    the exact fix."""

    check: str
    detail: str
    fix: str


_VERSION = re.compile(rb"(\d+)\.(\d+)\.(\d+)")


def host_version(program: str, timeout: float) -> Version | None:
    """What ``program --version`` says its version is (``2.1.332 (Claude Code)``), or
    ``None`` when it does not answer within ``timeout``."""
    try:
        done = subprocess.run(
            [program, "--version"],
            check=False,
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = _VERSION.search(done.stdout) if done.returncode == 0 else None
    return None if found is None else (int(found[1]), int(found[2]), int(found[3]))


def _json(path: Path) -> Any:
    """A host's JSON (or JSONC) state file, or ``None`` when missing or unreadable:
    the host's own file is never a reason for engram to fail."""
    try:
        text = read_text(path)
        return None if text is None else to_python(text, parse(text, jsonc=True, source=path))
    except (HostConfigError, OSError):  # a state file we cannot read tells us nothing
        return None


def _names(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def claude_local_entry(env: HostEnv) -> dict[str, Any] | None:
    """engram's *local* registration for this project in ``~/.claude.json``
    (``projects["<path>"].mcpServers.engram``), or ``None``."""
    state = _json(env.home / ".claude.json")
    projects = state.get("projects") if isinstance(state, dict) else None
    if not isinstance(projects, dict):
        return None
    for key in (str(env.workspace), str(env.workspace.resolve())):
        project = projects.get(key)
        servers = project.get("mcpServers") if isinstance(project, dict) else None
        entry = servers.get(SERVER) if isinstance(servers, dict) else None
        if isinstance(entry, dict):
            return entry
    return None


def claude_approval(
    env: HostEnv, version: Callable[[], Version | None] = lambda: None
) -> HostFinding | None:
    """Whether Claude Code starts the project's ``.mcp.json`` engram server: ``None``
    when it does, else what stands in the way (rejected, or still waiting for the
    person).

    Claude Code records the choice in ``.claude/settings.local.json`` (older versions:
    ``~/.claude.json`` under the project, which it moves there), for the team in the
    project's ``.claude/settings.json``, or for every project in
    ``~/.claude/settings.json``; a rejection wins over an approval. Only the user's own
    approval counts in a folder nobody trusted: the project's needs the folder's trust
    dialog accepted (``hasTrustDialogAccepted`` in ``~/.claude.json`` under the real
    path of the folder or a parent up to its Git root). Before :data:`CLAUDE_TRUST_SINCE`
    an untracked or ignored ``settings.local.json`` in a Git repository, and the older
    ``~/.claude.json`` place, counted without it; before 2.1.232 a trusted folder above
    the Git root counted too. ``version`` is asked only when the answer depends on it
    (``None``: unknown, taken as the newest behaviour).
    """
    local = env.workspace / ".claude" / "settings.local.json"
    user = _json(env.home / ".claude" / "settings.json")
    state = _json(env.home / ".claude.json")
    projects = state.get("projects") if isinstance(state, dict) else None
    projects = projects if isinstance(projects, dict) else {}
    legacy = _project_entry(projects, env.workspace) or {}
    local_settings = _json(local)
    shared = _json(env.workspace / ".claude" / "settings.json")
    sources = [s for s in (local_settings, shared, user, legacy) if isinstance(s, dict)]
    if any(SERVER in _names(s.get("disabledMcpjsonServers")) for s in sources):
        return HostFinding(
            "host.claude_approval",
            "Claude Code was told not to start the project's engram server (rejected:"
            " `claude mcp list` leaves it out)",
            f'remove "{SERVER}" from disabledMcpjsonServers in {local}, or run'
            " `claude mcp reset-project-choices` here and approve engram when claude asks",
        )
    if isinstance(user, dict) and _approves(user):
        return None
    project = [s for s in (local_settings, shared, legacy) if isinstance(s, dict) and _approves(s)]
    if not project:
        return HostFinding(
            "host.claude_approval",
            "Claude Code has not been told to start the project's engram server yet"
            " (`claude mcp list` shows it as pending approval)",
            f'run `claude` here, trust the folder and approve engram (or add "{SERVER}" to'
            f" enabledMcpjsonServers in {local})",
        )
    if _claude_trusted(env, projects, version):
        return None
    found = version()
    if found is not None and found < CLAUDE_TRUST_SINCE:
        untracked = local_settings in project and git_state(local) in ("untracked", "ignored")
        if legacy in project or untracked:
            return None
    since = ".".join(map(str, CLAUDE_TRUST_SINCE))
    which = (
        f"Claude Code {'.'.join(map(str, found))}"
        if found
        else f"Claude Code (version unknown: taken as {since} or later)"
    )
    return HostFinding(
        "host.claude_approval",
        f"engram is approved in the project's settings, but {which} starts it only once"
        " the folder is trusted (`claude mcp list` shows it as pending approval)",
        "run `claude` here and accept the trust dialog",
    )


#: The first Claude Code that counts no trusted folder above the project's Git root.
_CLAUDE_ROOT_TRUST_SINCE: Version = (2, 1, 232)


def _claude_trusted(
    env: HostEnv, projects: dict[str, Any], version: Callable[[], Version | None]
) -> bool:
    """Whether the person accepted Claude Code's trust dialog for the workspace: keyed
    by real paths, on the folder or a parent up to its Git root (or above it, before
    2.1.232)."""
    folder = env.workspace.resolve()
    chain = [folder, *folder.parents]
    root = next((f for f in chain if (f / ".git").exists()), folder)
    within = chain[: chain.index(root) + 1]

    def trusted(path: Path) -> bool:
        entry = projects.get(str(path))
        return isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True

    if any(trusted(path) for path in within):
        return True
    if not any(trusted(path) for path in chain[len(within) :]):
        return False
    found = version()
    return found is not None and found < _CLAUDE_ROOT_TRUST_SINCE


def _approves(settings: dict[str, Any]) -> bool:
    return settings.get("enableAllProjectMcpServers") is True or SERVER in _names(
        settings.get("enabledMcpjsonServers")
    )


def _project_entry(projects: dict[str, Any], workspace: Path) -> dict[str, Any] | None:
    for key in dict.fromkeys((str(workspace), str(workspace.resolve()))):
        project = projects.get(key)
        if isinstance(project, dict):
            return project
    return None


def gemini_findings(
    env: HostEnv, version: Callable[[], Version | None] = lambda: None
) -> list[HostFinding]:
    """What keeps Gemini CLI from starting engram here: an untrusted folder (from
    :data:`GEMINI_TRUST_SINCE` Gemini disables every MCP server in a folder it does not
    trust, the user's own included; ``version`` is asked only then), a folder-trust file
    it cannot read (every command stops), a server disabled by name, or one excluded
    (or not allowed) by the user's settings."""
    found = []
    settings = _json(env.home / ".gemini" / "settings.json")
    settings = settings if isinstance(settings, dict) else {}
    rules = _gemini_rules(env)
    trusted = _gemini_trusts(env, settings, rules)
    if trusted is None:
        found.append(
            HostFinding(
                "host.gemini_folder_trust",
                f"{_gemini_rules_path(env)} cannot be read: Gemini CLI stops at every command"
                " (exit 52)",
                f"fix or delete {_gemini_rules_path(env)}, then trust this folder in gemini",
            )
        )
    elif not trusted and not _gemini_trust_off(version):
        found.append(
            HostFinding(
                "host.gemini_folder_trust",
                f"Gemini CLI does not trust {env.workspace}, so it disables every MCP server"
                " there, engram's included",
                f'run `gemini` here and trust the folder, or add "{env.workspace}":'
                f' "TRUST_FOLDER" to {env.home / ".gemini" / "trustedFolders.json"}',
            )
        )
    enablement = _json(env.home / ".gemini" / "mcp-server-enablement.json")
    state = enablement.get(SERVER) if isinstance(enablement, dict) else None
    if isinstance(state, dict) and state.get("enabled") is False:
        found.append(
            HostFinding(
                "host.gemini_disabled",
                "Gemini CLI has the engram server disabled",
                "run `/mcp enable engram` inside gemini, or remove"
                f' "engram" from {env.home / ".gemini" / "mcp-server-enablement.json"}',
            )
        )
    found_mcp = settings.get("mcp")
    mcp: dict[str, Any] = found_mcp if isinstance(found_mcp, dict) else {}
    allowed = mcp.get("allowed")
    if SERVER in _names(mcp.get("excluded")) or (
        isinstance(allowed, list) and SERVER not in _names(allowed)
    ):
        found.append(
            HostFinding(
                "host.gemini_blocked",
                "Gemini CLI's settings block the engram server (mcp.excluded or mcp.allowed)",
                f'remove "engram" from mcp.excluded (or add it to mcp.allowed) in'
                f" {env.home / '.gemini' / 'settings.json'}",
            )
        )
    return found


#: The first Gemini CLI whose folder trust is on by default (0.27.4 had it off).
GEMINI_TRUST_SINCE: Version = (0, 28, 1)
#: What ``trustedFolders.json`` holds when it cannot be read (Gemini then stops).
_BROKEN: Final = object()


def _gemini_trust_off(version: Callable[[], Version | None]) -> bool:
    found = version()
    return found is not None and found < GEMINI_TRUST_SINCE


def _gemini_rules_path(env: HostEnv) -> Path:
    chosen = env.host_variables.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    return Path(chosen) if chosen else env.home / ".gemini" / "trustedFolders.json"


def _gemini_rules(env: HostEnv) -> dict[str, Any] | object | None:
    """The folder-trust rules; ``None`` when there is no file, :data:`_BROKEN` when
    Gemini could not read it either."""
    path = _gemini_rules_path(env)
    if not path.exists():
        return None
    rules = _json(path)
    return rules if isinstance(rules, dict) else _BROKEN


def _gemini_trusts(
    env: HostEnv, settings: dict[str, Any], rules: dict[str, Any] | object | None
) -> bool | None:
    """Gemini's folder trust (``None``: its rules cannot be read): on unless the user
    turned it off (``security.folderTrust.enabled: false`` in the user's settings, or
    ``GEMINI_CLI_TRUST_WORKSPACE``); a folder is trusted by its own rule or an
    ancestor's (``TRUST_FOLDER``), or by a ``TRUST_PARENT`` rule on one of its
    children's parents; the longest matching rule decides (the first of equal ones)."""
    variables = env.host_variables
    if variables.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return True
    if "false" in (variables.get("GEMINI_CLI_TRUST_WORKSPACE"),) or (
        variables.get("GEMINI_RESTRICTED_MODE") == "true"
    ):
        return False
    security = settings.get("security") if isinstance(settings.get("security"), dict) else {}
    folder_trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(folder_trust, dict) and folder_trust.get("enabled") is False:
        return True
    if rules is _BROKEN:
        return None
    if not isinstance(rules, dict):
        return False
    verdict, longest = False, -1
    workspace = env.workspace.resolve()
    for path, rule in rules.items():
        folder = Path(path)
        if rule == "TRUST_PARENT":
            folder = folder.parent
        if (workspace == folder or workspace.is_relative_to(folder)) and len(path) > longest:
            verdict, longest = rule in ("TRUST_FOLDER", "TRUST_PARENT"), len(path)
    return verdict
