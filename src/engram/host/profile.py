"""The host profile (``host.toml``): the operator's binding, grants, policy and paths.

The agent can neither read nor write it. It is trusted only when it is a regular
file owned by the current user and not writable by group or others, parses, and
names a complete binding; otherwise loading raises ``TrustedContextUnavailable`` and
no partial binding is ever used. Reading uses the standard library's ``tomllib``
(fast enough for the server's start-up path); writing uses ``tomlkit``.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from engram.errors import TrustedContextUnavailable
from engram.memory.settings import (
    CONFIRM_VIA,
    DEFAULT_MAX_OPEN_REQUESTS,
    DEFAULT_RETENTION_MAX_DAYS,
    MAX_OPEN_REQUESTS,
    MAX_RECORD_BYTES,
    MIN_RECORD_BYTES,
    ConfirmVia,
    HostPolicy,
)
from engram.memory.tools import MEMORY_TOOLS
from engram.store.location import DatabaseUrl, StoreLocation, is_database_url

__all__ = ["PROFILE_NAME", "HostProfile", "load_profile", "render_profile"]

PROFILE_NAME: Final = "host.toml"


@dataclass(frozen=True)
class HostProfile:
    """A loaded, trusted host profile."""

    path: Path
    enabled: bool
    tenant: str
    workspace: str
    principal: str
    agent_id: str
    session: str
    purpose: str
    grants: frozenset[str]
    policy: HostPolicy
    #: A SQLite file (``[store] path``) or a PostgreSQL database (``[store] url``).
    store: StoreLocation
    keys: Path
    durability: Literal["full", "normal"] = "full"
    verifier_root: Path | None = None
    #: Whether search may use the semantic channel (where the extra is installed).
    semantic: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def store_file(self) -> Path:
        """The store's SQLite file (for what only a file store has: its WAL, its mode)."""
        if not isinstance(self.store, Path):
            raise TypeError("this profile's store is a database, not a file")
        return self.store


def _check_file(path: Path) -> None:
    try:
        info = path.stat()
    except OSError as exc:
        raise TrustedContextUnavailable("host profile cannot be read") from exc
    if not stat.S_ISREG(info.st_mode):
        raise TrustedContextUnavailable("host profile is not a regular file")
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise TrustedContextUnavailable("host profile is writable by others")


def _text(table: dict[str, Any], key: str, default: str | None = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or (default is None and not value):
        raise TrustedContextUnavailable(f"host profile lacks a valid {key}")
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        raise TrustedContextUnavailable(f"host profile {key} holds a control character")
    return value


def _flag(table: dict[str, Any], key: str, default: bool = False) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise TrustedContextUnavailable(f"host profile {key} is not true or false")
    return value


def _count(table: dict[str, Any], key: str, default: int) -> int:
    value = table.get(key, default)
    if type(value) is not int or value < 1:
        raise TrustedContextUnavailable(f"host profile {key} is not a positive integer")
    return value


def _confirm_via(confirmation: dict[str, Any]) -> ConfirmVia:
    value = confirmation.get("via", "host")
    for choice in CONFIRM_VIA:
        if value == choice:
            return choice
    raise TrustedContextUnavailable(
        f"host profile confirmation.via must be one of {', '.join(CONFIRM_VIA)}"
    )


def _record_ceiling(admission: dict[str, Any]) -> int:
    value = _count(admission, "max_record_bytes", MAX_RECORD_BYTES)
    if not MIN_RECORD_BYTES <= value <= MAX_RECORD_BYTES:
        raise TrustedContextUnavailable(
            f"host profile max_record_bytes must be {MIN_RECORD_BYTES}..{MAX_RECORD_BYTES}"
        )
    return value


def _open_requests(confirmation: dict[str, Any]) -> int:
    value = _count(confirmation, "max_open_requests", DEFAULT_MAX_OPEN_REQUESTS)
    if value > MAX_OPEN_REQUESTS:
        raise TrustedContextUnavailable(
            f"host profile max_open_requests must be 1..{MAX_OPEN_REQUESTS}"
        )
    return value


def _names(
    table: dict[str, Any], key: str, allowed: Collection[str] | None = None
) -> frozenset[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(name, str) and name for name in value):
        raise TrustedContextUnavailable(f"host profile {key} is not a list of names")
    if allowed is not None and not set(value) <= set(allowed):
        raise TrustedContextUnavailable(f"host profile {key} names an unknown tool")
    return frozenset(value)


def load_profile(path: Path) -> HostProfile:
    """Load and check a host profile; raises ``TrustedContextUnavailable``."""
    path = path.expanduser().resolve()
    _check_file(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, tomllib.TOMLDecodeError) as exc:
        raise TrustedContextUnavailable("host profile does not parse") from exc
    try:
        return _profile(path, data)
    except (TypeError, ValueError, AttributeError) as exc:
        raise TrustedContextUnavailable("host profile has an invalid value") from exc


def _profile(path: Path, data: dict[str, Any]) -> HostProfile:
    memory, binding = data.get("memory", {}), data.get("binding", {})
    grants, retention = data.get("grants", {}), data.get("retention", {})
    admission, store = data.get("admission", {}), data.get("store", {})
    search = data.get("search", {})
    tools = _names(grants, "tools", MEMORY_TOOLS)
    enabled = _flag(memory, "enabled")
    if admission.get("policy", "default") != "default":
        raise TrustedContextUnavailable("host profile names an unknown admission policy")
    durability = store.get("durability", "full")
    if durability not in ("full", "normal"):
        raise TrustedContextUnavailable("host profile has an invalid store.durability")
    principal = _text(binding, "principal")
    base = path.parent
    verifier = admission.get("verifier_root")
    if verifier is not None and not isinstance(verifier, str):
        raise TrustedContextUnavailable("host profile has an invalid admission.verifier_root")
    return HostProfile(
        path=path,
        enabled=enabled,
        tenant=_text(binding, "tenant"),
        workspace=_text(binding, "workspace"),
        principal=principal,
        agent_id=_text(binding, "agent_id", principal) or principal,
        session=_text(binding, "session", ""),
        purpose=_text(binding, "purpose"),
        grants=tools,
        # Each policy value is taken only in its own type: a coerced "false" would be
        # true, and a string of tool names a set of its letters.
        policy=HostPolicy(
            retention_max_days=_count(retention, "max_days", DEFAULT_RETENTION_MAX_DAYS),
            allow_retain=_flag(retention, "allow_retain"),
            reconciliation_families=_names(retention, "reconciliation_families"),
            confirm_tools=_names(admission, "require_confirmation", MEMORY_TOOLS),
            max_record_bytes=_record_ceiling(admission),
            confirm_via=_confirm_via(data.get("confirmation", {})),
            max_open_requests=_open_requests(data.get("confirmation", {})),
        ),
        store=_store_location(store, base),
        keys=(base / _text(store, "keys")).resolve(),
        durability=durability,
        verifier_root=(base / verifier).resolve() if verifier is not None else None,
        semantic=_flag(search, "semantic", default=True),
    )


def _store_location(store: dict[str, Any], base: Path) -> StoreLocation:
    """``[store] url`` (a ``postgresql://`` URL) or ``[store] path`` (a file), not both."""
    if "url" in store:
        if "path" in store:
            raise TrustedContextUnavailable("host profile names both store.path and store.url")
        url = _text(store, "url")
        if not is_database_url(url):
            raise TrustedContextUnavailable("host profile store.url is not a postgresql:// URL")
        return DatabaseUrl(url)
    return (base / _text(store, "path")).resolve()


def render_profile(
    *,
    tenant: str,
    workspace: str,
    principal: str,
    purpose: str,
    grants: list[str],
    store: str,
    keys: str,
    retention_max_days: int,
    allow_retain: bool = False,
    agent_id: str = "",
    session: str = "",
    semantic: bool = True,
    confirm_via: ConfirmVia = "host",
) -> str:
    """The TOML text of a new profile, commented for the operator."""
    import tomlkit

    document = tomlkit.document()
    document.add(tomlkit.comment("engram host profile: the agent never reads or writes this."))
    memory = tomlkit.table()
    memory.add(
        "enabled",
        tomlkit.item(True).comment("persisted opt-in: false removes every memory tool"),
    )
    document.add("memory", memory)
    binding = tomlkit.table()
    for key, value in (
        ("tenant", tenant),
        ("workspace", workspace),
        ("principal", principal),
        ("agent_id", agent_id or principal),
        ("session", session),
        ("purpose", purpose),
    ):
        binding.add(key, value)
    binding["session"].comment("empty: a fresh session id per server process")
    document.add("binding", binding)
    document.add("grants", {"tools": grants})
    retention = tomlkit.table()
    retention.add("max_days", retention_max_days)
    retention.add("allow_retain", allow_retain)
    retention.add("reconciliation_families", tomlkit.array())
    document.add("retention", retention)
    admission = tomlkit.table()
    admission.add("policy", "default")
    admission.add(
        "require_confirmation",
        tomlkit.array().comment('add "capture" or "request_admission" to gate them'),
    )
    admission.add(
        "max_record_bytes",
        tomlkit.item(MAX_RECORD_BYTES).comment(
            f"the largest record admitted; {MIN_RECORD_BYTES} to {MAX_RECORD_BYTES}"
        ),
    )
    document.add("admission", admission)
    confirmation = tomlkit.table()
    confirmation.add(
        "via",
        tomlkit.item(confirm_via).comment(
            "who approves withdraw, forget and gated tools: host (engram host confirm),"
            " dialog (the client's dialog, when a person sees it), or both"
        ),
    )
    confirmation.add(
        "max_open_requests",
        tomlkit.item(DEFAULT_MAX_OPEN_REQUESTS).comment(
            "requests one principal may have waiting; the next call is RATE_LIMITED"
            f" until you confirm or deny one (1 to {MAX_OPEN_REQUESTS})"
        ),
    )
    document.add("confirmation", confirmation)
    where = "url" if is_database_url(store) else "path"
    document.add("store", {where: store, "keys": keys, "durability": "full"})
    search = tomlkit.table()
    search.add(
        "semantic",
        tomlkit.item(semantic).comment(
            "rank with the semantic channel too where it is installed (engram-trust[semantic])"
        ),
    )
    document.add("search", search)
    return tomlkit.dumps(document)
