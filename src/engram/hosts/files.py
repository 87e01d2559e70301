"""Reading and writing host files safely: planned changes, atomic writes, backups.

A link, unlink or upgrade first computes every :class:`Change` (a file's text
before and after) without touching the disk, so that ``--dry-run`` shows exactly
what would happen and a file that cannot be parsed stops everything before the
first write. :func:`apply` then writes each changed file atomically: the new text
goes to a temporary file in the same directory, which replaces the old one with
``os.replace`` (so a reader never sees half a file), after the previous version has
been copied to engram's backup folder (``$XDG_STATE_HOME/engram/backups``, by default
``~/.local/state/engram/backups``; one generation per file, readable by its owner only):
never beside the file, where it would sit untracked in a repository with whatever the
file held (another server's API key). A file engram removes held nothing but engram's
own entry, so it leaves no backup; the folders its removal empties (``.claude/commands/``)
are removed too, up to the workspace or the home. A symbolic link (a dotfile manager's)
is followed, so the link survives and its target is what changes.

Text is kept exactly: UTF-8 with its byte-order mark if it had one, and its line
endings untouched (files are read and written with ``newline=""``).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import subprocess
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engram.durable import write_atomic
from engram.errors import HostConfigUnparseable
from engram.hosts.masking import masked_texts

__all__ = ["Change", "GitState", "apply", "backup_path", "git_state", "read_text", "strip_bom"]

#: What Git makes of a workspace file: committed (``tracked``), to be committed
#: (``untracked``: not ignored), ``ignored``, or not in a work tree (``outside``, or
#: no ``git`` at all).
GitState = Literal["tracked", "untracked", "ignored", "outside"]

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


def backup_path(backups: Path, path: Path) -> Path:
    """Where the previous version of ``path`` is kept in the ``backups`` folder: its name
    after a digest of its whole path (two ``settings.json`` never share a backup)."""
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:16]
    return backups / f"{digest}-{path.name}"


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


def git_state(path: Path) -> GitState:
    """Whether Git shares ``path`` with the team: two ``git`` calls in its folder (or the
    nearest that exists), each bounded."""
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    name = os.path.relpath(path, folder)

    def git(*args: str) -> int:
        try:
            done = subprocess.run(
                ["git", *args, "--", name],
                check=False,
                cwd=folder,
                capture_output=True,
                timeout=10,
            )
        except (OSError, subprocess.SubprocessError):
            return 128
        return done.returncode

    if git("ls-files", "--error-unmatch") == 0:
        return "tracked"
    found = git("check-ignore", "-q")
    return "ignored" if found == 0 else "untracked" if found == 1 else "outside"


def strip_bom(text: str) -> tuple[str, str]:
    """Split a leading byte-order mark off ``text``: ``(bom, rest)``."""
    return (_BOM, text[1:]) if text.startswith(_BOM) else ("", text)


def apply(changes: list[Change], backups: Path, roots: Collection[Path]) -> list[Change]:
    """Write every changed file, keeping each previous version in ``backups``; a removal
    also removes the folders it empties, below ``roots`` (the workspace, the home).
    Returns the changes that were written."""
    written = []
    for change in changes:
        if not change.changed:
            continue
        target = Path(os.path.realpath(change.path))
        # A removed file held nothing but engram's own entry: nothing to back up.
        if change.backup and change.after is not None and target.exists():
            backups.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_atomic(backup_path(backups, target), target.read_bytes(), mode=0o600)
        if change.after is None:
            target.unlink(missing_ok=True)
            _remove_empty_folders(change.path.parent, roots)
        else:
            change.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, change.after)
        written.append(change)
    return written


def _remove_empty_folders(folder: Path, roots: Collection[Path]) -> None:
    """Remove ``folder`` and its parents while they are empty, stopping at a root."""
    stops = {root.absolute() for root in roots}
    current = folder.absolute()
    while current not in stops and any(current.is_relative_to(root) for root in stops):
        try:
            current.rmdir()  # only an empty folder goes
        except OSError:
            return
        current = current.parent
