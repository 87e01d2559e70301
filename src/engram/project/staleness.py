"""Which memories' ground has moved: recorded files that changed, disappeared or were renamed.

A workspace memory that recorded its files (``source_files``, ``source_hashes``:
:mod:`engram.project.sources`) is *stale* when one of them is no longer as recorded:

- ``changed``: the file is there with other content;
- ``renamed``: it is gone from its path, and a file Git tracks holds exactly the
  recorded content under another path (``git mv``, or a move that was ``git add``-ed);
- ``missing``: it is gone, and Git cannot tell where (deleted, or moved and edited).

A file changed and changed back (a revert) is as recorded: its memory is not stale.
Staleness is computed, never written into a memory file: a person settles it with
``engram reconfirm`` or an ``UPDATE``. Archived and superseded memories are not
checked (no load shows them), nor are global memories and notes (they record nothing).

Checking must be cheap enough for every load. Each file's blob id is remembered beside
the index (:data:`CACHE_NAME`, under the index's own ignore pattern) with the file's
size, modification time and inode, and read again only when one of those changed, as
Git's own index does; a file modified within :data:`RACY_NS` of the check is never
remembered (a second write within the same timestamp tick could hide behind it). Git
runs only when a recorded file is missing (one ``git ls-files``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from engram.errors import EngramError
from engram.project.layout import Layout
from engram.project.memory_file import FOLDERS, Memory
from engram.project.repository import Repository, file_blob_id
from engram.project.sources import recorded_sources

__all__ = [
    "CACHE_NAME",
    "FileChange",
    "FileDiff",
    "FileStates",
    "StaleMemory",
    "StaleReport",
    "file_diffs",
    "find_stale",
    "stale_diagnostics",
    "summary_of",
]

#: The file, beside the derived index, that remembers the blob id of each cited file.
CACHE_NAME: Final = "index.sqlite-sources"
#: A file modified this recently is hashed again at every check (see the module text).
RACY_NS: Final = 2_000_000_000
_CACHE_VERSION: Final = 1


@dataclass(frozen=True)
class FileChange:
    """One recorded file that is not as recorded."""

    path: str
    #: ``changed``, ``missing`` or ``renamed``.
    state: str
    #: The blob id recorded for it (what Git may still hold of its old version).
    recorded: str
    #: Where it went (``renamed`` only).
    renamed_to: str = ""

    def data(self) -> dict[str, str]:
        data = {"path": self.path, "state": self.state, "recorded": self.recorded}
        if self.renamed_to:
            data["renamed_to"] = self.renamed_to
        return data


@dataclass(frozen=True)
class StaleMemory:
    """A memory whose recorded files moved: which, how, and since when."""

    id: str
    #: Its file, as the index names it (``rules/x.md``).
    file: str
    #: The day its files were recorded (``last_verified``, else ``updated``).
    since: str
    changes: tuple[FileChange, ...]

    def summary(self) -> str:
        """``src/x.py changed since 2026-12-01`` (every file, in recorded order)."""
        return summary_of(self.data())

    def mark(self) -> str:
        """The line a load shows under the memory's heading."""
        return (
            f"Stale: {self.summary()}, when this memory was recorded: check the file"
            " before relying on it."
        )

    def entry(self) -> dict[str, Any]:
        """What a search or route entry carries of it."""
        return {
            "summary": self.summary(),
            "since": self.since,
            "files": [change.data() for change in self.changes],
        }

    def data(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "file": self.file,
            "since": self.since,
            "files": [change.data() for change in self.changes],
        }


@dataclass(frozen=True)
class StaleReport:
    """``engram stale``: the stale memories, by id, of those that record files."""

    memories: list[StaleMemory]
    #: How many memories record files (were checked).
    checked: int

    def text(self) -> str:
        if not self.memories:
            if not self.checked:
                return "no stale memory: no memory records the files it stands on"
            return f"no stale memory: the files of {_memories(self.checked)} are as recorded"
        lines = []
        for stale in self.memories:
            lines.append(f"{stale.id} ({stale.file}), recorded {stale.since}:")
            for change in stale.changes:
                where = f" -> {change.renamed_to}" if change.renamed_to else ""
                lines.append(f"  {change.state}: {change.path}{where}")
        lines.append(
            f"{_memories(len(self.memories), 'stale memory', 'stale memories')} of"
            f" {self.checked} that record files: check each against its files, then"
            " `engram reconfirm ID` records them as they are now (or propose an UPDATE)"
        )
        return "\n".join(lines)

    def data(self) -> dict[str, Any]:
        return {
            "memories": [stale.data() for stale in self.memories],
            "checked": self.checked,
            "text": self.text(),
        }


def summary_of(data: Mapping[str, Any]) -> str:
    """:meth:`StaleMemory.summary` of its :meth:`StaleMemory.data`."""
    words = [
        f"{f['path']} renamed to {f['renamed_to']}"
        if f.get("renamed_to")
        else f"{f['path']} {f['state']}"
        for f in data["files"]
    ]
    return f"{', '.join(words)} since {data['since']}"


def stale_diagnostics(data: Mapping[str, Any]) -> list[dict[str, str]]:
    """One ``memory.stale`` warning per stale memory a read shows: a load's ``stale``, or
    the entries of a search or a route that carry ``stale``."""
    if "stale" in data:
        found = [(stale["id"], summary_of(stale)) for stale in data["stale"]]
    else:
        found = [
            (entry["id"], entry["stale"]["summary"])
            for entry in data.get("entries", [])
            if "stale" in entry
        ]
    return [
        {
            "id": "memory.stale",
            "severity": "warning",
            "message": f"{memory_id}: {summary}",
            "remediation": "check the memory against its files: propose"
            f" 'UPDATE: {memory_id}' with what is true now, or ask a person to run"
            f" `engram reconfirm {memory_id}` if it still holds",
        }
        for memory_id, summary in found
    ]


#: Lines of one file's diff shown at most (the rest is counted, for ``git diff``).
MAX_DIFF_LINES: Final = 60


@dataclass(frozen=True)
class FileDiff:
    """What became of one recorded file, for the person who reviews its memory: a note in
    words and, where Git still holds the recorded version, the unified diff from it."""

    path: str
    state: str
    note: str
    lines: tuple[str, ...] = ()


def file_diffs(stale: StaleMemory, repository: Repository) -> list[FileDiff]:
    """Each changed file of ``stale``, from the version recorded to the file now."""
    return [_file_diff(change, repository) for change in stale.changes]


def _file_diff(change: FileChange, repository: Repository) -> FileDiff:
    import difflib

    if change.state == "renamed":
        note = f"{change.path} was renamed to {change.renamed_to}; its content is as recorded"
        return FileDiff(change.path, change.state, note)
    old = repository.old_text(change.recorded)
    if old is None:
        note = (
            f"{change.path} {change.state}; Git does not hold the version recorded"
            f" ({change.recorded[:12]}: never committed or added), so there is no diff"
        )
        return FileDiff(change.path, change.state, note)
    path = repository.inside(change.path) if change.state == "changed" else None
    try:
        new = b"" if path is None else path.read_bytes()
        before, after = old.decode("utf-8"), new.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        note = f"{change.path} {change.state}; it is not UTF-8 text, so there is no diff"
        return FileDiff(change.path, change.state, note)
    newer = f"{change.path} (now)" if path is not None else "(deleted)"
    lines = list(
        difflib.unified_diff(
            before.splitlines(),
            after.splitlines(),
            f"{change.path} (recorded {change.recorded[:12]})",
            newer,
            lineterm="",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        more = len(lines) - MAX_DIFF_LINES
        lines = [
            *lines[:MAX_DIFF_LINES],
            f"… {more} more lines: git diff {change.recorded[:12]} -- {change.path}",
        ]
    note = f"{change.path} {'changed' if path is not None else 'is gone'} since it was recorded:"
    return FileDiff(change.path, change.state, note, tuple(lines))


def _memories(count: int, one: str = "memory", many: str = "memories") -> str:
    return f"{count} {one if count == 1 else many}"


@dataclass
class FileStates:
    """The blob id of each cited file as it is now, remembered by its ``stat``."""

    repository: Repository
    #: Where the remembered ids are kept (``None``: in this process only).
    cache: Path | None = None
    _known: dict[str, list[int | str]] = field(default_factory=dict)
    _loaded: bool = False
    _changed: bool = False
    #: Where each folder really is, for one check (:meth:`Repository.inside`).
    _folders: dict[str, Path | None] = field(default_factory=dict)

    def blob(self, relative: str) -> str | None:
        """The file's blob id now; ``None`` when it is no file of the repository."""
        self._load()
        known = self._known.get(relative)
        if known is not None:
            # Remembered only after the checks below passed: a file whose stat is
            # unchanged is the same file (a link turned elsewhere has another stat).
            try:
                info = os.stat(f"{self.repository.root}/{relative}")
            except OSError:
                self._forget(relative)
                return None
            if known[:3] == [info.st_size, info.st_mtime_ns, info.st_ino]:
                return str(known[3])
        path = self.repository.inside(relative, self._folders)
        if path is None:
            self._forget(relative)
            return None
        try:
            info = path.stat()
        except OSError:
            self._forget(relative)
            return None
        key: list[int | str] = [info.st_size, info.st_mtime_ns, info.st_ino]
        try:
            digest = file_blob_id(path)
        except OSError:
            self._forget(relative)
            return None
        if time.time_ns() - info.st_mtime_ns > RACY_NS:
            self._known[relative] = [*key, digest]
            self._changed = True
        else:
            self._forget(relative)
        return digest

    def checked(self) -> None:
        """One check is over: folders are looked at again by the next (one may have
        become a link since)."""
        self._folders.clear()

    def _forget(self, relative: str) -> None:
        if self._known.pop(relative, None) is not None:
            self._changed = True

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.cache is None:
            return
        try:
            data = json.loads(self.cache.read_bytes())
        except (OSError, ValueError):
            return  # none yet, or damaged: every file is read again
        if isinstance(data, dict) and data.get("version") == _CACHE_VERSION:
            files = data.get("files")
            self._known = files if isinstance(files, dict) else {}

    def save(self) -> None:
        """Keep what was learnt for the next process (nothing when nothing changed; a
        folder that cannot be written only costs the next check its reading)."""
        if self.cache is None or not self._changed:
            return
        from engram.durable import write_atomic

        text = json.dumps({"version": _CACHE_VERSION, "files": self._known}, sort_keys=True)
        try:
            write_atomic(self.cache, text)
        except (OSError, EngramError):
            return
        self._changed = False


def cache_beside(index_path: Path) -> Path:
    """Where the remembered blob ids of a project live: beside its derived index."""
    return index_path.with_name(CACHE_NAME)


def _checked(memory: Memory) -> bool:
    return (
        memory.scope == "workspace"
        and memory.tier != "working"
        and memory.lifecycle not in ("archived", "superseded")
        and bool(memory.items("source_hashes"))
    )


def find_stale(
    layout: Layout, memories: Iterable[Memory], states: FileStates
) -> tuple[list[StaleMemory], int]:
    """The stale memories among ``memories`` (by id), and how many record files."""
    checked = [memory for memory in memories if _checked(memory)]
    found: list[StaleMemory] = []
    tracked: dict[str, list[str]] | None = None
    for memory in sorted(checked, key=lambda m: m.id):
        changes = []
        for path, recorded in recorded_sources(memory):
            now = states.blob(path)
            if now == recorded:
                continue
            if now is not None:
                changes.append(FileChange(path, "changed", recorded))
                continue
            if tracked is None:
                tracked = states.repository.tracked()
            moved = [
                other
                for other in sorted(tracked.get(recorded, ()))
                if other != path and states.blob(other) == recorded
            ]
            state = "renamed" if moved else "missing"
            changes.append(FileChange(path, state, recorded, moved[0] if moved else ""))
        if changes:
            since = str(memory.get("last_verified") or memory.get("updated") or "")
            file = layout.relative(layout.folder(FOLDERS[memory.type]) / f"{memory.id}.md")
            found.append(StaleMemory(memory.id, file, since, tuple(changes)))
    states.save()
    states.checked()
    return found, len(checked)


__all__ += ["cache_beside"]
