"""Where project memory lives: ``.agents/.engram/`` and its folders and files.

``engram init`` creates the layout and the ``.gitignore`` entries; every other
command finds the nearest enclosing root from the current directory upwards.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from engram.errors import NotInitialized

__all__ = [
    "GITIGNORED",
    "Layout",
    "NotInitialized",
    "find_root",
    "global_layout",
    "global_root",
    "init_layout",
]

ENGRAM_DIR: Final = Path(".agents") / ".engram"
MEMORY_FOLDERS: Final = ("rules", "skills", "knowledge")
#: Derived or private files that Git must not track (paths inside .agents/.engram/).
GITIGNORED: Final = (
    "working/",
    "pending-approvals.json",
    "pending-approvals.json.lock",
    "index.sqlite*",
)


@dataclass(frozen=True)
class Layout:
    """The paths of one memory root: a project's (``<root>/.agents/.engram``) or the
    global one (``global_root()`` itself, shared by every project of the user)."""

    root: Path
    is_global: bool = False

    @property
    def base(self) -> Path:
        return self.root if self.is_global else self.root / ENGRAM_DIR

    @property
    def prefix(self) -> str:
        """How index paths of this root begin (global files are marked)."""
        return "global:" if self.is_global else ""

    def folder(self, name: str) -> Path:
        return self.base / name

    @property
    def working(self) -> Path:
        return self.base / "working"

    @property
    def hashes(self) -> Path:
        return self.base / "memory.hashes.json"

    @property
    def pending(self) -> Path:
        return self.base / "pending-approvals.json"

    @property
    def config(self) -> Path:
        return self.base / "config.json"

    @property
    def index(self) -> Path:
        return self.base / "index.sqlite"

    def memory_folders(self) -> list[Path]:
        return [self.folder(name) for name in (*MEMORY_FOLDERS, "working")]

    def relative(self, path: Path) -> str:
        return self.prefix + path.relative_to(self.base).as_posix()


def find_root(start: Path) -> Layout:
    """The nearest enclosing project memory root, or ``NotInitialized``."""
    current = start.resolve()
    for directory in (current, *current.parents):
        if (directory / ENGRAM_DIR).is_dir():
            return Layout(directory)
    raise NotInitialized(f"no {ENGRAM_DIR} in {current} or above")


def global_root(environ: Mapping[str, str] | None = None) -> Path:
    """``ENGRAM_GLOBAL_DIR``, else ``$XDG_DATA_HOME/engram``, else ~/.local/share/engram
    (in ``environ``, the process's environment by default)."""
    env = os.environ if environ is None else environ
    explicit = env.get("ENGRAM_GLOBAL_DIR")
    if explicit:
        return Path(explicit)
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    data = env.get("XDG_DATA_HOME") or str(home / ".local" / "share")
    return Path(data) / "engram"


def global_layout(root: Path | None = None) -> Layout:
    """The user's global memory root (its folders are created on first write)."""
    return Layout(global_root() if root is None else root, is_global=True)


def init_layout(root: Path) -> tuple[Layout, list[str]]:
    """Create the layout under ``root``; returns it and what was created."""
    layout = Layout(root.resolve())
    created = []
    for folder in layout.memory_folders():
        if not folder.exists():
            folder.mkdir(parents=True)
            created.append(layout.relative(folder) + "/")
    gitignore = layout.base / ".gitignore"
    existing = gitignore.read_text().splitlines() if gitignore.exists() else []
    missing = [entry for entry in GITIGNORED if entry not in existing]
    if missing:
        gitignore.write_text("\n".join([*existing, *missing]) + "\n")
        created.append(".gitignore")
    if not layout.hashes.exists():
        layout.hashes.write_text("{}\n")
        created.append("memory.hashes.json")
    return layout, created
