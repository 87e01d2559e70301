"""What each governed tool is, in one table that the engine's pipeline and the MCP tool
list both read.

The engine runs every call through one pipeline (``MemoryEngine.call``): grant, purpose,
schema, revocation, then for a read the read itself; for a mutation replay-or-run inside
one transaction (the gate, when the tool is gated, sits inside the run), the outcome
remembered under the idempotency key, the audit entry, the commit, and for a shredding
tool its line in the shred ledger. Everything that differs between the six tools is a
column of :data:`TOOLS`, the tool's body included; the bodies (:mod:`engram.memory.capture`,
:mod:`engram.memory.admission`, :mod:`engram.memory.withdrawal`, :mod:`engram.memory.recall`)
take one typed value (:mod:`engram.memory.call`) and only do their own work. Nothing
downstream of :data:`TOOLS` branches on a tool's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

from engram.memory import admission, capture, recall, withdrawal
from engram.memory.call import Read, Write

__all__ = ["MEMORY_TOOLS", "TOOLS", "ToolSpec"]

Outcome = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One governed tool."""

    #: The short name (``engram_memory_<name>`` over MCP).
    name: str
    title: str
    description: str
    #: The body of a read (it discloses) or of a mutation (it changes the store): one
    #: of the two is set.
    read: Callable[[Read], Outcome] | None
    mutate: Callable[[Write], Outcome] | None
    #: The argument a read embeds as the semantic channel's question, before its
    #: snapshot opens (embedding takes milliseconds; the snapshot holds the store lock).
    question: str | None
    #: ``always``: a human confirms every call; ``policy``: when the host lists the tool
    #: in ``require_confirmation``; ``never``.
    gated: Literal["always", "policy", "never"]
    #: Where the call's ``purpose_ref`` is: in the arguments, in the payload, or nowhere.
    purpose: Literal["arguments", "payload"] | None
    #: The argument naming what a shredding tool destroys (its shred-ledger line).
    shreds: str | None
    #: The output field saying how far the shredding's purge got after the commit
    #: (``complete`` or ``pending``).
    purge_status: str | None
    #: What is stored under the idempotency key, from the value the tool returns.
    remembered: Callable[[Outcome], Outcome]
    #: The value a replay returns, from what was stored.
    replayed: Callable[[Outcome], Outcome]

    @property
    def reads(self) -> bool:
        return self.read is not None

    @property
    def destructive(self) -> bool:
        return self.shreds is not None

    @property
    def forgets_record(self) -> bool:
        """A record (not a candidate) is what it shreds: every backup's copy of it goes
        too, and the purge ends in a coverage receipt."""
        return self.shreds == "record_id"


def _same(value: Outcome) -> Outcome:
    return value


TOOLS: Final[dict[str, ToolSpec]] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            name="search",
            title="Search governed memory",
            description=(
                "Find current memories with citations and a rank receipt (BM25, fused with"
                " the semantic channel where installed). Read-only."
            ),
            read=recall.search,
            mutate=None,
            question="query",
            gated="never",
            purpose="arguments",
            shreds=None,
            purge_status=None,
            remembered=_same,
            replayed=_same,
        ),
        ToolSpec(
            name="get",
            title="Read a governed memory record",
            description="Read one current record by record_id, with a read receipt. Read-only.",
            read=recall.get,
            mutate=None,
            question=None,
            gated="never",
            purpose="arguments",
            shreds=None,
            purge_status=None,
            remembered=_same,
            replayed=_same,
        ),
        ToolSpec(
            name="capture",
            title="Capture a cited memory candidate",
            description=(
                "Submit cited material as an encrypted pending candidate (not searchable until"
                " admitted). Every component cites a citation; citation ids, component ids"
                " unique; primary_event.citation_id is cited by the primary component;"
                " evidence cites known citations; t_end >= t; reconciliation.family_refs"
                " sorted and unique."
            ),
            read=None,
            mutate=capture.capture,
            question=None,
            gated="policy",
            purpose="payload",
            shreds=None,
            purge_status=None,
            remembered=_same,
            replayed=lambda stored: {**stored, "status": "duplicate_exact"},
        ),
        ToolSpec(
            name="request_admission",
            title="Request admission of a candidate",
            description="Ask the host's admission policy to decide on a pending candidate.",
            read=None,
            mutate=admission.request_admission,
            question=None,
            gated="policy",
            purpose=None,
            shreds=None,
            purge_status=None,
            remembered=lambda value: dict(value["outcome"]),
            replayed=lambda stored: {"outcome": stored, "replayed": True},
        ),
        ToolSpec(
            name="withdraw",
            title="Withdraw a pending candidate",
            description="Terminate your pending candidate. Needs a human confirmation.",
            read=None,
            mutate=withdrawal.withdraw,
            question=None,
            gated="always",
            purpose=None,
            shreds="candidate_id",
            purge_status="key_destruction",
            remembered=_same,
            replayed=lambda stored: {**stored, "replayed": True},
        ),
        ToolSpec(
            name="forget",
            title="Forget an admitted record",
            description=(
                "Make an admitted record terminally ineligible. Needs a human confirmation."
            ),
            read=None,
            mutate=withdrawal.forget,
            question=None,
            gated="always",
            purpose=None,
            shreds="record_id",
            purge_status="projection_invalidation",
            remembered=_same,
            replayed=lambda stored: {**stored, "replayed": True},
        ),
    )
}

#: The six tools, by their short names, in the order ``tools/list`` shows them.
MEMORY_TOOLS: Final = tuple(TOOLS)
