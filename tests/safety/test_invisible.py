"""Invisible characters: what is stripped, and how offsets map back."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from engram.safety.invisible import INVISIBLE_RANGES, original_spans, strip_invisible

#: Invisible characters outside category Cf, documented in the module docstring.
NOT_FORMAT = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0}


def _stripped(code_point: int) -> bool:
    return strip_invisible(f"a{chr(code_point)}b") == "ab"


def test_every_format_character_of_this_python_is_stripped() -> None:
    every_code_point = range(sys.maxunicode + 1)
    formats = [cp for cp in every_code_point if unicodedata.category(chr(cp)) == "Cf"]
    assert [hex(cp) for cp in formats if not _stripped(cp)] == []


def test_every_stripped_character_is_a_format_control_a_selector_or_a_listed_filler() -> None:
    unexpected = [
        hex(cp)
        for low, high in INVISIBLE_RANGES
        for cp in range(low, high + 1)
        if unicodedata.category(chr(cp)) not in {"Cf", "Cn"}
        and not (0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF or 0x180B <= cp <= 0x180F)
        and cp not in NOT_FORMAT
    ]
    assert unexpected == []


@pytest.mark.parametrize(
    ("text", "stripped"),
    [
        ("plain ASCII stays", "plain ASCII stays"),
        ("zero\u200bwidth\u200c\u200djoin", "zerowidthjoin"),
        ("soft\u00adhyphen", "softhyphen"),
        ("\u202eevil\u202c and \u2066isolate\u2069", "evil and isolate"),
        ("\ufeffbom", "bom"),
        ("tag\U000e0041\U000e007f", "tag"),
        ("heart\u2764\ufe0f", "heart\u2764"),
        ("café naïve 漢字", "café naïve 漢字"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
    ],
)
def test_strip_invisible_removes_exactly_the_invisible_characters(text: str, stripped: str) -> None:
    assert strip_invisible(text) == stripped


@given(st.text())
def test_stripping_is_idempotent(text: str) -> None:
    assert strip_invisible(strip_invisible(text)) == strip_invisible(text)


def test_spans_map_back_around_and_across_removed_characters() -> None:
    text = "\u200bab\u200bcd\u200b\u200bef\u200b"
    assert strip_invisible(text) == "abcdef"
    assert original_spans(text, [(0, 2), (2, 4), (5, 6)]) == [(1, 3), (4, 6), (9, 10)]


@given(st.text(alphabet=st.sampled_from("ab\u200b\u00ad\ufe0f")), st.data())
def test_a_mapped_span_holds_the_same_visible_text(text: str, data: st.DataObject) -> None:
    visible = strip_invisible(text)
    assume(visible)
    start = data.draw(st.integers(0, len(visible) - 1))
    end = data.draw(st.integers(start + 1, len(visible)))
    [(original_start, original_end)] = original_spans(text, [(start, end)])
    assert strip_invisible(text[original_start:original_end]) == visible[start:end]
    assert text[original_start] == visible[start]
    assert text[original_end - 1] == visible[end - 1]
