"""Codex: engram's ``[mcp_servers.engram]`` tables in files Codex itself rewrote.

The fixtures in ``fixtures/codex/`` are real files: ``legacy-*-linked.toml`` were
written by engram 0.1 (its managed block, ``# engram:start`` … ``# engram:end``), and
every ``legacy-*-after-*.toml`` is what Codex CLI 0.171.0 made of one of them
(``codex mcp add other -- echo hi``, ``codex mcp remove engram``, ``codex mcp remove
aaa``, ``codex features enable hooks``, ``codex exec --trust``), in a temporary home.
``user-before-link.toml`` is the file engram 0.1 linked into ``legacy-user-linked``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engram.cli.main import cli
from engram.hosts.codex import HOOK_NOTE
from engram.hosts.command import PIN_VARIABLE, HostEnv
from engram.hosts.files import Change, apply
from engram.hosts.link import LinkOptions, Mode, Plan, plan_link, plan_unlink
from engram.hosts.registry import TARGETS
from tests.hosts.conftest import FIXTURES, install_fixture

CODEX = TARGETS["codex"]

#: engram's tables as a re-pin leaves an entry Codex rewrote: Codex dropped
#: ``args = []`` and kept the approval table, so ``args`` and ``env`` come back after it.
REPINNED = """[mcp_servers.engram]
command = "{script}"
args = []

[mcp_servers.engram.tools.engram_commit]
approval_mode = "approve"

[mcp_servers.engram.env]
{pin} = "{version}"
"""
#: engram's tables as a re-pin leaves an entry that kept its env table.
REPINNED_WITH_ENV = """[mcp_servers.engram]
command = "{script}"
args = []

[mcp_servers.engram.env]
{pin} = "{version}"

[mcp_servers.engram.tools.engram_commit]
approval_mode = "approve"
"""
#: engram's own new entry.
NEW = REPINNED_WITH_ENV
OTHER = '[mcp_servers.other]\ncommand = "echo"\nargs = ["hi"]\n'
USER_HEAD = '# my codex config\nmodel = "gpt-5"\n\n'
AAA = (
    '[mcp_servers.aaa]\ncommand = "aaa-server"\nargs = ["--one"]\n\n'
    '[mcp_servers.aaa.env]\nFOO = "bar"\n'
)
PROFILE = '[profiles.fast]\nmodel = "gpt-5-mini"\n'
FEATURES = "[features]\nhooks = true\n"
TRUST = '[projects."/tmp/cxfix/proj"]\ntrust_level = "trusted"\n'


def _apply(plan: Plan, env: HostEnv) -> list[Change]:
    return apply(plan.changes, env.backups, (env.workspace, env.home))


def _fill(text: str, env: HostEnv) -> str:
    script = env.executable.with_name("engram-mcp")
    return text.format(script=script, pin=PIN_VARIABLE, version=env.version)


def _user_config(env: HostEnv, fixture: str) -> Path:
    path = env.home / ".codex" / "config.toml"
    install_fixture(f"codex/{fixture}", path)
    return path


#: fixture, then the file after `engram link codex --global` (`upgrade` gives the same)
#: and after `engram unlink codex --global`; ``None``: the file is removed.
REWRITTEN: list[tuple[str, str, str | None]] = [
    ("legacy-linked.toml", REPINNED, None),
    ("legacy-after-mcp-add-other.toml", REPINNED + "\n" + OTHER, OTHER),
    ("legacy-pinned-after-mcp-add-other.toml", REPINNED_WITH_ENV + "\n" + OTHER, OTHER),
    ("legacy-after-features-enable-hooks.toml", REPINNED + "\n" + FEATURES, FEATURES),
    ("legacy-after-exec-trust.toml", REPINNED + "\n" + TRUST, TRUST),
    (
        "legacy-user-after-mcp-add-other.toml",
        USER_HEAD + AAA + "\n" + REPINNED + "\n" + OTHER + "\n" + PROFILE,
        USER_HEAD + AAA + "\n" + OTHER + "\n" + PROFILE,
    ),
    (
        "legacy-user-after-mcp-remove-aaa.toml",
        USER_HEAD + REPINNED + "\n" + PROFILE,
        USER_HEAD + PROFILE,
    ),
]


@pytest.mark.parametrize(("fixture", "linked", "unlinked"), REWRITTEN, ids=lambda v: str(v)[:30])
@pytest.mark.parametrize("mode", ["link", "upgrade"])
def test_link_and_upgrade_repin_an_entry_codex_rewrote_and_drop_the_old_markers(
    env: HostEnv, fixture: str, linked: str, unlinked: str | None, mode: Mode
) -> None:
    path = _user_config(env, fixture)
    plan = plan_link(CODEX, "global", env, LinkOptions(mode=mode))
    assert [change.summary for change in _apply(plan, env)] == ["updated mcp_servers.engram"]
    assert path.read_text() == _fill(linked, env)
    assert plan_link(CODEX, "global", env, LinkOptions(mode=mode)).changes == []


@pytest.mark.parametrize(("fixture", "linked", "unlinked"), REWRITTEN, ids=lambda v: str(v)[:30])
def test_unlink_removes_only_engrams_tables_from_a_file_codex_rewrote(
    env: HostEnv, fixture: str, linked: str, unlinked: str | None
) -> None:
    path = _user_config(env, fixture)
    _apply(plan_unlink(CODEX, "global", env), env)
    assert (path.read_text() if path.exists() else None) == unlinked


def test_unlink_gives_back_the_file_engram_01_linked_byte_for_byte(env: HostEnv) -> None:
    path = _user_config(env, "legacy-user-linked.toml")
    _apply(plan_unlink(CODEX, "global", env), env)
    assert path.read_bytes() == (FIXTURES / "codex" / "user-before-link.toml").read_bytes()


@pytest.mark.parametrize(
    "fixture", ["legacy-after-mcp-remove-engram.toml", "legacy-user-after-mcp-remove-engram.toml"]
)
def test_link_after_codex_removed_engram_drops_the_lone_end_marker(
    env: HostEnv, fixture: str
) -> None:
    path = _user_config(env, fixture)
    before = path.read_text()
    # Nothing of engram's is left to unlink or upgrade: the file stays as it is.
    assert plan_unlink(CODEX, "global", env).changes == []
    assert plan_link(CODEX, "global", env, LinkOptions(mode="upgrade")).changes == []
    _apply(plan_link(CODEX, "global", env, LinkOptions()), env)
    rest = before.replace("# engram:end\n", "")
    assert path.read_text() == (rest + "\n" if rest else "") + _fill(NEW, env)
    _apply(plan_unlink(CODEX, "global", env), env)
    assert (path.read_text() if path.exists() else "") == rest


def test_a_user_table_codex_appended_inside_the_old_block_survives_link_then_unlink(
    env: HostEnv,
) -> None:
    path = _user_config(env, "legacy-after-features-enable-hooks.toml")
    _apply(plan_link(CODEX, "global", env, LinkOptions()), env)
    _apply(plan_unlink(CODEX, "global", env), env)
    assert path.read_text() == FEATURES


def test_upgrade_rewrites_a_codex_rewritten_entry_and_fails_when_it_cannot(
    home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    env = HostEnv.from_environ(workspace)
    path = _user_config(env, "legacy-after-mcp-add-other.toml")
    result = CliRunner().invoke(cli, ["upgrade"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "wrote ~/.codex/config.toml: updated mcp_servers.engram" in result.output
    assert path.read_text() == _fill(REPINNED, env) + "\n" + OTHER

    # An entry engram cannot write back as a table: reported, nothing written, exit 1.
    inline = 'mcp_servers = { engram = { command = "engram-mcp" } }\n'
    path.write_text(inline)
    result = CliRunner().invoke(cli, ["upgrade"], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stderr == (
        f"engram: {path}: engram's [mcp_servers.engram] table cannot be added here "
        "(is mcp_servers written as an inline table?); the file was left unchanged\n"
    )
    assert path.read_text() == inline


def test_a_codex_workspace_link_writes_the_projects_codex_config(env: HostEnv) -> None:
    path = env.workspace / ".codex" / "config.toml"
    plan = plan_link(CODEX, "workspace", env, LinkOptions())
    _apply(plan, env)
    assert path.read_text() == _fill(NEW, env)
    assert not any("skipped" in note for note in plan.notes)
    _apply(plan_unlink(CODEX, "workspace", env), env)
    assert not path.exists()


def test_a_codex_workspace_link_keeps_the_projects_other_settings(env: HostEnv) -> None:
    path = env.workspace / ".codex" / "config.toml"
    path.parent.mkdir()
    mine = '# project settings\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    path.write_text(mine)
    _apply(plan_link(CODEX, "workspace", env, LinkOptions()), env)
    assert path.read_text() == mine + "\n" + _fill(NEW, env)
    _apply(plan_unlink(CODEX, "workspace", env), env)
    assert path.read_text() == mine


def test_codex_hooks_note_names_the_two_trust_gates_and_no_feature_flag(env: HostEnv) -> None:
    plan = plan_link(CODEX, "workspace", env, LinkOptions(hooks=True))
    assert HOOK_NOTE in plan.notes
    assert HOOK_NOTE == (
        "Codex runs this hook only in a trusted project, and only once you trust the hook "
        'itself: start codex in this project and choose "Trust all and continue" when it '
        'says "Hooks need review" (or review it with /hooks); `engram doctor` checks both'
    )
    assert not any("codex_hooks" in note for note in plan.notes)
    written = [change.after or "" for change in plan.changes]
    assert not any("codex_hooks" in text or "[features]" in text for text in written)


def test_a_workspace_link_in_the_home_leaves_the_users_file_to_global(home: Path) -> None:
    env = HostEnv.from_environ(home, {"HOME": str(home), "PATH": "/nonexistent"})
    plan = plan_link(CODEX, "workspace", env, LinkOptions())
    assert plan.changes[0].path == home / "AGENTS.md"
    assert [change.path.name for change in plan.changes] == ["AGENTS.md"]
    assert plan.notes == [
        "Codex: workspace MCP registration skipped: this workspace is your home, whose "
        ".codex/config.toml is Codex's user file: run `engram link codex --global` to "
        "register engram there"
    ]
