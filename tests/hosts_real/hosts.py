"""The four agent hosts, each driven through its own command-line program.

A :class:`Host` says how engram links into it, how a user who answered its trust and
approval dialogs left its files, how it adds and removes a server, and what it reports
about the servers it has: one exact line (or block) per server, as it prints them. Only
``mcp list``, ``mcp add``, ``mcp remove`` and Codex's app-server status are used: no
model is asked anything. Facts: docs/hosts.md, "Real hosts in the test suite".
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from tests.hosts_real.sandbox import Sandbox

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Host(ABC):
    """One agent host. ``servers`` maps each server's name to what the host says of it."""

    #: engram's target, and the pytest id.
    name: ClassVar[str]
    #: ``engram link``'s arguments: the scope the host's own ``mcp add`` writes to, so
    #: that both entries share one file.
    link: ClassVar[tuple[str, ...]]
    #: The arguments ``engram link`` gives ``engram-mcp`` in this host.
    engram_args: ClassVar[tuple[str, ...]] = ()
    #: The longest any one of its commands may take, in seconds.
    timeout: ClassVar[float] = 30
    #: Whether its CLI removes a server (OpenCode's has no ``mcp remove``).
    removes: ClassVar[bool] = True

    #: The check of ``engram doctor`` that fails while the host does not start a
    #: workspace registration of engram (``None``: the host asks nothing first).
    gate: ClassVar[str | None] = None

    @abstractmethod
    def trust(self, box: Sandbox) -> None:
        """Leave the files a user leaves by trusting the project and approving the
        servers ``engram`` and ``other`` in the host's dialogs."""

    def trust_project(self, box: Sandbox) -> None:
        """What the user does before the host starts engram's *workspace* entry."""
        self.trust(box)

    @abstractmethod
    def add(self, box: Sandbox, name: str, command: Sequence[str]) -> None:
        """Add a stdio server with the host's own ``mcp add``."""

    def remove(self, box: Sandbox, name: str) -> None:
        """Remove a server with the host's own ``mcp remove``."""
        self.cli(box, "mcp", "remove", name)

    @abstractmethod
    def servers(self, box: Sandbox) -> dict[str, str]:
        """Each server the host has in the project, with what it says of it."""

    @abstractmethod
    def connected(self, name: str, command: Sequence[str], tools: Sequence[str]) -> str:
        """What the host says of a server it started, running ``command``, that listed
        ``tools`` (which only Codex shows)."""

    def starts_engram(self, box: Sandbox) -> bool:
        """Whether the host's own ``mcp list`` says it starts engram here."""
        return self.servers(box).get("engram", "").endswith("Connected")

    def cli(self, box: Sandbox, *args: str) -> str:
        """Run the host's own program in the project; its stdout and stderr, as printed
        (Gemini CLI prints everything on stderr)."""
        done = box.run(str(box.clis / self.name), *args, timeout=self.timeout)
        return _ANSI.sub("", done.stdout + done.stderr)


class ClaudeCode(Host):
    """``.mcp.json`` in the project; ``claude mcp list`` shows no tool counts."""

    name = "claude"
    link = ("claude",)
    engram_args = ("--always-load",)
    gate = "host.claude_approval"

    def trust(self, box: Sandbox) -> None:
        # Claude Code 2.1.332 reads the approval of project servers from an untracked
        # .claude/settings.local.json only once the workspace trust dialog was accepted.
        box.write_json(
            box.home / ".claude.json",
            {"projects": {str(box.project): {"hasTrustDialogAccepted": True}}},
        )
        box.write_json(
            box.project / ".claude" / "settings.local.json",
            {"enabledMcpjsonServers": ["engram", "other"]},
        )

    def add(self, box: Sandbox, name: str, command: Sequence[str]) -> None:
        self.cli(box, "mcp", "add", "--scope", "project", name, "--", *command)

    def remove(self, box: Sandbox, name: str) -> None:
        self.cli(box, "mcp", "remove", "--scope", "project", name)

    def servers(self, box: Sandbox) -> dict[str, str]:
        lines = self.cli(box, "mcp", "list").splitlines()
        return {m[1]: m[0] for line in lines if (m := re.match(r"([\w.-]+): .+ - .+", line))}

    def connected(self, name: str, command: Sequence[str], tools: Sequence[str]) -> str:
        return f"{name}: {' '.join(command)} - ✔ Connected"


class GeminiCli(Host):
    """``.gemini/settings.json`` in a trusted project; ``gemini mcp list`` (on stderr)
    shows no tool counts."""

    name = "gemini"
    link = ("gemini",)
    gate = "host.gemini_folder_trust"

    def trust(self, box: Sandbox) -> None:
        # Folder trust is on by default; in an untrusted folder `gemini mcp add` would
        # write its server over the whole settings file, engram's entry included.
        trusted = {str(box.project): "TRUST_FOLDER"}
        box.write_json(box.home / ".gemini" / "trustedFolders.json", trusted)

    def add(self, box: Sandbox, name: str, command: Sequence[str]) -> None:
        self.cli(box, "mcp", "add", name, *command)

    def servers(self, box: Sandbox) -> dict[str, str]:
        lines = self.cli(box, "mcp", "list").splitlines()
        return {m[1]: m[0] for line in lines if (m := re.match(r"\S+ ([\w.-]+): .+", line))}

    def connected(self, name: str, command: Sequence[str], tools: Sequence[str]) -> str:
        program, *args = command
        return f"✓ {name}: {program} {' '.join(args)} (stdio) - Connected"


class Codex(Host):
    """``~/.codex/config.toml``, the only file ``codex mcp add`` writes. ``codex mcp list``
    starts no server, so whether one is connected, and its tools, come from the
    app-server's ``mcpServerStatus/list``, which starts each one."""

    name = "codex"
    link = ("codex", "--global")
    gate = "host.codex_trust"

    def trust(self, box: Sandbox) -> None:
        """Nothing: servers in the user's own config.toml need no project trust (the
        workspace's .codex/config.toml would)."""

    def trust_project(self, box: Sandbox) -> None:
        """Answering "Trust this folder?" with yes: Codex reads the project's
        .codex/config.toml from then on."""
        config = box.home / ".codex" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        with config.open("a") as file:
            file.write(f'\n[projects."{box.project}"]\ntrust_level = "trusted"\n')

    def add(self, box: Sandbox, name: str, command: Sequence[str]) -> None:
        self.cli(box, "mcp", "add", name, "--", *command)

    def servers(self, box: Sandbox) -> dict[str, str]:
        configured = self._listed(box)
        status = {server["name"]: server for server in self._status(box)}
        seen = {}
        for entry in configured:
            transport = entry["transport"]
            command = " ".join([transport["command"], *transport["args"]])
            found = status[entry["name"]]
            tools = f"{len(found['tools'])} tools: {', '.join(sorted(found['tools']))}"
            seen[entry["name"]] = f"{entry['name']}: {command} - {found['toolsError'] or tools}"
        return seen

    def connected(self, name: str, command: Sequence[str], tools: Sequence[str]) -> str:
        return f"{name}: {' '.join(command)} - {len(tools)} tools: {', '.join(sorted(tools))}"

    def starts_engram(self, box: Sandbox) -> bool:
        """``codex mcp list --json`` has engram, enabled (it starts nothing itself, and
        the app-server's ``mcpServerStatus/list`` shows the user's servers only)."""
        return any(entry["name"] == "engram" and entry["enabled"] for entry in self._listed(box))

    def _listed(self, box: Sandbox) -> list[dict[str, Any]]:
        # stdout alone: Codex warns on stderr when its home is under /tmp.
        listed = box.run(str(box.clis / "codex"), "mcp", "list", "--json", timeout=self.timeout)
        configured: list[dict[str, Any]] = json.loads(listed.stdout)
        return configured

    def _status(self, box: Sandbox) -> list[dict[str, Any]]:
        """``mcpServerStatus/list`` over ``codex app-server``'s stdio (JSON lines)."""
        client = {"clientInfo": {"name": "engram-tests", "version": "0"}}
        requests = [
            {"id": 0, "method": "initialize", "params": client},
            {"method": "initialized"},
            {"id": 1, "method": "mcpServerStatus/list", "params": {"detail": "toolsAndAuthOnly"}},
        ]
        with subprocess.Popen(
            [str(box.clis / "codex"), "app-server"],
            cwd=box.project,
            env=box.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        ) as server:
            assert server.stdin is not None
            assert server.stdout is not None
            # The app-server runs until its input ends, and ending it cancels the
            # request in flight: the reply is awaited first, bounded by a kill.
            deadline = threading.Timer(self.timeout, server.kill)
            deadline.start()
            try:
                server.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
                server.stdin.flush()
                for line in server.stdout:
                    message = json.loads(line)
                    if message.get("id") == 1:
                        break
                else:
                    raise AssertionError(f"codex app-server gave no status within {self.timeout} s")
            finally:
                deadline.cancel()
                server.stdin.close()
        assert "result" in message, message
        assert message["result"]["nextCursor"] is None, "one page holds every server"
        servers: list[dict[str, Any]] = message["result"]["data"]
        return servers


class OpenCode(Host):
    """``$XDG_CONFIG_HOME/opencode/opencode.jsonc``, where ``opencode mcp add`` writes
    when it asks nothing; ``opencode mcp list`` shows no tool counts and there is no
    ``opencode mcp remove``."""

    name = "opencode"
    link = ("opencode", "--global")
    timeout = 45
    removes = False

    def trust(self, box: Sandbox) -> None:
        """Nothing: OpenCode asks neither to trust a folder nor to approve a server."""

    def add(self, box: Sandbox, name: str, command: Sequence[str]) -> None:
        self.cli(box, "mcp", "add", name, "--", *command)

    def servers(self, box: Sandbox) -> dict[str, str]:
        # One block per server: "●  ✓ name connected", then a "│      " line for its
        # error, if any, and one for its command.
        blocks: dict[str, str] = {}
        name = None
        for line in self.cli(box, "mcp", "list").splitlines():
            if line.startswith("●"):
                name = line.split()[2]
                blocks[name] = line.rstrip()
            elif name and line.startswith("│ ") and line[1:].strip():
                blocks[name] += "\n" + line.rstrip()
            else:
                name = None
        return blocks

    def connected(self, name: str, command: Sequence[str], tools: Sequence[str]) -> str:
        return f"●  ✓ {name} connected\n│      {' '.join(command)}"


HOSTS: list[Host] = [ClaudeCode(), GeminiCli(), Codex(), OpenCode()]
