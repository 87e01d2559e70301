"""A PostgreSQL server for tests and benchmarks: one throwaway database per run, one
schema per store.

``ENGRAM_TEST_POSTGRES`` names the server's admin URL (default
``postgresql://postgres@127.0.0.1:5432/test``, trust authentication). A run creates
database ``engram_run_<random>`` and drops it when done; each store lives in its own
schema of it, named in its URL by ``options=-csearch_path=…``, so stores never see each
other. Migrating a new schema takes about 150 ms of DDL, so a store a test is done with
is emptied (every row deleted, triggers off for the cleanup) and handed to the next
test as new: about 10 ms.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final
from urllib.parse import quote, urlsplit, urlunsplit

from engram.store.location import DatabaseUrl

__all__ = ["ADMIN_URL", "PostgresRun", "unreachable"]

ADMIN_URL: Final = os.environ.get(
    "ENGRAM_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
START_HINT: Final = "start it with: pg_ctlcluster --skip-systemctl-redirect 15 main start"


def unreachable(url: str = ADMIN_URL) -> str | None:
    """Why the server at ``url`` cannot be used (``None`` when it can)."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (the postgres extra)"
    try:
        with psycopg.connect(url, connect_timeout=3) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as exc:
        where = DatabaseUrl(url).where()
        return f"no PostgreSQL at {where} ({type(exc).__name__}); {START_HINT}"
    return None


def _with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + database))


def _schema(url: DatabaseUrl) -> str:
    return url.url.rpartition("search_path%3D")[2]


class PostgresRun:
    """A database of its own for one test run, and schemas in it for stores."""

    def __init__(self, admin_url: str = ADMIN_URL, name: str | None = None) -> None:
        """A new database ``engram_run_<random>``; or, given ``name``, that database,
        created if missing and kept (benchmark stores reused across runs)."""
        import psycopg

        self._psycopg = psycopg
        self.admin_url = admin_url
        self.name = name or "engram_run_" + secrets.token_hex(6)
        with self._admin() as admin:
            exists = admin.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (self.name,)
            ).fetchone()
            if not exists:
                admin.execute(f'CREATE DATABASE "{self.name}"')
        self.url = _with_database(admin_url, self.name)
        self._free: list[DatabaseUrl] = []
        self._emptier: Any = None  # the connection that empties given-back stores

    @contextmanager
    def _admin(self) -> Iterator[Any]:
        with self._psycopg.connect(self.admin_url, autocommit=True) as connection:
            yield connection

    def connect(self) -> Any:
        """A connection to the run's database (autocommit)."""
        return self._psycopg.connect(self.url, autocommit=True)

    def new_store(self, prefix: str = "store", schema: str | None = None) -> DatabaseUrl:
        """The URL of a new, empty schema of the run's database (``schema``, made anew
        if it exists)."""
        schema = schema or f"{prefix}_{secrets.token_hex(6)}"
        with self.connect() as connection:
            connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            connection.execute(f'CREATE SCHEMA "{schema}"')
        return self.store_url(schema)

    def empty_store(self) -> DatabaseUrl:
        """The URL of an empty store, migrated (one a test gave back, or a new one)."""
        if self._free:
            return self._free.pop()
        from engram.store.postgresql.memory_store import PostgresMemoryStore

        url = self.new_store()
        PostgresMemoryStore(url).close()
        return url

    def give_back(self, url: DatabaseUrl) -> None:
        """Empty a store from :meth:`empty_store` for the next test (or drop it, when
        something still holds it)."""
        schema = _schema(url)
        try:
            if self._emptier is None:  # one connection for the run: a connect costs 3 ms
                self._emptier = self.connect()
                self._emptier.execute("SET lock_timeout = 2000")
                self._emptier.execute("SET synchronous_commit = off")
                self._emptier.execute("SET session_replication_role = replica")  # audit's triggers
            tables = [
                row[0]
                for row in self._emptier.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = %s"
                    " AND tablename != 'migrations'",
                    (schema,),
                )
            ]
            self._emptier.execute(
                "; ".join(f'DELETE FROM "{schema}"."{table}"' for table in tables)
            )
        except self._psycopg.Error:
            self._close_emptier()
            self.drop_store(url)
            return
        self._free.append(url)

    def _close_emptier(self) -> None:
        if self._emptier is not None:
            self._emptier.close()
            self._emptier = None

    def store_url(self, schema: str) -> DatabaseUrl:
        options = quote(f"-csearch_path={schema}", safe="")
        return DatabaseUrl(f"{self.url}?options={options}")

    def drop_store(self, url: DatabaseUrl) -> None:
        schema = _schema(url)
        with self.connect() as connection:
            connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')

    def close(self) -> None:
        """Drop the run's database, whoever is still connected to it."""
        self._close_emptier()
        with self._admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
