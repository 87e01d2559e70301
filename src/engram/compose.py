"""Composition of project memory: the domain with its SQLite index and file watcher.

The one place (besides :mod:`engram.host.runtime` for governed memory) that joins
the domain to its adapters; the MCP server and the CLI both open project memory
through :func:`open_project`.
"""

from __future__ import annotations

import os
from pathlib import Path

from engram.project.catalog import Catalog
from engram.project.commit import recover_commits
from engram.project.config import semantic_off
from engram.project.layout import find_root, global_layout, index_location, update_gitignore
from engram.project.ports import Progress, no_progress
from engram.project.semantic import ProjectVectors
from engram.project.workspace import ProjectMemory

__all__ = ["open_project"]


def open_project(
    start: Path,
    watch: bool = False,
    global_dir: Path | None = None,
    semantic: bool | None = None,
    progress: Progress = no_progress,
) -> ProjectMemory:
    """Open the project memory enclosing ``start``.

    ``watch`` (for long-running servers) follows file changes with inotify where the
    system has it, so a call looks only at what changed since the last one.
    ``global_dir`` is the user's global memory folder (by default, as the process's
    environment names it). The semantic channel ranks where the ``semantic`` extra is
    installed, unless the project's ``search.semantic`` or ``ENGRAM_SEMANTIC=off`` turns
    it off (``semantic=False`` turns it off; ``None`` asks the process's environment); a
    server (``watch``) embeds in the background, a command before it ranks.
    ``progress`` is told how far a long operation is (a command's progress bar).
    Close what this returns when done with it.
    """
    from engram.store.sqlite.project_index import ProjectIndex
    from engram.store.watch import open_change_feed

    layout = find_root(start)
    shared = global_layout(global_dir)
    for root in (layout, shared):
        recover_commits(root)
    update_gitignore(layout)  # a project made by an older engram lacks newer entries
    # A command checks the whole index before trusting it; a server (watch) opens it
    # fast and rebuilds it when a read finds it damaged.
    index_path = index_location(layout)
    index = ProjectIndex(index_path, check=not watch)
    catalog = Catalog([layout, shared], index, open_change_feed if watch else None, progress)
    if semantic is None:
        semantic = not semantic_off(os.environ)
    vectors = ProjectVectors(index, background=watch, progress=progress) if semantic else None
    return ProjectMemory(layout, shared, index, catalog, vectors, index_path, progress)
