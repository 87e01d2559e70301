"""Private files: another local user must not read the store, its WAL, its keys or its
backups, whatever umask the operator runs with; and tokens open only in their one
canonical encoding."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.cli.main import cli
from engram.errors import StalePage
from engram.host.profile import load_profile
from engram.host.runtime import open_memory
from engram.memory.recall import PageCursors
from engram.testing import capture_args
from tests.adversarial.conftest import host_init


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """The common default: files readable by everyone."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _host(*arguments: str) -> str:
    result = CliRunner().invoke(cli, ["host", *arguments])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.usefixtures("loose_umask")
def test_every_file_of_a_new_store_is_private_under_a_loose_umask(tmp_path: Path) -> None:
    profile = host_init(tmp_path / "host")
    loaded = load_profile(profile)
    memory = open_memory(profile, sweep=False, semantic=False)
    try:
        captured = memory.call("capture", capture_args("A private fact.", key="private-key-0001"))
        assert captured["ok"], captured
        store = loaded.store_file
        wal, shm = (store.with_name(store.name + suffix) for suffix in ("-wal", "-shm"))
        assert wal.exists()
        assert shm.exists()
        backup = tmp_path / "backup.engram"
        _host("backup", str(backup), "--host-profile", str(profile))

        files = [profile, store, wal, shm, backup, *loaded.keys.iterdir()]
        assert {path.name: _mode(path) for path in files} == {path.name: 0o600 for path in files}
        directories = [profile.parent, loaded.keys]
        assert {str(path): _mode(path) for path in directories} == {
            str(path): 0o700 for path in directories
        }
    finally:
        memory.close()


def test_doctor_warns_about_a_store_others_can_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = host_init(tmp_path / "host")
    store = load_profile(profile).store_file
    os.chmod(store, 0o644)
    monkeypatch.setenv("ENGRAM_HOST_PROFILE", str(profile))
    monkeypatch.chdir(tmp_path)

    result = CliRunner().invoke(cli, ["doctor", "--json"])

    checks = [c for c in json.loads(result.stdout)["checks"] if c["id"] == "memory.file_modes"]
    # SQLite gives the WAL and shared-memory files it creates the store's own mode.
    assert [c["subject"] for c in checks] == [
        str(store.with_name(store.name + suffix)) for suffix in ("", "-wal", "-shm")
    ]
    assert checks[0] == {
        "id": "memory.file_modes",
        "status": "warn",
        "severity": "warning",
        "message": "memory.db can be read by others than its owner (mode 644)",
        "remediation": f"chmod 600 {store}",
        "subject": str(store),
    }


@pytest.mark.parametrize(
    "variant",
    [
        lambda token: token + "=",  # padding
        lambda token: token + "==",
        lambda token: token[:-1] + chr(ord(token[-1]) + 1),  # unused low bits set
        lambda token: token[:2] + "!" + token[2:],  # outside the alphabet
        lambda token: token[:2] + "\n" + token[2:],
        lambda token: token.replace("-", "+").replace("_", "/"),  # the other alphabet
    ],
    ids=["padding", "double padding", "unused bits", "bang", "newline", "standard alphabet"],
)
def test_a_page_cursor_opens_only_in_its_canonical_encoding(variant: object) -> None:
    cursors = PageCursors(b"k" * 32)
    cursor = cursors.seal({"offset": 10, "query": "-_-_ >>>???"})
    data, mac = cursor.split(".")
    assert cursors.open(cursor)["offset"] == 10

    for forged in (variant(data) + "." + mac, data + "." + variant(mac)):  # type: ignore[operator]
        if forged == cursor:
            continue
        with pytest.raises(StalePage):
            cursors.open(forged)


def test_base64url_round_trips() -> None:
    from engram.canonical import b64url, unb64url

    for size in range(1, 40):
        data = bytes(range(size))
        assert unb64url(b64url(data)) == data


@pytest.mark.parametrize("bad", ["", "A", "AB=", "A=B", "QR", "é", "AAAA====", "AA AA", "AA+/"])
def test_base64url_refuses_every_other_spelling(bad: str) -> None:
    from engram.canonical import unb64url

    with pytest.raises(ValueError, match="base64url"):
        unb64url(bad)
