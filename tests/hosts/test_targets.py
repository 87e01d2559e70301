"""Every target, in a temporary home and workspace, against real-world-shaped files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from engram.hosts.claude import add_command
from engram.hosts.command import PIN_VARIABLE, HostEnv
from engram.hosts.files import apply, backup_path
from engram.hosts.jsonc import parse, to_python
from engram.hosts.link import LinkOptions, Mode, plan_link, plan_unlink
from engram.hosts.registry import TARGETS
from engram.hosts.target import Scope
from tests.hosts.conftest import install_fixture

#: (target, scope, --hooks, {path: fixture}); a path starting with ~/ is in the home.
CASES: list[tuple[str, Scope, bool, dict[str, str]]] = [
    (
        "claude",
        "workspace",
        True,
        {".mcp.json": "claude.mcp.json", ".claude/settings.json": "claude.settings.json"},
    ),
    ("claude", "workspace", False, {".mcp.json": "claude.mcp.json"}),
    ("gemini", "workspace", True, {".gemini/settings.json": "gemini.settings.json"}),
    ("gemini", "global", False, {"~/.gemini/settings.json": "gemini.settings.json"}),
    (
        "cursor",
        "workspace",
        True,
        {
            ".cursor/mcp.json": "cursor.mcp.json",
            ".cursor/hooks.json": "cursor.hooks.json",
            "AGENTS.md": "AGENTS.md",
        },
    ),
    ("cursor", "global", False, {}),
    ("opencode", "workspace", False, {"opencode.jsonc": "opencode.jsonc"}),
    ("opencode", "global", False, {"~/.config/opencode/opencode.jsonc": "opencode.jsonc"}),
    ("codex", "global", False, {"~/.codex/config.toml": "codex.config.toml"}),
    ("codex", "workspace", True, {"AGENTS.md": "AGENTS.md"}),
    (
        "codex",
        "workspace",
        False,
        {".codex/config.toml": "codex.config.toml", "AGENTS.md": "AGENTS.md"},
    ),
    (
        "antigravity",
        "global",
        False,
        {"~/.gemini/antigravity/mcp_config.json": "antigravity.mcp_config.json"},
    ),
    (
        "windsurf",
        "global",
        False,
        {"~/.codeium/windsurf/mcp_config.json": "windsurf.mcp_config.json"},
    ),
]


def _where(relative: str, env: HostEnv) -> Path:
    if relative.startswith("~/"):
        return env.home / relative[2:]
    return env.workspace / relative


def _files(env: HostEnv) -> dict[Path, bytes]:
    found = {}
    for base in (env.home, env.workspace):
        for path in base.rglob("*"):
            if path.is_file() and not path.is_relative_to(env.backups):
                found[path] = path.read_bytes()
    return found


def _read(path: Path) -> Any:
    text = path.read_text()
    if path.suffix == ".toml":
        return tomlkit.parse(text).unwrap()
    return to_python(text, parse(text, jsonc=True))


def _keeps(after: Any, original: Any) -> bool:
    """Every key and list item of ``original`` is still in ``after`` (lists may grow)."""
    if isinstance(original, dict):
        return isinstance(after, dict) and all(
            key in after and _keeps(after[key], value) for key, value in original.items()
        )
    if isinstance(original, list):
        return isinstance(after, list) and after[: len(original)] == original
    return bool(after == original)


def _unlink(name: str, scope: Scope, env: HostEnv) -> list[Any]:
    return apply(
        plan_unlink(TARGETS[name], scope, env).changes, env.backups, (env.workspace, env.home)
    )


def _link(name: str, scope: Scope, env: HostEnv, hooks: bool, **options: Any) -> list[Any]:
    plan = plan_link(TARGETS[name], scope, env, LinkOptions(hooks=hooks, **options))
    return apply(plan.changes, env.backups, (env.workspace, env.home))


@pytest.mark.parametrize(
    ("name", "scope", "hooks", "fixtures"), CASES, ids=lambda case: str(case)[:40]
)
def test_link_twice_equals_once_and_unlink_restores_every_byte(
    env: HostEnv, name: str, scope: Scope, hooks: bool, fixtures: dict[str, str]
) -> None:
    for relative, fixture in fixtures.items():
        install_fixture(fixture, _where(relative, env))
    before = _files(env)

    assert _link(name, scope, env, hooks)
    linked = _files(env)
    assert _link(name, scope, env, hooks) == []
    assert _files(env) == linked

    apply(plan_unlink(TARGETS[name], scope, env).changes, env.backups, (env.workspace, env.home))
    assert _files(env) == before


@pytest.mark.parametrize(("name", "scope", "hooks", "fixtures"), CASES, ids=lambda c: str(c)[:40])
def test_link_keeps_every_other_server_and_key(
    env: HostEnv, name: str, scope: Scope, hooks: bool, fixtures: dict[str, str]
) -> None:
    originals = {}
    for relative, fixture in fixtures.items():
        path = _where(relative, env)
        install_fixture(fixture, path)
        if not relative.endswith(".md"):
            originals[path] = _read(path)
    _link(name, scope, env, hooks)
    for path, original in originals.items():
        assert _keeps(_read(path), original), path


def test_claude_workspace_entry_is_pinned_and_always_loads_without_a_hook(env: HostEnv) -> None:
    _link("claude", "workspace", env, hooks=False)
    entry = json.loads((env.workspace / ".mcp.json").read_text())["mcpServers"]["engram"]
    script = str(env.executable.with_name("engram-mcp"))
    assert entry == {
        "command": script,
        "args": ["--always-load"],
        "env": {PIN_VARIABLE: env.version},
    }


def test_claude_hook_being_installed_keeps_always_load_out(env: HostEnv) -> None:
    _link("claude", "workspace", env, hooks=True)
    entry = json.loads((env.workspace / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry["args"] == []


def test_an_existing_always_load_changes_only_with_force_or_upgrade(env: HostEnv) -> None:
    _link("claude", "workspace", env, hooks=False)
    plan = plan_link(TARGETS["claude"], "workspace", env, LinkOptions(hooks=True))
    apply(plan.changes, env.backups, (env.workspace, env.home))
    path = env.workspace / ".mcp.json"
    assert json.loads(path.read_text())["mcpServers"]["engram"]["args"] == ["--always-load"]
    assert plan.notes == [
        f"kept your engram entry's args in {path} "
        "(engram's differ; --force replaces them; `engram upgrade` drops --always-load)"
    ]

    apply(
        plan_link(TARGETS["claude"], "workspace", env, LinkOptions(mode="upgrade")).changes,
        env.backups,
        (env.workspace, env.home),
    )
    assert json.loads(path.read_text())["mcpServers"]["engram"]["args"] == []


@pytest.mark.parametrize(
    "name", ["codex", "cursor", "gemini", "windsurf", "opencode", "antigravity"]
)
def test_no_other_host_ever_receives_always_load(env: HostEnv, name: str) -> None:
    for scope in ("workspace", "global"):
        _link(name, scope, env, hooks=False)
    written = [path.read_text() for path in _files(env)]
    assert not any("--always-load" in text for text in written)


def test_codex_block_asks_the_human_before_every_commit(env: HostEnv) -> None:
    _link("codex", "global", env, hooks=False)
    config = tomlkit.parse((env.home / ".codex" / "config.toml").read_text()).unwrap()
    entry = config["mcp_servers"]["engram"]
    assert entry["tools"] == {"engram_commit": {"approval_mode": "approve"}}
    assert entry["command"] == str(env.executable.with_name("engram-mcp"))


HAND_WRITTEN_CODEX = """# mine
model = "o3"

[mcp_servers.engram]
command = "engram-mcp"
args = ["--no-elicitation"]

[mcp_servers.other]
command = "x"
"""


@pytest.mark.parametrize("mode", ["link", "upgrade"])
def test_repinning_a_hand_written_codex_table_adds_the_commit_approval(
    env: HostEnv, mode: Mode
) -> None:
    path = env.home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(HAND_WRITTEN_CODEX)
    plan = plan_link(TARGETS["codex"], "global", env, LinkOptions(mode=mode))
    apply(plan.changes, env.backups, (env.workspace, env.home))
    script = env.executable.with_name("engram-mcp")
    # Replaced where it stands: engram's part is its tables, with no marker comments.
    assert path.read_text() == (
        '# mine\nmodel = "o3"\n\n'
        "[mcp_servers.engram]\n"
        f'command = "{script}"\n'
        'args = ["--no-elicitation"]\n\n'
        "[mcp_servers.engram.env]\n"
        f'{PIN_VARIABLE} = "{env.version}"\n\n'
        "[mcp_servers.engram.tools.engram_commit]\n"
        'approval_mode = "approve"\n\n'
        '[mcp_servers.other]\ncommand = "x"\n'
    )
    assert plan.notes[0] == (
        f'set tools.engram_commit approval_mode = "approve" in {path}, '
        "so that the host asks you before every engram_commit"
    )


def test_a_codex_approval_mode_other_than_approve_is_set_back_other_tools_kept(
    env: HostEnv,
) -> None:
    path = env.home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(
        '[mcp_servers.engram]\ncommand = "engram-mcp"\n\n'
        '[mcp_servers.engram.tools.engram_commit]\napproval_mode = "auto"\n\n'
        "[mcp_servers.engram.tools.engram_load]\nenabled = false\n"
    )
    _link("codex", "global", env, hooks=False)
    entry = tomlkit.parse(path.read_text()).unwrap()["mcp_servers"]["engram"]
    assert entry["tools"] == {
        "engram_commit": {"approval_mode": "approve"},
        "engram_load": {"enabled": False},
    }


def test_opencode_entry_has_the_required_shape(home: Path, workspace: Path) -> None:
    bin_dir = home / "bin"
    bin_dir.mkdir()
    (bin_dir / "engram-mcp").write_text("#!/bin/sh\n")
    (bin_dir / "engram-mcp").chmod(0o755)
    env = HostEnv.from_environ(workspace, {"HOME": str(home), "PATH": str(bin_dir)})
    _link("opencode", "workspace", env, hooks=False, portable=True)
    config = json.loads((workspace / "opencode.json").read_text())
    assert config == {
        "mcp": {"engram": {"type": "local", "command": ["engram-mcp"], "args": [], "enabled": True}}
    }


def test_windsurf_and_antigravity_workspace_links_are_skipped_with_a_reason(env: HostEnv) -> None:
    for name in ("windsurf", "antigravity"):
        plan = plan_link(TARGETS[name], "workspace", env, LinkOptions())
        assert any("skipped" in note for note in plan.notes)
        assert all(".mcp" not in str(change.path) for change in plan.changes)


def test_link_repins_an_entry_written_by_another_installation(env: HostEnv) -> None:
    path = env.workspace / ".cursor" / "mcp.json"
    path.parent.mkdir()
    old = {"type": "stdio", "command": "/old/venv/bin/engram-mcp", "args": ["--no-elicitation"]}
    path.write_text(json.dumps({"mcpServers": {"engram": {**old, "env": {PIN_VARIABLE: "0.0.9"}}}}))
    _link("cursor", "workspace", env, hooks=False)
    entry = json.loads(path.read_text())["mcpServers"]["engram"]
    assert entry == {
        "type": "stdio",
        "command": str(env.executable.with_name("engram-mcp")),
        "args": ["--no-elicitation"],
        "env": {PIN_VARIABLE: env.version},
    }
    assert backup_path(env.backups, path).exists()


NPX = ["-y", "--package", "@the-long-ride/engram@0.0.28", "engram-mcp"]
UVX = ["--from", "engram==0.0.5", "engram-mcp"]


@pytest.mark.parametrize(("runner", "runner_args"), [("npx", NPX), ("uvx", UVX)])
def test_link_repins_a_runner_entry_to_this_engram_and_says_so(
    env: HostEnv, runner: str, runner_args: list[str]
) -> None:
    path = env.workspace / ".mcp.json"
    old = {"command": runner, "args": [*runner_args, "--no-elicitation"], "cwd": "/srv"}
    path.write_text(json.dumps({"mcpServers": {"engram": old}}))
    plan = plan_link(TARGETS["claude"], "workspace", env, LinkOptions())
    apply(plan.changes, env.backups, (env.workspace, env.home))
    script = str(env.executable.with_name("engram-mcp"))
    assert json.loads(path.read_text())["mcpServers"]["engram"] == {
        "command": script,
        "args": ["--no-elicitation"],
        "cwd": "/srv",
        "env": {PIN_VARIABLE: env.version},
    }
    launcher = " ".join([runner, *runner_args])
    assert plan.notes == [
        f"re-pinned your engram entry in {path}: engram-mcp was started by `{launcher}`, "
        f"now by this engram's `{script}`",
        f"kept your engram entry's args and cwd in {path} "
        "(engram's differ; --force replaces them; `engram upgrade` adds --always-load)",
    ]


def test_upgrade_repins_a_runner_entry_and_applies_the_always_load_rule(env: HostEnv) -> None:
    path = env.workspace / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"engram": {"command": "npx", "args": NPX}}}))
    plan = plan_link(TARGETS["claude"], "workspace", env, LinkOptions(mode="upgrade"))
    apply(plan.changes, env.backups, (env.workspace, env.home))
    script = str(env.executable.with_name("engram-mcp"))
    assert json.loads(path.read_text())["mcpServers"]["engram"] == {
        "command": script,
        "args": ["--always-load"],
        "env": {PIN_VARIABLE: env.version},
    }
    assert len(plan.notes) == 1


def test_upgrade_repairs_an_entry_left_with_a_runners_arguments(env: HostEnv) -> None:
    path = env.workspace / ".cursor" / "mcp.json"
    path.parent.mkdir()
    script = str(env.executable.with_name("engram-mcp"))
    mangled = {"type": "stdio", "command": script, "args": [*NPX, "--root", "/p/engram-mcp"]}
    path.write_text(json.dumps({"mcpServers": {"engram": mangled}}))
    _link("cursor", "workspace", env, hooks=False, mode="upgrade")
    assert json.loads(path.read_text())["mcpServers"]["engram"] == {
        "type": "stdio",
        "command": script,
        "args": ["--root", "/p/engram-mcp"],
        "env": {PIN_VARIABLE: env.version},
    }


def test_opencode_runner_entry_is_repinned_in_its_command_list(env: HostEnv) -> None:
    path = env.workspace / "opencode.json"
    old = {"type": "local", "command": ["npx", *NPX], "args": ["--no-elicitation"]}
    path.write_text(json.dumps({"mcp": {"engram": old}}))
    _link("opencode", "workspace", env, hooks=False)
    assert json.loads(path.read_text())["mcp"]["engram"] == {
        "type": "local",
        "command": [str(env.executable.with_name("engram-mcp"))],
        "args": ["--no-elicitation"],
        "environment": {PIN_VARIABLE: env.version},
    }


@pytest.mark.parametrize("mode", ["link", "upgrade"])
def test_an_entry_naming_no_engram_mcp_is_kept_as_it_is_with_a_note(
    env: HostEnv, mode: Mode
) -> None:
    path = env.workspace / ".mcp.json"
    path.write_text('{"mcpServers": {"engram": {"command": "/opt/run-engram.sh", "args": ["-v"]}}}')
    plan = plan_link(TARGETS["claude"], "workspace", env, LinkOptions(mode=mode))
    assert [change.path for change in plan.changes if change.path == path] == []
    assert plan.notes[0] == (
        f"kept your engram entry in {path} as it is: `/opt/run-engram.sh -v` does not name "
        "engram-mcp, so engram cannot re-pin it (--force replaces it with engram's)"
    )


CONTAINER = ["run", "-i", "--rm", "-e", "TOKEN=s3cret", "ghcr.io/me/engram", "engram-mcp"]


@pytest.mark.parametrize("mode", ["link", "upgrade"])
@pytest.mark.parametrize(
    ("program", "args"),
    [("docker", [*CONTAINER, "--root", "/data"]), ("ssh", ["box", "engram-mcp", "--root", "/p"])],
)
def test_an_entry_starting_engram_mcp_through_another_launcher_is_kept_with_a_note(
    env: HostEnv, mode: Mode, program: str, args: list[str]
) -> None:
    path = env.workspace / ".mcp.json"
    text = json.dumps({"mcpServers": {"engram": {"command": program, "args": args}}})
    path.write_text(text)
    plan = plan_link(TARGETS["claude"], "workspace", env, LinkOptions(mode=mode))
    assert [change.path for change in plan.changes if change.path == path] == []
    assert plan.notes == [
        f"kept your engram entry in {path} as it is: engram-mcp runs through `{program}`, "
        "which engram cannot re-pin (--force replaces it with engram's)"
    ]
    apply(plan.changes, env.backups, (env.workspace, env.home))
    assert path.read_text() == text


def test_a_codex_entry_run_through_docker_keeps_its_command_and_gains_the_approval(
    env: HostEnv,
) -> None:
    config = env.home / ".codex" / "config.toml"
    config.parent.mkdir()
    args = json.dumps(CONTAINER)
    config.write_text(f'[mcp_servers.engram]\ncommand = "docker"\nargs = {args}\n')
    plan = plan_link(TARGETS["codex"], "global", env, LinkOptions(mode="upgrade"))
    apply(plan.changes, env.backups, (env.workspace, env.home))
    entry = tomlkit.parse(config.read_text())["mcp_servers"]["engram"]
    assert (entry["command"], entry["args"]) == ("docker", CONTAINER)
    assert entry["tools"]["engram_commit"]["approval_mode"] == "approve"


def test_force_replaces_an_existing_entry_with_engrams(env: HostEnv) -> None:
    path = env.workspace / ".mcp.json"
    path.write_text(
        '{"mcpServers": {"engram": {"command": "mine", "args": ["--x"], "cwd": "/"}}}\n'
    )
    _link("claude", "workspace", env, hooks=False, force=True)
    entry = json.loads(path.read_text())["mcpServers"]["engram"]
    assert entry["args"] == ["--always-load"]
    assert "cwd" not in entry


def test_a_hand_written_slash_command_is_left_alone_unless_forced(env: HostEnv) -> None:
    path = env.workspace / ".claude" / "commands" / "engram.md"
    path.parent.mkdir(parents=True)
    path.write_text("my own command\n")
    plan = plan_link(TARGETS["claude"], "workspace", env, LinkOptions())
    apply(plan.changes, env.backups, (env.workspace, env.home))
    assert path.read_text() == "my own command\n"
    assert any("not written by engram" in note for note in plan.notes)
    apply(
        plan_unlink(TARGETS["claude"], "workspace", env).changes,
        env.backups,
        (env.workspace, env.home),
    )
    assert path.read_text() == "my own command\n"
    _link("claude", "workspace", env, hooks=False, force=True)
    assert "engram:generated" in path.read_text()


def test_opencode_workspace_prefers_the_file_that_exists(env: HostEnv) -> None:
    config = env.workspace / "opencode.jsonc"
    config.write_text("{}\n")
    _link("opencode", "workspace", env, hooks=False)
    assert not (env.workspace / "opencode.json").exists()
    assert "engram" in config.read_text()


def test_antigravity_uses_the_newer_file_when_only_it_exists(env: HostEnv) -> None:
    newer = env.home / ".gemini" / "config" / "mcp_config.json"
    newer.parent.mkdir(parents=True)
    newer.write_text("{}\n")
    _link("antigravity", "global", env, hooks=False)
    assert "engram" in newer.read_text()
    assert not (env.home / ".gemini" / "antigravity").exists()


def test_cursor_global_link_builds_the_local_plugin(env: HostEnv) -> None:
    _link("cursor", "global", env, hooks=False)
    folder = env.home / ".cursor" / "plugins" / "local" / "engram"
    manifest = json.loads((folder / ".cursor-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "engram"
    assert "engram" in json.loads((folder / "mcp.json").read_text())["mcpServers"]
    apply(
        plan_unlink(TARGETS["cursor"], "global", env).changes,
        env.backups,
        (env.workspace, env.home),
    )
    assert not [path for path in folder.rglob("*") if path.is_file()]


def test_unlinking_one_host_keeps_the_agents_md_block_another_still_uses(env: HostEnv) -> None:
    _link("cursor", "workspace", env, hooks=False)
    _link("opencode", "workspace", env, hooks=False)
    apply(
        plan_unlink(TARGETS["cursor"], "workspace", env).changes,
        env.backups,
        (env.workspace, env.home),
    )
    assert "<!-- engram:start -->" in (env.workspace / "AGENTS.md").read_text()
    apply(
        plan_unlink(TARGETS["opencode"], "workspace", env).changes,
        env.backups,
        (env.workspace, env.home),
    )
    assert not (env.workspace / "AGENTS.md").exists()


def test_the_printed_claude_command_carries_only_engrams_own_variables() -> None:
    entry = {"command": "/v/engram-mcp", "args": [], "env": {"API_KEY": "s", PIN_VARIABLE: "1"}}
    assert add_command(entry) == (
        f"claude mcp add --scope user engram --env={PIN_VARIABLE}=1 -- /v/engram-mcp"
    )
