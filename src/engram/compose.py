"""Composition of project memory: the domain with its SQLite index and file watcher.

The one place (besides :mod:`engram.host.runtime` for governed memory) that joins
the domain to its adapters; the MCP server and the CLI both open project memory
through :func:`open_project`.
"""

from __future__ import annotations

from pathlib import Path

from engram.project.catalog import Catalog
from engram.project.layout import find_root, global_layout
from engram.project.workspace import ProjectMemory

__all__ = ["open_project"]


def open_project(start: Path, watch: bool = False, global_dir: Path | None = None) -> ProjectMemory:
    """Open the project memory enclosing ``start``.

    ``watch`` (for long-running servers) follows file changes with inotify where the
    system has it, so a call looks only at what changed since the last one.
    ``global_dir`` is the user's global memory folder (by default, as the process's
    environment names it). Close what this returns when done with it.
    """
    from engram.store.sqlite.project_index import ProjectIndex
    from engram.store.watch import open_change_feed

    layout = find_root(start)
    shared = global_layout(global_dir)
    index = ProjectIndex(layout.index)
    catalog = Catalog([layout, shared], index, open_change_feed if watch else None)
    return ProjectMemory(layout, shared, index, catalog)
