"""``engram reconfirm``: a person has checked a memory against its files; record them as
they are now.

For each memory named, its files are recorded again (:mod:`engram.project.sources`):
those it recorded that are still there, the new path of each one Git saw renamed, and
those its text names, each with its blob id now, and ``last_verified`` is set to the day.
A recorded file that is gone is no longer recorded. Only those frontmatter lines change;
every other line of the file stays as it is, and ``memory.hashes`` records the new text.

It is a person's act, like ``engram promote``: there is no MCP tool for it (an agent
proposes an ``UPDATE`` instead). Every id is checked before anything is written: an
unknown id, a global memory or a note, and a memory file changed outside engram (adopt
it first) stop the command with nothing written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.errors import ProjectError, UnknownMemory
from engram.project.frontmatter import Value
from engram.project.hashes import digest_text, read_hashes
from engram.project.layout import Layout
from engram.project.memory_file import Memory
from engram.project.repository import Repository
from engram.project.sources import grounded, recorded_sources, rewritten_fields
from engram.project.staleness import StaleMemory

__all__ = ["Reconfirmed", "plan_reconfirm", "reconfirmed_text"]


@dataclass(frozen=True)
class Reconfirmed:
    """What reconfirming recorded: per memory, its file, the files it records now and
    those it no longer records (gone)."""

    entries: list[dict[str, Any]]

    def text(self) -> str:
        lines = []
        for entry in self.entries:
            files = ", ".join(entry["files"]) or "no file"
            line = f"reconfirmed {entry['id']} ({entry['file']}): records {files} as they are now"
            if entry["dropped"]:
                line += f"; no longer records {', '.join(entry['dropped'])} (gone)"
            lines.append(line)
        return "\n".join(lines)

    def data(self) -> dict[str, Any]:
        return {"memories": self.entries, "text": self.text()}


def plan_reconfirm(
    layout: Layout,
    memories: dict[str, Memory],
    memory_ids: list[str],
    stale: dict[str, StaleMemory],
    repository: Repository,
    today: str,
) -> list[tuple[Path, str, dict[str, Any]]]:
    """For each id, its file, its new text and what it records; raises before anything is
    written when one cannot be reconfirmed."""
    hashes = read_hashes(layout)
    planned = []
    for memory_id in dict.fromkeys(memory_ids):
        memory = memories.get(memory_id)
        if memory is None:
            raise UnknownMemory(f"no memory {memory_id!r}: `engram stale` lists the stale ones")
        if memory.scope != "workspace" or memory.tier == "working":
            raise ProjectError(
                f"{memory_id} is a {'note' if memory.tier == 'working' else 'global memory'}:"
                " only a workspace memory records the repository files it stands on"
            )
        path = (
            layout.folder(
                {"rule": "rules", "skill": "skills", "knowledge": "knowledge"}[memory.type]
            )
            / f"{memory_id}.md"
        )
        relative = layout.relative(path)
        text = path.read_text(encoding="utf-8")
        if hashes.status(relative, digest_text(text)) != "ok":
            raise ProjectError(
                f"{relative} changed outside engram: review it and `engram adopt {relative}`"
                " first, then reconfirm it"
            )
        renamed = [
            change.renamed_to
            for change in (stale[memory_id].changes if memory_id in stale else ())
            if change.renamed_to
        ]
        before = [file for file, _ in recorded_sources(memory)]
        found = grounded(memory, repository, today, renamed, before)
        files = found.items("source_files")
        changes: dict[str, Value | None] = {
            "source_files": files or None,
            "source_hashes": found.items("source_hashes") or None,
            "last_verified": today,
        }
        new_text = rewritten_fields(text, changes)
        moved = {c.path for c in (stale[memory_id].changes if memory_id in stale else ())}
        dropped = [
            file
            for file in before
            if file not in files and not (file in moved and _renamed(stale[memory_id], file))
        ]
        entry = {"id": memory_id, "file": relative, "files": files, "dropped": dropped}
        planned.append((path, new_text, entry))
    return planned


def _renamed(stale: StaleMemory, path: str) -> bool:
    return any(change.path == path and change.renamed_to for change in stale.changes)


def reconfirmed_text(planned: list[tuple[Path, str, dict[str, Any]]]) -> Reconfirmed:
    return Reconfirmed([entry for _, _, entry in planned])
