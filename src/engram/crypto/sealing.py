"""AES-256-GCM sealing of content under data keys, and wrapping of data keys by a KEK.

Every seal binds associated data (the item's id and scope), so a ciphertext moved to
another item or scope fails to open. Nonces are 96-bit random values; a data key
seals exactly one plaintext, so nonce reuse under one key cannot happen.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final

from engram.canonical import canonical_bytes
from engram.errors import BlobMissing

__all__ = [
    "KEY_BYTES",
    "Sealed",
    "associated_data",
    "new_data_key",
    "open_sealed",
    "seal",
    "unwrap_key",
    "wrap_key",
]

KEY_BYTES: Final = 32
NONCE_BYTES: Final = 12


@dataclass(frozen=True, slots=True)
class Sealed:
    """A nonce and the ciphertext (with its 16-byte GCM tag appended)."""

    nonce: bytes
    ciphertext: bytes

    def to_bytes(self) -> bytes:
        return self.nonce + self.ciphertext

    @classmethod
    def from_bytes(cls, data: bytes) -> Sealed:
        if len(data) < NONCE_BYTES + 16:
            raise BlobMissing("sealed blob too short")
        return cls(data[:NONCE_BYTES], data[NONCE_BYTES:])


def associated_data(kind: str, **fields: str) -> bytes:
    """Canonical associated data: what a ciphertext is bound to."""
    return canonical_bytes({"engram": f"{kind}/v1", **fields})


def new_data_key() -> bytes:
    """A fresh random 256-bit key."""
    return os.urandom(KEY_BYTES)


def seal(key: bytes, plaintext: bytes, aad: bytes) -> Sealed:
    """Encrypt and authenticate ``plaintext`` under ``key``, bound to ``aad``."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = os.urandom(NONCE_BYTES)
    return Sealed(nonce, AESGCM(key).encrypt(nonce, plaintext, aad))


def open_sealed(key: bytes, sealed: Sealed, aad: bytes) -> bytes:
    """Decrypt; raises ``BlobMissing`` when the key, blob or binding does not match."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        return AESGCM(key).decrypt(sealed.nonce, sealed.ciphertext, aad)
    except InvalidTag as exc:
        raise BlobMissing("sealed content failed authentication") from exc


def wrap_key(kek: bytes, data_key: bytes, aad: bytes) -> bytes:
    """Wrap a data key under the KEK (AES-256-GCM, bound to ``aad``)."""
    return seal(kek, data_key, aad).to_bytes()


def unwrap_key(kek: bytes, wrapped: bytes, aad: bytes) -> bytes:
    """Unwrap a data key; raises ``BlobMissing`` if it does not open."""
    return open_sealed(kek, Sealed.from_bytes(wrapped), aad)
