"""Sealing: AES-256-GCM envelope encryption with per-item data keys, key files.

Each pending candidate and each accepted record is encrypted under its own random
data key; data keys are stored only wrapped by the store's key-encryption key (KEK).
Destroying an item's data key makes its ciphertext unrecoverable. ``cryptography``
is imported on first use, never on the server's start-up path.
"""
