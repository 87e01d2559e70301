"""The files a memory stands on: found in its text, given explicitly, recorded with their hashes.

When engram writes a workspace memory (a commit, ``save-session --force``, an approval,
``engram adopt``, ``engram reconfirm``), it records in ``source_files`` the repository
files the memory names and in ``source_hashes``, item for item, each file's Git blob id
(:func:`engram.project.repository.blob_id`), with ``last_verified`` set to the day. A
file counts when its path, relative to the project's root, is written in the memory's
title or body (``src/payments/retry.py``, ```src/x.py:42```, ``docs/a.md#L10``, ``./Makefile``)
or given in a candidate's ``SOURCE_FILES`` field, and it is a regular file of the
repository that Git does not ignore (:class:`engram.project.repository.Repository`).

A word is read as a path only when it holds a ``/`` or ends in an extension
(``retry.py``): ``make`` or ``src`` never are, even where such a file exists. Global
memories and working notes record nothing: a global memory belongs to no repository,
and a note lives a week. A memory whose text names no file gets no field at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Final

from engram.errors import CandidateError
from engram.project.frontmatter import Value, render_frontmatter
from engram.project.memory_file import Memory
from engram.project.repository import Repository, file_blob_id

__all__ = [
    "MAX_SOURCE_FILES",
    "cited_paths",
    "grounded",
    "recorded_sources",
    "recorded_well",
    "refuse_sources",
    "rewritten_fields",
    "with_recorded_sources",
]

#: At most this many files are recorded for one memory (the first ones named).
MAX_SOURCE_FILES: Final = 32
#: A Git blob id, as ``source_hashes`` records it.
_BLOB: Final = re.compile(r"[0-9a-f]{40}")
#: A path-like word, with an optional line anchor (``:42``, ``:42-50``, ``#L10``,
#: ``#L10-L20``) that is not part of the path. It starts where no path character is
#: before it, so the host and path of a URL (``https://x.org/a.py``) are never one.
_WORD: Final = re.compile(
    r"(?<![\w./:@~%+\\-])((?:\.{1,2}/)*[\w-][\w.+-]*(?:/[\w.+-]+)*)"
    r"(?::\d+(?:[-:]\d+)?|#L\d+(?:-L?\d+)?)?"
)
_EXTENSION: Final = re.compile(r"[^/]\.[A-Za-z0-9]{1,10}$")


def cited_paths(text: str) -> list[str]:
    """The path-like words of ``text``, in order, once each (not checked on disk)."""
    found: dict[str, None] = {}
    for match in _WORD.finditer(text):
        word = match.group(1).rstrip(".")
        if "/" in word or _EXTENSION.search(word):
            found.setdefault(word, None)
    return list(found)


def _text_of(memory: Memory) -> str:
    return f"{memory.title}\n{memory.body}"


def recorded_sources(memory: Memory) -> list[tuple[str, str]]:
    """The ``(path, blob id)`` pairs a memory recorded (a path without a hash is left
    out: there is nothing to compare it with)."""
    files, hashes = memory.items("source_files"), memory.items("source_hashes")
    return [(path, digest) for path, digest in zip(files, hashes, strict=False) if path]


def refuse_sources(paths: Sequence[str], repository: Repository) -> None:
    """Refuse explicit ``SOURCE_FILES`` that name no file of the repository, or one Git
    ignores (``CandidateError``), before anything is proposed."""
    for path in paths:
        shown = repr(path) if re.fullmatch(r"[\w./+-]{1,200}", path) else "a path"
        if repository.inside(path) is None:
            raise CandidateError(
                f"SOURCE_FILES names {shown}, which is no file in the repository"
                f" ({repository.root}): give paths relative to it, of files that exist"
            )
        if repository.ignored([repository.normal(path)]):
            raise CandidateError(
                f"SOURCE_FILES names {shown}, which Git ignores: a memory stands only on"
                " files the repository shares; leave it out"
            )
    if len(paths) > MAX_SOURCE_FILES:
        raise CandidateError(
            f"SOURCE_FILES names more than {MAX_SOURCE_FILES} files: keep the ones it stands on"
        )


def grounded(
    memory: Memory,
    repository: Repository,
    today: str,
    explicit: Iterable[str] = (),
    keep: Iterable[str] = (),
) -> Memory:
    """``memory`` with the files it names (in its text, in ``explicit``, and of ``keep``,
    the files it recorded before) recorded as they are now, and ``last_verified`` today.

    A workspace memory that names no file keeps its fields as they are (none are added);
    one that recorded files before and names none now loses them."""
    if memory.scope != "workspace" or memory.tier == "working":
        return memory
    chosen: dict[str, str] = {}
    for word in [*explicit, *cited_paths(_text_of(memory)), *keep]:
        if len(chosen) >= MAX_SOURCE_FILES:
            break
        path = repository.inside(word)
        normal = repository.normal(word)
        if path is None or normal in chosen:
            continue
        try:
            chosen[normal] = file_blob_id(path)
        except OSError:
            continue
    ignored = repository.ignored(list(chosen))
    files = [path for path in chosen if path not in ignored]
    if not files:
        if "source_files" not in memory.fields and "source_hashes" not in memory.fields:
            return memory
        fields = {
            key: value
            for key, value in memory.fields.items()
            if key not in ("source_files", "source_hashes")
        }
        return replace(memory, fields=fields)
    changes: dict[str, Value] = {
        "source_files": files,
        "source_hashes": [chosen[path] for path in files],
        "last_verified": today,
    }
    return memory.with_fields(**changes)


def recorded_well(memory: Memory, repository: Repository) -> bool:
    """Whether a memory's recorded files are as engram writes them: one Git blob id per
    path, each path one a memory may record (relative, inside the root, not under
    ``.git`` or ``.agents/.engram``, not ignored by Git), each once."""
    files, hashes = memory.items("source_files"), memory.items("source_hashes")
    if len(files) != len(hashes) or len(files) > MAX_SOURCE_FILES:
        return False
    if not all(_BLOB.fullmatch(digest) for digest in hashes):
        return False
    if not all(repository.recordable(path) for path in files):
        return False
    normal = [repository.normal(path) for path in files]
    return len(set(normal)) == len(normal) and not repository.ignored(normal)


def with_recorded_sources(text: str, memory: Memory, repository: Repository, today: str) -> str:
    """The text of a hand-written memory file with the files it names recorded
    (``engram adopt``): only the ``source_files``, ``source_hashes`` and
    ``last_verified`` lines change, every other line stays as the person wrote it. A
    memory that records its files well already (:func:`recorded_well`), or names no
    file, is returned as it is (re-recording is ``engram reconfirm``'s, after a person
    checked). Hand-edited lists that engram would never write (a path out of the root,
    under ``.git``, ignored by Git or unprintable, a hash that is no blob id, lists of
    unequal length) are recorded anew from the memory's text and the listed paths that
    may be recorded, as for a new memory: the adoption's diff shows it."""
    if memory.scope != "workspace" or memory.tier == "working":
        return text
    if memory.items("source_hashes") and recorded_well(memory, repository):
        return text
    listed = [path for path in memory.items("source_files") if repository.recordable(path)]
    found = grounded(memory, repository, today, listed)
    if not found.items("source_files"):
        if "source_files" in memory.fields or "source_hashes" in memory.fields:
            return rewritten_fields(text, {"source_files": None, "source_hashes": None})
        return text
    keys = ("source_files", "source_hashes", "last_verified")
    return rewritten_fields(text, {key: found.fields[key] for key in keys})


def rewritten_fields(text: str, changes: dict[str, Value | None]) -> str:
    """``text`` (a memory file) with the frontmatter keys of ``changes`` written anew at
    the end of its frontmatter (``None``: removed); every other line kept byte for byte."""
    lines = text.replace("\r\n", "\n").split("\n")
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    kept: list[str] = []
    skipping = False
    for line in lines[1:end]:
        key = line.split(":", 1)[0] if not line[:1].isspace() and ":" in line else ""
        if key:
            skipping = key in changes
        elif skipping and line.strip().startswith("-"):
            continue
        if not skipping:
            kept.append(line)
    present = [(key, value) for key, value in changes.items() if value is not None]
    added = render_frontmatter(present).split("\n")[1:-2] if present else []
    return "\n".join([lines[0], *kept, *added, *lines[end:]])
