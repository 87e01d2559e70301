"""Claude Code: ``.mcp.json`` in a workspace; ``claude mcp add --scope user`` globally.

Claude Code keeps user-scoped MCP servers in ``~/.claude.json``, a file it rewrites
itself, so engram prints the ``claude mcp add`` command instead of editing it (and
only reads the file to tell whether the command was run). The printed command
carries the values of engram's own variables only (the pin marker): the person's
other variables may be secrets, and nothing engram prints may show them (a value among
the registration's arguments is masked, :mod:`.masking`). Only Claude Code's
configurations may carry ``--always-load`` (mcp-server.txt, "Server instructions").
Hooks: ``SessionStart`` in ``.claude/settings.json``; slash command
``.claude/commands/engram.md``; instructions in ``CLAUDE.md``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from engram.hosts.command import ENGRAM_VARIABLES, HostEnv
from engram.hosts.entries import StdioEntry
from engram.hosts.masking import shown_command
from engram.hosts.target import ConfigFile, HookSpec, PrintedCommand, SlashSpec, Target

__all__ = ["TARGET", "add_command"]

_SHAPE = StdioEntry()


def add_command(entry: Mapping[str, Any]) -> str:
    """``claude mcp add --scope user engram -- <command>`` registering ``entry``.

    Of ``entry``'s environment, only engram's own variables (the pin marker) become
    ``--env`` options; any other variable is left out, never printed. The entry's
    command line is shown masked (:func:`~engram.hosts.masking.shown_command`): an
    option engram-mcp does not know, kept from the person's registration, may hold a
    secret (``--api-key=…``).
    """
    own = {key: value for key, value in _SHAPE.env(entry).items() if key in ENGRAM_VARIABLES}
    env = [f"--env={key}={value}" for key, value in own.items()]
    words = ["claude", "mcp", "add", "--scope", "user", "engram", *env, "--"]
    return f"{shlex.join(words)} {shown_command(_SHAPE.argv(entry))}"


def _workspace(env: HostEnv) -> ConfigFile:
    return ConfigFile(
        (env.workspace / ".mcp.json",), "json", ("mcpServers", "engram"), _SHAPE, True
    )


def _global(env: HostEnv) -> PrintedCommand:
    registry = ConfigFile((env.home / ".claude.json",), "json", ("mcpServers", "engram"), _SHAPE)
    return PrintedCommand(
        add=add_command,
        remove="claude mcp remove --scope user engram",
        registry=registry,
        always_load=True,
    )


def _detect(env: HostEnv) -> bool:
    return bool(env.which("claude")) or (env.home / ".claude").is_dir()


TARGET = Target(
    name="claude",
    title="Claude Code",
    workspace=_workspace,
    global_=_global,
    detect=_detect,
    hooks=HookSpec(
        path=lambda env: env.workspace / ".claude" / "settings.json",
        format="json",
        event="SessionStart",
        style="groups",
        timeout=30,
    ),
    slash=SlashSpec(lambda env: env.workspace / ".claude" / "commands" / "engram.md", "claude"),
    instructions="CLAUDE.md",
)
