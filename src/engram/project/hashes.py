"""``memory.hashes.json``: the SHA-256 of every durable memory file, as engram wrote it.

``{"<relative/path.md>": "<sha256 hex of the file text>"}`` with forward slashes
(the upstream format). engram updates it on every write it makes; ``verify``
compares it with the files, so an edit that did not go through engram shows up.
Working-tier notes are not tracked: they are Git-ignored and short-lived.
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Mapping
from pathlib import Path

from engram.durable import write_atomic
from engram.errors import HashesCorrupt
from engram.project.layout import MEMORY_FOLDERS, Layout
from engram.project.ports import FileState

__all__ = [
    "digest_text",
    "read_hashes",
    "record_hash",
    "render_hashes",
    "verify_hashes",
    "write_hashes",
]


def read_hashes(layout: Layout) -> dict[str, str]:
    if not layout.hashes.exists():
        return {}
    try:
        data = json.loads(layout.hashes.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HashesCorrupt(f"{layout.hashes}: does not parse as JSON{_REMEDY}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise HashesCorrupt(f"{layout.hashes}: must map paths to hex digests{_REMEDY}")
    return {str(key): str(value) for key, value in data.items()}


def indexed_health(layouts: list[Layout], files: Mapping[str, FileState]) -> dict[str, list[str]]:
    """Each memory file's problems (empty: healthy), by its index path (``rules/x.md``,
    ``global:rules/x.md``), from what the index knows of it: the index keeps every file's
    SHA-256 current, so this compares it with the recorded hash without reading thousands
    of files (:func:`verify_hashes` reads them all)."""
    recorded: dict[str, dict[str, str] | None] = {}
    for layout in layouts:
        try:
            recorded[layout.prefix] = read_hashes(layout)
        except HashesCorrupt:
            recorded[layout.prefix] = None
    found: dict[str, list[str]] = {}
    for path, state in files.items():
        prefix = "global:" if path.startswith("global:") else ""
        hashes = recorded.get(prefix)
        expected = None if hashes is None else hashes.get(path.removeprefix(prefix))
        problems = []
        if hashes is None:
            problems.append("hashes file unreadable")
        elif expected is None:
            problems.append("missing hash")
        elif expected != state.sha256:
            problems.append("hash mismatch")
        if state.problem is not None:
            problems.append(state.problem)
        found[path] = problems
    return found


def render_hashes(hashes: dict[str, str]) -> str:
    """The file's text for ``hashes``."""
    return json.dumps(dict(sorted(hashes.items())), indent=2) + "\n"


_REMEDY = (
    "; restore it from Git (`git checkout -- .agents/.engram/memory.hashes.json`), or review"
    " the memory files and run `engram adopt --yes`, which records them all again"
)


def write_hashes(layout: Layout, hashes: dict[str, str]) -> None:
    write_atomic(layout.hashes, render_hashes(hashes))


def record_hash(hashes: dict[str, str], layout: Layout, path: Path, text: str | None) -> None:
    """Record in ``hashes`` (or, with ``None``, drop) the hash of a file of ``layout``."""
    relative = path.relative_to(layout.base).as_posix()
    if text is None:
        hashes.pop(relative, None)
    else:
        hashes[relative] = digest_text(text)


def digest_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verify_hashes(layout: Layout) -> list[dict[str, str]]:
    """Per file: ``ok``, ``missing hash``, ``hash mismatch``, ``missing file`` or
    ``unreadable`` (a broken link, no permission, not a regular file)."""
    hashes = read_hashes(layout)
    report = []
    on_disk = set()
    for folder in MEMORY_FOLDERS:
        for path in sorted(layout.folder(folder).glob("*.md")):
            relative = path.relative_to(layout.base).as_posix()
            on_disk.add(relative)
            actual = _digest_of(path)
            expected = hashes.get(relative)
            status = (
                "unreadable"
                if actual is None
                else "missing hash"
                if expected is None
                else "ok"
                if expected == actual
                else "hash mismatch"
            )
            report.append({"path": relative, "status": status})
    for relative in sorted(set(hashes) - on_disk):
        report.append({"path": relative, "status": "missing file"})
    return sorted(report, key=lambda entry: entry["path"])


def _digest_of(path: Path) -> str | None:
    """The file's SHA-256, or ``None`` when it cannot be read (never opening a FIFO,
    which would block)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
