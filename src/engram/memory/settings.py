"""The host's policy for governed memory, as the engine sees it.

Read from the host profile by the composition root; the engine never reads files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "CONFIRM_VIA",
    "DEFAULT_MAX_OPEN_REQUESTS",
    "DEFAULT_RETENTION_MAX_DAYS",
    "MAX_OPEN_REQUESTS",
    "MAX_RECORD_BYTES",
    "MIN_RECORD_BYTES",
    "ConfirmVia",
    "HostPolicy",
]

#: No owner-approved retention value exists (memory-contract, open points); 30 days
#: is the reference port's fallback and our default, and ``engram doctor`` warns that
#: it is a default, not a policy.
DEFAULT_RETENTION_MAX_DAYS: Final = 30
#: The largest record admission lets in (the canonical bytes of its body), by default and
#: at most: so that no record can make a search fail for anyone. A packet of such a record
#: stays under the default ``max_packet_bytes`` (65,536), and 50 of them (the largest
#: ``limit``) under the 1 MiB response ceiling (docs/memory-contract.md §3.26).
MAX_RECORD_BYTES: Final = 16_384
MIN_RECORD_BYTES: Final = 1_024
#: How many confirmation requests one principal may have waiting for the operator in a
#: scope; the next gated call that would leave one is ``RATE_LIMITED`` (retriable) until
#: the operator confirms or denies one, or one expires (docs/memory-contract.md §3.28).
#: Ten are about one screen of ``engram host pending`` (four lines each), and more than a
#: task's withdrawals and forgets need at once.
DEFAULT_MAX_OPEN_REQUESTS: Final = 10
MAX_OPEN_REQUESTS: Final = 1_000


#: Who may approve a gated operation (docs/memory-contract.md §3.27):
#: ``host``: only the host operator (``engram host confirm``); a client's dialog is never
#: asked, since an agent that drives its own MCP client would answer it itself;
#: ``dialog``: the client's dialog where the client shows one, else the operator;
#: ``both``: the operator and then, at the retry, the client's dialog.
ConfirmVia = Literal["host", "dialog", "both"]
CONFIRM_VIA: Final[tuple[ConfirmVia, ...]] = ("host", "dialog", "both")


@dataclass(frozen=True)
class HostPolicy:
    """Retention ceiling, allowances, and which mutations need a human confirmation."""

    retention_max_days: int = DEFAULT_RETENTION_MAX_DAYS
    allow_retain: bool = False
    reconciliation_families: frozenset[str] = field(default_factory=frozenset)
    confirm_tools: frozenset[str] = field(default_factory=frozenset)
    max_record_bytes: int = MAX_RECORD_BYTES
    #: ``dialog`` here: an embedding host that passes a Confirmer shows it to a person;
    #: a host profile (the MCP server's) defaults to ``host``.
    confirm_via: ConfirmVia = "dialog"
    #: Confirmation requests one principal may have waiting at once (see above).
    max_open_requests: int = DEFAULT_MAX_OPEN_REQUESTS

    @property
    def retention_max_ms(self) -> int:
        return self.retention_max_days * 86_400_000
