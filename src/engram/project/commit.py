"""Writing approved candidates: the one path ``engram_commit``, the approval dialog and
``engram save-session --force`` share.

Each candidate's verdict is computed again at write time, at the proposal's query
level, and a candidate whose verdict differs from the one shown is deferred: what is
written is always what the preview said. ``ADD`` writes a new file; ``UPDATE``
rewrites the target's content (revision + 1); ``NOOP`` is never written;
``SUPERSEDE`` is written only when a human approved that exact verdict (commit or
dialog), otherwise it is deferred like every related or duplicate candidate, with a
hint to read the other memory first.
Files are written atomically and ``memory.hashes.json`` follows every write.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram.project.hashes import record_hash
from engram.project.layout import Layout
from engram.project.memory_file import FOLDERS, Memory, render_memory
from engram.project.proposals import Candidate, Verdict

__all__ = ["Outcome", "write_candidates", "write_memory"]


@dataclass
class Outcome:
    written: list[dict[str, Any]] = field(default_factory=list)
    deferred: list[dict[str, Any]] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return {"written": self.written, "deferred": self.deferred}


def write_memory(layout: Layout, memory: Memory, folder: str | None = None) -> Path:
    """Write one memory file atomically and record its hash."""
    directory = layout.folder(folder or FOLDERS[memory.type])
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{memory.id}.md"
    text = render_memory(memory)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    if folder != "working":
        record_hash(layout, path, text)
    return path


def _updated(existing: Memory, candidate: Candidate) -> Memory:
    fresh = candidate.memory()
    today = dt.date.today().isoformat()
    title_line = f"# {existing.title}\n"
    content = fresh.body.split("\n", 2)[2] if fresh.body.startswith("# ") else fresh.body
    body = title_line + "\n" + content.lstrip("\n")
    return Memory(
        existing.id,
        existing.type,
        existing.scope,
        existing.title,
        body,
        {
            **existing.fields,
            "revision": existing.revision + 1,
            "updated": today,
            "last_confirmed": today,
        },
    )


def write_candidates(
    layouts: dict[str, Layout],
    memories: dict[str, Memory],
    approved: list[tuple[int, Candidate, Verdict, Verdict]],
    human_approved_verdicts: bool,
) -> Outcome:
    """Write ``(number, candidate, frozen verdict, recomputed verdict)`` entries.

    A candidate whose verdict changed since the proposal is deferred: the human
    approved (or forced) the verdict shown, not the new one. Two candidates that
    would write the same id are never both written: the later one is deferred.
    """
    outcome = Outcome()
    taken: set[tuple[str, str]] = set()
    for number, candidate, frozen, now in approved:
        entry = {"number": number, "verdict": now.line()}
        own_id = now.target if now.kind == "UPDATE" else candidate.memory().id
        own_scope = memories[own_id].scope if now.kind == "UPDATE" else candidate.scope
        reason = _deferral(now, frozen, human_approved_verdicts, (own_scope, own_id) in taken)
        if reason is not None:
            hint = f"engram load --id {now.target or own_id}"
            outcome.deferred.append({**entry, "reason": reason, "hint": hint})
            continue
        if now.kind in ("ADD", "SUPERSEDE") and _occupied(layouts[own_scope], candidate):
            outcome.deferred.append(
                {
                    **entry,
                    "reason": "a file with this id exists (invalid?)",
                    "hint": "engram status",
                }
            )
            continue
        taken.add((own_scope, own_id))
        if now.kind == "UPDATE":
            target = memories[now.target]
            layout = layouts[target.scope]
            path = write_memory(layout, _updated(target, candidate))
            outcome.written.append({**entry, "id": now.target, "file": layout.relative(path)})
        else:
            outcome.written.append({**entry, **_add(layouts, memories, candidate, now)})
    return outcome


def _occupied(layout: Layout, candidate: Candidate) -> bool:
    memory = candidate.memory()
    return (layout.folder(FOLDERS[memory.type]) / f"{memory.id}.md").exists()


def _deferral(now: Verdict, frozen: Verdict, human: bool, taken: bool) -> str | None:
    if now.kind == "NOOP":
        return "duplicate"
    if taken:
        return "same id as an earlier candidate of this proposal"
    if now != frozen:
        return "verdict changed since the proposal"
    if now.kind == "SUPERSEDE" and not human:
        return "related"
    return None


def _add(
    layouts: dict[str, Layout], memories: dict[str, Memory], candidate: Candidate, verdict: Verdict
) -> dict[str, Any]:
    memory = candidate.memory()
    if verdict.kind == "SUPERSEDE":
        old = memories[verdict.target]
        memory = memory.with_fields(supersedes=[old.id])
        write_memory(
            layouts[old.scope], old.with_fields(lifecycle="superseded", superseded_by=memory.id)
        )
    layout = layouts[memory.scope]
    path = write_memory(layout, memory)
    return {"id": memory.id, "file": layout.relative(path)}
