"""`engram doctor`: every registration proven by a real MCP handshake."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram import __version__
from engram.cli.doctor import CheckResult, DoctorContext, doctor_check, exit_status, run_checks
from engram.cli.doctor_hosts import handshake
from engram.hosts.command import PIN_VARIABLE, HostEnv
from engram.project.layout import init_layout
from engram.testing.governed import host_profile
from tests.cli.conftest import SCRIPTS, Run

LINKS = [
    ("claude", "--hooks"),
    ("cursor", "--hooks"),
    ("gemini", "--hooks"),
    ("opencode",),
    ("codex", "--hooks"),
    ("claude", "--global"),
    ("cursor", "--global"),
    ("gemini", "--global"),
    ("opencode", "--global"),
    ("codex", "--global"),
    ("antigravity", "--global"),
    ("windsurf", "--global"),
]
#: Every registration those links write (Claude's user scope is only printed).
SUBJECTS = {
    "claude workspace",
    "cursor workspace",
    "cursor global",
    "gemini workspace",
    "gemini global",
    "opencode workspace",
    "opencode global",
    "codex workspace",
    "codex global",
    "antigravity global",
    "windsurf global",
}


@pytest.fixture(autouse=True)
def project_memory(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Doctor checks the project's memory too: link from an initialised repository."""
    init_layout(workspace)
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(tmp_path / "global-memory"))


def _link_everything(run: Run) -> None:
    for args in LINKS:
        assert run("link", *args).exit_code == 0


def _trust_in_codex(home: Path, workspace: Path) -> None:
    """What the person does in Codex: trust the project, then engram's hook."""
    hook = f"{workspace / '.codex' / 'hooks.json'}:session_start:0:0"
    with (home / ".codex" / "config.toml").open("a") as config:
        config.write(f'\n[projects."{workspace}"]\ntrust_level = "trusted"\n')
        config.write(f'\n[hooks.state."{hook}"]\ntrusted_hash = "sha256:0"\n')


def _approve_in_claude_and_gemini(home: Path, workspace: Path) -> None:
    """What the person does in Claude Code (approve the project's server) and in Gemini
    CLI (trust the folder)."""
    local = workspace / ".claude" / "settings.local.json"
    local.parent.mkdir(exist_ok=True)
    local.write_text(json.dumps({"enabledMcpjsonServers": ["engram"]}))
    trusted = {"projects": {str(workspace): {"hasTrustDialogAccepted": True}}}
    (home / ".claude.json").write_text(json.dumps(trusted))
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(workspace): "TRUST_FOLDER"})
    )


def _checks(output: str) -> list[dict[str, Any]]:
    payload = json.loads(output)
    checks: list[dict[str, Any]] = payload["checks"]
    return checks


def _subject(check: dict[str, Any]) -> str:
    target, scope = check["subject"].split(" (")[0], check["subject"].split(" (")[1].split(":")[0]
    return f"{target} {scope}"


def test_every_written_registration_starts_a_working_server(
    run: Run, home: Path, workspace: Path
) -> None:
    _link_everything(run)
    _trust_in_codex(home, workspace)
    _approve_in_claude_and_gemini(home, workspace)
    result = run("doctor", "--json", "--strict")
    checks = _checks(result.output)
    handshakes = [check for check in checks if check["id"] == "host.handshake"]
    assert {_subject(check) for check in handshakes} == SUBJECTS
    assert all(check["status"] == "pass" and check["latency_ms"] > 0 for check in handshakes)
    assert {check["status"] for check in checks} == {"pass"}
    assert [c["id"] for c in checks if c["id"] == "host.hook"] == ["host.hook"] * 4
    assert result.exit_code == 0
    assert json.loads(result.output)["ok"] is True


def test_the_portable_form_passes_only_where_a_new_shell_finds_it(
    run: Run, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`engram-mcp` by name runs from the PATH of the host's shell: found on this
    shell's PATH alone (an `export PATH=…` of the Quick start), a new shell or a
    desktop host does not find it, and doctor says so; once the login profile puts it
    on PATH, it passes (a real login shell is asked)."""
    monkeypatch.setenv("PATH", f"{SCRIPTS}:/usr/bin:/bin")
    monkeypatch.setenv("SHELL", "/bin/sh")
    run("link", "cursor", "--portable")

    result = run("doctor", "--json")

    by_id = {check["id"]: check for check in _checks(result.output)}
    assert by_id["host.entry"]["message"] == "runs engram-mcp"
    assert by_id["host.command"]["status"] == "fail"
    assert by_id["host.command"]["message"] == (
        "engram-mcp is found on this shell's PATH only: a new shell, and a host started"
        " from the desktop, do not find it"
    )
    assert by_id["host.command"]["remediation"] == (
        "engram upgrade (writes the absolute path), or put engram-mcp on the PATH your"
        " shell's profile sets (pipx install engram-trust does)"
    )
    assert by_id["host.handshake"]["status"] == "skip"
    assert result.exit_code == 1

    (home / ".profile").write_text(f'PATH="{SCRIPTS}:$PATH"\n')
    by_id = {check["id"]: check for check in _checks(run("doctor", "--json").output)}
    assert by_id["host.command"]["status"] == "pass"
    assert by_id["host.pin"]["status"] == "skip"
    assert by_id["host.handshake"]["status"] == "pass"


def test_doctor_as_a_real_subprocess_reports_json(run: Run, home: Path, workspace: Path) -> None:
    run("link", "claude")
    _approve_in_claude_and_gemini(home, workspace)
    run("link", "codex", "--global")
    env = {**os.environ, "HOME": str(home), "PATH": "/usr/bin:/bin"}
    process = subprocess.run(
        [str(SCRIPTS / "engram"), "doctor", "--json"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    checks = _checks(process.stdout)
    passed = {_subject(c) for c in checks if c["id"] == "host.handshake" and c["status"] == "pass"}
    assert passed == {"claude workspace", "codex global"}


def test_a_missing_command_fails_with_a_remediation(run: Run, workspace: Path) -> None:
    entry = {"command": "/nowhere/engram-mcp", "args": [], "env": {PIN_VARIABLE: __version__}}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}))
    result = run("doctor", "--json")
    assert result.exit_code == 1
    by_id = {check["id"]: check for check in _checks(result.output)}
    assert by_id["host.command"]["status"] == "fail"
    assert by_id["host.command"]["remediation"] == "engram upgrade (or engram link claude --force)"
    assert by_id["host.handshake"]["status"] == "skip"


def test_gemini_trust_true_warns_and_strict_fails(run: Run, home: Path, workspace: Path) -> None:
    run("link", "gemini")
    _approve_in_claude_and_gemini(home, workspace)
    settings = workspace / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    data["mcpServers"]["engram"]["trust"] = True
    settings.write_text(json.dumps(data))
    result = run("doctor", "--json")
    trust = [check for check in _checks(result.output) if check["id"] == "host.gemini_trust"]
    assert [(check["status"], check["severity"]) for check in trust] == [("warn", "warning")]
    assert result.exit_code == 0
    assert run("doctor", "--strict").exit_code == 1


def test_an_old_pin_warns_to_upgrade(run: Run, workspace: Path) -> None:
    run("link", "claude")
    path = workspace / ".mcp.json"
    path.write_text(path.read_text().replace(f'"{__version__}"', '"0.0.1"'))
    by_id = {check["id"]: check for check in _checks(run("doctor", "--json").output)}
    assert by_id["host.pin"]["status"] == "warn"
    expected = f"pinned to 0.0.1, this engram is {__version__}; the command runs {__version__}"
    assert by_id["host.pin"]["message"] == expected


def test_an_unparseable_host_file_fails_and_names_it(run: Run, workspace: Path) -> None:
    (workspace / ".cursor").mkdir()
    (workspace / ".cursor" / "mcp.json").write_text('{"mcpServers": ')
    result = run("doctor")
    assert result.exit_code == 1
    assert "FAIL  host.config [cursor (workspace)]" in result.output
    assert "mcp.json: line 1" in result.output


def test_an_unreadable_hashes_file_is_a_failed_check_and_the_others_still_run(
    run: Run, workspace: Path
) -> None:
    hashes = workspace / ".agents" / ".engram" / "memory.hashes"
    hashes.write_text("not a record\n")

    result = run("doctor", "--json")

    assert result.exit_code == 1
    by_id = {check["id"]: check for check in _checks(result.output)}
    assert (by_id["hashes.readable"]["status"], by_id["hashes.readable"]["message"]) == (
        "fail",
        f"{hashes}: line 1 is not `<sha256 hex>  <path>`; restore it from Git"
        " (`git checkout -- .agents/.engram/memory.hashes`), or review the memory files and"
        " run `engram adopt --yes`, which records them all again",
    )
    assert by_id["host.linked"]["status"] == "warn"


def test_a_missing_hashes_file_is_one_failed_check_with_its_cause(
    run: Run, workspace: Path
) -> None:
    """Memory files with no hashes file at all: one failure saying what was lost and how
    to get it back, not a warning per file."""
    rules = workspace / ".agents" / ".engram" / "rules"
    for name in ("a", "b"):
        (rules / f"{name}.md").write_text(f"---\nid: {name}\ntype: rule\n---\n# {name}\n")
    hashes = workspace / ".agents" / ".engram" / "memory.hashes"
    hashes.unlink(missing_ok=True)

    result = run("doctor", "--json")

    assert result.exit_code == 1
    checks = _checks(result.output)
    [failed] = [check for check in checks if check["id"] == "hashes.readable"]
    assert (failed["status"], failed["message"], failed["remediation"]) == (
        "fail",
        f"{hashes} is missing: 2 memory files are recorded nowhere, so a change made outside"
        " engram cannot be told",
        "restore it from Git (`git checkout -- .agents/.engram/memory.hashes`), or review the"
        " memory files and run `engram adopt --yes`, which records them all again",
    )
    assert not [check for check in checks if check["id"] == "hash.mismatch"]
    assert run("adopt", "--yes").exit_code == 0
    assert [c["id"] for c in _checks(run("doctor", "--json").output) if c["status"] == "fail"] == []


def test_nothing_linked_is_a_warning(run: Run) -> None:
    result = run("doctor")
    assert result.output.startswith("WARN  host.linked: engram is not linked in any agent host")
    assert result.exit_code == 0
    assert run("doctor", "--strict").exit_code == 1


def test_the_expected_tools_are_a_parameter(home: Path, workspace: Path) -> None:
    argv = [str(SCRIPTS / "engram-mcp")]
    done = handshake(argv, {}, workspace, frozenset({"engram_status", "engram_nope"}), 20.0)
    assert not done.ok
    assert done.message == "tools/list lacks engram_nope"
    assert done.version == __version__


def test_a_server_that_never_answers_fails_within_the_timeout(workspace: Path) -> None:
    done = handshake(["sleep", "30"], {}, workspace, frozenset(), 0.5)
    assert not done.ok
    assert done.message == "no answer within 0.5 s"
    assert done.latency_ms < 10_000


def test_a_command_that_cannot_start_fails(workspace: Path) -> None:
    done = handshake([str(workspace / "missing")], {}, workspace, frozenset(), 1.0)
    assert not done.ok
    assert done.message.startswith("cannot start")


def test_checks_are_a_registry_other_modules_extend(home: Path, workspace: Path) -> None:
    @doctor_check("test.extension")
    def extension(context: DoctorContext) -> Iterator[CheckResult]:
        yield CheckResult("store.ok", "warn", "warning", f"checked {context.root.name}")

    env = HostEnv.from_environ(workspace, {"HOME": str(home), "PATH": "/nonexistent"})
    results = run_checks(DoctorContext(root=workspace, env=env))
    assert results[-1] == CheckResult("store.ok", "warn", "warning", "checked project")
    assert exit_status(results, strict=False) == 0
    assert exit_status(results, strict=True) == 1
    doctor_check("test.extension")(lambda context: iter(()))


def test_a_broken_hook_file_is_reported_not_fatal(run: Run, workspace: Path) -> None:
    run("link", "claude")
    (workspace / ".claude" / "settings.json").write_text("{ nope")
    result = run("doctor")
    assert result.exit_code == 1
    assert "FAIL  host.config [claude (workspace)]" in result.output


def test_a_codex_entry_without_the_commit_approval_warns(run: Run, home: Path) -> None:
    run("link", "codex", "--global")
    config = home / ".codex" / "config.toml"
    text = config.read_text()
    config.write_text(text.replace('approval_mode = "approve"', 'approval_mode = "auto"'))
    result = run("doctor", "--json")
    approval = [c for c in _checks(result.output) if c["id"] == "host.codex_approval"]
    assert approval == [
        {
            "id": "host.codex_approval",
            "status": "warn",
            "severity": "warning",
            "message": "the entry lacks [mcp_servers.engram.tools.engram_commit] approval_mode = "
            '"approve", so Codex may run engram_commit without asking the human',
            "remediation": "engram link codex --global (or engram upgrade)",
            "subject": f"codex (global: {config})",
        }
    ]
    assert result.exit_code == 0
    assert run("doctor", "--strict").exit_code == 1
    run("upgrade")
    approval = [
        c for c in _checks(run("doctor", "--json").output) if c["id"] == "host.codex_approval"
    ]
    assert [c["status"] for c in approval] == ["pass"]


def test_an_entry_left_with_a_runners_arguments_warns_until_upgraded(
    run: Run, workspace: Path
) -> None:
    npx = ["-y", "--package", "@the-long-ride/engram@0.0.28", "engram-mcp"]
    script = str(SCRIPTS / "engram-mcp")
    entry = {"command": script, "args": npx, "env": {PIN_VARIABLE: __version__}}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}))
    by_id = {check["id"]: check for check in _checks(run("doctor", "--json").output)}
    assert by_id["host.args"] == {
        "id": "host.args",
        "status": "warn",
        "severity": "warning",
        "message": "engram-mcp is given arguments it does not take: "
        "-y --package @the-long-ride/engram@0.0.28 engram-mcp",
        "remediation": "engram upgrade",
        "subject": f"claude (workspace: {workspace / '.mcp.json'})",
    }
    assert by_id["host.handshake"]["status"] == "pass"
    run("upgrade")
    by_id = {check["id"]: check for check in _checks(run("doctor", "--json").output)}
    assert (by_id["host.args"]["status"], by_id["host.args"]["message"]) == (
        "pass",
        "engram-mcp options: --always-load",
    )


def test_doctor_reads_an_opencode_command_as_link_does(run: Run, workspace: Path) -> None:
    # OpenCode's args are the person's: a re-pin rewrites the command list alone, so
    # doctor must not ask for an upgrade that leaves them where they are.
    npx = ["-y", "--package", "@the-long-ride/engram@0.0.28", "engram-mcp"]
    entry = {"type": "local", "command": [str(SCRIPTS / "engram-mcp")], "args": npx}
    (workspace / "opencode.json").write_text(json.dumps({"mcp": {"engram": entry}}))
    by_id = {check["id"]: check for check in _checks(run("doctor", "--json").output)}
    assert (by_id["host.args"]["status"], by_id["host.args"]["message"]) == (
        "pass",
        "engram-mcp options: none",
    )


def test_an_unknown_engram_mcp_option_warns(run: Run, workspace: Path) -> None:
    entry = {"command": str(SCRIPTS / "engram-mcp"), "args": ["--always-lod"]}
    path = workspace / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"engram": entry}}))
    by_id = {check["id"]: check for check in _checks(run("doctor", "--json").output)}
    assert by_id["host.args"]["message"] == (
        "engram-mcp is given arguments it does not take: --always-lod"
    )
    assert by_id["host.args"]["remediation"] == f"remove them from {path}"


def test_a_command_naming_no_engram_mcp_warns_that_it_cannot_be_repinned(
    run: Run, home: Path
) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('[mcp_servers.engram]\ncommand = "/opt/run-engram.sh"\n')
    by_id = {check["id"]: check for check in _checks(run("doctor", "--json").output)}
    assert by_id["host.args"]["message"] == (
        "`/opt/run-engram.sh` names no engram-mcp: engram cannot re-pin it"
    )
    assert by_id["host.args"]["remediation"] == (
        "engram link codex --global --force (replaces it with engram's entry)"
    )


def test_an_entry_run_through_docker_warns_that_it_cannot_be_repinned(
    run: Run, workspace: Path
) -> None:
    # An absolute path that does not exist: doctor must not start a container here.
    args = ["run", "-i", "ghcr.io/me/engram", "engram-mcp"]
    entry = {"command": "/nowhere/docker", "args": args}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}))
    result = run("doctor", "--json")
    by_id = {check["id"]: check for check in _checks(result.output)}
    assert by_id["host.args"] == {
        "id": "host.args",
        "status": "warn",
        "severity": "warning",
        "message": "engram-mcp runs through `/nowhere/docker`: engram cannot re-pin it",
        "remediation": "engram link claude --force (replaces it with engram's entry)",
        "subject": f"claude (workspace: {workspace / '.mcp.json'})",
    }


def test_an_engram_hook_in_a_shared_group_is_checked_alone(run: Run, workspace: Path) -> None:
    engram = f"{SCRIPTS / 'engram'} hook claude"
    group = {"hooks": [{"command": "./mine.sh"}, {"type": "command", "command": engram}]}
    (workspace / ".claude").mkdir()
    settings = workspace / ".claude" / "settings.json"
    settings.write_text(json.dumps({"hooks": {"SessionStart": [group]}}))
    hooks = [c for c in _checks(run("doctor", "--json").output) if c["id"] == "host.hook"]
    assert hooks == [
        {
            "id": "host.hook",
            "status": "pass",
            "severity": "error",
            "message": f"session hook runs {engram}",
            "subject": f"claude ({settings})",
        }
    ]


def test_doctor_in_a_subdirectory_checks_the_projects_hosts(
    run: Run, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("link", "claude")
    sub = workspace / "src"
    sub.mkdir()
    monkeypatch.chdir(sub)
    checks = _checks(run("doctor", "--json").output)
    handshakes = [c["subject"] for c in checks if c["id"] == "host.handshake"]
    assert handshakes == [f"claude (workspace: {workspace / '.mcp.json'})"]


SECRET = "sk-SECRET-123"


def _write_json(path: Path, key: str, entry: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({key: {"engram": entry}}))
    return path


def test_no_doctor_output_shows_a_secret_from_a_host_entry(
    run: Run, home: Path, workspace: Path
) -> None:
    docker = ["run", "-e", f"OPENAI_API_KEY={SECRET}", "-i", "img", "engram-mcp"]
    claude = _write_json(
        workspace / ".mcp.json",
        "mcpServers",
        {"command": "/nowhere/docker", "args": docker, "env": {"OPENAI_API_KEY": SECRET}},
    )
    wrapper = {"command": "/opt/run-engram.sh", "args": [f"--token={SECRET}"]}
    cursor = _write_json(workspace / ".cursor" / "mcp.json", "mcpServers", wrapper)
    unknown = {"command": str(SCRIPTS / "engram-mcp"), "args": ["--api-key", SECRET]}
    gemini = _write_json(home / ".gemini" / "settings.json", "mcpServers", unknown)
    codex = home / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text(
        "[mcp_servers.engram]\n"
        'command = "env"\n'
        f'args = ["API_TOKEN={SECRET}", "/nowhere/engram-mcp", "--root", "."]\n'
        "[mcp_servers.engram.tools.engram_commit]\n"
        'approval_mode = "approve"\n'
    )
    hook = f"{SCRIPTS / 'engram'} hook claude --api-key={SECRET}"
    (workspace / ".claude").mkdir()
    group = {"hooks": [{"type": "command", "command": hook}]}
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SessionStart": [group]}})
    )

    text, as_json = run("doctor"), run("doctor", "--json")
    for result in (text, as_json):
        assert SECRET not in result.output
        assert SECRET not in result.stderr
    shown = {
        (check["id"], check.get("subject")): (check["message"], check.get("remediation"))
        for check in _checks(as_json.output)
    }
    subject = f"claude (workspace: {claude})"
    assert shown["host.entry", subject] == (
        "runs /nowhere/docker run -e OPENAI_API_KEY=… -i img engram-mcp",
        None,
    )
    subject = f"cursor (workspace: {cursor})"
    assert shown["host.entry", subject] == ("runs /opt/run-engram.sh --token=…", None)
    assert shown["host.args", subject] == (
        "`/opt/run-engram.sh --token=…` names no engram-mcp: engram cannot re-pin it",
        "engram link cursor --force (replaces it with engram's entry)",
    )
    subject = f"gemini (global: {gemini})"
    assert shown["host.args", subject] == (
        "engram-mcp is given arguments it does not take: --api-key …",
        f"remove them from {gemini}",
    )
    subject = f"codex (global: {codex})"
    assert shown["host.entry", subject] == (
        "runs env API_TOKEN=… /nowhere/engram-mcp --root .",
        None,
    )
    assert shown["host.handshake", subject][1] == (
        "run `env API_TOKEN=… /nowhere/engram-mcp --root .` (… stands for your values) "
        "by hand to see why; "
        "then engram upgrade (or engram link codex --global --force)"
    )
    assert shown["host.hook", f"claude ({workspace / '.claude' / 'settings.json'})"] == (
        f"session hook runs {SCRIPTS / 'engram'} hook claude --api-key=…",
        None,
    )
    assert "PASS  host.entry [codex" in text.output
    assert "runs env API_TOKEN=… /nowhere/engram-mcp --root ." in text.output


def test_the_real_command_exits_1_on_a_failure_and_with_strict_on_a_warning(
    home: Path, workspace: Path
) -> None:
    """Out of click's standalone mode, a command's exit status was returned, not raised,
    and the `engram` command exited 0 whatever doctor found."""
    env = {**os.environ, "HOME": str(home), "PATH": "/usr/bin:/bin", "ENGRAM_SEMANTIC": "off"}

    def doctor(*flags: str) -> int:
        done = subprocess.run(
            [str(SCRIPTS / "engram"), "doctor", *flags],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return done.returncode

    assert doctor() == 0  # nothing linked: a warning only
    assert doctor("--strict") == 1
    (workspace / ".agents" / ".engram" / "rules").mkdir(parents=True, exist_ok=True)
    broken = workspace / ".agents" / ".engram" / "rules" / "broken.md"
    broken.write_text("---\nid: Not A Slug\ntype: rule\n---\n# Broken\n", encoding="utf-8")
    assert doctor() == 1


def test_a_registration_the_host_will_not_start_fails_with_its_exact_fix(
    run: Run, home: Path, workspace: Path
) -> None:
    """Claude Code waits for the person's approval of a project's server; Gemini CLI
    disables the servers of a folder nobody trusted. Doctor fails each with the step
    that makes the host start engram, and passes once it is taken."""
    assert run("link", "claude").exit_code == 0
    assert run("link", "gemini").exit_code == 0

    result = run("doctor", "--json")

    failed = {c["id"]: c for c in _checks(result.output) if c["status"] == "fail"}
    assert failed["host.claude_approval"]["message"] == (
        "Claude Code has not been told to start the project's engram server yet"
        " (`claude mcp list` shows it as pending approval): Claude Code will not start"
        " engram here"
    )
    assert failed["host.claude_approval"]["remediation"] == (
        'run `claude` here, trust the folder and approve engram (or add "engram" to'
        f" enabledMcpjsonServers in {workspace / '.claude' / 'settings.local.json'})"
    )
    assert failed["host.gemini_folder_trust"]["remediation"] == (
        f'run `gemini` here and trust the folder, or add "{workspace}": "TRUST_FOLDER" to'
        f" {home / '.gemini' / 'trustedFolders.json'}"
    )
    assert set(failed) == {"host.claude_approval", "host.gemini_folder_trust"}
    assert result.exit_code == 1
    assert json.loads(result.output)["ok"] is False

    _approve_in_claude_and_gemini(home, workspace)
    result = run("doctor", "--json")
    checks = _checks(result.output)
    assert [c["status"] for c in checks if c["id"] == "host.claude_approval"] == ["pass"]
    assert [c["status"] for c in checks if c["id"] == "host.gemini_folder_trust"] == ["pass"]
    assert result.exit_code == 0


def test_a_registration_blocked_while_another_of_its_host_serves_only_warns(
    run: Run, home: Path, workspace: Path
) -> None:
    """Gemini's folder trust stops its user registration too; Claude Code's pending
    project server is not the only way it starts engram when the user registration
    (`claude mcp add --scope user`) is there."""
    assert run("link", "claude").exit_code == 0
    assert run("link", "gemini", "--global").exit_code == 0
    user = {"command": str(SCRIPTS / "engram-mcp"), "args": [], "env": {}}
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"engram": user}}))

    checks = _checks(run("doctor", "--json").output)

    found = {c["id"]: c for c in checks if c["id"].startswith(("host.gemini", "host.claude"))}
    assert found["host.gemini_folder_trust"]["status"] == "fail"
    assert found["host.gemini_folder_trust"]["subject"] == (
        f"gemini (global: {home / '.gemini' / 'settings.json'})"
    )
    assert found["host.claude_approval"]["status"] == "warn"
    assert found["host.claude_approval"]["message"].endswith(
        f"; Claude Code starts engram from claude (global: {home / '.claude.json'}) instead"
    )


def test_a_root_that_is_gone_or_holds_no_project_fails_and_nothing_is_started(
    run: Run, home: Path, workspace: Path, tmp_path: Path
) -> None:
    """Every tool call of a server whose --root is gone fails, though it would answer
    initialize: doctor fails the entry and names the fix."""
    _approve_in_claude_and_gemini(home, workspace)
    entry = {"command": str(SCRIPTS / "engram-mcp"), "args": ["--root", str(tmp_path / "gone")]}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}))

    result = run("doctor", "--json")

    by_id = {check["id"]: check for check in _checks(result.output)}
    assert (by_id["host.root"]["status"], by_id["host.root"]["message"]) == (
        "fail",
        f"--root {tmp_path / 'gone'} does not exist: every tool call would fail",
    )
    assert by_id["host.root"]["remediation"] == "engram link claude --force (from the project)"
    assert by_id["host.handshake"]["status"] == "skip"
    assert result.exit_code == 1

    (tmp_path / "gone").mkdir()
    by_id = {check["id"]: check for check in _checks(run("doctor", "--json").output)}
    assert by_id["host.root"]["message"] == (
        f"--root {tmp_path / 'gone'} holds no project memory (no .agents/.engram)"
    )
    init_layout(tmp_path / "gone")
    by_id = {check["id"]: check for check in _checks(run("doctor", "--json").output)}
    assert by_id["host.root"]["message"] == f"serves {tmp_path / 'gone'}"
    assert by_id["host.handshake"]["status"] == "pass"
    assert by_id["host.handshake"]["message"] == (
        "initialize and tools/list answered (11 tools); engram_status answered"
    )


def test_servers_that_never_answer_cost_the_run_its_limit_never_more(
    home: Path, workspace: Path, tmp_path: Path
) -> None:
    """Two hung registrations: both fail, and the whole run ends within its limit (and
    the second it takes to kill them), not one limit per entry."""
    hung = tmp_path / "bin" / "engram-mcp"
    hung.parent.mkdir()
    hung.write_text("#!/bin/sh\nexec sleep 60\n")
    hung.chmod(0o755)
    entry = {"command": str(hung), "args": []}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": entry}}))
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps({"mcpServers": {"engram": entry}}))
    env = HostEnv.from_environ(workspace, {"HOME": str(home), "PATH": "/usr/bin:/bin"})
    started = time.monotonic()

    results = run_checks(
        DoctorContext(root=workspace, env=env, time_limit=2.0), ["engram.cli.doctor_hosts"]
    )

    elapsed = time.monotonic() - started
    handshakes = [r for r in results if r.id == "host.handshake"]
    assert [(r.status, r.message) for r in handshakes] == [("fail", "no answer within 2 s")] * 2
    assert elapsed < 4.5


def test_a_governed_registration_is_linked_checked_upgraded_and_unlinked(
    run: Run, home: Path, workspace: Path, tmp_path: Path
) -> None:
    """`engram link claude --host-profile P`: doctor loads the profile and expects the
    tools it grants (17 in all), link list names it, upgrade keeps it, unlink removes it."""
    profile = host_profile(tmp_path / "host")
    _approve_in_claude_and_gemini(home, workspace)
    assert run("link", "claude", "--host-profile", str(profile)).exit_code == 0
    entry = json.loads((workspace / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry["args"] == ["--always-load", "--host-profile", str(profile)]

    by_id = {check["id"]: check for check in _checks(run("doctor", "--json").output)}
    assert by_id["host.profile"]["message"] == f"governed memory of {profile}: 6 tools granted"
    assert by_id["host.handshake"]["message"] == (
        "initialize and tools/list answered (17 tools); engram_status answered"
    )
    listed = json.loads(run("link", "list", "--json").output)
    [claude] = [row for row in listed if row["target"] == "claude" and row["scope"] == "workspace"]
    assert claude["detail"] == f"governed: {profile}"

    assert run("upgrade").exit_code == 0
    entry = json.loads((workspace / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry["args"] == ["--always-load", "--host-profile", str(profile)]
    assert run("unlink", "claude").exit_code == 0
    assert not (workspace / ".mcp.json").exists()


def test_link_refuses_a_profile_folder_or_one_that_does_not_load(
    run: Run, workspace: Path, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host")
    result = run("link", "claude", "--host-profile", str(profile.parent))
    assert result.exit_code == 2
    assert f"--host-profile takes the profile file, not a folder: {profile}" in result.output
    result = run("link", "claude", "--host-profile", str(tmp_path / "none.toml"))
    assert result.exit_code != 0
    assert "host profile cannot be read" in result.output
    assert not (workspace / ".mcp.json").exists()
