"""One governed binding as the console shows it: the operator's side of a host profile."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engram.host.runtime import HostMemory
    from engram.memory.maintenance import Maintenance
    from engram.memory.overview import Overview

__all__ = ["GovernedView", "open_governed"]


@dataclass
class GovernedView:
    """A host profile opened for the console (no sweep, no embedding model)."""

    profile: Path
    memory: HostMemory
    maintenance: Maintenance
    overview: Overview

    @property
    def title(self) -> str:
        binding = self.memory.binding
        return f"{binding.tenant} / {binding.workspace}"

    def close(self) -> None:
        self.memory.close()


def open_governed(profile: Path) -> GovernedView:
    """Open a profile's store as the operator's commands do: they do what they say, so
    opening sweeps nothing and loads no model."""
    from engram.host.runtime import open_memory
    from engram.memory.maintenance import Maintenance
    from engram.memory.overview import Overview

    memory = open_memory(profile, sweep=False, semantic=False)
    scope = memory.binding.scope
    return GovernedView(
        profile, memory, Maintenance(memory.engine, scope), Overview(memory.engine, scope)
    )
