"""A waiting proposal as the person who approves it is shown it.

Each candidate shows what it says first (its title and text, rendered), then what
approving it writes in words (which file is created, replaced, or marked superseded),
then its frontmatter folded away, with the fields that change how it loads (triggers,
dependencies, level, roles, …) kept in sight. A change to an existing memory is shown as a
diff whose sides are named: ``old:`` the file as it is (its path and id), ``new:`` the
file approving writes. The proposal says who proposed it (the MCP client as it named
itself, the server's session, the host profile's agent) and when.

Every text here may come from an agent: the page prints it through Jinja's autoescaping
and :func:`engram.safety.display.shown`; what must stay on one line (a client's name, an
agent id) goes through :func:`engram.safety.display.one_line` first. Not here: deciding
(:meth:`engram.project.workspace.ProjectMemory.review`), the routes.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from engram.console.markdown import render_markdown
from engram.project.results import plural
from engram.safety.display import one_line

if TYPE_CHECKING:
    from engram.project.approvals import Proposer, Waiting
    from engram.project.commit import Planned
    from engram.project.workspace import ProjectMemory

__all__ = ["Review", "ReviewedCandidate", "diff_class", "review", "who_proposed"]

#: Columns a client's name, version or an agent id takes at most on the page.
NAME_COLUMNS: Final = 80
#: The frontmatter fields kept in sight: they change when and how a memory loads.
IN_SIGHT: Final = (
    "triggers",
    "depends_on",
    "parent",
    "level",
    "role",
    "tags",
    "supersedes",
    "objective",
    "valid_until",
)


@dataclass(frozen=True)
class ReviewedCandidate:
    """One candidate of a proposal, as reviewed."""

    number: int
    #: The verdict's kind: ADD, UPDATE, SUPERSEDE, NOOP or NOTE.
    kind: str
    #: What it is, in words ("New rule", "Changes the rule use-tabs").
    headline: str
    #: What approving it writes, in words ("creates rules/x.md").
    effect: str
    #: The memory's title and body, rendered (escaped Markdown).
    html: str
    #: The fields in sight, ``(name, value)``.
    fields: list[tuple[str, str]]
    #: The frontmatter approving writes (folded on the page).
    frontmatter: str
    #: What the diff compares, in words ("" without one).
    compared: str = ""
    #: The diff, ``(css class, line)``: names both sides, then the hunks.
    diff: list[tuple[str, str]] = field(default_factory=list)
    #: An UPDATE of a memory whose recorded files moved: which, in words ("" otherwise).
    stale: str = ""
    #: And what became of each: ``(note, diff lines with their css class)``.
    stale_diffs: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)


@dataclass(frozen=True)
class Review:
    """One waiting proposal, as reviewed."""

    waiting: Waiting
    #: "2 memories proposed", "A working note proposed".
    heading: str
    #: Who proposed it, in words.
    who: str
    #: How long ago it was proposed, and how long it has left, in words ("4 minutes").
    ago: str
    left: str
    candidates: list[ReviewedCandidate]


def review(project: ProjectMemory, waiting: Waiting, now_ms: int) -> Review:
    """``waiting`` as the proposals page shows it at ``now_ms``."""
    pending = waiting.pending
    plans = project.planned(pending)
    verdicts = [verdict["kind"] for verdict in pending.verdicts]
    candidates = [
        _with_stale(project, _candidate(number, kind, plan), plan)
        for number, (kind, plan) in enumerate(zip(verdicts, plans, strict=True), 1)
    ]
    heading = (
        "A working note proposed"
        if pending.kind == "note"
        else plural(len(candidates), "memory", "memories") + " proposed"
    )
    return Review(
        waiting,
        heading,
        who_proposed(waiting.proposer),
        _span(now_ms - waiting.created_ms),
        _span(waiting.expires_ms - now_ms),
        candidates,
    )


def who_proposed(proposer: Proposer) -> str:
    """Who proposed, in words: the client (its title, then its name and version, as it
    gave them), the session and the agent, each where known."""
    if not proposer.known:
        return "Who proposed it was not recorded (an older engram took this proposal)."
    title, name, version = (
        _name(text) for text in (proposer.title, proposer.client, proposer.version)
    )
    named = " ".join(part for part in (name, version) if part)
    if title:
        client = f"{title} ({named})" if named else title
    elif name:
        client = named
    else:
        client = "a client that gave no name" + (f" (version {version})" if version else "")
    parts = [f"By {client} over MCP"]
    if proposer.session:
        parts.append(f"session {_name(proposer.session)}")
    if proposer.agent:
        parts.append(f"agent {_name(proposer.agent)}")
    return " · ".join(parts)


def _name(text: str) -> str:
    return one_line(text, NAME_COLUMNS)


def _candidate(number: int, kind: str, plan: Planned) -> ReviewedCandidate:
    memory = plan.memory
    written = plan.after if plan.after is not None else ""
    fields = [
        (key, ", ".join(memory.items(key)))
        for key in IN_SIGHT
        if memory.get(key) not in (None, "", [])
    ]
    compared, diff = _diff(kind, plan)
    return ReviewedCandidate(
        number=number,
        kind=kind,
        headline=_headline(kind, plan),
        effect=_effect(kind, plan),
        html=render_markdown(memory.body),
        fields=fields,
        frontmatter=_frontmatter(written),
        compared=compared,
        diff=diff,
    )


def _with_stale(
    project: ProjectMemory, candidate: ReviewedCandidate, plan: Planned
) -> ReviewedCandidate:
    """An UPDATE of a stale memory with what became of its files beside it."""
    found = project.stale_diffs(plan.memory_id) if candidate.kind == "UPDATE" else None
    if found is None:
        return candidate
    stale, diffs = found
    return replace(
        candidate,
        stale=stale.summary(),
        stale_diffs=[
            (diff.note, [(diff_class(line), line) for line in diff.lines]) for diff in diffs
        ],
    )


def _headline(kind: str, plan: Planned) -> str:
    memory = plan.memory
    return {
        "ADD": f"New {memory.type}",
        "UPDATE": f"Changes the {memory.type} {plan.memory_id}",
        "SUPERSEDE": f"New {memory.type}, in place of {plan.marks}",
        "NOOP": f"Already in memory as {plan.memory_id}",
        "NOTE": "Working note",
    }.get(kind, kind)


def _effect(kind: str, plan: Planned) -> str:
    """What approving writes, in words (the same files the commit writes)."""
    memory = plan.memory
    if kind == "UPDATE":
        return f"replaces {plan.file} (revision {memory.revision - 1} → {memory.revision})"
    if kind == "SUPERSEDE":
        return (
            f"creates {plan.file}, and marks {plan.old_file} ({plan.marks}) superseded:"
            " kept, no longer loaded"
        )
    if kind == "NOOP":
        return f"writes nothing: {plan.old_file} ({plan.memory_id}) already says this"
    if kind == "NOTE":
        return f"creates {plan.file}, a working note that expires {memory.get('valid_until')}"
    return f"creates {plan.file}"


def _frontmatter(text: str) -> str:
    """The frontmatter of a memory file's text, fences included."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return ""
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), 0)
    return "".join(lines[: end + 1])


def _diff(kind: str, plan: Planned) -> tuple[str, list[tuple[str, str]]]:
    """What a change compares, in words, and its unified diff with both sides named."""
    memory = plan.memory
    if plan.before is None or plan.after is None:
        return "", []
    before, after = plan.before, plan.after
    if kind == "SUPERSEDE":
        # Two memories: what each says, not their frontmatter (ids and dates differ).
        before, after = _without_frontmatter(before), _without_frontmatter(after)
        old = f"old: {plan.old_file} ({plan.marks})"
        new = f"new: {plan.file} ({memory.id})"
        compared = f"What it says against {plan.marks}, the memory it supersedes:"
    else:
        old = f"old: {plan.old_file} ({memory.id}, revision {memory.revision - 1})"
        new = f"new: {plan.file} ({memory.id}, revision {memory.revision}, after approval)"
        compared = f"What changes in {plan.file}:"
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), old, new, lineterm="")
    return compared, [(diff_class(line), line) for line in lines]


def _without_frontmatter(text: str) -> str:
    return text[len(_frontmatter(text)) :].lstrip("\n")


def diff_class(line: str) -> str:
    """The css class of a unified diff's line."""
    if line.startswith(("---", "+++")):
        return "side"
    if line.startswith("@@"):
        return "ctx"
    return {"+": "add", "-": "del"}.get(line[:1], "ctx")


def _span(ms: int) -> str:
    """A duration in words, as a person says it ("4 minutes")."""
    seconds = max(0, ms) // 1000
    if seconds < 60:
        return plural(seconds, "second")
    if seconds < 3600:
        return plural(seconds // 60, "minute")
    if seconds < 86_400:
        return plural(seconds // 3600, "hour")
    return plural(seconds // 86_400, "day")
