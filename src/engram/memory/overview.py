"""The host's read-only views of one governed scope, for the review console.

Pages of records (newest admitted first, of one state or all), one record with its
candidate, its lifecycle events and, while it is ``accepted_current``, its text; the
journal and the audit newest first (the audit by principal, tool and outcome); what
each of the last days saw; the records by state and by age; and the candidates held
for adjudication with the tombstone that holds them. Host-only, like
:mod:`engram.memory.maintenance`: never reachable through MCP.

Each call reads one snapshot, and each of its statements one range of an index
(:mod:`engram.store.overview_rows`; the day counts come from a table ``append_event``
keeps, never from the journal), so a call costs the same at 100,000 records as at 100.
Nothing is written, journaled or audited; a candidate is never decrypted, and a record
only while it may be disclosed.

Pages are keyset pages: ``next`` is an opaque token to pass back as ``after`` (records)
or ``before`` (journal, audit); ``None`` on the last page. A token, limit, state or
number of days that is not one is ``INVALID_SCHEMA``, the contract's refusal of an
argument (``STALE_PAGE`` would tell the caller to start over, and a keyset page never
goes stale).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any, Final, Generic, TypeVar

from engram.errors import InvalidSchema, NotFound
from engram.memory.binding import Scope
from engram.memory.engine import MemoryEngine
from engram.memory.lifecycle import RECORD_STATES
from engram.memory.ports import (
    DAY_MS,
    AuditEntry,
    HeldCandidate,
    JournalEvent,
    MemoryReader,
    RecordRow,
    RecordSummary,
)
from engram.memory.recall import disclose, eligible
from engram.memory.records import content_text
from engram.safety.display import shown

__all__ = [
    "AGE_BUCKETS",
    "AuditEntry",
    "DayActivity",
    "HeldCandidate",
    "JournalEvent",
    "Overview",
    "Page",
    "RecordDetail",
    "RecordSummary",
]

T = TypeVar("T")

#: The largest page and the longest activity window a caller may ask for.
MAX_LIMIT: Final = 500
MAX_DAYS: Final = 3660
#: The age buckets of :meth:`Overview.counts`: admitted less than so many days ago
#: (each bucket excludes the ones before it); ``older`` holds the rest.
AGE_BUCKETS: Final = (("<1d", 1), ("<7d", 7), ("<30d", 30), ("<365d", 365))
#: Which events each count of :class:`DayActivity` counts: ``(operation, to_state)``,
#: ``None`` for any state (the operation names of capture.py, admission.py and
#: withdrawal.py; a forget is a ``tombstone``).
_COUNTED: Final = {
    ("capture", None): "captures",
    ("admission", "accepted"): "accepted",
    ("admission", "rejected"): "rejected",
    ("admission", "pending_adjudication"): "held",
    # The host's decision on a held candidate admits or rejects it as an admission does.
    ("adjudicate", "accepted"): "accepted",
    ("adjudicate", "rejected"): "rejected",
    ("withdraw", None): "withdrawn",
    ("tombstone", None): "forgotten",
}
_TOKEN: Final = re.compile(r"(\d{1,19})\.(\d{1,19})", re.ASCII)
_CURSOR: Final = re.compile(r"\d{1,19}", re.ASCII)
_LARGEST: Final = 2**63 - 1  # a BIGINT


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page, newest first; ``next`` is the token of the page after it."""

    items: tuple[T, ...]
    next: str | None


@dataclass(frozen=True)
class RecordDetail:
    """One record: its row (without its ciphertext), its candidate's capture instant and
    admission decision (``None`` for a record a backup brought back without its
    candidate), the events of the record and its candidate in cursor order, and its text
    while it is ``accepted_current`` (escaped to be shown: :func:`shown`), else ``None``."""

    record: RecordRow
    captured_ms: int | None
    decision: dict[str, Any] | None
    events: tuple[JournalEvent, ...]
    text: str | None


@dataclass(frozen=True)
class DayActivity:
    """What one UTC day of the scope saw (``day``: epoch milliseconds // 86,400,000)."""

    day: int
    date: str
    captures: int
    accepted: int
    rejected: int
    held: int
    withdrawn: int
    forgotten: int


class Overview:
    """Read-only views of one scope of an engine's store."""

    def __init__(self, engine: MemoryEngine, scope: Scope) -> None:
        self.engine = engine
        self.scope = scope

    @property
    def _scope_id(self) -> str:
        return self.scope.scope_id

    def records(
        self, state: str | None = None, after: str | None = None, limit: int = 50
    ) -> Page[RecordSummary]:
        """The scope's records (in ``state`` when given), newest admitted first."""
        _check_limit(limit)
        if state is not None and state not in RECORD_STATES:
            raise InvalidSchema(f"unknown record state {state!r}")
        key = None if after is None else _key(after)
        with self.engine.store.read() as reader:
            rows = reader.record_page(self._scope_id, state, key, limit + 1)
        return _page([(f"{row.admitted_ms}.{rowid}", row) for rowid, row in rows], limit)

    def record(self, record_id: str) -> RecordDetail:
        """One record of the scope (``NOT_FOUND`` for any other id)."""
        with self.engine.store.read() as reader:
            row = reader.record(self._scope_id, record_id)
            if row is None:
                raise NotFound(f"no record {record_id} in this scope")
            candidate = reader.candidate(self._scope_id, row.candidate_id)
            events = reader.events_of(self._scope_id, [row.record_id, row.candidate_id])
            # What get would disclose now: current, within its valid time and unexpired
            # (the console opens a store without sweeping it).
            text = self._text(reader, row) if eligible(row, self.engine.clock()) else None
        return RecordDetail(
            record=replace(row, sealed=None),
            captured_ms=None if candidate is None else candidate.captured_ms,
            decision=None if candidate is None else candidate.decision,
            events=tuple(events),
            text=text,
        )

    def _text(self, reader: MemoryReader, row: RecordRow) -> str:
        """The record's text as search and get disclose it (their projection)."""
        projected, _, _ = disclose(reader, self.engine.vault, row)
        return shown(content_text(projected))

    def journal(self, before: int | str | None = None, limit: int = 50) -> Page[JournalEvent]:
        """The scope's events, newest first (``before``: a cursor, or a page's ``next``)."""
        _check_limit(limit)
        below = None if before is None else _cursor(before)
        with self.engine.store.read() as reader:
            events = reader.journal_page(self._scope_id, below, limit + 1)
        return _page([(str(event.cursor), event) for event in events], limit)

    def audit(
        self,
        principal: str | None = None,
        tool: str | None = None,
        outcome: str | None = None,
        before: str | None = None,
        limit: int = 50,
    ) -> Page[AuditEntry]:
        """The scope's audit entries that match every filter given, newest first
        (``principal`` as bound, ``tool`` a short name, ``outcome`` ``ok`` or a code)."""
        _check_limit(limit)
        key = None if before is None else _key(before)
        with self.engine.store.read() as reader:
            rows = reader.audit_page(self._scope_id, principal, tool, outcome, key, limit + 1)
        return _page([(f"{entry.at_ms}.{rowid}", entry) for rowid, entry in rows], limit)

    def activity(self, days: int = 30, now_ms: int | None = None) -> list[DayActivity]:
        """The last ``days`` UTC days up to ``now_ms`` (the engine's clock), oldest first,
        days without events included."""
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
            raise InvalidSchema(f"days must be 1 to {MAX_DAYS}")
        last = (self.engine.clock() if now_ms is None else now_ms) // DAY_MS
        first = last - days + 1
        with self.engine.store.read() as reader:
            rows = reader.activity_counts(self._scope_id, first, last)
        counts = {day: dict.fromkeys(_COUNTED.values(), 0) for day in range(first, last + 1)}
        for row in rows:
            field = _COUNTED.get((row.operation, row.to_state)) or _COUNTED.get(
                (row.operation, None)
            )
            if field is not None:
                counts[row.day][field] += row.events
        return [DayActivity(day, _date(day), **counts[day]) for day in range(first, last + 1)]

    def counts(self) -> dict[str, dict[str, int]]:
        """The scope's records by state (every state, zeros included) and by how long ago
        they were admitted (:data:`AGE_BUCKETS`, each without the younger ones, then
        ``older``)."""
        now = self.engine.clock()
        with self.engine.store.read() as reader:
            found, after = reader.record_counts(
                self._scope_id, [now - days * DAY_MS for _, days in AGE_BUCKETS]
            )
        states = dict.fromkeys(RECORD_STATES, 0) | found
        ages, younger = {}, 0
        for (name, _), within in zip(AGE_BUCKETS, after, strict=True):
            ages[name], younger = within - younger, within
        ages["older"] = sum(states.values()) - younger
        return {"states": states, "ages": ages}

    def held(self, limit: int = 200) -> list[HeldCandidate]:
        """Candidates held as ``pending_adjudication``, oldest first, each with the
        tombstoned record whose content it repeats. Never decrypted."""
        _check_limit(limit)
        with self.engine.store.read() as reader:
            return reader.held_candidates(self._scope_id, limit)


def _page(rows: list[tuple[str, T]], limit: int) -> Page[T]:
    """A page of at most ``limit`` of ``(token, item)`` rows (one more was read to tell
    whether a next page exists)."""
    kept = rows[:limit]
    return Page(tuple(item for _, item in kept), kept[-1][0] if len(rows) > limit else None)


def _check_limit(limit: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidSchema(f"limit must be 1 to {MAX_LIMIT}")


def _key(token: str) -> tuple[int, int]:
    """``(instant, rowid)`` of a records or audit page token."""
    match = _TOKEN.fullmatch(token) if isinstance(token, str) else None
    if match is None or max(int(match[1]), int(match[2])) > _LARGEST:
        raise InvalidSchema("not a page token")
    return int(match[1]), int(match[2])


def _cursor(before: int | str) -> int:
    """A journal cursor, given as a number or as a page token."""
    if isinstance(before, str) and _CURSOR.fullmatch(before):
        before = int(before)
    if isinstance(before, bool) or not isinstance(before, int) or not 0 <= before <= _LARGEST:
        raise InvalidSchema("not a journal cursor")
    return before


def _date(day: int) -> str:
    return (date(1970, 1, 1) + timedelta(days=day)).isoformat()
