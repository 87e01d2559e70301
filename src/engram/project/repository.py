"""What the repository a project lives in says of its files, for the memories that cite them.

A memory records the files it stands on by their Git blob id (:func:`blob_id`, what
``git hash-object --no-filters FILE`` prints), computed here from the bytes on disk, so
recording and checking need no Git at all. Git, when the project is in a work tree and
``git`` runs, adds what only it knows: which paths it ignores (never recorded), which
tracked path now holds a recorded blob (a rename), and the old text of a blob it still
has (the diff a person reviews). Without Git those answers are simply "nothing": no path
is ignored, no rename is told, no old text is shown.

Every path here is relative to the project's root (the folder that holds ``.agents/``),
with forward slashes. Nothing outside that root is read: a path that leads out of it
(``..``, an absolute path, a link to elsewhere) is no file of the repository. This module
never writes a file and never runs a Git command that could (``GIT_OPTIONAL_LOCKS=0``).
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Final

__all__ = ["Repository", "blob_id", "file_blob_id"]

#: The folders whose files a memory never stands on: Git's own, and engram's (every save
#: changes its files).
PRIVATE: Final = (".git", ".agents/.engram")
#: How long one Git command may take before it counts as "Git cannot tell".
GIT_TIMEOUT_S: Final = 20.0


def blob_id(data: bytes) -> str:
    """The Git blob id of ``data``: SHA-1 of ``blob <size>\\0`` and the bytes."""
    header = b"blob %d\0" % len(data)
    return hashlib.sha1(header + data, usedforsecurity=False).hexdigest()


def file_blob_id(path: Path) -> str:
    """The Git blob id of the file at ``path``, read a megabyte at a time (a large file
    a memory names is never held whole); ``OSError`` when it cannot be read."""
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        digest = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)
        read = 0
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            read += len(chunk)
    if read != size:  # it changed while it was read: the header would lie
        raise OSError(f"{path} changed while it was read")
    return digest.hexdigest()


class Repository:
    """The files of the project rooted at ``root``, as a memory may cite them."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def inside(self, relative: str, folders: dict[str, Path | None] | None = None) -> Path | None:
        """Where ``relative`` is on disk, when it names a regular file of the repository
        (not under ``.git`` or ``.agents/.engram``, and not leading out of the root).

        ``folders`` remembers where each folder really is for the length of one check
        (resolving every component of 5,000 paths costs more than reading them)."""
        if not relative or relative.startswith("/") or "\\" in relative or "\0" in relative:
            return None
        normal = PurePosixPath(os.path.normpath(relative)).as_posix()
        if normal.startswith("../") or normal in ("..", ".") or _private(normal):
            return None
        parent, _, name = normal.rpartition("/")
        folders = {} if folders is None else folders
        if parent not in folders:
            folders[parent] = self._real_folder(parent)
        real_parent = folders[parent]
        if real_parent is None:
            return None
        path = real_parent / name
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return None
        if stat.S_ISLNK(mode):
            return self._real_file(path)
        return path if stat.S_ISREG(mode) else None

    def _real_folder(self, parent: str) -> Path | None:
        """Where a folder of the repository really is, or ``None`` out of it."""
        try:
            real = (self.root / parent).resolve(strict=True)
            inner = real.relative_to(self.root).as_posix()
        except (OSError, ValueError, RuntimeError):
            return None
        return None if _private(inner) else real

    def _real_file(self, link: Path) -> Path | None:
        """Where a link inside the repository leads, when that is a file of it."""
        try:
            real = link.resolve(strict=True)
            inner = real.relative_to(self.root).as_posix()
        except (OSError, ValueError, RuntimeError):
            return None
        return None if _private(inner) or not real.is_file() else real

    def recordable(self, relative: str) -> bool:
        """Whether a memory may record ``relative`` at all, whether or not the file is
        there now: a printable path relative to the root, not leading out of it, not under
        ``.git`` or ``.agents/.engram`` (what Git ignores is asked apart, in a batch)."""
        if not relative or not relative.isprintable() or relative.startswith("/"):
            return False
        if "\\" in relative:
            return False
        normal = self.normal(relative)
        return not (normal.startswith("../") or normal in ("..", ".") or _private(normal))

    def normal(self, relative: str) -> str:
        """``relative`` as a memory records it (``./a/../b.py`` → ``b.py``)."""
        return PurePosixPath(os.path.normpath(relative)).as_posix()

    # --- what Git knows ------------------------------------------------------------

    @cached_property
    def git(self) -> bool:
        """Whether the root is in a Git work tree and ``git`` answers there."""
        done = self._git("rev-parse", "--is-inside-work-tree")
        return done is not None and done.strip() == b"true"

    def ignored(self, paths: list[str]) -> set[str]:
        """Which of ``paths`` Git ignores (none without Git); a tracked file never is."""
        if not paths or not self.git:
            return set()
        done = self._git(
            "check-ignore", "--stdin", "-z", stdin=b"\0".join(p.encode() for p in paths)
        )
        if done is None:
            return set()
        return {part.decode("utf-8", "replace") for part in done.split(b"\0") if part}

    def tracked(self) -> dict[str, list[str]]:
        """Each blob id in Git's index, with the paths that hold it (under the root)."""
        if not self.git:
            return {}
        done = self._git("ls-files", "-s", "-z")
        by_blob: dict[str, list[str]] = {}
        for entry in (done or b"").split(b"\0"):
            meta, _, path = entry.partition(b"\t")
            fields = meta.split()
            if len(fields) == 3:
                by_blob.setdefault(fields[1].decode(), []).append(path.decode("utf-8", "replace"))
        return by_blob

    def old_text(self, blob: str) -> bytes | None:
        """The bytes of a blob Git still has (committed, staged or stashed once), or
        ``None``."""
        if not self.git or len(blob) != 40 or any(c not in "0123456789abcdef" for c in blob):
            return None
        return self._git("cat-file", "blob", blob)

    def _git(self, *args: str, stdin: bytes | None = None) -> bytes | None:
        env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
        try:
            done = subprocess.run(
                ["git", *args],
                cwd=self.root,
                input=stdin,
                capture_output=True,
                env=env,
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None


def _private(relative: str) -> bool:
    return any(relative == folder or relative.startswith(folder + "/") for folder in PRIVATE)
