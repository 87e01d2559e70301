"""OpenCode: the ``mcp`` field of ``opencode.json`` / ``opencode.jsonc``.

In a workspace engram uses ``opencode.json`` or, when only that exists,
``opencode.jsonc``; globally ``$XDG_CONFIG_HOME/opencode/opencode.jsonc`` or
``opencode.json``. Both are read as JSONC (OpenCode accepts comments in either).
The entry is OpenCode's own shape (``type: "local"``, the command as a list).
OpenCode has no session hook engram installs (upstream uses a JS plugin); slash
command ``.opencode/commands/engram.md``; instructions in ``AGENTS.md``.
"""

from __future__ import annotations

from pathlib import Path

from engram.hosts.command import HostEnv
from engram.hosts.entries import OpenCodeEntry
from engram.hosts.target import ConfigFile, SlashSpec, Target

__all__ = ["TARGET"]


def _config(*candidates: Path) -> ConfigFile:
    return ConfigFile(candidates, "jsonc", ("mcp", "engram"), OpenCodeEntry())


def _detect(env: HostEnv) -> bool:
    return bool(env.which("opencode")) or (env.config_home / "opencode").is_dir()


TARGET = Target(
    name="opencode",
    title="OpenCode",
    workspace=lambda env: _config(
        env.workspace / "opencode.json", env.workspace / "opencode.jsonc"
    ),
    global_=lambda env: _config(
        env.config_home / "opencode" / "opencode.jsonc",
        env.config_home / "opencode" / "opencode.json",
    ),
    detect=_detect,
    slash=SlashSpec(lambda env: env.workspace / ".opencode" / "commands" / "engram.md", "opencode"),
    instructions="AGENTS.md",
)
