"""The host-bound invocation context: who calls, in which scope, for what purpose.

An agent never supplies any of this; the host binds it per call (memory-contract §0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engram.canonical import digest

__all__ = ["Binding", "Scope", "tool_name"]


def tool_name(short: str) -> str:
    """``search`` -> ``engram_memory_search``."""
    return f"engram_memory_{short}"


@dataclass(frozen=True, slots=True)
class Scope:
    """One exact tenant and workspace."""

    tenant: str
    workspace: str
    #: A stable, opaque id for storage (tenant and workspace never leak through it),
    #: derived from the canonical JSON of ``[tenant, workspace]``: an unambiguous
    #: encoding, so no two different pairs can ever share a scope.
    scope_id: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope_id", digest("scope", [self.tenant, self.workspace])[7:39])


@dataclass(frozen=True, slots=True)
class Binding:
    """Everything the host binds to a call. Grants are short tool names."""

    tenant: str
    workspace: str
    principal: str
    agent_id: str
    session: str
    purpose_ref: str
    grants: frozenset[str] = field(default_factory=frozenset)
    scope: Scope = field(init=False, repr=False, compare=False)
    #: The digest of :meth:`identity` that journals and receipts name the actor by,
    #: computed once per binding.
    actor: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", Scope(self.tenant, self.workspace))
        object.__setattr__(self, "actor", digest("actor", self.identity()))

    def identity(self) -> dict[str, str]:
        """The actor identity recorded in journals and audit entries."""
        return {
            "tenant": self.tenant,
            "workspace": self.workspace,
            "principal": self.principal,
            "agent_id": self.agent_id,
            "session": self.session,
        }
