"""Writing files so that a crash leaves the old version or the new one, never half.

Every file engram writes goes through :func:`write_atomic`: the new content goes to a
temporary file in the same folder, is flushed to disk, replaces the target by rename,
and the folder is flushed so the rename itself survives a power loss.

:class:`FileChanges` extends that to several files that must change together, such as
a memory file and ``memory.hashes``: each new version is written whole first,
then a journal naming every rename, then the renames, all under a lock per root written.
A process that dies during the renames leaves the journal: the next commit (under the
same locks) or :func:`recover` (run before anything reads the files) finishes it; one that
dies before the journal leaves only temporaries, which :func:`recover` deletes once they
are stale. Either every file changed or none did.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from engram.errors import NotWritable

__all__ = ["STALE_S", "TEMPORARY_MARK", "FileChanges", "explained", "recover", "write_atomic"]

#: The mark in every temporary file's name (``.<name>.<random>.engram-tmp``).
TEMPORARY_MARK = ".engram-tmp"
#: How old a temporary must be before :func:`recover` deletes it, in seconds.
STALE_S = 600


def write_atomic(
    path: Path, data: str | bytes, *, mode: int | None = None, exclusive: bool = False
) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8, line endings as given).

    ``mode`` is the new file's permission bits (default: the existing file's, else
    what the umask allows); ``exclusive`` refuses (``FileExistsError``) to replace an
    existing file, atomically: the new file appears whole or not at all. A folder that
    cannot be written raises :class:`NotWritable`, naming it.
    """
    temporary = _temporary(path, data, mode)
    try:
        with explained(path.parent):
            if exclusive:
                _link_exclusively(temporary, path)
            else:
                os.replace(temporary, path)
            _sync_folder(path.parent)
    finally:
        temporary.unlink(missing_ok=True)


def _link_exclusively(temporary: Path, path: Path) -> None:
    """Give ``temporary`` the name ``path`` unless that exists (``FileExistsError``):
    a hard link, so the file appears whole; on a file system without hard links
    (vfat, some network mounts), an exclusive create and a copy."""
    try:
        os.link(temporary, path)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(temporary.read_bytes())
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(path, temporary.stat().st_mode & 0o7777)


def _temporary(path: Path, data: str | bytes, mode: int | None) -> Path:
    """A flushed temporary copy of ``data`` beside ``path``, with the final mode."""
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}{TEMPORARY_MARK}")
    content = data.encode("utf-8") if isinstance(data, str) else data
    with explained(path.parent):
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, mode)  # created private; widened only once whole
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
    return temporary


#: Why a folder cannot take a file, and what to do about it.
_REFUSALS: Final = {
    errno.EACCES: "make the folder writable",
    errno.EPERM: "make the folder writable",
    errno.EROFS: "it is on a read-only file system",
    errno.ENOSPC: "free some disk space",
    errno.EDQUOT: "free some of your disk quota",
}


@contextlib.contextmanager
def explained(folder: Path) -> Iterator[None]:
    """Turn the system's refusal to write in ``folder`` into :class:`NotWritable`."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in _REFUSALS:
            raise
        raise NotWritable(
            f"cannot write in {folder}: {os.strerror(exc.errno)}; nothing was changed"
            f" ({_REFUSALS[exc.errno]}, then run the command again)"
        ) from exc


def _sync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


@dataclass
class FileChanges:
    """Files to write and delete together, all or nothing (see the module docstring).

    ``journal`` is where the pending renames are recorded while they happen; a lock
    beside it (``<journal>.lock``) keeps one commit or recovery at a time across
    processes. ``also_locked`` are the journals of other roots the commit writes in
    (their locks are held too, all in one order, so two commits never interleave).
    """

    journal: Path
    writes: dict[Path, str | bytes] = field(default_factory=dict)
    deletes: set[Path] = field(default_factory=set)
    also_locked: set[Path] = field(default_factory=set)

    def write(self, path: Path, data: str | bytes) -> None:
        self.writes[path] = data
        self.deletes.discard(path)

    def delete(self, path: Path) -> None:
        self.deletes.add(path)
        self.writes.pop(path, None)

    def commit(self, under_lock: Callable[[FileChanges], None] | None = None) -> None:
        """Write every new version, then switch them all in.

        Under the locks, first any commit an interrupted process left is finished, then
        ``under_lock`` may add what depends on the files as they are now (a hashes file
        read and rewritten), so no other writer's change is lost in between.
        """
        with contextlib.ExitStack() as held:
            for journal in sorted({self.journal, *self.also_locked}):
                held.enter_context(_locked(journal))
                _finish(journal)
            if under_lock is not None:
                under_lock(self)
            if self.writes or self.deletes:
                self._switch()

    def _switch(self) -> None:
        """Stage every new version whole, record the renames, make them (locks held)."""
        staged: list[tuple[Path, Path]] = []
        try:
            for path, data in self.writes.items():
                _make_folder(path.parent)
                staged.append((_temporary(path, data, None), path))
        except BaseException:
            for temporary, _ in staged:
                temporary.unlink(missing_ok=True)
            raise
        plan = _Plan(staged, sorted(self.deletes))
        write_atomic(self.journal, plan.to_json())
        plan.carry_out(strict=True)
        self.journal.unlink()
        _sync_folder(self.journal.parent)


def _finish(journal: Path) -> bool:
    """Carry out the commit recorded in ``journal`` (its lock held); whether there was one."""
    if not journal.exists():
        return False
    _Plan.from_json(journal.read_text(encoding="utf-8")).carry_out(strict=False)
    journal.unlink()
    _sync_folder(journal.parent)
    return True


@dataclass(frozen=True)
class _Plan:
    renames: list[tuple[Path, Path]]
    deletes: list[Path]

    def to_json(self) -> str:
        renames = [[str(temporary), str(path)] for temporary, path in self.renames]
        return json.dumps({"renames": renames, "deletes": [str(p) for p in self.deletes]}) + "\n"

    @classmethod
    def from_json(cls, text: str) -> _Plan:
        data = json.loads(text)
        renames = [(Path(temporary), Path(path)) for temporary, path in data["renames"]]
        return cls(renames, [Path(path) for path in data["deletes"]])

    def carry_out(self, strict: bool) -> None:
        """The renames and deletions; ``strict`` (a live commit): every temporary must be
        there; otherwise (recovery) an absent one was renamed before an interruption."""
        for temporary, path in self.renames:
            if strict or temporary.exists():
                os.replace(temporary, path)
        for path in self.deletes:
            path.unlink(missing_ok=True)
        for folder in sorted(
            {path.parent for _, path in self.renames} | {p.parent for p in self.deletes}
        ):
            _sync_folder(folder)


def _make_folder(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise NotWritable(
            f"cannot write in {folder}: it is a file, not a folder; nothing was changed"
            " (move the file away, then run the command again)"
        )
    with explained(folder.parent):
        folder.mkdir(parents=True, exist_ok=True)


@contextlib.contextmanager
def _locked(journal: Path) -> Iterator[None]:
    _make_folder(journal.parent)
    with explained(journal.parent):
        lock = journal.with_name(journal.name + ".lock").open("a")
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def recover(journal: Path, folders: list[Path]) -> bool:
    """Finish the changes an interrupted :meth:`FileChanges.commit` recorded in
    ``journal``, and delete the temporaries an interrupted write left in ``folders``
    (those older than :data:`STALE_S`: a younger one may belong to a write under way
    in another process); whether there was a journal to finish."""
    stale = [
        leftover
        for folder in folders
        if folder.is_dir()
        for leftover in folder.glob(f".*{TEMPORARY_MARK}")
        if _age(leftover) > STALE_S
    ]
    if not journal.exists() and not stale:
        return False  # the common case: nothing to take a lock for
    if not os.access(journal.parent, os.W_OK):
        return False  # a read-only checkout: nothing can be finished, reading goes on
    with _locked(journal):
        finished = _finish(journal)
        for leftover in stale:
            leftover.unlink(missing_ok=True)
    return finished


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except FileNotFoundError:  # renamed or deleted meanwhile: not a leftover
        return 0.0
