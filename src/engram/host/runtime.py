"""Opening governed memory for a host: the composition root of the engine.

``open_memory(profile)`` returns a :class:`HostMemory`, the engine bound to the
profile's binding (a fresh session id per process unless the profile fixes one).
``open_engine(...)`` gives the bare engine for hosts that bind each call themselves
with an explicit :class:`~engram.memory.binding.Binding`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.crypto.ids import random_id
from engram.crypto.keyfiles import load_keyring
from engram.host.profile import HostProfile, load_profile
from engram.memory.admission import AdmissionPolicy
from engram.memory.binding import Binding
from engram.memory.engine import MemoryEngine
from engram.memory.gate import Confirmer
from engram.memory.settings import HostPolicy
from engram.store.location import StoreLocation

__all__ = ["HostMemory", "new_session_id", "open_engine", "open_memory"]


def new_session_id() -> str:
    return random_id("ses_", 16)


def open_engine(
    store: StoreLocation,
    keys: Path,
    policy: HostPolicy | None = None,
    admission_policy: AdmissionPolicy | None = None,
    durability: str = "full",
    semantic: bool = True,
) -> MemoryEngine:
    """An engine over a store (a SQLite file or a PostgreSQL database) and its key
    directory; with the semantic channel when ``semantic`` and the ``semantic`` extra is
    installed."""
    from engram.search.embedding import load_embedder
    from engram.store.location import open_memory_store

    return MemoryEngine(
        open_memory_store(store, durability),
        load_keyring(keys),
        policy,
        admission_policy,
        embedder=load_embedder() if semantic else None,
    )


@dataclass
class HostMemory:
    """The engine and the binding a profile gives it."""

    engine: MemoryEngine
    binding: Binding
    profile: HostProfile

    def call(
        self, tool: str, arguments: Mapping[str, Any], confirm: Confirmer | None = None
    ) -> dict[str, Any]:
        """Run one tool (short name, e.g. ``"capture"``) under the profile's binding."""
        return self.engine.call(tool, arguments, self.binding, confirm)

    def close(self) -> None:
        """Close the store (the host is done with this memory)."""
        self.engine.store.close()


def binding_of(profile: HostProfile, session: str | None = None) -> Binding:
    return Binding(
        tenant=profile.tenant,
        workspace=profile.workspace,
        principal=profile.principal,
        agent_id=profile.agent_id,
        session=profile.session or session or new_session_id(),
        purpose_ref=profile.purpose,
        grants=profile.grants if profile.enabled else frozenset(),
    )


def open_memory(
    profile: Path | HostProfile, sweep: bool = True, semantic: bool = True
) -> HostMemory:
    """Open governed memory as a profile describes it (sweeping expiry, unless told not;
    with the semantic channel where it is installed, unless told not)."""
    from engram.memory.admission import DefaultAdmissionPolicy
    from engram.memory.maintenance import Maintenance

    loaded = profile if isinstance(profile, HostProfile) else load_profile(profile)
    engine = open_engine(
        loaded.store,
        loaded.keys,
        loaded.policy,
        DefaultAdmissionPolicy(loaded.verifier_root),
        durability=loaded.durability,
        semantic=semantic and loaded.semantic,
    )
    memory = HostMemory(engine, binding_of(loaded), loaded)
    if sweep:  # Expired records are swept to "expired" when memory is opened,
        Maintenance(engine, memory.binding.scope).sweep()
        engine.hash_legacy_keys()  # and keys an older engram stored in clear are hashed.
    return memory
