"""Antigravity: ``mcpServers.engram`` in Gemini's MCP configuration file for it.

Antigravity keeps its MCP servers in a user-level ``mcp_config.json`` under
``~/.gemini``: ``~/.gemini/antigravity/mcp_config.json`` (the editor) or
``~/.gemini/config/mcp_config.json`` (later releases). engram uses whichever exists,
else the first. There is no workspace registration (the requirement names only the
global one), no hook and no slash command engram installs.
"""

from __future__ import annotations

from engram.hosts.command import HostEnv
from engram.hosts.entries import StdioEntry
from engram.hosts.target import ConfigFile, Target

__all__ = ["TARGET", "WORKSPACE_SKIPPED"]

WORKSPACE_SKIPPED = (
    "Antigravity reads MCP servers from its user-level mcp_config.json only; "
    "run `engram link antigravity --global`"
)


def _global(env: HostEnv) -> ConfigFile:
    gemini = env.home / ".gemini"
    return ConfigFile(
        (gemini / "antigravity" / "mcp_config.json", gemini / "config" / "mcp_config.json"),
        "json",
        ("mcpServers", "engram"),
        StdioEntry(),
    )


def _detect(env: HostEnv) -> bool:
    found = env.which("antigravity") or env.which("agy")
    return bool(found) or (env.home / ".gemini" / "antigravity").is_dir()


TARGET = Target(
    name="antigravity",
    title="Antigravity",
    workspace=lambda env: WORKSPACE_SKIPPED,
    global_=_global,
    detect=_detect,
)
