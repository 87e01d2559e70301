"""Atomic writes, backups, and files that cannot be parsed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.errors import HostConfigUnparseable
from engram.hosts.command import HostEnv
from engram.hosts.files import Change, apply, backup_path, read_text
from engram.hosts.link import LinkOptions, plan_link
from engram.hosts.registry import TARGETS

BACKUPS_DIR = "state/engram/backups"


def _apply(changes: list[Change], root: Path) -> list[Change]:
    return apply(changes, root / BACKUPS_DIR, (root,))


def test_a_change_is_written_atomically_with_a_private_backup_outside_the_folder(
    tmp_path: Path,
) -> None:
    """The previous version goes to engram's own backup folder, readable by its owner
    only, never beside the file: in a repository it would sit untracked with whatever
    the file held (another server's API key)."""
    folder = tmp_path / "repo"
    folder.mkdir()
    path = folder / "settings.json"
    path.write_text('{"other": {"env": {"KEY": "sk-secret"}}}\n')
    path.chmod(0o640)
    _apply([Change(path, "{}\n", '{"a": 1}\n', "test")], tmp_path)
    assert path.read_text() == '{"a": 1}\n'
    backup = backup_path(tmp_path / BACKUPS_DIR, path)
    assert backup.parent == tmp_path / BACKUPS_DIR
    assert backup.name.endswith("-settings.json")
    assert backup.read_text() == '{"other": {"env": {"KEY": "sk-secret"}}}\n'
    assert backup.stat().st_mode & 0o777 == 0o600
    assert path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in folder.iterdir()) == ["settings.json"]


def test_a_removal_takes_the_folders_it_empties_up_to_the_root(tmp_path: Path) -> None:
    command = tmp_path / ".claude" / "commands" / "engram.md"
    command.parent.mkdir(parents=True)
    command.write_text("engram:generated\n")
    (tmp_path / ".claude" / "settings.json").write_text("{}\n")

    _apply([Change(command, "engram:generated\n", None, "test")], tmp_path)

    assert sorted(p.name for p in (tmp_path / ".claude").iterdir()) == ["settings.json"]
    (tmp_path / ".claude" / "settings.json").unlink()
    other = tmp_path / ".cursor" / "commands" / "engram.md"
    other.parent.mkdir(parents=True)
    other.write_text("x")
    _apply([Change(other, "x", None, "test")], tmp_path)
    assert not (tmp_path / ".cursor").exists()
    assert tmp_path.is_dir()


def test_a_symlinked_config_keeps_its_link_and_its_target_changes(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text("{}\n")
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    _apply([Change(link, "{}\n", "[]\n", "test")], tmp_path)
    assert link.is_symlink()
    assert real.read_text() == "[]\n"


def test_a_removed_file_leaves_no_backup(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text("{}")
    _apply([Change(path, "{}", None, "test")], tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_non_utf8_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(HostConfigUnparseable):
        read_text(path)


@pytest.mark.parametrize(
    ("name", "relative", "broken"),
    [
        ("claude", ".mcp.json", '{\n  "mcpServers": {\n    "x": {,\n  }\n}\n'),
        ("gemini", ".gemini/settings.json", '{\n  "mcpServers": {\n  /* open\n'),
        ("cursor", ".cursor/mcp.json", '{"mcpServers": {"x": 1} // comments are not JSON\n}'),
        ("opencode", "opencode.json", '{\n  "mcp": {\n    "x": [1 2]\n  }\n}\n'),
    ],
)
def test_a_file_that_cannot_be_parsed_is_never_overwritten(
    env: HostEnv, name: str, relative: str, broken: str
) -> None:
    path = env.workspace / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(broken)
    with pytest.raises(HostConfigUnparseable) as caught:
        plan_link(TARGETS[name], "workspace", env, LinkOptions(hooks=True))
    assert caught.value.detail.startswith(f"{path}: line ")
    assert path.read_text() == broken
    assert not env.backups.exists()


def test_a_byte_order_mark_survives(env: HostEnv) -> None:
    path = env.workspace / ".mcp.json"
    path.write_text('\ufeff{"mcpServers": {}}\n', encoding="utf-8")
    apply(plan_link(TARGETS["claude"], "workspace", env, LinkOptions()).changes, env.backups, ())
    assert path.read_bytes().startswith(b"\xef\xbb\xbf{")


def test_new_files_get_the_usual_permissions(env: HostEnv) -> None:
    apply(plan_link(TARGETS["claude"], "workspace", env, LinkOptions()).changes, env.backups, ())
    mode = (env.workspace / ".mcp.json").stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_a_diff_masks_secrets_on_both_sides_and_the_write_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    before = '{"mcpServers": {"x": {"env": {"KEY": "sk-SECRET-1"}}}}\n'
    after = '{"mcpServers": {"x": {"env": {"KEY": "sk-SECRET-2"}}, "engram": {}}}\n'
    change = Change(path, before, after, "added mcpServers.engram")
    assert change.diff().splitlines()[2:] == [
        "@@ -1 +1 @@",
        '-{"mcpServers": {"x": {"env": {"KEY": "…"}}}}',
        '+{"mcpServers": {"x": {"env": {"KEY": "…"}}, "engram": {}}}',
    ]
    _apply([change], tmp_path)
    assert path.read_text() == after
