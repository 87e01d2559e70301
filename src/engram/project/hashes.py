"""``memory.hashes``: the SHA-256 of every durable memory file, as engram wrote it.

One line per file, ``<sha256 hex>  <path>`` (the path from the memory root, forward
slashes), sorted by path: what ``sha256sum`` writes, so ``sha256sum -c memory.hashes``
run in the root checks it too. engram updates it on every write it makes; ``verify``
compares it with the files, so an edit that did not go through engram shows up.
Working-tier notes are not tracked: they are Git-ignored and short-lived.

The file is shared through Git, and two branches that each save a memory both change
it. Git merges it with its built-in union driver (``merge=union``, in the
``.gitattributes`` engram writes beside it), which keeps the lines of both sides
without a conflict. So after a merge a path may have two lines (its old and its new
hash, when the two sides' changes touched), and any hash recorded for a path is
accepted. A file removed through engram leaves a ``# removed  <path>`` line (a
comment to ``sha256sum``): when a union brings the path's old line back, the file is
still known to be gone on purpose. Git's conflict markers, which a merge without the
attribute leaves, are skipped: the lines between them are both sides' records. The
next write compacts the file (:func:`compacted`): one line per path, the one its
file matches.

Upstream's ``memory.hashes.json`` (``{"<path>": "<hex>"}``) is read too, as long as
it is there; the next write replaces it with ``memory.hashes``. This module does not
run Git, and does not decide which of several recorded hashes is newer: it cannot.
"""

from __future__ import annotations

import hashlib
import json
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from engram.errors import HashesCorrupt
from engram.project.layout import ENGRAM_DIR, MEMORY_FOLDERS, Layout
from engram.project.ports import FileState

__all__ = [
    "REMOVED",
    "Hashes",
    "compacted",
    "digest_text",
    "indexed_health",
    "read_hashes",
    "record_hash",
    "render_hashes",
    "tidy",
    "verify_hashes",
]

#: The value recorded for a path whose file engram removed (``# removed  <path>``).
REMOVED: Final = "removed"
_REMOVED_LINE: Final = "# removed  "
_RECORD: Final = re.compile(r"([0-9a-fA-F]{64}) [ *](.+)")
#: The lines Git's merge markers begin with (``|||||||`` in the diff3 conflict style).
_MARKERS: Final = ("<<<<<<<", "|||||||", "=======", ">>>>>>>")


@dataclass(frozen=True)
class Hashes:
    """What a root's hashes files record: per path (``rules/x.md``), every hash
    recorded for it, and :data:`REMOVED` when engram removed its file."""

    entries: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: ``memory.hashes`` as it was read (``""`` when there is none).
    text: str = ""
    #: Git's conflict markers were skipped: a merge without the union attribute.
    markers: bool = False
    #: Upstream's ``memory.hashes.json`` is there (the next write replaces it).
    legacy: bool = False

    def digests(self, path: str) -> frozenset[str]:
        """The hashes recorded for ``path`` (more than one only after a merge)."""
        return self.entries.get(path, frozenset()) - {REMOVED}

    def status(self, path: str, actual: str | None) -> str:
        """``ok``, ``missing hash``, ``hash mismatch`` or ``unreadable`` (``actual``,
        the file's SHA-256, is ``None``) of a memory file that is there."""
        digests = self.digests(path)
        if actual is None:
            return "unreadable"
        if not digests:
            return "missing hash"
        return "ok" if actual in digests else "hash mismatch"

    def missing(self, on_disk: set[str]) -> list[str]:
        """Recorded paths whose file is gone without engram removing it."""
        return sorted(
            path
            for path, values in self.entries.items()
            if path not in on_disk and REMOVED not in values
        )


def read_hashes(layout: Layout) -> Hashes:
    """Every record of ``layout``'s ``memory.hashes`` and, while it is there, of
    upstream's ``memory.hashes.json``; ``HashesCorrupt`` when either cannot be read."""
    entries: dict[str, set[str]] = {}
    legacy = layout.legacy_hashes.exists()
    if legacy:
        for path, digest in _read_legacy(layout).items():
            entries.setdefault(path, set()).add(digest)
    text, markers = "", False
    if layout.hashes.exists():
        text = _read_text(layout, layout.hashes)
        markers = _read_lines(layout, text, entries)
    frozen = {path: frozenset(values) for path, values in entries.items()}
    return Hashes(frozen, text, markers, legacy)


def _read_text(layout: Layout, path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HashesCorrupt(f"{path}: not UTF-8 text{_remedy(layout, path)}") from exc
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise HashesCorrupt(f"{path}: cannot be read ({why}){_remedy(layout, path)}") from exc


def _read_lines(layout: Layout, text: str, entries: dict[str, set[str]]) -> bool:
    """Add the records of ``text`` to ``entries``; whether it holds conflict markers."""
    markers = False
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if line.startswith(_REMOVED_LINE):
            entries.setdefault(line.removeprefix(_REMOVED_LINE), set()).add(REMOVED)
        elif line.startswith(_MARKERS):
            markers = True
        elif not line.strip() or line.startswith("#"):
            continue  # blank, or a comment (as sha256sum reads it)
        elif (record := _RECORD.fullmatch(line)) is not None:
            entries.setdefault(record[2], set()).add(record[1].lower())
        else:
            raise HashesCorrupt(
                f"{layout.hashes}: line {number} is not `<sha256 hex>  <path>`"
                f"{_remedy(layout, layout.hashes)}"
            )
    return markers


def _read_legacy(layout: Layout) -> dict[str, str]:
    path = layout.legacy_hashes
    try:
        data = json.loads(_read_text(layout, path))
    except ValueError as exc:
        raise HashesCorrupt(f"{path}: does not parse as JSON{_remedy(layout, path)}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise HashesCorrupt(f"{path}: must map paths to hex digests{_remedy(layout, path)}")
    return {str(key): value.lower() for key, value in data.items()}


def _remedy(layout: Layout, path: Path) -> str:
    if layout.is_global:  # no repository, and `engram adopt` adopts the project's files
        return (
            "; delete it: engram records each global memory again when it next writes it"
            " (`engram verify --scope global` lists the others as `missing hash`)"
        )
    return (
        f"; restore it from Git (`git checkout -- {ENGRAM_DIR}/{path.name}`), or review the"
        " memory files and run `engram adopt --yes`, which records them all again"
    )


def render_hashes(entries: Mapping[str, frozenset[str]]) -> str:
    """The text of ``memory.hashes`` for ``entries``: its lines sorted by path."""
    lines = [
        f"{_REMOVED_LINE}{path}" if value == REMOVED else f"{value}  {path}"
        for path in sorted(entries)
        for value in sorted(entries[path])
    ]
    return "".join(line + "\n" for line in lines)


def compacted(layout: Layout, hashes: Hashes) -> dict[str, frozenset[str]]:
    """``hashes`` with one value per path where a merge left several: the hash its
    file matches, or, its file gone, that engram removed it. Otherwise the values stay
    (the file changed since: ``verify`` reports it, ``adopt`` records it)."""
    entries = dict(hashes.entries)
    for path, values in hashes.entries.items():
        if len(values) < 2 or not _is_memory_path(path):
            continue
        file = layout.base / path
        there = file.is_symlink() or file.exists()
        actual = _digest_of(file) if there else REMOVED
        if actual in values:
            entries[path] = frozenset({actual})
    return entries


def _is_memory_path(path: str) -> bool:
    folder, _, name = path.partition("/")
    return folder in MEMORY_FOLDERS and name.endswith(".md") and "/" not in name


def tidy(layout: Layout, hashes: Hashes) -> bool:
    """Whether the next write would leave ``memory.hashes`` as it is: no upstream file,
    no conflict markers, no path with lines a compaction drops, in order."""
    return not hashes.legacy and hashes.text == render_hashes(compacted(layout, hashes))


def record_hash(
    entries: dict[str, frozenset[str]], layout: Layout, path: Path, text: str | None
) -> None:
    """Record in ``entries`` the hash of a file of ``layout`` (``text`` ``None``: that
    engram removed it, when it was recorded)."""
    relative = path.relative_to(layout.base).as_posix()
    if text is not None:
        entries[relative] = frozenset({digest_text(text)})
    elif relative in entries:
        entries[relative] = frozenset({REMOVED})


def digest_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verify_hashes(layout: Layout, hashes: Hashes | None = None) -> list[dict[str, str]]:
    """Per file: ``ok``, ``missing hash``, ``hash mismatch``, ``missing file`` or
    ``unreadable`` (a broken link, no permission, not a regular file)."""
    hashes = read_hashes(layout) if hashes is None else hashes
    report = []
    on_disk = set()
    for folder in MEMORY_FOLDERS:
        for path in sorted(layout.folder(folder).glob("*.md")):
            relative = path.relative_to(layout.base).as_posix()
            on_disk.add(relative)
            report.append({"path": relative, "status": hashes.status(relative, _digest_of(path))})
    for relative in hashes.missing(on_disk):
        report.append({"path": relative, "status": "missing file"})
    return sorted(report, key=lambda entry: entry["path"])


def indexed_health(layouts: list[Layout], files: Mapping[str, FileState]) -> dict[str, list[str]]:
    """Each memory file's problems (empty: healthy), by its index path (``rules/x.md``,
    ``global:rules/x.md``), from what the index knows of it: the index keeps every file's
    SHA-256 current, so this compares it with the recorded hashes without reading
    thousands of files (:func:`verify_hashes` reads them all)."""
    recorded: dict[str, Hashes | None] = {}
    for layout in layouts:
        try:
            recorded[layout.prefix] = read_hashes(layout)
        except HashesCorrupt:
            recorded[layout.prefix] = None
    found: dict[str, list[str]] = {}
    for path, state in files.items():
        prefix = "global:" if path.startswith("global:") else ""
        hashes = recorded.get(prefix)
        problems = []
        if hashes is None:
            problems.append("hashes file unreadable")
        elif (status := hashes.status(path.removeprefix(prefix), state.sha256)) != "ok":
            problems.append(status)
        if state.problem is not None:
            problems.append(state.problem)
        found[path] = problems
    return found


def _digest_of(path: Path) -> str | None:
    """The file's SHA-256, or ``None`` when it cannot be read (never opening a FIFO,
    which would block)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
