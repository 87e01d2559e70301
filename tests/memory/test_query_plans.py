"""Every statement the engine runs finds its rows through an index.

A lookup that scans a table is invisible at test sizes and costs seconds at 100k
records (admission once scanned every accepted record to find a duplicate). The test
runs each tool and each host operation with SQLite's trace hook, then asks the
planner how it would run every statement it saw.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

import psycopg
import pytest

from engram.memory.maintenance import Maintenance
from engram.store.postgresql.memory_store import PostgresMemoryStore
from engram.store.sqlite import database
from engram.testing import PURPOSE, binding, capture_args
from engram.testing.postgres import PostgresRun
from tests.memory.conftest import Memory

#: Tables that grow with use; a full scan of one of them is a bug.
GROWING = ("records", "candidates", "journal", "audit", "idempotency", "data_keys", "confirmations")


def _workload(memory: Memory) -> None:
    host = Maintenance(memory.engine, binding().scope)
    record = memory.admit("Releases are signed with the project key.", "plans.record-1")
    duplicate = memory.value(
        "capture",
        capture_args(text="Releases are signed with the project key.", key="plans.duplicate-001"),
    )
    admission = {
        "candidate_id": duplicate["candidate_id"],
        "idempotency_key": "plans.duplicate-admit",
    }
    assert memory.value("request_admission", admission)["outcome"]["status"] == "duplicate_exact"
    memory.value("search", {"query": "signed releases", "purpose_ref": PURPOSE})
    memory.value("get", {"record_id": record, "purpose_ref": PURPOSE})
    candidate = memory.value("capture", capture_args(text="a draft", key="plans.draft-00001"))
    withdraw = {
        "candidate_id": candidate["candidate_id"],
        "idempotency_key": "plans.withdraw-0001",
        "reason_ref": "reason:draft",
    }
    memory.call("withdraw", withdraw)  # leaves a confirmation request for the host
    [request] = host.pending().confirmations
    host.confirm(request.request_id)
    memory.value("withdraw", withdraw)
    forget = {"record_id": record, "idempotency_key": "plans.forget-00001", "reason_ref": "r:x"}
    memory.engine.call("forget", forget, binding(), confirm=lambda operation: True)
    host.sweep()
    host.verify()


def _statements(memory: Memory) -> list[str]:
    seen: dict[str, str] = {}

    def trace(statement: str) -> None:
        if not statement.startswith("--"):  # statements run inside FTS5 itself
            shape = re.sub(r"'[^']*'|x'[0-9a-f]*'|\b\d+\b", "?", statement)
            seen.setdefault(shape, statement)

    connection = memory.engine.store.database._connection  # type: ignore[attr-defined]
    connection.set_trace_callback(trace)
    try:
        _workload(memory)
    finally:
        connection.set_trace_callback(None)
    return [s for s in seen.values() if re.match(r"\s*(SELECT|UPDATE|DELETE)", s)]


def _plan(memory: Memory, statement: str) -> str:
    with sqlite3.connect(memory.path) as connection:
        rows = connection.execute("EXPLAIN QUERY PLAN " + statement).fetchall()
    return " | ".join(str(row[3]) for row in rows)


def test_no_statement_scans_a_growing_table(sqlite_memory: Memory) -> None:
    memory = sqlite_memory
    statements = _statements(memory)
    assert len(statements) >= 20
    scans = {
        " ".join(statement.split())[:120]: plan
        for statement in statements
        if re.search(rf"\bSCAN ({'|'.join(GROWING)})\b", plan := _plan(memory, statement))
    }
    assert scans == {}


def test_the_duplicate_lookup_of_admission_uses_payload_and_state(sqlite_memory: Memory) -> None:
    memory = sqlite_memory
    # The duplicate and the tombstone lookups (the index of a state in admission order
    # would walk every record of that state instead).
    lookups = [s for s in _statements(memory) if "FROM records" in s and "payload_digest =" in s]
    assert len(lookups) == 2
    for lookup in lookups:
        assert _plan(memory, lookup).startswith(
            "SEARCH records USING INDEX records_by_payload_state "
            "(scope_id=? AND payload_digest=? AND state=?)"
        )


def test_the_expiry_sweep_walks_only_expired_records(sqlite_memory: Memory) -> None:
    memory = sqlite_memory
    # The scope's index of states would read every current record to compare its
    # expiry, in the sweep's write transaction, at every server start.
    [sweep] = [s for s in _statements(memory) if "FROM records" in s and "expires_ms <=" in s]
    assert _plan(memory, sweep).startswith(
        "SEARCH records USING INDEX records_by_expiry (state=? AND expires_ms>? AND expires_ms<?)"
    )


@pytest.mark.parametrize("analyzed", [False, True], ids=["new store", "analyzed"])
def test_the_expiry_sweep_on_postgresql_walks_only_live_records(
    postgres_run: PostgresRun, analyzed: bool
) -> None:
    # Before any ANALYZE (a new store, autovacuum not yet round) the planner took the
    # scope's index of states, which reads every live record, over an expiry index that
    # also held every record that had expired long ago. A schema of its own: a store
    # given back by another test keeps the statistics of what that test wrote.
    url = postgres_run.new_store("plans")
    store = PostgresMemoryStore(url)
    try:
        with psycopg.connect(url.url, autocommit=True) as connection:
            connection.execute(
                "INSERT INTO records (record_id, scope_id, candidate_id, state, record_digest,"
                " payload_digest, sealed, valid_t, expires_ms, admitted_ms, admit_cursor)"
                " SELECT 'mem_' || i, 'scope', 'cand_' || i, 'accepted_current', 'd', 'p' || i,"
                " NULL, 1, 4102444800000, i, i FROM generate_series(1, 5000) AS i"
            )
            if analyzed:
                connection.execute("ANALYZE records")
        plans: list[str] = []
        with store.read() as reader:
            run = reader.db.execute

            def explain(sql: str, parameters: Any = ()) -> Any:
                plans.append(" ".join(row[0] for row in run("EXPLAIN " + sql, parameters)))
                return run("SELECT 1 WHERE false")

            reader.db.execute = explain  # type: ignore[method-assign]
            assert reader.expired_records("scope", 1_800_000_000_000) == []
    finally:
        store.close()
    [plan] = plans
    assert "Index Scan using records_by_expiry on records" in plan, plan


def test_a_migration_version_cannot_be_registered_twice() -> None:
    def noop(connection: Any) -> None:
        return None

    with pytest.raises(ValueError, match="migration memory 1 is registered twice"):
        database.migration("memory", 1)(noop)
