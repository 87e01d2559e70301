"""Unguessable identifiers: a prefix and lowercase RFC 4648 base32 characters.

Each character carries 5 random bits: a random byte is mapped to the alphabet by its low
five bits (256 is a multiple of 32, so every character is equally likely). One
``bytes.translate`` replaces ``base64.b32encode``, which is written in Python and cost
several microseconds per id on every tool call.
"""

from __future__ import annotations

import os
from typing import Final

__all__ = ["ALPHABET", "random_id"]

ALPHABET: Final = "abcdefghijklmnopqrstuvwxyz234567"
_BY_LOW_BITS: Final = bytes(ord(ALPHABET[byte % 32]) for byte in range(256))


def random_id(prefix: str, characters: int) -> str:
    """``prefix`` and ``characters`` random base32 characters (5 bits of entropy each)."""
    return prefix + os.urandom(characters).translate(_BY_LOW_BITS).decode("ascii")
