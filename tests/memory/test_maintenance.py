"""Host-only maintenance: backup and restore, forgetting for good, key rotation,
revocation, journal verification and the retention sweep (issue 4, points 3, 5, 7)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engram.crypto.keyfiles import create_keyring
from engram.errors import BackupInvalid, JournalCorrupt, RestoreRefused
from engram.memory.backup import MAGIC, backup, read_backup, restore
from engram.memory.binding import Binding
from engram.memory.engine import MemoryEngine
from engram.memory.maintenance import Maintenance
from engram.memory.rotation import rotate_keys
from engram.memory.settings import HostPolicy
from engram.memory.validation import format_instant
from engram.search.analysis import index_terms
from engram.store.sqlite.memory_store import SqliteMemoryStore
from engram.testing import NOW, PURPOSE, Clock, binding, capture_args
from tests.memory.conftest import Memory, open_memory

SCOPE_ID = binding().scope.scope_id
SECRET_TEXT = "Deploy with the key " + "AKIA" + "Q7RZ4T2LX9MBN3VD" + " from the vault."
COVERAGE = re.compile(r"sha256:[0-9a-f]{64}")
HOUR = 3_600_000


# --- helpers ---------------------------------------------------------------------------


def _maintenance(memory: Memory, who: Binding | None = None) -> Maintenance:
    return Maintenance(memory.engine, (who or binding()).scope)


def _confirmed(
    memory: Memory, tool: str, arguments: dict[str, Any], who: Binding | None = None
) -> dict[str, Any]:
    """Run a gated tool through the host path: gate_failed, host confirm, retry."""
    first = memory.call(tool, arguments, who)
    assert first["ok"] is False, first
    assert first["error"]["code"] == "gate_failed"
    assert first["error"]["retriable"] is False
    target = arguments.get("candidate_id") or arguments["record_id"]
    maintenance = _maintenance(memory, who)
    [request] = [r for r in maintenance.pending().confirmations if r.target == target]
    assert (request.tool, request.target) == (tool, target)
    maintenance.confirm(request.request_id)
    value: dict[str, Any] = memory.value(tool, arguments, who)
    return value


def _forget(memory: Memory, record_id: str, key: str = "forget-key-000000001") -> dict[str, Any]:
    arguments = {"record_id": record_id, "idempotency_key": key, "reason_ref": "reason:obsolete"}
    return _confirmed(memory, "forget", arguments)


def _withdraw(memory: Memory, candidate_id: str, key: str = "withdraw-key-0000001") -> Any:
    arguments = {
        "candidate_id": candidate_id,
        "idempotency_key": key,
        "reason_ref": "reason:wrong-draft",
    }
    return _confirmed(memory, "withdraw", arguments)


def _admission(memory: Memory, candidate_id: str, key: str) -> dict[str, Any]:
    outcome: dict[str, Any] = memory.value(
        "request_admission", {"candidate_id": candidate_id, "idempotency_key": key}
    )["outcome"]
    return outcome


def _get(memory: Memory, record_id: str, who: Binding | None = None) -> dict[str, Any]:
    return memory.call("get", {"record_id": record_id, "purpose_ref": PURPOSE}, who)


def _search(memory: Memory, query: str, who: Binding | None = None) -> dict[str, Any]:
    return memory.call("search", {"query": query, "purpose_ref": PURPOSE}, who)


def _indexed(memory: Memory, record_id: str) -> bool:
    with memory.engine.store.read() as reader:
        return reader.indexed(SCOPE_ID, record_id)


def _kek_of(memory: Memory, owner: str) -> str:
    with memory.engine.store.read() as reader:
        stored = reader.data_key(owner)
    assert stored is not None
    return stored[0]


def _without_audit(envelope: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in envelope.items() if key != "auditId"}


def _sibling(memory: Memory, name: str) -> Memory:
    """A fresh, empty store beside ``memory`` that uses the SAME key directory."""
    return memory.sibling(name)


def _key_files(memory: Memory) -> list[str]:
    return sorted(path.name for path in memory.engine.vault.keys.directory.iterdir())


def _journal_rows(memory: Memory) -> list[tuple[int, str]]:
    return memory.rows(
        "SELECT cursor, body FROM journal WHERE scope_id = ? ORDER BY cursor", (SCOPE_ID,)
    )


# --- backup and restore ----------------------------------------------------------------


@pytest.mark.real_stores
def test_restore_into_a_fresh_store_with_the_same_keys_gives_back_the_same_records(
    memory: Memory, tmp_path: Path
) -> None:
    first = memory.admit("Release tarballs are signed with the release key.", "keep-one")
    second = memory.admit("The release key lives in the hardware module.", "keep-two")
    gone = memory.admit("Release notes are drafted in the wiki.", "gone-one")
    _forget(memory, gone)
    path = tmp_path / "backup.engram"

    header = backup(memory.engine, path)

    assert header["records"] == 3
    assert header["format"] == 2
    assert header["created_at"] == format_instant(NOW)
    restored = _sibling(memory, "restored.db")
    assert restore(restored.engine, path) == 3
    for record_id in (first, second):
        assert _without_audit(_get(restored, record_id)) == _without_audit(_get(memory, record_id))
    assert _without_audit(_search(restored, "release key")) == _without_audit(
        _search(memory, "release key")
    )
    assert set(restored.found("release")) == {first, second}
    assert _get(restored, gone)["error"]["code"] == "NOT_FOUND"
    assert restored.record_state(gone) == "tombstoned"
    assert _indexed(restored, gone) is False
    events = len(_journal_rows(memory))
    assert _maintenance(restored).verify() == events
    assert _maintenance(memory).verify() == events


def test_a_restored_tombstone_still_trips_the_tombstone_guard(
    memory: Memory, tmp_path: Path
) -> None:
    text = "The staging database password rotates every Monday."
    gone = memory.admit(text, "tombstoned-fact")
    _forget(memory, gone)
    path = tmp_path / "backup.engram"
    backup(memory.engine, path)
    restored = _sibling(memory, "restored.db")
    restore(restored.engine, path)

    captured = restored.value("capture", capture_args(text=text, key="after-restore.capture-1"))
    assert captured["status"] == "committed_pending"
    outcome = _admission(restored, captured["candidate_id"], "after-restore.admission-1")

    assert outcome["status"] == "pending_adjudication"
    assert "record_id" not in outcome
    assert _maintenance(restored).pending().adjudications == [captured["candidate_id"]]


def test_a_backup_never_holds_pending_rejected_or_withdrawn_candidates(
    memory: Memory, tmp_path: Path
) -> None:
    pending_marker = "Pendingmarker quillfeather never admitted."
    withdrawn_marker = "Withdrawnmarker xylophage drafted in error."
    kept = memory.admit("Kept fact about the build cache.", "kept-fact")
    pending = memory.capture(pending_marker, "pending.capture-00001")
    rejected = memory.capture(SECRET_TEXT, "rejected.capture-0001")
    assert _admission(memory, rejected, "rejected.admission-01")["status"] == "rejected"
    withdrawn = memory.capture(withdrawn_marker, "withdrawn.capture-001")
    withdrawal = _withdraw(memory, withdrawn)
    assert withdrawal["key_destruction"] == "complete"
    assert withdrawal["receipt"]["to_state"] == "withdrawn"
    path = tmp_path / "backup.engram"

    header = backup(memory.engine, path)

    assert header["records"] == 1
    rows = read_backup(memory.engine.vault.keys, path)
    assert sorted(rows) == [
        "audit",
        "idempotency",
        "journal",
        "records",
        "revocations",
        "scope_state",
    ]
    assert [record["record_id"] for record in rows["records"]] == [kept]
    assert {record["candidate_id"] for record in rows["records"]}.isdisjoint(
        {pending, rejected, withdrawn}
    )
    decrypted = json.dumps(rows)
    raw = path.read_bytes()
    assert raw.startswith(MAGIC)
    for marker in (pending_marker, withdrawn_marker, SECRET_TEXT, "AKIAQ7RZ4T2LX9MBN3VD"):
        for form in (marker, marker.lower()):
            assert form not in decrypted
            assert form.encode() not in raw


def _backup_file(memory: Memory, tmp_path: Path) -> Path:
    memory.admit("A fact worth restoring.", "restorable")
    path = tmp_path / "backup.engram"
    backup(memory.engine, path)
    return path


def test_restore_refuses_a_backup_with_one_flipped_ciphertext_byte(
    memory: Memory, tmp_path: Path
) -> None:
    path = _backup_file(memory, tmp_path)
    data = bytearray(path.read_bytes())
    data[-40] ^= 0x01
    path.write_bytes(bytes(data))
    target = _sibling(memory, "target.db")

    with pytest.raises(BackupInvalid) as caught:
        restore(target.engine, path)

    assert caught.value.code == "BACKUP_INVALID"
    assert caught.value.retriable is False
    with target.engine.store.read() as reader:
        assert reader.is_empty() is True


def test_restore_refuses_a_backup_whose_header_was_edited(memory: Memory, tmp_path: Path) -> None:
    path = _backup_file(memory, tmp_path)
    data = path.read_bytes()
    edited = data.replace(b'"records":1', b'"records":9', 1)
    assert edited != data
    path.write_bytes(edited)

    with pytest.raises(BackupInvalid) as caught:
        restore(_sibling(memory, "target.db").engine, path)

    assert caught.value.code == "BACKUP_INVALID"


@pytest.mark.parametrize("keep", [10, len(MAGIC) + 4, len(MAGIC) + 30, -1, -20, -200])
def test_restore_refuses_a_truncated_backup(memory: Memory, tmp_path: Path, keep: int) -> None:
    path = _backup_file(memory, tmp_path)
    path.write_bytes(path.read_bytes()[:keep])

    with pytest.raises(BackupInvalid) as caught:
        restore(_sibling(memory, "target.db").engine, path)

    assert caught.value.code == "BACKUP_INVALID"


@pytest.mark.parametrize("prefix", [b"", MAGIC])
def test_restore_refuses_random_bytes(memory: Memory, tmp_path: Path, prefix: bytes) -> None:
    path = tmp_path / "random.engram"
    path.write_bytes(prefix + bytes(range(256)) * 8)

    with pytest.raises(BackupInvalid) as caught:
        restore(memory.engine, path)

    assert caught.value.code == "BACKUP_INVALID"


def test_restore_refuses_a_backup_of_another_store(memory: Memory, tmp_path: Path) -> None:
    path = _backup_file(memory, tmp_path)
    foreign_keys = create_keyring(tmp_path / "foreign.db.keys")
    foreign = MemoryEngine(SqliteMemoryStore(tmp_path / "foreign.db"), foreign_keys)

    with pytest.raises(RestoreRefused) as caught:
        restore(foreign, path)

    assert caught.value.code == "RESTORE_REFUSED"
    assert caught.value.retriable is False
    with pytest.raises(RestoreRefused):
        read_backup(foreign_keys, path)


@pytest.mark.real_stores
def test_restore_refuses_a_store_that_is_not_empty(memory: Memory, tmp_path: Path) -> None:
    path = _backup_file(memory, tmp_path)
    target = _sibling(memory, "target.db")
    target.value("capture", capture_args(text="Only a pending candidate.", key="target-cap-000001"))

    with pytest.raises(RestoreRefused) as caught:
        restore(target.engine, path)

    assert caught.value.code == "RESTORE_REFUSED"
    with pytest.raises(RestoreRefused):
        restore(memory.engine, path)
    assert len(_journal_rows(memory)) == 2


def test_a_second_restore_into_the_restored_store_is_refused(
    memory: Memory, tmp_path: Path
) -> None:
    path = _backup_file(memory, tmp_path)
    target = _sibling(memory, "target.db")
    assert restore(target.engine, path) == 1

    with pytest.raises(RestoreRefused):
        restore(target.engine, path)


def test_a_backup_taken_before_two_key_rotations_still_restores(
    memory: Memory, tmp_path: Path
) -> None:
    record_id = memory.admit("A fact backed up under the first KEK.", "old-backup")
    path = tmp_path / "backup.engram"
    backup(memory.engine, path)
    rotate_keys(memory.engine)
    rotate_keys(memory.engine)
    assert "kek-k1.key" not in _key_files(memory)
    restored = _sibling(memory, "restored.db")

    assert restore(restored.engine, path) == 1

    assert _without_audit(_get(restored, record_id)) == _without_audit(_get(memory, record_id))
    assert _kek_of(restored, record_id) == "k3"


def test_a_revocation_survives_backup_and_restore(memory: Memory, tmp_path: Path) -> None:
    record_id = memory.admit("A fact alice once could read.", "revoked-reader")
    _maintenance(memory).revoke("alice")
    path = tmp_path / "backup.engram"
    backup(memory.engine, path)
    restored = _sibling(memory, "restored.db")
    restore(restored.engine, path)

    assert _get(restored, record_id)["error"]["code"] == "AUTHORIZATION_REVOKED"


# --- forgetting is for good --------------------------------------------------------------


@pytest.mark.real_stores
def test_forgotten_content_is_unrecoverable_from_the_store_file_and_a_later_backup(
    memory: Memory, tmp_path: Path
) -> None:
    tokens = ["Zorblatt", "Quixmarrow", "Vendrithal"]
    marker = " ".join(tokens) + " rotates the signing certificates."
    memory.admit("Unrelated neighbour fact about caching.", "neighbour")
    record_id = memory.admit(marker, "forgettable")
    memory.engine.store.checkpoint()
    before = memory.store_bytes()
    # The scan can see plaintext: the lexical index holds the words' stems.
    stems = index_terms(" ".join(tokens)).split()
    assert stems == ["zorblatt", "quixmarrow", "vendrith"]
    assert all(stem.encode() in before for stem in stems)

    forgotten = _forget(memory, record_id)

    assert forgotten["replayed"] is False
    assert forgotten["projection_invalidation"] == "complete"
    assert COVERAGE.fullmatch(forgotten["coverage_receipt_digest"])
    receipt = forgotten["receipt"]
    assert (receipt["operation"], receipt["from_state"], receipt["to_state"]) == (
        "tombstone",
        "accepted_current",
        "tombstoned",
    )
    assert memory.engine.store.checkpoint() is True
    data = memory.store_bytes()
    path = tmp_path / "after-forget.engram"
    backup(memory.engine, path)
    rows = json.dumps(read_backup(memory.engine.vault.keys, path))
    raw = path.read_bytes()
    for needle in [marker, marker.lower(), *tokens, *(token.lower() for token in tokens), *stems]:
        assert needle.encode() not in data, needle
        assert needle.encode() not in raw, needle
        assert needle not in rows, needle
    assert memory.found("Zorblatt") == []
    assert _get(memory, record_id)["error"]["code"] == "NOT_FOUND"
    with memory.engine.store.read() as reader:
        assert reader.data_key(record_id) is None


def test_withdraw_reports_key_destruction_complete(memory: Memory) -> None:
    candidate = memory.capture("A draft that was wrong.", "draft.capture-000001")

    withdrawn = _withdraw(memory, candidate)

    assert withdrawn["key_destruction"] == "complete"
    assert withdrawn["replayed"] is False
    assert (withdrawn["receipt"]["from_state"], withdrawn["receipt"]["to_state"]) == (
        "pending",
        "withdrawn",
    )
    with memory.engine.store.read() as reader:
        assert reader.data_key(candidate) is None
        stored = reader.candidate(SCOPE_ID, candidate)
    assert stored is not None
    assert (stored.state, stored.sealed) == ("withdrawn", None)


# --- key rotation ----------------------------------------------------------------------


def test_rotation_rewraps_every_data_key_and_records_still_read(memory: Memory) -> None:
    first = memory.admit("First fact sealed under k1.", "rotate-one")
    second = memory.admit("Second fact sealed under k1.", "rotate-two")
    pending = memory.capture("A pending draft under k1.", "rotate-pending-cap-1")
    before = {record_id: _get(memory, record_id) for record_id in (first, second)}

    result = rotate_keys(memory.engine)

    assert result == {"kek": "k2", "rewrapped": 3, "retired": []}
    for record_id, envelope in before.items():
        assert _without_audit(_get(memory, record_id)) == _without_audit(envelope)
    with memory.engine.store.read() as reader:
        assert reader.kek_ids_in_use() == {"k2"}
    fresh = memory.capture("Captured after the rotation.", "rotate-after-cap-001")
    assert _kek_of(memory, fresh) == "k2"
    outcome = _admission(memory, pending, "rotate-pending-adm-1")
    assert outcome["status"] == "accepted"
    assert _get(memory, outcome["record_id"])["ok"] is True
    assert _key_files(memory) == ["current", "kek-k1.key", "kek-k2.key", "mac.key"]


def test_a_second_rotation_retires_the_kek_from_before_the_previous_one(memory: Memory) -> None:
    record_id = memory.admit("A fact that outlives two rotations.", "twice-rotated")
    rotate_keys(memory.engine)

    result = rotate_keys(memory.engine)

    assert result == {"kek": "k3", "rewrapped": 1, "retired": ["k1"]}
    assert _key_files(memory) == ["current", "kek-k2.key", "kek-k3.key", "mac.key"]
    assert (memory.engine.vault.keys.directory / "current").read_text() == "k3"
    with memory.engine.store.read() as reader:
        assert reader.kek_ids_in_use() == {"k3"}
    assert _get(memory, record_id)["ok"] is True
    fresh = _sibling(memory, "memory.db")
    assert _get(fresh, record_id)["ok"] is True


def test_an_engine_opened_before_a_rotation_still_reads_records(memory: Memory) -> None:
    record_id = memory.admit("Read by a server started before rotation.", "early-reader")
    early = _sibling(memory, "memory.db")

    rotate_keys(memory.engine)
    rotate_keys(memory.engine)

    assert _get(early, record_id)["ok"] is True
    assert early.found("server started before rotation") == [record_id]


def test_an_engine_opened_before_a_rotation_seals_new_items_under_the_new_kek(
    memory: Memory,
) -> None:
    early = _sibling(memory, "memory.db")

    rotate_keys(memory.engine)
    candidate = early.capture("Sealed by a server started before rotation.", "early-cap-0000001")

    assert _kek_of(memory, candidate) == "k2"
    with memory.engine.store.read() as reader:
        assert reader.kek_ids_in_use() == {"k2"}


def test_an_item_sealed_by_an_engine_opened_before_two_rotations_stays_readable(
    memory: Memory,
) -> None:
    early = _sibling(memory, "memory.db")
    rotate_keys(memory.engine)
    rotate_keys(memory.engine)

    candidate = early.capture("Sealed after two rotations by an old server.", "old-server-cap-01")
    fresh = _sibling(memory, "memory.db")
    outcome = fresh.value(
        "request_admission", {"candidate_id": candidate, "idempotency_key": "old-server-adm-01"}
    )["outcome"]

    assert outcome["status"] == "accepted"
    assert _get(fresh, outcome["record_id"])["ok"] is True


# --- revocation --------------------------------------------------------------------------


def _every_call(memory: Memory, record_id: str, candidate_id: str) -> dict[str, dict[str, Any]]:
    return {
        "search": {"query": "fact", "purpose_ref": PURPOSE},
        "get": {"record_id": record_id, "purpose_ref": PURPOSE},
        "capture": capture_args(text="Captured after revocation.", key="after-revoke-cap-01"),
        "request_admission": {"candidate_id": candidate_id, "idempotency_key": "after-rev-adm-01"},
        "withdraw": {
            "candidate_id": candidate_id,
            "idempotency_key": "after-rev-wdr-01",
            "reason_ref": "reason:x",
        },
        "forget": {
            "record_id": record_id,
            "idempotency_key": "after-rev-fgt-01",
            "reason_ref": "reason:x",
        },
    }


def test_after_revoke_every_tool_call_of_the_principal_is_authorization_revoked(
    memory: Memory,
) -> None:
    alice = binding(principal="alice")
    record_id = memory.admit("A fact alice admitted.", "alice-fact", alice)
    candidate = memory.capture("A draft alice left pending.", "alice-draft-cap-01")

    _maintenance(memory).revoke("alice")

    for tool, arguments in _every_call(memory, record_id, candidate).items():
        envelope = memory.call(tool, arguments, alice)
        assert envelope["ok"] is False, tool
        assert envelope["error"] == {
            "code": "AUTHORIZATION_REVOKED",
            "message": "The authorization has been revoked.",
            "retriable": False,
        }, tool
    assert _maintenance(memory).pending().confirmations == []
    assert memory.record_state(record_id) == "accepted_current"


@pytest.mark.parametrize("answer", [True, False])
def test_a_revoked_principals_gated_call_never_reaches_the_dialog(
    memory: Memory, answer: bool
) -> None:
    alice = binding(principal="alice")
    record_id = memory.admit("A fact alice admitted.", "alice-fact", alice)
    candidate = memory.capture("A draft alice left pending.", "alice-draft-cap-01")
    _maintenance(memory).revoke("alice")
    asked: list[Any] = []

    def dialog(operation: Any) -> bool:
        asked.append(operation)
        return answer

    calls = _every_call(memory, record_id, candidate)
    for tool in ("withdraw", "forget"):
        envelope = memory.engine.call(tool, calls[tool], alice, dialog)
        assert envelope["error"]["code"] == "AUTHORIZATION_REVOKED", tool
    assert asked == []
    assert memory.record_state(record_id) == "accepted_current"


def test_revoking_one_principal_leaves_another_in_the_same_scope_working(memory: Memory) -> None:
    bob = binding(principal="bob")
    record_id = memory.admit("A fact anyone in the scope reads.", "shared-fact")

    _maintenance(memory).revoke("alice")

    assert _get(memory, record_id, bob)["ok"] is True
    assert memory.found("fact", bob) == [record_id]
    assert memory.admit("Bob still captures and admits.", "bob-fact", bob).startswith("mem_")
    assert _get(memory, record_id)["error"]["code"] == "AUTHORIZATION_REVOKED"


def _q(query: str) -> dict[str, Any]:
    return {"query": query, "purpose_ref": PURPOSE}


def test_revoking_everyone_in_a_scope_spares_other_scopes(memory: Memory) -> None:
    other_workspace = binding(workspace="ws-2")
    other_tenant = binding(tenant="tenant-b", principal="bob")
    memory.admit("A fact in the revoked scope.", "revoked-scope")
    kept = memory.admit("A fact in another workspace.", "other-ws", other_workspace)

    _maintenance(memory).revoke("*")

    for who in (binding(principal="alice"), binding(principal="bob"), binding(principal="carol")):
        assert memory.code("search", _q("fact"), who) == "AUTHORIZATION_REVOKED"
    assert _get(memory, kept, other_workspace)["ok"] is True
    assert memory.value("search", _q("fact"), other_tenant)["records"] == []
    assert memory.admit("Tenant b still writes.", "tenant-b-fact", other_tenant).startswith("mem_")


# --- journal verification ----------------------------------------------------------------


def _busy_journal(memory: Memory) -> int:
    memory.admit("First journaled fact.", "journal-one")
    memory.admit("Second journaled fact.", "journal-two")
    memory.admit("Third journaled fact.", "journal-three")
    count = _maintenance(memory).verify()
    assert count == 6
    return count


def test_verify_returns_the_number_of_events_in_the_scope(memory: Memory) -> None:
    assert _maintenance(memory).verify() == 0
    assert _busy_journal(memory) == 6
    memory.admit("A fact in another scope.", "elsewhere", binding(tenant="tenant-b"))
    assert _maintenance(memory).verify() == 6
    assert _maintenance(memory, binding(tenant="tenant-b")).verify() == 2


@pytest.mark.real_stores
def test_verify_names_the_cursor_whose_body_was_tampered_with(memory: Memory) -> None:
    _busy_journal(memory)
    cursor, body = _journal_rows(memory)[2]
    changed = json.loads(body)
    changed["at"] += 1
    memory.rows(
        "UPDATE journal SET body = ? WHERE scope_id = ? AND cursor = ?",
        (json.dumps(changed, sort_keys=True), SCOPE_ID, cursor),
    )

    with pytest.raises(JournalCorrupt) as caught:
        _maintenance(memory).verify()

    assert cursor == 3
    assert caught.value.cursor == 3
    assert caught.value.code == "JOURNAL_CORRUPT"
    assert caught.value.retriable is False


def _delete_event(memory: Memory, cursor: int) -> None:
    memory.rows("DELETE FROM journal WHERE scope_id = ? AND cursor = ?", (SCOPE_ID, cursor))


@pytest.mark.real_stores
def test_verify_reports_the_first_missing_cursor_when_an_event_is_deleted(memory: Memory) -> None:
    _busy_journal(memory)
    _delete_event(memory, 4)

    with pytest.raises(JournalCorrupt) as caught:
        _maintenance(memory).verify()

    assert caught.value.cursor == 4


@pytest.mark.real_stores
def test_verify_reports_a_deleted_last_event(memory: Memory) -> None:
    _busy_journal(memory)
    _delete_event(memory, 6)

    with pytest.raises(JournalCorrupt) as caught:
        _maintenance(memory).verify()

    assert caught.value.cursor == 6


# --- the retention sweep -----------------------------------------------------------------


def _expiring(memory: Memory, text: str, key: str, rule: str = "make-ineligible") -> str:
    retention = {"derivative_rule": rule, "expires_at": format_instant(NOW + HOUR)}
    captured = memory.value(
        "capture", capture_args(text=text, key=key + ".capture-0001", retention=retention)
    )
    outcome = _admission(memory, captured["candidate_id"], key + ".admission-01")
    assert outcome["status"] == "accepted"
    return str(outcome["record_id"])


def test_a_record_leaves_search_and_get_at_its_expiry_instant_before_any_sweep(
    memory: Memory, clock: Clock
) -> None:
    record_id = _expiring(memory, "Ephemeral build cache location.", "ephemeral-cache")
    clock.now = NOW + HOUR - 1
    assert _get(memory, record_id)["ok"] is True
    assert memory.found("ephemeral cache") == [record_id]

    clock.now = NOW + HOUR

    assert _get(memory, record_id)["error"]["code"] == "NOT_FOUND"
    assert memory.found("ephemeral cache") == []
    assert memory.record_state(record_id) == "accepted_current"


@pytest.mark.real_stores
def test_the_sweep_expires_a_record_past_its_instant_and_is_idempotent(
    memory: Memory, clock: Clock
) -> None:
    record_id = _expiring(memory, "Ephemeral build cache location.", "ephemeral-cache")
    lasting = memory.admit("A lasting fact about the cache.", "lasting-cache")
    clock.now = NOW + HOUR - 1
    assert _maintenance(memory).sweep() == {"expired": 0, "purged": 0, "purges_pending": 0}
    assert memory.record_state(record_id) == "accepted_current"
    clock.now = NOW + HOUR

    first = _maintenance(memory).sweep()
    again = _maintenance(memory).sweep()

    assert first == {"expired": 1, "purged": 0, "purges_pending": 0}
    assert again == {"expired": 0, "purged": 0, "purges_pending": 0}
    assert memory.record_state(record_id) == "expired"
    assert memory.record_state(lasting) == "accepted_current"
    assert _indexed(memory, record_id) is False
    assert memory.found("cache") == [lasting]
    assert _get(memory, record_id)["error"]["code"] == "NOT_FOUND"
    bodies = [json.loads(body) for _, body in _journal_rows(memory)]
    assert bodies[-1]["operation"] == "expire"
    assert (bodies[-1]["target"], bodies[-1]["to_state"]) == (record_id, "expired")
    assert _maintenance(memory).verify() == len(bodies)


def test_a_retained_record_stays_indexed_after_expiry_but_is_never_disclosed(
    tmp_path: Path, clock: Clock
) -> None:
    memory = open_memory(tmp_path, clock, HostPolicy(allow_retain=True))
    record_id = _expiring(memory, "Retained ephemeral cache location.", "retained", "retain")
    assert _indexed(memory, record_id) is True
    clock.now = NOW + HOUR

    assert _maintenance(memory).sweep()["expired"] == 1

    assert memory.record_state(record_id) == "expired"
    assert _indexed(memory, record_id) is True
    assert memory.found("retained ephemeral cache") == []
    assert _get(memory, record_id)["error"]["code"] == "NOT_FOUND"


def test_a_make_ineligible_record_expired_by_the_host_also_leaves_the_index(
    memory: Memory,
) -> None:
    record_id = memory.admit("Host expired cache location.", "host-expired")

    assert _maintenance(memory).transition(record_id, "expire") == "expired"

    assert _indexed(memory, record_id) is False
    assert memory.found("host expired cache") == []


def test_a_replay_after_a_restore_is_still_a_replay_when_its_result_survived(
    memory: Memory, tmp_path: Path
) -> None:
    from engram.memory.backup import backup, restore
    from engram.testing import capture_args

    first = memory.value("capture", capture_args(key="restored-replay-key-01"))
    admission = {"candidate_id": first["candidate_id"], "idempotency_key": "restored-admit-0001"}
    admitted = memory.value("request_admission", admission)
    pending = memory.value("capture", capture_args(text="Draft.", key="pending-draft-key-01"))
    path = tmp_path / "backup.engram"
    backup(memory.engine, path)
    other = memory.sibling("restored.db").engine
    restore(other, path)
    again = other.call("capture", capture_args(key="restored-replay-key-01"), binding())
    assert again["output"]["value"] == {**first, "status": "duplicate_exact"}
    replayed = other.call("request_admission", admission, binding())["output"]["value"]
    assert replayed == {**admitted, "replayed": True}
    # The pending draft was not backed up: the same capture makes a fresh candidate.
    fresh = other.call(
        "capture", capture_args(text="Draft.", key="pending-draft-key-01"), binding()
    )["output"]["value"]
    assert fresh["status"] == "committed_pending"
    assert fresh["candidate_id"] != pending["candidate_id"]
