"""The reads of :class:`engram.testing.memory_store.InMemoryStore`: its tables and every
read of the port (the agent's path, the projections, the operator's verbs and views,
backups), over one version of the tables.

Kept apart from the writes so that each module holds one concept; nothing here changes a
table. See :mod:`engram.testing.memory_store` for what the store keeps of the real stores'
behaviour.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from typing import Any, Final

from engram.memory.journal import GENESIS
from engram.memory.ports import (
    DAY_MS,
    ActivityRow,
    AuditEntry,
    CandidateRow,
    ConfirmationRow,
    Event,
    HeldCandidate,
    JournalEvent,
    RecordRow,
    RecordSummary,
)
from engram.search.analysis import analyzer_tag
from engram.search.lexical import K1, B, Group, Stage, idf, search_stages, variants
from engram.store.overview_rows import journal_event

__all__ = [
    "RECORD_FIELDS",
    "Reads",
    "Tables",
    "decoded",
    "fresh_audit",
    "fresh_candidate",
    "fresh_confirmation",
]

#: Record states the expiry sweep looks at.
_LIVE: Final = ("accepted_current", "accepted_disputed", "historical")
RECORD_FIELDS: Final = tuple(field.name for field in dataclasses.fields(RecordRow))


def decoded(value: Any, sort_keys: bool = False) -> Any:
    """``value`` as a store that keeps it as JSON text gives it back: a new object."""
    return None if value is None else json.loads(json.dumps(value, sort_keys=sort_keys))


@dataclasses.dataclass(slots=True)
class Tables:
    """Every table of the store. A transaction works on a shallow copy and copies each
    dictionary before its first change (the values are never changed in place), so the
    committed tables are never written."""

    candidates: dict[str, CandidateRow] = dataclasses.field(default_factory=dict)
    records: dict[int, RecordRow] = dataclasses.field(default_factory=dict)
    rowids: dict[str, int] = dataclasses.field(default_factory=dict)
    #: owner -> (scope, kek id, wrapped key)
    data_keys: dict[str, tuple[str, str, bytes]] = dataclasses.field(default_factory=dict)
    #: (scope, cursor) -> (digest, previous, body JSON, target)
    journal: dict[tuple[str, int], tuple[str, str, str, str | None]] = dataclasses.field(
        default_factory=dict
    )
    #: scope -> (head cursor, head digest, records version)
    scope_state: dict[str, tuple[int, str, int]] = dataclasses.field(default_factory=dict)
    #: (scope, principal, key) -> (tool, intent digest, outcome JSON, hashed)
    idempotency: dict[tuple[str, str, str], tuple[str, str, str, int]] = dataclasses.field(
        default_factory=dict
    )
    confirmations: dict[str, ConfirmationRow] = dataclasses.field(default_factory=dict)
    revocations: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)
    #: audit id -> (insertion order, entry)
    audit: dict[str, tuple[int, AuditEntry]] = dataclasses.field(default_factory=dict)
    #: owner -> (scope, kind, created, done)
    purges: dict[str, tuple[str, str, int, int | None]] = dataclasses.field(default_factory=dict)
    activity: dict[tuple[str, int, str, str], int] = dataclasses.field(default_factory=dict)
    record_days: dict[tuple[str, str, int], int] = dataclasses.field(default_factory=dict)
    #: (scope, analyzer, rowid) -> (length, term frequencies)
    documents: dict[tuple[str, str, int], tuple[int, dict[str, int]]] = dataclasses.field(
        default_factory=dict
    )
    #: (scope, analyzer) -> (documents, tokens)
    sizes: dict[tuple[str, str], tuple[int, int]] = dataclasses.field(default_factory=dict)
    #: (rowid, model) -> (scope, vector)
    vectors: dict[tuple[int, str], tuple[str, bytes]] = dataclasses.field(default_factory=dict)
    #: (scope, model) -> (count, largest rowid, changes)
    vector_versions: dict[tuple[str, str], tuple[int, int, int]] = dataclasses.field(
        default_factory=dict
    )
    next_rowid: int = 1
    next_audit: int = 1


class Reads:
    """Reads of one version of the tables (a snapshot, or a transaction's own copy)."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables
        self.tag = analyzer_tag()
        self._keys: dict[str, tuple[str, bytes] | None] | None = None

    # The agent's path.

    def candidate(self, scope_id: str, candidate_id: str) -> CandidateRow | None:
        row = self.t.candidates.get(candidate_id)
        return fresh_candidate(row) if row is not None and row.scope_id == scope_id else None

    def record(self, scope_id: str, record_id: str) -> RecordRow | None:
        row = self._record(record_id)
        return row if row is not None and row.scope_id == scope_id else None

    def _record(self, record_id: str) -> RecordRow | None:
        rowid = self.t.rowids.get(record_id)
        return None if rowid is None else self.t.records[rowid]

    def records(self, scope_id: str, record_ids: Sequence[str]) -> list[RecordRow]:
        found = [self.record(scope_id, record_id) for record_id in record_ids]
        return [row for row in found if row is not None]

    def data_key(self, owner: str) -> tuple[str, bytes] | None:
        if self._keys is not None and owner in self._keys:
            return self._keys[owner]
        row = self.t.data_keys.get(owner)
        return None if row is None else (row[1], row[2])

    def prefetch_data_keys(self, owners: Sequence[str]) -> None:
        if owners:
            self._keys = {owner: self.data_key(owner) for owner in owners}

    def head(self, scope_id: str) -> Event:
        state = self.t.scope_state.get(scope_id)
        return Event(0, GENESIS) if state is None else Event(state[0], state[1])

    def records_version(self, scope_id: str) -> int:
        state = self.t.scope_state.get(scope_id)
        return 0 if state is None else state[2]

    def is_revoked(self, scope_id: str, principal: str) -> bool:
        return (scope_id, principal) in self.t.revocations or (
            scope_id,
            "*",
        ) in self.t.revocations

    # The projections.

    def _scope_records(self, scope_id: str) -> Iterator[tuple[int, RecordRow]]:
        return ((rowid, row) for rowid, row in self.t.records.items() if row.scope_id == scope_id)

    def _documents(self, scope_id: str, tag: str) -> dict[int, tuple[int, dict[str, int]]]:
        return {
            rowid: document
            for (scope, analyzer, rowid), document in self.t.documents.items()
            if scope == scope_id and analyzer == tag
        }

    def search(
        self, scope_id: str, groups: list[Group], limit: int, stage: int = 0
    ) -> list[tuple[RecordRow, float]] | None:
        size = self.t.sizes.get((scope_id, self.tag)) if groups else None
        if size is None:
            return [] if stage == 0 else None
        documents, total = size
        held = self._documents(scope_id, self.tag)
        counts = {
            variant: count
            for variant in variants(groups)
            if (count := sum(1 for _, terms in held.values() if variant in terms))
        }
        stages = search_stages(groups, counts, documents)
        if stage >= len(stages) or documents == 0:
            return None if stage >= len(stages) else []
        return self._ranked(held, stages[stage], counts, documents, total, limit)

    def _ranked(
        self,
        held: dict[int, tuple[int, dict[str, int]]],
        stage: Stage,
        counts: dict[str, int],
        documents: int,
        total: int,
        limit: int,
    ) -> list[tuple[RecordRow, float]]:
        """BM25 as the PostgreSQL store computes it: summed over the stage's phrases (a
        variant in two groups counts twice), best first, then record id."""
        phrases = [
            (phrase, idf(documents, counts.get(phrase, 0)), member)
            for member, group in enumerate(stage.groups)
            for phrase in group
        ]
        average = total / documents
        scored: list[tuple[float, int]] = []
        for rowid, (length, terms) in held.items():
            score, members = 0.0, set()
            for phrase, weight, member in phrases:
                tf = terms.get(phrase)
                if tf:
                    score += weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))
                    members.add(member)
            if members and (not stage.every or len(members) == len(stage.groups)):
                scored.append((score, rowid))
        best = sorted(scored, key=lambda item: (-item[0], item[1]))[:limit]
        ranked = [(self.t.records[rowid], score) for score, rowid in best]
        return sorted(ranked, key=lambda item: (-item[1], item[0].record_id))

    def indexed(self, scope_id: str, record_id: str) -> bool:
        rowid = self.t.rowids.get(record_id)
        return rowid is not None and any(
            key[0] == scope_id and key[2] == rowid for key in self.t.documents
        )

    def indexed_count(self, scope_id: str) -> int:
        size = self.t.sizes.get((scope_id, self.tag))
        return 0 if size is None else size[0]

    def records_by_rowid(self, scope_id: str, rowids: Sequence[int]) -> dict[int, RecordRow]:
        return {
            rowid: row
            for rowid in rowids
            if (row := self.t.records.get(rowid)) is not None and row.scope_id == scope_id
        }

    def vectors(self, scope_id: str, model: str) -> list[tuple[int, bytes]]:
        return sorted(
            (rowid, vector)
            for (rowid, kind), (scope, vector) in self.t.vectors.items()
            if scope == scope_id and kind == model
        )

    def vector_version(self, scope_id: str, model: str) -> tuple[int, int, int]:
        return self.t.vector_versions.get((scope_id, model), (0, 0, 0))

    def has_vector(self, record_id: str) -> bool:
        rowid = self.t.rowids.get(record_id)
        return any(key[0] == rowid for key in self.t.vectors)

    def unembedded(self, scope_id: str, model: str, limit: int) -> list[tuple[int, RecordRow]]:
        rowids = sorted(
            rowid
            for rowid in self._documents(scope_id, self.tag)
            if (rowid, model) not in self.t.vectors
        )
        return [(rowid, self.t.records[rowid]) for rowid in rowids[:limit]]

    def lexical_current(self, scope_id: str) -> bool:
        return not any(
            scope == scope_id and analyzer != self.tag for scope, analyzer in self.t.sizes
        )

    # The operator's verbs.

    def journal(self, scope_id: str) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
        for (scope, cursor), (digest, previous, body, _) in sorted(self.t.journal.items()):
            if scope == scope_id:
                yield cursor, digest, previous, json.loads(body)

    def candidates_in_state(self, scope_id: str, state: str) -> list[str]:
        found = [
            row
            for row in self.t.candidates.values()
            if row.scope_id == scope_id and row.state == state
        ]
        found.sort(key=lambda row: (row.captured_ms, row.capture_cursor, row.candidate_id))
        return [row.candidate_id for row in found]

    def expired_records(self, scope_id: str, now_ms: int) -> list[RecordRow]:
        return [
            row
            for _, row in sorted(self._scope_records(scope_id), key=lambda item: item[0])
            if row.state in _LIVE and row.expires_ms is not None and row.expires_ms <= now_ms
        ]

    def confirmations(self, scope_id: str, created_since_ms: int = 0) -> list[ConfirmationRow]:
        found = [
            row
            for row in self.t.confirmations.values()
            if row.scope_id == scope_id and row.created_ms >= created_since_ms
        ]
        found.sort(key=lambda row: (row.created_ms, row.request_id))
        return [fresh_confirmation(row) for row in found]

    def confirmation(self, scope_id: str, request_id: str) -> ConfirmationRow | None:
        row = self.t.confirmations.get(request_id)
        return fresh_confirmation(row) if row is not None and row.scope_id == scope_id else None

    def purge_row(self, owner: str) -> dict[str, Any] | None:
        row = self.t.purges.get(owner)
        if row is None:
            return None
        return {"scope_id": row[0], "kind": row[1], "created_ms": row[2], "done_ms": row[3]}

    def pending_purges(self, scope_id: str) -> list[tuple[str, str]]:
        found = [
            (created, owner, kind)
            for owner, (scope, kind, created, done) in self.t.purges.items()
            if scope == scope_id and done is None
        ]
        return [(owner, kind) for _, owner, kind in sorted(found)]

    # The operator's views.

    def record_page(
        self, scope_id: str, state: str | None, after: tuple[int, int] | None, limit: int
    ) -> list[tuple[int, RecordSummary]]:
        found = sorted(
            (
                (row.admitted_ms, rowid, row)
                for rowid, row in self._scope_records(scope_id)
                if (state is None or row.state == state)
                and (after is None or (row.admitted_ms, rowid) < after)
            ),
            key=lambda item: (item[0], item[1]),
            reverse=True,
        )
        return [
            (
                rowid,
                RecordSummary(
                    row.record_id,
                    row.state,
                    row.admitted_ms,
                    row.expires_ms,
                    row.valid_t,
                    row.valid_t_end,
                    row.record_digest,
                ),
            )
            for _, rowid, row in found[:limit]
        ]

    def record_counts(
        self, scope_id: str, admitted_after: Sequence[int]
    ) -> tuple[dict[str, int], list[int]]:
        states: dict[str, int] = {}
        for (scope, state, _), records in self.t.record_days.items():
            if scope == scope_id:
                states[state] = states.get(state, 0) + records
        after = []
        for instant in admitted_after:
            whole_days = sum(
                records
                for (scope, _, day), records in self.t.record_days.items()
                if scope == scope_id and day > instant // DAY_MS
            )
            end_of_day = (instant // DAY_MS + 1) * DAY_MS
            rest_of_day = sum(
                1
                for _, row in self._scope_records(scope_id)
                if instant < row.admitted_ms < end_of_day
            )
            after.append(whole_days + rest_of_day)
        return states, after

    def _events(self, scope_id: str) -> list[tuple[int, str, str, str | None]]:
        return [
            (cursor, digest, body, target)
            for (scope, cursor), (digest, _, body, target) in sorted(self.t.journal.items())
            if scope == scope_id
        ]

    def journal_page(self, scope_id: str, before: int | None, limit: int) -> list[JournalEvent]:
        events = [
            journal_event(cursor, digest, body)
            for cursor, digest, body, _ in reversed(self._events(scope_id))
            if before is None or cursor < before
        ]
        return events[:limit]

    def events_of(self, scope_id: str, targets: Sequence[str]) -> list[JournalEvent]:
        wanted = set(targets)
        return [
            journal_event(cursor, digest, body)
            for cursor, digest, body, target in self._events(scope_id)
            if target is not None and target in wanted
        ]

    def audit_page(
        self,
        scope_id: str,
        principal: str | None,
        tool: str | None,
        outcome: str | None,
        before: tuple[int, int] | None,
        limit: int,
    ) -> list[tuple[int, AuditEntry]]:
        found = sorted(
            (
                (entry.at_ms, order, entry)
                for order, entry in self.t.audit.values()
                if entry.scope_id == scope_id
                and (principal is None or entry.identity.get("principal") == principal)
                and (tool is None or entry.tool == tool)
                and (outcome is None or entry.outcome == outcome)
                and (before is None or (entry.at_ms, order) < before)
            ),
            key=lambda item: (item[0], item[1]),
            reverse=True,
        )
        return [(order, fresh_audit(entry)) for _, order, entry in found[:limit]]

    def activity_counts(self, scope_id: str, first_day: int, last_day: int) -> list[ActivityRow]:
        return [
            ActivityRow(day, operation, to_state, events)
            for (scope, day, operation, to_state), events in sorted(self.t.activity.items())
            if scope == scope_id and first_day <= day <= last_day
        ]

    def held_candidates(self, scope_id: str, limit: int) -> list[HeldCandidate]:
        held = [
            HeldCandidate(
                row.candidate_id,
                row.captured_ms,
                row.principal,
                row.record_digest,
                self._first_with_payload(scope_id, row.payload_digest, ("tombstoned",), None),
            )
            for row in sorted(
                (
                    row
                    for row in self.t.candidates.values()
                    if row.scope_id == scope_id and row.state == "pending_adjudication"
                ),
                key=lambda row: (row.captured_ms, row.capture_cursor, row.candidate_id),
            )
        ]
        return held[:limit]

    def _first_with_payload(
        self, scope_id: str, payload_digest: str, states: Sequence[str], alive_at: int | None
    ) -> str | None:
        found = sorted(
            (row.admitted_ms, rowid, row.record_id)
            for rowid, row in self._scope_records(scope_id)
            if row.payload_digest == payload_digest
            and row.state in states
            and (alive_at is None or row.expires_ms is None or row.expires_ms > alive_at)
        )
        return found[0][2] if found else None

    # Backups and key rotation.

    def export_rows(self) -> dict[str, Any]:
        records = []
        for _, row in sorted(self.t.records.items()):
            record = {name: getattr(row, name) for name in RECORD_FIELDS}
            wrapped = self.t.data_keys.get(row.record_id)
            record["wrapped_key"] = None if wrapped is None else [wrapped[1], wrapped[2]]
            records.append(record)
        journal = [
            {
                "scope_id": scope,
                "cursor": cursor,
                "event_digest": digest,
                "previous": previous,
                "body": json.loads(body),
            }
            for (scope, cursor), (digest, previous, body, _) in sorted(self.t.journal.items())
        ]
        scopes = [
            {"scope_id": scope, "head_cursor": c, "head_digest": d, "records_version": v}
            for scope, (c, d, v) in sorted(self.t.scope_state.items())
        ]
        audit = [
            {
                "audit_id": entry.audit_id,
                "scope_id": entry.scope_id,
                "at_ms": entry.at_ms,
                "tool": entry.tool,
                "outcome": entry.outcome,
                "identity": decoded(entry.identity),
                "digests": decoded(entry.digests),
            }
            for _, _, entry in sorted(
                (entry.at_ms, order, entry) for order, entry in self.t.audit.values()
            )
        ]
        revocations = [
            {"scope_id": scope, "principal": principal, "revoked_ms": at}
            for (scope, principal), at in sorted(self.t.revocations.items())
        ]
        accepted = {
            row.candidate_id for row in self.t.candidates.values() if row.state == "accepted"
        }
        # A capture's replay names its candidate: keep it only when that candidate lives
        # on as a record (pending, rejected and withdrawn candidates stay out of backups).
        idempotency = []
        for (scope, principal, key), (tool, intent, text, hashed) in sorted(
            self.t.idempotency.items()
        ):
            outcome = json.loads(text)
            if tool == "capture" and outcome.get("candidate_id") not in accepted:
                continue
            idempotency.append(
                {
                    "scope_id": scope,
                    "principal": principal,
                    "key": key,
                    "tool": tool,
                    "intent_digest": intent,
                    "outcome": outcome,
                    "hashed": hashed,
                }
            )
        return {
            "records": records,
            "journal": journal,
            "scope_state": scopes,
            "audit": audit,
            "revocations": revocations,
            "idempotency": idempotency,
        }

    def is_empty(self) -> bool:
        return not (self.t.records or self.t.journal or self.t.candidates)

    def kek_ids_in_use(self) -> set[str]:
        return {kek_id for _, kek_id, _ in self.t.data_keys.values()}


def fresh_candidate(row: CandidateRow) -> CandidateRow:
    return dataclasses.replace(
        row,
        sealed=None if row.sealed is None else bytes(row.sealed),
        retention=decoded(row.retention),
        decision=decoded(row.decision),
    )


def fresh_confirmation(row: ConfirmationRow) -> ConfirmationRow:
    return dataclasses.replace(row, display=decoded(row.display, sort_keys=True))


def fresh_audit(entry: AuditEntry) -> AuditEntry:
    return dataclasses.replace(
        entry,
        identity=decoded(entry.identity, sort_keys=True),
        digests=decoded(entry.digests, sort_keys=True),
    )
