"""Where a store lives: a URL is never a path, and a URL never shows its password."""

from __future__ import annotations

import pytest

from engram.store.location import DatabaseUrl, is_database_url


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("postgresql://u@h:5432/db", True),
        ("postgres://u@h/db", True),
        ("POSTGRESQL://u@h/db", True),
        ("postgresql:relative/file.db", False),
        ("postgresql:", False),
        ("/srv/engram/memory.db", False),
        ("mysql://u@h/db", False),
    ],
)
def test_only_a_postgresql_url_names_a_database(text: str, url: bool) -> None:
    assert is_database_url(text) is url


def test_a_url_never_shows_its_password() -> None:
    url = DatabaseUrl("postgresql://engram:s3cr%40t@db.internal:6432/memory?sslmode=require")

    assert str(url) == "postgresql://engram:***@db.internal:6432/memory?sslmode=require"
    assert "s3cr" not in repr(url)
    assert f"{url}" == str(url)
    assert url.where() == "db.internal:6432/memory"


def test_where_fills_in_libpq_defaults() -> None:
    assert DatabaseUrl("postgresql://alice@/").where() == "localhost:5432/alice"
    with pytest.raises(ValueError, match="not a postgresql:// URL"):
        DatabaseUrl("/srv/memory.db")
