"""Reading and writing host files safely: planned changes, atomic writes, backups.

A link, unlink or upgrade first computes every :class:`Change` (a file's text
before and after) without touching the disk, so that ``--dry-run`` shows exactly
what would happen and a file that cannot be parsed stops everything before the
first write. :func:`apply` then writes each changed file atomically: the new text
goes to a temporary file in the same directory, which replaces the old one with
``os.replace`` (so a reader never sees half a file), after the previous version has
been copied to ``<file>.engram-backup``. (A file engram removes held nothing but
engram's own entry, so it leaves no backup.) A symbolic link (a dotfile manager's) is
followed, so the link survives and its target is what changes.

Text is kept exactly: UTF-8 with its byte-order mark if it had one, and its line
endings untouched (files are read and written with ``newline=""``).
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engram.errors import HostConfigUnparseable
from engram.hosts.masking import masked_texts

__all__ = ["BACKUP_SUFFIX", "Change", "apply", "backup_path", "read_text", "strip_bom"]

BACKUP_SUFFIX = ".engram-backup"
_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Change:
    """One file's planned change; ``after`` is ``None`` when the file is removed.

    ``backup`` is false for files engram owns whole (a slash command it wrote):
    their previous version is engram's own text, so no backup is left beside them.
    """

    path: Path
    before: str | None
    after: str | None
    summary: str
    backup: bool = True

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the change (empty when nothing changes), every value that
        may be a secret masked on both sides (:func:`~engram.hosts.masking.masked_texts`):
        the lines around engram's entry are the person's, an API key among them."""
        if not self.changed:
            return ""
        before, after = masked_texts(self.before, self.after, self.path)
        lines = difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            (after or "").splitlines(keepends=True),
            fromfile=str(self.path) if self.before is not None else "/dev/null",
            tofile=str(self.path) if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def backup_path(path: Path) -> Path:
    """Where the previous version of ``path`` is kept."""
    return path.with_name(path.name + BACKUP_SUFFIX)


def read_text(path: Path) -> str | None:
    """The file's text (a byte-order mark kept as its first character), or ``None``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise HostConfigUnparseable(f"{path}: is a directory, not a file") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise HostConfigUnparseable(
            f"{path}: byte {error.start} is not UTF-8; the file was left unchanged"
        ) from None


def strip_bom(text: str) -> tuple[str, str]:
    """Split a leading byte-order mark off ``text``: ``(bom, rest)``."""
    return (_BOM, text[1:]) if text.startswith(_BOM) else ("", text)


def apply(changes: list[Change]) -> list[Change]:
    """Write every changed file; returns the changes that were written."""
    written = []
    for change in changes:
        if not change.changed:
            continue
        target = Path(os.path.realpath(change.path))
        # A removed file held nothing but engram's own entry: nothing to back up.
        if change.backup and change.after is not None and target.exists():
            shutil.copy2(target, backup_path(target))
        if change.after is None:
            target.unlink(missing_ok=True)
        else:
            _write_atomically(target, change.after)
        written.append(change)
    return written


def _write_atomically(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_umask()
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)  # mkstemp creates 0600; keep the file's own mode
        os.replace(temporary, target)
    finally:
        # After a successful replace the temporary name is gone; after a failure the
        # partial file must not stay behind.
        Path(temporary).unlink(missing_ok=True)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
