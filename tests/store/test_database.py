"""The SQLite database's write transactions, and group commit among a process's writers.

Each scenario is made deterministic by holding the first writer inside its
transaction until the others are known to be waiting for the store.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engram.errors import MutationOutcomeUnknown, StoreUnavailable
from engram.store.sqlite.database import Database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(tmp_path / "store.db")
    with database.transaction() as connection:
        connection.execute("CREATE TABLE parent (id TEXT PRIMARY KEY)")
        connection.execute(
            "CREATE TABLE child (id TEXT PRIMARY KEY, parent TEXT "
            "REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
        )
    yield database
    database.close()


def committed(db: Database) -> list[str]:
    """What another connection sees: only committed rows."""
    with sqlite3.connect(db.path) as other:
        rows = other.execute("SELECT id FROM parent UNION ALL SELECT id FROM child ORDER BY 1")
        return [row[0] for row in rows]


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


class Writer(threading.Thread):
    """A thread running one durable transaction; remembers how it ended."""

    def __init__(self, db: Database, body: Callable[[sqlite3.Connection], None]) -> None:
        super().__init__(daemon=True)
        self.db, self.body = db, body
        self.error: BaseException | None = None
        self.seen_on_return: list[str] | None = None

    def run(self) -> None:
        try:
            with self.db.transaction() as connection:
                self.body(connection)
            self.seen_on_return = committed(self.db)
        except BaseException as exc:  # the test inspects it
            self.error = exc


def insert(table: str, key: str, parent: str | None = None) -> Callable[[sqlite3.Connection], None]:
    def body(connection: sqlite3.Connection) -> None:
        if table == "child":
            connection.execute("INSERT INTO child VALUES (?, ?)", (key, parent))
        else:
            connection.execute("INSERT INTO parent VALUES (?)", (key,))

    return body


def held(
    body: Callable[[sqlite3.Connection], None], release: threading.Event
) -> Callable[[sqlite3.Connection], None]:
    def run(connection: sqlite3.Connection) -> None:
        body(connection)
        release.wait(10)

    return run


def group_of(db: Database, first: Writer, others: list[Writer], release: threading.Event) -> None:
    """Start ``first`` (held in its transaction), then ``others`` behind it; let go."""
    first.start()
    wait_until(lambda: db._group is not None)
    for writer in others:
        writer.start()
    wait_until(lambda: db._arrivals == len(others))
    release.set()
    for writer in [first, *others]:
        writer.join(10)
        assert not writer.is_alive()


def count_commits(db: Database) -> list[str]:
    statements: list[str] = []
    db._connection.set_trace_callback(statements.append)
    return statements


def test_a_lone_writer_commits_at_once(db: Database) -> None:
    statements = count_commits(db)
    with db.transaction() as connection:
        connection.execute("INSERT INTO parent VALUES ('a')")
    assert committed(db) == ["a"]
    assert statements.count("COMMIT") == 1


def test_waiting_writers_share_one_commit_and_return_only_after_it(db: Database) -> None:
    release = threading.Event()
    statements = count_commits(db)
    first = Writer(db, held(insert("parent", "a"), release))
    others = [Writer(db, insert("parent", key)) for key in ("b", "c", "d")]
    group_of(db, first, others, release)
    assert [writer.error for writer in [first, *others]] == [None] * 4
    assert statements.count("COMMIT") == 1
    assert statements.count("BEGIN IMMEDIATE") == 1
    # Acknowledged means committed: each writer, once returned, sees every row on disk.
    assert [writer.seen_on_return for writer in [first, *others]] == [["a", "b", "c", "d"]] * 4


def test_a_failing_writer_undoes_only_its_own_work(db: Database) -> None:
    release = threading.Event()

    def fails(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO parent VALUES ('b')")
        raise ValueError("refused")

    first = Writer(db, held(insert("parent", "a"), release))
    others = [Writer(db, fails), Writer(db, insert("parent", "c"))]
    group_of(db, first, others, release)
    assert isinstance(others[0].error, ValueError)
    assert (first.error, others[1].error) == (None, None)
    assert committed(db) == ["a", "c"]


def test_a_writer_whose_statement_fails_gets_store_unavailable_and_loses_nothing_else(
    db: Database,
) -> None:
    release = threading.Event()
    first = Writer(db, held(insert("parent", "a"), release))
    others = [Writer(db, insert("parent", "a")), Writer(db, insert("parent", "b"))]  # duplicate
    group_of(db, first, others, release)
    assert isinstance(others[0].error, StoreUnavailable)
    assert isinstance(others[0].error.__cause__, sqlite3.IntegrityError)
    assert (first.error, others[1].error) == (None, None)
    assert committed(db) == ["a", "b"]


def test_a_failed_shared_commit_is_outcome_unknown_for_every_writer(db: Database) -> None:
    release = threading.Event()
    first = Writer(db, held(insert("parent", "a"), release))
    # A deferred foreign key: the violation surfaces only at COMMIT.
    others = [Writer(db, insert("child", "orphan", parent="nobody"))]
    group_of(db, first, others, release)
    assert [type(writer.error) for writer in [first, *others]] == [MutationOutcomeUnknown] * 2
    assert committed(db) == []
    with db.transaction() as connection:  # the store is usable afterwards
        connection.execute("INSERT INTO parent VALUES ('z')")
    assert committed(db) == ["z"]


def test_a_reader_waits_for_an_open_group_which_is_not_handed_on_and_sees_it_whole(
    db: Database,
) -> None:
    first_release, second_release = threading.Event(), threading.Event()
    statements = count_commits(db)
    first = Writer(db, held(insert("parent", "a"), first_release))
    second = Writer(db, held(insert("parent", "b"), second_release))
    third = Writer(db, insert("parent", "c"))
    seen: list[list[str]] = []

    def read() -> None:
        with db.snapshot() as connection:
            seen.append([row[0] for row in connection.execute("SELECT id FROM parent")])

    reader = threading.Thread(target=read, daemon=True)
    first.start()
    wait_until(lambda: db._group is not None)
    second.start()
    wait_until(lambda: db._arrivals == 1)
    first_release.set()
    wait_until(lambda: db._group is not None and db._group.members == 2)
    reader.start()
    wait_until(lambda: db._quiescing == 1)
    third.start()
    wait_until(lambda: db._arrivals == 1)
    time.sleep(0.1)
    assert seen == []  # the group is open: the reader waits
    second_release.set()
    for thread in (first, second, third, reader):
        thread.join(10)
    assert seen[0][:2] == ["a", "b"]  # the whole group, committed
    assert statements.count("COMMIT") == 2  # "b" did not hand the group on to "c"
    assert committed(db) == ["a", "b", "c"]


def test_a_snapshot_is_read_only_only_while_it_lasts(db: Database) -> None:
    with db.snapshot() as connection:
        assert connection.execute("PRAGMA query_only").fetchone()[0] == 1
    assert db._connection.execute("PRAGMA query_only").fetchone()[0] == 0
    with db.transaction() as connection:
        connection.execute("INSERT INTO parent VALUES ('a')")
    assert committed(db) == ["a"]


def test_a_write_a_snapshot_or_a_checkpoint_inside_a_snapshot_is_refused_not_deadlocked(
    db: Database,
) -> None:
    inside = pytest.raises(StoreUnavailable, match="in a read snapshot")
    with db.snapshot(), inside, db.transaction():
        pytest.fail("a write opened inside a read snapshot")
    with db.snapshot(), inside, db.snapshot():
        pytest.fail("a snapshot opened inside a read snapshot")
    with db.snapshot(), inside:
        db.checkpoint()
    with db.transaction() as connection:  # nothing is left held
        connection.execute("INSERT INTO parent VALUES ('a')")
    with db.snapshot() as connection:
        assert connection.execute("SELECT id FROM parent").fetchall() == [("a",)]


def test_a_snapshot_cannot_write(db: Database) -> None:
    with pytest.raises(StoreUnavailable, match="store read failed"), db.snapshot() as connection:
        connection.execute("INSERT INTO parent VALUES ('x')")
    assert committed(db) == []


def test_a_durable_transaction_nested_in_a_write_is_refused_and_the_outer_one_is_whole(
    db: Database,
) -> None:
    with db.transaction() as connection:
        connection.execute("INSERT INTO parent VALUES ('outer')")
        with pytest.raises(StoreUnavailable, match="in a write transaction"), db.transaction():
            pytest.fail("a nested transaction was opened")
        connection.execute("INSERT INTO parent VALUES ('outer-2')")
    assert committed(db) == ["outer", "outer-2"]


def test_a_body_that_ends_the_transaction_itself_is_outcome_unknown(db: Database) -> None:
    def commits_itself() -> None:
        with db.transaction() as connection:
            connection.execute("INSERT INTO parent VALUES ('a')")
            connection.execute("COMMIT")

    with pytest.raises(MutationOutcomeUnknown):
        commits_itself()
    assert committed(db) == ["a"]  # it did commit: "unknown" was the honest answer
    with db.transaction() as connection:
        connection.execute("INSERT INTO parent VALUES ('b')")
    assert committed(db) == ["a", "b"]


def test_a_lone_non_durable_writer_commits_with_normal_and_restores_full(db: Database) -> None:
    levels: list[int] = []
    real = db._connection

    def level(statement: str) -> None:
        if statement == "COMMIT":
            levels.append(real.execute("PRAGMA synchronous").fetchone()[0])

    with db.transaction(durable=False) as connection:
        connection.execute("INSERT INTO parent VALUES ('a')")
        real.set_trace_callback(level)
    real.set_trace_callback(None)
    assert levels == [1]
    assert real.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert committed(db) == ["a"]


def test_a_non_durable_writer_arriving_at_a_durable_group_commits_with_it(db: Database) -> None:
    release = threading.Event()
    statements = count_commits(db)
    first = Writer(db, held(insert("parent", "a"), release))

    class Light(Writer):
        def run(self) -> None:
            with self.db.transaction(durable=False) as connection:
                self.body(connection)
            self.seen_on_return = committed(self.db)

    others: list[Writer] = [Light(db, insert("parent", "b"))]
    group_of(db, first, others, release)
    assert statements.count("COMMIT") == 1
    assert "PRAGMA synchronous = NORMAL" not in statements
    assert others[0].seen_on_return == ["a", "b"]


def test_a_checkpoint_waits_for_an_open_group_which_is_not_handed_on_meanwhile(
    db: Database,
) -> None:
    release = threading.Event()
    statements = count_commits(db)
    first = Writer(db, held(insert("parent", "a"), release))
    first.start()
    wait_until(lambda: db._group is not None)
    done: list[bool] = []
    checkpointer = threading.Thread(target=lambda: done.append(db.checkpoint()), daemon=True)
    checkpointer.start()
    wait_until(lambda: db._quiescing == 1)
    second = Writer(db, insert("parent", "b"))
    second.start()
    wait_until(lambda: db._arrivals == 1)
    release.set()
    for thread in (first, second, checkpointer):
        thread.join(10)
    assert done == [True]
    assert statements.count("COMMIT") == 2  # "a" was not handed on to "b"
    assert committed(db) == ["a", "b"]


def test_a_read_inside_the_readers_own_write_transaction_is_refused_not_deadlocked(
    db: Database,
) -> None:
    refused = pytest.raises(StoreUnavailable, match="in a write transaction")
    with db.transaction(), refused, db.snapshot():
        pytest.fail("a snapshot opened inside its own write transaction")


def test_a_writer_counted_as_arriving_that_never_comes_does_not_strand_the_group(
    db: Database,
) -> None:
    with db._counting:
        db._arrivals += 1  # as if a writer were interrupted between counting and locking
    try:
        with db.transaction() as connection:
            connection.execute("INSERT INTO parent VALUES ('a')")
    finally:
        with db._counting:
            db._arrivals -= 1
    assert committed(db) == ["a"]
    assert db._group is None


def test_many_concurrent_writers_all_land(db: Database) -> None:
    def writes(prefix: str) -> None:
        for index in range(50):
            with db.transaction() as connection:
                connection.execute("INSERT INTO parent VALUES (?)", (f"{prefix}{index:02d}",))

    threads = [threading.Thread(target=writes, args=(f"t{n}-",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(committed(db)) == 400


def test_a_writer_that_commits_in_its_body_makes_the_whole_group_outcome_unknown(
    db: Database,
) -> None:
    release = threading.Event()

    def commits_itself(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO parent VALUES ('b')")
        connection.execute("COMMIT")

    first = Writer(db, held(insert("parent", "a"), release))
    others = [Writer(db, commits_itself)]
    group_of(db, first, others, release)
    # "a" committed with "b": nobody may be told that nothing happened.
    assert [type(writer.error) for writer in [first, *others]] == [MutationOutcomeUnknown] * 2
    assert committed(db) == ["a", "b"]
