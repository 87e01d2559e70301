"""Where project memory lives: ``.agents/.engram/`` and its folders and files.

``engram init`` creates the layout, the ``.gitignore`` entries and the
``.gitattributes`` lines (how Git merges engram's own files); every other command
finds the nearest enclosing root from the current directory upwards.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from engram.durable import write_atomic
from engram.errors import NotInitialized, NotWritable

__all__ = [
    "GITATTRIBUTES",
    "GITIGNORED",
    "Layout",
    "NotInitialized",
    "find_root",
    "global_layout",
    "global_root",
    "index_location",
    "init_layout",
    "missing_gitattributes",
    "update_gitignore",
]

ENGRAM_DIR: Final = Path(".agents") / ".engram"
MEMORY_FOLDERS: Final = ("rules", "skills", "knowledge")
#: Derived or private files that Git must not track (paths inside .agents/.engram/).
GITIGNORED: Final = (
    "working/",
    "pending-approvals.json",
    "pending-approvals.json.lock",
    "index.sqlite*",
    "commit.journal*",
    "*.engram-tmp",
)
#: How Git merges engram's tracked files (paths inside .agents/.engram/): each is a set
#: of lines, so a merge keeps both sides' lines (Git's built-in union driver, which
#: travels with the repository, unlike a merge driver defined in .git/config).
GITATTRIBUTES: Final = (
    "/memory.hashes merge=union",
    "/.gitignore merge=union",
    "/.gitattributes merge=union",
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
        return self.base / "memory.hashes"

    @property
    def legacy_hashes(self) -> Path:
        """Upstream's hashes file, read until the next write replaces it."""
        return self.base / "memory.hashes.json"

    @property
    def gitattributes(self) -> Path:
        return self.base / ".gitattributes"

    @property
    def pending(self) -> Path:
        return self.base / "pending-approvals.json"

    @property
    def config(self) -> Path:
        return self.base / "config.json"

    @property
    def index(self) -> Path:
        return self.base / "index.sqlite"

    @property
    def journal(self) -> Path:
        """Where a commit of several files records its renames while it makes them."""
        return self.base / "commit.journal"

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
    raise NotInitialized(
        f"no {ENGRAM_DIR} in {current} or above: run `engram init` in the repository's root"
    )


def index_location(layout: Layout, environ: Mapping[str, str] | None = None) -> Path:
    """Where the derived index of ``layout`` lives: ``index.sqlite`` beside the memory
    files, or, when that folder (or the file) cannot be written, as in a read-only
    checkout, ``$XDG_CACHE_HOME/engram/indexes/<digest of the root>/index.sqlite``
    (``~/.cache`` by default), so search and load still work."""
    if os.access(layout.base, os.W_OK) and (
        not layout.index.exists() or os.access(layout.index, os.W_OK)
    ):
        return layout.index
    env = os.environ if environ is None else environ
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    cache = Path(env.get("XDG_CACHE_HOME") or home / ".cache")
    digest = hashlib.sha256(str(layout.base).encode()).hexdigest()[:16]
    folder = cache / "engram" / "indexes" / digest
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise NotWritable(
            f"{layout.base} is read-only and the index cannot go to {folder} either"
            f" ({os.strerror(exc.errno or 13)}): set XDG_CACHE_HOME to a writable folder"
        ) from exc
    return folder / "index.sqlite"


def _completed(path: Path, lines: Sequence[str]) -> bytes | None:
    """``path``'s bytes with the ``lines`` it lacks appended, its own lines kept byte for
    byte (a person's line need not be UTF-8), or ``None`` when it has them all."""
    existing = path.read_bytes().splitlines() if path.exists() else []
    present = {line.strip() for line in existing}
    missing = [line.encode() for line in lines if line.encode() not in present]
    return b"\n".join([*existing, *missing]) + b"\n" if missing else None


def update_gitignore(layout: Layout) -> bool:
    """Add the entries Git must ignore that ``.agents/.engram/.gitignore`` lacks (a
    project made by an older engram); whether it changed. Nothing in a read-only one."""
    gitignore = layout.base / ".gitignore"
    completed = _completed(gitignore, GITIGNORED)
    if completed is None or not os.access(layout.base, os.W_OK):
        return False
    write_atomic(gitignore, completed)
    return True


def missing_gitattributes(layout: Layout) -> bytes | None:
    """The bytes of ``.agents/.engram/.gitattributes`` with the lines it lacks added
    (existing lines kept), or ``None`` when it has them all (and for the global root,
    which is no repository)."""
    if layout.is_global:
        return None
    return _completed(layout.gitattributes, GITATTRIBUTES)


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
    if update_gitignore(layout):
        created.append(".gitignore")
    attributes = missing_gitattributes(layout)
    if attributes is not None:
        write_atomic(layout.gitattributes, attributes)
        created.append(".gitattributes")
    if not layout.hashes.exists() and not layout.legacy_hashes.exists():
        write_atomic(layout.hashes, "")  # no record yet
        created.append("memory.hashes")
    return layout, created
