"""``engram host init``: a profile, a store (new or joined) and its key material."""

from __future__ import annotations

import os
import re
from pathlib import Path

from engram.crypto.keyfiles import create_keyring
from engram.durable import write_atomic
from engram.errors import UsageError
from engram.host.profile import PROFILE_NAME, load_profile, render_profile
from engram.memory.binding import MEMORY_TOOLS
from engram.memory.settings import DEFAULT_RETENTION_MAX_DAYS, ConfirmVia

__all__ = ["DEFAULT_GRANTS", "init_host", "keys_for_store"]

#: Least privilege when ``--grant`` is not given: reading only.
DEFAULT_GRANTS = ("search", "get")


def keys_for_store(store: Path) -> Path:
    """Key material belongs to the store: every profile joining it shares its keys."""
    return store.with_name(store.name + ".keys")


def _relative(target: Path, base: Path) -> str:
    return os.path.relpath(target, base)


def init_host(
    directory: Path,
    *,
    tenant: str,
    workspace: str,
    principal: str,
    purpose: str,
    grants: list[str] | None = None,
    store: Path | None = None,
    retention_max_days: int = DEFAULT_RETENTION_MAX_DAYS,
    allow_retain: bool = False,
    agent_id: str = "",
    session: str = "",
    semantic: bool = True,
    confirm_via: ConfirmVia = "host",
) -> Path:
    """Create ``directory/host.toml``, the store and its keys; return the profile path."""
    from engram.store.sqlite.memory_store import SqliteMemoryStore

    for name, value in (
        ("tenant", tenant),
        ("workspace", workspace),
        ("principal", principal),
        ("purpose", purpose),
    ):
        if not value or any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
            raise UsageError(f"--{name} must be non-empty text without control characters")
    chosen = list(DEFAULT_GRANTS if grants is None else grants)
    if "all" in chosen:
        chosen = list(MEMORY_TOOLS)
    unknown = sorted(set(chosen) - set(MEMORY_TOOLS))
    if unknown:
        raise UsageError(f"unknown tool to grant: {', '.join(unknown)}")
    if retention_max_days < 1:
        raise UsageError("--retention-max-days must be a positive number of days")
    scheme = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):/", str(store or ""))
    if scheme:  # `postgresql://…` became a SQLite file under a folder named `postgresql:`
        raise UsageError(
            f"--store takes a file path; {scheme.group(1)}: URLs are not supported yet"
            " (governed memory runs on SQLite): give a path such as /srv/engram/memory.db"
        )
    directory = directory.expanduser().resolve()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new one is private
    profile = directory / PROFILE_NAME
    if profile.exists():
        raise UsageError(f"{profile} already exists")
    store_path = store.expanduser().resolve() if store else directory / "memory.db"
    store_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    create_keyring(keys_for_store(store_path))
    SqliteMemoryStore(store_path).close()
    text = render_profile(
        tenant=tenant,
        workspace=workspace,
        principal=principal,
        purpose=purpose,
        grants=[tool for tool in MEMORY_TOOLS if tool in chosen],
        store=_relative(store_path, directory),
        keys=_relative(keys_for_store(store_path), directory),
        retention_max_days=retention_max_days,
        allow_retain=allow_retain,
        agent_id=agent_id,
        session=session,
        semantic=semantic,
        confirm_via=confirm_via,
    )
    write_atomic(profile, text, mode=0o600, exclusive=True)
    load_profile(profile)  # what we wrote must be trusted as written
    return profile
