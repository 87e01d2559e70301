"""Opening a SQLite store: pragmas, migrations, and the write transaction.

Every connection runs in WAL mode with ``secure_delete`` (deleted content is
overwritten, not left in free pages), a busy timeout, so several server processes can
share one file, and a page cache of up to 32 MiB. Durability is ``synchronous=FULL``
by default: an acknowledged mutation survives power loss. ``NORMAL`` keeps it safe
across process crashes only, and is an explicit host choice. Migrations are
registered by decorator and recorded in the ``migrations`` table.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Literal

from engram.errors import MutationOutcomeUnknown, StoreUnavailable

__all__ = ["Database", "Durability", "migration"]

Durability = Literal["full", "normal"]
Migration = Callable[[sqlite3.Connection], None]
_MIGRATIONS: dict[str, list[tuple[int, Migration]]] = {}
BUSY_TIMEOUT_MS: Final = 15_000
CHECKPOINT_WAIT_MS: Final = 250
CACHE_KIB: Final = 32 * 1024


def migration(schema: str, version: int) -> Callable[[Migration], Migration]:
    """Register ``function`` as migration ``version`` of the named schema."""

    def register(function: Migration) -> Migration:
        registered = _MIGRATIONS.setdefault(schema, [])
        if any(known == version for known, _ in registered):
            raise ValueError(f"migration {schema} {version} is registered twice")
        registered.append((version, function))
        return function

    return register


class Database:
    """One SQLite file, opened once per process and shared by its threads."""

    def __init__(self, path: Path, durability: Durability = "full") -> None:
        self.path = path
        self._synchronous = "FULL" if durability == "full" else "NORMAL"
        try:
            self._connection = sqlite3.connect(
                path,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            self._configure(durability)
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open store {path.name}") from exc
        self._lock = threading.RLock()

    def _configure(self, durability: Durability) -> None:
        run = self._connection.execute
        run(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        run("PRAGMA journal_mode = WAL")
        run(f"PRAGMA synchronous = {'FULL' if durability == 'full' else 'NORMAL'}")
        run("PRAGMA secure_delete = ON")
        run("PRAGMA foreign_keys = ON")
        # Up to 32 MiB of pages per connection, taken only as a large store needs them:
        # a search over 100,000 records otherwise rereads its index pages from the OS.
        run(f"PRAGMA cache_size = -{CACHE_KIB}")

    def migrate(self, schema: str) -> None:
        """Apply the registered migrations of ``schema`` not yet recorded."""
        with self.transaction() as connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS migrations "
                "(schema TEXT, version INTEGER, applied_ms INTEGER, PRIMARY KEY (schema, version))"
            )
            done = {
                row[0]
                for row in connection.execute(
                    "SELECT version FROM migrations WHERE schema = ?", (schema,)
                )
            }
            for version, function in sorted(_MIGRATIONS.get(schema, [])):
                if version not in done:
                    function(connection)
                    connection.execute(
                        "INSERT INTO migrations VALUES (?, ?, ?)",
                        (schema, version, int(time.time() * 1000)),
                    )

    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``: one writer at a time across processes.

        A failure before commit rolls back and is ``STORE_UNAVAILABLE`` (retriable,
        nothing happened); a failure of the commit itself is
        ``MUTATION_OUTCOME_UNKNOWN`` (it may have committed). ``durable=False``
        commits without waiting for the disk (for audit entries of reads: they
        survive a process crash, not a power loss).
        """
        with self._lock:
            connection = self._connection
            if not durable:
                connection.execute("PRAGMA synchronous = NORMAL")
            try:
                yield from self._immediate(connection)
            finally:
                if not durable:
                    connection.execute(f"PRAGMA synchronous = {self._synchronous}")

    def _immediate(self, connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreUnavailable("store busy") from exc
        try:
            yield connection
        except sqlite3.Error as exc:
            _rollback_quietly(connection)
            raise StoreUnavailable("store write failed") from exc
        except BaseException:
            _rollback_quietly(connection)
            raise
        try:
            connection.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback_quietly(connection)
            raise MutationOutcomeUnknown("commit failed") from exc

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: one consistent snapshot of the file."""
        with self._lock:
            connection = self._connection
            try:
                connection.execute("BEGIN")
            except sqlite3.Error as exc:
                raise StoreUnavailable("store unavailable") from exc
            try:
                yield connection
            except sqlite3.Error as exc:
                raise StoreUnavailable("store read failed") from exc
            finally:
                _rollback_quietly(connection)

    def checkpoint(self) -> bool:
        """Fold the WAL into the file and truncate it; ``True`` when complete.

        Waits at most :data:`CHECKPOINT_WAIT_MS` for readers of old snapshots: the
        caller reports "pending" and retries later rather than stalling a request.
        """
        with self._lock:
            run = self._connection.execute
            run(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
            try:
                busy, _, _ = run("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                run(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            return int(busy) == 0

    def close(self) -> None:
        with self._lock:
            self._connection.close()


def _rollback_quietly(connection: sqlite3.Connection) -> None:
    try:
        connection.execute("ROLLBACK")
    except sqlite3.Error:
        return
