"""Windsurf: ``mcpServers.engram`` in ``~/.codeium/windsurf/mcp_config.json``.

Workspace MCP is skipped: Windsurf's official contract documents only a user-level
MCP configuration (mcp-server.txt). Entries carry ``"type": "stdio"``. Windsurf's
hooks cannot inject context (upstream-facts.md), so engram installs none.
"""

from __future__ import annotations

from engram.hosts.command import HostEnv
from engram.hosts.entries import StdioEntry
from engram.hosts.target import ConfigFile, Target

__all__ = ["TARGET", "WORKSPACE_SKIPPED"]

WORKSPACE_SKIPPED = (
    "Windsurf documents only a user-level MCP configuration; "
    "run `engram link windsurf --global` (~/.codeium/windsurf/mcp_config.json)"
)


def _global(env: HostEnv) -> ConfigFile:
    return ConfigFile(
        (env.home / ".codeium" / "windsurf" / "mcp_config.json",),
        "json",
        ("mcpServers", "engram"),
        StdioEntry(stdio_type=True),
    )


def _detect(env: HostEnv) -> bool:
    return bool(env.which("windsurf")) or (env.home / ".codeium" / "windsurf").is_dir()


TARGET = Target(
    name="windsurf",
    title="Windsurf",
    workspace=lambda env: WORKSPACE_SKIPPED,
    global_=_global,
    detect=_detect,
)
