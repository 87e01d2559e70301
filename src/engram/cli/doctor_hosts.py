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
import math
import os
import queue
import shlex
import shutil
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram import __version__
from engram.cli.doctor import CheckResult, DoctorContext, Outcome, doctor_check
from engram.errors import EngramError, HostConfigError
from engram.hosts import codex
from engram.hosts.command import HostEnv, new_shell_path
from engram.hosts.entries import commit_approved
from engram.hosts.files import read_text, strip_bom
from engram.hosts.host_state import (
    HostFinding,
    Version,
    claude_approval,
    gemini_findings,
    host_version,
)
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


def _exchange(
    client: StdioClient, expected: frozenset[str], call: bool, deadline: float
) -> tuple[bool, str, str | None]:
    def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        client.timeout = max(0.05, deadline - time.monotonic())
        return client.request(method, params)

    init = ask(
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
    listed = ask("tools/list", {})
    names = {tool.get("name") for tool in listed.get("result", {}).get("tools", [])}
    missing = sorted(expected - names)
    if missing:
        return False, f"tools/list lacks {', '.join(missing)}", version
    answered = f"initialize and tools/list answered ({len(names)} tools)"
    if not call:
        return True, answered, version
    status = ask("tools/call", {"name": "engram_status", "arguments": {}})
    result = status.get("result", {})
    if "error" in status or result.get("isError"):
        return False, f"engram_status failed: {_call_error(status)}", version
    return True, f"{answered}; engram_status answered", version


def _call_error(response: dict[str, Any]) -> str:
    """What a failed tool call says: the JSON-RPC error's message, or the code and
    message of the envelope the tool returned (never memory text)."""
    if "error" in response:
        return str(response["error"].get("message"))
    for block in response.get("result", {}).get("content", [])[1:]:
        try:
            envelope = json.loads(block.get("text", ""))
        except (TypeError, ValueError):
            continue
        error = envelope.get("error") if isinstance(envelope, dict) else None
        if isinstance(error, dict):
            return f"{error.get('code')}: {error.get('message')}"
    return "the tool reported an error"


def handshake(
    argv: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    expected: frozenset[str],
    timeout: float,
    call: bool = False,
) -> Handshake:
    """Spawn ``argv``, run ``initialize`` and ``tools/list``, check ``expected`` tools;
    with ``call``, also call ``engram_status`` (a server whose tools fail is no working
    server). The whole exchange, the server's end included, takes ``timeout`` at most
    (and a second to kill a server that does not end)."""
    started = time.perf_counter()
    deadline = time.monotonic() + timeout
    try:
        client = StdioClient(command=list(argv), cwd=cwd, env=env, timeout=timeout)
    except OSError as error:
        return Handshake(False, f"cannot start: {error.strerror or error}", 0.0)
    try:
        ok, message, version = _exchange(client, expected, call, deadline)
    except queue.Empty:
        shown = math.ceil(timeout * 10) / 10  # the limit, not the rest of it a clock left
        ok, message, version = False, f"no answer within {shown:g} s", None
    except (EOFError, BrokenPipeError):
        ok, message, version = False, "the server exited during the handshake", None
    except json.JSONDecodeError:
        ok, message, version = False, "the server wrote something that is not JSON-RPC", None
    finally:
        latency = (time.perf_counter() - started) * 1000
        client.timeout = max(0.5, min(1.0, deadline - time.monotonic()))
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


@dataclass
class _Served:
    """What doctor proves of one registration: the checks made without starting it,
    and, when they let it start, how (``argv`` in ``cwd``) and what it must list."""

    registration: Registration
    results: list[CheckResult]
    argv: list[str] | None = None
    cwd: Path | None = None
    expected: frozenset[str] = frozenset()
    #: Whether a tool call must work too (the project the server serves exists).
    call: bool = False


def _root_check(registration: Registration, context: DoctorContext) -> tuple[CheckResult, Path]:
    """The project the server serves: ``--root`` (relative to the workspace, where the
    host starts it), else the workspace; a missing one fails every tool call."""
    given = registration.option("--root")
    root = context.root if given is None else context.root / Path(given).expanduser()
    subject, fix = registration.subject, f"{_relink(registration)} (from the project)"
    if given is not None and not root.is_dir():
        message = f"--root {given} does not exist: every tool call would fail"
        return CheckResult("host.root", "fail", "error", message, fix, subject), root
    if given is not None and not (root / ".agents" / ".engram").is_dir():
        message = f"--root {given} holds no project memory (no .agents/.engram)"
        fix = f"run `engram init` in {root}, or {fix}"
        return CheckResult("host.root", "fail", "error", message, fix, subject), root
    message = f"serves {root}" if given is not None else "serves the project it is started in"
    return CheckResult("host.root", "pass", "error", message, None, subject), root


def _profile_check(
    registration: Registration, context: DoctorContext
) -> tuple[CheckResult | None, frozenset[str] | None]:
    """A governed registration's profile (``--host-profile``): loads, and grants the
    tools its handshake must list. ``None`` for a project-only registration."""
    given = registration.host_profile
    if given is None:
        return None, frozenset()
    from engram.host.profile import load_profile

    subject = registration.subject
    path = context.root / Path(given).expanduser()
    try:
        profile = load_profile(path)
    except EngramError as error:
        fix = f"check {path} (engram host init writes one), then {_relink(registration)}"
        message = f"--host-profile {given}: {error.detail}"
        return CheckResult("host.profile", "fail", "error", message, fix, subject), None
    if not profile.enabled:
        message = f"{profile.path} sets [memory] enabled = false: no governed tool is served"
        fix = f"set [memory] enabled = true in {profile.path}"
        return CheckResult("host.profile", "warn", "warning", message, fix, subject), frozenset()
    granted = frozenset(f"engram_memory_{name}" for name in profile.grants)
    message = f"governed memory of {profile.path}: {len(granted)} tools granted"
    return CheckResult("host.profile", "pass", "error", message, None, subject), granted


def _prepare(registration: Registration, context: DoctorContext, paths: _Paths) -> _Served:
    """The checks of one registration that need no server, and how to start it."""
    subject, argv = registration.subject, registration.argv
    fix = f"engram upgrade (or {_relink(registration)})"
    served = _Served(registration, [])
    if not argv or not argv[0]:
        served.results.append(
            CheckResult("host.entry", "fail", "error", "entry names no command", fix, subject)
        )
        return served
    shown = shown_command(argv)
    served.results += [
        CheckResult("host.entry", "pass", "error", f"runs {shown}", None, subject),
        _args_check(registration),
    ]
    root_result, root = _root_check(registration, context)
    profile_result, granted = _profile_check(registration, context)
    served.results += [root_result] + ([profile_result] if profile_result else [])
    program = shown_command(argv[:1])
    if _resolve(argv[0], context.env) is None:
        message = f"command not found: {program}"
        served.results.append(CheckResult("host.command", "fail", "error", message, fix, subject))
        return served
    if not os.path.isabs(argv[0]) and paths.new_shell(argv[0]) is None:
        message = (
            f"{program} is found on this shell's PATH only: a new shell, and a host started"
            " from the desktop, do not find it"
        )
        remedy = (
            f"engram upgrade (writes the absolute path), or put {program} on the PATH your"
            " shell's profile sets (pipx install engram-trust does)"
        )
        served.results.append(
            CheckResult("host.command", "fail", "error", message, remedy, subject)
        )
        return served
    served.results.append(
        CheckResult("host.command", "pass", "error", f"found {program}", None, subject)
    )
    if root_result.status == "fail" or granted is None:
        return served
    served.argv, served.cwd = list(argv), context.root
    served.expected = context.expected_tools | granted
    served.call = (root / ".agents" / ".engram").is_dir()
    return served


class _Paths:
    """The ``PATH`` a new shell gets, worked out once a run and only when an entry
    names its program without a path."""

    def __init__(self, context: DoctorContext) -> None:
        self._env, self._deadline = context.env, context.deadline
        self._path: str | None = None

    def new_shell(self, program: str) -> str | None:
        if self._path is None:
            self._path = new_shell_path(self._env, min(5.0, self._deadline.left()))
        return shutil.which(program, path=self._path)


def _registration_checks(
    served: _Served, done: Handshake | None, env: HostEnv
) -> Iterator[CheckResult]:
    registration = served.registration
    yield from served.results
    subject, argv = registration.subject, registration.argv
    fix = f"engram upgrade (or {_relink(registration)})"
    if done is None:
        if argv and argv[0]:
            message = "not started: a check above failed"
            yield CheckResult("host.handshake", "skip", "error", message, fix, subject)
        return
    yield _pin_check(registration, done, env.version, fix)
    status: Outcome = "pass" if done.ok else "fail"
    masked = f" ({MASK} stands for your values)" if masks(argv) else ""
    remedy = (
        None if done.ok else f"run `{shown_command(argv)}`{masked} by hand to see why; then {fix}"
    )
    yield CheckResult(
        "host.handshake", status, "error", done.message, remedy, subject, round(done.latency_ms, 1)
    )


def _handshakes(served: list[_Served], context: DoctorContext) -> list[Handshake | None]:
    """Every registration's handshake at once, all within the run's deadline: one
    server that never answers costs the run its limit, never more."""
    started = [item for item in served if item.argv is not None]
    if not started:
        return [None] * len(served)
    deadline = context.deadline

    def prove(item: _Served) -> Handshake:
        assert item.argv is not None
        assert item.cwd is not None
        env = item.registration.env
        return handshake(item.argv, env, item.cwd, item.expected, deadline.left(), item.call)

    with ThreadPoolExecutor(max_workers=min(8, len(started))) as pool:
        done = dict(zip(map(id, started), pool.map(prove, started), strict=True))
    return [done.get(id(item)) for item in served]


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


def _codex_trust_finding(
    root: Path, level: str | None, files: list[Path], user: Path
) -> HostFinding:
    """Why Codex ignores the project files engram wrote: the project is not trusted."""
    shown = " and ".join(str(path) for path in files)
    table = f"[projects.{json.dumps(str(root))}]"
    if level is None:
        message = f"Codex ignores {shown}: {root} is not a trusted project (no {table} in {user})"
        fix = (
            f'start codex in {root} and answer "Trust this folder?" with yes '
            f'(or add {table} trust_level = "trusted" to {user})'
        )
    else:
        message = f'Codex ignores {shown}: {table} has trust_level = "{level}" in {user}'
        fix = f'set trust_level = "trusted" under {table} in {user}'
    return HostFinding("host.codex_trust", message, fix)


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


def _codex_files(context: DoctorContext, registrations: list[Registration]) -> list[Path]:
    """The project files engram wrote that Codex reads only in a trusted project."""
    env = context.env
    files = [r.path for r in registrations if r.target.name == "codex" and r.scope == "workspace"]
    hooks = [state.path for state in session_hooks(env) if state.target.name == "codex"]
    return files + hooks


def _codex_checks(
    context: DoctorContext, registrations: list[Registration], config: dict[str, Any] | None
) -> Iterator[CheckResult]:
    """Whether Codex reads engram's project files (an untrusted one holding the entry
    is said by :func:`_host_decisions`), and what it needs before it runs engram's
    hook: the hook trusted, hooks on."""
    env = context.env
    hooks = [state for state in session_hooks(env) if state.target.name == "codex"]
    files = _codex_files(context, registrations)
    user = codex.user_config_path(env)
    if not files or (config is None and user.exists()):
        return  # a broken user file is reported once, by host.config
    root = codex.project_root(env.workspace, config)
    entry = any(r.target.name == "codex" and r.scope == "workspace" for r in registrations)
    if not codex.in_home(env):  # in the home, .codex is the user's own: no project trust
        level = codex.trust_level(config, root)
        subject = f"codex (project: {root})"
        if level == "trusted":
            shown = " and ".join(str(path) for path in files)
            message = f"Codex trusts {root}, so it reads {shown}"
            yield CheckResult("host.codex_trust", "pass", "warning", message, None, subject)
        elif not entry:  # the hook alone: Codex starts engram, it skips the hook
            found = _codex_trust_finding(root, level, files, user)
            yield CheckResult(found.check, "warn", "warning", found.detail, found.fix, subject)
    for state in hooks:
        yield from _codex_hook_trust(state, config, root, user)
    if hooks:
        project = env.workspace / ".codex" / "config.toml"
        yield _codex_hooks_feature({user: config, project: codex.read_config(project)})


def _hook_checks(context: DoctorContext, paths: _Paths) -> Iterator[CheckResult]:
    for state in session_hooks(context.env):
        subject = f"{state.target.name} ({state.path})"
        for command in (str(item["command"]) for item in state.items):
            program = shlex.split(command)[0]
            fix = f"engram upgrade (or engram link {state.target.name} --hooks --force)"
            if _resolve(program, context.env) is None:
                message = f"hook command not found: {shown_command([program])}"
                yield CheckResult("host.hook", "fail", "error", message, fix, subject)
            elif not os.path.isabs(program) and paths.new_shell(program) is None:
                message = (
                    f"hook command {shown_command([program])} is found on this shell's PATH"
                    " only: a new shell, and a host started from the desktop, do not find it"
                )
                yield CheckResult("host.hook", "fail", "error", message, fix, subject)
            else:
                message = f"session hook runs {shown_shell(command)}"
                yield CheckResult("host.hook", "pass", "error", message, None, subject)


@doctor_check("hosts")
def host_checks(context: DoctorContext) -> Iterator[CheckResult]:
    """Every linked host's entry, command, pin and handshake; what each host decided
    about starting it; hooks."""
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
    paths = _Paths(context)
    served = [_prepare(registration, context, paths) for registration in registrations]
    for item, done in zip(served, _handshakes(served, context), strict=True):
        yield from _registration_checks(item, done, context.env)
    yield from _gemini_trust(registrations)
    codex_config = codex.read_config(codex.user_config_path(context.env))
    yield from _host_decisions(context, registrations, codex_config)
    yield from _codex_approval(registrations)
    yield from _codex_checks(context, registrations, codex_config)
    yield from _hook_checks(context, paths)


#: Codex reads a project's ``.codex/config.toml`` from 0.79 (measured: 0.77 did not), and
#: only in a trusted project from 0.89 (0.79 to 0.87 read it without).
_CODEX_PROJECT_FILES_SINCE: Version = (0, 79, 0)
_CODEX_TRUST_SINCE: Version = (0, 89, 0)
#: What a blocked registration's host is called in a message.
_TITLES = {"claude": "Claude Code", "gemini": "Gemini CLI", "codex": "Codex"}


def _host_decisions(
    context: DoctorContext, registrations: list[Registration], codex_config: dict[str, Any] | None
) -> Iterator[CheckResult]:
    """What each host decided about the registrations it reads (approved, trusted,
    enabled: :mod:`engram.hosts.host_state`). A registration its host will not start
    fails, with the step that makes it start; it only warns when another registration
    of that host starts engram here instead."""
    blocked: list[tuple[Registration, HostFinding]] = []
    for registration in registrations:
        found = list(_blockers(context, registration, codex_config))
        if not found:
            yield from _started(registration)
        blocked += [(registration, finding) for finding in found]
    stopped = {id(registration) for registration, _ in blocked}
    seen: set[tuple[str, str, str]] = set()
    for registration, finding in blocked:
        name = registration.target.name
        key = (name, finding.check, finding.detail)
        if key in seen:  # a host-wide decision (Gemini's folder trust) is said once
            continue
        seen.add(key)
        others = [r for r in registrations if r.target.name == name and id(r) not in stopped]
        host_wide = sum(1 for r, f in blocked if f == finding) > 1
        subject = name if host_wide else registration.subject
        title = _TITLES.get(name, name)
        if others:
            message = f"{finding.detail}; {title} starts engram from {others[0].subject} instead"
            yield CheckResult(finding.check, "warn", "warning", message, finding.fix, subject)
        else:
            message = f"{finding.detail}: {title} will not start engram here"
            yield CheckResult(finding.check, "fail", "error", message, finding.fix, subject)


def _started(registration: Registration) -> Iterator[CheckResult]:
    """The pass results of a registration its host starts."""
    subject, name = registration.subject, registration.target.name
    if name == "claude" and _is_project_file(registration):
        message = "Claude Code was told to start the project's engram server"
        yield CheckResult("host.claude_approval", "pass", "warning", message, None, subject)
    elif name == "codex":
        message = "Codex starts engram-mcp (no enabled = false; its file is read)"
        yield CheckResult("host.codex_enabled", "pass", "warning", message, None, subject)
    elif name == "gemini":
        message = "Gemini CLI starts it here (the folder is trusted; engram is not disabled)"
        yield CheckResult("host.gemini_folder_trust", "pass", "warning", message, None, subject)


def _is_project_file(registration: Registration) -> bool:
    return registration.scope == "workspace" and registration.path.name == ".mcp.json"


def _blockers(
    context: DoctorContext, registration: Registration, codex_config: dict[str, Any] | None
) -> Iterator[HostFinding]:
    env, name = context.env, registration.target.name
    if name == "claude" and _is_project_file(registration):
        finding = claude_approval(env, lambda: _version_of("claude", context))
        if finding is not None:
            yield finding
    elif name == "gemini":
        yield from gemini_findings(env, lambda: _version_of("gemini", context))
    elif name == "codex":
        if registration.entry.get("enabled") is False:
            yield HostFinding(
                "host.codex_enabled",
                "[mcp_servers.engram] sets enabled = false, so Codex does not start engram-mcp",
                f"remove enabled = false from [mcp_servers.engram] in {registration.path}",
            )
        user = codex.user_config_path(env)
        broken = codex_config is None and user.exists()  # reported once, by host.config
        if registration.scope == "workspace" and not broken and not codex.in_home(env):
            root = codex.project_root(env.workspace, codex_config)
            level = codex.trust_level(codex_config, root)
            if level != "trusted":
                found = _version_of("codex", context)
                if found is not None and found < _CODEX_PROJECT_FILES_SINCE:
                    shown = ".".join(map(str, found))
                    yield HostFinding(
                        "host.codex_trust",
                        f"Codex {shown} never reads a project's .codex/config.toml",
                        "engram link codex --global (or upgrade Codex)",
                    )
                elif found is None or found >= _CODEX_TRUST_SINCE:
                    files = _codex_files(context, [registration])
                    yield _codex_trust_finding(root, level, files, user)


def _version_of(program: str, context: DoctorContext) -> Version | None:
    """A host program's version, asked of the one on ``PATH`` (``None``: not there, or
    no answer in time)."""
    found = context.env.which(program)
    return host_version(found, min(10.0, context.deadline.left())) if found else None
