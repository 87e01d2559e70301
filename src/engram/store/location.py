"""Where a governed store lives: a SQLite file or a PostgreSQL database, and opening it.

``[store] path`` in a host profile (or ``--store``) names a file; ``[store] url`` (or a
``--store postgresql://…``) names a database. A URL is never taken for a path. Opening
imports the backend only then: psycopg stays off the SQLite start-up path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from engram.memory.ports import MemoryStore

__all__ = ["DatabaseUrl", "StoreLocation", "is_database_url", "open_memory_store"]

_SCHEMES: Final = ("postgresql", "postgres")


def is_database_url(text: str) -> bool:
    """Whether ``text`` names a PostgreSQL database (``postgresql://…``), not a file."""
    return urlsplit(text).scheme.lower() in _SCHEMES and text.partition(":")[2].startswith("//")


@dataclass(frozen=True)
class DatabaseUrl:
    """A ``postgresql://`` URL. Printed, it never shows its password."""

    url: str

    def __post_init__(self) -> None:
        if not is_database_url(self.url):
            raise ValueError("not a postgresql:// URL")

    def __str__(self) -> str:
        return self.shown()

    def __repr__(self) -> str:
        return f"DatabaseUrl({self.shown()!r})"

    def shown(self) -> str:
        """The URL with any password replaced by ``***``."""
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        user = parts.username or ""
        host = parts.netloc.rpartition("@")[2]
        return parts._replace(netloc=f"{user}:***@{host}").geturl()

    def where(self) -> str:
        """``host:port/database`` for messages (libpq's defaults where the URL is silent)."""
        parts = urlsplit(self.url)
        host = parts.hostname or "localhost"
        try:
            port = parts.port or 5432
        except ValueError:
            port = 5432
        database = parts.path.lstrip("/") or parts.username or "postgres"
        return f"{host}:{port}/{database}"


StoreLocation = Path | DatabaseUrl


def open_memory_store(location: StoreLocation, durability: str = "full") -> MemoryStore:
    """The governed store at ``location``, migrated to this version."""
    mode: Literal["full", "normal"] = "normal" if durability == "normal" else "full"
    if isinstance(location, DatabaseUrl):
        from engram.store.postgresql.memory_store import PostgresMemoryStore

        return PostgresMemoryStore(location, mode)
    from engram.store.sqlite.memory_store import SqliteMemoryStore

    return SqliteMemoryStore(location, mode)
