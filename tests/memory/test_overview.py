"""The host's read-only views of a scope (engram.memory.overview), on both backends:
keyset pages and their tokens, filters, day counts kept beside the journal, a record's
lifecycle and text, held candidates, and a store from before the views upgraded."""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram.crypto.keyfiles import load_keyring
from engram.errors import InvalidSchema, NotFound
from engram.memory.backup import backup, restore
from engram.memory.binding import Binding
from engram.memory.engine import MemoryEngine
from engram.memory.maintenance import Maintenance
from engram.memory.overview import DayActivity, HeldCandidate, Overview
from engram.store.location import open_memory_store
from engram.testing import NOW, PURPOSE, binding, capture_args
from tests.memory.conftest import Memory

DAY = 86_400_000
HOUR = 3_600_000
TODAY = NOW // DAY
SECRET_TEXT = "Deploy with the key " + "AKIA" + "Q7RZ4T2LX9MBN3VD" + " from the vault."
BOB = binding(principal="bob")
#: The migrations that made the views' tables, columns and indexes, per backend.
VIEW_MIGRATIONS = {"sqlite": (9, 10, 11, 12), "postgresql": (2, 3, 4, 5)}
VIEW_INDEXES = (
    "journal_by_target",
    "records_by_admission",
    "records_by_state_admission",
    "audit_by_time",
    "audit_by_tool",
    "audit_by_outcome",
    "audit_by_principal",
)


def _overview(memory: Memory, who: Binding | None = None) -> Overview:
    return Overview(memory.engine, (who or binding()).scope)


def _confirmed(memory: Memory, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A gated tool, approved in the dialog."""
    envelope = memory.engine.call(tool, arguments, binding(), confirm=lambda operation: True)
    assert envelope["ok"] is True, envelope
    value: dict[str, Any] = envelope["output"]["value"]
    return value


def _forget(memory: Memory, record_id: str, key: str = "overview.forget-0001") -> None:
    _confirmed(
        memory, "forget", {"record_id": record_id, "idempotency_key": key, "reason_ref": "r:x"}
    )


def _withdraw(memory: Memory, candidate_id: str, key: str = "overview.withdraw-001") -> None:
    arguments = {"candidate_id": candidate_id, "idempotency_key": key, "reason_ref": "r:draft"}
    _confirmed(memory, "withdraw", arguments)


def _admission(memory: Memory, candidate_id: str, key: str) -> str:
    outcome = memory.value(
        "request_admission", {"candidate_id": candidate_id, "idempotency_key": key}
    )
    return str(outcome["outcome"]["status"])


def _rowid(memory: Memory, record_id: str) -> int:
    [(rowid,)] = memory.rows("SELECT rowid FROM records WHERE record_id = ?", (record_id,))
    return int(rowid)


def _activity(memory: Memory) -> dict[tuple[Any, ...], int]:
    rows = memory.rows("SELECT day, operation, to_state, events FROM activity")
    return {tuple(row[:3]): int(row[3]) for row in rows}


# --- records ---------------------------------------------------------------------------


@pytest.mark.real_stores
def test_records_page_newest_admitted_first_with_exact_tokens(memory: Memory) -> None:
    ids = []
    for index in range(5):
        ids.append(memory.admit(f"Paged fact number {index} about builds.", f"page{index}"))
        if index != 2:  # records 2 and 3 share their instant: the later row comes first
            memory.clock.now += 1000
    memory.admit("Another tenant's fact.", "foreign", binding(tenant="tenant-b"))
    overview = _overview(memory)

    first = overview.records(limit=2)
    assert [row.record_id for row in first.items] == [ids[4], ids[3]]
    assert first.next == f"{NOW + 2000}.{_rowid(memory, ids[3])}"
    second = overview.records(after=first.next, limit=2)
    assert [row.record_id for row in second.items] == [ids[2], ids[1]]
    assert second.next == f"{NOW + 1000}.{_rowid(memory, ids[1])}"
    third = overview.records(after=second.next, limit=2)
    assert [row.record_id for row in third.items] == [ids[0]]
    assert third.next is None
    exact = overview.records(limit=5)  # a page that ends with the last record has no next
    assert [row.record_id for row in exact.items] == ids[::-1]
    assert exact.next is None
    [newest] = overview.records(limit=1).items
    assert (newest.state, newest.admitted_ms, newest.valid_t, newest.valid_t_end) == (
        "accepted_current",
        NOW + 3000,
        NOW - DAY,
        None,
    )
    assert newest.record_digest.startswith("sha256:")
    assert newest.expires_ms is not None
    assert newest.expires_ms > NOW


def test_records_filter_by_state(memory: Memory) -> None:
    kept = memory.admit("A fact that stays current.", "state-kept")
    memory.clock.now += 1000
    gone = memory.admit("A fact that is forgotten.", "state-gone")
    memory.clock.now += 1000
    disputed = memory.admit("A fact that is disputed.", "state-disputed")
    _forget(memory, gone)
    Maintenance(memory.engine, binding().scope).transition(disputed, "dispute")
    overview = _overview(memory)

    def ids(state: str | None) -> list[str]:
        return [row.record_id for row in overview.records(state=state).items]

    assert ids(None) == [disputed, gone, kept]
    assert ids("accepted_current") == [kept]
    assert ids("tombstoned") == [gone]
    assert ids("accepted_disputed") == [disputed]
    assert ids("expired") == []
    page = overview.records(state="accepted_current", limit=1)
    assert page.next is None


@pytest.mark.parametrize(
    "token",
    ["", "x", "1", "1.", ".1", "1.2.3", "-1.2", "1.-2", " 1.2", "1.2\n", "١.٢", "9" * 20 + ".1"],
)
def test_a_malformed_page_token_is_invalid_schema(memory: Memory, token: str) -> None:
    overview = _overview(memory)
    with pytest.raises(InvalidSchema):
        overview.records(after=token)
    with pytest.raises(InvalidSchema):
        overview.audit(before=token)


def test_limits_states_cursors_and_days_out_of_range_are_invalid_schema(memory: Memory) -> None:
    overview = _overview(memory)
    for limit in (0, -1, 501, True):
        with pytest.raises(InvalidSchema):
            overview.records(limit=limit)
        with pytest.raises(InvalidSchema):
            overview.journal(limit=limit)
    with pytest.raises(InvalidSchema):
        overview.records(state="deleted")
    for before in (-1, "x", "1.2", True):
        with pytest.raises(InvalidSchema):
            overview.journal(before=before)
    for days in (0, 3661):
        with pytest.raises(InvalidSchema):
            overview.activity(days=days)
    assert overview.records(limit=500).items == ()
    assert overview.records(after=f"{2**63 - 1}.{2**63 - 1}").items == ()


# --- one record ------------------------------------------------------------------------


def test_the_lifecycle_of_a_forgotten_record(memory: Memory) -> None:
    captured = memory.value(
        "capture", capture_args(text="Forgotten fact.", key="life.capture-000001")
    )
    candidate = captured["candidate_id"]
    memory.clock.now += HOUR
    assert _admission(memory, candidate, "life.admission-00001") == "accepted"
    [record_id] = [row.record_id for row in _overview(memory).records().items]
    memory.value("capture", capture_args(text="Unrelated fact.", key="life.capture-000002"))
    memory.clock.now += DAY
    _forget(memory, record_id)

    detail = _overview(memory).record(record_id)

    assert detail.text is None
    assert detail.record.state == "tombstoned"
    assert detail.record.sealed is None
    assert (detail.record.candidate_id, detail.record.admitted_ms) == (candidate, NOW + HOUR)
    assert detail.captured_ms == NOW
    assert detail.decision is not None
    assert detail.decision["status"] == "accepted"
    assert [
        (e.cursor, e.operation, e.target, e.from_state, e.to_state, e.at) for e in detail.events
    ] == [
        (1, "capture", candidate, None, "pending", NOW),
        (2, "admission", candidate, "pending", "accepted", NOW + HOUR),
        (4, "tombstone", record_id, "accepted_current", "tombstoned", NOW + HOUR + DAY),
    ]
    assert detail.events[1].body["record_id"] == record_id


def test_the_text_is_shown_only_while_the_record_is_accepted_current(memory: Memory) -> None:
    text = "Release tarballs are verified with sha256 digests before upload."
    record_id = memory.admit(text, "text-shown")
    overview, host = _overview(memory), Maintenance(memory.engine, binding().scope)

    assert overview.record(record_id).text == text
    host.transition(record_id, "dispute")
    assert overview.record(record_id).text is None
    host.transition(record_id, "undispute")
    assert overview.record(record_id).text == text
    host.transition(record_id, "supersede")
    assert overview.record(record_id).text is None


def test_the_text_is_not_shown_past_the_records_expiry_even_before_a_sweep(
    memory: Memory,
) -> None:
    from engram.memory.validation import format_instant

    retention = {"derivative_rule": "make-ineligible", "expires_at": format_instant(NOW + HOUR)}
    captured = memory.value(
        "capture",
        capture_args(text="Ephemeral cache path.", key="expiring.capture-01", retention=retention),
    )
    outcome = memory.value(
        "request_admission",
        {"candidate_id": captured["candidate_id"], "idempotency_key": "expiring.admission-1"},
    )["outcome"]
    overview = _overview(memory)
    memory.clock.now = NOW + HOUR - 1
    assert overview.record(outcome["record_id"]).text == "Ephemeral cache path."

    memory.clock.now = NOW + HOUR

    detail = overview.record(outcome["record_id"])
    assert (detail.record.state, detail.text) == ("accepted_current", None)


def test_an_unknown_or_foreign_record_is_not_found(memory: Memory) -> None:
    foreign = memory.admit("Another tenant's fact.", "foreign", binding(tenant="tenant-b"))
    with pytest.raises(NotFound):
        _overview(memory).record(foreign)
    with pytest.raises(NotFound):
        _overview(memory).record("mem_" + "a" * 52)
    assert _overview(memory, binding(tenant="tenant-b")).record(foreign).text is not None


# --- journal and audit -----------------------------------------------------------------


def test_the_journal_pages_newest_first(memory: Memory) -> None:
    for index in range(3):
        memory.admit(f"Journal fact {index}.", f"journal{index}")
        memory.clock.now += 1000
    overview = _overview(memory)

    first = overview.journal(limit=4)
    assert [event.cursor for event in first.items] == [6, 5, 4, 3]
    assert first.next == "3"
    second = overview.journal(before=first.next, limit=4)
    assert [event.cursor for event in second.items] == [2, 1]
    assert second.next is None
    assert [event.cursor for event in overview.journal(before=3, limit=2).items] == [2, 1]
    assert overview.journal(before=3, limit=2).next is None
    capture = second.items[1]
    assert (capture.operation, capture.from_state, capture.to_state, capture.at) == (
        "capture",
        None,
        "pending",
        NOW,
    )
    assert capture.target is not None
    assert capture.target.startswith("cand_")
    assert capture.body["target"] == capture.target
    assert capture.event_digest.startswith("sha256:")
    assert overview.journal(before=1).items == ()


def _five_calls(memory: Memory) -> list[str]:
    """Five audited calls by Alice and Bob, a second apart but the last two; their ids."""
    calls = [
        ("capture", capture_args(text="Alice's fact.", key="audit.capture-0001"), None),
        ("capture", capture_args(text="Bob's fact.", key="audit.capture-0002"), BOB),
        ("search", {"query": "fact", "purpose_ref": PURPOSE}, None),
        ("capture", capture_args(text="Changed text.", key="audit.capture-0002"), BOB),
        ("search", {"query": "fact", "purpose_ref": PURPOSE}, BOB),
    ]
    audit_ids = []
    for index, (tool, arguments, who) in enumerate(calls):
        audit_ids.append(memory.call(tool, arguments, who)["auditId"])
        if index != 3:
            memory.clock.now += 1000
    return audit_ids


@pytest.mark.real_stores
def test_the_audit_filters_by_principal_tool_and_outcome_newest_first(memory: Memory) -> None:
    audit_ids = _five_calls(memory)
    overview = _overview(memory)

    def found(**filters: Any) -> list[str]:
        return [entry.audit_id for entry in overview.audit(**filters).items]

    assert found() == audit_ids[::-1]
    assert found(principal="bob") == [audit_ids[4], audit_ids[3], audit_ids[1]]
    assert found(principal="alice") == [audit_ids[2], audit_ids[0]]
    assert found(tool="search") == [audit_ids[4], audit_ids[2]]
    assert found(outcome="DIGEST_CONFLICT") == [audit_ids[3]]
    assert found(principal="bob", tool="capture", outcome="ok") == [audit_ids[1]]
    assert found(principal="carol") == []
    rowids = dict(memory.rows("SELECT audit_id, rowid FROM audit"))
    # Below an entry: those before it at its instant, by insertion, then the older ones.
    below_4 = f"{NOW + 3000}.{rowids[audit_ids[4]]}"
    assert found(principal="bob", before=below_4) == [audit_ids[3], audit_ids[1]]
    assert found(before=below_4, limit=2) == [audit_ids[3], audit_ids[2]]

    first = overview.audit(principal="bob", limit=2)
    assert first.next == f"{NOW + 3000}.{rowids[audit_ids[3]]}"
    second = overview.audit(principal="bob", before=first.next, limit=2)
    assert [entry.audit_id for entry in second.items] == [audit_ids[1]]
    assert second.next is None
    entry = second.items[0]
    assert (entry.tool, entry.outcome, entry.at_ms, entry.scope_id, entry.identity) == (
        ("capture", "ok", NOW + 1000, BOB.scope.scope_id, BOB.identity())
    )
    assert set(entry.digests) == {"arguments", "value"}


def test_the_principal_filter_finds_any_principal_and_any_tenant(memory: Memory) -> None:
    # Quotes, backslashes, non-ASCII letters and a key's own text in the principal, a NUL
    # in the tenant: the filter compares the principal as the index holds it, and no
    # identity breaks the index.
    for who in (
        binding(principal='bö"b\\ 1'),
        binding(principal='p", "principal": "q'),  # its agent id holds the same text
        binding(tenant="tenant-a\0ws-1", workspace="x", principal="alice"),
    ):
        audit_id = memory.call("search", {"query": "fact", "purpose_ref": PURPOSE}, who)["auditId"]
        found = _overview(memory, who).audit(principal=who.principal).items
        assert [(entry.audit_id, entry.identity) for entry in found] == [(audit_id, who.identity())]
    assert _overview(memory).audit(principal="bö").items == ()
    assert _overview(memory).audit(principal="q").items == ()


# --- activity, counts, held ------------------------------------------------------------


@pytest.mark.real_stores
def test_activity_counts_each_day_from_the_table_kept_beside_the_journal(memory: Memory) -> None:
    text = "The staging database password rotates every Monday."
    first = memory.admit(text, "day0-first")
    memory.admit("Second fact of the first day.", "day0-second")
    rejected = memory.capture(SECRET_TEXT, "day0.rejected-capture")
    assert _admission(memory, rejected, "day0.rejected-admit") == "rejected"
    pending = memory.capture("A draft withdrawn the next day.", "day0.pending-capture")
    memory.clock.now += DAY
    _withdraw(memory, pending)
    _forget(memory, first)
    memory.clock.now += 2 * DAY
    again = memory.capture(text, "day3.again-capture")
    assert _admission(memory, again, "day3.again-admit") == "pending_adjudication"
    memory.clock.now += HOUR

    days = _overview(memory).activity(days=5)

    assert days == [
        DayActivity(TODAY - 1, "2027-01-14", 0, 0, 0, 0, 0, 0),
        DayActivity(TODAY, "2027-01-15", 4, 2, 1, 0, 0, 0),
        DayActivity(TODAY + 1, "2027-01-16", 0, 0, 0, 0, 1, 1),
        DayActivity(TODAY + 2, "2027-01-17", 0, 0, 0, 0, 0, 0),
        DayActivity(TODAY + 3, "2027-01-18", 1, 0, 0, 1, 0, 0),
    ]
    assert _overview(memory).activity(days=2, now_ms=NOW + DAY) == days[1:3]
    assert _overview(memory, BOB).activity(days=1) == [days[-1]]  # the same scope
    assert _overview(memory, binding(tenant="tenant-b")).activity(days=1) == [
        DayActivity(TODAY + 3, "2027-01-18", 0, 0, 0, 0, 0, 0)
    ]
    # The table holds every operation of the journal, one row per day and outcome.
    assert _activity(memory) == {
        (TODAY, "capture", "pending"): 4,
        (TODAY, "admission", "accepted"): 2,
        (TODAY, "admission", "rejected"): 1,
        (TODAY + 1, "withdraw", "withdrawn"): 1,
        (TODAY + 1, "tombstone", "tombstoned"): 1,
        (TODAY + 3, "capture", "pending"): 1,
        (TODAY + 3, "admission", "pending_adjudication"): 1,
    }


def test_the_hosts_adjudication_counts_as_an_admission_of_its_day(memory: Memory) -> None:
    text = "The staging database password rotates every Monday."
    _forget(memory, memory.admit(text, "held-first"))
    held = memory.capture(text, "held.again-capture")
    assert _admission(memory, held, "held.again-admit") == "pending_adjudication"
    memory.clock.now += DAY

    Maintenance(memory.engine, binding().scope).adjudicate(held, accept=True)

    [today] = _overview(memory).activity(days=1)
    assert (today.accepted, today.rejected, today.held) == (1, 0, 0)


def test_counts_by_state_and_age(memory: Memory) -> None:
    admitted = {}
    # The last instant is now: 08:00 (UTC) 400 days after NOW. One day before now falls
    # at 08:00 of day 399, so that day's records count by their instant, not their day.
    offsets = (0, 100, 380, 395, 399, 399, 399, 400, 400)
    for offset, hours in zip(offsets, (0, 0, 0, 0, -1, 0, 1, -1, 0), strict=True):
        memory.clock.now = NOW + offset * DAY + hours * HOUR
        admitted[(offset, hours)] = memory.admit(
            f"A fact of {offset}.{hours}.", f"age{offset}.{hours}"
        )
    _forget(memory, admitted[(0, 0)])
    Maintenance(memory.engine, binding().scope).transition(admitted[(380, 0)], "dispute")

    counts = _overview(memory).counts()

    assert counts == {
        "states": {
            "accepted_current": 7,
            "accepted_disputed": 1,
            "historical": 0,
            "expired": 0,
            "trust_invalid": 0,
            "tombstoned": 1,
        },
        # Day 399 at 08:00 is exactly one day before now: not less than one day old.
        "ages": {"<1d": 3, "<7d": 3, "<30d": 1, "<365d": 1, "older": 1},
    }
    empty = _overview(memory, binding(tenant="tenant-b")).counts()
    assert set(empty["states"].values()) == {0}
    assert empty["ages"] == {"<1d": 0, "<7d": 0, "<30d": 0, "<365d": 0, "older": 0}


def test_a_recapture_of_forgotten_content_is_held_naming_its_tombstone(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "The staging database password rotates every Monday."
    gone = memory.admit(text, "held-first")
    _forget(memory, gone)
    memory.clock.now += HOUR
    captured = memory.value("capture", capture_args(text=text, key="held.again-capture"))
    assert (
        _admission(memory, captured["candidate_id"], "held.again-admit") == "pending_adjudication"
    )
    memory.capture("A pending candidate is not held.", "held.pending-capture")

    def refuse(*args: Any) -> bytes:
        raise AssertionError("a held candidate was decrypted")

    monkeypatch.setattr(memory.engine.vault, "open", refuse)
    held = _overview(memory).held()

    assert held == [
        HeldCandidate(
            captured["candidate_id"], NOW + HOUR, "alice", captured["record_digest"], gone
        )
    ]
    assert _overview(memory, binding(tenant="tenant-b")).held() == []
    monkeypatch.undo()
    Maintenance(memory.engine, binding().scope).adjudicate(captured["candidate_id"], accept=False)
    assert _overview(memory).held() == []


# --- upgrades and restores ---------------------------------------------------------------


def _history(memory: Memory) -> str:
    """Two days of operations by two principals; a forgotten record's id."""
    text = "The staging database password rotates every Monday."
    gone = memory.admit(text, "history-first")
    memory.admit("A fact Bob admits.", "history-bob", BOB)
    memory.clock.now += DAY
    _forget(memory, gone)
    again = memory.capture(text, "history.again-capture")
    assert _admission(memory, again, "history.again-admit") == "pending_adjudication"
    return gone


def _views(memory: Memory, record_id: str) -> list[Any]:
    overview = _overview(memory)
    return [
        overview.activity(days=3),
        overview.record(record_id).events,
        overview.audit(principal="bob").items,
        overview.records().items,
        overview.journal().items,
        overview.counts(),
        overview.held(),
    ]


@pytest.mark.real_stores
def test_a_store_from_before_the_views_is_upgraded_and_backfilled(memory: Memory) -> None:
    gone = _history(memory)
    before = _views(memory, gone)
    memory.engine.store.close()
    for index in VIEW_INDEXES:
        memory.rows(f"DROP INDEX {index}")
    memory.rows("DROP TABLE activity")
    memory.rows("DROP TABLE record_days")
    memory.rows("ALTER TABLE journal DROP COLUMN target")
    versions = VIEW_MIGRATIONS[memory.backend]
    memory.rows("DELETE FROM migrations WHERE schema = 'memory' AND version >= ?", (versions[0],))
    keys = load_keyring(memory.engine.vault.keys.directory)

    memory.engine = MemoryEngine(open_memory_store(memory.location), keys, clock=memory.clock)

    assert _views(memory, gone) == before
    applied = memory.rows("SELECT version FROM migrations WHERE schema = 'memory'")
    assert {row[0] for row in applied} >= set(versions)
    assert memory.rows("SELECT count(*) FROM journal WHERE target IS NULL") == [(0,)]


@pytest.mark.real_stores
def test_a_restored_backup_has_the_same_lifecycles_and_activity(
    memory: Memory, tmp_path: Path
) -> None:
    gone = _history(memory)
    path = tmp_path / "backup.engram"
    backup(memory.engine, path)
    restored = memory.sibling("restored.db")
    restore(restored.engine, path)

    assert _overview(restored).record(gone).events == _overview(memory).record(gone).events
    assert _overview(restored).activity(days=3) == _overview(memory).activity(days=3)
    assert _overview(restored).counts() == _overview(memory).counts()
    assert _activity(restored) == _activity(memory)
    restored.engine.store.close()


# --- plans -------------------------------------------------------------------------------


GROWING = ("records", "candidates", "journal", "audit", "activity")
#: What each view must read through (SQLite's plan; PostgreSQL has the same indexes).
VIEW_PLANS: list[tuple[str, Callable[[Overview], object], tuple[str, ...]]] = [
    ("records", lambda o: o.records(), ("records_by_admission (scope_id=?)",)),
    (
        "records by state",
        lambda o: o.records(state="tombstoned", after=f"{NOW + DAY}.100"),
        ("records_by_state_admission (scope_id=? AND state=? AND admitted_ms<?)",),
    ),
    ("journal", lambda o: o.journal(before=3), ("journal_1 (scope_id=? AND cursor<?)",)),
    ("audit", lambda o: o.audit(before=f"{NOW}.9"), ("audit_by_time (scope_id=? AND at_ms<?)",)),
    (
        "principal",
        lambda o: o.audit(principal="bob"),
        ("audit_by_principal (scope_id=? AND <expr>=?)",),
    ),
    ("tool", lambda o: o.audit(tool="search"), ("audit_by_tool (scope_id=? AND tool=?)",)),
    ("outcome", lambda o: o.audit(outcome="ok"), ("audit_by_outcome (scope_id=? AND outcome=?)",)),
    ("activity", lambda o: o.activity(), ("activity_1 (scope_id=? AND day>? AND day<?)",)),
    (
        "counts",
        lambda o: o.counts(),
        (
            "record_days_1 (scope_id=?)",
            "COVERING INDEX records_by_admission (scope_id=? AND admitted_ms>? AND admitted_ms<?)",
        ),
    ),
    (
        "held",
        lambda o: o.held(),
        (
            "candidates_by_state (scope_id=? AND state=?)",
            "records_by_payload_state (scope_id=? AND payload_digest=? AND state=?)",
        ),
    ),
]


def _plans(memory: Memory, call: Callable[[], object]) -> list[str]:
    """How SQLite runs each statement ``call`` reads with."""
    seen: list[str] = []
    connection = memory.engine.store.database._connection  # type: ignore[attr-defined]
    connection.set_trace_callback(seen.append)
    try:
        call()
    finally:
        connection.set_trace_callback(None)
    with sqlite3.connect(memory.path) as lite:
        return [
            " | ".join(row[3] for row in lite.execute("EXPLAIN QUERY PLAN " + statement))
            for statement in seen
            if statement.startswith("SELECT")
        ]


def test_every_view_reads_through_its_index(sqlite_memory: Memory) -> None:
    memory = sqlite_memory
    gone = _history(memory)
    overview = _overview(memory)
    for name, view, indexes in [
        *VIEW_PLANS,
        ("record", lambda o: o.record(gone), ("journal_by_target (scope_id=? AND target=?)",)),
    ]:
        plans = " || ".join(_plans(memory, functools.partial(view, overview)))
        assert not re.search(rf"\bSCAN ({'|'.join(GROWING)})\b", plans), (name, plans)
        assert all(index in plans for index in indexes), (name, plans)
        # Pages come in their index's order (the audit's, past the instant, in the order
        # of insertion: SQLite sorts only entries of the same instant).
        ordered = plans.replace("USE TEMP B-TREE FOR RIGHT PART OF ORDER BY", "")
        if name not in ("held", "record", "counts"):
            assert "TEMP B-TREE" not in ordered, (name, plans)
