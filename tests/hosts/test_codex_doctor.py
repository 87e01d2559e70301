"""``engram doctor``'s Codex checks: what makes Codex skip engram without a word.

Facts from Codex CLI 0.171.0 (docs/hosts.md, "Codex"): an entry with ``enabled =
false`` is not started; a project's ``.codex/`` files are read only when
``~/.codex/config.toml`` trusts the project's Git root; each hook runs only once the
person has trusted it (``[hooks.state."<file>:session_start:<group>:<item>"]``); and
``[features] hooks = false`` (or its old name ``codex_hooks``) turns hooks off.
Entries here run commands that do not exist, so no handshake is started.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.cli.doctor import CheckResult, DoctorContext
from engram.cli.doctor_hosts import host_checks
from engram.hosts.codex import hook_trust_key
from engram.hosts.command import HostEnv
from engram.hosts.files import apply
from engram.hosts.link import LinkOptions, plan_link
from engram.hosts.registry import TARGETS

ENTRY = '[mcp_servers.engram]\ncommand = "/nowhere/engram-mcp"\n'
HASH = "sha256:5c079f06455a3acb3fbe4221631d9d8a77204d052b46a1da956cdfa0f1030683"


def _codex_checks(env: HostEnv) -> list[CheckResult]:
    results = host_checks(DoctorContext(root=env.workspace, env=env))
    return [result for result in results if result.id.startswith("host.codex_")]


def _by_id(env: HostEnv, check: str) -> list[CheckResult]:
    return [result for result in _codex_checks(env) if result.id == check]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _user(env: HostEnv, text: str) -> Path:
    return _write(env.home / ".codex" / "config.toml", text)


def _link_hook(env: HostEnv) -> Path:
    """engram's hook alone (the workspace entry would start a handshake)."""
    hooks = env.workspace / ".codex" / "hooks.json"
    plan = plan_link(TARGETS["codex"], "workspace", env, LinkOptions(hooks=True))
    apply([c for c in plan.changes if c.path == hooks], env.backups, (env.workspace, env.home))
    return hooks


@pytest.fixture
def repository(env: HostEnv) -> Path:
    """The workspace is a Git repository's root: Codex keys its trust there."""
    (env.workspace / ".git").mkdir()
    return env.workspace


def test_an_entry_codex_does_not_start_fails_with_the_fix(env: HostEnv) -> None:
    path = _user(env, ENTRY + "enabled = false\n")
    assert _by_id(env, "host.codex_enabled") == [
        CheckResult(
            "host.codex_enabled",
            "fail",
            "error",
            "[mcp_servers.engram] sets enabled = false, so Codex does not start engram-mcp:"
            " Codex will not start engram here",
            f"remove enabled = false from [mcp_servers.engram] in {path}",
            f"codex (global: {path})",
        )
    ]
    path.write_text(ENTRY + "enabled = true\n")
    assert [r.status for r in _by_id(env, "host.codex_enabled")] == ["pass"]


def test_a_user_entry_alone_needs_no_project_trust(env: HostEnv) -> None:
    _user(env, ENTRY)
    assert [r.id for r in _codex_checks(env)] == ["host.codex_enabled", "host.codex_approval"]


def test_a_workspace_entry_fails_until_codex_trusts_the_project(
    env: HostEnv, repository: Path
) -> None:
    config = _write(repository / ".codex" / "config.toml", ENTRY)
    user = env.home / ".codex" / "config.toml"
    table = f'[projects."{repository}"]'
    assert _by_id(env, "host.codex_trust") == [
        CheckResult(
            "host.codex_trust",
            "fail",
            "error",
            f"Codex ignores {config}: {repository} is not a trusted project (no {table} in "
            f"{user}): Codex will not start engram here",
            f'start codex in {repository} and answer "Trust this folder?" with yes '
            f'(or add {table} trust_level = "trusted" to {user})',
            f"codex (workspace: {config})",
        )
    ]

    _user(env, f'{table}\ntrust_level = "untrusted"\n')
    [untrusted] = _by_id(env, "host.codex_trust")
    assert (untrusted.status, untrusted.message, untrusted.remediation) == (
        "fail",
        f'Codex ignores {config}: {table} has trust_level = "untrusted" in {user}: Codex will'
        " not start engram here",
        f'set trust_level = "trusted" under {table} in {user}',
    )

    # With the user's own entry, Codex starts that one: the project's is ignored only.
    _user(env, f'{table}\ntrust_level = "untrusted"\n\n{ENTRY}')
    [ignored] = _by_id(env, "host.codex_trust")
    assert (ignored.status, ignored.message) == (
        "warn",
        f'Codex ignores {config}: {table} has trust_level = "untrusted" in {user}; Codex starts'
        f" engram from codex (global: {user}) instead",
    )

    _user(env, f'{table}\ntrust_level = "trusted"\n')
    [trusted] = _by_id(env, "host.codex_trust")
    assert (trusted.status, trusted.message) == (
        "pass",
        f"Codex trusts {repository}, so it reads {config}",
    )


def test_trust_is_looked_up_at_the_git_root_above_the_workspace(home: Path, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    workspace = root / "services" / "api"
    workspace.mkdir(parents=True)
    env = HostEnv.from_environ(workspace, {"HOME": str(home), "PATH": "/nonexistent"})
    _write(workspace / ".codex" / "config.toml", ENTRY)
    _user(env, f'[projects."{workspace}"]\ntrust_level = "trusted"\n')
    assert [r.status for r in _by_id(env, "host.codex_trust")] == ["fail"]
    _user(env, f'[projects."{root}"]\ntrust_level = "trusted"\n')
    assert [r.subject for r in _by_id(env, "host.codex_trust")] == [f"codex (project: {root})"]
    assert [r.status for r in _by_id(env, "host.codex_trust")] == ["pass"]


def test_engrams_hook_warns_until_the_person_trusts_it_in_codex(
    env: HostEnv, repository: Path
) -> None:
    hooks = _link_hook(env)
    table = f'[projects."{repository}"]\ntrust_level = "trusted"\n'
    _user(env, table)
    key = f"{hooks}:session_start:0:0"
    assert _by_id(env, "host.codex_hook_trust") == [
        CheckResult(
            "host.codex_hook_trust",
            "warn",
            "warning",
            "Codex skips engram's SessionStart hook until you trust it "
            f'(no [hooks.state."{key}"] trusted_hash in {env.home / ".codex" / "config.toml"})',
            f'start codex in {repository} and choose "Trust all and continue" when it says '
            '"Hooks need review" (or trust it with /hooks)',
            f"codex ({hooks})",
        )
    ]
    _user(env, f'{table}\n[hooks.state."{key}"]\ntrusted_hash = "{HASH}"\n')
    [trusted] = _by_id(env, "host.codex_hook_trust")
    assert (trusted.status, trusted.message) == (
        "pass",
        "you trusted engram's SessionStart hook in Codex "
        "(Codex asks again once it changes, as after engram upgrade)",
    )


def test_the_hook_trust_key_counts_the_groups_before_engrams(
    env: HostEnv, repository: Path
) -> None:
    hooks = _write(
        repository / ".codex" / "hooks.json",
        json.dumps(
            {
                "hooks": {
                    "SessionStart": [
                        {"hooks": [{"type": "command", "command": "./mine.sh"}]},
                        {"hooks": [{"type": "command", "command": "./two.sh"}]},
                    ]
                }
            }
        ),
    )
    _link_hook(env)
    assert json.loads(hooks.read_text())["hooks"]["SessionStart"][2]["hooks"][0]["command"]
    key = hook_trust_key(hooks, "SessionStart", 2, 0)
    assert key == f"{hooks}:session_start:2:0"
    _user(env, f'[hooks.state."{key}"]\ntrusted_hash = "{HASH}"\n')
    assert [r.status for r in _by_id(env, "host.codex_hook_trust")] == ["pass"]


@pytest.mark.parametrize(
    ("features", "flag"),
    [("hooks = false", "hooks"), ("codex_hooks = false", "codex_hooks")],
)
def test_hooks_switched_off_in_features_warn_with_the_flag_to_remove(
    env: HostEnv, repository: Path, features: str, flag: str
) -> None:
    _link_hook(env)
    user = _user(env, f"[features]\n{features}\n")
    assert _by_id(env, "host.codex_hooks") == [
        CheckResult(
            "host.codex_hooks",
            "warn",
            "warning",
            f"[features] {flag} = false in {user} turns Codex's hooks off, so "
            "engram's SessionStart hook never runs",
            f"remove {flag} = false from [features] in {user} (hooks are on by default)",
            "codex",
        )
    ]


@pytest.mark.parametrize(
    "features",
    ["", "[features]\nhooks = true\n", "[features]\nhooks = true\ncodex_hooks = false\n"],
)
def test_hooks_are_on_by_default_and_when_hooks_is_true(
    env: HostEnv, repository: Path, features: str
) -> None:
    _link_hook(env)
    _user(env, features)
    assert _by_id(env, "host.codex_hooks") == [
        CheckResult(
            "host.codex_hooks",
            "pass",
            "warning",
            "Codex's hooks are on ([features] hooks, on by default)",
            None,
            "codex",
        )
    ]


def test_an_unparseable_user_file_is_reported_once_not_as_untrusted(
    env: HostEnv, repository: Path
) -> None:
    _link_hook(env)
    _user(env, "[projects\n")
    assert _codex_checks(env) == []
    results = host_checks(DoctorContext(root=env.workspace, env=env))
    assert [r.status for r in results if r.id == "host.config"] == ["fail"]


def test_in_the_home_a_hook_needs_no_project_trust(home: Path) -> None:
    env = HostEnv.from_environ(home, {"HOME": str(home), "PATH": "/nonexistent"})
    _link_hook(env)
    assert [r.id for r in _codex_checks(env)] == ["host.codex_hook_trust", "host.codex_hooks"]


@pytest.mark.parametrize(
    ("version", "checks"),
    [
        # Measured: 0.77 never read a project's config.toml; 0.79 to 0.87 read it without
        # trust; from 0.89 only in a trusted project.
        ("0.77.0", [("host.codex_trust", "fail", "Codex 0.77.0 never reads a project's")]),
        ("0.87.0", []),
        ("0.171.0", [("host.codex_trust", "fail", "Codex ignores")]),
    ],
)
def test_what_codex_does_with_an_untrusted_projects_file_depends_on_its_version(
    home: Path, tmp_path: Path, version: str, checks: list[tuple[str, str, str]]
) -> None:
    """`codex --version` prints `codex-cli 0.171.0`; doctor asks the codex on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "codex"
    program.write_text(f"#!/bin/sh\necho 'codex-cli {version}'\n")
    program.chmod(0o755)
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    env = HostEnv.from_environ(workspace, {"HOME": str(home), "PATH": str(bin_dir)})
    _write(workspace / ".codex" / "config.toml", ENTRY)

    trust = [r for r in _codex_checks(env) if r.id == "host.codex_trust"]

    assert [(r.id, r.status) for r in trust] == [(check, status) for check, status, _ in checks]
    assert all(r.message.startswith(c[2]) for r, c in zip(trust, checks, strict=True))
