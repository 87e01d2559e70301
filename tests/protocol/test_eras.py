"""What each protocol version allows on the wire, as its schema.ts defines it."""

from __future__ import annotations

import pytest

from engram.protocol.eras import (
    FormRules,
    accepts_batches,
    elicitation_forms,
)


@pytest.mark.parametrize(
    ("version", "forms"),
    [
        (None, None),
        ("2024-11-05", None),
        ("2025-03-26", None),
        ("2025-06-18", FormRules(mode=False, multi_select=False, string_defaults=False)),
        ("2025-11-25", FormRules(mode=True, multi_select=True, string_defaults=True)),
        ("2026-07-28", FormRules(mode=True, multi_select=True, string_defaults=True)),
        ("2099-01-01", None),
    ],
)
def test_elicitation_exists_from_2025_06_18_with_the_forms_each_version_defines(
    version: str | None, forms: FormRules | None
) -> None:
    assert elicitation_forms(version) == forms


@pytest.mark.parametrize(
    ("version", "accepted"),
    [
        (None, False),
        ("2024-11-05", False),
        ("2025-03-26", True),
        ("2025-06-18", False),
        ("2025-11-25", False),
        ("2026-07-28", False),
    ],
)
def test_only_2025_03_26_connections_take_batches(version: str | None, accepted: bool) -> None:
    assert accepts_batches(version) is accepted
