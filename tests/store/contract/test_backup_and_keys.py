"""Backup and restore (``BackupReads``, ``RestoreWrites``) and key rotation
(``KeyWrites``): what a backup carries, and a restore that gives it back whole."""

from __future__ import annotations

from typing import Any

from engram.memory.ports import AuditEntry, IdempotencyRow, MemoryStore
from tests.store.contract.conftest import DAY, OTHER, SCOPE, NewStore, candidate, record


def _filled(store: MemoryStore) -> None:
    with store.write() as tx:
        tx.add_candidate(candidate("cand_1", state="accepted", record_id="mem_1"))
        tx.add_candidate(candidate("cand_2"))  # pending: stays out of a backup
        tx.add_record(record("mem_1", candidate_id="cand_1"))
        tx.add_record(record("mem_2", scope_id=OTHER, sealed=None, state="tombstoned"))
        tx.put_data_key("mem_1", SCOPE, "kek-1", b"wrapped-1")
        tx.put_data_key("cand_2", SCOPE, "kek-2", b"wrapped-2")
        tx.append_event(SCOPE, {"operation": "admit", "at": DAY, "target": "mem_1"}, True)
        tx.append_event(OTHER, {"operation": "forget", "at": 2 * DAY}, True)
        tx.audit(AuditEntry("aud_2", SCOPE, 2_000, "admit", "ok", {"principal": "a"}, {"x": "1"}))
        tx.audit(AuditEntry("aud_1", SCOPE, 1_000, "capture", "ok", {"principal": "a"}, {}))
        tx.revoke(SCOPE, "agent-z", 3_000)
        tx.remember(SCOPE, "a", "k1", IdempotencyRow("capture", "i1", {"candidate_id": "cand_1"}))
        tx.remember(SCOPE, "a", "k2", IdempotencyRow("capture", "i2", {"candidate_id": "cand_2"}))
        tx.remember(SCOPE, "a", "k3", IdempotencyRow("request_admission", "i3", {"n": 1}))


def test_a_backup_carries_records_keys_journal_audit_revocations_and_replays(
    store: MemoryStore,
) -> None:
    _filled(store)
    with store.read() as reader:
        rows = reader.export_rows()
        assert not reader.is_empty()
        assert reader.kek_ids_in_use() == {"kek-1", "kek-2"}
    tombstoned = record("mem_2", scope_id=OTHER, sealed=None, state="tombstoned")
    assert rows["records"] == [
        {
            **{name: getattr(record("mem_1", candidate_id="cand_1"), name) for name in _FIELDS},
            "wrapped_key": ["kek-1", b"wrapped-1"],
        },
        {**{name: getattr(tombstoned, name) for name in _FIELDS}, "wrapped_key": None},
    ]
    assert [(e["scope_id"], e["cursor"], e["body"]) for e in rows["journal"]] == [
        (SCOPE, 1, {"operation": "admit", "at": DAY, "target": "mem_1"}),
        (OTHER, 1, {"operation": "forget", "at": 2 * DAY}),
    ]
    assert [s["scope_id"] for s in rows["scope_state"]] == [SCOPE, OTHER]
    assert rows["scope_state"][0]["records_version"] == 1
    assert [a["audit_id"] for a in rows["audit"]] == ["aud_1", "aud_2"]
    assert rows["audit"][1]["digests"] == {"x": "1"}
    assert rows["revocations"] == [{"scope_id": SCOPE, "principal": "agent-z", "revoked_ms": 3_000}]
    assert [(i["key"], i["tool"], i["outcome"], i["hashed"]) for i in rows["idempotency"]] == [
        ("k1", "capture", {"candidate_id": "cand_1"}, 1),
        ("k3", "request_admission", {"n": 1}, 1),
    ]


_FIELDS = (
    "record_id",
    "scope_id",
    "candidate_id",
    "state",
    "record_digest",
    "payload_digest",
    "sealed",
    "valid_t",
    "valid_t_end",
    "expires_ms",
    "admitted_ms",
    "admit_cursor",
)


def test_a_restore_into_an_empty_store_gives_the_backup_back_whole(new_store: NewStore) -> None:
    source, target = new_store(), new_store()
    _filled(source)
    with source.read() as reader:
        rows = reader.export_rows()
    with target.read() as reader:
        assert reader.is_empty()
    with target.write() as tx:
        tx.import_rows(rows)
    with target.read() as reader:
        # Candidates are not in a backup, so the capture's replay (whose candidate lived
        # on as mem_1) is not carried by a backup of the restored store.
        assert reader.export_rows() == rows | {"idempotency": rows["idempotency"][1:]}
        assert reader.record(SCOPE, "mem_1") == record("mem_1", candidate_id="cand_1")
        assert reader.data_key("mem_1") == ("kek-1", b"wrapped-1")
        assert reader.head(SCOPE).cursor == 1
        assert reader.is_revoked(SCOPE, "agent-z")
        assert reader.activity_counts(SCOPE, 0, 5)[0].events == 1
        assert reader.record_counts(OTHER, [0]) == ({"tombstoned": 1}, [1])


def test_clear_keys_of_an_older_backup_are_found_and_hashed_in_place(store: MemoryStore) -> None:
    old: dict[str, list[dict[str, Any]]] = {"records": [], "journal": [], "scope_state": []}
    old["audit"] = []
    old["idempotency"] = [
        {
            "scope_id": SCOPE,
            "principal": "a",
            "key": "clear-key",
            "tool": "withdraw",
            "intent_digest": "i",
            "outcome": {"ok": True},
        }
    ]
    with store.write() as tx:
        tx.import_rows(old)
        assert tx.clear_idempotency_keys() == [(SCOPE, "a", "clear-key")]
        assert tx.idempotency(SCOPE, "a", "clear-key", hashed=False) == IdempotencyRow(
            "withdraw", "i", {"ok": True}
        )
        tx.hash_idempotency_key(SCOPE, "a", "clear-key", "hmac")
        assert tx.clear_idempotency_keys() == []
        assert tx.idempotency(SCOPE, "a", "hmac", hashed=True) == IdempotencyRow(
            "withdraw", "i", {"ok": True}
        )


def test_rotation_walks_the_keys_under_another_kek_by_owner(store: MemoryStore) -> None:
    with store.write() as tx:
        for owner, kek in (("o3", "old"), ("o1", "old"), ("o2", "new"), ("o4", "old")):
            tx.put_data_key(owner, SCOPE, kek, owner.encode())
        assert tx.data_keys_not_under("new", 2) == [("o1", "old", b"o1"), ("o3", "old", b"o3")]
        tx.set_data_key("o1", "new", b"rewrapped")
        tx.set_data_key("o_missing", "new", b"x")
        assert tx.data_keys_not_under("new", 10) == [("o3", "old", b"o3"), ("o4", "old", b"o4")]
        assert tx.data_key("o1") == ("new", b"rewrapped")
        assert tx.data_key("o_missing") is None
        assert tx.kek_ids_in_use() == {"new", "old"}
