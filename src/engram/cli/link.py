"""``engram link``, ``engram unlink`` and ``engram upgrade``: thin commands over
:mod:`engram.hosts`.

Each command plans every change first (:mod:`engram.hosts.link`) and writes only
when the whole plan could be computed: a host file that cannot be parsed stops the
command before anything is written (``upgrade`` reports such a host and carries on
with the others). ``--dry-run`` prints the plan as unified diffs and writes nothing.

The workspace is the project enclosing the current directory (or ``--root DIR``),
found as :mod:`engram.cli.workspace` says.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from engram.cli.output import json_option
from engram.cli.workspace import ROOT_OPTION, workspace_root
from engram.errors import HostConfigError, UsageError
from engram.hosts.command import HostEnv
from engram.hosts.files import apply
from engram.hosts.link import LinkOptions, Plan, plan_link, plan_unlink
from engram.hosts.registry import TARGETS, target_named
from engram.hosts.survey import survey
from engram.hosts.target import Scope, Target

__all__ = ["link", "unlink", "upgrade"]


def _environment(root: Path | None, quiet: bool = False) -> HostEnv:
    """The host environment for the project; says which project when it is not here."""
    env = HostEnv.from_environ(workspace_root(root))
    if not quiet and env.workspace.resolve() != Path.cwd().resolve():
        click.echo(f"project: {env.workspace}")
    return env


def _shown(path: Path | None, env: HostEnv) -> str:
    if path is None:
        return "-"
    for base, label in ((env.workspace, ""), (env.home, "~/")):
        if path.is_relative_to(base):
            return label + str(path.relative_to(base))
    return str(path)


def _report(plan: Plan, env: HostEnv, dry_run: bool, as_json: bool = False) -> None:
    changed = [change for change in plan.changes if change.changed]
    if as_json:
        written = changed if dry_run else apply(changed, env.backups, (env.workspace, env.home))
        report = {
            "dry_run": dry_run,
            "changes": [
                {
                    "path": _shown(change.path, env),
                    "action": "remove" if change.after is None else "write",
                    "summary": change.summary,
                    **({"diff": change.diff()} if dry_run else {}),
                }
                for change in written
            ],
            "notes": plan.notes,
        }
        if not dry_run and any(c.backup and c.before is not None for c in written):
            report["backups"] = _shown(env.backups, env)
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    if dry_run:
        for change in changed:
            click.echo(f"would change {_shown(change.path, env)}: {change.summary}")
            click.echo(change.diff(), nl=False)
    else:
        for change in apply(changed, env.backups, (env.workspace, env.home)):
            verb = "removed" if change.after is None else "wrote"
            click.echo(f"{verb} {_shown(change.path, env)}: {change.summary}")
        if any(change.backup and change.before is not None for change in changed):
            click.echo(f"previous versions kept in {_shown(env.backups, env)}")
    for note in plan.notes:
        click.echo(f"note: {note}")
    if not changed and not plan.notes:
        click.echo("nothing to change")


def _targets(name: str, env: HostEnv) -> list[Target]:
    if name == "all":
        found = [target for target in TARGETS.values() if target.detect(env)]
        if not found:
            click.echo("no agent host found on this machine", err=True)
        return found
    return [target_named(name)]


def _show_list(env: HostEnv, as_json: bool = False) -> None:
    rows = [
        (status.target.name, status.scope, status.state, _shown(status.path, env), status.detail)
        for status in survey(env)
    ]
    if as_json:
        keys = ("target", "scope", "state", "path", "detail")
        click.echo(json.dumps([dict(zip(keys, row, strict=True)) for row in rows], indent=2))
        return
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True)]
        click.echo("  ".join([*cells, row[4]]).rstrip())


def _checked_profile(path: Path) -> Path:
    """The host profile a governed registration names: absolute, and one engram-mcp
    can load (its error says what is wrong)."""
    from engram.host.profile import load_profile

    found = path.expanduser().absolute()
    if found.is_dir():
        raise UsageError(
            f"--host-profile takes the profile file, not a folder: {found / 'host.toml'}"
            " (engram host init writes it)"
        )
    profile = load_profile(found)
    if not profile.enabled:
        click.echo(
            f"note: {profile.path} sets [memory] enabled = false: engram-mcp serves no"
            " governed tools until it is true",
            err=True,
        )
    return profile.path


@click.command()
@click.argument("target", metavar="TARGET|all|list")
@click.option("--global", "global_", is_flag=True, help="Register for the user, not the workspace.")
@click.option("--force", is_flag=True, help="Replace engram's existing entries and files.")
@click.option("--dry-run", is_flag=True, help="Show the changes as diffs; write nothing.")
@click.option("--hooks", is_flag=True, help="Also install session-start hooks (workspace).")
@click.option(
    "--portable",
    is_flag=True,
    help="Write engram-mcp as found on each person's PATH, for a workspace file the team"
    " shares (automatic when Git tracks the file).",
)
@click.option(
    "--host-profile",
    "host_profile",
    type=click.Path(path_type=Path),
    help="Add governed memory: the host profile (host.toml) engram-mcp serves.",
)
@ROOT_OPTION
@json_option()
def link(
    target: str,
    global_: bool,
    force: bool,
    dry_run: bool,
    hooks: bool,
    portable: bool,
    host_profile: Path | None,
    root: Path | None,
    as_json: bool,
) -> None:
    """Register engram-mcp in an agent host (and its hook, /engram command, instructions).

    TARGET is one of claude, codex, cursor, gemini, opencode, antigravity, windsurf;
    `all` links every host found on this machine; `list` shows where engram is linked.
    The entry names this engram's engram-mcp by its absolute path, so that a host
    started from the desktop or a new shell runs it; a workspace file Git tracks (or
    --portable) names engram-mcp as found on each person's PATH.
    """
    env = _environment(root, quiet=as_json)
    if target == "list":
        _show_list(env, as_json)
        return
    scope: Scope = "global" if global_ else "workspace"
    profile = _checked_profile(host_profile) if host_profile is not None else None
    options = LinkOptions(force=force, hooks=hooks, portable=portable, host_profile=profile)
    plan = Plan()
    for found in _targets(target, env):
        plan.extend(plan_link(found, scope, env, options))
    _report(plan, env, dry_run, as_json)


@click.command()
@click.argument("target", metavar="TARGET|all")
@click.option("--global", "global_", is_flag=True, help="Unlink the user registration.")
@click.option("--dry-run", is_flag=True, help="Show the changes as diffs; write nothing.")
@ROOT_OPTION
@json_option()
def unlink(target: str, global_: bool, dry_run: bool, root: Path | None, as_json: bool) -> None:
    """Remove engram's entry, hook, /engram command and block; nothing else changes."""
    env = _environment(root, quiet=as_json)
    scope: Scope = "global" if global_ else "workspace"
    chosen = list(TARGETS.values()) if target == "all" else [target_named(target)]
    plan = Plan()
    for found in chosen:
        plan.extend(plan_unlink(found, scope, env))
    _report(plan, env, dry_run, as_json)


@click.command()
@click.option("--dry-run", is_flag=True, help="Show the changes as diffs; write nothing.")
@ROOT_OPTION
@json_option()
def upgrade(dry_run: bool, root: Path | None, as_json: bool) -> None:
    """Re-pin every linked host to this engram (workspace and user registrations)."""
    env = _environment(root, quiet=as_json)
    plan, failed = Plan(), []
    for target in TARGETS.values():
        for scope in ("workspace", "global"):
            try:
                plan.extend(plan_link(target, scope, env, LinkOptions(mode="upgrade")))
            except HostConfigError as error:
                failed.append(error.detail)
    _report(plan, env, dry_run, as_json)
    for detail in failed:
        click.echo(f"engram: {detail}", err=True)
    if failed:
        raise click.exceptions.Exit(1)
