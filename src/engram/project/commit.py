"""Writing approved candidates: the one path ``engram_commit``, the approval dialog and
``engram save-session --force`` share.

Each candidate's verdict is computed again at write time, at the proposal's query
level, and a candidate whose verdict differs from the one shown is deferred: what is
written is always what the preview said. ``ADD`` writes a new file; ``UPDATE``
rewrites the target's content (revision + 1); ``NOOP`` is never written;
``SUPERSEDE`` is written only when a human approved that exact verdict (commit or
dialog), otherwise it is deferred like every related or duplicate candidate, with a
hint to read the other memory first.
The files of one commit (memory files and each root's ``memory.hashes``, compacted
after a merge, with upstream's ``memory.hashes.json`` removed and the project's
``.gitattributes`` completed) change together or not at all
(:class:`engram.durable.FileChanges`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.durable import FileChanges, recover
from engram.project.hashes import compacted, read_hashes, record_hash, render_hashes
from engram.project.layout import Layout, missing_gitattributes
from engram.project.memory_file import FOLDERS, Memory, render_memory
from engram.project.proposals import Candidate, Verdict
from engram.project.repository import Repository
from engram.project.results import Outcome
from engram.project.sources import grounded

__all__ = ["Changes", "Planned", "planned", "recover_commits", "write_candidates"]


class Changes:
    """The files one operation writes, with the hashes they get, committed together.

    The hashes are kept as changes to each root's ``memory.hashes`` and applied to
    the file as it is when the commit holds the roots' locks (so a concurrent writer's
    hashes are never lost), before any memory file is written (so a corrupt hashes
    file stops the operation with nothing changed).
    """

    def __init__(self, journal_root: Layout) -> None:
        self._journal_root = journal_root
        self._files = FileChanges(journal_root.journal)
        #: Per root: each path's new text (``None``: the file is removed).
        self._hashes: dict[Layout, dict[Path, str | None]] = {}
        self._fresh: set[Layout] = set()

    def fresh_hashes(self, layout: Layout) -> None:
        """Write ``layout``'s hashes anew from what this operation records (its file
        could not be read)."""
        self._fresh.add(layout)
        self._hashes.setdefault(layout, {})

    def rewrite_hashes(self, layout: Layout) -> None:
        """Write ``layout``'s hashes even if this operation records nothing (compacted,
        in ``memory.hashes``)."""
        self._hashes.setdefault(layout, {})

    def write_memory(self, layout: Layout, memory: Memory, folder: str | None = None) -> Path:
        """Stage one memory file (and, outside the working tier, its hash)."""
        path = layout.folder(folder or FOLDERS[memory.type]) / f"{memory.id}.md"
        self.stage_text(layout, path, render_memory(memory))
        return path

    def stage_text(self, layout: Layout, path: Path, text: str) -> None:
        """Stage a file's text (and, outside the working tier, its hash)."""
        self._files.write(path, text)
        if path.parent.name != "working":
            self.record(layout, path, text)

    def record(self, layout: Layout, path: Path, text: str | None) -> None:
        """Record the hash of a file as it is (``None``: that it was removed), writing
        no file."""
        self._hashes.setdefault(layout, {})[path] = None if text is None else text

    def delete(self, layout: Layout, path: Path) -> None:
        self._files.delete(path)
        if path.parent.name != "working":
            self.record(layout, path, None)

    def commit(self) -> None:
        for layout in self._hashes:
            if layout != self._journal_root:
                self._files.also_locked.add(layout.journal)
        self._files.commit(self._write_hashes)

    def _write_hashes(self, files: FileChanges) -> None:
        """Under the locks: each root's hashes as they are now (compacted), with this
        operation's, in ``memory.hashes`` (upstream's file, read with them, goes), and
        the lines of the project's ``.gitattributes`` that make Git merge it."""
        for layout, changes in self._hashes.items():
            entries = {} if layout in self._fresh else compacted(layout, read_hashes(layout))
            for path, text in changes.items():
                record_hash(entries, layout, path, text)
            files.write(layout.hashes, render_hashes(entries))
            if layout.legacy_hashes.exists():
                files.delete(layout.legacy_hashes)
            attributes = missing_gitattributes(layout)
            if attributes is not None:
                files.write(layout.gitattributes, attributes)


def recover_commits(layout: Layout) -> None:
    """Finish a commit of ``layout`` that a stopped process left half done."""
    recover(layout.journal, [layout.base, *layout.memory_folders()])


def _updated(existing: Memory, candidate: Candidate, repository: Repository | None) -> Memory:
    """The memory an UPDATE writes: the candidate's content (and origin, when it gives
    one) in place of the existing sections of that name; every other section of the
    file, written by hand or not, stays as it is. The files it stands on (named in it,
    given by the candidate, or recorded before) are recorded as they are now."""
    fresh = candidate.memory()
    today = dt.date.today().isoformat()
    updated = existing.with_section("Content", fresh.section("Content"))
    if fresh.section("Origin"):
        updated = updated.with_section("Origin", fresh.section("Origin"))
    updated = updated.with_fields(
        revision=existing.revision + 1, updated=today, last_confirmed=today
    )
    if repository is None:
        return updated
    previous = existing.items("source_files")
    return grounded(updated, repository, today, candidate.source_files, previous)


def _new(candidate: Candidate, repository: Repository | None) -> Memory:
    """The memory an ADD or a SUPERSEDE writes, with the files it stands on recorded."""
    memory = candidate.memory()
    if repository is None:
        return memory
    return grounded(memory, repository, dt.date.today().isoformat(), candidate.source_files)


@dataclass(frozen=True)
class Planned:
    """What approving one candidate writes, as a person reviews it.

    ``memory``: the memory as approving writes it (a NOOP's: as proposed, written by
    no one); ``after``: its whole file (every field and section, not only the text),
    ``None`` for a NOOP; ``file``: where it is written (``rules/x.md``, a global one
    ``global:rules/x.md``; empty for a NOOP). ``before`` is the file of the memory it
    changes (UPDATE), supersedes (SUPERSEDE: ``marks`` names it, marked superseded and
    kept) or repeats (NOOP), and ``old_file`` where that file is."""

    memory_id: str
    before: str | None
    after: str | None
    memory: Memory
    marks: str | None = None
    file: str = ""
    old_file: str = ""


def planned(
    layouts: dict[str, Layout],
    memories: dict[str, Memory],
    candidate: Candidate,
    verdict: Verdict,
    repository: Repository | None = None,
) -> Planned:
    """The files approving ``candidate`` under ``verdict`` would write (the same
    construction :func:`write_candidates` uses)."""
    target = memories.get(verdict.target) if verdict.target else None
    old = "" if target is None else _file_of(layouts, target)
    if verdict.kind == "UPDATE" and target is not None:
        updated = _updated(target, candidate, repository)
        return Planned(
            target.id, render_memory(target), render_memory(updated), updated, None, old, old
        )
    memory = _new(candidate, repository) if verdict.kind != "NOOP" else candidate.memory()
    if verdict.kind == "NOOP":
        before = None if target is None else render_memory(target)
        return Planned(verdict.target, before, None, memory, None, "", old)
    if verdict.kind == "SUPERSEDE" and target is not None:
        memory = memory.with_fields(supersedes=[target.id])
        return Planned(
            memory.id,
            render_memory(target),
            render_memory(memory),
            memory,
            target.id,
            _file_of(layouts, memory),
            old,
        )
    return Planned(memory.id, None, render_memory(memory), memory, None, _file_of(layouts, memory))


def _file_of(layouts: dict[str, Layout], memory: Memory) -> str:
    """Where a memory's file is, as the index names it (file names are ids, folders
    types: the catalog refuses any other)."""
    layout = layouts[memory.scope]
    folder = "working" if memory.tier == "working" else FOLDERS[memory.type]
    return layout.relative(layout.folder(folder) / f"{memory.id}.md")


def write_candidates(
    layouts: dict[str, Layout],
    memories: dict[str, Memory],
    approved: list[tuple[int, Candidate, Verdict, Verdict]],
    human_approved_verdicts: bool,
    repository: Repository | None = None,
) -> Outcome:
    """Write ``(number, candidate, frozen verdict, recomputed verdict)`` entries.

    A candidate whose verdict changed since the proposal is deferred: the human
    approved (or forced) the verdict shown, not the new one. Two candidates that
    would write the same id are never both written: the later one is deferred. With
    ``repository``, each memory written records the files it stands on
    (:mod:`engram.project.sources`).
    """
    outcome = Outcome()
    changes = Changes(layouts["workspace"])
    taken: set[tuple[str, str]] = set()
    for number, candidate, frozen, now in approved:
        entry = {"number": number, "verdict": now.line()}
        own_id = now.target if now.kind == "UPDATE" else candidate.memory().id
        own_scope = memories[own_id].scope if now.kind == "UPDATE" else candidate.scope
        deferral = _deferral(now, frozen, human_approved_verdicts, (own_scope, own_id) in taken)
        if deferral is not None:
            reason, hint = deferral
            outcome.deferred.append({**entry, "reason": reason, "hint": hint})
            continue
        if now.kind in ("ADD", "SUPERSEDE") and _occupied(layouts[own_scope], candidate):
            outcome.deferred.append(
                {
                    **entry,
                    "reason": "a file with this id exists and is not a valid memory",
                    "hint": "`engram doctor` says what is wrong with it; fix or remove it",
                }
            )
            continue
        taken.add((own_scope, own_id))
        if now.kind == "UPDATE":
            target = memories[now.target]
            layout = layouts[target.scope]
            path = changes.write_memory(layout, _updated(target, candidate, repository))
            outcome.written.append({**entry, "id": now.target, "file": layout.relative(path)})
        else:
            added = _add(changes, layouts, memories, _new(candidate, repository), now)
            outcome.written.append({**entry, **added})
    changes.commit()
    return outcome


def _occupied(layout: Layout, candidate: Candidate) -> bool:
    memory = candidate.memory()
    return (layout.folder(FOLDERS[memory.type]) / f"{memory.id}.md").exists()


def _deferral(now: Verdict, frozen: Verdict, human: bool, taken: bool) -> tuple[str, str] | None:
    """Why a candidate is not written (a stable phrase) and what to do instead (the
    hint); ``None`` to write it."""
    if now.kind == "NOOP":
        return "duplicate", f"`engram load --id {now.target}` shows the memory that says it"
    if taken:
        return (
            "same id as an earlier candidate of this proposal",
            "merge the two, or give this one a title of its own, and propose it again",
        )
    if now != frozen:
        return (
            "verdict changed since the proposal",
            "propose it again to see the new verdict",
        )
    if now.kind == "SUPERSEDE" and not human:
        return (
            "related",
            f"`engram load --id {now.target}`, then propose it with UPDATE: {now.target}"
            " (or approve the SUPERSEDE through engram_commit)",
        )
    return None


def _add(
    changes: Changes,
    layouts: dict[str, Layout],
    memories: dict[str, Memory],
    memory: Memory,
    verdict: Verdict,
) -> dict[str, Any]:
    if verdict.kind == "SUPERSEDE":
        old = memories[verdict.target]
        memory = memory.with_fields(supersedes=[old.id])
        changes.write_memory(
            layouts[old.scope], old.with_fields(lifecycle="superseded", superseded_by=memory.id)
        )
    layout = layouts[memory.scope]
    path = changes.write_memory(layout, memory)
    return {"id": memory.id, "file": layout.relative(path)}
