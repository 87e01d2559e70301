"""``engram init``, ``load``, ``search``, ``route``, ``verify``, ``status``,
``save-session`` (``ss``), ``promote``, ``set-role``, ``set-rule-variant`` and ``hook``:
thin commands over :mod:`engram.project`, mirroring the ``engram_*`` tools."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

import click
from click.core import ParameterSource

from engram.cli.output import json_option

if TYPE_CHECKING:  # the domain is imported by the command that needs it
    from engram.hosts.hook_output import HookInput
    from engram.project.workspace import ProjectMemory

__all__ = ["PROJECT_COMMANDS"]


def _project() -> ProjectMemory:
    from engram.cli.progress import TerminalProgress
    from engram.compose import open_project

    memory = open_project(Path.cwd(), progress=TerminalProgress())
    # Closed when the command ends: the retrieval counts are written, the index let go.
    click.get_current_context().call_on_close(memory.close)
    if memory.index.rebuilt:
        click.echo(
            "engram: the index (derived from the memory files) was damaged; it was rebuilt",
            err=True,
        )
    return memory


class _Result(Protocol):
    def text(self) -> str: ...

    def data(self) -> dict[str, Any]: ...


def _emit(result: _Result, as_json: bool) -> None:
    """Print a result: its own words (what an agent or a file wrote never drives the
    terminal: :func:`engram.safety.display.shown`), or (``--json``) its data."""
    from engram.safety.display import shown

    if as_json:
        click.echo(json.dumps(result.data(), indent=2, ensure_ascii=False))
    else:
        click.echo(shown(result.text().rstrip("\n")))


def _name_stale(data: dict[str, Any]) -> None:
    """Name on stderr each stale memory the answer shows (as ``diagnostics`` do)."""
    from engram.project.staleness import stale_diagnostics
    from engram.safety.display import shown

    for diagnostic in stale_diagnostics(data):
        click.echo(shown(f"engram: stale {diagnostic['message']}"), err=True)


def _name_skipped(memory: ProjectMemory) -> None:
    """Name on stderr each memory file the command left out because it could not be
    read or parsed (stdout stays the answer)."""
    from engram.safety.display import shown

    for path, reason in memory.problems():
        click.echo(shown(f"engram: skipped {path}: {reason}"), err=True)


@click.command("init")
@json_option()
def init(as_json: bool) -> None:
    """Create .agents/.engram/ here (memory folders, .gitignore entries)."""
    from engram.project.layout import init_layout
    from engram.project.results import Initialized

    layout, created = init_layout(Path.cwd())
    _emit(Initialized(str(layout.base), created), as_json)


@click.command("load")
@click.argument("query", required=False)
@click.option("--id", "memory_id", help="Load one memory by id (no budget).")
@click.option("--budget-tokens", type=click.IntRange(200, 16_000))
@click.option("--cards", is_flag=True, help="One-line cards only.")
@click.option("--full", is_flag=True, help="Every section and the metadata.")
@click.option("--explain", is_flag=True, help="Why each memory was chosen or omitted.")
@json_option()
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
    memory = _project()
    result = memory.load(
        query,
        memory_id=memory_id,
        budget_tokens=budget_tokens,
        disclosure="cards" if cards else "tiered",
        full=full,
        explain=explain,
    )
    _emit(result, as_json)
    _name_stale(result.data())
    _name_skipped(memory)


@click.command("search")
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 50), default=10, show_default=True)
@click.option(
    "--min-confidence",
    type=click.FloatRange(0, 1),
    default=None,
    help="Leave out entries whose confidence is under this (0 to 1).",
)
@json_option()
def search(query: str, limit: int, min_confidence: float | None, as_json: bool) -> None:
    """Search memory (BM25, fused with the semantic channel where it is installed)."""
    memory = _project()
    found = memory.search(query, limit, min_confidence=min_confidence)
    _emit(found, as_json)
    _name_stale(found.data())
    _name_skipped(memory)


@click.command("route")
@click.argument("query")
@json_option()
def route(query: str, as_json: bool) -> None:
    """List the memories QUERY routes to, in load order."""
    memory = _project()
    routed = memory.route_entries(query)
    _emit(routed, as_json)
    _name_stale(routed.data())
    _name_skipped(memory)


@click.command("verify")
@click.option("--scope", type=click.Choice(["workspace", "global", "all"]), default="workspace")
@json_option()
def verify(scope: str, as_json: bool) -> None:
    """Compare memory files with memory.hashes (exit 1 on any problem)."""
    report = _project().verify(scope)
    _emit(report, as_json)
    if not report.ok:
        sys.exit(1)


@click.command("status")
@json_option()
def status(as_json: bool) -> None:
    """Health and counters of this project's memory."""
    _emit(_project().status(), as_json)


@click.command("save-session")
@click.argument("shortcut", nargs=-1, metavar="[last N sessions]")
@click.option(
    "--file", "source", type=click.File("rb"), default="-", help="Candidate lines (default: stdin)."
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
@json_option()
@click.pass_context
def save_session(
    ctx: click.Context,
    shortcut: tuple[str, ...],
    source: BinaryIO,
    force: bool,
    query_level: int,
    scope: str,
    as_json: bool,
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
    from engram.project.results import SessionSaved

    if shortcut:
        level = _counted_level(shortcut)
        explicit = ctx.get_parameter_source("query_level") is not ParameterSource.DEFAULT
        if explicit and level != query_level:
            raise click.UsageError(
                f"--query-level {query_level} and 'last {level} sessions' disagree: give one"
            )
        query_level = level
    memory = _project()
    text = _candidate_text(source, quiet=as_json)
    proposal = memory.propose(parse_candidate_lines(text, scope), scope, query_level)
    outcome = (
        memory.write(proposal, list(range(1, len(proposal.candidates) + 1)), human_approved=False)
        if force
        else None
    )
    _emit(SessionSaved(proposal, outcome), as_json)


def _candidate_text(source: BinaryIO, quiet: bool) -> str:
    """The candidate lines, read whole; a terminal is told what to type."""
    from engram.errors import CandidateError

    if source.isatty() and not quiet:
        click.echo(
            "engram: type the candidate lines ('TYPE: rule | TEXT: ...', one per line),"
            " then Ctrl-D (or pass --file FILE, or pipe them in)",
            err=True,
        )
    data = source.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CandidateError(
            f"line {line}: the candidate lines are not UTF-8 text (byte {exc.start}):"
            " save them as UTF-8 and run the command again"
        ) from exc


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
@json_option()
def promote(note_id: str, as_json: bool) -> None:
    """Make a working note durable."""
    _emit(_project().promote(note_id), as_json)


@click.command("note")
@click.argument("text")
@click.option("--objective", default="", help="The task the note serves (hooks show its notes).")
@click.option(
    "--type", "memory_type", type=click.Choice(["rule", "skill", "knowledge"]), default="knowledge"
)
@click.option("--scope", type=click.Choice(["workspace", "global"]), default="workspace")
@json_option()
def note(text: str, objective: str, memory_type: str, scope: str, as_json: bool) -> None:
    """Record a working note (redacted; expires after load.working_ttl_days).

    You write it, so it is saved at once; an agent's engram_note waits for your yes.
    `engram promote NOTE_ID` makes a note durable.
    """
    memory = _project()
    _emit(memory.write_note(memory.note(text, objective, memory_type, scope)), as_json)


@click.command("adopt")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--yes", is_flag=True, help="Record the files as reviewed (else: show only).")
@json_option()
def adopt(paths: tuple[Path, ...], yes: bool, as_json: bool) -> None:
    """Review hand-edited or imported Markdown into memory.

    Shows, for each PATH (default: every memory file whose hash differs from the one
    engram recorded), whether it is valid and what adopting changes; with --yes,
    records it: a plain Markdown note gets its frontmatter, and every adopted file's
    hash is recorded, so `engram verify` passes. Exit 1 when a file cannot be adopted.
    """
    plan = _project().adopt(list(paths) or None, record=yes)
    _emit(plan, as_json)
    if len(plan.adoptable) < len(plan.items):
        sys.exit(1)


@click.command("stale")
@json_option()
def stale(as_json: bool) -> None:
    """List the memories whose recorded files changed, disappeared or were renamed.

    Each memory records the repository files it names when engram writes it; a memory
    is stale when one of them is no longer as recorded (changed, missing, or renamed
    where Git can tell). Exit 1 when a memory is stale. After checking a memory,
    `engram reconfirm ID` records its files as they are now.
    """
    report = _project().stale()
    _emit(report, as_json)
    if report.memories:
        sys.exit(1)


@click.command("reconfirm")
@click.argument("memory_ids", nargs=-1, required=True, metavar="ID...")
@json_option()
def reconfirm(memory_ids: tuple[str, ...], as_json: bool) -> None:
    """Record the files of memories ID... as they are now, after you checked them.

    For each memory, the files it stands on (those it recorded that are still there,
    renamed ones at their new path, and those its text names) are recorded with their
    hashes now, and last_verified is set to today; a file that is gone is no longer
    recorded. Nothing is written if one ID cannot be reconfirmed.
    """
    _emit(_project().reconfirm(list(memory_ids)), as_json)


@click.command("set-role")
@click.argument("roles", nargs=-1)
@click.option("--clear", is_flag=True, help="Clear the roles.")
@json_option()
def set_role(roles: tuple[str, ...], clear: bool, as_json: bool) -> None:
    """Set the active roles, or clear them (agents should re-run engram_load)."""
    if bool(roles) == clear:
        raise click.UsageError("give the ROLES to set, or --clear (not both)")
    _emit(_project().set_roles(list(roles)), as_json)


@click.command("set-rule-variant")
@click.argument("variant", type=click.Choice(["off", "light", "balanced", "strict", "status"]))
@json_option()
def set_rule_variant(variant: str, as_json: bool) -> None:
    """Choose which rule variants loads show (or print the current one with 'status')."""
    memory = _project()
    settings = memory.settings() if variant == "status" else memory.set_rule_variant(variant)
    _emit(settings, as_json)


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
        try:
            objective = os.environ.get("ENGRAM_SESSION_OBJECTIVE")
            return str(memory.session_context(budget_tokens, objective))
        finally:
            memory.close()

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
    note,
    adopt,
    stale,
    reconfirm,
    set_role,
    set_rule_variant,
    hook,
)
