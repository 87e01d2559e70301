"""Every call leaves an append-only audit entry without content; the journal chains."""

from __future__ import annotations

import json

import pytest

from engram.memory.journal import first_bad_cursor
from engram.testing import PURPOSE, binding, capture_args
from tests.memory.conftest import Memory


def _audit_rows(memory: Memory) -> list[tuple[str, str, str, str]]:
    return memory.rows("SELECT audit_id, tool, outcome, identity FROM audit ORDER BY at_ms, rowid")


@pytest.mark.real_stores
def test_every_call_gets_an_audit_entry_with_its_outcome_code(memory: Memory) -> None:
    ok = memory.call("capture", capture_args())
    refused = memory.call("capture", capture_args(text="other text"))
    read = memory.call("search", {"query": "x", "purpose_ref": PURPOSE})
    rows = _audit_rows(memory)
    assert [(row[0], row[1], row[2]) for row in rows] == [
        (ok["auditId"], "capture", "ok"),
        (refused["auditId"], "capture", "DIGEST_CONFLICT"),
        (read["auditId"], "search", "ok"),
    ]
    assert json.loads(rows[0][3]) == binding().identity()


@pytest.mark.real_stores
def test_audit_entries_never_hold_content(memory: Memory) -> None:
    marker = "AUDIT-CONTENT-MARKER"
    memory.call("capture", capture_args(text=marker))
    memory.call("search", {"query": marker, "purpose_ref": PURPOSE})
    dumped = json.dumps(memory.rows("SELECT * FROM audit"))
    assert marker not in dumped
    assert marker.lower() not in dumped


@pytest.mark.real_stores
@pytest.mark.parametrize("statement", ["UPDATE audit SET outcome = 'x'", "DELETE FROM audit"])
def test_the_audit_table_is_append_only(memory: Memory, statement: str) -> None:
    memory.call("capture", capture_args())
    with pytest.raises(memory.errors, match="audit is append-only"):
        memory.rows(statement)
    assert memory.rows("SELECT count(*) FROM audit") == [(1,)]


def test_the_journal_is_a_hash_chain_and_any_edit_breaks_it(memory: Memory) -> None:
    for index in range(3):
        memory.admit(f"Chained fact {index}.", f"chain{index}")
    scope_id = binding().scope.scope_id
    with memory.engine.store.read() as reader:
        events = list(reader.journal(scope_id))
    assert [event[0] for event in events] == [1, 2, 3, 4, 5, 6]
    assert first_bad_cursor(scope_id, events) is None
    tampered = [
        *events[:3],
        (4, events[3][1], events[3][2], {**events[3][3], "at": 0}),
        *events[4:],
    ]
    assert first_bad_cursor(scope_id, tampered) == 4
    assert first_bad_cursor(scope_id, [*events[:2], *events[3:]]) == 3  # the missing one
