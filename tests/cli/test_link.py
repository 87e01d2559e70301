"""`engram link`, `unlink` and `upgrade` through the command line."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from engram import __version__
from engram.cli.main import main
from engram.hosts.command import PIN_VARIABLE
from engram.project.layout import init_layout
from tests.cli.conftest import SCRIPTS, Run


def test_link_writes_the_entry_hook_command_and_block_and_says_so(
    run: Run, workspace: Path
) -> None:
    result = run("link", "claude", "--hooks")
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "wrote .mcp.json: added mcpServers.engram",
        "wrote .claude/settings.json: SessionStart hook",
        "wrote .claude/commands/engram.md: /engram command",
        "wrote CLAUDE.md: engram block",
    ]
    assert run("link", "claude", "--hooks").output == "nothing to change\n"


def test_dry_run_shows_a_diff_and_writes_nothing(run: Run, workspace: Path) -> None:
    result = run("link", "cursor", "--dry-run")
    assert result.exit_code == 0
    assert "would change .cursor/mcp.json: added mcpServers.engram" in result.output
    assert '+      "type": "stdio",' in result.output
    assert list(workspace.iterdir()) == []


def test_unlink_takes_back_exactly_what_link_wrote(run: Run, workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("# Team notes\n")
    run("link", "opencode")
    run("link", "codex", "--hooks")
    run("unlink", "codex")
    run("unlink", "opencode")
    # Nothing left behind: no backup in the repository, no empty .codex/ or .opencode/.
    left = sorted(str(p.relative_to(workspace)) for p in workspace.rglob("*"))
    assert left == ["AGENTS.md"]
    assert (workspace / "AGENTS.md").read_text() == "# Team notes\n"


def test_claude_global_prints_the_command_to_run(
    run: Run, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With engram-mcp on this shell's PATH too, the user registration names its
    absolute path: a claude started from a new shell (or an IDE) has another PATH."""
    monkeypatch.setenv("PATH", f"{SCRIPTS}:/usr/bin:/bin")
    result = run("link", "claude", "--global")
    assert result.output == (
        "note: run: claude mcp add --scope user engram "
        f"--env={PIN_VARIABLE}={__version__} -- {SCRIPTS / 'engram-mcp'} --always-load\n"
    )
    # Nothing registered in ~/.claude.json: no command to run.
    assert run("unlink", "claude", "--global").output == (
        f"note: engram is not registered in {home / '.claude.json'}\n"
    )
    (home / ".claude.json").write_text('{"mcpServers": {"engram": {"command": "engram-mcp"}}}')
    assert run("unlink", "claude", "--global").output == (
        "note: run: claude mcp remove --scope user engram\n"
    )


def test_claude_global_pinned_form_carries_the_version(run: Run) -> None:
    result = run("link", "claude", "--global")
    script = SCRIPTS / "engram-mcp"
    assert result.output == (
        "note: run: claude mcp add --scope user engram "
        f"--env={PIN_VARIABLE}={__version__} -- {script} --always-load\n"
    )


def test_link_all_links_the_hosts_found_on_this_machine(run: Run, home: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text("{}\n")
    result = run("link", "all", "--global")
    assert "~/.codex/config.toml: added mcp_servers.engram" in result.output
    assert "~/.gemini/settings.json: added mcpServers.engram" in result.output
    assert not (home / ".codeium").exists()


def test_link_list_shows_every_target_scope_and_state(run: Run) -> None:
    run("link", "gemini")
    lines = run("link", "list").output.splitlines()
    assert len(lines) == 14
    assert lines[6].split()[:4] == ["gemini", "workspace", "linked", ".gemini/settings.json"]
    assert lines[2].split()[:5] == ["codex", "workspace", "not", "linked", ".codex/config.toml"]


def test_upgrade_repins_every_linked_entry(run: Run, home: Path, workspace: Path) -> None:
    old = {"command": "/gone/engram-mcp", "args": [], "env": {PIN_VARIABLE: "0.0.1"}}
    (home / ".codeium" / "windsurf").mkdir(parents=True)
    config = home / ".codeium" / "windsurf" / "mcp_config.json"
    config.write_text(json.dumps({"mcpServers": {"engram": old, "other": {"command": "x"}}}))
    result = run("upgrade")
    assert result.exit_code == 0
    assert "~/.codeium/windsurf/mcp_config.json: updated mcpServers.engram" in result.output
    servers = json.loads(config.read_text())["mcpServers"]
    assert servers["engram"]["command"] == str(SCRIPTS / "engram-mcp")
    assert servers["engram"]["env"] == {PIN_VARIABLE: __version__}
    assert servers["other"] == {"command": "x"}
    assert not (workspace / ".mcp.json").exists()


def test_unparseable_file_stops_link_before_any_write_naming_file_and_line(
    run: Run, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = '{\n  "mcpServers": {\n    "github": {"command": "npx",}\n  }\n}\n'
    (workspace / ".mcp.json").write_text(broken)
    with pytest.raises(SystemExit) as done:
        main(["link", "claude", "--hooks"])
    assert done.value.code == 1
    error = capsys.readouterr().err
    assert error.startswith(
        f"engram: {workspace / '.mcp.json'}: line 3, column 32: not valid JSON (trailing comma)"
    )
    assert (workspace / ".mcp.json").read_text() == broken
    assert sorted(p.name for p in workspace.iterdir()) == [".mcp.json"]


def test_an_unknown_target_is_a_usage_error(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["link", "vim"])
    assert done.value.code == 2
    assert "unknown target 'vim'" in capsys.readouterr().err


def test_link_all_in_a_workspace_skips_what_has_no_workspace_file(run: Run, home: Path) -> None:
    (home / ".codeium" / "windsurf").mkdir(parents=True)
    (home / ".cursor").mkdir()
    result = run("link", "all")
    assert "wrote .cursor/mcp.json: added mcpServers.engram" in result.output
    assert "note: Windsurf: workspace MCP registration skipped" in result.output


def test_link_all_with_no_host_found_changes_nothing(run: Run, workspace: Path) -> None:
    result = run("link", "all")
    assert "no agent host found on this machine" in result.output
    assert result.output.endswith("nothing to change\n")
    assert list(workspace.iterdir()) == []


def test_link_repins_an_npx_entry_and_says_what_it_changed(run: Run, workspace: Path) -> None:
    npx = ["-y", "--package", "@the-long-ride/engram@0.0.28", "engram-mcp"]
    path = workspace / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"engram": {"command": "npx", "args": npx}}}))
    result = run("link", "claude")
    script = SCRIPTS / "engram-mcp"
    assert result.output.splitlines()[0] == "wrote .mcp.json: updated mcpServers.engram"
    assert result.output.splitlines()[-2:] == [
        f"note: re-pinned your engram entry in {path}: engram-mcp was started by "
        f"`npx {' '.join(npx)}`, now by this engram's `{script}`",
        f"note: kept your engram entry's args in {path} "
        "(engram's differ; --force replaces them; `engram upgrade` adds --always-load)",
    ]
    assert json.loads(path.read_text())["mcpServers"]["engram"] == {
        "command": str(script),
        "args": [],
        "env": {PIN_VARIABLE: __version__},
    }
    upgraded = {
        "command": str(script),
        "args": ["--always-load"],
        "env": {PIN_VARIABLE: __version__},
    }
    dry = run("upgrade", "--dry-run").output.splitlines()
    assert "+" + json.dumps({"mcpServers": {"engram": upgraded}}) in dry


def _registered(home: Path, args: list[str]) -> None:
    """A user-scope registration, as `claude mcp add` leaves it in ~/.claude.json."""
    entry = {
        "type": "stdio",
        "command": str(SCRIPTS / "engram-mcp"),
        "args": args,
        "env": {PIN_VARIABLE: __version__},
    }
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"engram": entry}}))


def _hook_for_the_user(home: Path) -> None:
    """engram's Claude hook in the user's own ~/.claude/settings.json."""
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", '
        '"command": "engram hook claude", "timeout": 30}]}]}}\n'
    )


def test_claude_global_leaves_always_load_out_only_when_the_user_has_a_claude_hook(
    run: Run, home: Path
) -> None:
    script = SCRIPTS / "engram-mcp"
    add = f"note: run: claude mcp add --scope user engram --env={PIN_VARIABLE}={__version__} --"
    run("link", "claude", "--hooks")
    # A hook in this project is not the user's: every other project shares the command.
    assert run("link", "claude", "--global").output == f"{add} {script} --always-load\n"
    _hook_for_the_user(home)
    assert run("link", "claude", "--global").output == f"{add} {script}\n"


def test_a_user_registration_that_follows_the_hook_rule_is_already_registered(
    run: Run, home: Path
) -> None:
    _hook_for_the_user(home)
    _registered(home, [])
    expected = f"note: already registered in {home / '.claude.json'}\n"
    assert run("link", "claude", "--global").output == expected
    assert run("upgrade").output == expected


def test_a_hooked_project_leaves_the_user_registrations_always_load_alone(
    run: Run, home: Path
) -> None:
    run("link", "claude", "--hooks")
    _registered(home, ["--always-load"])
    expected = f"note: already registered in {home / '.claude.json'}\n"
    assert run("link", "claude", "--global").output == expected
    assert run("upgrade").output == expected


def test_upgrade_prints_the_re_pin_that_drops_always_load_once_the_user_is_hooked(
    run: Run, home: Path
) -> None:
    _hook_for_the_user(home)
    _registered(home, ["--always-load"])
    assert run("link", "claude", "--global").output == (
        f"note: already registered in {home / '.claude.json'} "
        "(`engram upgrade` drops --always-load)\n"
    )
    assert run("upgrade").output == (
        "note: to re-pin, run: claude mcp remove --scope user engram && "
        "claude mcp add --scope user engram "
        f"--env={PIN_VARIABLE}={__version__} -- {SCRIPTS / 'engram-mcp'}\n"
    )


def _shared_group_settings(workspace: Path) -> Path:
    """A SessionStart group someone wrote, holding their hook and engram's."""
    engram = shlex.join([str(SCRIPTS / "engram"), "hook", "claude"])
    group = {"hooks": [{"command": "./mine.sh"}, {"type": "command", "command": engram}]}
    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": {"SessionStart": [group]}}, indent=2) + "\n")
    return path


def test_an_engram_hook_in_a_shared_group_counts_as_installed(run: Run, workspace: Path) -> None:
    settings = _shared_group_settings(workspace)
    before = settings.read_text()
    run("link", "claude", "--hooks")
    assert settings.read_text() == before
    entry = json.loads((workspace / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry["args"] == []
    run("unlink", "claude")
    assert json.loads(settings.read_text()) == {
        "hooks": {"SessionStart": [{"hooks": [{"command": "./mine.sh"}]}]}
    }


def test_relinking_keeps_a_customised_hook_with_a_note_and_force_resets_it(
    run: Run, workspace: Path
) -> None:
    engram = shlex.join([str(SCRIPTS / "engram"), "hook", "claude"])
    mine = {"hooks": [{"type": "command", "command": "./mine.sh"}]}
    customised = {
        "matcher": "startup",
        "hooks": [{"type": "command", "command": engram, "timeout": 60}],
    }
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"SessionStart": [customised, mine]}}, indent=2))
    before = settings.read_text()
    result = run("link", "claude", "--hooks")
    assert settings.read_text() == before
    assert (
        f"note: kept your changes to engram's SessionStart hook in {settings} "
        "(timeout, matcher differ from engram's; --hooks --force resets them)"
    ) in result.output.splitlines()
    result = run("link", "claude", "--hooks", "--force")
    assert "wrote .claude/settings.json: SessionStart hook" in result.output
    assert "kept your changes" not in result.output
    own = {"hooks": [{"type": "command", "command": engram, "timeout": 30}]}
    assert json.loads(settings.read_text()) == {"hooks": {"SessionStart": [mine, own]}}


def test_link_from_a_subdirectory_writes_at_the_project_root(
    run: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init_layout(workspace)
    sub = workspace / "src" / "pkg"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    result = run("link", "claude")
    assert result.output.splitlines()[:2] == [
        f"project: {workspace}",
        "wrote .mcp.json: added mcpServers.engram",
    ]
    assert (workspace / ".mcp.json").exists()
    assert sorted(path.name for path in sub.iterdir()) == []
    assert run("unlink", "claude").output.splitlines()[1] == (
        "removed .mcp.json: removed mcpServers.engram"
    )
    assert not (workspace / ".mcp.json").exists()


def test_root_names_the_project_to_link(run: Run, workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / "lib").mkdir(parents=True)
    init_layout(other)
    result = run("link", "cursor", "--root", str(other / "lib"))
    assert result.output.splitlines()[:2] == [
        f"project: {other}",
        "wrote .cursor/mcp.json: added mcpServers.engram",
    ]
    assert list(workspace.iterdir()) == []
    assert run("upgrade", "--root", str(other)).output == f"project: {other}\nnothing to change\n"


SECRET = "sk-SECRET-123"


@pytest.mark.parametrize(
    ("command", "args", "kept"),
    [
        ("npx", ["-y", "engram-mcp"], False),
        ("/opt/run-engram.sh", ["-v"], True),
    ],
)
def test_no_output_shows_the_value_of_a_variable_in_the_users_registration(
    run: Run,
    home: Path,
    command: str,
    args: list[str],
    kept: bool,
) -> None:
    entry = {
        "type": "stdio",
        "command": command,
        "args": args,
        "env": {"OPENAI_API_KEY": SECRET, "ZDOTDIR": "/z", PIN_VARIABLE: "0.0.1"},
    }
    registry = home / ".claude.json"
    registry.write_text(json.dumps({"mcpServers": {"engram": entry}}))
    outputs = [
        run(*words)
        for words in (
            ("link", "claude", "--global"),
            ("link", "claude", "--global", "--force"),
            ("link", "claude", "--global", "--dry-run"),
            ("upgrade",),
            ("upgrade", "--dry-run"),
            ("link", "list"),
            ("unlink", "claude", "--global"),
        )
    ]
    for result in outputs:
        assert SECRET not in result.output
        assert SECRET not in result.stderr
    left_out = (
        f"note: your engram registration in {registry} also sets OPENAI_API_KEY, ZDOTDIR, "
        "which the command below leaves out: engram never prints the values of your "
        "variables; to keep them, add --env=NAME=VALUE for each to its `claude mcp add`"
    )
    add = (
        "claude mcp remove --scope user engram && claude mcp add --scope user engram "
        f"--env={PIN_VARIABLE}={__version__} -- {SCRIPTS / 'engram-mcp'}"
    )
    forced = f"note: to re-pin, run: {add} --always-load"
    if kept:
        printed = (
            f"note: kept the engram registration in {registry}: `{command} {args[0]}` does not "
            f"name engram-mcp, so engram cannot re-pin it (to replace it, run: {add} --always-load)"
        )
        assert outputs[0].output.splitlines() == [left_out, printed]
        assert outputs[3].output.splitlines() == [left_out, printed]
    else:
        assert outputs[0].output.splitlines() == [left_out, f"note: to re-pin, run: {add}"]
        assert outputs[3].output.splitlines() == [left_out, forced]
    assert outputs[1].output.splitlines() == [left_out, forced]


def test_upgrade_keeps_a_docker_entry_and_a_user_registration_over_ssh(
    run: Run, home: Path, workspace: Path
) -> None:
    docker = ["run", "-i", "--rm", "-v", "/srv/mem:/data", "ghcr.io/me/engram", "engram-mcp"]
    mcp = workspace / ".mcp.json"
    text = json.dumps({"mcpServers": {"engram": {"command": "docker", "args": docker}}})
    mcp.write_text(text)
    ssh = {"type": "stdio", "command": "ssh", "args": ["box", "engram-mcp"]}
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"engram": ssh}}))
    add = (
        "claude mcp remove --scope user engram && claude mcp add --scope user engram "
        f"--env={PIN_VARIABLE}={__version__} -- {SCRIPTS / 'engram-mcp'} --always-load"
    )
    expected = [
        f"note: kept your engram entry in {mcp} as it is: engram-mcp runs through `docker`, "
        "which engram cannot re-pin (--force replaces it with engram's)",
        f"note: kept the engram registration in {home / '.claude.json'}: engram-mcp runs "
        f"through `ssh`, which engram cannot re-pin (to replace it, run: {add})",
    ]
    assert run("upgrade").output.splitlines() == expected
    assert run("link", "claude").output.splitlines() == [
        "wrote .claude/commands/engram.md: /engram command",
        "wrote CLAUDE.md: engram block",
        expected[0],
    ]
    assert run("link", "claude", "--global").output.splitlines() == expected[1:]
    assert mcp.read_text() == text


def test_notes_show_an_entrys_command_line_with_its_values_masked(
    run: Run, home: Path, workspace: Path
) -> None:
    wrapper = {"command": "env", "args": [f"API_TOKEN={SECRET}", "/opt/run-engram.sh"]}
    mcp = workspace / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"engram": wrapper}}))
    index = f"https://me:{SECRET}@pypi.example/simple"
    runner = {
        "type": "stdio",
        "command": "uvx",
        "args": ["--index-url", index, "--from", "engram", "engram-mcp"],
    }
    cursor = workspace / ".cursor" / "mcp.json"
    cursor.parent.mkdir()
    cursor.write_text(json.dumps({"mcpServers": {"engram": runner}}))
    registered = {"command": "npx", "args": ["-y", "engram-mcp", f"--api-key={SECRET}"]}
    registry = home / ".claude.json"
    registry.write_text(json.dumps({"mcpServers": {"engram": registered}}))
    script = SCRIPTS / "engram-mcp"

    outputs = [
        run(*words)
        for words in (
            ("link", "claude", "--global", "--dry-run"),
            ("link", "claude"),
            ("link", "cursor"),
            ("upgrade",),
        )
    ]
    for result in outputs:
        assert SECRET not in result.output
        assert SECRET not in result.stderr
    kept = (
        f"note: kept your engram entry in {mcp} as it is: `env API_TOKEN=… /opt/run-engram.sh` "
        "does not name engram-mcp, so engram cannot re-pin it (--force replaces it with engram's)"
    )
    repinned = (
        f"note: re-pinned your engram entry in {cursor}: engram-mcp was started by "
        "`uvx --index-url https://me:…@pypi.example/simple --from engram engram-mcp`, "
        f"now by this engram's `{script}`"
    )
    masked = (
        f"note: the command below shows … for values in your engram registration in {registry} "
        "(engram never prints them): put yours back before running it"
    )
    add = (
        "note: to re-pin, run: claude mcp remove --scope user engram && claude mcp add "
        f"--scope user engram --env={PIN_VARIABLE}={__version__} -- {script}"
    )
    assert outputs[0].output.splitlines() == [masked, f"{add} --api-key=…"]
    assert kept in outputs[1].output.splitlines()
    assert repinned in outputs[2].output.splitlines()
    assert outputs[3].output.splitlines() == [kept, masked, f"{add} --always-load --api-key=…"]
    assert json.loads(mcp.read_text()) == {"mcpServers": {"engram": wrapper}}


def _stdio_servers() -> dict[str, object]:
    """Another server and engram's entry (run by npx), each holding the secret."""
    github = {
        "command": "docker",
        "args": ["run", "-e", f"GITHUB_TOKEN={SECRET}", "img"],
        "env": {"GITHUB_TOKEN": SECRET},
    }
    engram = {
        "command": "npx",
        "args": ["-y", "engram-mcp", f"--api-key={SECRET}"],
        "env": {"OPENAI_API_KEY": SECRET},
    }
    return {"engram": engram, "github": github}


_OPENCODE = {
    "mcp": {
        "engram": {
            "type": "local",
            "command": ["npx", "-y", "engram-mcp", f"--api-key={SECRET}"],
            "environment": {"OPENAI_API_KEY": SECRET},
        },
        "github": {
            "type": "local",
            "command": ["docker", "run", "-e", f"GITHUB_TOKEN={SECRET}", "img"],
            "environment": {"GITHUB_TOKEN": SECRET},
        },
    }
}
_CODEX = f"""model = "o3"

[mcp_servers.engram]
command = "npx"
args = ["-y", "engram-mcp", "--api-key={SECRET}"]
env = {{ OPENAI_API_KEY = "{SECRET}" }}

[mcp_servers.github]
command = "docker"
args = ["run", "-e", "GITHUB_TOKEN={SECRET}", "img"]
env = {{ GITHUB_TOKEN = "{SECRET}" }}
"""
#: target, scope words, file (from the home or the workspace), its text.
DRY_RUNS = [
    ("claude", (), "~workspace/.mcp.json", json.dumps({"mcpServers": _stdio_servers()}, indent=2)),
    ("claude", ("--global",), "~home/.claude.json", json.dumps({"mcpServers": _stdio_servers()})),
    ("cursor", (), "~workspace/.cursor/mcp.json", json.dumps({"mcpServers": _stdio_servers()})),
    (
        "gemini",
        (),
        "~workspace/.gemini/settings.json",
        "// my settings\n" + json.dumps({"mcpServers": _stdio_servers()}, indent=4),
    ),
    ("opencode", (), "~workspace/opencode.json", json.dumps(_OPENCODE, indent=2)),
    ("codex", ("--global",), "~home/.codex/config.toml", _CODEX),
    (
        "windsurf",
        ("--global",),
        "~home/.codeium/windsurf/mcp_config.json",
        json.dumps({"mcpServers": _stdio_servers()}, indent=2),
    ),
]


@pytest.mark.parametrize(("target", "scope", "where", "text"), DRY_RUNS, ids=lambda v: str(v)[:24])
def test_no_dry_run_diff_shows_a_secret_and_the_written_file_keeps_it(
    run: Run,
    home: Path,
    workspace: Path,
    target: str,
    scope: tuple[str, ...],
    where: str,
    text: str,
) -> None:
    base, _, relative = where.partition("/")
    path = (home if base == "~home" else workspace) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    outputs = [
        run(*words)
        for words in (
            ("link", target, *scope, "--dry-run"),
            ("link", target, *scope, "--force", "--dry-run"),
            ("upgrade", "--dry-run"),
            ("unlink", target, *scope, "--dry-run"),
        )
    ]
    for result in outputs:
        assert result.exit_code == 0
        assert SECRET not in result.output
        assert SECRET not in result.stderr
    assert "…" in outputs[0].output
    assert path.read_text() == text
    written = run("link", target, *scope)
    assert SECRET not in written.output
    # What is written is the real text: the other server's and engram's values stay.
    assert path.read_text().count(SECRET) == text.count(SECRET)


def _diff_of(output: str, shown: str) -> list[str]:
    """The diff printed after `would change <shown>: …`, up to the next change or note."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"would change {shown}:"))
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith(("would change", "note:"))),
        len(lines),
    )
    return lines[start + 1 : end]


def test_a_claude_dry_run_masks_the_env_and_arguments_on_both_sides_of_the_diff(
    run: Run, workspace: Path
) -> None:
    path = workspace / ".mcp.json"
    path.write_text(
        "{\n"
        '  "mcpServers": {\n'
        '    "engram": {\n'
        '      "command": "npx",\n'
        f'      "args": ["-y", "engram-mcp", "--api-key={SECRET}"],\n'
        f'      "env": {{"OPENAI_API_KEY": "{SECRET}"}}\n'
        "    },\n"
        f'    "github": {{"command": "docker", "args": ["-e", "GITHUB_TOKEN={SECRET}"], '
        f'"env": {{"GITHUB_TOKEN": "{SECRET}"}}}}\n'
        "  }\n"
        "}\n"
    )
    script = SCRIPTS / "engram-mcp"
    assert _diff_of(run("link", "claude", "--force", "--dry-run").output, ".mcp.json") == [
        f"--- {path}",
        f"+++ {path}",
        "@@ -1,9 +1,13 @@",
        " {",
        '   "mcpServers": {',
        '     "engram": {',
        '-      "command": "npx",',
        '-      "args": ["-y", "engram-mcp", "--api-key=…"],',
        '-      "env": {"OPENAI_API_KEY": "…"}',
        f'+      "command": "{script}",',
        '+      "args": [',
        '+        "--always-load"',
        "+      ],",
        '+      "env": {',
        f'+        "{PIN_VARIABLE}": "{__version__}"',
        "+      }",
        "     },",
        '     "github": {"command": "docker", "args": ["-e", "GITHUB_TOKEN=…"], '
        '"env": {"GITHUB_TOKEN": "…"}}',
        "   }",
    ]


def test_a_codex_dry_run_masks_the_env_tables_and_arguments_on_both_sides_of_the_diff(
    run: Run, home: Path
) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(_CODEX)
    output = run("link", "codex", "--global", "--dry-run").output
    assert _diff_of(output, "~/.codex/config.toml") == [
        f"--- {path}",
        f"+++ {path}",
        "@@ -1,9 +1,15 @@",
        ' model = "o3"',
        " ",
        " [mcp_servers.engram]",
        '-command = "npx"',
        '-args = ["-y", "engram-mcp", "--api-key=…"]',
        '-env = { OPENAI_API_KEY = "…" }',
        f'+command = "{SCRIPTS / "engram-mcp"}"',
        '+args = ["--api-key=…"]',
        "+",
        "+[mcp_servers.engram.env]",
        '+OPENAI_API_KEY = "…"',
        f'+{PIN_VARIABLE} = "{__version__}"',
        "+",
        "+[mcp_servers.engram.tools.engram_commit]",
        '+approval_mode = "approve"',
        " ",
        " [mcp_servers.github]",
        ' command = "docker"',
    ]
    assert SECRET not in output
    assert path.read_text() == _CODEX


def test_link_unlink_and_list_report_as_json(run: Run, workspace: Path) -> None:
    dry = json.loads(run("link", "cursor", "--dry-run", "--json").output)
    assert list(workspace.iterdir()) == []  # a dry run writes nothing
    linked = json.loads(run("link", "cursor", "--json").output)
    listed = json.loads(run("link", "list", "--json").output)
    unlinked = json.loads(run("unlink", "cursor", "--json").output)

    assert dry["dry_run"] is True
    assert dry["changes"][0]["path"] == ".cursor/mcp.json"
    assert dry["changes"][0]["diff"].startswith("--- /dev/null\n")
    assert [c["path"] for c in linked["changes"]] == [
        ".cursor/mcp.json",
        ".cursor/commands/engram.md",
        "AGENTS.md",
    ]
    assert {"target": "cursor", "scope": "workspace", "state": "linked"}.items() <= next(
        row for row in listed if row["target"] == "cursor" and row["scope"] == "workspace"
    ).items()
    assert [(c["path"], c["action"]) for c in unlinked["changes"]] == [
        (".cursor/mcp.json", "remove"),
        (".cursor/commands/engram.md", "remove"),
        ("AGENTS.md", "remove"),
    ]
    assert unlinked["notes"] == []


def _git(workspace: Path, *args: str) -> None:
    identity = ("-c", "user.name=Ada", "-c", "user.email=ada@example.com")
    subprocess.run(["git", *identity, *args], cwd=workspace, check=True, capture_output=True)


def test_an_entry_starts_without_this_shells_path_unless_git_shares_its_file(
    run: Run, home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With engram-mcp on this shell's PATH (the Quick start's export), a user's file
    and an untracked workspace file name its absolute path, with a note before the
    team gets it; once Git tracks the file, link writes engram-mcp by name and says so."""
    monkeypatch.setenv("PATH", f"{SCRIPTS}:/usr/bin:/bin")
    _git(workspace, "init", "-q")
    script = str(SCRIPTS / "engram-mcp")
    mcp = workspace / ".mcp.json"

    result = run("link", "claude")
    assert json.loads(mcp.read_text())["mcpServers"]["engram"]["command"] == script
    assert (
        f"note: {mcp} names this machine's {script}; before you commit it for your team, "
        "`engram link claude --portable` writes engram-mcp as found on each person's PATH"
    ) in result.output.splitlines()
    assert run("link", "windsurf", "--global").exit_code == 0
    windsurf = home / ".codeium" / "windsurf" / "mcp_config.json"
    assert json.loads(windsurf.read_text())["mcpServers"]["engram"]["command"] == script

    _git(workspace, "add", ".mcp.json")
    _git(workspace, "commit", "-qm", "engram")
    result = run("upgrade")
    entry = json.loads(mcp.read_text())["mcpServers"]["engram"]
    assert (entry["command"], "env" in entry) == ("engram-mcp", False)
    assert (
        f"note: {mcp} is shared (Git tracks it): its entry runs engram-mcp as found on each "
        "person's PATH, so a host started from the desktop or a new shell needs engram-mcp "
        "on the PATH it gets (`engram doctor` checks)"
    ) in result.output.splitlines()
    # The user's file keeps this machine's path.
    assert json.loads(windsurf.read_text())["mcpServers"]["engram"]["command"] == script


def test_portable_writes_the_shared_form_into_a_new_workspace_file(
    run: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{SCRIPTS}:/usr/bin:/bin")
    assert run("link", "cursor", "--portable", "--hooks").exit_code == 0
    entry = json.loads((workspace / ".cursor" / "mcp.json").read_text())["mcpServers"]["engram"]
    assert entry["command"] == "engram-mcp"
    hooks = json.loads((workspace / ".cursor" / "hooks.json").read_text())
    assert hooks["hooks"]["sessionStart"][0]["command"] == "engram hook cursor"
    # Without engram-mcp on PATH there is no portable form to write: the path, said so.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    result = run("link", "codex", "--portable")
    assert (
        f'command = "{SCRIPTS / "engram-mcp"}"'
        in (workspace / ".codex" / "config.toml").read_text()
    )
    assert "but engram-mcp is not on this shell's PATH" in result.output
