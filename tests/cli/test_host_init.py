"""``engram host init``: profile, store and private keys; joining a shared store."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.cli.main import cli
from engram.host.profile import load_profile
from engram.host.runtime import open_memory
from engram.memory.settings import DEFAULT_RETENTION_MAX_DAYS
from engram.store.location import DatabaseUrl
from engram.testing import current_capture_args
from engram.testing.postgres import PostgresRun

ARGS = [
    "--tenant",
    "acme",
    "--workspace",
    "payments",
    "--principal",
    "agent-a",
    "--purpose",
    "purpose:release",
]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_init_tells_the_operator_the_default_retention_and_how_to_choose_another(
    tmp_path: Path,
) -> None:
    result = CliRunner().invoke(cli, ["host", "init", str(tmp_path / "h"), *ARGS])
    assert result.exit_code == 0, result.output
    profile = tmp_path / "h" / "host.toml"
    assert result.stdout == f"{profile}\n"  # alone: profile=$(engram host init …) still works
    assert result.stderr.splitlines() == [
        "retention: a record captured without expires_at lives 30 days, the default ceiling"
        " (an expires_at may be earlier, never later)",
        f"  to choose another: --retention-max-days N, or [retention] max_days in {profile}"
        " (for records captured from then on)",
    ]
    assert load_profile(profile).policy.retention_max_days == DEFAULT_RETENTION_MAX_DAYS == 30


def test_init_with_a_chosen_retention_says_it_and_where_to_change_it(tmp_path: Path) -> None:
    arguments = ["host", "init", str(tmp_path / "h"), *ARGS, "--retention-max-days", "1"]
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 0, result.output
    profile = tmp_path / "h" / "host.toml"
    assert result.stderr.splitlines() == [
        "retention: a record captured without expires_at lives 1 day, this profile's ceiling"
        " (an expires_at may be earlier, never later)",
        f"  to change it: [retention] max_days in {profile} (for records captured from then on)",
    ]
    assert load_profile(profile).policy.retention_max_days == 1


def test_init_prints_the_profile_path_and_creates_private_keys(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["host", "init", str(tmp_path / "h"), *ARGS, "--grant", "all"])
    assert result.exit_code == 0, result.output
    profile = tmp_path / "h" / "host.toml"
    assert result.stdout == f"{profile}\n"
    keys = tmp_path / "h" / "memory.db.keys"
    assert sorted(path.name for path in keys.iterdir()) == ["current", "kek-k1.key", "mac.key"]
    assert {_mode(path) for path in keys.iterdir()} == {0o600}
    assert _mode(keys) == 0o700
    assert _mode(profile) == 0o600
    loaded = load_profile(profile)
    assert (loaded.tenant, loaded.workspace, loaded.principal, loaded.purpose) == (
        "acme",
        "payments",
        "agent-a",
        "purpose:release",
    )
    assert loaded.enabled is True
    assert loaded.grants == {"search", "get", "capture", "request_admission", "withdraw", "forget"}
    assert loaded.policy.retention_max_days == 30
    assert loaded.session == ""


def test_a_second_profile_joins_an_existing_store_and_its_keys(tmp_path: Path) -> None:
    runner = CliRunner()
    runner.invoke(cli, ["host", "init", str(tmp_path / "a"), *ARGS])
    shared = tmp_path / "a" / "memory.db"
    result = runner.invoke(
        cli,
        [
            "host",
            "init",
            str(tmp_path / "b"),
            *ARGS[:4],
            "--principal",
            "agent-b",
            "--purpose",
            "p",
            "--store",
            str(shared),
        ],
    )
    assert result.exit_code == 0, result.output
    second = load_profile(tmp_path / "b" / "host.toml")
    assert second.store == shared
    assert second.keys == tmp_path / "a" / "memory.db.keys"
    assert not (tmp_path / "b" / "memory.db").exists()


def test_init_refuses_an_existing_profile_and_unknown_grants(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["host", "init", str(tmp_path / "h"), *ARGS]).exit_code == 0
    again = runner.invoke(cli, ["host", "init", str(tmp_path / "h"), *ARGS])
    assert again.exit_code == 2
    assert "already exists" in again.output
    bogus = runner.invoke(cli, ["host", "init", str(tmp_path / "x"), *ARGS, "--grant", "admin"])
    assert bogus.exit_code == 2
    assert "unknown tool to grant: admin" in bogus.output


def test_a_database_url_is_a_postgresql_store_never_a_file_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_url: DatabaseUrl
) -> None:
    """`--store postgresql://…` once made a SQLite file under a folder named `postgresql:`."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        cli, ["host", "init", "h", *ARGS, "--grant", "all", "--store", postgres_url.url]
    )

    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in tmp_path.iterdir()) == ["h"]
    assert sorted(path.name for path in (tmp_path / "h").iterdir()) == ["host.toml", "memory.keys"]
    loaded = load_profile(tmp_path / "h" / "host.toml")
    assert loaded.store == postgres_url
    assert loaded.keys == tmp_path / "h" / "memory.keys"
    memory = open_memory(loaded, semantic=False)
    captured = memory.call(
        "capture",
        current_capture_args(
            "Kept in PostgreSQL.", key="agent-a.pg-capture-01", purpose_ref="purpose:release"
        ),
    )
    memory.close()
    assert captured["ok"] is True, captured
    [(count,)] = _pg_rows(postgres_url, "SELECT count(*) FROM candidates")
    assert count == 1


def test_a_second_host_joins_a_database_only_with_its_keys(
    tmp_path: Path, postgres_url: DatabaseUrl
) -> None:
    runner = CliRunner()
    first = runner.invoke(
        cli,
        ["host", "init", str(tmp_path / "a"), *ARGS, "--grant", "all", "--store", postgres_url.url],
    )
    assert first.exit_code == 0, first.output
    memory = open_memory(tmp_path / "a" / "host.toml", semantic=False)
    memory.call(
        "capture",
        current_capture_args(
            "Shared fact.", key="agent-a.pg-capture-01", purpose_ref="purpose:release"
        ),
    )
    memory.close()

    stranger = runner.invoke(
        cli, ["host", "init", str(tmp_path / "b"), *ARGS, "--store", postgres_url.url]
    )
    joined = runner.invoke(
        cli,
        [
            "host",
            "init",
            str(tmp_path / "c"),
            *ARGS,
            "--store",
            postgres_url.url,
            "--keys",
            str(tmp_path / "a" / "memory.keys"),
        ],
    )

    assert stranger.exit_code == 2
    assert stranger.stderr == (
        f"engram: the database {postgres_url.where()} already holds a governed store: join it"
        " with --keys DIR, the key directory of a host that uses it (its keys open its records)\n"
    )
    assert not (tmp_path / "b" / "host.toml").exists()
    assert joined.exit_code == 0, joined.output
    assert load_profile(tmp_path / "c" / "host.toml").keys == tmp_path / "a" / "memory.keys"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "postgresql://postgres:s3cret@127.0.0.1:1/test",
            "cannot reach PostgreSQL at 127.0.0.1:1/test: start the server, or fix the host and"
            " port in the store URL",
        ),
        (
            "postgresql://no_such_role@127.0.0.1:5432/test",
            "PostgreSQL at 127.0.0.1:5432/test refused the login: check the user in the store URL"
            " and its password (PGPASSWORD or ~/.pgpass)",
        ),
        (
            "postgresql://postgres@127.0.0.1:5432/no_such_database",
            "database 127.0.0.1:5432/no_such_database does not exist: create it (createdb) or fix"
            " the store URL",
        ),
        (
            "mysql://root@127.0.0.1/test",
            "--store takes a file path or a postgresql:// URL: give a path such as"
            " /srv/engram/memory.db, or postgresql://USER@HOST:5432/DATABASE",
        ),
    ],
)
def test_a_database_that_cannot_be_used_is_a_message_naming_what_to_fix(
    tmp_path: Path, postgres_run: PostgresRun, url: str, message: str
) -> None:
    result = CliRunner().invoke(cli, ["host", "init", str(tmp_path / "h"), *ARGS, "--store", url])

    assert result.exit_code in (1, 2)
    assert result.stderr == f"engram: {message}\n"
    assert "s3cret" not in result.output
    assert not (tmp_path / "h" / "host.toml").exists()


def _pg_rows(url: DatabaseUrl, sql: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url.url) as connection:
        return connection.execute(sql).fetchall()


def test_doctor_verifies_a_postgresql_store_and_says_when_autovacuum_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_url: DatabaseUrl
) -> None:
    import json

    runner = CliRunner()
    created = runner.invoke(
        cli, ["host", "init", str(tmp_path / "h"), *ARGS, "--store", postgres_url.url]
    )
    assert created.exit_code == 0, created.output
    monkeypatch.setenv("ENGRAM_HOST_PROFILE", str(tmp_path / "h" / "host.toml"))
    monkeypatch.chdir(tmp_path)

    result = runner.invoke(cli, ["doctor", "--json"])

    checks = {c["id"]: c for c in json.loads(result.stdout)["checks"]}
    assert checks["memory.store"]["status"] == "pass"
    assert checks["memory.store"]["subject"] == postgres_url.url  # no password to hide here
    assert checks["memory.file_modes"]["status"] == "pass"  # the key directory and profile
    [(setting,)] = _pg_rows(postgres_url, "SELECT current_setting('autovacuum')")
    if setting == "on":
        assert "memory.autovacuum" not in checks
    else:
        assert checks["memory.autovacuum"]["status"] == "warn"
        assert checks["memory.autovacuum"]["remediation"].startswith("turn it on (autovacuum = on")
