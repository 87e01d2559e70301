"""Opening a SQLite store: pragmas, migrations, and the write transaction.

Every connection runs in WAL mode with ``secure_delete`` (deleted content is
overwritten, not left in free pages), temporary files in memory, a busy timeout, so
several server processes can share one file, and a page cache of up to 32 MiB.
Durability is ``synchronous=FULL`` by default: an acknowledged mutation survives power
loss. ``NORMAL`` keeps it safe across process crashes only, and is an explicit host
choice. Migrations are registered by decorator and recorded in the ``migrations``
table.

A process keeps one connection per store, so its page cache stays warm (SQLite empties
a connection's cache whenever another connection wrote). Its writers share
transactions and commits (group commit); its reads wait for an open group and never
see it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Literal

from engram.errors import MutationOutcomeUnknown, StoreUnavailable
from engram.store.migrations import Migrations

__all__ = ["Database", "Durability", "migration"]

Durability = Literal["full", "normal"]
BUSY_TIMEOUT_MS: Final = 15_000
CHECKPOINT_WAIT_MS: Final = 250
CACHE_KIB: Final = 32 * 1024
#: The most writers one group commit serves, so that readers wait a bounded time.
MAX_GROUP: Final = 64
#: How often a writer waiting on its group's commit checks that a writer is left.
HANDOFF_CHECK_S: Final = 0.05


#: This backend's migrations; ``@migration(schema, version)`` registers one.
MIGRATIONS: Migrations[sqlite3.Connection] = Migrations()
migration = MIGRATIONS.register


def _create_private(path: Path) -> None:
    """Create a new store file readable by its owner only, whatever the umask.

    SQLite gives the ``-wal`` and ``-shm`` files it makes beside a database the
    database file's own mode, so they are private too. An existing file keeps its mode
    (``engram doctor`` warns when it is looser).
    """
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(descriptor)


class Database:
    """One SQLite file, opened once per process and shared by its threads."""

    def __init__(self, path: Path, durability: Durability = "full", private: bool = False) -> None:
        self.path = path
        self._synchronous = "FULL" if durability == "full" else "NORMAL"
        try:
            if private:
                _create_private(path)
            self._connection = sqlite3.connect(
                path,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            self._configure(durability)
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailable(f"cannot open store {path.name}") from exc
        self._lock = threading.RLock()  # the connection
        self._reading = _Reading()  # whether this thread is in a snapshot
        self._group: _Group | None = None  # the open group transaction, under _lock
        self._counting = threading.Lock()
        self._arrivals = 0  # writers waiting for _lock, under _counting
        self._quiescing = 0  # readers and maintenance waiting for no group, under _counting

    def _configure(self, durability: Durability) -> None:
        run = self._connection.execute
        run(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        run("PRAGMA journal_mode = WAL")
        run(f"PRAGMA synchronous = {'FULL' if durability == 'full' else 'NORMAL'}")
        run("PRAGMA secure_delete = ON")
        run("PRAGMA foreign_keys = ON")
        # Statement journals (every write's savepoint) and sort trees stay in memory:
        # on disk each write opened, unlinked and closed a temporary file holding the
        # pages it changed (12% of a capture+admission pair's time).
        run("PRAGMA temp_store = MEMORY")
        # Up to 32 MiB of pages per connection, taken only as a large store needs them:
        # a search over 100,000 records otherwise rereads its index pages from the OS.
        run(f"PRAGMA cache_size = -{CACHE_KIB}")

    def migrate(self, schema: str) -> None:
        """Apply the registered migrations of ``schema`` not yet recorded."""
        with self.transaction() as connection:
            MIGRATIONS.apply(connection, schema)

    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``: one writer at a time across processes.

        A failure before commit rolls back and is ``STORE_UNAVAILABLE`` (retriable,
        nothing happened); a failure of the commit itself is
        ``MUTATION_OUTCOME_UNKNOWN`` (it may have committed). ``durable=False``
        commits without waiting for the disk (for audit entries of reads: they
        survive a process crash, not a power loss).

        Writers of this process that arrive while a durable one is writing share its
        transaction and its commit (group commit, see :class:`_Group`): each returns
        only once the shared commit is on disk, so one fsync serves them all.
        """
        if self._reading.active:
            raise StoreUnavailable("the store is in a read snapshot")
        with self._arriving():
            self._lock.acquire()
        group = self._group
        if group is not None and group.writer == threading.get_ident():
            self._lock.release()
            raise StoreUnavailable("the store is in a write transaction")
        yield from self._member(durable)

    def _member(self, durable: bool) -> Iterator[sqlite3.Connection]:
        """One writer's part of a group; entered holding ``_lock``, gives it up."""
        connection, group = self._connection, self._group
        if group is None:
            group = self._begin(connection, durable)
        group.members += 1
        group.writer = threading.get_ident()
        try:
            connection.execute("SAVEPOINT member")
            yield connection
            if not connection.in_transaction:
                # The body ended the transaction (or SQLite rolled it back and the body
                # went on): what it or the group wrote may have committed.
                group.ended_early = True
                raise MutationOutcomeUnknown("the transaction ended early")
            connection.execute("RELEASE member")
        except sqlite3.Error as exc:
            _undo_member(connection)
            self._settle(connection, group)
            raise StoreUnavailable("store write failed") from exc
        except BaseException:
            _undo_member(connection)
            self._settle(connection, group)
            raise
        group.kept += 1
        if self._settle(connection, group):
            self._await(group)
        if group.failure is not None:
            raise group.failure()

    def _begin(self, connection: sqlite3.Connection, durable: bool) -> _Group:
        """Open a group transaction (``_lock`` held; released if it cannot start)."""
        try:
            if not durable:
                connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            if not durable:
                _quietly(connection, f"PRAGMA synchronous = {self._synchronous}")
            self._lock.release()
            raise StoreUnavailable("store busy") from exc
        group = self._group = _Group(durable)
        return group

    def _settle(self, connection: sqlite3.Connection, group: _Group) -> bool:
        """Hand the open transaction on to a waiting writer (``True``) or finish it."""
        group.writer = None
        if (
            group.kept
            and group.durable  # a NORMAL commit must not carry a durable writer's work
            and connection.in_transaction
            and self._arrivals
            and not self._quiescing
            and group.members < MAX_GROUP
        ):
            self._lock.release()  # the next writer goes on in this transaction
            return True
        self._finish(connection, group)
        return False

    def _finish(self, connection: sqlite3.Connection, group: _Group) -> None:
        """Commit the group (or roll back a group with nothing kept); release ``_lock``."""
        try:
            if not group.kept:
                _quietly(connection, "ROLLBACK")
            elif group.ended_early:
                group.failure = lambda: MutationOutcomeUnknown("the transaction ended early")
            elif not connection.in_transaction:
                # SQLite rolled the transaction back on an error: nothing was committed.
                group.failure = lambda: StoreUnavailable("store write failed")
            else:
                try:
                    connection.execute("COMMIT")
                except sqlite3.Error:
                    _quietly(connection, "ROLLBACK")
                    group.failure = lambda: MutationOutcomeUnknown("commit failed")
        finally:
            if not group.durable:
                _quietly(connection, f"PRAGMA synchronous = {self._synchronous}")
            self._group = None
            group.done.set()
            self._lock.release()

    def _await(self, group: _Group) -> None:
        """Wait for the group's commit; finish it if no writer is left to."""
        while not group.done.wait(HANDOFF_CHECK_S):
            # The writer counted as arriving never came (it was interrupted): with the
            # lock free and the group still open, its last member commits it.
            if self._lock.acquire(blocking=False):
                if self._group is group:
                    self._finish(self._connection, group)
                else:
                    self._lock.release()

    @contextmanager
    def _arriving(self) -> Iterator[None]:
        with self._counting:
            self._arrivals += 1
        try:
            yield
        finally:
            with self._counting:
                self._arrivals -= 1

    @contextmanager
    def _idle(self) -> Iterator[None]:
        """Hold ``_lock`` while no group transaction is open (reads, checkpoint, close).

        While it waits, groups are not handed on, so an open one ends at its current
        writer.
        """
        if self._reading.active:
            raise StoreUnavailable("the store is in a read snapshot")
        with self._counting:
            self._quiescing += 1
        try:
            while True:
                self._lock.acquire()
                group = self._group
                if group is None:
                    break
                self._lock.release()
                if group.writer == threading.get_ident():
                    # Inside its own write transaction: waiting for it would never end.
                    raise StoreUnavailable("the store is in a write transaction")
                group.done.wait()
        finally:
            with self._counting:
                self._quiescing -= 1
        try:
            yield
        finally:
            self._lock.release()

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: one consistent snapshot of what is committed.

        It waits for an open group, which is not handed on meanwhile, so a read waits at
        most for the writer in the group now and for the lock. The connection's page
        cache stays warm across reads (a second connection would find it emptied after
        every write, and every read tool call writes its audit entry). A write, a
        snapshot or a checkpoint inside a snapshot is refused.
        """
        with self._idle():
            connection = self._connection
            try:
                connection.execute("PRAGMA query_only = ON")
            except sqlite3.Error as exc:
                raise StoreUnavailable("store unavailable") from exc
            self._reading.active = True
            try:
                yield from _read(connection)
            finally:
                self._reading.active = False
                _quietly(connection, "PRAGMA query_only = OFF")

    def checkpoint(self) -> bool:
        """Fold the WAL into the file and truncate it; ``True`` when complete.

        Waits at most :data:`CHECKPOINT_WAIT_MS` for readers of old snapshots: the
        caller reports "pending" and retries later rather than stalling a request.
        """
        with self._idle():
            run = self._connection.execute
            run(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
            try:
                busy, _, _ = run("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                run(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            return int(busy) == 0

    def close(self) -> None:
        with self._idle():
            self._connection.close()


class _Reading(threading.local):
    active = False


class _Group:
    """Durable writers sharing one transaction and its commit (group commit).

    A writer that finishes while another durable writer of the process is waiting
    for the store leaves the transaction open for it instead of committing; the last
    one commits for all (at most :data:`MAX_GROUP` writers). Each writer's work is a
    savepoint: a writer that fails undoes its own work only. Every writer of the group
    returns only after the commit, and each learns its outcome: nothing committed
    (``STORE_UNAVAILABLE``), or the commit failed (``MUTATION_OUTCOME_UNKNOWN``).
    Readers never enter an open group: they wait for its commit.
    """

    __slots__ = ("done", "durable", "ended_early", "failure", "kept", "members", "writer")

    def __init__(self, durable: bool) -> None:
        self.durable = durable  # False: a lone NORMAL commit, never handed on
        self.ended_early = False  # a writer's body ended the transaction itself
        self.writer: int | None = None  # the thread writing in it now
        self.members = 0
        self.kept = 0
        self.done = threading.Event()
        self.failure: Callable[[], Exception] | None = None


def _read(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    try:
        connection.execute("BEGIN")
    except sqlite3.Error as exc:
        raise StoreUnavailable("store unavailable") from exc
    try:
        yield connection
    except sqlite3.Error as exc:
        raise StoreUnavailable("store read failed") from exc
    finally:
        _quietly(connection, "ROLLBACK")


def _quietly(connection: sqlite3.Connection, statement: str) -> None:
    try:
        connection.execute(statement)
    except sqlite3.Error:
        return  # the connection is unusable; its next use fails cleanly


def _undo_member(connection: sqlite3.Connection) -> None:
    try:
        connection.execute("ROLLBACK TO member")
        connection.execute("RELEASE member")
    except sqlite3.Error:
        return  # no savepoint (it failed to start) or no transaction left
