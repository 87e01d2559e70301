"""Lifecycle states of candidates and records, and which transitions are legal.

Candidates: ``pending`` -> ``accepted`` (a record exists) | ``rejected`` |
``withdrawn`` | ``pending_adjudication`` (held for the host). Records:
``accepted_current`` <-> ``accepted_disputed``, -> ``historical`` | ``expired`` |
``trust_invalid`` -> ``tombstoned``. Only ``accepted_current`` is ever disclosed.
"""

from __future__ import annotations

from typing import Final

from engram.errors import AlreadyTerminal, IllegalTransition

__all__ = [
    "CANDIDATE_TERMINAL",
    "DISCLOSABLE",
    "FORGETTABLE",
    "RECORD_STATES",
    "RECORD_TERMINAL",
    "check_candidate",
    "check_record",
]

PENDING: Final = "pending"
CANDIDATE_STATES: Final = ("pending", "pending_adjudication", "accepted", "rejected", "withdrawn")
CANDIDATE_TERMINAL: Final = frozenset({"accepted", "rejected", "withdrawn"})

RECORD_STATES: Final = (
    "accepted_current",
    "accepted_disputed",
    "historical",
    "expired",
    "trust_invalid",
    "tombstoned",
)
RECORD_TERMINAL: Final = frozenset({"tombstoned"})
DISCLOSABLE: Final = frozenset({"accepted_current"})
FORGETTABLE: Final = frozenset(
    {"accepted_current", "accepted_disputed", "historical", "expired", "trust_invalid"}
)

#: Host-side record transitions (maintenance), besides forget.
HOST_RECORD_TRANSITIONS: Final = {
    "dispute": ({"accepted_current"}, "accepted_disputed"),
    "undispute": ({"accepted_disputed"}, "accepted_current"),
    "supersede": ({"accepted_current", "accepted_disputed"}, "historical"),
    "expire": ({"accepted_current", "accepted_disputed", "historical"}, "expired"),
    "invalidate_trust": (
        {"accepted_current", "accepted_disputed", "historical"},
        "trust_invalid",
    ),
}


def check_candidate(state: str, allowed: frozenset[str] | set[str]) -> None:
    """Raise the contract error for an operation the candidate's state forbids."""
    if state in allowed:
        return
    if state in CANDIDATE_TERMINAL:
        raise AlreadyTerminal()
    raise IllegalTransition()


def check_record(state: str, allowed: frozenset[str] | set[str]) -> None:
    """Raise the contract error for an operation the record's state forbids."""
    if state in allowed:
        return
    if state in RECORD_TERMINAL:
        raise AlreadyTerminal()
    raise IllegalTransition()
