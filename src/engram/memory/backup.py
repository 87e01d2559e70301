"""Encrypted, verified backups of governed memory, and refusing restores.

A backup holds what must survive: records (their sealed content and their data keys,
each sealed under the record's escrow key, kept beside the live keys, so a later key
rotation does not orphan it and a later forget, which destroys the escrow key, leaves it
unreadable in every backup: :mod:`engram.crypto.escrow`),
tombstones (so the tombstone guard survives), the journal, scope state, revocations
(a restore must not bring a revoked binding back), idempotency outcomes (ids and
digests only, so a replay after a restore is still a replay) and the audit log. It
never holds pending, rejected or withdrawn candidates or confirmations, and a
forgotten record has no content key left to back up.

File layout: ``MAGIC``, a 4-byte big-endian header length, the header (canonical
JSON: format, store id, creation instant, counts), then AES-256-GCM of the payload
under the store's backup key (derived from its MAC key), bound to magic and header.
A backup is read back and checked before ``backup`` returns. ``restore`` refuses a
backup of another store (``RESTORE_REFUSED``), a non-empty target
(``RESTORE_REFUSED``) and anything that fails to parse, open or verify
(``BACKUP_INVALID``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import struct
from pathlib import Path
from typing import Any, Final

from engram.canonical import canonical_bytes, digest_bytes
from engram.crypto.escrow import EscrowKeys
from engram.crypto.keyfiles import KeyRing
from engram.crypto.sealing import Sealed, associated_data, open_sealed, seal
from engram.durable import write_atomic
from engram.errors import BackupInvalid, BlobMissing, RestoreRefused
from engram.memory.engine import MemoryEngine
from engram.memory.journal import first_bad_cursor
from engram.memory.records import index_text
from engram.memory.validation import format_instant
from engram.memory.vault import Vault
from engram.memory.withdrawal import forget_again

__all__ = [
    "MAGIC",
    "backup",
    "prepare_restore",
    "read_backup",
    "restore",
    "store_id",
    "write_backup",
]

MAGIC: Final = b"ENGRAM-BACKUP\x01"
FORMAT: Final = 2
#: Formats this version restores: 1 sealed every data key under the backup key (a
#: forget after such a backup leaves the record readable in it with the live keys).
READABLE_FORMATS: Final = (1, 2)


def store_id(keys: KeyRing) -> str:
    """A stable id for the store these keys belong to (never reveals the key)."""
    return hmac.new(keys.mac_key, b"engram/store-id/v1", hashlib.sha256).hexdigest()[:32]


def _backup_key(keys: KeyRing) -> bytes:
    return hmac.new(keys.mac_key, b"engram/backup-key/v1", hashlib.sha256).digest()


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def write_backup(
    vault: Vault, exported: dict[str, Any], path: Path, now_ms: int, escrow: EscrowKeys
) -> dict[str, Any]:
    """Encrypt ``exported`` (the store's rows) to ``path``; verify it; the header."""
    keys, backup_key = vault.keys, _backup_key(vault.keys)
    owners = [r["record_id"] for r in exported["records"] if r["wrapped_key"] is not None]
    escrowed = escrow.keys_for(owners, create=True)
    for record in exported["records"]:
        owner, wrapped = record["record_id"], record.pop("wrapped_key")
        record["data_key"] = None
        if wrapped is not None:
            data_key = vault.unwrap(owner, *wrapped)
            sealed_key = seal(escrowed[owner], data_key, associated_data("escrow-key", owner=owner))
            record["data_key"] = _b64(sealed_key.to_bytes())
        record["sealed"] = _b64(record["sealed"])
    payload = canonical_bytes(exported)
    header = canonical_bytes(
        {
            "format": FORMAT,
            "store": store_id(keys),
            "created_at": format_instant(now_ms),
            "records": len(exported["records"]),
            "payload_digest": digest_bytes("backup-payload", payload),
        }
    )
    sealed = seal(backup_key, payload, MAGIC + header)
    data = MAGIC + struct.pack(">I", len(header)) + header + sealed.to_bytes()
    # Readable by its owner only, whatever the umask: it holds every record, encrypted.
    write_atomic(path, data, mode=0o600)
    read_backup(keys, path)  # verified: what is on disk opens and parses
    return dict(json.loads(header))


def read_backup(keys: KeyRing, path: Path) -> dict[str, Any]:
    """Open and check a backup of this store; its payload rows."""
    return _read(keys, path)[1]


def _read(keys: KeyRing, path: Path) -> tuple[int, dict[str, Any]]:
    """The backup's format and its payload rows."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BackupInvalid("backup cannot be read") from exc
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
        raise BackupInvalid("not an engram backup")
    (length,) = struct.unpack(">I", data[len(MAGIC) : len(MAGIC) + 4])
    start = len(MAGIC) + 4
    header_bytes = data[start : start + length]
    try:
        header = json.loads(header_bytes)
    except ValueError as exc:
        raise BackupInvalid("backup header does not parse") from exc
    if not isinstance(header, dict) or header.get("format") not in READABLE_FORMATS:
        raise BackupInvalid("unknown backup format")
    if header.get("store") != store_id(keys):
        raise RestoreRefused("backup belongs to another store")
    try:
        payload = open_sealed(
            _backup_key(keys), Sealed.from_bytes(data[start + length :]), MAGIC + header_bytes
        )
    except BlobMissing as exc:
        raise BackupInvalid("backup failed authentication") from exc
    if digest_bytes("backup-payload", payload) != header.get("payload_digest"):
        raise BackupInvalid("backup payload does not match its header")
    rows: dict[str, Any] = json.loads(payload)
    return int(header["format"]), rows


def prepare_restore(
    vault: Vault, rows: dict[str, Any], escrow: EscrowKeys, backup_format: int = FORMAT
) -> dict[str, Any]:
    """Check the journal chains and re-wrap every data key under the current KEK.

    A record whose escrow key was destroyed (it was forgotten after the backup) keeps no
    key: it is marked ``shredded``, and the restore forgets it again.
    """
    backup_key = _backup_key(vault.keys)
    escrowed = escrow.keys_for([r["record_id"] for r in rows["records"]], create=False)
    for scope in rows["scope_state"]:
        events = [
            (event["cursor"], event["event_digest"], event["previous"], event["body"])
            for event in rows["journal"]
            if event["scope_id"] == scope["scope_id"]
        ]
        if first_bad_cursor(scope["scope_id"], events) is not None:
            raise BackupInvalid("backup journal does not verify")
    for record in rows["records"]:
        owner, sealed_key = record["record_id"], _unb64(record.pop("data_key"))
        record["sealed"] = _unb64(record["sealed"])
        record["wrapped_key"] = None
        if sealed_key is None:
            continue
        if backup_format == 1:
            key, label = backup_key, "backup-key"
        elif owner in escrowed:
            key, label = escrowed[owner], "escrow-key"
        else:
            record["shredded"] = True
            continue
        try:
            data_key = open_sealed(
                key, Sealed.from_bytes(sealed_key), associated_data(label, owner=owner)
            )
        except BlobMissing as exc:
            raise BackupInvalid("a data key in the backup does not open") from exc
        record["wrapped_key"] = vault.wrap(owner, data_key)
    return rows


def backup(engine: MemoryEngine, path: Path) -> dict[str, Any]:
    """Write a verified, encrypted backup of the engine's store; its header."""
    with engine.store.read() as reader:
        rows = reader.export_rows()
    return write_backup(engine.vault, rows, path, engine.clock(), engine.escrow)


def restore(engine: MemoryEngine, path: Path) -> int:
    """Restore a backup of this store into its empty file; the number of records.

    Every forget of the shred ledger (beside the keys) whose record the backup holds
    alive is applied again, in the same transaction: the record is tombstoned and its
    data key destroyed before anything can read it (docs/memory-contract.md §3.21).
    """
    backup_format, read = _read(engine.vault.keys, path)
    rows = prepare_restore(engine.vault, read, engine.escrow, backup_format)
    forgotten = {
        (shredding.scope_id, shredding.target): shredding
        for shredding in engine.ledger.entries()
        if shredding.operation == "forget"
    }
    now = engine.clock()
    with engine.store.write() as tx:
        if not tx.is_empty():
            raise RestoreRefused("the store is not empty")
        tx.import_rows(rows)
        for record in rows["records"]:
            if record["state"] == "tombstoned" or (
                record["wrapped_key"] is None and not record.get("shredded")
            ):
                continue
            shredding = forgotten.get((record["scope_id"], record["record_id"]))
            if shredding is not None or record.get("shredded"):
                forget_again(tx, engine.vault, record["scope_id"], record, shredding, now)
                continue
            body = json.loads(
                engine.vault.open(tx, record["record_id"], record["scope_id"], record["sealed"])
            )
            ineligible = body["retention"]["derivative_rule"] == "make-ineligible"
            if record["state"] == "expired" and ineligible:
                continue
            tx.index(record["scope_id"], record["record_id"], index_text(body["content"]))
    return len(rows["records"])
