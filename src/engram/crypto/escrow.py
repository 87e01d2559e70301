"""Escrow keys: the key a backup seals each record's data key under, one per record, kept
beside the live keys and destroyed when the record is forgotten.

A backup must outlive key rotations, so it cannot hold a record's data key wrapped under
a KEK; and it must not outlive a forget, so it cannot seal it under one backup-wide key
either: the live keys would open an old backup's copy of a forgotten record. Each record
that enters a backup gets a random escrow key here; the backup seals the record's data
key under it; forgetting the record destroys its escrow key, and every backup's copy of
that record can no longer be opened, by anyone, with any key.

The table is one file of fixed 48-byte slots (a 16-byte tag of the owner id, a 32-byte
key), readable by its owner only. Destroying a key overwrites its slot with zeros in
place and fsyncs: the same promise SQLite's ``secure_delete`` makes for the store. Writers
of several processes take an exclusive ``flock`` on the file.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

__all__ = ["ESCROW_NAME", "EscrowKeys"]

ESCROW_NAME: Final = "escrow.keys"
_TAG: Final = 16
_KEY: Final = 32
_SLOT: Final = _TAG + _KEY
_EMPTY: Final = bytes(_SLOT)


def _tag(owner: str) -> bytes:
    return hashlib.sha256(b"engram/escrow-owner/v1\0" + owner.encode("utf-8")).digest()[:_TAG]


class EscrowKeys:
    """The escrow keys of one key directory."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / ESCROW_NAME

    def keys_for(self, owners: Iterable[str], create: bool) -> dict[str, bytes]:
        """The escrow key of each owner that has one; with ``create``, a new one for each
        owner that has none (so a backup can seal every record it holds)."""
        wanted = {_tag(owner): owner for owner in owners}
        with self._locked() as descriptor:
            found = {wanted[tag]: key for _, tag, key in self._slots(descriptor) if tag in wanted}
            missing = [owner for owner in wanted.values() if owner not in found]
            if create and missing:
                fresh = {owner: secrets.token_bytes(_KEY) for owner in missing}
                os.lseek(descriptor, 0, os.SEEK_END)
                os.write(descriptor, b"".join(_tag(o) + key for o, key in fresh.items()))
                os.fsync(descriptor)
                found.update(fresh)
        return found

    def destroy(self, owner: str) -> bool:
        """Overwrite the owner's escrow key with zeros; whether it had one."""
        tag = _tag(owner)
        destroyed = False
        with self._locked() as descriptor:
            for offset, slot_tag, _ in self._slots(descriptor):
                if slot_tag == tag:
                    os.pwrite(descriptor, _EMPTY, offset)
                    destroyed = True
            if destroyed:
                os.fsync(descriptor)
        return destroyed

    @contextmanager
    def _locked(self) -> Iterator[int]:
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield descriptor
        finally:
            os.close(descriptor)  # closing releases the lock

    @staticmethod
    def _slots(descriptor: int) -> Iterator[tuple[int, bytes, bytes]]:
        size = os.fstat(descriptor).st_size
        data = os.pread(descriptor, size - size % _SLOT, 0)
        for offset in range(0, len(data), _SLOT):
            slot = data[offset : offset + _SLOT]
            if slot != _EMPTY:
                yield offset, slot[:_TAG], slot[_TAG:]
