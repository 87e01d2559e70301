"""Project memory's entry point: what the ``engram_*`` tools and CLI verbs call.

One :class:`ProjectMemory` per project root. Every call first brings the derived
index up to date with the files (see :mod:`engram.project.catalog`), so a file edited
by hand is seen by the next call.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram.errors import ProjectError, UnknownMemory
from engram.project.approvals import Pending, Proposals
from engram.project.catalog import Catalog
from engram.project.commit import Outcome, write_candidates, write_memory
from engram.project.config import RULE_VARIANTS, Config, load_config, save_config
from engram.project.hashes import verify_hashes
from engram.project.layout import Layout
from engram.project.memory_file import Memory
from engram.project.notes import make_note, promoted
from engram.project.packing import estimate_tokens, pack, render_body
from engram.project.ports import MemoryIndex
from engram.project.proposals import (
    DEFAULT_QUERY_LEVEL,
    Candidate,
    CandidateError,
    Verdict,
    preview,
    refuse_secrets,
    verdict_for,
)
from engram.project.routing import SESSION_QUERY, Routing, route
from engram.project.semantic import ProjectVectors
from engram.search.fusion import FUSION_DEPTH, hybrid, ranking_receipt

__all__ = ["Found", "LoadResult", "ProjectMemory", "Proposal", "UnknownMemory"]

#: How many BM25 hits routing considers before filtering and ordering.
ROUTE_CANDIDATES = 64


@dataclass(frozen=True)
class Found:
    """What ``engram search`` returns: entries best first, and how they were ranked."""

    entries: list[dict[str, Any]]
    ranking: dict[str, Any]


@dataclass
class LoadResult:
    """What ``engram_load`` returns."""

    text: str
    selected_keys: list[str]
    body_keys: list[str]
    card_ids: list[str]
    omitted_ids: list[str]
    tokens: int
    budget_tokens: int | None
    explain: list[dict[str, Any]] = field(default_factory=list)

    def data(self, explain: bool) -> dict[str, Any]:
        data: dict[str, Any] = {
            "selected_keys": self.selected_keys,
            "body_keys": self.body_keys,
            "card_ids": self.card_ids,
            "omitted_ids": self.omitted_ids,
            "tokens": self.tokens,
            "budget_tokens": self.budget_tokens,
            "text": self.text,
        }
        if explain:
            data["explain"] = self.explain
        return data


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


class ProjectMemory:
    """The memory of one project."""

    def __init__(
        self,
        layout: Layout,
        global_layout: Layout,
        index: MemoryIndex,
        catalog: Catalog,
        vectors: ProjectVectors | None = None,
    ) -> None:
        self.layout = layout
        self.global_layout = global_layout
        self.index = index
        self.catalog = catalog
        #: The semantic channel (``None``: lexical only, whatever is installed).
        self.vectors = vectors
        self._cache: tuple[int, dict[str, Memory]] = (-1, {})

    @property
    def layouts(self) -> dict[str, Layout]:
        return {"workspace": self.layout, "global": self.global_layout}

    def config(self) -> Config:
        return load_config(self.layout.config)

    def refresh(self) -> None:
        self.catalog.refresh()

    def close(self) -> None:
        """Stop following the files and building vectors, and close the index."""
        if self.vectors is not None:
            self.vectors.close()
        self.catalog.close()
        self.index.close()

    def problems(self) -> list[tuple[str, str]]:
        """Invalid memory files: ``(path, "line N: reason")``."""
        self.refresh()
        return self.index.problems()

    def _memories(self) -> dict[str, Memory]:
        """Every memory by id, read from the index again only after it changed."""
        version, cached = self._cache
        if version != self.catalog.version:
            cached = {memory.id: memory for memory in self.index.memories()}
            self._cache = (self.catalog.version, cached)
        return cached

    def _nearest(self, query: str, config: Config) -> tuple[str, list[str]] | None:
        """The semantic channel's ranking (model, memory ids), or ``None`` when it does
        not rank (not installed, turned off, not current yet, or a session query)."""
        if self.vectors is None or not config.semantic or not query.strip():
            return None
        if " ".join(query.lower().split()) == SESSION_QUERY:
            return None
        return self.vectors.nearest(query, self.catalog.version)

    def routing(self, query: str, limit: int | None = None, notes: bool = True) -> Routing:
        self.refresh()
        config = self.config()
        hits = self.index.search(query, ROUTE_CANDIDATES)
        nearest = self._nearest(query, config)
        return route(
            self._memories(),
            hits,
            query,
            config.roles,
            limit or config.max_memories,
            notes=notes,
            close=None if nearest is None else nearest[1],
        )

    def load(
        self,
        query: str | None = None,
        *,
        memory_id: str | None = None,
        budget_tokens: int | None = None,
        disclosure: str = "tiered",
        full: bool = False,
        explain: bool = False,
        notes: bool = True,
    ) -> LoadResult:
        """Route and pack memory for a task (or one memory by id, budget aside)."""
        config = self.config()
        if memory_id is not None:
            return self._load_one(memory_id, config, full)
        text = query or ""
        routing = self.routing(text, notes=notes)
        budget = budget_tokens or config.budget_tokens
        selected = [routed.memory for routed in routing.selected]
        header = _header(text, len(selected))
        packed = pack(
            selected, header, budget, disclosure=disclosure, full=full, variant=config.rule_variant
        )
        self.index.count_use(packed.body_keys)
        return LoadResult(
            text=packed.text,
            selected_keys=[memory.id for memory in selected],
            body_keys=packed.body_keys,
            card_ids=packed.card_ids,
            omitted_ids=packed.omitted_ids,
            tokens=packed.tokens,
            budget_tokens=budget,
            explain=_explain(routing, packed.omitted_ids) if explain else [],
        )

    def _load_one(self, memory_id: str, config: Config, full: bool) -> LoadResult:
        self.refresh()
        memory = self.index.memory(memory_id)
        if memory is None:
            raise UnknownMemory(f"no memory {memory_id!r}")
        text = render_body(memory, config.rule_variant, full) + "\n"
        self.index.count_use([memory_id])
        return LoadResult(text, [memory_id], [memory_id], [], [], estimate_tokens(text), None)

    def search(self, query: str, limit: int = 10) -> Found:
        """Ranked entries (id, type, scope, score, title, channels) and how they were
        ranked: BM25, fused with the semantic channel where it ranks."""
        self.refresh()
        memories = self._memories()
        nearest = self._nearest(query, self.config())
        hits = self.index.search(query, limit if nearest is None else max(limit, FUSION_DEPTH))
        if nearest is None:
            ranked = [(mid, score) for mid, score, _ in hits]
            channels = {mid: ["lexical"] for mid, _ in ranked}
        else:
            lexical = [mid for mid, _, _ in hits]
            close = [mid for mid in nearest[1] if mid in memories]
            ranked = hybrid(lexical, close)
            found = {"lexical": set(lexical), "semantic": set(close)}
            channels = {mid: [name for name in found if mid in found[name]] for mid, _ in ranked}
        entries = [
            {
                "id": mid,
                "type": memories[mid].type,
                "scope": memories[mid].scope,
                "score": round(score, 6),
                "title": memories[mid].title,
                "channels": channels[mid],
            }
            for mid, score in ranked
            if mid in memories
        ][:limit]
        return Found(entries, ranking_receipt(None if nearest is None else nearest[0]))

    def route_entries(self, query: str) -> list[dict[str, Any]]:
        """Routed entries in load order (not sorted by score)."""
        return [
            {
                "id": r.memory.id,
                "type": r.memory.type,
                "scope": r.memory.scope,
                "score": r.score,
                "how": r.how,
            }
            for r in self.routing(query).selected
        ]

    def today(self) -> str:
        return dt.date.today().isoformat()

    def session_context(self, budget_tokens: int | None, objective: str | None) -> str:
        """What a session-start hook injects: the ``current session`` load, small.

        Working notes are left out, except those whose objective matches
        ``objective``, which appear as one-line cards (load them by id).
        """
        budget = budget_tokens or self.config().number("load", "session_budget_tokens")
        result = self.load(SESSION_QUERY, budget_tokens=budget, notes=False)
        wanted = " ".join((objective or "").lower().split())
        if not wanted:
            return result.text
        day = self.today()
        cards = [
            f"- {m.id} (note): {m.title}"
            for m in self.index.memories()
            if m.tier == "working"
            and str(m.get("valid_until", "9999")) >= day
            and " ".join(str(m.get("objective", "")).lower().split()) == wanted
        ]
        if not cards:
            return result.text
        text = (
            result.text.rstrip("\n") + "\n\nNotes for this objective:\n" + "\n".join(cards) + "\n"
        )
        return text if estimate_tokens(text) <= budget else result.text

    # --- proposals and writing -----------------------------------------------------

    def proposals(self) -> Proposals:
        return Proposals(self.layout.pending, str(self.layout.root))

    def propose(
        self, candidates: list[Candidate], scope: str, query_level: int = DEFAULT_QUERY_LEVEL
    ) -> Proposal:
        """Verdicts and preview for candidates; refuses secrets; writes nothing."""
        refuse_secrets(candidates)
        self.refresh()
        memories = self._memories()
        verdicts = [self._verdict(c, memories, query_level) for c in candidates]
        shown = preview(candidates, verdicts)
        return Proposal("save", scope, candidates, verdicts, shown, query_level)

    def _verdict(self, candidate: Candidate, memories: dict[str, Memory], level: int) -> Verdict:
        related = [mid for mid, _, _ in self.index.search(candidate.text, level)]
        return verdict_for(candidate, memories, related)

    def write(self, proposal: Proposal, numbers: list[int], human_approved: bool) -> Outcome:
        """Write the chosen candidates (numbers from 1) of a proposal.

        Verdicts are recomputed at the proposal's ``query_level``; a candidate whose
        verdict changed since the proposal is deferred (see :mod:`engram.project.commit`).
        """
        if any(not 1 <= number <= len(proposal.candidates) for number in numbers):
            raise CandidateError(
                f"approve numbers must be between 1 and {len(proposal.candidates)}"
            )
        self.refresh()
        memories = self._memories()
        chosen = [
            (
                n,
                proposal.candidates[n - 1],
                proposal.verdicts[n - 1],
                self._verdict(proposal.candidates[n - 1], memories, proposal.query_level),
            )
            for n in sorted(set(numbers))
        ]
        outcome = write_candidates(self.layouts, memories, chosen, human_approved)
        self.refresh()
        return outcome

    def commit(self, token: str, approve: str | list[int]) -> Outcome:
        """``engram_commit``: use an approval token once and write what it approves.

        The approve list is checked before the token is spent, so a typo can be retried.
        """

        def check(pending: Pending) -> None:
            count = len(pending.candidates)
            if not isinstance(approve, str) and any(not 1 <= n <= count for n in approve):
                raise CandidateError(f"approve numbers must be between 1 and {count}")

        pending = self.proposals().take(token, check)
        if pending.kind == "note":
            note = Memory(**pending.candidates[0])
            path = self.write_note(note)
            return Outcome(
                written=[
                    {
                        "number": 1,
                        "verdict": "NOTE",
                        "id": note.id,
                        "file": self.layouts[note.scope].relative(path),
                        "valid_until": note.get("valid_until"),
                    }
                ]
            )
        candidates = [Candidate.from_json(c) for c in pending.candidates]
        verdicts = [Verdict(v["kind"], v["target"]) for v in pending.verdicts]
        proposal = Proposal("save", pending.scope, candidates, verdicts, "", pending.query_level)
        numbers = list(range(1, len(candidates) + 1)) if isinstance(approve, str) else approve
        return self.write(proposal, numbers, human_approved=True)

    def note(self, text: str, objective: str, memory_type: str, scope: str) -> Memory:
        """A redacted working note, not yet written."""
        return make_note(
            text, objective, memory_type, scope, self.config().working_ttl_days, dt.date.today()
        )

    def write_note(self, note: Memory) -> Path:
        path = write_memory(self.layouts[note.scope], note, folder="working")
        self.refresh()
        return path

    def note_token(self, note: Memory) -> str:
        pending = Pending(
            "note", [_memory_json(note)], [{"kind": "NOTE", "target": note.id}], note.scope
        )
        return self.proposals().create(pending)

    def promote(self, note_id: str) -> Path:
        """Make a working note durable (the only way to)."""
        self.refresh()
        note = self.index.memory(note_id)
        if note is None or note.tier != "working":
            raise UnknownMemory(f"no working note {note_id!r}")
        durable = promoted(note)
        if self.index.memory(durable.id) is not None:
            raise CandidateError(
                f"a durable memory {durable.id} exists: propose an UPDATE of it instead"
            )
        layout = self.layouts[note.scope]  # a global note stays global
        path = write_memory(layout, durable)
        (layout.working / f"{note_id}.md").unlink()
        self.refresh()
        return path

    # --- configuration, verification, status ---------------------------------------

    def set_roles(self, roles: list[str]) -> Config:
        config = self.config().with_roles(tuple(sorted(set(roles))))
        save_config(self.layout.config, config)
        return config

    def set_rule_variant(self, variant: str) -> Config:
        if variant not in RULE_VARIANTS:
            raise ProjectError(f"variant must be one of {', '.join(RULE_VARIANTS)}")
        config = self.config().with_variant(variant)
        save_config(self.layout.config, config)
        return config

    def verify(self, scope: str = "workspace") -> list[dict[str, str]]:
        """Hash report per file, for ``workspace``, ``global`` or ``all``."""
        chosen = ["workspace", "global"] if scope == "all" else [scope]
        report = []
        for name in chosen:
            layout = self.layouts[name]
            report += [{"scope": name, **entry} for entry in verify_hashes(layout)]
        return report

    def status(self) -> dict[str, Any]:
        self.refresh()
        memories = self.index.memories()
        counts = {
            kind: sum(1 for m in memories if m.type == kind and m.tier != "working")
            for kind in ("rule", "skill", "knowledge")
        }
        report = self.verify()
        config = self.config()
        return {
            "root": str(self.layout.root),
            "memories": counts,
            "notes": sum(1 for m in memories if m.tier == "working"),
            "invalid_files": len(self.problems()),
            "hash_mismatches": sum(1 for entry in report if entry["status"] != "ok"),
            "roles": list(config.roles),
            "rule_variant": config.rule_variant,
            "healthy": not self.problems() and all(e["status"] == "ok" for e in report),
        }


def _memory_json(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "type": memory.type,
        "scope": memory.scope,
        "title": memory.title,
        "body": memory.body,
        "fields": memory.fields,
    }


def _header(query: str, count: int) -> str:
    shown = " ".join(query.split())
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return f"# Engram memory for: {shown or '(no query)'} ({count} selected)"


def _explain(routing: Routing, budget_omitted: list[str]) -> list[dict[str, Any]]:
    chosen = [
        {
            "id": r.memory.id,
            "chosen": r.memory.id not in budget_omitted,
            "how": r.how,
            "terms": list(r.terms),
            "score": r.score,
            **({"reason": "budget"} if r.memory.id in budget_omitted else {}),
        }
        for r in routing.selected
    ]
    omitted = [{"id": o.memory_id, "chosen": False, "reason": o.reason} for o in routing.omitted]
    return chosen + omitted
