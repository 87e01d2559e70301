"""Proposals: candidate memories, their deterministic verdicts and the numbered preview.

Candidates arrive as ``engram_save`` text or as lines of the upstream grammar::

    TYPE: rule|skill|workflow|knowledge | TEXT: ... [| CONTEXT: ...] [| ORIGIN: ...]
    [| TRIGGERS: a,b] [| DEPENDS_ON: id] [| LEVEL: advanced] [| UPDATE: id] [| PARENT: id,id]
    [| SOURCE_FILES: src/a.py,docs/b.md]

Each candidate gets one verdict, computed only from the candidate and the current
memory files, so the same inputs always give the same verdicts:

- ``NOOP duplicate of <id>``: a memory already says exactly this (same normalized
  content: case, spacing and punctuation aside);
- ``UPDATE <id>``: ``UPDATE:`` names an existing memory, or one has the same id;
- ``SUPERSEDE <id>``: a memory of the same type is closely related (word-set
  Jaccard similarity of at least :data:`RELATED_SIMILARITY` among the
  ``query_level`` best BM25 matches): the candidate would replace it;
- ``ADD``: otherwise.

Candidates holding credential-like text are refused before any preview.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from engram.errors import CandidateError, SecretRefused
from engram.project.limits import MAX_CANDIDATE_TEXT
from engram.project.memory_file import TYPES, Memory, new_memory, title_for

__all__ = [
    "DEFAULT_QUERY_LEVEL",
    "RELATED_SIMILARITY",
    "Candidate",
    "CandidateError",
    "SecretRefused",
    "Verdict",
    "parse_candidate_lines",
    "preview",
    "refuse_secrets",
    "verdict_for",
]

RELATED_SIMILARITY: Final = 0.6
DEFAULT_QUERY_LEVEL: Final = 8
_FIELDS: Final = (
    "TYPE",
    "TEXT",
    "CONTEXT",
    "ORIGIN",
    "TRIGGERS",
    "DEPENDS_ON",
    "LEVEL",
    "UPDATE",
    "PARENT",
    "SOURCE_FILES",
)


@dataclass(frozen=True)
class Candidate:
    """One proposed memory."""

    type: str
    text: str
    context: str = ""
    origin: str = ""
    triggers: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    level: str = ""
    update: str = ""
    parent: tuple[str, ...] = ()
    scope: str = "workspace"
    roles: tuple[str, ...] = ()
    #: Files the memory stands on, given explicitly (``SOURCE_FILES``), relative to the
    #: project's root; the ones its text names are found when it is written.
    source_files: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        # ``source_files`` only when given: a proposal stored before the field existed
        # and one without it are the same JSON (and the same digest).
        return {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in self.__dict__.items()
            if key != "source_files" or value
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Candidate:
        values: dict[str, Any] = {}
        for key, value in data.items():
            values[key] = tuple(value) if isinstance(value, list) else value
        return cls(**values)

    def memory(self) -> Memory:
        fields: dict[str, Any] = {}
        if self.triggers:
            fields["triggers"] = list(self.triggers)
        if self.depends_on:
            fields["depends_on"] = list(self.depends_on)
        if self.parent:
            fields["parent"] = list(self.parent)
        if self.level:
            fields["level"] = self.level
        if self.roles:
            fields["role"] = list(self.roles)
        return new_memory(
            self.type,
            self.text,
            scope=self.scope,
            context=self.context,
            origin=self.origin,
            fields=fields,
        )


@dataclass(frozen=True)
class Verdict:
    kind: str
    target: str = ""

    def line(self) -> str:
        if self.kind == "NOOP":
            return f"NOOP duplicate of {self.target}"
        return f"{self.kind} {self.target}".strip()


def _list(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def parse_candidate_lines(
    text: str, scope: str = "workspace", roles: tuple[str, ...] = ()
) -> list[Candidate]:
    """Candidates from grammar lines; blank lines and ``#`` comments are ignored."""
    if len(text) > MAX_CANDIDATE_TEXT:
        raise CandidateError(
            f"the candidate lines are {len(text):,} characters, more than the"
            f" {MAX_CANDIDATE_TEXT:,} one proposal takes: propose them in smaller batches"
        )
    candidates = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        values: dict[str, str] = {}
        for part in re.split(r"\s+\|\s+", line.strip()):
            key, sep, value = part.partition(":")
            key = key.strip().upper()
            if not sep or key not in _FIELDS:
                # Never echo the part: it may hold exactly what must not be repeated.
                fields = ", ".join(_FIELDS)
                raise CandidateError(f"line {number}: expected FIELD: value with FIELD in {fields}")
            values[key] = value.strip()
        candidates.append(_candidate(values, number, scope, roles))
    if not candidates:
        raise CandidateError("no candidates: write one 'TYPE: ... | TEXT: ...' line per memory")
    return candidates


def _candidate(
    values: dict[str, str], number: int, scope: str, roles: tuple[str, ...]
) -> Candidate:
    kind = values.get("TYPE", "").lower()
    kind = "skill" if kind == "workflow" else kind
    if kind not in TYPES:
        # Never echo the value: it may hold exactly what must not be repeated.
        glued = [f for f in _FIELDS if re.search(rf"\b{f}\s*:", values.get("TYPE", ""), re.I)]
        hint = (
            f"; a ' | ' seems to be missing before {glued[0]}: (fields are separated by ' | ')"
            if glued
            else ""
        )
        raise CandidateError(
            f"line {number}: TYPE must be rule, skill, workflow or knowledge{hint}"
        )
    if not values.get("TEXT"):
        raise CandidateError(f"line {number}: TEXT is required")
    return Candidate(
        type=kind,
        text=values["TEXT"],
        context=values.get("CONTEXT", ""),
        origin=values.get("ORIGIN", ""),
        triggers=_list(values.get("TRIGGERS", "")),
        depends_on=_list(values.get("DEPENDS_ON", "")),
        level=values.get("LEVEL", ""),
        update=values.get("UPDATE", ""),
        parent=_list(values.get("PARENT", "")),
        scope=scope,
        roles=roles,
        source_files=_list(values.get("SOURCE_FILES", "")),
    )


def refuse_secrets(candidates: list[Candidate]) -> None:
    """Refuse (before any preview) candidates holding credential-like text."""
    from engram.safety.disguise import contains_disguised_secret
    from engram.safety.secrets import find_secrets

    for number, candidate in enumerate(candidates, start=1):
        text = "\n".join(
            [
                candidate.text,
                candidate.context,
                candidate.origin,
                candidate.level,
                candidate.update,
                *candidate.triggers,
                *candidate.depends_on,
                *candidate.parent,
                *candidate.roles,
                *candidate.source_files,
            ]
        )
        findings = find_secrets(text)
        if findings:
            kinds = ", ".join(sorted({finding.kind for finding in findings}))
            raise SecretRefused(f"candidate {number} holds credential-like content ({kinds})")
        read_alone = [candidate.origin, *candidate.triggers, *candidate.roles]
        if contains_disguised_secret([candidate.text, candidate.context], alone=read_alone):
            raise SecretRefused(
                f"candidate {number} holds credential-like content"
                " (disguised: encoded, spaced, split or in look-alike letters)"
            )


def _same_title(one: str, other: str) -> bool:
    return " ".join(one.casefold().split()) == " ".join(other.casefold().split())


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def normalized(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _content(memory: Memory) -> str:
    content = memory.section("Content") or memory.body
    lines = [
        line.removeprefix("- ")
        for line in content.splitlines()
        if not line.startswith("- Context:")
    ]
    return "\n".join(lines)


def verdict_for(
    candidate: Candidate,
    memories: dict[str, Memory],
    related: list[str],
) -> Verdict:
    """The verdict of one candidate; ``related`` are BM25 matches, best first."""
    if candidate.update:
        if candidate.update not in memories:
            shown = (
                f" {candidate.update!r}"
                if re.fullmatch(r"[a-z0-9-]{1,128}", candidate.update)
                else ""
            )
            raise CandidateError(
                f"UPDATE names a memory id{shown} that does not exist"
                " (engram search finds the id to update; leave UPDATE out to add a new memory)"
            )
        if memories[candidate.update].tier == "working":
            raise CandidateError("a note becomes durable only through `engram promote`")
        return Verdict("UPDATE", candidate.update)
    text = normalized(candidate.text)
    for memory_id in sorted(memories):
        if (
            memories[memory_id].tier != "working"
            and normalized(_content(memories[memory_id])) == text
        ):
            return Verdict("NOOP", memory_id)
    own = candidate.memory()
    taken = memories.get(own.id)
    if taken is not None and taken.tier != "working":
        # An id is the slug of a title: only the same title (case and spacing aside)
        # updates in place; another title that slugs alike must not replace it.
        if _same_title(taken.title, own.title):
            return Verdict("UPDATE", own.id)
        raise CandidateError(
            f"its id {own.id!r} belongs to another memory ({taken.title!r}): write"
            f" 'UPDATE: {own.id}' to change that memory, or reword the first line"
        )
    words = _words(candidate.text)
    for memory_id in related:
        other = memories.get(memory_id)
        if other is None or other.type != candidate.type or other.tier == "working":
            continue
        theirs = _words(_content(other))
        if words and theirs and len(words & theirs) / len(words | theirs) >= RELATED_SIMILARITY:
            return Verdict("SUPERSEDE", memory_id)
    return Verdict("ADD")


def preview(candidates: list[Candidate], verdicts: list[Verdict]) -> str:
    """Deterministic numbered preview, one block per candidate."""
    out = []
    for number, (candidate, verdict) in enumerate(zip(candidates, verdicts, strict=True), 1):
        memory = candidate.memory()
        title = title_for(candidate.text, candidate.type)
        out.append(f"{number}. Verdict: {verdict.line()}")
        out.append(f"   Type: {candidate.type} | Id: {memory.id} | Scope: {candidate.scope}")
        out.append(f"   Title: {title}")
        out.append(f"   Text: {' '.join(candidate.text.split())}")
        if candidate.context:
            out.append(f"   Context: {' '.join(candidate.context.split())}")
        if candidate.source_files:
            out.append(f"   Source files: {', '.join(candidate.source_files)}")
    return "\n".join(out)
