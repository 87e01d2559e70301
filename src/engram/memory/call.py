"""What a governed tool's body runs with: one typed value per call.

The engine's pipeline (:meth:`engram.memory.engine.MemoryEngine.call`) makes the checks
every tool shares, opens the snapshot or the transaction, and hands the tool's body
(:attr:`engram.memory.tools.ToolSpec.read` or ``.mutate``) a :class:`Read` or a
:class:`Write`: the store's view, the binding, the arguments, the clock's reading and,
for a mutation, its idempotency facts (computed once per call) and its gate. A body
never looks anything up by the tool's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from engram.errors import GateFailed
from engram.memory.binding import Binding
from engram.memory.idempotency import Idempotency
from engram.memory.ports import MemoryReader, MemoryTransaction

if TYPE_CHECKING:
    from engram.memory.admission import AdmissionPolicy
    from engram.memory.gate import Gate
    from engram.memory.recall import PageCursors
    from engram.memory.semantic import SemanticProjection
    from engram.memory.settings import HostPolicy
    from engram.memory.vault import Vault

__all__ = ["Read", "Services", "Write"]


class Services(Protocol):
    """What the engine lends every body (:class:`engram.memory.engine.MemoryEngine`)."""

    @property
    def vault(self) -> Vault: ...

    @property
    def policy(self) -> HostPolicy: ...

    @property
    def admission_policy(self) -> AdmissionPolicy: ...

    @property
    def cursors(self) -> PageCursors: ...

    @property
    def semantic(self) -> SemanticProjection | None: ...


@dataclass(frozen=True, slots=True)
class Read:
    """A read at its body: one snapshot of the store."""

    services: Services
    reader: MemoryReader
    binding: Binding
    arguments: dict[str, Any]
    now: int
    #: The question embedded before the snapshot opened (search with the semantic
    #: channel installed), else ``None``.
    question: Any = None


@dataclass(frozen=True, slots=True)
class Write:
    """A mutation at its body: inside its one transaction."""

    services: Services
    tx: MemoryTransaction
    binding: Binding
    arguments: dict[str, Any]
    now: int
    idempotency: Idempotency
    #: The confirmation gate, when the host gates this call; ``None`` otherwise.
    gate: Gate | None = None

    @classmethod
    def of(
        cls,
        services: Services,
        tx: MemoryTransaction,
        tool: str,
        binding: Binding,
        arguments: dict[str, Any],
        now: int,
    ) -> Write:
        """An ungated write outside the pipeline (fixtures and benchmarks that build
        many records in one transaction)."""
        return cls(
            services, tx, binding, arguments, now, Idempotency.of(services.vault, tool, arguments)
        )

    @property
    def intent(self) -> str:
        """What the call's idempotency key is bound to: the tool and its arguments."""
        return self.idempotency.intent

    def confirmed(self) -> Gate:
        """The gate of an always-gated tool (withdraw, forget)."""
        if self.gate is None:
            raise GateFailed("withdraw and forget are always gated")
        return self.gate
