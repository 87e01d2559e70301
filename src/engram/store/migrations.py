"""Versioned schema migrations, the same way on every backend.

Each backend keeps its own :class:`Migrations` (its statements differ); a migration is
registered by decorator and recorded, once applied, in the store's ``migrations`` table.
:meth:`Migrations.apply` runs inside the caller's write transaction, so two processes
opening a new store apply each migration once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from engram.store.rows import Connection

__all__ = ["Migrations"]

C = TypeVar("C", bound=Connection)


class Migrations(Generic[C]):
    """The registered migrations of one backend, by schema name."""

    def __init__(self) -> None:
        self._registered: dict[str, list[tuple[int, Callable[[C], None]]]] = {}

    def register(self, schema: str, version: int) -> Callable[[Callable[[C], Any]], Any]:
        """Register the decorated function as migration ``version`` of ``schema``."""

        def register(function: Callable[[C], None]) -> Callable[[C], None]:
            registered = self._registered.setdefault(schema, [])
            if any(known == version for known, _ in registered):
                raise ValueError(f"migration {schema} {version} is registered twice")
            registered.append((version, function))
            return function

        return register

    def apply(self, connection: C, schema: str) -> None:
        """Apply the migrations of ``schema`` not yet recorded (inside a transaction)."""
        connection.execute(
            "CREATE TABLE IF NOT EXISTS migrations (schema TEXT, version INTEGER,"
            " applied_ms BIGINT, PRIMARY KEY (schema, version))"
        )
        done = {
            row[0]
            for row in connection.execute(
                "SELECT version FROM migrations WHERE schema = ?", (schema,)
            )
        }
        for version, function in sorted(self._registered.get(schema, []), key=lambda m: m[0]):
            if version not in done:
                function(connection)
                connection.execute(
                    "INSERT INTO migrations VALUES (?, ?, ?)",
                    (schema, version, int(time.time() * 1000)),
                )
