"""``engram doctor``: a registry of health checks, and the command that runs them.

A check is a function ``(DoctorContext) -> Iterable[CheckResult]`` registered with
:func:`doctor_check`. Each result has a stable ``id`` (``host.handshake``), a
``status`` (``pass | warn | skip | fail``), a ``severity`` saying how much it
matters when it does not pass (``info | warning | error``), a message, a
remediation when there is something to do, the ``subject`` it is about and, for
timed checks, ``latency_ms``.

Extension point: a module of checks registers its functions with the decorator and
is listed in :data:`CHECK_MODULES`; checks run in module order, then in the order
they were registered. Host checks live in :mod:`engram.cli.doctor_hosts`; project
and store checks go in their own module the same way::

    @doctor_check("project")
    def project_checks(context: DoctorContext) -> Iterator[CheckResult]:
        yield CheckResult("config.resolved", "pass", "error", "configuration resolved")

Exit status: 1 when a check fails, or, with ``--strict``, when one warns; else 0.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import click

from engram.cli.output import json_option
from engram.cli.workspace import ROOT_OPTION, workspace_root
from engram.hosts.command import HostEnv

__all__ = [
    "CHECK_MODULES",
    "EXPECTED_TOOLS",
    "CheckResult",
    "DoctorContext",
    "doctor",
    "doctor_check",
    "run_checks",
]

Outcome = Literal["pass", "warn", "skip", "fail"]
Severity = Literal["info", "warning", "error"]

#: Modules whose import registers checks, in the order their checks run.
CHECK_MODULES: list[str] = ["engram.cli.doctor_project", "engram.cli.doctor_hosts"]
#: Tools every registered server must list for its handshake to pass.
EXPECTED_TOOLS: frozenset[str] = frozenset(
    {
        "engram_load",
        "engram_route",
        "engram_search",
        "engram_verify",
        "engram_status",
        "engram_save",
        "engram_save_session",
        "engram_commit",
        "engram_set_role",
        "engram_set_rule_variant",
        "engram_note",
    }
)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One finding of one check."""

    id: str
    status: Outcome
    severity: Severity
    message: str
    remediation: str | None = None
    subject: str | None = None
    latency_ms: float | None = None

    def as_json(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}


@dataclass(frozen=True)
class Deadline:
    """When a doctor run must be over (``time.monotonic()`` seconds)."""

    at: float

    def left(self) -> float:
        """Seconds left, never below zero."""
        return max(0.0, self.at - time.monotonic())


@dataclass(frozen=True)
class DoctorContext:
    """What checks may read: the workspace, the machine, and the expectations.

    ``time_limit`` bounds every wait of the run together (servers started, shells and
    host programs asked): :attr:`deadline` is that many seconds after the context was
    made."""

    root: Path
    env: HostEnv
    expected_tools: frozenset[str] = EXPECTED_TOOLS
    time_limit: float = 20.0
    extra: dict[str, Any] = field(default_factory=dict)
    deadline: Deadline = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "deadline", Deadline(time.monotonic() + self.time_limit))


Check = Callable[[DoctorContext], Iterable[CheckResult]]
_REGISTRY: list[tuple[str, Check]] = []


def doctor_check(name: str) -> Callable[[Check], Check]:
    """Register a check function under ``name`` (registering a name twice replaces it)."""

    def register(function: Check) -> Check:
        _REGISTRY[:] = [(known, check) for known, check in _REGISTRY if known != name]
        _REGISTRY.append((name, function))
        return function

    return register


def run_checks(context: DoctorContext, modules: Iterable[str] | None = None) -> list[CheckResult]:
    """Import the check modules and run every registered check, in order."""
    for module in CHECK_MODULES if modules is None else modules:
        importlib.import_module(module)
    results: list[CheckResult] = []
    for _, check in list(_REGISTRY):
        results.extend(check(context))
    return results


def exit_status(results: Iterable[CheckResult], strict: bool) -> int:
    failing = {"fail", "warn"} if strict else {"fail"}
    return 1 if any(result.status in failing for result in results) else 0


def _render(result: CheckResult) -> str:
    latency = f" ({result.latency_ms:.0f} ms)" if result.latency_ms is not None else ""
    subject = f" [{result.subject}]" if result.subject else ""
    line = f"{result.status.upper():4}  {result.id}{subject}: {result.message}{latency}"
    if result.remediation and result.status != "pass":
        line += f"\n      fix: {result.remediation}"
    return line


@click.command()
@json_option("Print the checks as JSON.")
@click.option("--strict", is_flag=True, help="Exit with 1 on warnings too.")
@ROOT_OPTION
def doctor(as_json: bool, strict: bool, root: Path | None) -> None:
    """Check engram's health: linked hosts (with a real MCP handshake each), and more."""
    # The same project `engram link` writes to, whichever subdirectory this runs in.
    env = HostEnv.from_environ(workspace_root(root))
    results = run_checks(DoctorContext(root=env.workspace, env=env))
    status = exit_status(results, strict)
    if as_json:
        payload = {"ok": status == 0, "checks": [result.as_json() for result in results]}
        click.echo(json.dumps(payload, indent=2))
    else:
        for result in results:
            click.echo(_render(result))
    if status:
        raise click.exceptions.Exit(status)
