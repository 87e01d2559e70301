"""``engram doctor`` checks for agent hosts: every registration, proven by a real
MCP handshake.

For each engram entry a host would read (:func:`engram.hosts.survey.survey`):

- ``host.entry``: the entry parses and names a command;
- ``host.args``: engram-mcp receives only options it knows: no words left by
  another launcher (``engram-mcp -y --package … engram-mcp``), no unknown option
  (the server would start, ignoring them), and the command names engram-mcp at all,
  started by engram's own form or a package runner (not ``docker run`` or ``ssh``,
  which engram cannot re-pin);
- ``host.command``: that command exists (absolute path, or found on ``PATH``);
- ``host.pin``: a pinned entry's version marker matches this engram and the server
  it starts (``skip`` for the unpinned ``engram-mcp`` form);
- ``host.handshake``: the command is spawned as the host would (same arguments and
  environment, in the workspace), answers ``initialize`` and ``tools/list``, and
  lists the expected tools; the latency is reported. Every registration gets its
  own handshake, even when two run the same command: each is proven separately.

Also ``host.config`` (a host file that cannot be parsed), ``host.linked`` (nothing
linked at all), ``host.gemini_trust`` (a Gemini ``mcpServers.engram`` with
``trust: true`` would skip the confirmation ``engram_commit`` needs),
``host.codex_approval`` (a Codex entry without
``[mcp_servers.engram.tools.engram_commit] approval_mode = "approve"`` would not
ask before every commit) and ``host.hook`` (an installed session hook's command
exists).

Codex skips without a word what it is not allowed to run, so four checks say why
engram would not run there (:mod:`engram.hosts.codex`): ``host.codex_enabled`` (an
entry with ``enabled = false``), ``host.codex_trust`` (a project whose
``.codex/config.toml`` or ``.codex/hooks.json`` engram wrote, not trusted in
``~/.codex/config.toml``), ``host.codex_hook_trust`` (engram's hook, which Codex
runs only once the person has trusted it) and ``host.codex_hooks`` (hooks switched
off in ``[features]``).
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram import __version__
from engram.cli.doctor import CheckResult, DoctorContext, Outcome, doctor_check
from engram.errors import HostConfigError
from engram.hosts import codex
from engram.hosts.command import HostEnv
from engram.hosts.entries import commit_approved
from engram.hosts.files import read_text, strip_bom
from engram.hosts.host_state import HostFinding, claude_approval, gemini_findings
from engram.hosts.jsonc import parse, to_python
from engram.hosts.masking import MASK, masks, shown_command, shown_options, shown_shell
from engram.hosts.survey import HookState, Registration, session_hooks, survey
from engram.testing.clients import StdioClient

__all__ = ["Handshake", "handshake", "host_checks"]


@dataclass(frozen=True, slots=True)
class Handshake:
    """The outcome of one real MCP handshake."""

    ok: bool
    message: str
    latency_ms: float
    version: str | None = None


def _exchange(client: StdioClient, expected: frozenset[str]) -> tuple[bool, str, str | None]:
    init = client.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "engram-doctor", "version": __version__},
        },
    )
    if "result" not in init:
        return False, f"initialize failed: {init.get('error')}", None
    version = init["result"].get("serverInfo", {}).get("version")
    client.notify("notifications/initialized")
    listed = client.request("tools/list", {})
    names = {tool.get("name") for tool in listed.get("result", {}).get("tools", [])}
    missing = sorted(expected - names)
    if missing:
        return False, f"tools/list lacks {', '.join(missing)}", version
    return True, f"initialize and tools/list answered ({len(names)} tools)", version


def handshake(
    argv: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    expected: frozenset[str],
    timeout: float,
) -> Handshake:
    """Spawn ``argv``, run ``initialize`` and ``tools/list``, check ``expected`` tools."""
    started = time.perf_counter()
    try:
        client = StdioClient(command=list(argv), cwd=cwd, env=env, timeout=timeout)
    except OSError as error:
        return Handshake(False, f"cannot start: {error.strerror or error}", 0.0)
    try:
        ok, message, version = _exchange(client, expected)
    except queue.Empty:
        ok, message, version = False, f"no answer within {timeout:g} s", None
    except (EOFError, BrokenPipeError):
        ok, message, version = False, "the server exited during the handshake", None
    except json.JSONDecodeError:
        ok, message, version = False, "the server wrote something that is not JSON-RPC", None
    finally:
        latency = (time.perf_counter() - started) * 1000
        client.stop()  # closes its input; kills it if it does not exit in time
    return Handshake(ok, message, latency, version)


def _resolve(program: str, env: HostEnv) -> str | None:
    if os.path.isabs(program):
        return program if os.access(program, os.X_OK) and Path(program).is_file() else None
    return env.which(program) if program else None


def _relink(registration: Registration) -> str:
    """``engram link`` for this registration's target and scope, with ``--force``."""
    scope = " --global" if registration.scope == "global" else ""
    return f"engram link {registration.target.name}{scope} --force"


def _args_check(registration: Registration) -> CheckResult:
    subject, argv = registration.subject, registration.argv
    # The command line as link reads it (OpenCode's: its ``command`` list alone), so
    # that doctor asks only for what a re-pin does.
    line = registration.shape.command_line(registration.entry)
    if line is None:
        message = f"`{shown_command(argv)}` names no engram-mcp: engram cannot re-pin it"
        fix = f"{_relink(registration)} (replaces it with engram's entry)"
        return CheckResult("host.args", "warn", "warning", message, fix, subject)
    if not line.repinnable:
        # The program says which launcher; host.entry shows the whole line, masked.
        message = (
            f"engram-mcp runs through `{shown_command([line.program])}`: engram cannot re-pin it"
        )
        fix = f"{_relink(registration)} (replaces it with engram's entry)"
        return CheckResult("host.args", "warn", "warning", message, fix, subject)
    stray = (*line.leftover, *line.unknown_options)
    if stray:
        message = f"engram-mcp is given arguments it does not take: {shown_command(stray)}"
        # A re-pin replaces a launcher's leftover words, and keeps options as they are.
        fix = "engram upgrade" if line.leftover else f"remove them from {registration.path}"
        return CheckResult("host.args", "warn", "warning", message, fix, subject)
    options = shown_options(line.options) or "none"
    return CheckResult(
        "host.args", "pass", "warning", f"engram-mcp options: {options}", None, subject
    )


def _registration_checks(
    registration: Registration, context: DoctorContext
) -> Iterator[CheckResult]:
    subject, argv = registration.subject, registration.argv
    fix = f"engram upgrade (or {_relink(registration)})"
    if not argv or not argv[0]:
        yield CheckResult("host.entry", "fail", "error", "entry names no command", fix, subject)
        return
    shown = shown_command(argv)
    yield CheckResult("host.entry", "pass", "error", f"runs {shown}", None, subject)
    yield _args_check(registration)
    program = shown_command(argv[:1])
    if _resolve(argv[0], context.env) is None:
        message = f"command not found: {program}"
        yield CheckResult("host.command", "fail", "error", message, fix, subject)
        yield CheckResult("host.handshake", "skip", "error", "command not found", fix, subject)
        return
    yield CheckResult("host.command", "pass", "error", f"found {program}", None, subject)
    expected, timeout = context.expected_tools, context.handshake_timeout
    done = handshake(argv, registration.env, context.root, expected, timeout)
    yield _pin_check(registration, done, context.env.version, fix)
    status: Outcome = "pass" if done.ok else "fail"
    masked = f" ({MASK} stands for your values)" if masks(argv) else ""
    remedy = None if done.ok else f"run `{shown}`{masked} by hand to see why; then {fix}"
    yield CheckResult(
        "host.handshake", status, "error", done.message, remedy, subject, round(done.latency_ms, 1)
    )


def _pin_check(registration: Registration, done: Handshake, version: str, fix: str) -> CheckResult:
    subject, pinned = registration.subject, registration.pinned
    if pinned is None:
        message = f"not pinned: runs {shown_command(registration.argv[:1])} as found on PATH"
        if done.version and done.version != version:
            message += f" (it is engram {done.version}, this engram is {version})"
            return CheckResult("host.pin", "warn", "warning", message, fix, subject)
        return CheckResult("host.pin", "skip", "warning", message, None, subject)
    if pinned != version or (done.version is not None and done.version != pinned):
        running = f"; the command runs {done.version}" if done.version else ""
        message = f"pinned to {pinned}, this engram is {version}{running}"
        return CheckResult("host.pin", "warn", "warning", message, fix, subject)
    return CheckResult("host.pin", "pass", "warning", f"pinned to {pinned}", None, subject)


def _gemini_trust(registrations: list[Registration]) -> Iterator[CheckResult]:
    for registration in registrations:
        if registration.target.name != "gemini":
            continue
        subject = registration.subject
        if registration.entry.get("trust") is True:
            yield CheckResult(
                "host.gemini_trust",
                "warn",
                "warning",
                "mcpServers.engram sets trust: true, so Gemini skips the confirmation "
                "engram_commit needs",
                f'remove "trust": true from {registration.path}',
                subject,
            )
        else:
            message = "Gemini asks before engram_commit (no trust: true)"
            yield CheckResult("host.gemini_trust", "pass", "warning", message, None, subject)


def _codex_approval(registrations: list[Registration]) -> Iterator[CheckResult]:
    for registration in registrations:
        if not registration.shape.commit_approval:
            continue
        subject = registration.subject
        if commit_approved(registration.entry):
            message = 'Codex asks before engram_commit (approval_mode = "approve")'
            yield CheckResult("host.codex_approval", "pass", "warning", message, None, subject)
        else:
            yield CheckResult(
                "host.codex_approval",
                "warn",
                "warning",
                "the entry lacks [mcp_servers.engram.tools.engram_commit] "
                'approval_mode = "approve", so Codex may run engram_commit '
                "without asking the human",
                f"engram link {registration.target.name} --global (or engram upgrade)",
                subject,
            )


def _codex_enabled(registrations: list[Registration]) -> Iterator[CheckResult]:
    for registration in registrations:
        if registration.target.name != "codex":
            continue
        subject = registration.subject
        if registration.entry.get("enabled") is False:
            yield CheckResult(
                "host.codex_enabled",
                "warn",
                "warning",
                "[mcp_servers.engram] sets enabled = false, so Codex does not start engram-mcp",
                f"remove enabled = false from [mcp_servers.engram] in {registration.path}",
                subject,
            )
        else:
            message = "Codex starts engram-mcp (no enabled = false)"
            yield CheckResult("host.codex_enabled", "pass", "warning", message, None, subject)


def _codex_trust(root: Path, level: str | None, files: list[Path], user: Path) -> CheckResult:
    """Whether Codex reads the project files engram wrote: only in a trusted project."""
    subject = f"codex (project: {root})"
    shown = " and ".join(str(path) for path in files)
    table = f"[projects.{json.dumps(str(root))}]"
    if level == "trusted":
        message = f"Codex trusts {root}, so it reads {shown}"
        return CheckResult("host.codex_trust", "pass", "warning", message, None, subject)
    if level is None:
        message = f"Codex ignores {shown}: {root} is not a trusted project (no {table} in {user})"
        fix = (
            f'start codex in {root} and answer "Trust this folder?" with yes '
            f'(or add {table} trust_level = "trusted" to {user})'
        )
    else:
        message = f'Codex ignores {shown}: {table} has trust_level = "{level}" in {user}'
        fix = f'set trust_level = "trusted" under {table} in {user}'
    return CheckResult("host.codex_trust", "warn", "warning", message, fix, subject)


def _codex_hook_keys(state: HookState) -> list[tuple[str, ...]]:
    """The keys under which Codex records trust in each of engram's hook items (the
    file's path as written and as resolved: either may be Codex's)."""
    _, text = strip_bom(read_text(state.path) or "")
    try:
        document = to_python(text, parse(text, jsonc=False, source=state.path))
    except HostConfigError:  # installed_hooks read it a moment ago; changed since
        return []
    hooks = document.get("hooks") if isinstance(document, dict) else None
    items = hooks.get("SessionStart") if isinstance(hooks, dict) else None
    paths = dict.fromkeys((state.path, state.path.resolve()))
    return [
        tuple(codex.hook_trust_key(path, "SessionStart", group, item) for path in paths)
        for group, item in codex.engram_hook_positions(items if isinstance(items, list) else [])
    ]


def _codex_hook_trust(
    state: HookState, config: dict[str, Any] | None, root: Path, user: Path
) -> Iterator[CheckResult]:
    subject = f"codex ({state.path})"
    for keys in _codex_hook_keys(state):
        if any(codex.hook_trusted(config, key) for key in keys):
            message = (
                "you trusted engram's SessionStart hook in Codex (Codex asks again once "
                "it changes, as after engram upgrade)"
            )
            yield CheckResult("host.codex_hook_trust", "pass", "warning", message, None, subject)
            continue
        message = (
            "Codex skips engram's SessionStart hook until you trust it "
            f'(no [hooks.state."{keys[0]}"] trusted_hash in {user})'
        )
        fix = (
            f'start codex in {root} and choose "Trust all and continue" when it says '
            '"Hooks need review" (or trust it with /hooks)'
        )
        yield CheckResult("host.codex_hook_trust", "warn", "warning", message, fix, subject)


def _codex_hooks_feature(files: dict[Path, dict[str, Any] | None]) -> CheckResult:
    for path, config in files.items():
        flag = codex.hooks_switched_off(config)
        if flag is not None:
            return CheckResult(
                "host.codex_hooks",
                "warn",
                "warning",
                f"[features] {flag} = false in {path} turns Codex's hooks off, so "
                "engram's SessionStart hook never runs",
                f"remove {flag} = false from [features] in {path} (hooks are on by default)",
                "codex",
            )
    message = "Codex's hooks are on ([features] hooks, on by default)"
    return CheckResult("host.codex_hooks", "pass", "warning", message, None, "codex")


def _codex_checks(
    context: DoctorContext, registrations: list[Registration]
) -> Iterator[CheckResult]:
    """What Codex needs before it runs engram's project files: trust, hook trust, hooks on."""
    yield from _codex_enabled(registrations)
    env = context.env
    hooks = [state for state in session_hooks(env) if state.target.name == "codex"]
    files = [r.path for r in registrations if r.target.name == "codex" and r.scope == "workspace"]
    files += [state.path for state in hooks]
    user = codex.user_config_path(env)
    config = codex.read_config(user)
    if not files or (config is None and user.exists()):
        return  # a broken user file is reported once, by host.config
    root = codex.project_root(env.workspace, config)
    if not codex.in_home(env):  # in the home, .codex is the user's own: no project trust
        yield _codex_trust(root, codex.trust_level(config, root), files, user)
    for state in hooks:
        yield from _codex_hook_trust(state, config, root, user)
    if hooks:
        project = env.workspace / ".codex" / "config.toml"
        yield _codex_hooks_feature({user: config, project: codex.read_config(project)})


def _hook_checks(context: DoctorContext) -> Iterator[CheckResult]:
    for state in session_hooks(context.env):
        subject = f"{state.target.name} ({state.path})"
        for command in (str(item["command"]) for item in state.items):
            program = shlex.split(command)[0]
            if _resolve(program, context.env) is None:
                fix = f"engram upgrade (or engram link {state.target.name} --hooks --force)"
                message = f"hook command not found: {shown_command([program])}"
                yield CheckResult("host.hook", "fail", "error", message, fix, subject)
            else:
                message = f"session hook runs {shown_shell(command)}"
                yield CheckResult("host.hook", "pass", "error", message, None, subject)


@doctor_check("hosts")
def host_checks(context: DoctorContext) -> Iterator[CheckResult]:
    """Every linked host's entry, command, pin and handshake; trust and hooks."""
    statuses = survey(context.env)
    registrations = [status.registration for status in statuses if status.registration]
    broken = [status for status in statuses if status.state == "error"]
    if not registrations and not broken:
        yield CheckResult(
            "host.linked",
            "warn",
            "warning",
            "engram is not linked in any agent host",
            "engram link <host> (engram link list shows the targets)",
        )
    for status in broken:
        subject = f"{status.target.name} ({status.scope})"
        fix = "fix the file by hand; engram never overwrites a file it cannot parse"
        yield CheckResult("host.config", "fail", "error", status.detail, fix, subject)
    for registration in registrations:
        yield from _registration_checks(registration, context)
    yield from _gemini_trust(registrations)
    yield from _host_decisions(context, registrations)
    yield from _codex_approval(registrations)
    yield from _codex_checks(context, registrations)
    yield from _hook_checks(context)


def _host_decisions(
    context: DoctorContext, registrations: list[Registration]
) -> Iterator[CheckResult]:
    """What Claude Code and Gemini CLI decided about the registrations they read:
    approved, trusted, enabled (:mod:`engram.hosts.host_state`)."""
    for registration in registrations:
        name, scope = registration.target.name, registration.scope
        findings: list[HostFinding] = []
        if name == "claude" and scope == "workspace" and registration.path.name == ".mcp.json":
            finding = claude_approval(context.env)
            if finding is None:
                message = "Claude Code was told to start the project's engram server"
                yield CheckResult(
                    "host.claude_approval", "pass", "warning", message, None, registration.subject
                )
            else:
                findings.append(finding)
        elif name == "gemini":
            findings += gemini_findings(context.env, workspace_entry=scope == "workspace")
        for finding in findings:
            yield CheckResult(
                finding.check,
                finding.severity,
                "error" if finding.severity == "fail" else "warning",
                finding.detail,
                finding.fix,
                registration.subject,
            )
