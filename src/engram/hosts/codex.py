"""Codex: a managed ``[mcp_servers.engram]`` block in ``~/.codex/config.toml``.

Codex reads MCP servers only from the user's ``config.toml`` (mcp-server.txt), so a
workspace link skips the registration and says so. The managed block adds
``[mcp_servers.engram.tools.engram_commit] approval_mode = "approve"`` so that Codex
asks the human before every commit. Hooks: ``SessionStart`` in
``.codex/hooks.json`` (Codex runs them only with ``[features] codex_hooks = true``);
instructions in ``AGENTS.md``. Codex has no project slash-command folder.
"""

from __future__ import annotations

from engram.hosts.command import HostEnv
from engram.hosts.entries import StdioEntry
from engram.hosts.target import ConfigFile, HookSpec, Target

__all__ = ["TARGET", "WORKSPACE_SKIPPED"]

WORKSPACE_SKIPPED = (
    "Codex reads MCP servers only from ~/.codex/config.toml; "
    "run `engram link codex --global` to register engram there"
)


def _global(env: HostEnv) -> ConfigFile:
    return ConfigFile(
        (env.home / ".codex" / "config.toml",),
        "toml",
        ("mcp_servers", "engram"),
        StdioEntry(commit_approval=True),
    )


def _detect(env: HostEnv) -> bool:
    return bool(env.which("codex")) or (env.home / ".codex").is_dir()


TARGET = Target(
    name="codex",
    title="Codex",
    workspace=lambda env: WORKSPACE_SKIPPED,
    global_=_global,
    detect=_detect,
    hooks=HookSpec(
        path=lambda env: env.workspace / ".codex" / "hooks.json",
        format="json",
        event="SessionStart",
        style="groups",
        timeout=30,
        note="Codex runs hooks only with `[features] codex_hooks = true` in ~/.codex/config.toml",
    ),
    instructions="AGENTS.md",
)
