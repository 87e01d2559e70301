"""Every contract code engram emits, produced with its exact envelope, and the other
behaviours gap G24 of docs/memory-contract.md lists as untested: pending purges and
their sweep, the start-up sweep, fresh sessions, redaction of attestation and
reconciliation, non-NFC free text, the published output schemas, the durability
option and the pragmas, and the doctor's 30-day warning.

Store faults SQLite will not produce on demand (a failing ``COMMIT``) come from a
wrapper around the store's own connection: a fake of the driver layer only; every
statement it lets through runs on the real file.
"""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from engram import errors
from engram.canonical import digest
from engram.crypto.keyfiles import load_keyring
from engram.errors import ContractError
from engram.host.profile import load_profile
from engram.host.runtime import binding_of, open_memory
from engram.memory.engine import MemoryEngine
from engram.memory.maintenance import Maintenance
from engram.memory.purge import coverage_receipt
from engram.memory.schemas import OUTPUT_SCHEMAS
from engram.memory.settings import HostPolicy
from engram.memory.validation import format_instant
from engram.store.location import DatabaseUrl
from engram.store.sqlite.memory_store import SqliteMemoryStore
from engram.testing import NOW, PURPOSE, Clock, binding, capture_args, host_profile, now_ms
from tests.memory.conftest import Memory, contract_errors
from tests.memory.conftest import open_memory as open_test_memory

SCOPE_ID = binding().scope.scope_id
AUDIT_ID = re.compile(r"aud_[a-z2-7]{26}")
SESSION_ID = re.compile(r"ses_[a-z2-7]{16}")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
HOUR = 3_600_000
DAY = 86_400_000
SECRET = "AKIA" + "Q7RZ4T2LX9MBN3VD"
TEXT = "Nightly builds publish to the staging bucket at 02:00 UTC."

#: The contract's error table (§2 "Error codes and what to do"): code -> (constant
#: message, retriable). Retriable are exactly the codes of the "back off, retry" row and
#: MUTATION_OUTCOME_UNKNOWN ("retry with the same key and arguments"). The messages are
#: engram's constants (memory-contract.md §4; RESULT_TOO_LARGE names the fixed ceiling).
CONTRACT: dict[str, tuple[str, bool]] = {
    "INVALID_SCHEMA": ("Arguments do not match the tool's closed schema.", False),
    "INVALID_DIGEST": (
        "A digest is not sha256: followed by 64 lowercase hex characters.",
        False,
    ),
    "UNAUTHORIZED": ("The bound principal lacks authority for this operation.", False),
    "AUTHORIZATION_EXPIRED": ("The authorization has expired.", False),
    "AUTHORIZATION_REVOKED": ("The authorization has been revoked.", False),
    "NOT_FOUND": ("The target is not available.", False),
    "DIGEST_CONFLICT": (
        "The idempotency key was already used with different content or target.",
        False,
    ),
    "ILLEGAL_TRANSITION": ("The lifecycle state forbids this operation.", False),
    "ALREADY_TERMINAL": ("The target is already in a terminal state.", False),
    "MUTATION_OUTCOME_UNKNOWN": (
        "The mutation may have committed; retry with the same key and arguments.",
        True,
    ),
    "gate_failed": ("A required confirmation or policy gate is not satisfied.", False),
    "STALE_PAGE": ("The page cursor no longer matches the query, parameters or snapshot.", False),
    "RESULT_TOO_LARGE": ("The whole result exceeds the 1,048,576-byte response ceiling.", False),
    "PROJECTION_OVERSIZED": ("A single record projection exceeds max_packet_bytes.", False),
    "RATE_LIMITED": ("Rate limited; back off and retry.", True),
    "DEADLINE_EXCEEDED": ("The deadline was exceeded; retry.", True),
    "CANCELLED": ("The call was cancelled.", True),
    "STORE_UNAVAILABLE": ("The store is unavailable; back off and retry.", True),
    "FENCE_LOST": ("The writer fence was lost; retry.", True),
    "CURSOR_GAP": ("The journal cursor has a gap; retry.", True),
    "POLICY_UNAVAILABLE": ("The host policy is unavailable; retry.", True),
    "POLICY_STALE": ("The host policy decision is stale; retry.", True),
    "PROJECTION_STALE": ("A projection is stale; retry.", True),
    "RANKING_UNAVAILABLE": ("A required ranking channel is unavailable.", True),
    "CAPABILITY_UNAVAILABLE": ("A required capability is unavailable.", False),
    "JOURNAL_CORRUPT": ("The journal failed verification.", False),
    "BLOB_MISSING": ("Sealed content is missing.", False),
    "REGISTRY_VERSION_UNAVAILABLE": ("The registry version is unavailable.", False),
    "BACKUP_INVALID": ("The backup is invalid.", False),
    "RESTORE_REFUSED": ("The restore was refused.", False),
    "MIGRATION_LEDGER_INVALID": ("The migration ledger is invalid.", False),
}


# --- helpers ---------------------------------------------------------------------------


def _refused(envelope: dict[str, Any], code: str) -> None:
    """``envelope`` is exactly the contract's failure envelope for ``code``."""
    message, retriable = CONTRACT[code]
    assert envelope == {
        "ok": False,
        "auditId": envelope.get("auditId"),
        "redactionClass": "high",
        "error": {"code": code, "message": message, "retriable": retriable},
    }
    assert AUDIT_ID.fullmatch(envelope["auditId"])


def _host(memory: Memory) -> Maintenance:
    return Maintenance(memory.engine, binding().scope)


def _admission(memory: Memory, candidate_id: str, key: str) -> dict[str, Any]:
    return memory.call("request_admission", {"candidate_id": candidate_id, "idempotency_key": key})


def _withdraw_args(
    candidate_id: str, key: str = "withdraw-key-0000001", reason: str = "reason:wrong-draft"
) -> dict[str, Any]:
    return {"candidate_id": candidate_id, "idempotency_key": key, "reason_ref": reason}


def _forget_args(
    record_id: str, key: str = "forget-key-00000001", reason: str = "reason:obsolete"
) -> dict[str, Any]:
    return {"record_id": record_id, "idempotency_key": key, "reason_ref": reason}


def _confirm_request(memory: Memory, target: str) -> None:
    """``engram host confirm`` of the one open request for ``target``."""
    [request] = [row for row in _host(memory).pending().confirmations if row.target == target]
    _host(memory).confirm(request.request_id)


def _approve(memory: Memory, tool: str, arguments: dict[str, Any]) -> None:
    """The host path up to the agent's retry: gate_failed, then ``engram host confirm``."""
    _refused(memory.call(tool, arguments), "gate_failed")
    _confirm_request(memory, arguments.get("candidate_id") or arguments["record_id"])


def _confirmed(memory: Memory, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    _approve(memory, tool, arguments)
    envelope = memory.call(tool, arguments)
    assert envelope["ok"] is True, envelope
    return envelope


def _rows(store: Memory | Path, sql: str, *parameters: Any) -> list[tuple[Any, ...]]:
    """Rows of a test's memory, or of the SQLite file of a profile's store."""
    if isinstance(store, Memory):
        return store.rows(sql, parameters)
    with closing(sqlite3.connect(store)) as db:
        return list(db.execute(sql, parameters))


def _events(memory: Memory | Path, operation: str | None = None) -> list[dict[str, Any]]:
    bodies = [
        json.loads(body)
        for (body,) in _rows(
            memory, "SELECT body FROM journal WHERE scope_id = ? ORDER BY cursor", SCOPE_ID
        )
    ]
    return [body for body in bodies if operation is None or body["operation"] == operation]


def _audit_outcome(memory: Memory | Path, audit_id: str) -> str:
    [(outcome,)] = _rows(memory, "SELECT outcome FROM audit WHERE audit_id = ?", audit_id)
    return str(outcome)


def _candidate_state(memory: Memory, candidate_id: str) -> str:
    with memory.engine.store.read() as reader:
        candidate = reader.candidate(SCOPE_ID, candidate_id)
    assert candidate is not None
    return candidate.state


def _state_in(store: Any, record_id: str) -> str:
    with store.read() as reader:
        record = reader.record(SCOPE_ID, record_id)
    assert record is not None
    return str(record.state)


def _has_key(memory: Memory, owner: str) -> bool:
    with memory.engine.store.read() as reader:
        return reader.data_key(owner) is not None


Run = Callable[[], sqlite3.Cursor]
Hook = Callable[[str, Run], sqlite3.Cursor]


class _Connection:
    """The store's real connection, each statement passed through ``hook``."""

    def __init__(self, real: sqlite3.Connection, hook: Hook) -> None:
        self._real, self._hook = real, hook

    def execute(self, sql: str, parameters: Any = ()) -> sqlite3.Cursor:
        return self._hook(sql, lambda: self._real.execute(sql, parameters))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _wrap(memory: Memory, monkeypatch: pytest.MonkeyPatch, hook: Hook) -> None:
    """Pass every statement of the store through ``hook`` (on either backend)."""
    database = memory.engine.store.database  # type: ignore[attr-defined]
    if isinstance(memory.location, DatabaseUrl):
        real = database._execute

        def execute(connection: Any, sql: str, parameters: Any = ()) -> Any:
            return hook(sql, lambda: real(connection, sql, parameters))

        monkeypatch.setattr(database, "_execute", execute)
        return
    monkeypatch.setattr(database, "_connection", _Connection(database._connection, hook))


def _fail_once(
    memory: Memory,
    monkeypatch: pytest.MonkeyPatch,
    statement: Callable[[str], bool],
    *,
    after_running: bool = False,
) -> list[str]:
    """The first statement matching ``statement`` fails (after it ran, if told so)."""
    failed: list[str] = []

    def hook(sql: str, run: Run) -> sqlite3.Cursor:
        if failed or not statement(sql):
            return run()
        failed.append(sql)
        if after_running:
            run()
        raise _io_error(memory)

    _wrap(memory, monkeypatch, hook)
    return failed


def _io_error(memory: Memory) -> Exception:
    """What the backend's driver raises when the disk fails under it."""
    if isinstance(memory.location, DatabaseUrl):
        import psycopg

        return psycopg.OperationalError("could not write to file: No space left on device")
    return sqlite3.OperationalError("disk I/O error")


def _is_commit(sql: str) -> bool:
    return sql.strip().upper() == "COMMIT"


# --- the contract's error table ----------------------------------------------------------


@pytest.mark.parametrize("cls", contract_errors(), ids=lambda cls: cls.code)
def test_every_contract_error_has_the_contracts_message_and_retriable_flag(
    cls: type[ContractError],
) -> None:
    assert cls.code in CONTRACT
    assert (cls.message, cls.retriable) == CONTRACT[cls.code]
    assert cls.__name__ in errors.__all__


def test_the_error_tree_holds_exactly_the_contracts_codes() -> None:
    codes = [cls.code for cls in contract_errors()]
    assert sorted(codes) == sorted(CONTRACT)
    assert {code for code, (_, retriable) in CONTRACT.items() if retriable} == {
        "MUTATION_OUTCOME_UNKNOWN",
        "RATE_LIMITED",
        "DEADLINE_EXCEEDED",
        "CANCELLED",
        "STORE_UNAVAILABLE",
        "FENCE_LOST",
        "CURSOR_GAP",
        "POLICY_UNAVAILABLE",
        "POLICY_STALE",
        "PROJECTION_STALE",
        "RANKING_UNAVAILABLE",
    }


# --- MUTATION_OUTCOME_UNKNOWN --------------------------------------------------------------


def _ready(memory: Memory, tool: str) -> tuple[dict[str, Any], str]:
    """Arguments for one ``tool`` call that would succeed now, and its journal operation."""
    if tool == "request_admission":
        candidate = memory.capture(TEXT, "unknown.capture-0001")
        return {"candidate_id": candidate, "idempotency_key": "unknown.admission-01"}, "admission"
    if tool == "withdraw":
        arguments = _withdraw_args(memory.capture(TEXT, "unknown.capture-0001"))
        _approve(memory, "withdraw", arguments)
        return arguments, "withdraw"
    arguments = _forget_args(memory.admit(TEXT, "unknown"))
    _approve(memory, "forget", arguments)
    return arguments, "tombstone"


@pytest.mark.real_stores
def test_a_capture_whose_commit_failed_is_outcome_unknown_and_its_retry_captures_once(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    arguments = capture_args(text=TEXT, key="unknown.capture-0001")
    failed = _fail_once(memory, monkeypatch, _is_commit)

    unknown = memory.call("capture", arguments)
    retried = memory.value("capture", arguments)

    assert failed == ["COMMIT"]
    _refused(unknown, "MUTATION_OUTCOME_UNKNOWN")
    assert _audit_outcome(memory, unknown["auditId"]) == "MUTATION_OUTCOME_UNKNOWN"
    assert retried["status"] == "committed_pending"  # the first attempt did not commit
    assert retried["cursor"] == "1"
    [event] = _events(memory)
    assert (event["operation"], event["target"]) == ("capture", retried["candidate_id"])
    assert _rows(memory, "SELECT count(*) FROM candidates") == [(1,)]
    assert memory.value("capture", arguments) == {**retried, "status": "duplicate_exact"}


@pytest.mark.real_stores
@pytest.mark.parametrize("tool", ["request_admission", "withdraw", "forget"])
def test_a_failed_commit_is_mutation_outcome_unknown_and_the_same_retry_settles_it(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    arguments, operation = _ready(memory, tool)
    before = len(_events(memory, operation))
    failed = _fail_once(memory, monkeypatch, _is_commit)

    unknown = memory.call(tool, arguments)

    assert failed == ["COMMIT"]
    _refused(unknown, "MUTATION_OUTCOME_UNKNOWN")
    assert _audit_outcome(memory, unknown["auditId"]) == "MUTATION_OUTCOME_UNKNOWN"
    assert len(_events(memory, operation)) == before  # rolled back: nothing happened
    settled = memory.value(tool, arguments)  # the approval was not spent either
    assert settled["replayed"] is False
    assert len(_events(memory, operation)) == before + 1
    assert memory.value(tool, arguments) == {**settled, "replayed": True}
    assert len(_events(memory, operation)) == before + 1


@pytest.mark.real_stores
def test_a_commit_that_took_effect_but_reported_failure_is_still_an_outcome_unknown_envelope(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "It may have committed": the COMMIT reaches the file, then the driver reports an
    # error. The agent must get MUTATION_OUTCOME_UNKNOWN, and its retry the committed
    # outcome as a replay.
    arguments = capture_args(text=TEXT, key="unknown.capture-0001")
    _fail_once(memory, monkeypatch, _is_commit, after_running=True)

    unknown = memory.call("capture", arguments)

    _refused(unknown, "MUTATION_OUTCOME_UNKNOWN")
    retried = memory.value("capture", arguments)
    assert retried["status"] == "duplicate_exact"
    [event] = _events(memory)
    assert (event["operation"], event["target"]) == ("capture", retried["candidate_id"])


# --- STORE_UNAVAILABLE ---------------------------------------------------------------------


def _nothing_written(memory: Memory) -> None:
    for table in ("candidates", "records", "journal", "idempotency", "data_keys"):
        assert _rows(memory, f"SELECT count(*) FROM {table}") == [(0,)], table


def test_a_write_lock_held_past_the_busy_timeout_is_store_unavailable_and_writes_nothing(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engram.store.sqlite.database.BUSY_TIMEOUT_MS", 20)
    memory = open_test_memory(tmp_path, clock)
    blocker = sqlite3.connect(memory.path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    refused: list[str] = []

    def release_after_the_refusal(sql: str, run: Run) -> sqlite3.Cursor:
        try:
            return run()
        except sqlite3.OperationalError as exc:
            refused.append(f"{sql}: {exc}")
            blocker.execute("ROLLBACK")  # so the refusal's audit entry can be written
            raise

    _wrap(memory, monkeypatch, release_after_the_refusal)
    arguments = capture_args(text=TEXT, key="busy.capture-000001")

    envelope = memory.call("capture", arguments)

    blocker.close()
    assert refused == ["BEGIN IMMEDIATE: database is locked"]
    _refused(envelope, "STORE_UNAVAILABLE")
    _nothing_written(memory)
    assert _audit_outcome(memory, envelope["auditId"]) == "STORE_UNAVAILABLE"
    assert memory.value("capture", arguments)["cursor"] == "1"  # the retry is the first


def test_a_store_locked_even_for_the_audit_entry_still_answers_store_unavailable(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("engram.store.sqlite.database.BUSY_TIMEOUT_MS", 20)
    memory = open_test_memory(tmp_path, clock)
    blocker = sqlite3.connect(memory.path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # held through the call and its audit entry
    arguments = capture_args(text=TEXT, key="locked.capture-00001")

    with caplog.at_level("WARNING", logger="engram.memory"):
        envelope = memory.call("capture", arguments)

    blocker.execute("ROLLBACK")
    blocker.close()
    _refused(envelope, "STORE_UNAVAILABLE")
    _nothing_written(memory)
    assert _rows(memory, "SELECT count(*) FROM audit") == [(0,)]
    assert [r.getMessage() for r in caplog.records] == [
        f"audit entry {envelope['auditId']} could not be written"
    ]
    assert TEXT not in caplog.text


#: The statement that starts a write transaction, on each backend.
_BEGIN_WRITE = {"sqlite": "BEGIN IMMEDIATE", "postgresql": "SELECT pg_advisory_xact_lock"}


def test_a_postgresql_store_locked_past_the_lock_timeout_answers_store_unavailable(
    tmp_path: Path,
    clock: Clock,
    postgres_url: DatabaseUrl,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import psycopg

    monkeypatch.setattr("engram.store.postgresql.database.LOCK_TIMEOUT_MS", 50)
    memory = open_test_memory(tmp_path, clock, location=postgres_url)
    lock = memory.engine.store.database._lock_key  # type: ignore[attr-defined]
    arguments = capture_args(text=TEXT, key="locked.capture-00001")
    with psycopg.connect(postgres_url.url, autocommit=True) as blocker:
        blocker.execute("SELECT pg_advisory_lock(%s)", (lock,))  # another server writing
        with caplog.at_level("WARNING", logger="engram.memory"):
            envelope = memory.call("capture", arguments)
        blocker.execute("SELECT pg_advisory_unlock(%s)", (lock,))

    _refused(envelope, "STORE_UNAVAILABLE")
    _nothing_written(memory)
    assert _rows(memory, "SELECT count(*) FROM audit") == [(0,)]
    assert [r.getMessage() for r in caplog.records] == [
        f"audit entry {envelope['auditId']} could not be written"
    ]
    assert memory.value("capture", arguments)["cursor"] == "1"  # the retry is the first
    memory.engine.store.close()


@pytest.mark.real_stores
@pytest.mark.parametrize("statement", ["begin-write", "INSERT INTO candidates"])
def test_a_store_error_before_the_commit_is_store_unavailable_and_rolls_everything_back(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, statement: str
) -> None:
    if statement == "begin-write":
        statement = _BEGIN_WRITE[memory.backend]
    failed = _fail_once(memory, monkeypatch, lambda sql: sql.startswith(statement))

    envelope = memory.call("capture", capture_args(text=TEXT, key="busy.capture-000001"))

    assert len(failed) == 1
    _refused(envelope, "STORE_UNAVAILABLE")
    _nothing_written(memory)
    assert _audit_outcome(memory, envelope["auditId"]) == "STORE_UNAVAILABLE"


@pytest.mark.real_stores
def test_a_store_failure_during_search_is_store_unavailable_never_an_empty_success(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.admit(TEXT, "searchable")
    _fail_once(memory, monkeypatch, lambda sql: " MATCH " in sql or "lexical_postings" in sql)

    envelope = memory.call("search", {"query": "nightly builds", "purpose_ref": PURPOSE})

    _refused(envelope, "STORE_UNAVAILABLE")
    assert _audit_outcome(memory, envelope["auditId"]) == "STORE_UNAVAILABLE"


# --- BLOB_MISSING ----------------------------------------------------------------------


@pytest.mark.real_stores
def test_a_record_whose_data_key_was_deleted_out_of_band_is_blob_missing(memory: Memory) -> None:
    record_id = memory.admit(TEXT, "keyless")
    memory.rows("DELETE FROM data_keys WHERE owner = ?", (record_id,))

    got = memory.call("get", {"record_id": record_id, "purpose_ref": PURPOSE})
    searched = memory.call("search", {"query": "nightly builds", "purpose_ref": PURPOSE})

    _refused(got, "BLOB_MISSING")
    _refused(searched, "BLOB_MISSING")
    assert _audit_outcome(memory, got["auditId"]) == "BLOB_MISSING"
    assert _state_in(memory.engine.store, record_id) == "accepted_current"


# --- ILLEGAL_TRANSITION and the candidate keys ----------------------------------------------


def _held(memory: Memory) -> str:
    """A ``pending_adjudication`` candidate: forgotten content captured again."""
    forgotten = memory.admit(TEXT, "origin")
    _confirmed(memory, "forget", _forget_args(forgotten))
    again = memory.capture(TEXT, "again.capture-000001")
    held = _admission(memory, again, "again.admission-0001")["output"]["value"]["outcome"]
    assert held["status"] == "pending_adjudication"
    return again


@pytest.mark.real_stores
def test_admitting_or_withdrawing_a_held_candidate_is_illegal_transition(memory: Memory) -> None:
    held = _held(memory)
    before = _events(memory)

    admitted = _admission(memory, held, "again.admission-0002")
    withdrawn = memory.call("withdraw", _withdraw_args(held))

    _refused(admitted, "ILLEGAL_TRANSITION")
    _refused(withdrawn, "ILLEGAL_TRANSITION")
    assert _audit_outcome(memory, admitted["auditId"]) == "ILLEGAL_TRANSITION"
    assert _audit_outcome(memory, withdrawn["auditId"]) == "ILLEGAL_TRANSITION"
    assert _host(memory).pending().confirmations == []  # refused before the gate
    assert _host(memory).pending().adjudications == [held]
    assert _candidate_state(memory, held) == "pending_adjudication"
    assert _has_key(memory, held)  # kept until the host decides
    assert _events(memory) == before
    replay = _admission(memory, held, "again.admission-0001")["output"]["value"]
    assert (replay["outcome"]["status"], replay["replayed"]) == ("pending_adjudication", True)


@pytest.mark.real_stores
def test_an_admission_rejection_destroys_the_candidates_key_at_once(memory: Memory) -> None:
    arguments = capture_args(text=f"Deploy with {SECRET}.", key="secret.capture-00001")
    candidate = memory.value("capture", arguments)["candidate_id"]
    assert _has_key(memory, candidate)

    outcome = _admission(memory, candidate, "secret.admission-001")["output"]["value"]["outcome"]

    assert outcome["status"] == "rejected"
    assert not _has_key(memory, candidate)
    [(state, sealed)] = _rows(
        memory, "SELECT state, sealed FROM candidates WHERE candidate_id = ?", candidate
    )
    assert (state, sealed) == ("rejected", None)


# --- DIGEST_CONFLICT on withdraw and forget -------------------------------------------------


def test_a_withdraw_key_reused_for_another_reason_or_candidate_is_digest_conflict(
    memory: Memory,
) -> None:
    first = memory.capture("First draft.", "first.capture-00001")
    second = memory.capture("Second draft.", "second.capture-0001")
    done = _confirmed(memory, "withdraw", _withdraw_args(first))["output"]["value"]

    other_reason = memory.call("withdraw", _withdraw_args(first, reason="reason:other"))
    other_target = memory.call("withdraw", _withdraw_args(second))
    other_tool = memory.call("forget", _forget_args("mem_" + "a" * 52, key="withdraw-key-0000001"))

    for refused in (other_reason, other_target, other_tool):
        _refused(refused, "DIGEST_CONFLICT")
    assert _host(memory).pending().confirmations == []  # no human asked for a conflict
    assert _candidate_state(memory, second) == "pending"
    assert memory.value("withdraw", _withdraw_args(first)) == {**done, "replayed": True}


def test_a_forget_key_reused_for_another_reason_or_record_is_digest_conflict(
    memory: Memory,
) -> None:
    first = memory.admit("First fact about the release train.", "first")
    second = memory.admit("Second fact about the release train.", "second")
    done = _confirmed(memory, "forget", _forget_args(first))["output"]["value"]

    other_reason = memory.call("forget", _forget_args(first, reason="reason:other"))
    other_target = memory.call("forget", _forget_args(second))

    _refused(other_reason, "DIGEST_CONFLICT")
    _refused(other_target, "DIGEST_CONFLICT")
    assert _host(memory).pending().confirmations == []
    assert _state_in(memory.engine.store, second) == "accepted_current"
    assert memory.call("get", {"record_id": second, "purpose_ref": PURPOSE})["ok"] is True
    assert memory.value("forget", _forget_args(first)) == {**done, "replayed": True}


# --- pending purges and the sweep ------------------------------------------------------------


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint waits for old readers as long as the busy timeout: keep it short."""
    monkeypatch.setattr("engram.store.sqlite.database.BUSY_TIMEOUT_MS", 50)


@pytest.fixture
def quick(tmp_path: Path, clock: Clock, short_busy_timeout: None) -> Memory:
    return open_test_memory(tmp_path, clock)


@contextmanager
def _old_reader(path: Path) -> Iterator[None]:
    """Another process inside a read transaction: its snapshot pins the WAL."""
    reader = sqlite3.connect(path, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT 1 FROM records LIMIT 1").fetchall()
        yield
    finally:
        reader.close()


def _purge_done(store: Memory | Path, owner: str) -> int | None:
    [(done,)] = _rows(store, "SELECT done_ms FROM purges WHERE owner = ?", owner)
    return None if done is None else int(done)


@pytest.mark.parametrize(
    ("tool", "status"), [("withdraw", "key_destruction"), ("forget", "projection_invalidation")]
)
def test_cleanup_under_an_old_reader_is_pending_until_the_sweep_finishes_it(
    quick: Memory, clock: Clock, tool: str, status: str
) -> None:
    if tool == "withdraw":
        owner = quick.capture(TEXT, "purge.capture-00001")
        arguments = _withdraw_args(owner)
    else:
        owner = quick.admit(TEXT, "purge")
        arguments = _forget_args(owner)
    _approve(quick, tool, arguments)

    with _old_reader(quick.path):
        envelope = quick.call(tool, arguments)
        assert envelope["ok"] is True, envelope
        value = envelope["output"]["value"]
        assert value[status] == "pending"
        assert "coverage_receipt_digest" not in value
        Draft202012Validator(OUTPUT_SCHEMAS[tool]).validate(envelope)
        assert not _has_key(quick, owner)  # destroyed in the transaction; the WAL is not
        assert _purge_done(quick, owner) is None
        assert _host(quick).sweep() == {"expired": 0, "purged": 0, "purges_pending": 1}
    clock.now = NOW + 5_000

    swept = _host(quick).sweep()

    assert swept == {"expired": 0, "purged": 1, "purges_pending": 0}
    assert _purge_done(quick, owner) == NOW + 5_000
    assert _host(quick).sweep() == {"expired": 0, "purged": 0, "purges_pending": 0}
    replay = quick.value(tool, arguments)
    if tool == "forget":  # verified when the sweep finished the cleanup
        assert replay.pop("coverage_receipt_digest") == coverage_receipt(
            SCOPE_ID, owner, NOW + 5_000
        )
    assert replay == {**value, "replayed": True, status: "complete"}


def test_a_sweep_of_one_scope_neither_counts_nor_finishes_another_scopes_purge(
    quick: Memory,
) -> None:
    # Maintenance is "host operations for one scope"; I4.9: host maintenance of one
    # scope never reaches another (every lookup by scope).
    other = binding(tenant="tenant-b")
    theirs = Maintenance(quick.engine, other.scope)
    candidate = quick.value("capture", capture_args(TEXT, "other.capture-00001"), other)
    arguments = _withdraw_args(candidate["candidate_id"])
    _refused(quick.call("withdraw", arguments, other), "gate_failed")
    [request] = theirs.pending().confirmations
    theirs.confirm(request.request_id)
    with _old_reader(quick.path):
        assert quick.value("withdraw", arguments, other)["key_destruction"] == "pending"

    ours = _host(quick).sweep()

    assert ours == {"expired": 0, "purged": 0, "purges_pending": 0}
    assert theirs.sweep() == {"expired": 0, "purged": 1, "purges_pending": 0}


# --- opening memory from a profile: the start-up sweep, sessions, durability ----------------


def _profile(tmp_path: Path, name: str = "host", **options: Any) -> Path:
    return host_profile(tmp_path / name, **options)


def test_opening_memory_expires_records_whose_instant_passed(tmp_path: Path) -> None:
    path = _profile(tmp_path)
    profile = load_profile(path)
    earlier = Clock(now_ms() - 10 * DAY)
    engine = MemoryEngine(
        SqliteMemoryStore(profile.store_file),
        load_keyring(profile.keys),
        profile.policy,
        clock=earlier,
    )
    then, who = Memory(engine, earlier, profile.store_file), binding_of(profile)

    def admit_then(text: str, key: str, **payload: Any) -> str:
        arguments = capture_args(
            text, f"{key}.capture-0001", valid_time={"t": earlier.now - DAY}, **payload
        )
        candidate = then.value("capture", arguments, who)["candidate_id"]
        admission = {"candidate_id": candidate, "idempotency_key": f"{key}.admission-01"}
        return str(then.value("request_admission", admission, who)["outcome"]["record_id"])

    expiring_id = admit_then(
        TEXT, "expiring", retention={"expires_at": format_instant(earlier.now + HOUR)}
    )
    lasting_id = admit_then("A lasting fact.", "lasting")  # the 30-day default ceiling
    assert _state_in(open_memory(path, sweep=False).engine.store, expiring_id) == (
        "accepted_current"
    )

    opened = open_memory(path)

    assert _state_in(opened.engine.store, expiring_id) == "expired"
    assert _state_in(opened.engine.store, lasting_id) == "accepted_current"
    last = _events(profile.store_file)[-1]
    assert (last["operation"], last["target"], last["to_state"]) == (
        "expire",
        expiring_id,
        "expired",
    )
    assert last["actor"] == digest("actor", {"host": "operator"})
    got = opened.call("get", {"record_id": lasting_id, "purpose_ref": PURPOSE})
    assert got["ok"] is True


def test_opening_memory_finishes_a_purge_left_pending(
    tmp_path: Path, short_busy_timeout: None
) -> None:
    path = _profile(tmp_path)
    first = open_memory(path)
    captured = first.call("capture", capture_args(TEXT, "purge.capture-00001"))
    arguments = _withdraw_args(captured["output"]["value"]["candidate_id"])
    _refused(first.call("withdraw", arguments), "gate_failed")
    host = Maintenance(first.engine, first.binding.scope)
    [request] = host.pending().confirmations
    host.confirm(request.request_id)
    with _old_reader(first.profile.store_file):
        value = first.call("withdraw", arguments)["output"]["value"]
    assert value["key_destruction"] == "pending"
    owner = arguments["candidate_id"]
    assert _purge_done(first.profile.store_file, owner) is None

    open_memory(path)

    assert _purge_done(first.profile.store_file, owner) is not None


def test_each_opening_binds_a_fresh_session_unless_the_profile_fixes_one(tmp_path: Path) -> None:
    fresh = _profile(tmp_path, "fresh")
    opened = [open_memory(fresh) for _ in range(2)]
    sessions = [memory.binding.session for memory in opened]
    fixed = _profile(tmp_path, "fixed", session="ses_pinned_by_the_host")

    assert all(SESSION_ID.fullmatch(session) for session in sessions)
    assert sessions[0] != sessions[1]
    assert [open_memory(fixed).binding.session for _ in range(2)] == ["ses_pinned_by_the_host"] * 2
    for memory in opened:  # every call of one opening is audited under its session
        audit_id = memory.call("search", {"query": "x", "purpose_ref": PURPOSE})["auditId"]
        [(identity,)] = _rows(
            memory.profile.store_file, "SELECT identity FROM audit WHERE audit_id = ?", audit_id
        )
        assert json.loads(identity)["session"] == memory.binding.session


def _pragma(store: Any, name: str) -> Any:
    return store.database._connection.execute(f"PRAGMA {name}").fetchone()[0]


@pytest.mark.parametrize(("durability", "synchronous"), [((), 2), (("full",), 2), (("normal",), 1)])
def test_a_store_runs_in_wal_with_secure_delete_and_the_chosen_synchronous_level(
    tmp_path: Path, durability: tuple[Any, ...], synchronous: int
) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db", *durability)

    assert _pragma(store, "synchronous") == synchronous
    assert _pragma(store, "journal_mode") == "wal"
    assert _pragma(store, "secure_delete") == 1
    assert _pragma(store, "foreign_keys") == 1
    assert _pragma(store, "busy_timeout") == 15_000
    assert _pragma(store, "cache_size") == -32_768  # KiB
    assert _pragma(store, "temp_store") == 2  # MEMORY
    store.close()


@pytest.mark.parametrize(
    ("line", "replacement"),
    [
        ("allow_retain = false", 'allow_retain = "false"'),
        ("enabled = true", 'enabled = "true"'),
        ("allow_retain = false", "allow_retain = 0"),
        ("max_days = 30", 'max_days = "30"'),
        ("max_days = 30", "max_days = 30.0"),
        ("max_days = 30", "max_days = true"),
        ("max_days = 30", "max_days = 0"),
        ("reconciliation_families = []", 'reconciliation_families = "fam"'),
        ("reconciliation_families = []", 'reconciliation_families = ["fam", 1]'),
        ("require_confirmation = []", 'require_confirmation = "capture"'),
        ("require_confirmation = []", 'require_confirmation = ["capture", "publish"]'),
        ('policy = "default"', 'policy = "default"\nverifier_root = 7'),
    ],
)
def test_a_policy_value_of_the_wrong_type_makes_the_profile_untrusted(
    tmp_path: Path, line: str, replacement: str
) -> None:
    path = _profile(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert line in text
    path.write_text(text.replace(line, replacement, 1), encoding="utf-8")

    with pytest.raises(errors.TrustedContextUnavailable):
        load_profile(path)


def test_the_profiles_policy_values_load_in_their_own_types(tmp_path: Path) -> None:
    path = _profile(tmp_path)
    text = path.read_text(encoding="utf-8")
    text = text.replace("allow_retain = false", "allow_retain = true")
    text = text.replace("reconciliation_families = []", 'reconciliation_families = ["fam:a"]')
    text = text.replace("require_confirmation = []", 'require_confirmation = ["capture"]')
    path.write_text(text.replace("max_days = 30", "max_days = 7"), encoding="utf-8")

    policy = load_profile(path).policy
    assert policy.allow_retain is True
    assert policy.retention_max_days == 7
    assert policy.reconciliation_families == frozenset({"fam:a"})
    assert policy.confirm_tools == frozenset({"capture"})


def test_the_profiles_durability_option_reaches_the_store(tmp_path: Path) -> None:
    path = _profile(tmp_path)
    assert load_profile(path).durability == "full"
    assert _pragma(open_memory(path).engine.store, "synchronous") == 2
    text = path.read_text(encoding="utf-8")
    assert 'durability = "full"' in text
    path.write_text(text.replace('durability = "full"', 'durability = "normal"'))

    assert load_profile(path).durability == "normal"
    assert _pragma(open_memory(path).engine.store, "synchronous") == 1


def test_audit_entries_of_reads_and_refusals_commit_with_normal_and_mutations_with_full(
    sqlite_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = sqlite_memory
    real = memory.engine.store.database._connection  # type: ignore[attr-defined]
    levels: list[int] = []

    def record_level(sql: str, run: Run) -> sqlite3.Cursor:
        if _is_commit(sql):
            levels.append(real.execute("PRAGMA synchronous").fetchone()[0])
        return run()

    _wrap(memory, monkeypatch, record_level)

    memory.value("capture", capture_args(text=TEXT, key="durable.capture-001"))
    memory.value("search", {"query": "nightly", "purpose_ref": PURPOSE})
    memory.code("get", {"record_id": "mem_" + "a" * 52, "purpose_ref": PURPOSE})
    memory.code("capture", {})

    assert levels == [2, 1, 1, 1]
    assert real.execute("PRAGMA synchronous").fetchone()[0] == 2


# --- redaction ---------------------------------------------------------------------------


FAMILIES = ["family:audit", "family:release"]


@pytest.mark.parametrize(
    ("attestation", "families", "listed"),
    [
        (None, None, ["captured_by", "retention.derivative_rule"]),
        (
            "Reviewed by the release owner.",
            None,
            ["captured_by", "evidence.attestation", "retention.derivative_rule"],
        ),
        ("", None, ["captured_by", "evidence.attestation", "retention.derivative_rule"]),
        (None, FAMILIES, ["captured_by", "reconciliation", "retention.derivative_rule"]),
        (
            "Reviewed by the release owner.",
            FAMILIES,
            ["captured_by", "evidence.attestation", "reconciliation", "retention.derivative_rule"],
        ),
    ],
    ids=["neither", "attestation", "empty-attestation", "reconciliation", "both"],
)
def test_redacted_fields_list_a_recorded_attestation_and_reconciliation(
    tmp_path: Path,
    clock: Clock,
    attestation: str | None,
    families: list[str] | None,
    listed: list[str],
) -> None:
    memory = open_test_memory(
        tmp_path, clock, HostPolicy(reconciliation_families=frozenset(FAMILIES))
    )
    extra = {"reconciliation": {"family_refs": families}} if families else {}
    arguments = capture_args(text=TEXT, key="redact.capture-0001", **extra)
    if attestation is not None:
        arguments["evidence"]["attestation"] = attestation
    candidate = memory.value("capture", arguments)["candidate_id"]
    admitted = _admission(memory, candidate, "redact.admission-01")["output"]["value"]

    got = memory.value(
        "get", {"record_id": admitted["outcome"]["record_id"], "purpose_ref": PURPOSE}
    )
    [packet] = memory.value("search", {"query": "nightly builds", "purpose_ref": PURPOSE})[
        "records"
    ]

    record = got["record"]
    assert got["redacted_fields"] == listed
    assert got["redaction_receipt_digest"] == digest(
        "receipt/redaction",
        {
            "record_id": record["record_id"],
            "record_digest": record["record_digest"],
            "policy": "engram.redaction/v1",
            "redacted_fields": listed,
        },
    )
    assert (packet["redacted_fields"], packet["redaction_receipt_digest"]) == (
        listed,
        got["redaction_receipt_digest"],
    )
    assert set(record["evidence"]) == {"evidence_ref", "evidence_digest", "citation_ids"}
    assert "reconciliation" not in record
    assert "captured_by" not in record
    assert "family:" not in json.dumps([got, packet])
    assert "release owner" not in json.dumps([got, packet])


# --- NFC: free text as written, opaque references in NFC --------------------------------------


def _nfd(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    assert decomposed != text
    return decomposed


def test_component_text_attestation_and_query_in_nfd_are_accepted_as_written(
    memory: Memory,
) -> None:
    text = _nfd("Le café crème est servi à l'hôtel Négresco.")
    arguments = capture_args(text=text, key="nfd.capture-0000001")
    arguments["evidence"]["attestation"] = _nfd("Vérifié par l'équipe.")
    candidate = memory.value("capture", arguments)["candidate_id"]
    record_id = _admission(memory, candidate, "nfd.admission-00001")["output"]["value"]["outcome"][
        "record_id"
    ]

    got = memory.value("get", {"record_id": record_id, "purpose_ref": PURPOSE})

    assert got["record"]["components"][0]["text"] == text  # the same code points
    for query in (_nfd("café crème"), "café crème", _nfd("hôtel")):
        found = memory.value("search", {"query": query, "purpose_ref": PURPOSE})["records"]
        assert [packet["record"]["record_id"] for packet in found] == [record_id], query


@pytest.mark.real_stores
@pytest.mark.parametrize("site", ["source_ref", "evidence_ref", "reason_ref"])
def test_an_opaque_reference_in_nfd_is_invalid_schema(memory: Memory, site: str) -> None:
    def call(reference: str) -> dict[str, Any]:
        if site == "reason_ref":
            return memory.call("forget", _forget_args("mem_" + "a" * 52, reason=reference))
        arguments = capture_args(text=TEXT, key=f"{site}.capture-00001")
        if site == "source_ref":
            arguments["payload"]["citations"][0]["source_ref"] = reference
        else:
            arguments["evidence"]["evidence_ref"] = reference
        return memory.call("capture", arguments)

    refused = call(_nfd("ref:café"))

    _refused(refused, "INVALID_SCHEMA")
    assert _events(memory) == []
    accepted = call("ref:café")
    if site == "reason_ref":
        _refused(accepted, "NOT_FOUND")  # past the schema: the unknown record
    else:
        assert accepted["ok"] is True, accepted


# --- the published output schemas ------------------------------------------------------------


def test_real_envelopes_of_all_six_tools_match_their_published_output_schemas(
    memory: Memory,
) -> None:
    seen: dict[str, set[bool]] = {tool: set() for tool in OUTPUT_SCHEMAS}

    def check(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        envelope = memory.call(tool, arguments)
        validator = Draft202012Validator(OUTPUT_SCHEMAS[tool])
        validator.validate(envelope)
        assert not validator.is_valid({**envelope, "extra": True})  # closed
        seen[tool].add(envelope["ok"])
        return envelope

    for schema in OUTPUT_SCHEMAS.values():
        Draft202012Validator.check_schema(schema)
    first = capture_args(text=TEXT, key="schema.capture-0001")
    candidate = check("capture", first)["output"]["value"]["candidate_id"]
    check("capture", first)  # duplicate_exact
    check("capture", capture_args(text="Other text.", key="schema.capture-0001"))
    check("capture", {})
    admission = {"candidate_id": candidate, "idempotency_key": "schema.admission-01"}
    record_id = check("request_admission", admission)["output"]["value"]["outcome"]["record_id"]
    check("request_admission", admission)  # replayed
    secret = capture_args(text=f"Use {SECRET}.", key="schema.capture-0002")
    rejected = memory.value("capture", secret)["candidate_id"]
    check("request_admission", {"candidate_id": rejected, "idempotency_key": "schema.admission-02"})
    check("request_admission", {"candidate_id": "cand_" + "a" * 32, "idempotency_key": "k" * 16})
    memory.admit("Nightly builds also run the linters.", "schema-second")
    page = check("search", {"query": "nightly builds", "purpose_ref": PURPOSE, "limit": 1})
    assert "next_page_cursor" in page["output"]["value"]
    check("search", {"query": "unmatched", "purpose_ref": PURPOSE})
    check("search", {"query": "nightly", "purpose_ref": PURPOSE, "page_cursor": "forged"})
    check("get", {"record_id": record_id, "purpose_ref": PURPOSE})
    check("get", {"record_id": "mem_" + "a" * 52, "purpose_ref": PURPOSE})
    draft = _withdraw_args(memory.capture("A wrong draft.", "schema.capture-0003"))
    check("withdraw", draft)  # gate_failed
    _confirm_request(memory, draft["candidate_id"])
    check("withdraw", draft)
    check("withdraw", draft)  # replayed
    forget = _forget_args(record_id)
    check("forget", forget)  # gate_failed
    _confirm_request(memory, record_id)
    assert "coverage_receipt_digest" in check("forget", forget)["output"]["value"]
    check("forget", forget)  # replayed
    check("forget", _forget_args(record_id, key="forget-key-00000002"))  # ALREADY_TERMINAL

    assert seen == {tool: {True, False} for tool in OUTPUT_SCHEMAS}


# --- the doctor's retention warning ------------------------------------------------------------


def _doctor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *init: str) -> list[dict[str, Any]]:
    home, workspace = tmp_path / "home", tmp_path / "workspace"
    home.mkdir()
    workspace.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(tmp_path / "global-memory"))
    monkeypatch.chdir(workspace)
    from engram.cli.main import cli

    created = CliRunner().invoke(
        cli,
        [
            "host",
            "init",
            str(tmp_path / "host"),
            "--tenant",
            "acme",
            "--workspace",
            "payments",
            "--principal",
            "agent-a",
            "--purpose",
            PURPOSE,
            *init,
        ],
    )
    assert created.exit_code == 0, created.output
    profile = created.stdout.strip()
    result = CliRunner().invoke(cli, ["doctor", "--json"], env={"ENGRAM_HOST_PROFILE": profile})
    assert result.exit_code == 0, result.output
    checks: list[dict[str, Any]] = json.loads(result.stdout)["checks"]
    assert [check["status"] for check in checks if check["id"] == "memory.store"] == ["pass"]
    return checks


def test_doctor_warns_when_the_retention_ceiling_is_the_30_day_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks = _doctor(tmp_path, monkeypatch)

    [warning] = [check for check in checks if check["id"] == "memory.retention_default"]
    assert (warning["status"], warning["severity"]) == ("warn", "warning")
    assert warning["message"] == "retention ceiling is the 30-day default, not a policy"


def test_doctor_does_not_warn_about_a_retention_ceiling_chosen_by_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks = _doctor(tmp_path, monkeypatch, "--retention-max-days", "90")

    assert [check for check in checks if check["id"] == "memory.retention_default"] == []
