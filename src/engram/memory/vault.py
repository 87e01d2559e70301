"""Per-item encryption for the governed store: seal, open and destroy item content.

Each candidate and each record has its own data key, stored only wrapped by the
current KEK and bound to its owner; the ciphertext is bound to the owner and scope.
Destroying the wrapped key is destroying the content.
"""

from __future__ import annotations

import os

from engram.crypto.keyfiles import KeyRing, load_keyring
from engram.crypto.sealing import (
    Sealed,
    associated_data,
    new_data_key,
    open_sealed,
    seal,
    unwrap_key,
    wrap_key,
)
from engram.errors import BlobMissing
from engram.memory.ports import AgentReads, AgentWrites

__all__ = ["Vault"]


class Vault:
    """Seals item content under per-item keys wrapped by the keyring's current KEK."""

    def __init__(self, keys: KeyRing) -> None:
        self.keys = keys
        self._current_identity: tuple[int, ...] | None = None

    def seal(self, tx: AgentWrites, owner: str, scope_id: str, plaintext: bytes) -> bytes:
        """Encrypt ``plaintext`` under a fresh key for ``owner``; store the wrapped key."""
        data_key = new_data_key()
        kek_id, wrapped = self.wrap(owner, data_key)
        tx.put_data_key(owner, scope_id, kek_id, wrapped)
        return seal(data_key, plaintext, _content_aad(owner, scope_id)).to_bytes()

    def open(self, reader: AgentReads, owner: str, scope_id: str, sealed: bytes | None) -> bytes:
        """Decrypt an item's content; ``BlobMissing`` once its key is destroyed."""
        stored = reader.data_key(owner)
        if stored is None or sealed is None:
            raise BlobMissing("content key destroyed")
        data_key = self.unwrap(owner, *stored)
        return open_sealed(data_key, Sealed.from_bytes(sealed), _content_aad(owner, scope_id))

    def unwrap(self, owner: str, kek_id: str, wrapped: bytes) -> bytes:
        """The plain data key of ``owner`` (for re-wrapping only; never stored)."""
        kek = self._kek(kek_id)
        return unwrap_key(kek, wrapped, _key_aad(owner, kek_id))

    def wrap(self, owner: str, data_key: bytes) -> tuple[str, bytes]:
        """Wrap a data key under the current KEK: ``(kek_id, wrapped)``."""
        self._follow_rotation()
        current = self.keys.current
        return current, wrap_key(self.keys.current_kek, data_key, _key_aad(owner, current))

    def rewrap(self, owner: str, kek_id: str, wrapped: bytes) -> tuple[str, bytes]:
        """Re-wrap one data key under the current KEK (key rotation)."""
        return self.wrap(owner, self.unwrap(owner, kek_id, wrapped))

    def _kek(self, kek_id: str) -> bytes:
        if kek_id not in self.keys.keks:
            self.keys = load_keyring(self.keys.directory)  # rotated by another process
        kek = self.keys.keks.get(kek_id)
        if kek is None:
            raise BlobMissing("key-encryption key missing")
        return kek

    def _follow_rotation(self) -> None:
        # Another process may have rotated the KEK: new keys must use the new one.
        # Rotation replaces the ``current`` file, so its identity tells whether to
        # reread it: one stat per wrap instead of an open and a read.
        path = self.keys.directory / "current"
        try:
            info = os.stat(path)
            identity = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size)
            if identity == self._current_identity:
                return
            current = path.read_text(encoding="ascii").strip()
        except OSError:
            return
        if current != self.keys.current:
            self.keys = load_keyring(self.keys.directory)
        self._current_identity = identity

    @staticmethod
    def destroy(tx: AgentWrites, owner: str) -> None:
        """Destroy an item's key (its WAL copy goes at the purge's checkpoint)."""
        tx.delete_data_key(owner)


def _content_aad(owner: str, scope_id: str) -> bytes:
    return associated_data("content", owner=owner, scope=scope_id)


def _key_aad(owner: str, kek_id: str) -> bytes:
    return associated_data("data-key", owner=owner, kek=kek_id)
