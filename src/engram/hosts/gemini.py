"""Gemini CLI: ``mcpServers.engram`` in ``.gemini/settings.json`` (workspace) or
``~/.gemini/settings.json`` (global).

Gemini CLI reads its settings as JSON with comments, so they are edited as JSONC
and every comment survives. engram never writes ``trust: true`` (it would skip the
confirmation ``engram_commit`` needs; ``doctor`` warns when someone sets it).
Hooks: ``SessionStart`` in the same settings file (timeouts in milliseconds); slash
command ``.gemini/commands/engram.toml``; instructions in ``GEMINI.md``.
"""

from __future__ import annotations

from pathlib import Path

from engram.hosts.command import HostEnv
from engram.hosts.entries import StdioEntry
from engram.hosts.target import ConfigFile, HookSpec, SlashSpec, Target

__all__ = ["TARGET", "settings_file"]


def settings_file(folder: Path) -> ConfigFile:
    """Gemini's settings in ``folder`` (``.gemini`` of a workspace, or of the home)."""
    return ConfigFile((folder / "settings.json",), "jsonc", ("mcpServers", "engram"), StdioEntry())


def _detect(env: HostEnv) -> bool:
    return bool(env.which("gemini")) or (env.home / ".gemini" / "settings.json").exists()


TARGET = Target(
    name="gemini",
    title="Gemini CLI",
    workspace=lambda env: settings_file(env.workspace / ".gemini"),
    global_=lambda env: settings_file(env.home / ".gemini"),
    detect=_detect,
    hooks=HookSpec(
        path=lambda env: env.workspace / ".gemini" / "settings.json",
        format="jsonc",
        event="SessionStart",
        style="groups",
        timeout=30_000,
        named=True,
    ),
    slash=SlashSpec(lambda env: env.workspace / ".gemini" / "commands" / "engram.toml", "gemini"),
    instructions="GEMINI.md",
)
