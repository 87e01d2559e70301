"""``engram host …``: the host operator's verbs for governed memory.

Thin: each command parses its options and calls :mod:`engram.host`. None of these
operations is reachable through MCP.
"""

from __future__ import annotations

from pathlib import Path

import click

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
    type=click.Path(path_type=Path, dir_okay=False),
    help="Join (or create) this store file instead of DIRECTORY/memory.db.",
)
@click.option("--retention-max-days", type=int, default=30, show_default=True)
@click.option("--allow-retain", is_flag=True, help="Allow derivative_rule 'retain'.")
@click.option("--agent-id", default="", help="Default: the principal.")
@click.option("--session", default="", help="Default: a fresh id per server process.")
def init(
    directory: Path,
    tenant: str,
    workspace: str,
    principal: str,
    purpose: str,
    grants: tuple[str, ...],
    store: Path | None,
    retention_max_days: int,
    allow_retain: bool,
    agent_id: str,
    session: str,
) -> None:
    """Create DIRECTORY/host.toml, the store and its keys; print the profile path."""
    from engram.host.setup import init_host

    profile = init_host(
        directory,
        tenant=tenant,
        workspace=workspace,
        principal=principal,
        purpose=purpose,
        grants=list(grants) if grants else None,
        store=store,
        retention_max_days=retention_max_days,
        allow_retain=allow_retain,
        agent_id=agent_id,
        session=session,
    )
    click.echo(str(profile))
