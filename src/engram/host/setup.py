"""``engram host init``: a profile, a store (new or joined) and its key material."""

from __future__ import annotations

import os
import re
from pathlib import Path

from engram.crypto.keyfiles import create_keyring
from engram.durable import write_atomic
from engram.errors import UsageError
from engram.host.profile import PROFILE_NAME, load_profile, render_profile
from engram.memory.settings import DEFAULT_RETENTION_MAX_DAYS, ConfirmVia
from engram.memory.tools import MEMORY_TOOLS
from engram.store.location import DatabaseUrl, StoreLocation, is_database_url

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
    store: Path | str | None = None,
    keys: Path | None = None,
    retention_max_days: int = DEFAULT_RETENTION_MAX_DAYS,
    allow_retain: bool = False,
    agent_id: str = "",
    session: str = "",
    semantic: bool = True,
    confirm_via: ConfirmVia = "host",
) -> Path:
    """Create ``directory/host.toml``, the store and its keys; return the profile path.

    ``store`` is a file (default ``directory/memory.db``, its keys beside it) or a
    ``postgresql://`` URL (its keys in ``directory/memory.keys``, or ``keys``: the key
    directory of the first host of that database, which every host joining it shares).
    """
    from engram.store.location import open_memory_store

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
    url = DatabaseUrl(str(store)) if store is not None and is_database_url(str(store)) else None
    if url is None and re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):/", str(store or "")):
        raise UsageError(
            "--store takes a file path or a postgresql:// URL: give a path such as"
            " /srv/engram/memory.db, or postgresql://USER@HOST:5432/DATABASE"
        )
    directory = directory.expanduser().resolve()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new one is private
    profile = directory / PROFILE_NAME
    if profile.exists():
        raise UsageError(f"{profile} already exists")
    location: StoreLocation
    if url is not None:
        location = url
        key_dir = keys.expanduser().resolve() if keys else directory / "memory.keys"
    else:
        location = Path(store).expanduser().resolve() if store else directory / "memory.db"
        location.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        key_dir = keys.expanduser().resolve() if keys else keys_for_store(location)
    joining = key_dir.is_dir() and any(key_dir.iterdir())
    opened = open_memory_store(location)  # STORE_UNAVAILABLE names what to fix
    try:
        with opened.read() as reader:
            empty = reader.is_empty()
    finally:
        opened.close()
    if url is not None and not empty and not joining:
        raise UsageError(
            f"the database {url.where()} already holds a governed store: join it with"
            " --keys DIR, the key directory of a host that uses it (its keys open its records)"
        )
    create_keyring(key_dir)
    text = render_profile(
        tenant=tenant,
        workspace=workspace,
        principal=principal,
        purpose=purpose,
        grants=[tool for tool in MEMORY_TOOLS if tool in chosen],
        store=location.url if isinstance(location, DatabaseUrl) else _relative(location, directory),
        keys=_relative(key_dir, directory),
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
