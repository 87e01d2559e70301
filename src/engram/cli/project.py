"""``engram init``, ``load``, ``search``, ``route``, ``verify``, ``status``,
``save-session`` (``ss``), ``promote``, ``set-role``, ``set-rule-variant`` and ``hook``:
thin commands over :mod:`engram.project`, mirroring the ``engram_*`` tools."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click
from click.core import ParameterSource

if TYPE_CHECKING:  # the domain is imported by the command that needs it
    from engram.hosts.hook_output import HookInput
    from engram.project.workspace import ProjectMemory

__all__ = ["PROJECT_COMMANDS"]


def _project() -> ProjectMemory:
    from engram.compose import open_project

    return open_project(Path.cwd())


def _emit(data: object, as_json: bool, text: str) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False) if as_json else text.rstrip("\n"))


@click.command("init")
def init() -> None:
    """Create .agents/.engram/ here (memory folders, .gitignore entries)."""
    from engram.project.layout import init_layout

    layout, created = init_layout(Path.cwd())
    click.echo(
        f"engram memory in {layout.base}"
        + (f" (created {', '.join(created)})" if created else " (already there)")
    )


@click.command("load")
@click.argument("query", required=False)
@click.option("--id", "memory_id", help="Load one memory by id (no budget).")
@click.option("--budget-tokens", type=click.IntRange(200, 16_000))
@click.option("--cards", is_flag=True, help="One-line cards only.")
@click.option("--full", is_flag=True, help="Every section and the metadata.")
@click.option("--explain", is_flag=True, help="Why each memory was chosen or omitted.")
@click.option("--json", "as_json", is_flag=True)
def load(
    query: str | None,
    memory_id: str | None,
    budget_tokens: int | None,
    cards: bool,
    full: bool,
    explain: bool,
    as_json: bool,
) -> None:
    """Route QUERY and print the memory that applies, within a token budget."""
    if not query and not memory_id:
        raise click.UsageError("give a QUERY or --id")
    result = _project().load(
        query,
        memory_id=memory_id,
        budget_tokens=budget_tokens,
        disclosure="cards" if cards else "tiered",
        full=full,
        explain=explain,
    )
    _emit(result.data(explain), as_json, result.text)


@click.command("search")
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 50), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def search(query: str, limit: int, as_json: bool) -> None:
    """Search memory (BM25, fused with the semantic channel where it is installed)."""
    found = _project().search(query, limit)
    text = "\n".join(
        f"{e['score']:.3f}  {e['id']} ({e['type']}): {e['title']}" for e in found.entries
    )
    _emit(found.entries, as_json, text or "no match")


@click.command("route")
@click.argument("query")
@click.option("--json", "as_json", is_flag=True)
def route(query: str, as_json: bool) -> None:
    """List the memories QUERY routes to, in load order."""
    entries = _project().route_entries(query)
    _emit(entries, as_json, "\n".join(f"{e['id']} ({e['type']}, {e['how']})" for e in entries))


@click.command("verify")
@click.option("--scope", type=click.Choice(["workspace", "global", "all"]), default="workspace")
@click.option("--json", "as_json", is_flag=True)
def verify(scope: str, as_json: bool) -> None:
    """Compare memory files with memory.hashes.json (exit 1 on any problem)."""
    report = _project().verify(scope)
    _emit(report, as_json, "\n".join(f"{e['status']}: {e['path']}" for e in report) or "no files")
    if any(entry["status"] != "ok" for entry in report):
        sys.exit(1)


@click.command("status")
@click.option("--json", "as_json", is_flag=True)
def status(as_json: bool) -> None:
    """Health and counters of this project's memory."""
    state = _project().status()
    counts = state["memories"]
    _emit(
        state,
        as_json,
        f"{state['root']}: {counts['rule']} rules, {counts['skill']} skills, "
        f"{counts['knowledge']} knowledge, {state['notes']} notes; "
        f"{state['invalid_files']} invalid, {state['hash_mismatches']} hash problems",
    )


@click.command("save-session")
@click.argument("shortcut", nargs=-1, metavar="[last N sessions]")
@click.option(
    "--file", "source", type=click.File("r"), default="-", help="Candidate lines (default: stdin)."
)
@click.option("-f", "--force", is_flag=True, help="Write the ready candidates now.")
@click.option(
    "--query-level",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="How many related memories each candidate is compared with.",
)
@click.option("--scope", type=click.Choice(["workspace", "global"]), default="workspace")
@click.pass_context
def save_session(
    ctx: click.Context,
    shortcut: tuple[str, ...],
    source: TextIO,
    force: bool,
    query_level: int,
    scope: str,
) -> None:
    """Propose candidates, one line each; with --force, write them.

    Each line reads 'TYPE: rule|skill|workflow|knowledge | TEXT: <text>' with optional
    CONTEXT, ORIGIN, TRIGGERS, DEPENDS_ON, LEVEL, UPDATE and PARENT fields. Related
    (SUPERSEDE) and duplicate (NOOP) candidates are deferred with a hint. The verdicts
    written are the verdicts shown.

    The counted shortcut 'engram ss -f last 50 sessions' means
    'engram save-session --query-level 50 --force'.
    """
    from engram.project.proposals import parse_candidate_lines

    if shortcut:
        level = _counted_level(shortcut)
        explicit = ctx.get_parameter_source("query_level") is not ParameterSource.DEFAULT
        if explicit and level != query_level:
            raise click.UsageError(
                f"--query-level {query_level} and 'last {level} sessions' disagree: give one"
            )
        query_level = level
    memory = _project()
    proposal = memory.propose(parse_candidate_lines(source.read(), scope), scope, query_level)
    click.echo(proposal.preview)
    if not force:
        click.echo("\n(dry run: nothing written; add --force to write)")
        return
    outcome = memory.write(
        proposal, list(range(1, len(proposal.candidates) + 1)), human_approved=False
    )
    for entry in outcome.written:
        click.echo(f"wrote {entry['file']}")
    for entry in outcome.deferred:
        click.echo(f"deferred {entry['number']} ({entry['verdict']}): read `{entry['hint']}`")


def _counted_level(words: tuple[str, ...]) -> int:
    """N of the upstream shortcut ``last N sessions`` (upstream-facts §A): the query level."""
    if (
        len(words) == 3
        and words[0] == "last"
        and words[2] == "sessions"
        and re.fullmatch(r"[0-9]+", words[1])
        and int(words[1]) >= 1
    ):
        return int(words[1])
    raise click.UsageError(
        f"expected 'last N sessions' with N a positive integer, got '{' '.join(words)}'"
    )


@click.command("promote")
@click.argument("note_id")
def promote(note_id: str) -> None:
    """Make a working note durable."""
    path = _project().promote(note_id)
    click.echo(f"promoted to {path}")


@click.command("set-role")
@click.argument("roles", nargs=-1, required=True)
def set_role(roles: tuple[str, ...]) -> None:
    """Set the active roles (agents should re-run engram_load)."""
    config = _project().set_roles(list(roles))
    click.echo(
        f"roles: {', '.join(config.roles)}. Agents: re-run engram_load and replace what "
        "you loaded before."
    )


@click.command("set-rule-variant")
@click.argument("variant", type=click.Choice(["off", "light", "balanced", "strict", "status"]))
def set_rule_variant(variant: str) -> None:
    """Choose which rule variants loads show (or print the current one with 'status')."""
    memory = _project()
    if variant == "status":
        click.echo(f"rule variant: {memory.config().rule_variant}")
        return
    click.echo(
        f"rule variant: {memory.set_rule_variant(variant).rule_variant}. Agents: re-run "
        "engram_load and replace what you loaded before."
    )


@click.command("hook")
@click.argument("host", type=click.Choice(["claude", "codex", "gemini", "cursor"]))
@click.option(
    "--budget-tokens",
    type=click.IntRange(100, 16_000),
    help="Default: load.session_budget_tokens (1500).",
)
def hook(host: str, budget_tokens: int | None) -> None:
    """Session-start hook: print the host's JSON with the session's memory."""
    from engram.compose import open_project
    from engram.hosts.hook_output import run_hook

    def context(given: HookInput) -> str:
        memory = open_project(given.root or Path.cwd())
        return str(
            memory.session_context(budget_tokens, os.environ.get("ENGRAM_SESSION_OBJECTIVE"))
        )

    sys.exit(run_hook(host, context))


PROJECT_COMMANDS = (
    init,
    load,
    search,
    route,
    verify,
    status,
    save_session,
    promote,
    set_role,
    set_rule_variant,
    hook,
)
