"""The host's policy for governed memory, as the engine sees it.

Read from the host profile by the composition root; the engine never reads files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

__all__ = ["DEFAULT_RETENTION_MAX_DAYS", "HostPolicy"]

#: No owner-approved retention value exists (memory-contract, open points); 30 days
#: is the reference port's fallback and our default, and ``engram doctor`` warns that
#: it is a default, not a policy.
DEFAULT_RETENTION_MAX_DAYS: Final = 30


@dataclass(frozen=True)
class HostPolicy:
    """Retention ceiling, allowances, and which mutations need a human confirmation."""

    retention_max_days: int = DEFAULT_RETENTION_MAX_DAYS
    allow_retain: bool = False
    reconciliation_families: frozenset[str] = field(default_factory=frozenset)
    confirm_tools: frozenset[str] = field(default_factory=frozenset)

    @property
    def retention_max_ms(self) -> int:
        return self.retention_max_days * 86_400_000
