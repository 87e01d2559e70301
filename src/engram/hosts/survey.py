"""Where engram is linked on this machine: the state of every target and scope.

``engram link list`` shows it and ``engram doctor`` checks it. Reading never
changes a file; a file that cannot be parsed is reported as an ``error`` state
(with the parse error's detail) rather than stopping the survey.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from engram.errors import HostConfigError
from engram.hosts.command import PIN_VARIABLE, HostEnv, own_option_marks
from engram.hosts.entries import EntryShape
from engram.hosts.files import read_text
from engram.hosts.hooks import installed_hooks
from engram.hosts.host_state import claude_local_entry
from engram.hosts.link import hook_present
from engram.hosts.registry import TARGETS
from engram.hosts.target import ConfigFile, PrintedCommand, Scope, Target

__all__ = ["HookState", "Registration", "State", "Status", "session_hooks", "survey"]

State = Literal["linked", "not linked", "skipped", "error"]


@dataclass(frozen=True)
class Registration:
    """engram's MCP entry as one host will read it."""

    target: Target
    scope: Scope
    path: Path
    entry: dict[str, Any]
    shape: EntryShape

    @property
    def argv(self) -> list[str]:
        return self.shape.argv(self.entry)

    @property
    def env(self) -> dict[str, str]:
        return self.shape.env(self.entry)

    @property
    def pinned(self) -> str | None:
        return self.env.get(PIN_VARIABLE)

    def option(self, name: str) -> str | None:
        """The value engram-mcp's option ``name`` has in the entry (the last given, as
        its parser reads it), or ``None``."""
        line = self.shape.command_line(self.entry)
        if line is None:
            return None
        found, options = None, line.options
        marks = own_option_marks(options)
        for index, (word, own) in enumerate(zip(options, marks, strict=True)):
            if own and word == name and index + 1 < len(options):
                found = options[index + 1]
            elif own and word.startswith(name + "="):
                found = word.partition("=")[2]
        return found

    @property
    def host_profile(self) -> str | None:
        """The host profile of a governed registration (``--host-profile``)."""
        return self.option("--host-profile")

    @property
    def subject(self) -> str:
        return f"{self.target.name} ({self.scope}: {self.path})"


@dataclass(frozen=True)
class HookState:
    """engram's session hook as installed in a workspace hook file: its hook items
    (``{"command": …}``, wherever they sit in the host's matcher groups)."""

    target: Target
    path: Path
    items: tuple[Any, ...]


@dataclass(frozen=True)
class Status:
    """One row of ``engram link list``."""

    target: Target
    scope: Scope
    state: State
    path: Path | None
    detail: str = ""
    registration: Registration | None = None


def _config_status(target: Target, scope: Scope, config: ConfigFile) -> Status:
    try:
        _, entry = config.read()
    except HostConfigError as error:
        return Status(target, scope, "error", config.path, error.detail)
    if entry is None:
        return Status(target, scope, "not linked", config.path)
    registration = Registration(target, scope, config.path, entry, config.shape)
    return Status(target, scope, "linked", config.path, registration=registration)


def _status(target: Target, scope: Scope, env: HostEnv) -> Status:
    registration = target.registration(env, scope)
    if isinstance(registration, str):
        return Status(target, scope, "skipped", None, registration)
    if isinstance(registration, PrintedCommand):
        status = _config_status(target, scope, registration.registry)
        if status.state == "not linked":
            detail = f"`engram link {target.name} --global` prints the command to run"
            return Status(target, scope, "not linked", status.path, detail)
        return status
    status = _config_status(target, scope, registration)
    if status.state == "not linked" and scope == "workspace" and target.name == "claude":
        local = claude_local_entry(env)
        if local is not None:  # `claude mcp add engram …` without --scope
            path = env.home / ".claude.json"
            found = Registration(target, scope, path, local, registration.shape)
            detail = "local scope (claude mcp add), in ~/.claude.json"
            return Status(target, scope, "linked", path, detail, found)
    try:
        hooked = scope == "workspace" and hook_present(target, env, scope)
    except HostConfigError as error:  # the hook file is broken: report it, do not stop
        return Status(target, scope, "error", status.path, error.detail)
    details = [status.detail] if status.detail else []
    profile = status.registration.host_profile if status.registration else None
    details += [f"governed: {profile}"] if profile else []
    details += ["session hook installed"] if hooked and not status.detail else []
    return Status(
        status.target,
        status.scope,
        status.state,
        status.path,
        "; ".join(details),
        status.registration,
    )


def survey(env: HostEnv) -> list[Status]:
    """Every target's workspace and global state, in ``TARGETS`` order."""
    return [
        _status(target, scope, env)
        for target in TARGETS.values()
        for scope in ("workspace", "global")
    ]


def session_hooks(env: HostEnv) -> list[HookState]:
    """engram's session hooks installed in this workspace."""
    found = []
    for target in TARGETS.values():
        if target.hooks is None:
            continue
        path = target.hooks.path(env)
        try:
            items = installed_hooks(target.hooks, read_text(path), path)
        except HostConfigError:
            continue
        if items:
            found.append(HookState(target, path, tuple(items)))
    return found
