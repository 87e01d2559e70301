"""What each governed tool is, in one table that the engine's pipeline and the MCP tool
list both read.

The engine runs every call through one pipeline (``MemoryEngine.call``): grant, purpose,
schema, revocation, then for a read the read itself; for a mutation replay-or-run inside
one transaction (the gate, when the tool is gated, sits inside the run), the outcome
remembered under the idempotency key, the audit entry, the commit, and for a shredding
tool its line in the shred ledger. Everything that differs between the six tools is a
column of :data:`TOOLS`; the tool bodies (:mod:`engram.memory.capture`,
:mod:`engram.memory.admission`, :mod:`engram.memory.withdrawal`, :mod:`engram.memory.recall`)
only do their own work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = ["TOOLS", "ToolSpec"]

Outcome = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One governed tool."""

    #: The short name (``engram_memory_<name>`` over MCP).
    name: str
    title: str
    description: str
    #: A read discloses; a mutation changes the store.
    reads: bool
    #: ``always``: a human confirms every call; ``policy``: when the host lists the tool
    #: in ``require_confirmation``; ``never``.
    gated: Literal["always", "policy", "never"]
    #: Where the call's ``purpose_ref`` is: in the arguments, in the payload, or nowhere.
    purpose: Literal["arguments", "payload"] | None
    #: The argument naming what a shredding tool destroys (its shred-ledger line).
    shreds: str | None
    #: What is stored under the idempotency key, from the value the tool returns.
    remembered: Callable[[Outcome], Outcome]
    #: The value a replay returns, from what was stored.
    replayed: Callable[[Outcome], Outcome]

    @property
    def destructive(self) -> bool:
        return self.shreds is not None


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
            reads=True,
            gated="never",
            purpose="arguments",
            shreds=None,
            remembered=_same,
            replayed=_same,
        ),
        ToolSpec(
            name="get",
            title="Read a governed memory record",
            description="Read one current record by record_id, with a read receipt. Read-only.",
            reads=True,
            gated="never",
            purpose="arguments",
            shreds=None,
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
            reads=False,
            gated="policy",
            purpose="payload",
            shreds=None,
            remembered=_same,
            replayed=lambda stored: {**stored, "status": "duplicate_exact"},
        ),
        ToolSpec(
            name="request_admission",
            title="Request admission of a candidate",
            description="Ask the host's admission policy to decide on a pending candidate.",
            reads=False,
            gated="policy",
            purpose=None,
            shreds=None,
            remembered=lambda value: dict(value["outcome"]),
            replayed=lambda stored: {"outcome": stored, "replayed": True},
        ),
        ToolSpec(
            name="withdraw",
            title="Withdraw a pending candidate",
            description="Terminate your pending candidate. Needs a human confirmation.",
            reads=False,
            gated="always",
            purpose=None,
            shreds="candidate_id",
            remembered=_same,
            replayed=lambda stored: {**stored, "replayed": True},
        ),
        ToolSpec(
            name="forget",
            title="Forget an admitted record",
            description=(
                "Make an admitted record terminally ineligible. Needs a human confirmation."
            ),
            reads=False,
            gated="always",
            purpose=None,
            shreds="record_id",
            remembered=_same,
            replayed=lambda stored: {**stored, "replayed": True},
        ),
    )
}
