"""What project memory's calls return, each with its data and its own words.

Every result renders its human text (:meth:`text`) and its JSON data (:meth:`data`,
which carries the same text as ``text``). The command line prints one or the other
(``--json``); an MCP tool puts the text in ``content[0].text``, the JSON envelope in
``structuredContent`` and its copy after the text. So both faces say the same thing in
the same words, and neither adapter writes a sentence of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from engram.project.approvals import Pending
from engram.project.proposals import DEFAULT_QUERY_LEVEL, Candidate, Verdict

__all__ = [
    "RELOAD",
    "Found",
    "Initialized",
    "LoadResult",
    "NoteSaved",
    "Outcome",
    "Promoted",
    "Proposal",
    "Routed",
    "SessionSaved",
    "Settings",
    "Status",
    "Verification",
    "plural",
    "stale_mark",
]

#: What an agent does after the memory that applies changed.
RELOAD: Final = (
    "Agents: re-run engram_load for the current task and replace the memory loaded before."
)


def plural(count: int, one: str, many: str | None = None) -> str:
    """``1 candidate``, ``2 candidates``."""
    return f"{count} {one if count == 1 else many or one + 's'}"


def stale_mark(entry: dict[str, Any]) -> str:
    """`` [stale: src/x.py changed since 2026-12-01]`` for an entry whose memory's files
    moved (its ``stale``: :meth:`engram.project.staleness.StaleMemory.entry`), else ``""``."""
    stale = entry.get("stale")
    return f" [stale: {stale['summary']}]" if stale else ""


@dataclass(frozen=True)
class Found:
    """``search``: entries best first (a superseded memory after the memory that
    replaced it, which its ``superseded_by`` names), and how they were ranked."""

    entries: list[dict[str, Any]]
    ranking: dict[str, Any]
    #: The question's best BM25 score, which each lexical part is a share of (with
    #: ``explain``; not in the data: the review console writes the sum out).
    best_bm25: float = 0.0

    def text(self) -> str:
        lines = [
            f"{e['score']:.3f}  {e['id']} ({e['type']}): {e['title']}"
            + (f" [superseded by {e['superseded_by']}]" if "superseded_by" in e else "")
            + stale_mark(e)
            for e in self.entries
        ]
        return "\n".join(lines) or "no match"

    def data(self) -> dict[str, Any]:
        return {"entries": self.entries, "ranking": self.ranking, "text": self.text()}


@dataclass(frozen=True)
class Routed:
    """``route``: the memories a query routes to, in load order."""

    entries: list[dict[str, Any]]

    def text(self) -> str:
        lines = [f"{e['id']} ({e['type']}, {e['how']})" + stale_mark(e) for e in self.entries]
        return "\n".join(lines) or "no memory routes"

    def data(self) -> dict[str, Any]:
        return {"entries": self.entries, "text": self.text()}


@dataclass(frozen=True)
class Verification:
    """``verify``: each memory file against ``memory.hashes``."""

    files: list[dict[str, str]]
    #: The scopes whose ``memory.hashes`` holds Git's conflict markers (read as both
    #: sides' records, which is what Git's union merge would have kept).
    with_markers: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(entry["status"] == "ok" for entry in self.files)

    def text(self) -> str:
        lines = [f"{entry['status']}: {entry['path']}" for entry in self.files]
        if not self.ok:
            lines.append(
                "a memory file changed outside engram (edited by hand, or a merge conflict in"
                " it resolved by hand): review it, then `engram adopt --yes` records every"
                " file listed, or `engram adopt PATH` one (`git checkout -- PATH` restores one"
                " instead); commit memory.hashes with them"
            )
        if self.with_markers:
            lines.append(
                "memory.hashes holds Git's conflict markers (merged without its union"
                " attribute); engram reads both sides: `engram adopt --yes` writes it"
                " without them, then `git add` it"
            )
        return "\n".join(lines) or "no memory files"

    def data(self) -> dict[str, Any]:
        return {"files": self.files, "ok": self.ok, "text": self.text()}


@dataclass(frozen=True)
class Status:
    """``status``: the health and counters of a project's memory."""

    version: str
    root: str
    memories: dict[str, int]
    notes: int
    invalid_files: int
    hash_mismatches: int
    roles: list[str]
    rule_variant: str
    #: Memories whose recorded files moved (``engram stale``); not a health problem.
    stale: int = 0

    @property
    def healthy(self) -> bool:
        return not self.invalid_files and not self.hash_mismatches

    def text(self) -> str:
        counts = self.memories
        text = (
            f"engram {self.version} in {self.root}: {plural(counts['rule'], 'rule')},"
            f" {plural(counts['skill'], 'skill')}, {counts['knowledge']} knowledge,"
            f" {plural(self.notes, 'note')}; {plural(self.invalid_files, 'invalid file')},"
            f" {plural(self.hash_mismatches, 'hash problem')}"
        )
        if self.invalid_files:
            text += "\n`engram doctor` names the invalid files and what is wrong in each"
        if self.hash_mismatches:
            text += (
                "\n`engram verify` lists the files with hash problems;"
                " `engram adopt PATH` records a reviewed edit"
            )
        if self.stale:
            text += (
                f"\n{plural(self.stale, 'memory', 'memories')}"
                f" {'stands' if self.stale == 1 else 'stand'} on files that changed since"
                " they were recorded: `engram stale` lists them"
            )
        return text

    def data(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "root": self.root,
            "memories": self.memories,
            "notes": self.notes,
            "invalid_files": self.invalid_files,
            "hash_mismatches": self.hash_mismatches,
            "roles": self.roles,
            "rule_variant": self.rule_variant,
            "stale": self.stale,
            "healthy": self.healthy,
            "text": self.text(),
        }


@dataclass
class Outcome:
    """What a write did: each candidate written or deferred (with the reason and the
    next step)."""

    written: list[dict[str, Any]] = field(default_factory=list)
    deferred: list[dict[str, Any]] = field(default_factory=list)

    def text(self) -> str:
        lines = [f"wrote {e['id']} ({e['verdict']}) to {e['file']}" for e in self.written]
        lines += [
            f"deferred {e['number']} ({e['verdict']}): {e['reason']}; {e['hint']}"
            for e in self.deferred
        ]
        return "\n".join(lines) or "nothing to write"

    def data(self) -> dict[str, Any]:
        return {"written": self.written, "deferred": self.deferred, "text": self.text()}


@dataclass(frozen=True)
class Settings:
    """``set-role`` and ``set-rule-variant``: the configuration now (``changed``: the
    call changed what loads show)."""

    roles: list[str]
    rule_variant: str
    changed: str = ""

    def text(self) -> str:
        if self.changed == "roles":
            return f"roles: {', '.join(self.roles) or '(none)'}. {RELOAD}"
        if self.changed == "rule_variant":
            return f"rule variant: {self.rule_variant}. {RELOAD}"
        return f"rule variant: {self.rule_variant}"

    def data(self) -> dict[str, Any]:
        return {"roles": self.roles, "variant": self.rule_variant, "text": self.text()}


@dataclass(frozen=True)
class NoteSaved:
    """A working note written."""

    id: str
    file: str
    valid_until: str

    def text(self) -> str:
        return f"noted {self.id} in {self.file} until {self.valid_until}"

    def data(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "file": self.file,
            "valid_until": self.valid_until,
            "saved": True,
            "text": self.text(),
        }


@dataclass(frozen=True)
class Promoted:
    """A working note made durable."""

    note_id: str
    id: str
    file: str

    def text(self) -> str:
        return f"promoted {self.note_id} to {self.id} in {self.file}"

    def data(self) -> dict[str, Any]:
        return {"note_id": self.note_id, "id": self.id, "file": self.file, "text": self.text()}


@dataclass(frozen=True)
class Initialized:
    """``init``: the memory folder and what was created in it."""

    base: str
    created: list[str]

    def text(self) -> str:
        made = f"created {', '.join(self.created)}" if self.created else "already there"
        return f"engram memory in {self.base} ({made})"

    def data(self) -> dict[str, Any]:
        return {"base": self.base, "created": self.created, "text": self.text()}


@dataclass
class LoadResult:
    """What ``engram_load`` returns: the packed memory (its text is its words)."""

    packed: str
    selected_keys: list[str]
    body_keys: list[str]
    card_ids: list[str]
    omitted_ids: list[str]
    tokens: int
    budget_tokens: int | None
    explain: list[dict[str, Any]] = field(default_factory=list)
    #: Whether the caller asked why each memory was chosen (``explain`` in the data).
    explained: bool = False
    #: With ``explained``, the cosine of each memory the semantic channel found close to
    #: the task (not in the data: the review console says it in words).
    close: dict[str, float] = field(default_factory=dict)
    #: The memories shown whose recorded files moved (``StaleMemory.data``).
    stale: list[dict[str, Any]] = field(default_factory=list)

    def text(self) -> str:
        if not self.explained or not self.explain:
            return self.packed
        return f"{self.packed.rstrip()}\n\n## Why\n" + "\n".join(
            _why(entry) for entry in self.explain
        )

    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "selected_keys": self.selected_keys,
            "body_keys": self.body_keys,
            "card_ids": self.card_ids,
            "omitted_ids": self.omitted_ids,
            "tokens": self.tokens,
            "budget_tokens": self.budget_tokens,
            "text": self.packed,
        }
        if self.explained:
            data["explain"] = self.explain
        if self.stale:
            data["stale"] = self.stale
        return data


def _why(entry: dict[str, Any]) -> str:
    """One line of ``engram load --explain``: a memory, whether it was loaded, and why."""
    sure = f"confidence {entry['confidence']:.2f}" if "confidence" in entry else ""
    if entry["chosen"]:
        terms = ", ".join(entry.get("terms", []))
        found = f"{entry['how']}" + (f" on {terms}" if terms else "")
        return f"- loaded {entry['id']}: {found}" + (f"; {sure}" if sure else "")
    return f"- omitted {entry['id']}: {entry['reason']}" + (f" ({sure})" if sure else "")


@dataclass(frozen=True)
class Proposal:
    """Candidates with their verdicts and the numbered preview (nothing written).

    ``query_level`` is the depth of the related-memory comparison the verdicts were
    computed with; a write recomputes them at the same depth, so what is written is
    judged exactly as what was shown.
    """

    kind: str
    scope: str
    candidates: list[Candidate]
    verdicts: list[Verdict]
    preview: str
    query_level: int = DEFAULT_QUERY_LEVEL

    def pending(self) -> Pending:
        return Pending(
            self.kind,
            [candidate.to_json() for candidate in self.candidates],
            [{"kind": v.kind, "target": v.target} for v in self.verdicts],
            self.scope,
            self.query_level,
        )


@dataclass(frozen=True)
class SessionSaved:
    """What ``engram save-session`` shows: the preview, then what was written (or that it
    was a dry run)."""

    proposal: Proposal
    outcome: Outcome | None

    def text(self) -> str:
        if self.outcome is None:
            return self.proposal.preview + "\n\n(dry run: nothing written; add --force to write)"
        return self.proposal.preview + "\n\n" + self.outcome.text()

    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "preview": self.proposal.preview,
            "verdicts": [verdict.line() for verdict in self.proposal.verdicts],
            "written": [] if self.outcome is None else self.outcome.written,
            "deferred": [] if self.outcome is None else self.outcome.deferred,
            "dry_run": self.outcome is None,
        }
        return {**data, "text": self.text()}
