"""Invisible characters: removing them, and mapping offsets back across the removal.

A zero-width space inside ``ghp_…`` hides the token from a regular expression while a
terminal, an editor or a model still reads it whole. The secret detector therefore
scans :func:`strip_invisible` of the text. This module only removes characters; it does
not normalize (no NFC/NFKC, so full-width letters and homoglyphs stay what they are) and
it does not decide what is a secret.

What counts as invisible is a fixed table, :data:`INVISIBLE_RANGES`:

* every code point of Unicode category ``Cf`` (format characters) in Unicode 14.0 to
  15.1: the soft hyphen U+00AD, zero-width space/joiners and direction marks
  U+200B..U+200F, bidi embeddings and overrides U+202A..U+202E, U+2060..U+2064 (word joiner,
  invisible operators), bidi isolates U+2066..U+2069, U+FEFF, the tag characters
  U+E0001 and U+E0020..U+E007F, and the rarer format controls;
* characters that render as nothing although they are not ``Cf``: the combining grapheme
  joiner U+034F, the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, the Khmer
  inherent vowels U+17B4..U+17B5, the Mongolian variation selectors U+180B..U+180F,
  the variation selectors U+FE00..U+FE0F and U+E0100..U+E01EF, and the whole tag block
  U+E0000..U+E007F.

The table is explicit (a regular-expression class built once) rather than a per-character
``unicodedata`` lookup, which keeps stripping a megabyte in the low milliseconds;
``tests/safety`` checks that it covers every ``Cf`` character of the running Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["INVISIBLE_RANGES", "original_spans", "strip_invisible"]

#: Inclusive code point ranges removed by :func:`strip_invisible`.
INVISIBLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE007F),
    (0xE0100, 0xE01EF),
)

_INVISIBLE = re.compile(
    "[" + "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in INVISIBLE_RANGES) + "]"
)


def strip_invisible(text: str) -> str:
    """Return ``text`` without its invisible characters (see the module docstring).

    Idempotent, and the identity on ASCII text. Offsets into the result differ from
    offsets into ``text`` by the number of characters removed before them; use
    :func:`original_spans` to map spans back.
    """
    if text.isascii():
        return text
    return _INVISIBLE.sub("", text)


def original_spans(text: str, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Map non-empty ``[start, end)`` spans of ``strip_invisible(text)`` back onto ``text``.

    ``spans`` must be sorted and non-overlapping. A mapped span runs from the original
    position of its first visible character to just after its last one, so it also
    covers every invisible character between them (and none outside them).
    """
    removed = [] if text.isascii() else [match.start() for match in _INVISIBLE.finditer(text)]
    skipped = 0

    def to_original(visible: int) -> int:
        # Queries arrive in increasing order, so one pass over ``removed`` serves them all.
        nonlocal skipped
        while skipped < len(removed) and removed[skipped] <= visible + skipped:
            skipped += 1
        return visible + skipped

    mapped: list[tuple[int, int]] = []
    for start, end in spans:
        original_start = to_original(start)
        mapped.append((original_start, to_original(end - 1) + 1))
    return mapped
