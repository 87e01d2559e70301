"""Fixtures for governed memory: a real store (SQLite, then PostgreSQL: ``memory`` runs
every test on both) and real keys in a temp dir, and an engine on a clock the test
controls (the builders are in :mod:`engram.testing`). ``sqlite_memory`` is for the few
tests about SQLite's own files and locks."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from engram.crypto.keyfiles import create_keyring, load_keyring
from engram.errors import ContractError
from engram.memory.binding import Binding
from engram.memory.engine import MemoryEngine
from engram.memory.settings import HostPolicy
from engram.store.location import DatabaseUrl, StoreLocation, open_memory_store
from engram.testing import PURPOSE, Clock, binding, capture_args
from engram.testing.postgres import PostgresRun


class Memory:
    """An engine plus helpers that unwrap envelopes."""

    def __init__(
        self,
        engine: MemoryEngine,
        clock: Clock,
        location: StoreLocation,
        new_store: Callable[[str], StoreLocation] | None = None,
    ) -> None:
        self.engine, self.clock, self.location = engine, clock, location
        self._new_store = new_store

    def sibling(self, name: str) -> Memory:
        """The store named ``name`` beside this one (``memory.db`` is this one; another
        name is a fresh, empty store of the same backend) with the SAME key directory."""
        if self._new_store is not None:
            location = self._new_store(name)
        else:
            assert isinstance(self.location, Path)
            location = self.location.with_name(name)
        keys = load_keyring(self.engine.vault.keys.directory)
        engine = MemoryEngine(open_memory_store(location), keys, clock=self.clock)
        return Memory(engine, self.clock, location, self._new_store)

    @property
    def path(self) -> Path:
        """The SQLite file (tests of SQLite's own behaviour use ``sqlite_memory``)."""
        assert isinstance(self.location, Path), "a SQLite-only test uses sqlite_memory"
        return self.location

    @property
    def backend(self) -> str:
        return "postgresql" if isinstance(self.location, DatabaseUrl) else "sqlite"

    @property
    def errors(self) -> type[Exception]:
        """What the backend's driver raises for a refused statement."""
        if isinstance(self.location, DatabaseUrl):
            import psycopg

            return psycopg.Error
        return sqlite3.Error

    def rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """What a query with ``?`` placeholders finds in the store, read directly."""
        if isinstance(self.location, DatabaseUrl):
            import psycopg

            with psycopg.connect(self.location.url) as pg:
                cursor = pg.execute(sql.replace("?", "%s"), parameters)
                found = cursor.fetchall() if cursor.description else []
            return [tuple(_plain(value) for value in row) for row in found]
        with closing(sqlite3.connect(self.location)) as lite, lite:
            return list(lite.execute(sql, parameters))

    def call(
        self, tool: str, arguments: dict[str, Any], who: Binding | None = None
    ) -> dict[str, Any]:
        return self.engine.call(tool, arguments, who or binding())

    def value(self, tool: str, arguments: dict[str, Any], who: Binding | None = None) -> Any:
        envelope = self.call(tool, arguments, who)
        assert envelope["ok"] is True, envelope
        return envelope["output"]["value"]

    def code(self, tool: str, arguments: dict[str, Any], who: Binding | None = None) -> str:
        envelope = self.call(tool, arguments, who)
        assert envelope["ok"] is False, envelope
        return str(envelope["error"]["code"])

    def capture(self, text: str, key: str, who: Binding | None = None, **payload: Any) -> str:
        """Capture ``text`` under ``key``; the candidate id."""
        arguments = capture_args(text=text, key=key, **payload)
        return str(self.value("capture", arguments, who)["candidate_id"])

    def admit(self, text: str, key: str, who: Binding | None = None) -> str:
        captured = self.value("capture", capture_args(text=text, key=key + ".capture-000001"), who)
        outcome = self.value(
            "request_admission",
            {"candidate_id": captured["candidate_id"], "idempotency_key": key + ".admission-00001"},
            who,
        )["outcome"]
        assert outcome["status"] == "accepted", outcome
        return str(outcome["record_id"])

    def found(self, query: str, who: Binding | None = None) -> list[str]:
        """The record ids a search finds, in rank order."""
        value = self.value("search", {"query": query, "purpose_ref": PURPOSE}, who)
        return [packet["record"]["record_id"] for packet in value["records"]]

    def record_state(self, record_id: str, who: Binding | None = None) -> str:
        """The lifecycle state of a record of ``who``'s scope, read from the store."""
        with self.engine.store.read() as reader:
            record = reader.record((who or binding()).scope.scope_id, record_id)
        assert record is not None
        return record.state

    def store_bytes(self) -> bytes:
        """Every byte the store keeps: SQLite's files, or every row of every table of the
        PostgreSQL schema (dead row versions included is what its vacuum handles)."""
        if isinstance(self.location, DatabaseUrl):
            return _schema_bytes(self.location)
        data = b""
        for suffix in ("", "-wal", "-shm"):
            candidate = Path(str(self.path) + suffix)
            if candidate.exists():
                data += candidate.read_bytes()
        return data


def contract_errors(root: type[ContractError] = ContractError) -> list[type[ContractError]]:
    """Every error class of the contract below ``root``, at any depth."""
    found: list[type[ContractError]] = []
    for cls in root.__subclasses__():
        found += [cls, *contract_errors(cls)]
    return found


def _plain(value: Any) -> Any:
    return bytes(value) if isinstance(value, memoryview) else value


def _schema_bytes(url: DatabaseUrl) -> bytes:
    import psycopg

    data = b""
    with psycopg.connect(url.url) as db:
        tables = db.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
        for (table,) in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, (bytes, memoryview)):
                        data += bytes(value)
                    elif value is not None:
                        data += str(value).encode()
    return data


def open_memory(
    tmp_path: Path,
    clock: Clock,
    policy: HostPolicy | None = None,
    location: StoreLocation | None = None,
) -> Memory:
    location = location or tmp_path / "memory.db"
    keys = create_keyring(tmp_path / "memory.db.keys")
    engine = MemoryEngine(open_memory_store(location), keys, policy, clock=clock)
    return Memory(engine, clock, location)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def memory(
    tmp_path: Path, clock: Clock, store_location: StoreLocation, request: pytest.FixtureRequest
) -> Iterator[Memory]:
    """Governed memory on each backend in turn."""
    opened = open_memory(tmp_path, clock, location=store_location)
    given: list[DatabaseUrl] = []
    if isinstance(store_location, DatabaseUrl):
        run: PostgresRun = request.getfixturevalue("postgres_run")

        named: dict[str, DatabaseUrl] = {"memory.db": store_location}

        def new_store(name: str) -> StoreLocation:
            if name not in named:  # like a file name beside memory.db
                named[name] = run.empty_store()
                given.append(named[name])
            return named[name]

        opened._new_store = new_store
    yield opened
    opened.engine.store.close()
    for url in given:
        run.give_back(url)


@pytest.fixture
def sqlite_memory(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    """Governed memory on SQLite only: for tests of its files, pages and locks."""
    opened = open_memory(tmp_path, clock)
    yield opened
    opened.engine.store.close()
