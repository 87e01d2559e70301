"""The console's governed memory pages, one set per host profile given to it: what
waits for the operator (confirmations to approve or deny, candidates to adjudicate),
activity, records and their lifecycle, the journal (its chain verified on demand) and
the audit log. These are the operator's verbs of ``engram host``; none is reachable
through MCP."""

from __future__ import annotations

import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import fields
from typing import TYPE_CHECKING, Final

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from engram.console import charts
from engram.memory.gate import APPROVAL_TTL_MS
from engram.memory.lifecycle import RECORD_STATES
from engram.memory.maintenance import REASON_COLUMNS
from engram.memory.overview import DayActivity

if TYPE_CHECKING:
    from engram.console.app import Pages
    from engram.console.governed import GovernedView
    from engram.memory.ports import ConfirmationRow

__all__ = ["routes"]

Handler = Callable[[Request], Awaitable[Response]]

#: The kinds of the activity chart, in legend order: the counts of a day's activity.
ACTIVITY: Final = tuple(f.name for f in fields(DayActivity) if f.name not in ("day", "date"))
#: How long an approval given here stays valid, in seconds.
APPROVAL_S: Final = APPROVAL_TTL_MS // 1000
STATES: Final = RECORD_STATES


def routes(pages: Pages) -> list[tuple[str, Handler, str]]:
    """The governed pages, each with its method. One function of small closures over
    ``pages`` (each page's handler is a few lines: read the domain, render), so the
    table at its end says every route in one place."""

    def governed_page(view: Callable[[Request, GovernedView, int], Response]) -> Handler:
        async def run(request: Request) -> Response:
            number = request.path_params["number"]
            if not 0 <= number < len(pages.console.governed):
                return pages.render(request, "refused.html", 404, reason="no such host profile")
            return view(request, pages.console.governed[number], number)

        return run

    def overview(request: Request, view: GovernedView, number: int) -> Response:
        waiting = view.maintenance.pending()
        days = view.overview.activity(30)
        chart = charts.columns(
            [(day.date, {kind: getattr(day, kind) for kind in ACTIVITY}) for day in days],
            ACTIVITY,
        )
        counts = view.overview.counts()
        return pages.render(
            request,
            "governed_overview.html",
            view=view,
            number=number,
            confirmations=waiting.confirmations,
            held=view.overview.held(),
            approval_s=APPROVAL_S,
            reason_columns=REASON_COLUMNS,
            activity=chart,
            by_state=charts.bars(counts["states"]),
            by_age=charts.bars(counts["ages"]),
            done=request.query_params.get("done", ""),
        )

    def confirm(request: Request, view: GovernedView, number: int) -> Response:
        decision = request.state.form.get("decision")
        request_id = request.path_params["request_id"]
        if decision == "approve":
            row = view.maintenance.confirm(request_id)
            done = (
                f"approved {row.tool} of {row.target} for {APPROVAL_S} s ({_asked_by(row)}):"
                " the agent may retry now"
            )
        elif decision == "deny":
            row = view.maintenance.deny(request_id)
            done = f"denied {row.tool} of {row.target} ({_asked_by(row)})"
        else:
            return pages.render(request, "refused.html", 400, reason="choose approve or deny")
        return _back(number, done)

    def adjudicate(request: Request, view: GovernedView, number: int) -> Response:
        decision = request.state.form.get("decision")
        if decision not in ("accept", "reject"):
            return pages.render(request, "refused.html", 400, reason="choose accept or reject")
        candidate_id = request.path_params["candidate_id"]
        record_id = view.maintenance.adjudicate(candidate_id, decision == "accept")
        return _back(
            number, f"accepted as {record_id}" if record_id else f"rejected {candidate_id}"
        )

    def records(request: Request, view: GovernedView, number: int) -> Response:
        state = request.query_params.get("state") or None
        page = view.overview.records(
            state=state if state in STATES else None,
            after=request.query_params.get("after") or None,
        )
        return pages.render(
            request, "governed_records.html", view=view, number=number, page=page, states=STATES
        )

    def record(request: Request, view: GovernedView, number: int) -> Response:
        detail = view.overview.record(request.path_params["record_id"])
        return pages.render(
            request, "governed_record.html", view=view, number=number, detail=detail
        )

    def journal(request: Request, view: GovernedView, number: int) -> Response:
        before = request.query_params.get("before", "")
        verified: str | None = None
        if request.query_params.get("verify"):
            verified = f"the chain verifies: {view.maintenance.verify():,} events"
        numeric = before.isascii() and before.isdigit() and len(before) <= 19
        page = view.overview.journal(before=int(before) if numeric else None)
        return pages.render(
            request,
            "governed_journal.html",
            view=view,
            number=number,
            page=page,
            verified=verified,
        )

    def audit(request: Request, view: GovernedView, number: int) -> Response:
        wanted = {
            key: request.query_params.get(key) or None for key in ("principal", "tool", "outcome")
        }
        page = view.overview.audit(
            wanted["principal"],
            wanted["tool"],
            wanted["outcome"],
            before=request.query_params.get("before") or None,
        )
        return pages.render(
            request, "governed_audit.html", view=view, number=number, page=page, wanted=wanted
        )

    def stale(request: Request, view: GovernedView, number: int) -> Response:
        """The current records whose file citations no longer match the file under the
        profile's verifier root (``engram host stale``)."""
        from engram.memory.citations import stale_citations

        root = view.memory.profile.verifier_root
        found, checked = (
            ([], 0)
            if root is None
            else stale_citations(view.memory.engine, view.memory.binding.scope, root)
        )
        return pages.render(
            request,
            "governed_stale.html",
            view=view,
            number=number,
            root=root,
            found=found,
            checked=checked,
        )

    return [
        ("/governed/{number:int}", governed_page(overview), "GET"),
        ("/governed/{number:int}/confirm/{request_id}", governed_page(confirm), "POST"),
        ("/governed/{number:int}/adjudicate/{candidate_id}", governed_page(adjudicate), "POST"),
        ("/governed/{number:int}/records", governed_page(records), "GET"),
        ("/governed/{number:int}/records/{record_id}", governed_page(record), "GET"),
        ("/governed/{number:int}/journal", governed_page(journal), "GET"),
        ("/governed/{number:int}/audit", governed_page(audit), "GET"),
        ("/governed/{number:int}/stale", governed_page(stale), "GET"),
    ]


def _asked_by(row: ConfirmationRow) -> str:
    """Who asked, as the server bound the call (the waiting table's *asked by*)."""
    return f"asked by principal {row.principal}, agent {row.agent_id}"


def _back(number: int, done: str) -> Response:
    query = urllib.parse.urlencode({"done": done})
    return RedirectResponse(f"/governed/{number}?{query}", status_code=303)
