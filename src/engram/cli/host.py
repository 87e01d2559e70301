"""``engram host …``: the host operator's verbs for governed memory.

Thin: each command parses its options and calls :mod:`engram.host`. None of these
operations is reachable through MCP.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from engram.cli.output import json_option
from engram.memory.settings import DEFAULT_RETENTION_MAX_DAYS

if TYPE_CHECKING:  # the engine is imported by the command that needs it
    from engram.host.runtime import HostMemory
    from engram.memory.maintenance import Maintenance
    from engram.memory.ports import ConfirmationRow

__all__ = ["host"]

PROFILE_OPTION = click.option(
    "--host-profile",
    "profile",
    type=click.Path(path_type=Path, dir_okay=False),
    envvar="ENGRAM_HOST_PROFILE",
    required=True,
    help="The host profile (host.toml); default $ENGRAM_HOST_PROFILE.",
)


@click.group()
def host() -> None:
    """Host-side governed memory: profiles, confirmations, maintenance."""


@host.command("init")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option("--tenant", required=True)
@click.option("--workspace", required=True)
@click.option("--principal", required=True)
@click.option("--purpose", required=True, help="The purpose_ref bound to every call.")
@click.option(
    "--grant",
    "grants",
    multiple=True,
    help="A tool to grant (search, get, capture, request_admission, withdraw, forget) "
    "or 'all'; repeatable. Default: search and get.",
)
@click.option(
    "--store",
    help="Join (or create) this store instead of DIRECTORY/memory.db: a file, or a"
    " postgresql://USER@HOST:PORT/DATABASE URL.",
)
@click.option(
    "--keys",
    type=click.Path(path_type=Path, file_okay=False),
    help="The store's key directory (default: beside a store file, DIRECTORY/memory.keys for"
    " a database); to join a database another host created, give that host's.",
)
@click.option(
    "--retention-max-days",
    type=int,
    default=DEFAULT_RETENTION_MAX_DAYS,
    show_default=True,
    help="Days a record captured without expires_at lives; no expires_at may ask for later.",
)
@click.option("--allow-retain", is_flag=True, help="Allow derivative_rule 'retain'.")
@click.option("--agent-id", default="", help="Default: the principal.")
@click.option("--session", default="", help="Default: a fresh id per server process.")
@click.option(
    "--confirm-via",
    type=click.Choice(["host", "dialog", "both"]),
    default="host",
    show_default=True,
    help="Who approves withdraw and forget: the host operator (engram host confirm), the "
    "client's dialog (only where a person sees it), or both.",
)
def init(
    directory: Path,
    tenant: str,
    workspace: str,
    principal: str,
    purpose: str,
    grants: tuple[str, ...],
    store: str | None,
    keys: Path | None,
    retention_max_days: int,
    allow_retain: bool,
    agent_id: str,
    session: str,
    confirm_via: Literal["host", "dialog", "both"],
) -> None:
    """Create DIRECTORY/host.toml, the store and its keys; print the profile path.

    On stderr: how long a record captured without expires_at lives, and how to choose
    another ceiling.
    """
    from engram.host.setup import init_host

    profile = init_host(
        directory,
        tenant=tenant,
        workspace=workspace,
        principal=principal,
        purpose=purpose,
        grants=list(grants) if grants else None,
        store=store,
        keys=keys,
        retention_max_days=retention_max_days,
        allow_retain=allow_retain,
        agent_id=agent_id,
        session=session,
        confirm_via=confirm_via,
    )
    click.echo(str(profile))
    # On stderr: stdout stays the profile's path alone, for `profile=$(engram host init …)`.
    for line in _retention_lines(profile, retention_max_days):
        click.echo(line, err=True)


def _retention_lines(profile: Path, days: int) -> list[str]:
    """What ``host init`` tells the operator of the retention ceiling it wrote."""
    unit = "day" if days == 1 else "days"
    if days == DEFAULT_RETENTION_MAX_DAYS:
        return [
            f"retention: a record captured without expires_at lives {days} {unit}, the default"
            " ceiling (an expires_at may be earlier, never later)",
            f"  to choose another: --retention-max-days N, or [retention] max_days in {profile}"
            " (for records captured from then on)",
        ]
    return [
        f"retention: a record captured without expires_at lives {days} {unit}, this profile's"
        " ceiling (an expires_at may be earlier, never later)",
        f"  to change it: [retention] max_days in {profile} (for records captured from then on)",
    ]


def _memory(profile: Path, semantic: bool = False) -> HostMemory:
    from engram.host.runtime import open_memory

    # The operator's commands do exactly what they say: no sweep on the side, and no
    # embedding model loaded unless the command builds vectors.
    return open_memory(profile, sweep=False, semantic=semantic)


def _maintenance(profile: Path) -> Maintenance:
    from engram.memory.maintenance import Maintenance

    memory = _memory(profile)
    return Maintenance(memory.engine, memory.binding.scope)


@host.command("pending")
@PROFILE_OPTION
@json_option("Print JSON.")
def pending(profile: Path, as_json: bool) -> None:
    """List open confirmation requests and who asked, and candidates to adjudicate.

    Who asked is the principal and agent id the server bound the call to, never what the
    agent wrote. The agent's reason is escaped, its runs of whitespace one space, cut at
    200 columns, and framed: each line of it starts with "reason    |" or an indented "|",
    and no line is wider than 72 columns.
    """
    items = _maintenance(profile).pending()
    if as_json:
        click.echo(
            json.dumps(
                {
                    "confirmations": [
                        {
                            "request_id": row.request_id,
                            "tool": row.tool,
                            "target": row.target,
                            "created_ms": row.created_ms,
                            **row.display,
                            "principal": row.principal,
                            "agent_id": row.agent_id,
                        }
                        for row in items.confirmations
                    ],
                    "adjudications": items.adjudications,
                },
                indent=2,
            )
        )
        return
    if not items.confirmations and not items.adjudications:
        click.echo("nothing is waiting")
    for row in items.confirmations:
        click.echo("\n".join(_request_lines(row)))
    for candidate in items.adjudications:
        click.echo(f"adjudicate  {candidate}")


#: The frame of a request's reason: every line of it starts so, and none is wider than
#: :data:`_WIDTH` columns, so no reason wraps on a terminal of 80 columns or more into a
#: line that could pass for a request of its own (those alone start at the margin; a
#: target, 56 characters for a record, has a line of its own to fit too).
_REASON_FRAME = "  reason    | "
_CONTINUED_FRAME = "            | "
_ASKED_BY = "  asked by  "
_WIDTH = 72


def _request_lines(row: ConfirmationRow) -> list[str]:
    """One request as the operator reads it: the request and its operation at the
    margin, then indented the server's own target, who asked (the binding the server
    bound the call to, never the agent's text) and the agent's reason (escaped,
    whitespace collapsed, cut: the domain's one line), framed and wrapped here."""
    from engram.safety.display import wrapped

    lines = [f"confirm  {row.request_id}  {row.tool}", f"  target    {row.target}"]
    # Host-written, but a profile's agent id may be long: its lines are indented too.
    who = f"principal {row.principal}, agent {row.agent_id}"
    for number, part in enumerate(wrapped(who, _WIDTH - len(_ASKED_BY))):
        lines.append((" " * len(_ASKED_BY) if number else _ASKED_BY) + part)
    reason = row.display.get("reason")
    if isinstance(reason, str):
        for number, part in enumerate(wrapped(reason, _WIDTH - len(_REASON_FRAME))):
            lines.append((_CONTINUED_FRAME if number else _REASON_FRAME) + part)
    return lines


@host.command("confirm")
@click.argument("request_id")
@PROFILE_OPTION
def confirm(request_id: str, profile: Path) -> None:
    """Approve one confirmation request (valid for 300 s; the agent then retries)."""
    row = _maintenance(profile).confirm(request_id)
    click.echo(f"approved {row.tool} of {row.target} for 300 s ({_asked_by(row)})")


@host.command("deny")
@click.argument("request_id")
@PROFILE_OPTION
def deny(request_id: str, profile: Path) -> None:
    """Refuse one confirmation request (the agent's retry then fails the gate)."""
    row = _maintenance(profile).deny(request_id)
    click.echo(f"denied {row.tool} of {row.target} ({_asked_by(row)})")


def _asked_by(row: ConfirmationRow) -> str:
    """Who asked, as the server bound the call (as ``pending`` shows it)."""
    return f"asked by principal {row.principal}, agent {row.agent_id}"


@host.command("adjudicate")
@click.argument("candidate_id")
@click.option("--accept/--reject", required=True, help="Admit the candidate, or reject it.")
@PROFILE_OPTION
def adjudicate(candidate_id: str, accept: bool, profile: Path) -> None:
    """Decide a candidate held as pending_adjudication."""
    record_id = _maintenance(profile).adjudicate(candidate_id, accept)
    click.echo(f"accepted as {record_id}" if accept else "rejected")


@host.command("transition")
@click.argument("record_id")
@click.argument(
    "operation",
    type=click.Choice(["dispute", "undispute", "supersede", "expire", "invalidate_trust"]),
)
@PROFILE_OPTION
def transition(record_id: str, operation: str, profile: Path) -> None:
    """Move a record to another lifecycle state (only accepted_current is disclosed)."""
    click.echo(_maintenance(profile).transition(record_id, operation))


@host.command("reindex")
@PROFILE_OPTION
def reindex(profile: Path) -> None:
    """Build the scope's search projections now: the lexical index for this version of
    engram, and the semantic vectors (with the semantic extra), with a progress bar."""
    from engram.extras import install_line

    memory = _memory(profile, semantic=True)
    try:
        moved = memory.engine.refresh_lexical(memory.binding.scope)
        click.echo(f"lexical: {moved} records re-indexed" if moved else "lexical: current")
        if memory.engine.semantic is None:
            click.echo(
                f"semantic: not installed ({install_line('semantic')})"
                if memory.profile.semantic
                else "semantic: off in this profile ([search] semantic = false)"
            )
            return
        with click.progressbar(length=0, label="semantic", show_pos=True) as bar:

            def advance(done: int, total: int) -> None:
                bar.length = total
                bar.update(done - bar.pos)

            embedded = memory.engine.refresh_semantic(memory.binding.scope, advance)
        click.echo(
            f"semantic: {embedded} records embedded ({memory.engine.semantic.embedder.model})"
        )
    finally:
        memory.close()


@host.command("sweep")
@PROFILE_OPTION
def sweep(profile: Path) -> None:
    """Expire records past their expiry instant and finish pending cleanups."""
    result = _maintenance(profile).sweep()
    click.echo(
        f"expired {result['expired']}, purged {result['purged']},"
        f" still pending {result['purges_pending']}"
    )


@host.command("revoke")
@PROFILE_OPTION
@click.option("--principal", help="Default: the profile's principal. '*' for all.")
def revoke(profile: Path, principal: str | None) -> None:
    """Revoke a binding: its later calls get AUTHORIZATION_REVOKED."""
    memory = _memory(profile)
    from engram.memory.maintenance import Maintenance

    target = principal or memory.binding.principal
    Maintenance(memory.engine, memory.binding.scope).revoke(target)
    click.echo(f"revoked {target}")


@host.command("issue-token")
@PROFILE_OPTION
@click.option(
    "--ttl-seconds",
    type=click.IntRange(1, 86_400),
    default=3_600,
    show_default=True,
    help="How long the token is valid (at most a day).",
)
def issue_token_command(profile: Path, ttl_seconds: int) -> None:
    """Print a bearer token naming this profile and its binding, for engram-mcp --http.

    Signed with a key only this host holds (token.key beside the store's keys); give it to
    the agent that runs with this profile, as `Authorization: Bearer <token>`. Every request
    is served under this profile as it is then: disable it, cut a grant or delete it and the
    token loses what it lost. A disabled profile gets no token.
    """
    import time

    from engram.host.profile import load_profile
    from engram.host.tokens import issue_token

    click.echo(issue_token(load_profile(profile), int(time.time()), ttl_seconds))


@host.command("revoke-token")
@click.argument("token_or_id")
@PROFILE_OPTION
def revoke_token_command(token_or_id: str, profile: Path) -> None:
    """Refuse a token from now on (give the token, or its id), on every server of the store."""
    from engram.host.profile import load_profile
    from engram.host.tokens import revoke_token

    click.echo(f"revoked token {revoke_token(load_profile(profile), token_or_id)}")


@host.command("stale")
@PROFILE_OPTION
@json_option("Print JSON.")
def stale(profile: Path, as_json: bool) -> None:
    """List current records whose file citations no longer match the cited file.

    Checks every accepted_current record of the profile's scope: each citation of the
    file scheme against the file under the profile's [admission] verifier_root, as
    admission did (SHA-256 of the exact bytes). Reported here only, never to agents or
    other scopes. Exit 1 when a citation is stale.
    """
    from engram.errors import UsageError
    from engram.memory.citations import stale_citations

    memory = _memory(profile)
    root = memory.profile.verifier_root
    if root is None:
        raise UsageError(
            f"{profile} sets no [admission] verifier_root, so no citation can be checked:"
            ' add verifier_root = "PATH" (the host\'s checkout of the cited repository)'
        )
    found, checked = stale_citations(memory.engine, memory.binding.scope, root)
    if as_json:
        data = {"citations": [c.data() for c in found], "checked": checked, "root": str(root)}
        click.echo(json.dumps(data, indent=2))
    else:
        for citation in found:
            click.echo(
                f"{citation.record_id}  citation {citation.citation_id}:"
                f" {citation.path} {citation.state}"
            )
        records = len({citation.record_id for citation in found})
        click.echo(
            f"{records} of {checked} current records {'cites' if records == 1 else 'cite'}"
            f" files that changed under {root}"
            if found
            else f"no stale citation: the files cited by {checked} current"
            f" {'record' if checked == 1 else 'records'} under {root} are as cited"
        )
    if found:
        sys.exit(1)


@host.command("verify")
@PROFILE_OPTION
def verify(profile: Path) -> None:
    """Walk the hash-chained journal; JOURNAL_CORRUPT names the first bad cursor."""
    count = _maintenance(profile).verify()
    click.echo(f"journal ok: {count} events")


@host.command("backup")
@click.argument("destination", type=click.Path(path_type=Path, dir_okay=False))
@PROFILE_OPTION
def backup_command(destination: Path, profile: Path) -> None:
    """Write an encrypted, verified backup (no pending, rejected or withdrawn items)."""
    from engram.memory.backup import backup

    header = backup(_memory(profile).engine, destination)
    click.echo(f"backup of {header['records']} records verified: {destination}")


@host.command("restore")
@click.argument("source", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@PROFILE_OPTION
def restore_command(source: Path, profile: Path) -> None:
    """Restore a backup of this store into its empty store file."""
    from engram.memory.backup import restore

    click.echo(f"restored {restore(_memory(profile).engine, source)} records")


@host.command("rotate-keys")
@PROFILE_OPTION
def rotate_keys_command(profile: Path) -> None:
    """Re-wrap every data key under a new key-encryption key, without downtime."""
    from engram.memory.rotation import rotate_keys

    result = rotate_keys(_memory(profile).engine)
    retired = ", ".join(result["retired"]) or "none"
    click.echo(f"now {result['kek']}: re-wrapped {result['rewrapped']} keys; retired {retired}")
