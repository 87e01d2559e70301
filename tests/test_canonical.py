"""Canonical JSON equals RFC 8785 (the ``rfc8785`` package) on every JSON value."""

from __future__ import annotations

from typing import Any

import pytest
import rfc8785
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engram.canonical import canonical_bytes, digest, is_digest, record_id_from_digest

SAFE = 2**53 - 1
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-SAFE, max_value=SAFE)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5)
    ),
    max_leaves=30,
)


def _surrogate_free(value: Any) -> bool:
    text = repr(value)
    return not any(0xD800 <= ord(char) <= 0xDFFF for char in text)


@settings(max_examples=600)
@given(values)
def test_canonical_bytes_equal_rfc8785_for_any_json_value(value: Any) -> None:
    assume(_surrogate_free(value))
    assert canonical_bytes(value) == rfc8785.dumps(value)


@pytest.mark.parametrize(
    "value",
    [
        {"\U0001f600": 1, "\ufb01": 2, "a": 3},
        {"\ue000": 1, "\ud7ff": 2, "\U00010000": 3},
        {"b": [1e21, 1e-7, 0.1, -0.0, 5.0]},
        {"floats": [0.0001, 1e-05, 123.456, -2.5, 1e16, 1e15 + 0.5, 9007199254740993.0]},
        {"": [True, False, None, 2**53 - 1, -(2**53 - 1)], "é": "\u00e9"},
        ("tuple", ["nested", {"z": 1, "a": 2}]),
        "\x00\x1f\x7f\u2028",
    ],
)
def test_the_tricky_corners_match(value: Any) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


@pytest.mark.parametrize(
    "value",
    [
        2**53,
        -(2**53),
        float("nan"),
        float("inf"),
        "\ud800",
        {1: "a"},
        {True: "a"},
        {"a": {1, 2}},
        {"a": [2**60]},
        {"\ud800": 1},
    ],
)
def test_what_jcs_cannot_encode_is_a_value_error(value: Any) -> None:
    reasons = "safe range|not representable|lone surrogate|keys must be strings|not a JSON value"
    with pytest.raises(ValueError, match=reasons):
        canonical_bytes(value)


def test_digests_are_domain_separated_by_kind() -> None:
    assert digest("payload", {"a": 1}) != digest("record", {"a": 1})
    assert is_digest(digest("payload", {"a": 1}))
    assert not is_digest("sha256:" + "A" * 64)


def test_record_ids_are_52_lowercase_base32_characters_after_mem() -> None:
    record_id = record_id_from_digest("sha256:" + "ff" * 32)
    assert record_id == "mem_" + "7" * 51 + "q"
