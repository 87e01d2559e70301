"""Key rotation without downtime: a new KEK, then every data key re-wrapped under it.

Running servers notice the new ``current`` KEK on their next seal and reload the
keyring when they meet a key wrapped by a KEK they have not loaded, so rotation
needs no restart. Re-wrapping goes in batches, each its own short transaction.
The previous KEK is kept (a server that read ``current`` just before the switch may
still seal one key with it); KEKs older than that which no key uses any more are
deleted, so a rotation also finishes the one before it.
"""

from __future__ import annotations

from typing import Any, Final

from engram.crypto.keyfiles import add_kek, load_keyring, retire_kek
from engram.memory.engine import MemoryEngine

__all__ = ["rotate_keys"]

BATCH: Final = 500


def rotate_keys(engine: MemoryEngine) -> dict[str, Any]:
    """Rotate the store's KEK; what was re-wrapped and which KEKs were retired."""
    directory = engine.vault.keys.directory
    previous = load_keyring(directory).current
    new = add_kek(directory)
    engine.vault.keys = load_keyring(directory)
    rewrapped = 0
    while True:
        with engine.store.write() as tx:
            batch = tx.data_keys_not_under(new, BATCH)
            for owner, kek_id, wrapped in batch:
                tx.set_data_key(owner, *engine.vault.rewrap(owner, kek_id, wrapped))
        rewrapped += len(batch)
        if len(batch) < BATCH:
            break
    with engine.store.read() as reader:
        in_use = reader.kek_ids_in_use()
    retired = sorted(
        kek_id
        for kek_id in engine.vault.keys.keks
        if kek_id not in {new, previous} and kek_id not in in_use
    )
    for kek_id in retired:
        retire_kek(directory, kek_id)
    engine.vault.keys = load_keyring(directory)
    return {"kek": new, "rewrapped": rewrapped, "retired": retired}
