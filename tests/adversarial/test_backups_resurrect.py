"""Forgotten stays forgotten: restoring a backup taken before a forget must not bring the
record back, and the backup file itself must not open it with the live keys. Each record
in a backup is sealed under its own escrow key, destroyed by the forget; the shred ledger
beside the keys remembers every forget and withdraw; a restore applies each forget again
before anything can read the record."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from engram.crypto.keyfiles import load_keyring
from engram.memory.backup import backup, prepare_restore, read_backup, restore
from engram.memory.binding import Binding
from engram.memory.engine import MemoryEngine
from engram.memory.maintenance import Maintenance
from engram.store.sqlite.memory_store import SqliteMemoryStore
from engram.testing import PURPOSE, Clock, binding
from tests.memory.conftest import Memory, open_memory

WHO = binding()


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    return open_memory(tmp_path, Clock())


def _approved(memory: Memory, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    envelope = memory.engine.call(tool, arguments, WHO, lambda operation: True)
    assert envelope["ok"], envelope
    value: dict[str, Any] = envelope["output"]["value"]
    return value


def _forget(memory: Memory, record_id: str, key: str = "forget-key-0000001") -> None:
    arguments = {"record_id": record_id, "idempotency_key": key, "reason_ref": "reason:gdpr"}
    _approved(memory, "forget", arguments)


def _fresh_store(memory: Memory, name: str) -> Memory:
    """A lost store rebuilt: a new, empty file with the live key directory."""
    path = memory.path.with_name(name)
    keys = load_keyring(memory.engine.vault.keys.directory)
    return Memory(
        MemoryEngine(SqliteMemoryStore(path), keys, clock=memory.clock), memory.clock, path
    )


def _get(memory: Memory, record_id: str, who: Binding = WHO) -> dict[str, Any]:
    return memory.call("get", {"record_id": record_id, "purpose_ref": PURPOSE}, who)


def test_a_record_forgotten_after_a_backup_stays_forgotten_when_it_is_restored(
    memory: Memory, tmp_path: Path
) -> None:
    kept = memory.admit("Staging deploys run at noon.", "kept-record")
    gone = memory.admit("Ada's home address is 12 Elm Street.", "gone-record")
    backup(memory.engine, tmp_path / "before.engram")
    _forget(memory, gone)

    restored = _fresh_store(memory, "restored.db")
    assert restore(restored.engine, tmp_path / "before.engram") == 2

    assert _get(restored, gone)["error"]["code"] == "NOT_FOUND"
    assert restored.found("address Elm Street") == []
    assert restored.found("staging deploys") == [kept]
    assert restored.record_state(gone) == "tombstoned"
    with restored.engine.store.read() as reader:
        row = reader.record(WHO.scope.scope_id, gone)
    assert row is not None
    assert row.sealed is None  # ciphertext and data key both gone
    assert b"Elm Street" not in restored.store_bytes()
    # The journal verifies: the backup's events, then the forget applied again.
    assert (
        Maintenance(restored.engine, WHO.scope).verify()
        == Maintenance(memory.engine, WHO.scope).verify()
    )


def test_the_ledger_is_private_and_holds_ids_only(memory: Memory) -> None:
    from engram.crypto.ledger import LEDGER_NAME

    gone = memory.admit("A secret-free fact to forget.", "ledger-record")
    candidate = memory.capture("A draft to withdraw.", "ledger-draft.capture-01")
    _forget(memory, gone)
    _approved(
        memory,
        "withdraw",
        {
            "candidate_id": candidate,
            "idempotency_key": "withdraw-key-000001",
            "reason_ref": "reason:draft",
        },
    )

    ledger = memory.engine.vault.keys.directory / LEDGER_NAME
    lines = [json.loads(line) for line in ledger.read_text().splitlines()]

    assert stat.S_IMODE(ledger.stat().st_mode) == 0o600
    assert [(line["operation"], line["target"]) for line in lines] == [
        ("forget", gone),
        ("withdraw", candidate),
    ]
    assert all(sorted(line) == ["at_ms", "operation", "scope_id", "target"] for line in lines)
    assert "fact" not in ledger.read_text()


def test_a_replayed_forget_is_recorded_once(memory: Memory) -> None:
    from engram.crypto.ledger import LEDGER_NAME

    gone = memory.admit("Forgotten once.", "once-record")
    _forget(memory, gone)
    _forget(memory, gone)  # the agent's retry: a replay

    ledger = memory.engine.vault.keys.directory / LEDGER_NAME
    assert len(ledger.read_text().splitlines()) == 1


def test_an_old_backup_file_cannot_open_a_record_forgotten_after_it(
    memory: Memory, tmp_path: Path
) -> None:
    from engram.crypto.ledger import LEDGER_NAME

    gone = memory.admit("Ada's phone number is 555 0100.", "phone-record")
    kept = memory.admit("Deploys are on Tuesdays.", "tuesday-record")
    backup(memory.engine, tmp_path / "before.engram")
    _forget(memory, gone)
    (memory.engine.vault.keys.directory / LEDGER_NAME).unlink()  # even without the ledger

    rows = read_backup(memory.engine.vault.keys, tmp_path / "before.engram")
    opened = prepare_restore(memory.engine.vault, rows, memory.engine.escrow)

    by_id = {record["record_id"]: record for record in opened["records"]}
    assert by_id[gone].get("shredded") is True
    assert by_id[gone]["wrapped_key"] is None  # its data key opens with no live key
    assert by_id[kept]["wrapped_key"] is not None
    restored = _fresh_store(memory, "restored.db")
    restore(restored.engine, tmp_path / "before.engram")
    assert _get(restored, gone)["error"]["code"] == "NOT_FOUND"
    assert _get(restored, kept)["ok"] is True


def test_keys_restored_from_a_copy_older_than_the_forget_bring_the_record_back(
    memory: Memory, tmp_path: Path
) -> None:
    """The documented limit: the ledger and the escrow keys live with the keys. A key
    directory copied before the forget still holds the record's escrow key and no ledger
    line, and a restore with that copy brings the record back."""
    gone = memory.admit("Forget me later.", "later-record")
    backup(memory.engine, tmp_path / "before.engram")
    keys = memory.engine.vault.keys.directory
    old_copy = tmp_path / "keys-copy"
    shutil.copytree(keys, old_copy)
    _forget(memory, gone)
    shutil.rmtree(keys)
    shutil.copytree(old_copy, keys)  # the operator restores the keys from the old copy

    restored = _fresh_store(memory, "restored.db")
    restore(restored.engine, tmp_path / "before.engram")

    assert _get(restored, gone)["ok"] is True


def test_a_forget_whose_ledger_line_was_lost_gets_it_at_the_agents_retry(
    memory: Memory,
) -> None:
    from engram.crypto.ledger import LEDGER_NAME

    gone = memory.admit("Forget me, twice asked.", "retry-record")
    _forget(memory, gone)
    ledger = memory.engine.vault.keys.directory / LEDGER_NAME
    ledger.unlink()  # the line never made it (a full disk, a crash after the commit)

    _forget(memory, gone)  # the agent's retry: a replay

    assert [json.loads(line)["target"] for line in ledger.read_text().splitlines()] == [gone]


def _format_one_backup(memory: Memory, path: Path) -> None:
    """A backup as engram wrote it before escrow keys: every data key sealed under the one
    backup key derived from mac.key (format 1)."""
    import struct

    from engram.canonical import canonical_bytes, digest_bytes
    from engram.crypto.sealing import associated_data, seal
    from engram.memory import backup as module

    vault = memory.engine.vault
    with memory.engine.store.read() as reader:
        rows = reader.export_rows()
    key = module._backup_key(vault.keys)
    for record in rows["records"]:
        owner, wrapped = record["record_id"], record.pop("wrapped_key")
        record["data_key"] = None
        if wrapped is not None:
            data_key = vault.unwrap(owner, *wrapped)
            sealed = seal(key, data_key, associated_data("backup-key", owner=owner))
            record["data_key"] = module._b64(sealed.to_bytes())
        record["sealed"] = module._b64(record["sealed"])
    payload = canonical_bytes(rows)
    header = canonical_bytes(
        {
            "format": 1,
            "store": module.store_id(vault.keys),
            "created_at": "2026-01-01T00:00:00.000Z",
            "records": len(rows["records"]),
            "payload_digest": digest_bytes("backup-payload", payload),
        }
    )
    body = seal(key, payload, module.MAGIC + header).to_bytes()
    path.write_bytes(module.MAGIC + struct.pack(">I", len(header)) + header + body)


def test_a_backup_of_the_earlier_format_still_restores_and_the_ledger_still_forgets(
    memory: Memory, tmp_path: Path
) -> None:
    kept = memory.admit("Staging deploys run at noon.", "kept-old-format")
    gone = memory.admit("A record to forget after the old backup.", "gone-old-format")
    _format_one_backup(memory, tmp_path / "old.engram")
    _forget(memory, gone)

    restored = _fresh_store(memory, "restored.db")
    assert restore(restored.engine, tmp_path / "old.engram") == 2

    assert _get(restored, kept)["ok"] is True
    assert _get(restored, gone)["error"]["code"] == "NOT_FOUND"
