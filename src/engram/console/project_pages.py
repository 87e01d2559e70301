"""The console's project memory pages: memories, one memory, search, what a task would
load, and the proposals waiting for a person (approved or declined here, whole or
candidate by candidate, as with ``engram_commit``: once, and bound to the proposal's
digest). Scores are said in words (:mod:`engram.console.scores`), proposals as a person
reviews them (:mod:`engram.console.review`)."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from engram.console import charts, scores
from engram.console.markdown import render_markdown
from engram.console.review import diff_class, review
from engram.project.memory_file import TYPES
from engram.project.routing import SESSION_QUERY

if TYPE_CHECKING:
    from engram.console.app import Pages
    from engram.project.memory_file import Memory
    from engram.project.results import LoadResult, Outcome
    from engram.project.staleness import FileDiff, StaleMemory
    from engram.project.workspace import ProjectMemory

__all__ = ["routes"]

Handler = Callable[[Request], Awaitable[Response]]

#: Memories per page of the list.
PAGE: Final = 100
#: Age buckets of the "memory by age" chart: (label, at most this many days old).
AGES: Final = (("this week", 7), ("this month", 31), ("this year", 366), ("older", 10**9))


def routes(pages: Pages) -> list[tuple[str, Handler, str]]:
    """The project pages, each with its method. One function of small closures over
    ``pages`` (each page's handler is a few lines: read the domain, render), so the
    table at its end says every route in one place."""

    def project_page(view: Callable[[Request, ProjectMemory], Response]) -> Handler:
        async def run(request: Request) -> Response:
            project = pages.console.project
            if project is None:
                return pages.render(request, "no_project.html", 404)
            return view(request, project)

        return run

    def memories(request: Request, project: ProjectMemory) -> Response:
        every = sorted(project.memories(), key=lambda m: (TYPES.index(m.type), m.id))
        wanted = {key: request.query_params.get(key, "") for key in ("type", "scope", "tier")}
        shown = [m for m in every if all(not v or _facet(m, k) == v for k, v in wanted.items())]
        page = _number(request.query_params.get("page"), 1)
        today = dt.date.today()
        return pages.render(
            request,
            "project_memories.html",
            memories=shown[(page - 1) * PAGE : page * PAGE],
            total=len(shown),
            page=page,
            pages_count=max(1, -(-len(shown) // PAGE)),
            wanted=wanted,
            types=TYPES,
            by_type=charts.bars([(kind, sum(m.type == kind for m in every)) for kind in TYPES]),
            by_age=charts.bars(_ages(every, today)),
            counts=_counts(every),
            unhealthy=sum(1 for problems in project.health().values() if problems),
        )

    def memory(request: Request, project: ProjectMemory) -> Response:
        memory_id = request.path_params["memory_id"]
        project.refresh()
        found = project.index.memory(memory_id)
        if found is None:
            return pages.render(request, "refused.html", 404, reason=f"no memory {memory_id!r}")
        located = project.file_of(memory_id)
        problems = project.health().get(located[0], []) if located else ["no file"]
        stale = project.stale_diffs(memory_id)
        return pages.render(
            request,
            "project_memory.html",
            stale=None if stale is None else _stale_shown(*stale),
            memory=found,
            html=render_markdown(found.body),
            file=located[1] if located else None,
            health=problems or ["ok"],
            history=_history(located[1] if located else None),
        )

    def search(request: Request, project: ProjectMemory) -> Response:
        query = request.query_params.get("q", "").strip()
        found = project.search(query, 20, explain=True) if query else None
        rows, why, sums = [], [], []
        if found is not None:
            rows = charts.stacked(
                [(entry["id"], entry["parts"]) for entry in found.entries],
                ["lexical", "semantic"],
            )
            shared = project.shared_words(query, [entry["id"] for entry in found.entries])
            why = [
                scores.in_words(shared.get(entry["id"], []), "cosine" in entry)
                for entry in found.entries
            ]
            sums = [scores.search_sum(entry, found.best_bm25) for entry in found.entries]
        return pages.render(
            request,
            "project_search.html",
            q=query,
            found=found,
            rows=rows,
            why=why,
            sums=sums,
            bm25_in_words=scores.BM25_IN_WORDS,
            fusion_in_words=scores.FUSION_IN_WORDS,
        )

    def load(request: Request, project: ProjectMemory) -> Response:
        task = request.query_params.get("task", "").strip()
        budget = _number(request.query_params.get("budget"), 0) or None
        result, why = None, {}
        if task:
            # A look, not a retrieval: the agents' most-used memories stay theirs.
            result = project.load(
                task, budget_tokens=min(budget or 0, 16_000) or None, explain=True, count=False
            )
            why = _why_loaded(project, task, result)
        return pages.render(
            request,
            "project_load.html",
            task=task,
            budget=budget,
            result=result,
            why=why,
            left_out=scores.LEFT_OUT,
            bm25_in_words=scores.BM25_IN_WORDS,
            fusion_in_words=scores.FUSION_IN_WORDS,
        )

    def proposals(request: Request, project: ProjectMemory) -> Response:
        project.refresh()
        now = int(time.time() * 1000)
        return pages.render(
            request,
            "project_proposals.html",
            reviews=[review(project, item, now) for item in project.proposals().waiting()],
            done=request.query_params.get("done", ""),
        )

    def stale(request: Request, project: ProjectMemory) -> Response:
        """Needs review: the memories whose recorded files moved, each file's diff from
        the version recorded (where Git still holds it)."""
        report = project.stale()
        found = [project.stale_diffs(item.id) for item in report.memories]
        return pages.render(
            request,
            "project_stale.html",
            checked=report.checked,
            stale=[_stale_shown(*entry) for entry in found if entry is not None],
        )

    def decide(request: Request, project: ProjectMemory) -> Response:
        form: dict[str, str] = request.state.form
        approve = _approved(form)
        if approve is None:
            return pages.render(
                request,
                "refused.html",
                400,
                reason="choose approve or decline for each candidate",
            )
        outcome = project.review(
            request.path_params["proposal_id"], form.get("digest", ""), approve
        )
        done = _decided(outcome, approve, _declined(form))
        return RedirectResponse("/project/proposals?" + _query(done=done), status_code=303)

    return [
        ("/project", project_page(memories), "GET"),
        ("/project/memory/{memory_id:path}", project_page(memory), "GET"),
        ("/project/search", project_page(search), "GET"),
        ("/project/load", project_page(load), "GET"),
        ("/project/proposals", project_page(proposals), "GET"),
        ("/project/stale", project_page(stale), "GET"),
        ("/project/proposals/{proposal_id}", project_page(decide), "POST"),
    ]


def _stale_shown(
    stale: StaleMemory, diffs: list[FileDiff]
) -> tuple[StaleMemory, list[tuple[str, list[tuple[str, str]]]]]:
    """A stale memory and, per file, its note and diff lines with their css class."""
    return stale, [(diff.note, [(diff_class(line), line) for line in diff.lines]) for diff in diffs]


def _query(**values: str) -> str:
    import urllib.parse

    return urllib.parse.urlencode(values)


def _number(text: str | None, default: int) -> int:
    """A positive number of at most six ASCII digits, else ``default`` (``isdigit`` alone
    takes "²", which ``int`` refuses)."""
    if text is None or not (text.isascii() and text.isdigit()) or not 0 < len(text) <= 6:
        return default
    return int(text)


def _facet(memory: Memory, key: str) -> str:
    return {"type": memory.type, "scope": memory.scope, "tier": memory.tier}[key]


def _counts(memories: list[Memory]) -> dict[str, int]:
    counts = Counter(m.type for m in memories if m.tier != "working")
    return {
        **{kind: counts[kind] for kind in TYPES},
        "notes": sum(m.tier == "working" for m in memories),
    }


def _ages(memories: list[Memory], today: dt.date) -> list[tuple[str, float]]:
    counts: Counter[str] = Counter()
    for memory in memories:
        stamp = str(memory.get("updated") or memory.get("created") or "")
        try:
            days = (today - dt.date.fromisoformat(stamp)).days
        except ValueError:
            days = 10**9
        counts[next(label for label, most in AGES if days <= most)] += 1
    return [(label, counts[label]) for label, _ in AGES]


def _history(path: Path | None) -> list[str] | None:
    """The file's Git log (newest first; empty before its first commit), or ``None``
    outside a repository or without Git."""
    if path is None:
        return None

    def git(*args: str) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run(
                ["git", *args],
                # The file's own folder: a global memory lives outside the project.
                cwd=path.parent,
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None

    inside = git("rev-parse", "--is-inside-work-tree")
    if inside is None or inside.returncode != 0:
        return None
    log = git(
        "log", "--follow", "-n", "30", "--date=short", "--format=%h  %ad  %an  %s", "--", str(path)
    )
    if log is None:
        return None
    # A repository without a commit yet makes `git log` fail: no history, not no Git.
    return log.stdout.splitlines() if log.returncode == 0 else []


def _why_loaded(project: ProjectMemory, task: str, result: LoadResult) -> dict[str, str]:
    """Why each memory routed directly to ``task`` did, in words."""
    direct = [item["id"] for item in result.explain if item.get("how") == "direct"]
    if " ".join(task.lower().split()) == SESSION_QUERY:
        said = "a session starts with every rule and the memories tagged for it"
        return dict.fromkeys(direct, said)
    shared = project.shared_words(task, direct)
    return {mid: scores.in_words(shared.get(mid, []), mid in result.close) for mid in direct}


#: A candidate's choice in the proposal's form: ``candidate-N`` (N from 1).
_CHOICE: Final = re.compile(r"candidate-([1-9][0-9]{0,3})")


def _choices(form: dict[str, str]) -> dict[int, str]:
    return {
        int(match.group(1)): value
        for name, value in form.items()
        if (match := _CHOICE.fullmatch(name)) is not None
    }


def _approved(form: dict[str, str]) -> str | list[int] | None:
    """What the form approves: ``"all"``, the numbers chosen (``[]``: none, the whole
    proposal declined), or ``None`` when it is not an answer the page offers."""
    decision = form.get("decision")
    if decision == "approve":
        return "all"
    if decision == "decline":
        return []
    choices = _choices(form)
    if decision != "choose" or not choices:
        return None
    if any(value not in ("approve", "decline") for value in choices.values()):
        return None
    return sorted(number for number, value in choices.items() if value == "approve")


def _declined(form: dict[str, str]) -> list[int]:
    if form.get("decision") != "choose":
        return []
    return sorted(number for number, value in _choices(form).items() if value == "decline")


def _decided(outcome: Outcome | None, approve: str | list[int], declined: list[int]) -> str:
    """What a decision did, in words: what was written, declined and left unwritten."""
    if outcome is None:
        return "Declined: nothing was written, and the agent's commit will be told so."
    said = "Approved all" if isinstance(approve, str) else f"Approved {_numbers(approve)}"
    if declined:
        said += f", declined {_numbers(declined)}"
    wrote = [f"{entry['file']} ({entry['verdict']})" for entry in outcome.written]
    said += ": wrote " + ", ".join(wrote) if wrote else ": wrote nothing"
    for entry in outcome.deferred:
        said += f"; {entry['number']} not written ({entry['reason']})"
    return said + "."


def _numbers(numbers: list[int]) -> str:
    """``candidate 2``, ``candidates 1 and 3``, ``candidates 1, 2 and 4``."""
    shown = [str(number) for number in numbers]
    if len(shown) == 1:
        return f"candidate {shown[0]}"
    return "candidates " + ", ".join(shown[:-1]) + " and " + shown[-1]
