"""Project memory's entry point: what the ``engram_*`` tools and CLI verbs call.

One :class:`ProjectMemory` per project root. Every call first brings the derived
index up to date with the files (see :mod:`engram.project.catalog`), so a file edited
by hand is seen by the next call.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from engram.errors import (
    HashesCorrupt,
    IndexDamaged,
    InvalidQuery,
    ProjectError,
    RoleError,
    UnknownMemory,
)
from engram.project.adopt import AdoptionPlan, plan_adoption, record_adoption
from engram.project.approvals import Pending, Proposals, Proposer
from engram.project.catalog import Catalog
from engram.project.commit import Changes, Planned, planned, recover_commits, write_candidates
from engram.project.config import RULE_VARIANTS, Config, load_config, save_config
from engram.project.hashes import indexed_health, read_hashes, verify_hashes
from engram.project.layout import Layout
from engram.project.limits import MAX_QUERY
from engram.project.memory_file import FOLDERS, Memory, render_memory, with_text_digest
from engram.project.notes import make_note, promoted
from engram.project.packing import estimate_tokens, pack, render_body
from engram.project.ports import MemoryIndex, Progress, no_progress
from engram.project.proposals import (
    DEFAULT_QUERY_LEVEL,
    Candidate,
    CandidateError,
    Verdict,
    preview,
    refuse_secrets,
    verdict_for,
)
from engram.project.reconfirm import Reconfirmed, plan_reconfirm, reconfirmed_text
from engram.project.repository import Repository
from engram.project.results import (
    Found,
    LoadResult,
    NoteSaved,
    Outcome,
    Promoted,
    Proposal,
    Routed,
    Settings,
    Status,
    Verification,
)
from engram.project.routing import (
    SESSION_QUERY,
    Routing,
    confident,
    replaced_by,
    replacements_first,
    route,
)
from engram.project.semantic import ProjectVectors
from engram.project.sources import grounded, refuse_sources
from engram.project.staleness import (
    FileDiff,
    FileStates,
    StaleMemory,
    StaleReport,
    cache_beside,
    file_diffs,
    find_stale,
)
from engram.search.fusion import FUSION_DEPTH, fused, ranking_receipt

__all__ = ["Found", "LoadResult", "ProjectMemory", "Proposal", "UnknownMemory"]

#: How many BM25 hits routing considers before filtering and ordering.
ROUTE_CANDIDATES = 64
#: How often the retrieval counts kept in memory are written to the index, at most.
USES_WRITTEN_EVERY_S = 60.0


class ProjectMemory:
    """The memory of one project."""

    def __init__(
        self,
        layout: Layout,
        global_layout: Layout,
        index: MemoryIndex,
        catalog: Catalog,
        vectors: ProjectVectors | None = None,
        index_path: Path | None = None,
        progress: Progress = no_progress,
    ) -> None:
        self.layout = layout
        #: Where the derived index lives (beside the files, or in a cache folder).
        self.index_path = index_path or layout.index
        #: Told how far a long operation is (a terminal's progress bar).
        self.progress = progress
        # Retrievals counted in memory and written at most once a minute (and on close):
        # a read must not write the index every time.
        self._uses: Counter[str] = Counter()
        self._uses_lock = threading.Lock()
        self._uses_written = time.monotonic()
        self._call = threading.local()  # ``fresh``: refreshed at the start of this call
        self.global_layout = global_layout
        self.index = index
        self.catalog = catalog
        #: The semantic channel (``None``: lexical only, whatever is installed).
        self.vectors = vectors
        self._cache: tuple[int, dict[str, Memory]] = (-1, {})
        #: The repository the project's memories cite files of.
        self.repository = Repository(layout.root)
        self._file_states: FileStates | None = None
        # A server's second worker (while the first waits for a person) may check too.
        self._file_states_lock = threading.Lock()

    @property
    def layouts(self) -> dict[str, Layout]:
        return {"workspace": self.layout, "global": self.global_layout}

    def config(self) -> Config:
        return load_config(self.layout.config)

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        """One call of a tool: the index is brought up to date once, at its start (a
        write within it brings it up to date again)."""
        self.refresh()
        self._call.fresh = self._call.active = True
        try:
            yield
        finally:
            self._call.fresh = self._call.active = False

    def _refresh_now(self) -> None:
        """Bring the index up to date even within a call: before a write judges what is
        there (a dialog may have waited minutes), and after it."""
        self._call.fresh = False
        self.refresh()
        self._call.fresh = getattr(self._call, "active", False)

    def refresh(self) -> None:
        """Bring the index up to date with the files; a damaged index is rebuilt."""
        if getattr(self._call, "fresh", False):
            return  # up to date since this call began
        for layout in self.layouts.values():
            if layout.journal.exists():  # another process stopped in a commit: finish it
                recover_commits(layout)
        if self.index.damaged:
            self._rebuild_index()
        try:
            self.catalog.refresh()
        except IndexDamaged:
            self._rebuild_index()
            self.catalog.refresh()

    def _rebuild_index(self) -> None:
        self.index.reset()
        self.catalog.forget()

    def close(self) -> None:
        """Stop following the files and building vectors, and close the index."""
        try:
            self.write_uses()
        finally:
            if self.vectors is not None:
                self.vectors.close()
            self.catalog.close()
            self.index.close()

    def problems(self) -> list[tuple[str, str]]:
        """Invalid memory files: ``(path, "line N: reason")``."""
        self.refresh()
        return self.index.problems()

    def memories(self) -> list[Memory]:
        """Every memory, current with the files (read from the index only after a change)."""
        self.refresh()
        return list(self._memories().values())

    def _memories(self) -> dict[str, Memory]:
        """Every memory by id, read from the index again only after it changed."""
        version, cached = self._cache
        if version != self.catalog.version:
            cached = {memory.id: memory for memory in self.index.memories()}
            self._cache = (self.catalog.version, cached)
        return cached

    def _nearest(self, query: str, config: Config) -> tuple[str, list[tuple[str, float]]] | None:
        """The semantic channel's ranking (model, (memory id, cosine)), or ``None`` when it does
        not rank (not installed, turned off, not current yet, or a session query)."""
        if self.vectors is None or not config.semantic or not query.strip():
            return None
        if " ".join(query.lower().split()) == SESSION_QUERY:
            return None
        return self.vectors.nearest(query, self.catalog.version)

    def routing(
        self,
        query: str,
        limit: int | None = None,
        notes: bool = True,
        config: Config | None = None,
    ) -> Routing:
        _check_query(query)
        self.refresh()
        config = config or self.config()
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
            floor=config.confidence_floor,
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
        count: bool = True,
    ) -> LoadResult:
        """Route and pack memory for a task (or one memory by id, budget aside). ``count``:
        whether this is a retrieval (the review console's look is not)."""
        config = self.config()
        if memory_id is not None:
            return self._load_one(memory_id, config, full)
        text = query or ""
        routing = self.routing(text, notes=notes, config=config)
        budget = budget_tokens or config.budget_tokens
        selected = [routed.memory for routed in routing.selected]
        header = _header(text, len(selected))
        stale = self.stale_by_id(memory.id for memory in selected)
        packed = pack(
            selected,
            header,
            budget,
            disclosure=disclosure,
            full=full,
            variant=config.rule_variant,
            marks={
                mid: (found.mark(), f"stale: {found.summary()}") for mid, found in stale.items()
            },
        )
        if count:
            self._count_use(packed.body_keys)
        return LoadResult(
            packed=packed.text,
            selected_keys=[memory.id for memory in selected],
            body_keys=packed.body_keys,
            card_ids=packed.card_ids,
            omitted_ids=packed.omitted_ids,
            tokens=packed.tokens,
            budget_tokens=budget,
            explain=_explain(routing, packed.omitted_ids, stale) if explain else [],
            explained=explain,
            close=routing.close if explain else {},
            stale=[
                stale[mid].data() for mid in [*packed.body_keys, *packed.card_ids] if mid in stale
            ],
        )

    def _load_one(self, memory_id: str, config: Config, full: bool) -> LoadResult:
        self.refresh()
        memory = self.index.memory(memory_id)
        if memory is None:
            raise UnknownMemory(f"no memory {memory_id!r}")
        text = render_body(memory, config.rule_variant, full) + "\n"
        stale = self.stale_by_id([memory_id]).get(memory_id)
        if stale is not None:
            heading, _, rest = text.partition("\n")
            text = f"{heading}\n{stale.mark()}\n{rest}"
        self._count_use([memory_id])
        return LoadResult(
            text,
            [memory_id],
            [memory_id],
            [],
            [],
            estimate_tokens(text),
            None,
            stale=[] if stale is None else [stale.data()],
        )

    def search(
        self,
        query: str,
        limit: int = 10,
        explain: bool = False,
        min_confidence: float | None = None,
    ) -> Found:
        """Ranked entries (id, type, scope, score, title, channels) and how they were
        ranked: BM25, fused with the semantic channel where it ranks. With ``explain``,
        each entry also has ``ranks`` (its rank in each channel that found it), its
        ``bm25`` score, its ``cosine`` (when the semantic channel found it) and ``parts``,
        each channel's part of its score (the review console draws them). Each entry has
        its ``confidence``; with ``min_confidence``, the entries under it are left out of
        the page."""
        _check_query(query)
        self.refresh()
        memories = self._memories()
        nearest = self._nearest(query, self.config())
        # As deep as fusion looks, in both cases: a superseded memory's replacement ranked
        # just past ``limit`` still comes first, and a larger limit only adds entries.
        hits = self.index.search(query, max(limit, FUSION_DEPTH))
        lexical = [(mid, score) for mid, score, _ in hits]
        close = [] if nearest is None else [hit for hit in nearest[1] if hit[0] in memories]
        shared = (
            [(mid, {"lexical": score}) for mid, score in lexical]
            if nearest is None
            else fused(lexical, close)
        )
        rankings = {"lexical": lexical, "semantic": close[:FUSION_DEPTH]}
        ranks = {
            name: {mid: rank for rank, (mid, _) in enumerate(ranking, start=1)}
            for name, ranking in rankings.items()
        }
        bm25, cosine = dict(lexical), dict(close)

        def explained(mid: str, shares: dict[str, float]) -> dict[str, Any]:
            return {
                "ranks": {name: ranks[name][mid] for name in ranks if mid in ranks[name]},
                "bm25": round(bm25.get(mid, 0.0), 6),
                **({"cosine": round(cosine[mid], 6)} if mid in cosine else {}),
                "parts": {name: round(share, 6) for name, share in shares.items()},
            }

        found = {mid: shares for mid, shares in shared if mid in memories}
        shown = replacements_first(list(found), memories)[:limit]
        sure = confident(query, lexical, None if nearest is None else close, memories, shown)
        entries = [
            {
                "id": mid,
                "type": memories[mid].type,
                "scope": memories[mid].scope,
                "score": round(sum(found[mid].values()), 6),
                "confidence": sure[mid],
                "title": memories[mid].title,
                "channels": [name for name in ranks if mid in ranks[name]],
                **({"superseded_by": after} if (after := replaced_by(mid, memories)) else {}),
                **(explained(mid, found[mid]) if explain else {}),
            }
            for mid in shown
            if min_confidence is None or sure[mid] >= min_confidence
        ]
        best = max((score for _, score in lexical), default=0.0) if explain else 0.0
        return Found(
            self._with_stale(entries),
            ranking_receipt(None if nearest is None else nearest[0]),
            best,
        )

    def _with_stale(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``entries`` (with an ``id`` each), those of stale memories with ``stale``."""
        stale = self.stale_by_id(entry["id"] for entry in entries)
        return [
            {**entry, "stale": stale[entry["id"]].entry()} if entry["id"] in stale else entry
            for entry in entries
        ]

    def shared_words(
        self, question: str, memory_ids: list[str]
    ) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
        """For each memory, the question's words and which of its parts hold each:
        ``title``, ``tags``, ``text`` (the body after its title line), as a search
        matches them (:func:`engram.search.analysis.shared_words`)."""
        from engram.search.analysis import shared_words

        self.refresh()
        memories = self._memories()
        return {
            mid: shared_words(question, _parts_of(memories[mid]))
            for mid in memory_ids
            if mid in memories
        }

    def _count_use(self, memory_ids: list[str]) -> None:
        with self._uses_lock:
            self._uses.update(memory_ids)
            due = time.monotonic() - self._uses_written >= USES_WRITTEN_EVERY_S
        if due:
            self.write_uses()

    def write_uses(self) -> None:
        """Write the retrievals counted since the last time to the index."""
        with self._uses_lock:
            counted, self._uses = self._uses, Counter()
            self._uses_written = time.monotonic()
        if counted:
            self.index.count_use(counted.elements())

    def most_used(self, limit: int) -> list[str]:
        """The ids of the most retrieved memories, most first."""
        self.write_uses()
        return self.index.most_used(limit)

    def route_entries(self, query: str) -> Routed:
        """Routed entries in load order (not sorted by score)."""
        return Routed(
            self._with_stale(
                [
                    {
                        "id": r.memory.id,
                        "type": r.memory.type,
                        "scope": r.memory.scope,
                        "score": r.score,
                        "how": r.how,
                    }
                    for r in self.routing(query).selected
                ]
            )
        )

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
            return result.packed
        day = self.today()
        cards = [
            f"- {m.id} (note): {m.title}"
            for m in self.index.memories()
            if m.tier == "working"
            and str(m.get("valid_until", "9999")) >= day
            and " ".join(str(m.get("objective", "")).lower().split()) == wanted
        ]
        if not cards:
            return result.packed
        text = (
            result.packed.rstrip("\n") + "\n\nNotes for this objective:\n" + "\n".join(cards) + "\n"
        )
        return text if estimate_tokens(text) <= budget else result.packed

    # --- proposals and writing -----------------------------------------------------

    def proposals(self) -> Proposals:
        return Proposals(self.layout.pending, str(self.layout.root))

    def propose(
        self, candidates: list[Candidate], scope: str, query_level: int = DEFAULT_QUERY_LEVEL
    ) -> Proposal:
        """Verdicts and preview for candidates; refuses secrets; writes nothing."""
        refuse_secrets(candidates)
        for number, candidate in enumerate(candidates, start=1):
            try:
                refuse_sources(candidate.source_files, self.repository)
            except CandidateError as error:
                raise CandidateError(f"candidate {number}: {error.detail}") from error
        self.refresh()
        memories = self._memories()
        verdicts = []
        for number, candidate in enumerate(candidates, start=1):
            if number % 64 == 0:
                self.progress("judging candidates", number, len(candidates))
            try:
                verdicts.append(self._verdict(candidate, memories, query_level))
            except CandidateError as error:
                raise CandidateError(f"candidate {number}: {error.detail}") from error
        self.progress("judging candidates", len(candidates), len(candidates))
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
        self._refresh_now()
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
        outcome = write_candidates(self.layouts, memories, chosen, human_approved, self.repository)
        self._refresh_now()
        return outcome

    def commit(self, token: str, approve: str | list[int]) -> Outcome:
        """``engram_commit``: use an approval token once and write what it approves.

        The approve list is checked before the token is spent, so a typo can be retried.
        """

        return self._write_approved(self.proposals().take(token, _numbers(approve)), approve)

    def planned(self, pending: Pending) -> list[Planned]:
        """What approving each candidate of a waiting proposal writes, file by file (the
        review console shows it: every field an agent set, not only the text)."""
        if pending.kind == "note":
            note = Memory(**pending.candidates[0])
            layout = self.layouts[note.scope]
            where = layout.relative(layout.working / f"{note.id}.md")
            return [Planned(note.id, None, render_memory(note), note, None, where)]
        self.refresh()
        memories = self._memories()
        plans = [
            planned(
                self.layouts,
                memories,
                Candidate.from_json(c),
                Verdict(v["kind"], v["target"]),
                self.repository,
            )
            for c, v in zip(pending.candidates, pending.verdicts, strict=True)
        ]
        # "Before" as the file is on disk (a hand-written one may lack fields the commit
        # writes), so the person sees every line that changes.
        return [
            replace(plan, before=self._file_text(plan.marks or plan.memory_id) or plan.before)
            if plan.before is not None
            else plan
            for plan in plans
        ]

    def file_of(self, memory_id: str) -> tuple[str, Path] | None:
        """The index path of a memory's file (``global:`` first for a global one) and
        where it is on disk; ``None`` when no valid file holds the id."""
        for state in self.index.files().values():
            if state.memory_id == memory_id and not (state.problem or "").startswith("shadowed"):
                layout = self.global_layout if state.path.startswith("global:") else self.layout
                return state.path, layout.base / state.path.removeprefix(layout.prefix)
        return None

    def _file_text(self, memory_id: str) -> str | None:
        located = self.file_of(memory_id)
        try:
            return None if located is None else located[1].read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def review(self, proposal_id: str, digest: str, approve: str | list[int]) -> Outcome | None:
        """A person's answer in the review console to a waiting proposal
        (:meth:`Proposals.waiting`): ``"all"``, the numbers of the candidates approved
        (from 1; the others are declined), or ``[]`` to decline it whole.

        Approving is ``engram_commit`` with that ``approve`` (the same checks, the same
        write path, the same guarantees: once, and only while the proposal has
        ``digest``); the proposal is then used, whatever was left out. Declining it whole
        writes nothing, keeps it as declined (the agent's commit is told why) and
        returns ``None``."""
        declined = not approve
        pending = self.proposals().review(proposal_id, digest, not declined, _numbers(approve))
        return None if declined else self._write_approved(pending, approve)

    def _write_approved(self, pending: Pending, approve: str | list[int]) -> Outcome:
        if pending.kind == "note":
            saved = self.write_note(Memory(**pending.candidates[0]))
            return Outcome(
                written=[
                    {
                        "number": 1,
                        "verdict": "NOTE",
                        "id": saved.id,
                        "file": saved.file,
                        "valid_until": saved.valid_until,
                    }
                ]
            )
        candidates = [Candidate.from_json(c) for c in pending.candidates]
        verdicts = [Verdict(v["kind"], v["target"]) for v in pending.verdicts]
        proposal = Proposal("save", pending.scope, candidates, verdicts, "", pending.query_level)
        numbers = list(range(1, len(candidates) + 1)) if isinstance(approve, str) else approve
        return self.write(proposal, numbers, human_approved=True)

    def note(self, text: str, objective: str, memory_type: str, scope: str) -> Memory:
        """A redacted working note, not yet written; never the id of another note."""
        note = make_note(
            text, objective, memory_type, scope, self.config().working_ttl_days, dt.date.today()
        )
        path = self.layouts[scope].working / f"{note.id}.md"
        self.refresh()
        existing = self.index.memory(note.id)
        if path.exists() and (existing is None or existing.body != note.body):
            note = replace(note, id=with_text_digest(note.id, text))
        return note

    def write_note(self, note: Memory) -> NoteSaved:
        layout = self.layouts[note.scope]
        changes = Changes(layout)
        path = changes.write_memory(layout, note, folder="working")
        changes.commit()
        self._refresh_now()
        return NoteSaved(note.id, layout.relative(path), str(note.get("valid_until")))

    def note_token(self, note: Memory, by: Proposer) -> str:
        pending = Pending(
            "note", [_memory_json(note)], [{"kind": "NOTE", "target": note.id}], note.scope
        )
        return self.proposals().create(pending, by=by)

    def promote(self, note_id: str) -> Promoted:
        """Make a working note durable (the only way to)."""
        self._refresh_now()
        note = self.index.memory(note_id)
        if note is None or note.tier != "working":
            raise UnknownMemory(f"no working note {note_id!r}")
        # Durable now: it records the repository files it names, as a commit would.
        durable = grounded(promoted(note), self.repository, self.today())
        if self.index.memory(durable.id) is not None:
            raise CandidateError(
                f"a durable memory {durable.id} exists: propose an UPDATE of it instead"
            )
        layout = self.layouts[note.scope]  # a global note stays global
        occupied = layout.folder(FOLDERS[durable.type]) / f"{durable.id}.md"
        if occupied.exists():
            raise CandidateError(
                f"{layout.relative(occupied)} exists and is not a valid memory:"
                " `engram doctor` says what is wrong with it; fix or move it, then promote"
            )
        changes = Changes(layout)
        path = changes.write_memory(layout, durable)
        changes.delete(layout, layout.working / f"{note_id}.md")
        changes.commit()
        self._refresh_now()
        return Promoted(note_id, durable.id, layout.relative(path))

    def adopt(self, paths: list[Path] | None, record: bool) -> AdoptionPlan:
        """What adopting ``paths`` (default: every file whose hash is not the recorded
        one) changes; with ``record``, do it (see :mod:`engram.project.adopt`)."""
        plan = plan_adoption(self.layout, paths)
        if not record or not (plan.adoptable or plan.fresh_hashes or plan.rewrite):
            return plan
        record_adoption(self.layout, plan)
        self._refresh_now()
        return replace(plan, recorded=True)

    # --- the files memories stand on ------------------------------------------------

    def stale(self, memory_ids: Iterable[str] | None = None) -> StaleReport:
        """The memories (all, or those of ``memory_ids``) whose recorded files changed,
        disappeared or were renamed (:mod:`engram.project.staleness`)."""
        self.refresh()
        return self._stale(memory_ids)

    def _stale(self, memory_ids: Iterable[str] | None) -> StaleReport:
        """:meth:`stale` on the index as it is (a load, a search, a route refreshed it)."""
        memories = self._memories()
        chosen = (
            memories.values()
            if memory_ids is None
            else [memories[mid] for mid in memory_ids if mid in memories]
        )
        with self._file_states_lock:
            if self._file_states is None:
                self._file_states = FileStates(self.repository, cache_beside(self.index_path))
            found, checked = find_stale(self.layout, chosen, self._file_states)
        return StaleReport(found, checked)

    def reconfirm(self, memory_ids: list[str]) -> Reconfirmed:
        """A person checked these memories: record their files as they are now, with
        ``last_verified`` today (:mod:`engram.project.reconfirm`); all or nothing."""
        self._refresh_now()
        stale = {found.id: found for found in self._stale(memory_ids).memories}
        planned = plan_reconfirm(
            self.layout, self._memories(), memory_ids, stale, self.repository, self.today()
        )
        changes = Changes(self.layout)
        for path, text, _ in planned:
            changes.stage_text(self.layout, path, text)
        changes.commit()
        self._refresh_now()
        return reconfirmed_text(planned)

    def stale_diffs(self, memory_id: str) -> tuple[StaleMemory, list[FileDiff]] | None:
        """A stale memory and what became of each of its files (a diff from the version
        recorded, where Git still holds it); ``None`` when it is not stale."""
        self.refresh()
        found = self.stale_by_id([memory_id]).get(memory_id)
        return None if found is None else (found, file_diffs(found, self.repository))

    def stale_by_id(self, memory_ids: Iterable[str]) -> dict[str, StaleMemory]:
        """Each stale memory among ``memory_ids``, by id (what a load marks), on the
        index as it is."""
        return {stale.id: stale for stale in self._stale(memory_ids).memories}

    # --- configuration, verification, status ---------------------------------------

    def set_roles(self, roles: list[str]) -> Settings:
        """Set the active roles (none: every role-tagged memory is left out of loads)."""
        names = [role.strip() for role in roles]
        if not all(names):
            raise RoleError(
                "a role must be a non-empty name; to clear the roles run"
                " `engram set-role --clear` (MCP: engram_set_role with roles [])"
            )
        config = self.config().with_roles(tuple(sorted(set(names))))
        save_config(self.layout.config, config)
        return _settings(config, "roles")

    def set_rule_variant(self, variant: str) -> Settings:
        if variant not in RULE_VARIANTS:
            raise ProjectError(f"variant must be one of {', '.join(RULE_VARIANTS)}")
        config = self.config().with_variant(variant)
        save_config(self.layout.config, config)
        return _settings(config, "rule_variant")

    def settings(self) -> Settings:
        return _settings(self.config(), "")

    def verify(self, scope: str = "workspace") -> Verification:
        """Hash report per file, for ``workspace``, ``global`` or ``all``."""
        chosen = ["workspace", "global"] if scope == "all" else [scope]
        report = []
        with_markers = []
        for name in chosen:
            hashes = read_hashes(self.layouts[name])
            report += [
                {"scope": name, **entry} for entry in verify_hashes(self.layouts[name], hashes)
            ]
            if hashes.markers:
                with_markers.append(name)
        return Verification(report, tuple(with_markers))

    def health(self) -> dict[str, list[str]]:
        """Each memory file's problems (empty: healthy), by its index path, from the
        index rather than the disk (:func:`engram.project.hashes.indexed_health`)."""
        self.refresh()
        return indexed_health(list(self.layouts.values()), self.index.files())

    def _hash_problems(self) -> int:
        """Files whose hash is not the recorded one; every file when the record itself
        cannot be read (status reports health, it does not fail on it)."""
        try:
            return sum(1 for entry in self.verify().files if entry["status"] != "ok")
        except HashesCorrupt:
            return _count_files(self.layout) + 1  # the record itself is a problem

    def status(self) -> Status:
        from engram import __version__

        self.refresh()
        memories = self.index.memories()
        counts = {
            kind: sum(1 for m in memories if m.type == kind and m.tier != "working")
            for kind in ("rule", "skill", "knowledge")
        }
        config = self.config()
        return Status(
            version=__version__,
            root=str(self.layout.root),
            memories=counts,
            notes=sum(1 for m in memories if m.tier == "working"),
            invalid_files=len(self.index.problems()),
            hash_mismatches=self._hash_problems(),
            roles=list(config.roles),
            rule_variant=config.rule_variant,
            stale=len(self._stale(None).memories),
        )


def _count_files(layout: Layout) -> int:
    return sum(
        1 for folder in layout.memory_folders()[:3] if folder.is_dir() for _ in folder.glob("*.md")
    )


def _settings(config: Config, changed: str) -> Settings:
    return Settings(list(config.roles), config.rule_variant, changed)


def _check_query(query: str) -> None:
    if len(query) > MAX_QUERY:
        raise InvalidQuery(
            f"the query is {len(query):,} characters, more than {MAX_QUERY:,}:"
            " ask with the task's key words"
        )


def _numbers(approve: str | list[int]) -> Callable[[Pending], None]:
    """The check of an ``approve`` list before a token is spent: every number is one of
    the proposal's candidates (so a typo can be retried)."""

    def check(pending: Pending) -> None:
        count = len(pending.candidates)
        if not isinstance(approve, str) and any(not 1 <= n <= count for n in approve):
            raise CandidateError(f"approve numbers must be between 1 and {count}")

    return check


def _parts_of(memory: Memory) -> dict[str, str]:
    """What a search reads of a memory, by the name a person knows each part by."""
    body = memory.body
    if body.startswith("# "):
        body = body.partition("\n")[2]
    return {"title": memory.title, "tags": " ".join(memory.tags), "text": body}


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


def _explain(
    routing: Routing, budget_omitted: list[str], stale: dict[str, StaleMemory]
) -> list[dict[str, Any]]:
    chosen = [
        {
            "id": r.memory.id,
            "chosen": r.memory.id not in budget_omitted,
            "how": r.how,
            "terms": list(r.terms),
            "score": r.score,
            **({} if r.confidence is None else {"confidence": r.confidence}),
            **({"reason": "budget"} if r.memory.id in budget_omitted else {}),
            **({"stale": stale[r.memory.id].summary()} if r.memory.id in stale else {}),
        }
        for r in routing.selected
    ]
    omitted = [
        {
            "id": o.memory_id,
            "chosen": False,
            "reason": o.reason,
            **({} if o.confidence is None else {"confidence": o.confidence}),
        }
        for o in routing.omitted
    ]
    return chosen + omitted
