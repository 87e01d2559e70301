"""The shapes of engram's MCP entry in host configurations.

Two shapes exist (upstream-facts.md, "Host registration"):

- :class:`StdioEntry`, the ``mcpServers`` shape ``{"command", "args", "env"}`` used by
  Claude Code, Gemini CLI, Antigravity, Cursor and Windsurf (the last two add
  ``"type": "stdio"``) and, as TOML, by Codex (which adds
  ``[mcp_servers.engram.tools.engram_commit] approval_mode = "approve"``);
- :class:`OpenCodeEntry`, ``{"type": "local", "command": [...], "args": [],
  "enabled": true}`` with the environment under ``environment``.

An entry shape builds engram's entry, reads the command back (for ``doctor``), and
re-pins an existing entry: it replaces what launched engram-mcp (engram's own form,
or a package runner such as ``npx -y --package … engram-mcp``; the link engine
re-pins nothing else, see :attr:`~engram.hosts.command.CommandLine.repinnable`) with
this engram's command and pin marker, and keeps engram-mcp's own options and every
other key the person may have added. One part
is never left to the person: Codex's approval table, which makes Codex ask the human
before every ``engram_commit`` (mcp-server.txt, "Approval and commit"), is set in
one place (:meth:`EntryShape.with_approval`) that every entry engram writes goes
through: built, re-pinned, or kept as the person wrote it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engram.hosts.command import PIN_VARIABLE, CommandLine, ServerCommand, read_command_line

__all__ = [
    "ALWAYS_LOAD",
    "EntryShape",
    "OpenCodeEntry",
    "StdioEntry",
    "commit_approved",
    "differing_keys",
]

ALWAYS_LOAD = "--always-load"
#: Codex's per-tool setting that makes it ask the human before every call.
_APPROVAL = ("tools", "engram_commit", "approval_mode")


class EntryShape(Protocol):
    """How one host writes and reads engram's MCP entry.

    ``commit_approval`` is true for hosts whose entry must carry the
    ``tools.engram_commit.approval_mode = "approve"`` table (Codex).
    """

    @property
    def commit_approval(self) -> bool: ...

    def build(self, command: ServerCommand, args: Sequence[str]) -> dict[str, Any]:
        """engram's entry for ``command`` with engram-mcp ``args``."""
        ...

    def argv(self, entry: Mapping[str, Any]) -> list[str]:
        """The whole command line the host runs (program first)."""
        ...

    def env(self, entry: Mapping[str, Any]) -> dict[str, str]:
        """The environment the host adds for the server."""
        ...

    def command_line(self, entry: Mapping[str, Any]) -> CommandLine | None:
        """The part of the command line a re-pin rewrites, split where engram-mcp
        starts; ``None`` when it does not name engram-mcp (a wrapper script)."""
        ...

    def repin(
        self, entry: Mapping[str, Any], command: ServerCommand, options: Sequence[str]
    ) -> dict[str, Any]:
        """``entry`` running ``command`` with engram-mcp ``options``, other keys kept."""
        ...

    def with_approval(self, entry: dict[str, Any]) -> dict[str, Any]:
        """``entry`` with the commit approval this host's entry must carry (Codex's
        table; other tool settings kept), else ``entry`` itself. Every entry engram
        writes goes through it: built, re-pinned, or kept as the person wrote it."""
        ...


def _strings(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def commit_approved(entry: Mapping[str, Any]) -> bool:
    """Whether ``entry`` makes the host ask before every ``engram_commit`` (Codex)."""
    node: Any = entry
    for key in _APPROVAL:
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
    return bool(node == "approve")


def _with_commit_approval(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with ``approval_mode = "approve"``; other tool settings kept."""
    tools = entry.get("tools")
    tools = dict(tools) if isinstance(tools, Mapping) else {}
    commit = tools.get("engram_commit")
    commit = dict(commit) if isinstance(commit, Mapping) else {}
    commit["approval_mode"] = "approve"
    tools["engram_commit"] = commit
    return {**entry, "tools": tools}


def differing_keys(
    current: Mapping[str, Any], model: Mapping[str, Any], ignore: Collection[str] = ()
) -> list[str]:
    """The keys whose values differ between ``current`` and engram's ``model`` (those
    in ``ignore`` aside): ``current``'s in its order, then those only ``model`` has."""
    keys = [*current, *(key for key in model if key not in current)]
    return [key for key in keys if key not in ignore and current.get(key) != model.get(key)]


def _environment(current: Any, command: ServerCommand) -> dict[str, Any]:
    env = dict(current) if isinstance(current, Mapping) else {}
    env.pop(PIN_VARIABLE, None)
    env.update(command.env)
    return env


@dataclass(frozen=True, slots=True)
class StdioEntry:
    """``{"command": program, "args": [...], "env": {...}}`` (JSON or TOML)."""

    stdio_type: bool = False
    commit_approval: bool = False

    def build(self, command: ServerCommand, args: Sequence[str]) -> dict[str, Any]:
        entry: dict[str, Any] = {}
        if self.stdio_type:
            entry["type"] = "stdio"
        entry["command"] = command.program
        entry["args"] = [*command.prefix, *args]
        if command.env:
            entry["env"] = command.env
        return self.with_approval(entry)

    def argv(self, entry: Mapping[str, Any]) -> list[str]:
        return [str(entry.get("command", "")), *_strings(entry.get("args"))]

    def env(self, entry: Mapping[str, Any]) -> dict[str, str]:
        env = entry.get("env")
        return {str(k): str(v) for k, v in env.items()} if isinstance(env, Mapping) else {}

    def command_line(self, entry: Mapping[str, Any]) -> CommandLine | None:
        return read_command_line(self.argv(entry))

    def repin(
        self, entry: Mapping[str, Any], command: ServerCommand, options: Sequence[str]
    ) -> dict[str, Any]:
        updated = dict(entry)
        updated["command"] = command.program
        updated["args"] = [*command.prefix, *options]
        env = _environment(entry.get("env"), command)
        if env:
            updated["env"] = env
        else:
            updated.pop("env", None)
        return self.with_approval(updated)

    def with_approval(self, entry: dict[str, Any]) -> dict[str, Any]:
        return _with_commit_approval(entry) if self.commit_approval else entry


@dataclass(frozen=True, slots=True)
class OpenCodeEntry:
    """OpenCode's ``mcp`` entry: the command is a list; ``args`` stays empty.

    engram writes the whole command line into ``command``; a re-pin rewrites only
    that list and leaves ``args`` (where a person may have put options) alone.
    """

    commit_approval: bool = False

    def build(self, command: ServerCommand, args: Sequence[str]) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "type": "local",
            "command": [*command.argv, *args],
            "args": [],
            "enabled": True,
        }
        if command.env:
            entry["environment"] = command.env
        return entry

    def argv(self, entry: Mapping[str, Any]) -> list[str]:
        return [*_strings(entry.get("command")), *_strings(entry.get("args"))]

    def env(self, entry: Mapping[str, Any]) -> dict[str, str]:
        env = entry.get("environment")
        return {str(k): str(v) for k, v in env.items()} if isinstance(env, Mapping) else {}

    def command_line(self, entry: Mapping[str, Any]) -> CommandLine | None:
        return read_command_line(_strings(entry.get("command")))

    def repin(
        self, entry: Mapping[str, Any], command: ServerCommand, options: Sequence[str]
    ) -> dict[str, Any]:
        updated = dict(entry)
        updated["command"] = [*command.argv, *options]
        env = _environment(entry.get("environment"), command)
        if env:
            updated["environment"] = env
        else:
            updated.pop("environment", None)
        return updated

    def with_approval(self, entry: dict[str, Any]) -> dict[str, Any]:
        # OpenCode has no per-tool approval setting in its entry.
        return entry
