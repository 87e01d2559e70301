"""``engram host init``: profile, store and private keys; joining a shared store."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.cli.main import cli
from engram.host.profile import load_profile

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


def test_init_prints_the_profile_path_and_creates_private_keys(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["host", "init", str(tmp_path / "h"), *ARGS, "--grant", "all"])
    assert result.exit_code == 0, result.output
    profile = tmp_path / "h" / "host.toml"
    assert result.output == f"{profile}\n"
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


def test_a_database_url_is_never_taken_for_a_file_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--store postgresql://…` made a SQLite file under a folder named `postgresql:`."""
    monkeypatch.chdir(tmp_path)
    url = "postgresql://postgres@127.0.0.1:5432/test"
    result = CliRunner().invoke(cli, ["host", "init", str(tmp_path / "h"), *ARGS, "--store", url])

    assert result.exit_code == 2
    assert result.stderr == (
        "engram: --store takes a file path; postgresql: URLs are not supported yet (governed"
        " memory runs on SQLite): give a path such as /srv/engram/memory.db\n"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == []
