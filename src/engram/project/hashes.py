"""``memory.hashes.json``: the SHA-256 of every durable memory file, as engram wrote it.

``{"<relative/path.md>": "<sha256 hex of the file text>"}`` with forward slashes
(the upstream format). engram updates it on every write it makes; ``verify``
compares it with the files, so an edit that did not go through engram shows up.
Working-tier notes are not tracked: they are Git-ignored and short-lived.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from engram.durable import write_atomic
from engram.errors import HashesCorrupt
from engram.project.layout import MEMORY_FOLDERS, Layout

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
    """Per file: ``ok``, ``missing hash``, ``hash mismatch`` or ``missing file``."""
    hashes = read_hashes(layout)
    report = []
    on_disk = set()
    for folder in MEMORY_FOLDERS:
        for path in sorted(layout.folder(folder).glob("*.md")):
            relative = path.relative_to(layout.base).as_posix()
            on_disk.add(relative)
            actual = hashlib.sha256(path.read_bytes()).hexdigest()
            expected = hashes.get(relative)
            status = (
                "missing hash"
                if expected is None
                else "ok"
                if expected == actual
                else "hash mismatch"
            )
            report.append({"path": relative, "status": status})
    for relative in sorted(set(hashes) - on_disk):
        report.append({"path": relative, "status": "missing file"})
    return sorted(report, key=lambda entry: entry["path"])
