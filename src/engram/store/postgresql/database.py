"""Opening a PostgreSQL store: the URL, a connection pool, migrations, transactions.

A store is the current schema of one database (the first of the URL's
``search_path``, ``public`` by default), so several stores can share a database, each
in its own schema. Connections come from a small psycopg pool and run in autocommit
mode; each read is a ``REPEATABLE READ READ ONLY`` transaction (one snapshot), each
write a ``READ COMMITTED`` transaction that first takes the store's transaction-level
advisory lock: writers of every process and machine take turns, as ``BEGIN IMMEDIATE``
makes them on SQLite, so a scope's journal, its idempotency keys and its admissions
see exactly what the previous writer committed. ``durable=False`` commits with
``synchronous_commit = off`` (audit entries of reads); durability ``normal`` does so
for every write.

Failures keep the store's contract: nothing reachable, a refused login or a
missing database is ``STORE_UNAVAILABLE`` with a message naming what to fix (never
the password); a failure before ``COMMIT`` rolls back (``STORE_UNAVAILABLE``,
nothing happened); a failure of the ``COMMIT`` itself, a dropped connection
included, is ``MUTATION_OUTCOME_UNKNOWN``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from engram.errors import MutationOutcomeUnknown, StoreUnavailable
from engram.extras import require
from engram.store.location import DatabaseUrl
from engram.store.migrations import Migrations

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = ["PostgresDatabase", "Session", "pg_migration"]

Durability = Literal["full", "normal"]
#: How long a writer waits for the store's lock, and a connection for the server.
LOCK_TIMEOUT_MS: Final = 15_000
CONNECT_TIMEOUT_S: Final = 5
#: Connections per process: reads run side by side, writes take turns anyway.
POOL_SIZE: Final = 4


#: This backend's migrations; ``@pg_migration(schema, version)`` registers one.
MIGRATIONS: Migrations[Session] = Migrations()
pg_migration = MIGRATIONS.register


class Session:
    """One connection inside one transaction, taking ``?`` placeholders like sqlite3."""

    def __init__(self, connection: psycopg.Connection[Any], run: Run) -> None:
        self.connection, self._run = connection, run

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        return self._run(self.connection, sql, parameters)


class Run(Protocol):
    def __call__(
        self, connection: psycopg.Connection[Any], sql: str, parameters: Sequence[Any] = (), /
    ) -> psycopg.Cursor[Any]: ...


_TRANSLATED: dict[str, str] = {}  # each statement's psycopg form, for the process


def _execute(
    connection: psycopg.Connection[Any], sql: str, parameters: Sequence[Any] = ()
) -> psycopg.Cursor[Any]:
    """Run one statement written with ``?`` placeholders."""
    statement = _TRANSLATED.get(sql)
    if statement is None:
        statement = _TRANSLATED[sql] = sql.replace("%", "%%").replace("?", "%s")
    return connection.execute(statement, parameters)


def _failure(url: DatabaseUrl, error: Exception) -> StoreUnavailable:
    """What to fix, from a connection error (its text names host, user, database,
    never a password)."""
    text = str(error).lower()
    where = url.where()
    if "does not exist" in text and "database" in text:
        hint = f"database {where} does not exist: create it (createdb) or fix the store URL"
    elif "password" in text or "authentication" in text or "role" in text:
        hint = (
            f"PostgreSQL at {where} refused the login: check the user in the store URL and its"
            " password (PGPASSWORD or ~/.pgpass)"
        )
    elif "timeout" in text or "refused" in text or "could not" in text or "no route" in text:
        hint = (
            f"cannot reach PostgreSQL at {where}: start the server, or fix the host and port"
            " in the store URL"
        )
    else:
        hint = f"cannot open the store at {where}: check the store URL and the server's log"
    return StoreUnavailable(hint)


class PostgresDatabase:
    """One PostgreSQL schema, with a pool of connections shared by a process's threads."""

    def __init__(self, url: DatabaseUrl, durability: Durability = "full") -> None:
        require("postgres", f"the PostgreSQL store at {url.where()}")
        import psycopg
        from psycopg_pool import ConnectionPool

        self.url = url
        self._psycopg = psycopg
        self._synchronous = "on" if durability == "full" else "off"
        try:  # one direct attempt first: its error says what is wrong
            with psycopg.connect(url.url, connect_timeout=CONNECT_TIMEOUT_S) as probe:
                row = probe.execute(
                    "SELECT current_schema(), hashtextextended('engram/' || current_schema(), 0)"
                ).fetchone()
        except psycopg.Error as exc:
            raise _failure(url, exc) from None
        if row is None or row[0] is None:
            raise StoreUnavailable(
                f"the database {url.where()} has no schema to create the store in:"
                " create one and name it in the URL (options=-csearch_path%3DNAME)"
            )
        self.schema: str = row[0]
        self._lock_key: int = row[1]
        self._pool: ConnectionPool[Any] = ConnectionPool(
            url.url,
            min_size=1,
            max_size=POOL_SIZE,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
            configure=self._configure,
            name="engram",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S * 2)
        except psycopg.Error as exc:  # PoolTimeout among them
            raise StoreUnavailable(f"cannot open the store at {url.where()}") from exc
        self._local = threading.local()
        self._in_error = psycopg.pq.TransactionStatus.INERROR
        #: Every statement of the store goes through here (tests inject failures).
        self._execute: Run = _execute

    def _configure(self, connection: psycopg.Connection[Any]) -> None:
        connection.execute(f"SET lock_timeout = {LOCK_TIMEOUT_MS}")
        connection.execute(f"SET synchronous_commit = {self._synchronous}")

    def migrate(self, schema: str) -> None:
        """Apply the registered migrations of ``schema`` not yet recorded (one process
        at a time: under the store's lock)."""
        with self.transaction() as session:
            MIGRATIONS.apply(session, schema)

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        if getattr(self._local, "busy", False):
            raise StoreUnavailable("the store is in a transaction on this thread")
        try:
            context = self._pool.connection(timeout=LOCK_TIMEOUT_MS / 1000)
            connection = context.__enter__()
        except self._psycopg.Error as exc:  # PoolTimeout, PoolClosed among them
            raise StoreUnavailable(f"cannot reach the store at {self.url.where()}") from exc
        self._local.busy = True
        try:
            yield connection
        except BaseException as exc:
            # The pool is told of the failure, so it rolls back (a dropped connection is
            # discarded) and never sends COMMIT on the way out: on a connection lost in
            # the middle of a pipeline, that COMMIT raised past the store's own errors.
            self._local.busy = False
            context.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._local.busy = False
        context.__exit__(None, None, None)

    @contextmanager
    def snapshot(self) -> Iterator[Session]:
        """A read-only transaction over one consistent snapshot of what is committed
        (its ``BEGIN`` and ``ROLLBACK`` travel with the statements, in pipeline mode)."""
        errors = self._psycopg.Error
        with self._connection() as connection:
            run = self._execute
            try:
                with connection.pipeline():
                    run(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    try:
                        yield Session(connection, run)
                    finally:
                        run(connection, "ROLLBACK")
            except errors as exc:
                _quietly(connection, "ROLLBACK")
                raise StoreUnavailable("store read failed") from exc

    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[Session]:
        """One writer at a time across every process of the store (see the module).

        Statements run in psycopg's pipeline mode: a write whose result nobody reads
        costs no round trip; the pipeline is synchronized wherever a result is read,
        before ``COMMIT`` (a failure up to there: nothing happened) and after it.
        """
        errors = self._psycopg.Error
        with self._connection() as connection:
            run = self._execute
            try:
                with connection.pipeline() as pipeline:
                    try:
                        run(connection, "BEGIN")
                        run(connection, "SELECT pg_advisory_xact_lock(?)", (self._lock_key,))
                        if not durable:
                            run(connection, "SET LOCAL synchronous_commit = off")
                        pipeline.sync()
                    except errors as exc:
                        raise _Failed(StoreUnavailable("store busy")) from exc
                    try:
                        yield Session(connection, run)
                        pipeline.sync()
                    except errors as exc:
                        raise _Failed(StoreUnavailable("store write failed")) from exc
                    if connection.info.transaction_status == self._in_error:
                        # A statement failed and the body went on: COMMIT would roll
                        # back silently.
                        raise _Failed(StoreUnavailable("store write failed"))
                    try:
                        run(connection, "COMMIT")
                        pipeline.sync()
                    except errors as exc:
                        raise _Failed(
                            MutationOutcomeUnknown("commit failed"), committing=True
                        ) from exc
            except _Failed as failed:
                _quietly(connection, "ROLLBACK")
                raise failed.error from failed.__cause__
            except errors as exc:  # leaving the pipeline failed: after the COMMIT was sent
                _quietly(connection, "ROLLBACK")
                raise MutationOutcomeUnknown("commit failed") from exc
            except BaseException:
                _quietly(connection, "ROLLBACK")
                raise

    def maintain(self, statements: Sequence[str]) -> bool:
        """Run maintenance statements outside any transaction (``VACUUM``, ``CHECKPOINT``);
        ``True`` when every one ran."""
        errors = self._psycopg.Error
        with self._connection() as connection:
            for statement in statements:
                try:
                    self._execute(connection, statement)
                except errors:
                    return False
        return True

    def close(self) -> None:
        self._pool.close()


class _Failed(Exception):
    """A transaction's failure, carried out of the pipeline block."""

    def __init__(self, error: Exception, committing: bool = False) -> None:
        super().__init__()
        self.error, self.committing = error, committing


def _quietly(connection: psycopg.Connection[Any], statement: str) -> None:
    import psycopg

    try:
        connection.execute(statement)
    except psycopg.Error:  # the connection is broken: the pool discards it
        return
