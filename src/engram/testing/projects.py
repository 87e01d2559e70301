"""A temporary project with engram memory, and the servers and commands run in it.

A :class:`Project` is a directory where ``engram init`` ran, with its own global
memory folder (``ENGRAM_GLOBAL_DIR``) so that nothing touches the user's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.testing.clients import LineClient, StartServer, start_in_process

__all__ = ["ENGRAM", "Project", "edit_file", "new_project", "run_engram"]

#: The ``engram`` command installed next to this interpreter.
ENGRAM = Path(sys.executable).with_name("engram")


def edit_file(path: Path, text: str) -> None:
    """Write a repository file as a person edits it (not through engram)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def run_engram(
    *args: str, cwd: Path, env: Mapping[str, str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``engram`` command as a user would (``env`` added to ours)."""
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
    start_server: StartServer = start_in_process

    @property
    def env(self) -> dict[str, str]:
        """The environment of everything run here: the private global folder, no profile."""
        return {"ENGRAM_GLOBAL_DIR": str(self.global_dir), "ENGRAM_HOST_PROFILE": ""}

    @property
    def base(self) -> Path:
        return self.root / ".agents" / ".engram"

    @property
    def pending(self) -> Path:
        return self.base / "pending-approvals.json"

    def start(self, *args: str, **env: str) -> LineClient:
        """``engram-mcp`` in this project (legacy calls work without ``initialize``)."""
        return self.start_server(*args, cwd=self.root, env={**self.env, **env})

    def engram(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        """The ``engram`` command, run in this project."""
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
        """The proposals awaiting approval, by token digest."""
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


def new_project(root: Path, start_server: StartServer = start_in_process) -> Project:
    """``engram init`` in ``root`` (created), with a private global folder beside it."""
    from engram.project.layout import init_layout

    root.mkdir(parents=True, exist_ok=True)
    global_dir = root.parent / f"{root.name}-global"
    global_dir.mkdir(exist_ok=True)
    init_layout(root)
    return Project(root, global_dir, start_server)
