"""Fixtures for governed memory: a store, real keys in a temp dir, and an engine on a clock
the test controls (the builders are in :mod:`engram.testing`).

``memory`` is the domain on the in-memory store (:class:`engram.testing.InMemoryStore`,
held to the real stores' behaviour by ``tests/store/contract/``). A test that reads the
store's own rows, files or driver errors, or that needs the real thing (migrations, a
second process, a reopened store), is marked ``real_stores``: ``memory`` is then SQLite,
then PostgreSQL. ``sqlite_memory`` is for the few tests about SQLite's own files and
locks."""

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
from engram.memory.ports import MemoryStore
from engram.memory.settings import HostPolicy
from engram.store.location import DatabaseUrl, StoreLocation, open_memory_store
from engram.testing import PURPOSE, Clock, binding, capture_args
from engram.testing.memory_store import InMemoryStore
from engram.testing.postgres import PostgresRun

#: The stores a test marked ``real_stores`` runs on, in turn.
REAL_STORES = ("sqlite", "postgresql")
#: What a helper that reads the store itself says on the in-memory store.
_NEEDS_REAL = "this reads the store itself: mark the test real_stores"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``memory_backend``: the in-memory store, or the real ones for ``real_stores``."""
    if "memory_backend" in metafunc.fixturenames:
        real = metafunc.definition.get_closest_marker("real_stores") is not None
        metafunc.parametrize("memory_backend", REAL_STORES if real else ("memory",), indirect=True)


class Memory:
    """An engine plus helpers that unwrap envelopes."""

    def __init__(
        self,
        engine: MemoryEngine,
        clock: Clock,
        location: StoreLocation | None,
        new_store: Callable[[str], StoreLocation] | None = None,
        in_memory: dict[str, MemoryStore] | None = None,
    ) -> None:
        """``location`` is ``None`` for the in-memory store (``in_memory``: the stores
        of its siblings by name)."""
        self.engine, self.clock, self._location = engine, clock, location
        self._new_store = new_store
        self._in_memory = in_memory

    def sibling(self, name: str) -> Memory:
        """The store named ``name`` beside this one (``memory.db`` is this one; another
        name is a fresh, empty store of the same backend) with the SAME key directory."""
        keys = load_keyring(self.engine.vault.keys.directory)
        if self._in_memory is not None:
            store = self._in_memory.setdefault(name, InMemoryStore())
            engine = MemoryEngine(store, keys, clock=self.clock)
            return Memory(engine, self.clock, None, in_memory=self._in_memory)
        if self._new_store is not None:
            location = self._new_store(name)
        else:
            assert isinstance(self.location, Path)
            location = self.location.with_name(name)
        engine = MemoryEngine(open_memory_store(location), keys, clock=self.clock)
        return Memory(engine, self.clock, location, self._new_store)

    @property
    def location(self) -> StoreLocation:
        """Where the real store lives (a test of the store itself is ``real_stores``)."""
        assert self._location is not None, _NEEDS_REAL
        return self._location

    @property
    def path(self) -> Path:
        """The SQLite file (tests of SQLite's own behaviour use ``sqlite_memory``)."""
        assert isinstance(self.location, Path), "a SQLite-only test uses sqlite_memory"
        return self.location

    @property
    def backend(self) -> str:
        if self._location is None:
            return "memory"
        return "postgresql" if isinstance(self._location, DatabaseUrl) else "sqlite"

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

    def events(self) -> int:
        """How many events the journals of every scope hold, read through the port."""
        with self.engine.store.read() as reader:
            return len(reader.export_rows()["journal"])

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
def memory_backend(request: pytest.FixtureRequest) -> str:
    """The store ``memory`` runs on (parametrised by ``pytest_generate_tests``)."""
    return str(request.param)


@pytest.fixture
def memory(
    tmp_path: Path, clock: Clock, memory_backend: str, request: pytest.FixtureRequest
) -> Iterator[Memory]:
    """Governed memory on the in-memory store, or on each real backend in turn for a test
    marked ``real_stores``."""
    if memory_backend == "memory":
        store = InMemoryStore()
        keys = create_keyring(tmp_path / "memory.db.keys")
        engine = MemoryEngine(store, keys, clock=clock)
        yield Memory(engine, clock, None, in_memory={"memory.db": store})
        return
    store_location: StoreLocation
    if memory_backend == "sqlite":
        store_location = tmp_path / "memory.db"
    else:
        store_location = request.getfixturevalue("postgres_url")
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
