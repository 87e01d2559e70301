"""Helpers for driving the real ``engram-mcp`` over a temporary project.

A :class:`Project` is a directory where ``engram init`` ran, with its own global
memory folder (``ENGRAM_GLOBAL_DIR``) so that no test touches the user's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.demo.client import MODERN_META, StdioClient
from tests.conftest import StartServer

__all__ = [
    "ELICIT_CAPS",
    "ENGRAM",
    "KEY",
    "Project",
    "call",
    "elicit_meta",
    "envelope",
    "legacy_init",
    "new_project",
    "run_engram",
]

ENGRAM = Path(sys.executable).with_name("engram")
#: An AWS-style access key id ("AKIA" + 16 upper-case letters and digits), built at
#: run time so that the test source holds no literal credential.
KEY = "AKIA" + "Q3ZT7XK2LMN4PW5R"
ELICIT_CAPS: dict[str, Any] = {"elicitation": {"form": {}}}


def run_engram(
    *args: str, cwd: Path, env: dict[str, str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run the ``engram`` CLI installed next to this interpreter."""
    return subprocess.run(
        [str(ENGRAM), *args],
        cwd=cwd,
        env={**os.environ, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@dataclass
class Project:
    """A temporary project with engram memory, and the servers started in it."""

    root: Path
    global_dir: Path
    start_server: StartServer

    @property
    def env(self) -> dict[str, str]:
        return {"ENGRAM_GLOBAL_DIR": str(self.global_dir), "ENGRAM_HOST_PROFILE": ""}

    @property
    def base(self) -> Path:
        return self.root / ".agents" / ".engram"

    @property
    def pending(self) -> Path:
        return self.base / "pending-approvals.json"

    def start(self, *args: str, **env: str) -> StdioClient:
        """``engram-mcp`` in this project (legacy calls work without ``initialize``)."""
        return self.start_server(*args, cwd=self.root, env={**self.env, **env})

    def engram(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return run_engram(*args, cwd=self.root, env=self.env, stdin=stdin)

    def files(self) -> list[str]:
        """Every memory file, workspace (``rules/x.md``) and global (``global:rules/x.md``)."""
        found = [p.relative_to(self.base).as_posix() for p in self.base.rglob("*.md")]
        found += [
            "global:" + p.relative_to(self.global_dir).as_posix()
            for p in self.global_dir.rglob("*.md")
        ]
        return sorted(found)

    def pending_proposals(self) -> dict[str, Any]:
        if not self.pending.exists():
            return {}
        proposals: dict[str, Any] = json.loads(self.pending.read_text())["proposals"]
        return proposals

    def write_memory(
        self,
        memory_id: str,
        memory_type: str = "knowledge",
        content: str = "",
        *,
        folder: str | None = None,
        title: str | None = None,
        **fields: str | list[str],
    ) -> Path:
        """Write a memory file by hand (as a developer would)."""
        folders = {"rule": "rules", "skill": "skills", "knowledge": "knowledge"}
        lines = ["---", "schema_version: 3", f"id: {memory_id}", f"type: {memory_type}"]
        for key, value in fields.items():
            shown = "[" + ", ".join(value) + "]" if isinstance(value, list) else value
            lines.append(f"{key}: {shown}")
        heading = title or memory_id.replace("-", " ").capitalize()
        body = content or f"Facts about {heading.lower()}."
        lines += ["---", "", f"# {heading}", "", "## Content", f"- {body}", ""]
        path = self.base / (folder or folders[memory_type]) / f"{memory_id}.md"
        path.write_text("\n".join(lines), encoding="utf-8")
        return path


def new_project(root: Path, start_server: StartServer) -> Project:
    """Run ``engram init`` in ``root`` (created) with a private global folder."""
    root.mkdir(parents=True, exist_ok=True)
    global_dir = root.parent / f"{root.name}-global"
    global_dir.mkdir(exist_ok=True)
    project = Project(root, global_dir, start_server)
    subprocess.run(
        [ENGRAM, "init"], cwd=root, env=_env(project), check=True, capture_output=True, timeout=60
    )
    return project


def _env(project: Project) -> dict[str, str]:
    return {**os.environ, **project.env}


def call(client: StdioClient, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """``tools/call`` and its whole response."""
    return client.request("tools/call", {"name": name, "arguments": arguments, **extra})


def envelope(reply: dict[str, Any]) -> dict[str, Any]:
    """The structured envelope of a tool result, after checking its JSON text copy."""
    result = reply["result"]
    [text] = result["content"]
    assert text["type"] == "text"
    assert json.loads(text["text"]) == result["structuredContent"]
    structured: dict[str, Any] = result["structuredContent"]
    assert result.get("isError", False) is (not structured["ok"])
    return structured


def legacy_init(
    client: StdioClient, capabilities: dict[str, Any] | None = None, version: str = "2025-11-25"
) -> None:
    """The legacy handshake: ``initialize`` (answered with ``version``), then ``initialized``."""
    reply = client.request(
        "initialize", {"protocolVersion": version, "capabilities": capabilities or {}}
    )
    assert reply["result"]["protocolVersion"] == version
    client.notify("notifications/initialized")


def elicit_meta(elicitation: bool = True) -> dict[str, Any]:
    """``_meta`` of a 2026-07-28 request, declaring form elicitation or not."""
    capabilities = ELICIT_CAPS if elicitation else {}
    return {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": capabilities}
