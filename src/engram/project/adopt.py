"""``engram adopt``: a person's own edits and imported notes, reviewed into memory.

engram records the SHA-256 of every memory file it writes (``memory.hashes``), so an
edit made by hand (or a merge conflict in a memory file resolved by hand) shows up in
``verify`` as a hash problem. Adopting a file checks it and records it as reviewed:

- an **edited** memory file (its hash differs from the one recorded) is parsed: a valid
  one has its new hash recorded; an invalid one is reported with its line and reason;
- a **new** valid memory file (no hash recorded) is recorded the same way;
- an **imported** Markdown note (no frontmatter) in ``rules/``, ``skills/`` or
  ``knowledge/`` becomes a memory file: frontmatter is added (the type from its folder,
  the id from its title, ``source: imported``) and the file is renamed to its id;
- a **removed** file (recorded, gone from the folder) is recorded as removed.

Recording anything also writes ``memory.hashes`` as engram writes it (one line per
file, upstream's ``memory.hashes.json`` replaced); ``adopt --yes`` does that alone
when it is all there is to do, after a merge.

A file holding credential-like text is never adopted. The plan (:func:`plan_adoption`)
shows each change, as a unified diff where engram rewrites the file, before anything is
written; :func:`adopt` applies it, all files together (:class:`engram.project.commit.Changes`).
"""

from __future__ import annotations

import datetime as dt
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram.errors import FrontmatterError, HashesCorrupt, ProjectError
from engram.project.hashes import REMOVED, Hashes, digest_text, read_hashes, tidy
from engram.project.layout import MEMORY_FOLDERS, Layout
from engram.project.memory_file import (
    FOLDERS,
    Memory,
    new_memory_fields,
    parse_memory,
    render_memory,
    slugify,
    with_text_digest,
)
from engram.project.repository import Repository
from engram.project.results import plural
from engram.project.sources import with_recorded_sources

__all__ = ["Adoption", "AdoptionPlan", "plan_adoption", "record_adoption"]

_TYPE_OF_FOLDER = {folder: memory_type for memory_type, folder in FOLDERS.items()}


@dataclass(frozen=True)
class Adoption:
    """One file's change: ``edited``, ``new``, ``imported`` or ``removed``, or the
    ``problem`` that keeps it out."""

    path: str
    change: str
    problem: str | None = None
    #: Where an imported note is written (its id's file), when that is not ``path``.
    target: str | None = None
    diff: str = ""
    #: The text recorded (``None``: the record is dropped or nothing is done).
    text: str | None = field(default=None, repr=False)

    def line(self) -> str:
        if self.problem is not None:
            return f"cannot adopt {self.path}: {self.problem}"
        moved = f" as {self.target}" if self.target else ""
        return f"{self.change} {self.path}{moved}"

    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "change": self.change}
        if self.problem is not None:
            data["problem"] = self.problem
        if self.target is not None:
            data["target"] = self.target
        if self.diff:
            data["diff"] = self.diff
        return data


@dataclass(frozen=True)
class AdoptionPlan:
    """What adopting would do (``recorded``: it was done)."""

    items: list[Adoption]
    recorded: bool = False
    #: The hashes file could not be read: adopting writes it anew.
    fresh_hashes: bool = False
    #: Why ``memory.hashes`` is rewritten though no file changed (``legacy``,
    #: ``markers``, ``merged``), or ``""``.
    rewrite: str = ""

    @property
    def adoptable(self) -> list[Adoption]:
        return [item for item in self.items if item.problem is None]

    def text(self) -> str:
        lines: list[str] = []
        if self.fresh_hashes:
            done = "was written anew" if self.recorded else "is written anew with --yes"
            lines.append(f"the recorded hashes could not be read: memory.hashes {done}")
        elif self.rewrite and (self.rewrite != "merged" or not self.items):
            lines.append(_REWRITES[self.rewrite][1 if self.recorded else 0])
        elif not self.items:
            return "nothing to adopt: every memory file matches what engram recorded"
        for item in self.items:
            lines.append(item.line())
            if item.diff:
                lines.append(item.diff.rstrip("\n"))
        count = plural(len(self.adoptable), "file")
        if self.recorded and (self.adoptable or self.fresh_hashes):
            lines.append(f"adopted {count}: recorded as reviewed")
        elif self.adoptable:
            lines.append(f"{count} to adopt: nothing written yet; add --yes to record them")
        refused = len(self.items) - len(self.adoptable)
        if refused:
            lines.append(
                f"{plural(refused, 'file')} left out: fix what is named above and adopt again"
            )
        return "\n".join(lines)

    def data(self) -> dict[str, Any]:
        return {
            "files": [item.data() for item in self.items],
            "recorded": self.recorded,
            "fresh_hashes": self.fresh_hashes,
            "rewrite": self.rewrite,
            "text": self.text(),
        }


#: Why ``memory.hashes`` is rewritten: (what adopting would do, what it did).
_REWRITES = {
    "legacy": (
        "memory.hashes.json (upstream's format) becomes memory.hashes with --yes",
        "memory.hashes.json (upstream's format) became memory.hashes",
    ),
    "markers": (
        "memory.hashes holds Git's conflict markers: --yes writes it without them",
        "memory.hashes was written without Git's conflict markers",
    ),
    "merged": (
        "memory.hashes holds lines a merge left: --yes compacts it to one line per file",
        "memory.hashes was compacted to one line per file",
    ),
}


def plan_adoption(layout: Layout, paths: list[Path] | None) -> AdoptionPlan:
    """What adopting ``paths`` (default: every file whose hash is not the recorded one)
    would change in ``layout``; reads files, writes nothing."""
    try:
        hashes, fresh = read_hashes(layout), False
    except HashesCorrupt as error:
        if paths is not None:
            raise HashesCorrupt(
                f"{error.detail}; with the file unreadable, adopt every file:"
                " `engram adopt` without a PATH"
            ) from error
        hashes, fresh = Hashes(), True
    on_disk = {
        path.relative_to(layout.base).as_posix(): path
        for folder in MEMORY_FOLDERS
        if layout.folder(folder).is_dir()
        for path in sorted(layout.folder(folder).glob("*.md"))
    }
    if paths is None:
        chosen = sorted(set(on_disk) | set(hashes.entries))
    else:
        chosen = [_relative(layout, path) for path in paths]
    # Every id a file holds or this plan gives: an imported note never takes one.
    taken = {Path(relative).stem for relative in on_disk}
    repository = Repository(layout.root)
    items = []
    for relative in chosen:
        item = _plan_one(layout, relative, on_disk.get(relative), hashes, taken, repository)
        if item is not None:
            items.append(item)
    return AdoptionPlan(items, fresh_hashes=fresh, rewrite=_rewrite(layout, hashes, fresh))


def _rewrite(layout: Layout, hashes: Hashes, fresh: bool) -> str:
    if fresh or tidy(layout, hashes):
        return ""
    return "legacy" if hashes.legacy else "markers" if hashes.markers else "merged"


def record_adoption(layout: Layout, plan: AdoptionPlan) -> None:
    """Record what ``plan`` adopts, all files and hashes together."""
    from engram.project.commit import Changes

    changes = Changes(layout)
    if plan.fresh_hashes:
        changes.fresh_hashes(layout)
    changes.rewrite_hashes(layout)
    for item in plan.adoptable:
        path = layout.base / item.path
        if item.change == "removed":
            changes.record(layout, path, None)
        elif item.change == "imported":
            assert item.text is not None
            target = layout.base / (item.target or item.path)
            if target != path:
                changes.delete(layout, path)
            changes.stage_text(layout, target, item.text)
        elif item.diff:  # the files it names recorded in its frontmatter
            assert item.text is not None
            changes.stage_text(layout, path, item.text)
        else:
            changes.record(layout, path, item.text)
    changes.commit()


def _relative(layout: Layout, path: Path) -> str:
    """``path`` (as given, or as ``verify`` prints it: from the memory folder) relative
    to the memory folder."""
    if not path.exists() and (layout.base / path).exists():
        path = layout.base / path
    absolute = path.resolve()
    try:
        relative = absolute.relative_to(layout.base.resolve()).as_posix()
    except ValueError:
        raise ProjectError(
            f"{path} is not in {layout.base}: move it into rules/, skills/ or knowledge/"
            " there, then adopt it"
        ) from None
    if relative.split("/")[0] not in MEMORY_FOLDERS or not relative.endswith(".md"):
        raise ProjectError(
            f"{path}: only Markdown files in rules/, skills/ or knowledge/ can be adopted"
        )
    return relative


def _plan_one(
    layout: Layout,
    relative: str,
    path: Path | None,
    hashes: Hashes,
    taken: set[str],
    repository: Repository,
) -> Adoption | None:
    recorded = hashes.digests(relative)
    if path is None or not path.is_file():
        if REMOVED in hashes.entries.get(relative, ()):
            return None  # engram removed it (a merge may have kept its old hash too)
        if not recorded:
            raise ProjectError(f"{layout.base / relative} does not exist")
        return Adoption(relative, "removed")
    try:
        text: str | None = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and digest_text(text) in recorded:
        return None  # what engram recorded: nothing to adopt
    change = "edited" if recorded else "new"
    try:
        return _checked(relative, path, text, change, taken, repository)
    except _Refused as refused:
        return Adoption(relative, change, problem=str(refused))


class _Refused(Exception):
    """Why a file cannot be adopted, and what to do about it."""


def _checked(
    relative: str,
    path: Path,
    text: str | None,
    change: str,
    taken: set[str],
    repository: Repository,
) -> Adoption:
    if text is None:
        raise _Refused("not UTF-8 text: save it as UTF-8")
    _refuse_secrets(text)
    memory_type = _TYPE_OF_FOLDER[relative.split("/", maxsplit=1)[0]]
    if not _has_frontmatter(text):
        return _imported(relative, path, text, memory_type, taken, repository)
    try:
        memory = parse_memory(text, memory_type)
    except FrontmatterError as error:
        raise _Refused(f"{error.detail}; fix the file, then adopt it") from None
    if memory.id != path.stem:
        raise _Refused(
            f"line {memory.id_line}: the id {memory.id} is not the file name {path.stem}:"
            f" rename the file to {memory.id}.md or change the id"
        )
    grounded = with_recorded_sources(text, memory, repository, dt.date.today().isoformat())
    if grounded == text:
        return Adoption(relative, change, text=text)
    return Adoption(relative, change, diff=_diff(text, grounded, relative, relative), text=grounded)


def _diff(before: str, after: str, old: str, new: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=old,
            tofile=new,
        )
    )


def _imported(
    relative: str,
    path: Path,
    text: str,
    memory_type: str,
    taken: set[str],
    repository: Repository,
) -> Adoption:
    """A Markdown note without frontmatter, as the memory file it becomes; its id is
    the slug of its first heading (outside code fences), else of its file name, with
    the text's digest when that id is taken or has no ASCII letter."""
    lines = text.replace("\r\n", "\n").strip("\n").split("\n")
    heading = _first_heading(lines)
    title = heading or path.stem.replace("-", " ").replace("_", " ").strip().capitalize()
    body = "\n".join(lines) if heading else f"# {title}\n\n" + "\n".join(lines)
    memory_id = slugify(title)
    if (memory_id in taken and memory_id != path.stem) or memory_id == slugify(""):
        memory_id = with_text_digest(memory_id, text)
    taken.add(memory_id)
    fields = new_memory_fields(memory_type, source="imported")
    memory = Memory(memory_id, memory_type, "workspace", title, body + "\n", fields)
    rendered = render_memory(memory)
    rendered = with_recorded_sources(rendered, memory, repository, dt.date.today().isoformat())
    target = f"{relative.split('/', maxsplit=1)[0]}/{memory_id}.md"
    diff = _diff(text, rendered, relative, target)
    return Adoption(
        relative,
        "imported",
        target=None if target == relative else target,
        diff=diff,
        text=rendered,
    )


def _has_frontmatter(text: str) -> bool:
    """A ``---`` line that opens a block of ``key: value`` lines (not a horizontal rule
    at the top of a note)."""
    lines = text.lstrip().replace("\r\n", "\n").split("\n")
    return lines[0].strip() == "---" and len(lines) > 1 and ":" in lines[1]


def _first_heading(lines: list[str]) -> str:
    """The first ``# `` heading outside a fenced code block (``# install`` in a shell
    snippet is not one)."""
    fenced = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            return line[2:].strip()
    return ""


def _refuse_secrets(text: str) -> None:
    from engram.safety.secrets import find_secrets

    findings = find_secrets(text)
    if findings:
        kinds = ", ".join(sorted({finding.kind for finding in findings}))
        raise _Refused(f"it holds credential-like content ({kinds}): remove it first")
