"""Random identifiers: their form, and every character equally likely."""

from __future__ import annotations

import base64
import collections
import re

from engram.crypto.ids import _BY_LOW_BITS, ALPHABET, random_id


def test_an_id_is_its_prefix_and_the_asked_number_of_base32_characters() -> None:
    for characters in (1, 16, 26, 32):
        assert re.fullmatch(rf"aud_[a-z2-7]{{{characters}}}", random_id("aud_", characters))


def test_the_alphabet_is_rfc_4648_base32_in_lowercase() -> None:
    # Base32 of 0, 1, ... 31 in consecutive 5-bit groups spells the alphabet in order.
    groups = int("".join(f"{value:05b}" for value in range(32)), 2).to_bytes(20, "big")
    assert base64.b32encode(groups).decode().lower() == ALPHABET


def test_each_byte_maps_to_the_character_of_its_low_five_bits() -> None:
    assert [_BY_LOW_BITS[byte] for byte in range(256)] == [
        ord(ALPHABET[byte & 31]) for byte in range(256)
    ]
    counts = collections.Counter(_BY_LOW_BITS)
    assert sorted(counts.values()) == [8] * 32  # uniform over the alphabet


def test_ids_do_not_repeat() -> None:
    assert len({random_id("cand_", 32) for _ in range(10_000)}) == 10_000
