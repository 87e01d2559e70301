"""Revoked bearer tokens, kept in the governed store itself: every server of the store
reads them, whichever machine it runs on.

``engram host revoke-token`` adds a token's id (its ``jti``, never the token);
``engram-mcp --http`` looks the id of every request's token up (one read of the primary
key: :meth:`TokenRevocations.is_revoked`). A revocation is kept as long as a token
revoked at that instant could still be valid (the caller says how long: a day and the
clock skew), then dropped by a later revocation, so the table stays as small as the
revocations of the last day.

The table (``revoked_tokens``) has a migration schema of its own, ``tokens``, applied
when the list is first opened, on SQLite and on PostgreSQL alike: tokens are the host's
affair, not governed memory's, and travel in no backup (a token lives a day at most).
This module does not judge tokens; :mod:`engram.host.tokens` does.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Final, Literal, Protocol

from engram.store.location import DatabaseUrl, StoreLocation
from engram.store.postgresql.database import pg_migration
from engram.store.rows import Connection
from engram.store.sqlite.database import migration

__all__ = ["TokenRevocations", "open_token_revocations"]

SCHEMA: Final = "tokens"
_CREATE: Final = (
    "CREATE TABLE IF NOT EXISTS revoked_tokens (jti TEXT PRIMARY KEY, revoked_ms BIGINT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS revoked_tokens_by_time ON revoked_tokens (revoked_ms)",
)


def _create(connection: Connection) -> None:
    for statement in _CREATE:
        connection.execute(statement)


# The same statements on both backends (BIGINT is SQLite's INTEGER affinity).
migration(SCHEMA, 1)(_create)
pg_migration(SCHEMA, 1)(_create)


class _Database(Protocol):
    """What the list needs of a backend's database (both ``Database`` classes)."""

    def snapshot(self) -> AbstractContextManager[Connection]: ...

    def transaction(self, durable: bool = True) -> AbstractContextManager[Connection]: ...

    def migrate(self, schema: str) -> None: ...

    def close(self) -> None: ...


class TokenRevocations:
    """The store's revoked token ids. Thread-safe as its database is."""

    def __init__(self, database: _Database) -> None:
        self._database = database
        database.migrate(SCHEMA)

    def is_revoked(self, jti: str) -> bool:
        """Whether the token with this id was revoked (one primary-key read)."""
        with self._database.snapshot() as connection:
            row = connection.execute(
                "SELECT 1 FROM revoked_tokens WHERE jti = ?", (jti,)
            ).fetchone()
        return row is not None

    def revoke(self, jti: str, now_ms: int, keep_ms: int) -> None:
        """Revoke ``jti`` from now on; drop the revocations older than ``keep_ms``."""
        with self._database.transaction() as connection:
            connection.execute(
                "INSERT INTO revoked_tokens (jti, revoked_ms) VALUES (?, ?)"
                " ON CONFLICT (jti) DO NOTHING",
                (jti, now_ms),
            )
            connection.execute(
                "DELETE FROM revoked_tokens WHERE revoked_ms < ?", (now_ms - keep_ms,)
            )

    def revoked_ids(self) -> list[str]:
        """Every id kept, in order (for the operator and tests)."""
        with self._database.snapshot() as connection:
            rows = connection.execute("SELECT jti FROM revoked_tokens ORDER BY jti").fetchall()
        return [str(row[0]) for row in rows]

    def close(self) -> None:
        self._database.close()


def open_token_revocations(location: StoreLocation, durability: str = "full") -> TokenRevocations:
    """The revocation list of the store at ``location`` (migrated when first opened)."""
    mode: Literal["full", "normal"] = "normal" if durability == "normal" else "full"
    if isinstance(location, DatabaseUrl):
        from engram.store.postgresql.database import PostgresDatabase

        return TokenRevocations(PostgresDatabase(location, mode))
    from engram.store.sqlite.database import Database

    return TokenRevocations(Database(location, mode, private=True))
