"""Cursor: ``.cursor/mcp.json`` in a workspace; globally, a local plugin.

Globally engram installs itself as a Cursor plugin in
``~/.cursor/plugins/local/engram/``: the manifest ``.cursor-plugin/plugin.json`` and
the plugin's ``mcp.json`` with the ``engram`` server (mcp-server.txt: "Cursor
global: built into the local plugin"). Both files are engram's own. Entries carry
``"type": "stdio"``. Hooks: ``sessionStart`` in ``.cursor/hooks.json`` (a new file
gets ``"version": 1``); slash command ``.cursor/commands/engram.md``; instructions
in ``AGENTS.md``.
"""

from __future__ import annotations

import json
from pathlib import Path

from engram.hosts.command import HostEnv
from engram.hosts.entries import StdioEntry
from engram.hosts.guidance import GENERATED
from engram.hosts.target import ConfigFile, HookSpec, SlashSpec, Target

__all__ = ["TARGET", "plugin_folder"]

_SHAPE = StdioEntry(stdio_type=True)


def plugin_folder(env: HostEnv) -> Path:
    """Where engram's local Cursor plugin lives."""
    return env.home / ".cursor" / "plugins" / "local" / "engram"


def _manifest(env: HostEnv) -> tuple[tuple[Path, str], ...]:
    manifest = {
        "name": "engram",
        "displayName": "Engram",
        "description": f"Project memory for your agents over MCP (engram-mcp). {GENERATED}",
        "version": env.version,
    }
    path = plugin_folder(env) / ".cursor-plugin" / "plugin.json"
    return ((path, json.dumps(manifest, indent=2) + "\n"),)


def _detect(env: HostEnv) -> bool:
    found = env.which("cursor") or env.which("cursor-agent")
    return bool(found) or (env.home / ".cursor").is_dir()


TARGET = Target(
    name="cursor",
    title="Cursor",
    workspace=lambda env: ConfigFile(
        (env.workspace / ".cursor" / "mcp.json",), "json", ("mcpServers", "engram"), _SHAPE
    ),
    global_=lambda env: ConfigFile(
        (plugin_folder(env) / "mcp.json",), "json", ("mcpServers", "engram"), _SHAPE
    ),
    detect=_detect,
    hooks=HookSpec(
        path=lambda env: env.workspace / ".cursor" / "hooks.json",
        format="json",
        event="sessionStart",
        style="flat",
        timeout=30,
        skeleton={"version": 1},
    ),
    slash=SlashSpec(lambda env: env.workspace / ".cursor" / "commands" / "engram.md", "cursor"),
    instructions="AGENTS.md",
    global_files=_manifest,
)
