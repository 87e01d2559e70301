"""Key files on disk: the store's key-encryption keys and its MAC key.

A key directory holds ``kek-<id>.key`` files (32 random bytes each), a ``current``
file naming the KEK that wraps new data keys, and ``mac.key`` (the HMAC key for page
cursors and confirmation tokens). Files are created with mode 0600 inside a 0700
directory; a key file readable or writable by group or others, or owned by another
user, is not trusted.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from engram.crypto.sealing import KEY_BYTES
from engram.durable import write_atomic
from engram.errors import TrustedContextUnavailable

__all__ = [
    "KeyRing",
    "add_kek",
    "create_keyring",
    "load_keyring",
    "read_private_key",
    "retire_kek",
]

_CURRENT: Final = "current"
_MAC: Final = "mac.key"


@dataclass(frozen=True)
class KeyRing:
    """The loaded keys: every KEK by id, the current KEK id, the MAC key."""

    directory: Path
    keks: dict[str, bytes]
    current: str
    mac_key: bytes

    @property
    def current_kek(self) -> bytes:
        return self.keks[self.current]


def _write_secret(path: Path, data: bytes) -> None:
    write_atomic(path, data, mode=0o600, exclusive=True)


def create_keyring(directory: Path) -> KeyRing:
    """Create a key directory with a first KEK and a MAC key (existing keys are kept)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    if (directory / _CURRENT).exists():
        return load_keyring(directory)
    kek_id = "k1"
    _write_secret(directory / f"kek-{kek_id}.key", secrets.token_bytes(KEY_BYTES))
    if not (directory / _MAC).exists():
        _write_secret(directory / _MAC, secrets.token_bytes(KEY_BYTES))
    _write_secret(directory / _CURRENT, kek_id.encode())
    return load_keyring(directory)


def add_kek(directory: Path) -> str:
    """Create a new KEK and make it current; returns its id (for rotation)."""
    ring = load_keyring(directory)
    number = 1 + max(int(kek_id.removeprefix("k")) for kek_id in ring.keks)
    kek_id = f"k{number}"
    _write_secret(directory / f"kek-{kek_id}.key", secrets.token_bytes(KEY_BYTES))
    write_atomic(directory / _CURRENT, kek_id.encode(), mode=0o600)
    return kek_id


def retire_kek(directory: Path, kek_id: str) -> None:
    """Delete a KEK file that no data key uses any more."""
    (directory / f"kek-{kek_id}.key").unlink(missing_ok=True)


def _read_trusted(path: Path, size: int | None = KEY_BYTES) -> bytes:
    try:
        info = path.stat()
        data = path.read_bytes()
    except OSError as exc:
        raise TrustedContextUnavailable(f"cannot read key file {path.name}") from exc
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO) or info.st_uid != os.getuid():
        raise TrustedContextUnavailable(f"key file {path.name} is not private to its owner")
    if size is not None and len(data) != size:
        raise TrustedContextUnavailable(f"key file {path.name} has the wrong size")
    return data


def read_private_key(path: Path) -> bytes:
    """A 32-byte key file, only when it is private to its owner."""
    return _read_trusted(path)


def load_keyring(directory: Path) -> KeyRing:
    """Load and check every key file; raises ``TrustedContextUnavailable``."""
    current = _read_trusted(directory / _CURRENT, size=None).decode("ascii", "replace").strip()
    keks = {
        path.name.removeprefix("kek-").removesuffix(".key"): _read_trusted(path)
        for path in sorted(directory.glob("kek-*.key"))
    }
    if current not in keks:
        raise TrustedContextUnavailable("the current key-encryption key is missing")
    return KeyRing(directory, keks, current, _read_trusted(directory / _MAC))
