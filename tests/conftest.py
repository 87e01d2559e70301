"""Shared fixtures: ``engram-mcp`` in this process or as a subprocess, and the one
Hypothesis configuration.

Hypothesis: no deadline anywhere (a busy two-core machine makes any per-example time
limit a coin toss); the ``ci`` profile, chosen when ``CI=true``, also draws the same
examples on every run (derandomized, no example database), so CI never fails on an
example it happens to find that day. Locally the search stays random: a failure it
finds is shrunk and saved in ``.hypothesis/`` and replayed first next time.
``HYPOTHESIS_PROFILE`` names another profile. A test that suppresses another health
check names ``too_slow`` again: a test's own list replaces the profile's.

``ENGRAM_SEMANTIC=off`` for the whole run: project memory ranks lexically unless a test
turns its semantic channel on.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from engram.store.location import DatabaseUrl, StoreLocation
from engram.testing import InProcessClient, LineClient, StartServer, StdioClient
from engram.testing.postgres import PostgresRun, unreachable

# Project memory ranks lexically in tests unless a test turns the semantic channel on
# (tests/project/test_semantic.py): the model costs time and the exact rankings the
# other tests check are BM25's.
os.environ["ENGRAM_SEMANTIC"] = "off"

settings.register_profile(
    "dev", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "ci",
    parent=settings.get_profile("dev"),
    derandomize=True,
    database=None,
    max_examples=100,
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") == "true" else "dev")
)


def _starter(kind: Callable[..., LineClient], here: Path) -> Iterator[StartServer]:
    with contextlib.ExitStack() as clients:

        def start(
            *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
        ) -> LineClient:
            return clients.enter_context(kind(args, cwd=cwd or here, env=env, timeout=20.0))

        yield start


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty home directory for the user the test plays."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty project directory (a repository without engram yet)."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    """Start ``engram-mcp`` in this process (``*args``, ``cwd=``, ``env=``); all are
    stopped after the test."""
    yield from _starter(InProcessClient, tmp_path)


@pytest.fixture
def start_stdio_server(tmp_path: Path) -> Iterator[StartServer]:
    """Start the real ``engram-mcp`` as a subprocess; all are stopped after the test."""
    yield from _starter(StdioClient, tmp_path)


@pytest.fixture
def server(start_server: StartServer) -> LineClient:
    """One ``engram-mcp`` in an empty directory, in this process."""
    return start_server()


# --- Store backends --------------------------------------------------------------------
#
# The governed store's contract runs on SQLite and on PostgreSQL through one parametrised
# fixture (``store_location``). The PostgreSQL lane uses the server of
# ``ENGRAM_TEST_POSTGRES`` (127.0.0.1:5432 by default): under ``CI=true`` a server that
# cannot be reached fails the run; elsewhere it skips that lane, saying how to start it.


@pytest.fixture(scope="session")
def postgres_run() -> Iterator[PostgresRun]:
    """The run's own PostgreSQL database, dropped at the end."""
    reason = unreachable()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the PostgreSQL lane must run under CI: {reason}")
        pytest.skip(f"PostgreSQL lane skipped: {reason}")
    run = PostgresRun()
    yield run
    run.close()


@pytest.fixture
def postgres_url(postgres_run: PostgresRun) -> Iterator[DatabaseUrl]:
    """An empty, migrated store schema on PostgreSQL."""
    url = postgres_run.empty_store()
    yield url
    postgres_run.give_back(url)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> StoreLocation:
    """Where a test's governed store lives: a SQLite file, then a PostgreSQL schema."""
    if request.param == "sqlite":
        return tmp_path / "memory.db"
    url: DatabaseUrl = request.getfixturevalue("postgres_url")
    return url
