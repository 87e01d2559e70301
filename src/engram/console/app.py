"""The review console's web application: routes, the guard in front of them, rendering.

Every route is a thin call of the domain (:class:`~engram.project.workspace.ProjectMemory`,
:class:`~engram.memory.maintenance.Maintenance`, :class:`~engram.memory.overview.Overview`)
rendered by a Jinja template with autoescaping on, so text an agent or a file wrote is
always shown, never obeyed. Routes run on the server's one event-loop thread, one at a
time: the console has one user, and the stores it opened are used from the thread that
opened them.

A domain refusal is shown as a page with its message: 404 for what is not there, 400 for
a malformed argument, 409 for the rest (an expired confirmation, a proposal that
changed); a guard refusal with its own status. Every answer, a 500 included, carries the
guard's headers (:class:`Secured` wraps the whole application).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engram.console.guard import HEADERS, Guard, Refusal
from engram.errors import EngramError
from engram.project.results import plural

if TYPE_CHECKING:
    from engram.console.governed import GovernedView
    from engram.project.workspace import ProjectMemory

__all__ = ["Console", "build_app"]

Handler = Callable[[Request], Awaitable[Response]]


@dataclass
class Console:
    """What one console serves: the project (``None`` outside one) and governed views."""

    guard: Guard
    project: ProjectMemory | None
    governed: list[GovernedView] = field(default_factory=list)
    #: Why there is no project (shown on the page), when there is none.
    no_project: str = ""


def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("engram.console", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_displayed,
    )
    environment.filters["instant"] = _instant
    environment.filters["day"] = _day
    environment.filters["counted"] = plural
    return environment


def _displayed(value: Any) -> Any:
    """Every text a template prints, as a person may be shown it: controls and bidi
    overrides escaped (autoescaping then makes it HTML). Markup the console made itself
    (rendered Markdown, already escaped) passes as it is."""
    from markupsafe import Markup

    from engram.safety.display import shown

    if isinstance(value, str) and not isinstance(value, Markup):
        return shown(value)
    return value


def _instant(ms: int | None) -> str:
    import datetime as dt

    if ms is None:
        return "—"
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _day(ms: int | None) -> str:
    return _instant(ms)[:10]


class Pages:
    """Renders templates for one request, issuing the form tokens its actions need."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.environment = _environment()

    def render(
        self, request: Request, template: str, http_status: int = 200, **context: Any
    ) -> HTMLResponse:
        session: str | None = getattr(request.state, "session", None)

        def form_token(action: str) -> str:
            if session is None:
                return ""
            return self.console.guard.issue(session, action)

        body = self.environment.get_template(template).render(
            console=self.console,
            here=request.url.path,
            query=request.query_params,
            form_token=form_token,
            **context,
        )
        return HTMLResponse(body, status_code=http_status)


async def form_of(request: Request) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body (the only kind the pages send)."""
    body = await request.body()
    if len(body) > 64 * 1024:
        raise Refusal(413, "this form is too large")
    try:
        fields = urllib.parse.parse_qs(body.decode("utf-8"), strict_parsing=False)
    except UnicodeDecodeError as error:
        raise Refusal(400, "this form is not UTF-8 text") from error
    return {name: values[0] for name, values in fields.items()}


def _status(error: EngramError) -> int:
    """The HTTP status of a domain refusal: what is not there is 404, a malformed
    argument 400, anything else (expired, already used, changed) 409."""
    from engram.errors import InvalidArguments, InvalidSchema, NotFound, UnknownMemory

    if isinstance(error, NotFound | UnknownMemory):
        return 404
    if isinstance(error, InvalidSchema | InvalidArguments):
        return 400
    return 409


def guarded(pages: Pages, handler: Handler, action: bool) -> Handler:
    """The handler behind the guard: a session for every page; for an action, also the
    console's Origin and an unspent form token for exactly this path."""
    guard = pages.console.guard

    async def run(request: Request) -> Response:
        try:
            request.state.session = guard.session(request.cookies.get(guard.cookie))
            if action:
                form = await form_of(request)
                guard.spend(
                    request.cookies.get(guard.cookie),
                    request.headers.get("origin"),
                    request.url.path,
                    form.get("form_token", ""),
                )
                request.state.form = form
            return await handler(request)
        except Refusal as refusal:
            return pages.render(request, "refused.html", refusal.status, reason=refusal.reason)
        except EngramError as error:
            return pages.render(request, "refused.html", _status(error), reason=error.detail)

    return run


def build_app(console: Console) -> ASGIApp:
    """The console's ASGI application."""
    from engram.console import governed_pages, project_pages

    pages = Pages(console)
    guard = console.guard

    async def login(request: Request) -> Response:
        if request.method != "GET":  # a link previewer's HEAD must not spend the secret
            return Response("open the link in a browser\n", status_code=405)
        try:
            session = guard.log_in(request.query_params.get("secret"))
        except Refusal as refusal:
            return pages.render(request, "refused.html", refusal.status, reason=refusal.reason)
        # A page that moves on by itself, not a redirect: a login reached from another
        # site (the private file `--open` hands the browser) makes its redirects
        # cross-site too, and the strict cookie would not go with the next request; a
        # refresh the console's own page starts is same-site.
        response = pages.render(request, "login.html")
        response.set_cookie(guard.cookie, session, httponly=True, samesite="strict", path="/")
        return response

    async def home(request: Request) -> Response:
        project = console.project
        return pages.render(
            request,
            "home.html",
            proposals=None if project is None else len(project.proposals().waiting()),
            waiting=[view.maintenance.pending() for view in console.governed],
        )

    routes: list[Route | Mount] = [Route("/login", login)]
    table: list[tuple[str, Handler, str]] = [
        ("/", home, "GET"),
        *project_pages.routes(pages),
        *governed_pages.routes(pages),
    ]
    for path, handler, method in table:
        routes.append(
            Route(path, guarded(pages, handler, action=method == "POST"), methods=[method])
        )
    static = StaticFiles(directory=Path(__file__).with_name("static"))
    routes.append(Mount("/static", static, name="static"))
    # Outside Starlette's own error handler, so that even a 500 carries the headers.
    return Secured(Starlette(routes=routes), guard)


class Secured:
    """Every answer carries :data:`HEADERS`; a request naming another host is refused
    before any route runs (pure ASGI, so nothing else can answer first)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in scope.get("headers", [])
        }
        extra = [(name.lower().encode(), value.encode()) for name, value in HEADERS.items()]

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        try:
            self.guard.check_host(headers.get("host"))
        except Refusal as refusal:
            response = Response(refusal.reason + "\n", status_code=refusal.status)
            await response(scope, receive, send_secured)
            return
        await self.app(scope, receive, send_secured)
