"""Keeping the derived index in step with the memory files.

The first call fingerprints every file (mtime, size); a changed fingerprint means
the file is read, hashed and parsed again. With a change source (inotify in a
long-running server) later calls look only at what changed; without one every call
compares fingerprints. A file that cannot be read (a broken link, no permission, not
a regular file) or parsed is recorded with its reason and reported, never skipped in
silence; it never stops the others from loading.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from engram.errors import ProjectError
from engram.project.layout import Layout
from engram.project.memory_file import FOLDERS, Memory, parse_memory
from engram.project.ports import ChangeSource, FileState, MemoryIndex, Progress, no_progress

__all__ = ["Catalog"]


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    with os.scandir(folder) as entries:
        return list(entries)


_EXPECTED = {folder: memory_type for memory_type, folder in FOLDERS.items()}


def _look(path: Path) -> tuple[os.stat_result | None, str | None]:
    """A memory file's status, or why it cannot be read (neither: it is gone)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None, "a link to a file that does not exist" if os.path.lexists(path) else None
    except OSError as error:
        return None, error.strerror or type(error).__name__
    if not stat.S_ISREG(info.st_mode):  # a FIFO would block the read
        return None, "not a regular file"
    return info, None


def _contents(path: Path) -> tuple[bytes | None, str | None]:
    """A memory file's bytes, or why they cannot be read (neither: it is gone)."""
    try:
        return path.read_bytes(), None
    except FileNotFoundError:
        return None, None  # removed since it was looked at
    except OSError as error:
        return None, error.strerror or type(error).__name__


class Catalog:
    """The memory files of the project's layout and the global one, mirrored into an index."""

    def __init__(
        self,
        layouts: list[Layout],
        index: MemoryIndex,
        watch: Callable[[list[Path]], ChangeSource | None] | None = None,
        progress: Progress = no_progress,
    ) -> None:
        self.layouts = layouts
        self.index = index
        self.progress = progress
        self._watch = watch
        self._changes: ChangeSource | None = None
        self._folders: set[Path] = set()
        #: Bumped whenever the index changes, so callers can cache what they read from it.
        self.version = 0
        self._generation: int | None = None

    def _existing_folders(self) -> set[Path]:
        return {f for layout in self.layouts for f in layout.memory_folders() if f.is_dir()}

    def close(self) -> None:
        """Stop following file changes (the index is its owner's to close)."""
        if self._changes is not None:
            self._changes.close()
            self._changes = None
        self._folders = set()

    def forget(self) -> None:
        """The index was emptied: read every file again at the next refresh."""
        self.close()
        self.version += 1

    def refresh(self) -> None:
        """Bring the index up to date with the files."""
        self._bring_up_to_date()
        # Another process sharing the index (an agent's server, the review console, a
        # command) may have recorded a change first: this refresh then applied nothing,
        # yet what this process cached from the index is stale.
        generation = self.index.generation()
        if generation != self._generation:
            self._generation = generation
            self.version += 1

    def _bring_up_to_date(self) -> None:
        touched = self._changes.drain() if self._changes is not None else None
        folders = self._existing_folders()
        if folders != self._folders:
            # A folder appeared or vanished: watch the new set, then look at everything.
            self._folders = folders
            if self._changes is not None:
                self._changes.close()
            self._changes = self._watch(sorted(folders)) if self._watch else None
            touched = None
        if touched is None:
            self._full_scan()
            return
        if not touched:
            return  # nothing happened since the last call: the common case, one read()
        known = self.index.files()
        changed, removed = [], []
        for path in sorted(touched):
            layout = self._owner(path)
            if path.suffix != ".md" or layout is None:
                continue
            relative = layout.relative(path)
            parsed = self._read(path, relative, known.get(relative), trust_fingerprint=False)
            if parsed is None and not os.path.lexists(path):
                removed.append(relative)
            elif parsed is not None:
                changed.append(parsed)
        self._apply(changed, removed)

    def _apply(self, changed: list[tuple[FileState, Memory | None]], removed: list[str]) -> None:
        if not (changed or removed):
            return
        self.index.update(changed, removed, self.progress)
        self.version += 1
        # A file refused for a duplicate id may own that id now that the other changed.
        retry = []
        for relative in self.index.duplicate_paths():
            path = self._path(relative)
            parsed = self._read(path, relative, None, trust_fingerprint=False) if path else None
            if parsed is not None and parsed[1] is not None:
                retry.append(parsed)
        if retry:
            self.index.update(retry, [])

    def _path(self, relative: str) -> Path | None:
        for layout in self.layouts:
            if layout.prefix and relative.startswith(layout.prefix):
                return layout.base / relative.removeprefix(layout.prefix)
        workspace = next((layout for layout in self.layouts if not layout.prefix), None)
        return workspace.base / relative if workspace else None

    def _owner(self, path: Path) -> Layout | None:
        for layout in self.layouts:
            if path.parent in layout.memory_folders():
                return layout
        return None

    def _full_scan(self) -> None:
        known = self.index.files()
        files = [
            (layout, Path(entry.path))
            for layout in self.layouts
            for folder in layout.memory_folders()
            if folder.is_dir()
            for entry in _entries(folder)
            # Not only regular files: a broken link is a memory file that cannot be read.
            if entry.name.endswith(".md") and not entry.is_dir()
        ]
        seen, changed = set(), []
        for done, (layout, path) in enumerate(files):
            if done % 256 == 0:
                self.progress("reading memory files", done, len(files))
            relative = layout.relative(path)
            seen.add(relative)
            parsed = self._read(path, relative, known.get(relative), trust_fingerprint=True)
            if parsed is not None:
                changed.append(parsed)
        self.progress("reading memory files", len(files), len(files))
        self._apply(changed, sorted(set(known) - seen))

    def _read(
        self, path: Path, relative: str, known: FileState | None, trust_fingerprint: bool
    ) -> tuple[FileState, Memory | None] | None:
        """The new state of a file, or ``None`` when unchanged (or gone).

        A scan trusts (mtime, size); a path the change source reported is hashed,
        since two writes within one timestamp tick can keep both the same.
        """
        info, problem = _look(path)
        if info is None:
            return None if problem is None else self._unreadable(relative, known, problem)
        fingerprint = (info.st_mtime_ns, info.st_size)
        if trust_fingerprint and known and (known.mtime_ns, known.size) == fingerprint:
            return None
        data, problem = _contents(path)
        if data is None:
            return None if problem is None else self._unreadable(relative, known, problem)
        digest = hashlib.sha256(data).hexdigest()
        if known is not None and known.sha256 == digest and not trust_fingerprint:
            return None
        memory, problem = self._parse(path, data)
        return FileState(
            relative, info.st_mtime_ns, info.st_size, digest, memory.id if memory else None, problem
        ), memory

    @staticmethod
    def _unreadable(
        relative: str, known: FileState | None, reason: str
    ) -> tuple[FileState, Memory | None] | None:
        """A file that cannot be read: recorded once with why (an empty digest)."""
        problem = f"cannot be read ({reason})"
        if known is not None and not known.sha256 and known.problem == problem:
            return None
        return FileState(relative, 0, 0, "", None, problem), None

    def _parse(self, path: Path, data: bytes) -> tuple[Memory | None, str | None]:
        expected = _EXPECTED.get(path.parent.name)
        try:
            memory = parse_memory(data.decode("utf-8"), expected)
        except UnicodeDecodeError:
            return None, "not UTF-8 text"
        except ProjectError as error:
            return None, error.detail
        if memory.id != path.stem:
            return None, f"line {memory.id_line}: file name does not match id {memory.id}"
        return memory, None
