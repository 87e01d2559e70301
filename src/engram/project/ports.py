"""What project memory needs from its derived index and from the file system watcher."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from engram.project.memory_file import Memory

__all__ = ["ChangeSource", "FileState", "MemoryIndex", "Progress", "no_progress"]


@dataclass(frozen=True)
class FileState:
    """What the index knows of one file (paths relative to ``.agents/.engram``)."""

    path: str
    mtime_ns: int
    size: int
    sha256: str
    memory_id: str | None
    problem: str | None


class Progress(Protocol):
    """Told how far a long operation is (``task`` names it; ``done`` of ``total``)."""

    def __call__(self, task: str, done: int, total: int) -> None: ...


def no_progress(task: str, done: int, total: int) -> None:
    """The progress of a caller that shows none."""


class MemoryIndex(Protocol):
    """The derived, rebuildable index of the memory files."""

    #: Whether a call met a damaged index (raising ``IndexDamaged``): :meth:`reset` it.
    damaged: bool
    #: Whether opening found the index damaged and started it again from nothing.
    rebuilt: bool

    def reset(self) -> None: ...

    def files(self) -> dict[str, FileState]: ...

    def update(
        self,
        changed: Sequence[tuple[FileState, Memory | None]],
        removed: Iterable[str],
        progress: Progress = no_progress,
    ) -> None: ...

    def memories(self) -> list[Memory]: ...

    def memory(self, memory_id: str) -> Memory | None: ...

    def problems(self) -> list[tuple[str, str]]: ...

    def duplicate_paths(self) -> list[str]: ...

    def search(self, text: str, limit: int) -> list[tuple[str, float, list[str]]]: ...

    def vector_counts(self, model: str) -> tuple[int, int]: ...

    def unembedded(self, model: str, limit: int) -> list[tuple[str, str]]: ...

    def put_vectors(self, model: str, vectors: Iterable[tuple[str, bytes]]) -> None: ...

    def vectors(self, model: str) -> list[tuple[str, bytes]]: ...

    def count_use(self, memory_ids: Iterable[str]) -> None: ...

    def most_used(self, limit: int) -> list[str]: ...

    def generation(self) -> int:
        """A number that changes when another process changes the index (not when this
        one does): callers caching what they read compare it."""
        ...

    def close(self) -> None: ...


class ChangeSource(Protocol):
    """Paths changed since the last call, or ``None`` when everything must be rescanned."""

    def drain(self) -> set[Path] | None: ...

    def close(self) -> None: ...
