"""``engram-mcp --http HOST:PORT``: the same dispatcher over MCP Streamable HTTP.

One endpoint, ``/mcp``, serves both protocol eras (docs/protocol.md, "Streamable HTTP"):

- **2026-07-28** (a request whose ``params._meta`` names the version): every POST stands
  alone. The ``MCP-Protocol-Version``, ``Mcp-Method`` and (for ``tools/call``,
  ``resources/read``, ``prompts/get``) ``Mcp-Name`` headers must equal what the body
  says, else -32020 (``HeaderMismatch``) with HTTP 400. Dialogs are ``input_required``
  results, retried by the client, as on stdio.
- **Legacy** (2024-11-05 … 2025-11-25): ``initialize`` opens a session
  (``Mcp-Session-Id`` on its answer); later requests name it (400 without, 404 for an
  unknown one); DELETE ends it. No GET stream is offered (405), so the server sends no
  request of its own on a legacy session: gated tools are confirmed by the host
  (``engram host confirm``) or in the 2026-07-28 era.

Before anything is read: the ``Host`` header must name this server and an ``Origin``,
when present, must be one of its own (403: DNS rebinding), and the request must carry
``Authorization: Bearer <token>`` with a token the host issued for a profile of this
server's store (401 otherwise; :mod:`engram.host.tokens`). The token's profile, as it
is now, is the request's: one server serves every profile that shares its store and
signing key, each with the tools both the token and the profile grant and under that
profile's whole policy (confirmation channel, retention, admission), never the policy of
the profile the server was started with (which only names the store and the signing
key). A changed profile is served by a new dispatcher from its next request on (the
one before is closed once its last call ends), and a dialog's ``requestState`` is
sealed to the profile's digest, so a state sealed under one policy is refused under
another. Nothing in a request can widen it. Answers are JSON (``application/json``);
a notification or a reply gets 202. Only governed memory is served: project memory
belongs to a developer's repository and its stdio server.

Starlette and uvicorn (the ``http`` extra) are imported only here, never on the stdio
start-up path.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from engram import __version__
from engram.errors import StoreUnavailable, TokenRefused
from engram.host.tokens import Admitted, TokenChecks, profile_digest, request_state_key
from engram.mcp.connection import Connection
from engram.mcp.dispatcher import Dispatcher, ServerIdentity
from engram.mcp.instructions import INSTRUCTIONS
from engram.mcp.request_state import StateSealer
from engram.mcp.tools import ToolTable
from engram.protocol.eras import LEGACY_VERSIONS, PROTOCOL_VERSION_KEY
from engram.protocol.framing import MAX_LINE_BYTES, Frame
from engram.protocol.jsonrpc import Batch, Message, Notification, Request, Response

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request as HttpRequest
    from starlette.responses import Response as HttpResponse

    from engram.host.profile import HostProfile
    from engram.mcp.options import ServerOptions

__all__ = ["HttpSettings", "build_http_dispatcher", "create_app", "serve_http"]

log = logging.getLogger("engram.mcp.http")

ENDPOINT: Final = "/mcp"
#: JSON-RPC error codes of the transport.
HEADER_MISMATCH: Final = -32020
UNAUTHORIZED: Final = -32001
#: Where each 2026-07-28 method names its target, for the ``Mcp-Name`` header.
_NAMED_BY: Final = {"tools/call": "name", "resources/read": "uri", "prompts/get": "name"}
#: HTTP status of an answer carrying a JSON-RPC error, by code (others: 400).
_ERROR_STATUS: Final = {-32601: 404, -32603: 500}
#: The header of an answer after which the connection is closed (a body left unread).
_CLOSE: Final = {"Connection": "close"}
#: Legacy sessions one binding may keep open: opening one more ends its oldest (whose
#: next request gets 404, and a client then opens a new one), so an agent that opens
#: sessions without end costs the server no memory past these.
MAX_SESSIONS_PER_BINDING: Final = 64


@dataclass
class _Served:
    """The dispatcher of one profile's binding as the profile is now (``profile``, its
    grants those of the token too), the resources it opened, and how many calls it is
    serving."""

    dispatcher: Dispatcher
    profile: HostProfile
    resources: contextlib.ExitStack
    calls: int = 0
    retired: bool = False


@dataclass
class HttpSettings:
    """Who may reach the server: the ``Host`` values it answers to (and the origins
    built from them), and the profile whose store's tokens it accepts (its store and
    signing key, nothing of its policy); the dispatcher of each profile a token named,
    made on first use, made again when the profile changed, and closed with
    ``resources``."""

    profile: HostProfile
    hosts: frozenset[str]
    options: ServerOptions
    resources: contextlib.ExitStack
    clock: Callable[[], float] = time.time
    #: Legacy sessions: each one's connection and the binding that opened it.
    sessions: dict[str, tuple[Connection, tuple[Any, ...]]] = field(default_factory=dict)
    #: The current dispatcher of each binding (profile path and binding fields) and set
    #: of grants served: two tokens of one profile, issued before and after a grant was
    #: added, are served side by side, not by a dispatcher made anew at each turn.
    dispatchers: dict[tuple[Any, ...], _Served] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    checks: TokenChecks | None = None

    def admit(self, token: str) -> Admitted:
        """The token, checked against its profile as it is now (``TokenRefused``)."""
        with self.lock:
            if self.checks is None:
                self.checks = TokenChecks(self.profile)
                self.resources.callback(self.checks.close)
            checks = self.checks
        return checks.admit(token, int(self.clock()))

    def dispatcher(self, admitted: Admitted) -> tuple[_Served, tuple[Any, ...]]:
        """The dispatcher serving the profile ``admitted`` names as it is now, counted
        as busy until :meth:`release`; and the key of its binding."""
        key = _binding_key(admitted)
        served_as = (*key, tuple(sorted(admitted.profile.grants)))
        with self.lock:
            found = self.dispatchers.get(served_as)
            # Anything of the profile changed (its policy, store, keys, durability): the
            # dispatcher and the engine it opens are made anew.
            if found is None or found.profile != admitted.profile:
                retired = found
                opened = self.resources.enter_context(contextlib.ExitStack())
                found = _Served(
                    build_http_dispatcher(admitted.profile, self.options, opened),
                    admitted.profile,
                    opened,
                )
                self.dispatchers[served_as] = found
                if retired is not None:
                    retired.retired = True
                    if retired.calls == 0:
                        _close_later(retired)
            found.calls += 1
            return found, key

    def release(self, served: _Served) -> None:
        """One call of ``served`` ended; a retired dispatcher is closed after its last."""
        with self.lock:
            served.calls -= 1
            if served.retired and served.calls == 0:
                _close_later(served)


def _close_later(served: _Served) -> None:
    # Closing joins the semantic builder (at most one batch): never on a request's path.
    threading.Thread(target=served.resources.close, name="engram-retire", daemon=True).start()


def _binding_key(admitted: Admitted) -> tuple[Any, ...]:
    """The binding a legacy session belongs to: the profile and its binding fields (its
    policy and grants may change under an open session: the next request serves the
    changed profile)."""
    claims = admitted.claims
    return (
        claims.profile,
        claims.tenant,
        claims.workspace,
        claims.principal,
        claims.agent_id,
        claims.purpose,
    )


def allowed_hosts(host: str, port: int, extra: str = "") -> frozenset[str]:
    """``Host`` header values for a server bound to ``host:port``: itself, and the
    loopback names when it is bound to loopback; plus ``extra`` (comma-separated)."""
    names = {host}
    if host in ("127.0.0.1", "localhost", "::1"):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    hosts = {f"{name}:{port}" for name in names}
    hosts |= {item.strip() for item in extra.split(",") if item.strip()}
    return frozenset(hosts)


def build_http_dispatcher(
    profile: HostProfile, options: ServerOptions, resources: contextlib.ExitStack
) -> Dispatcher:
    """The granted governed tools of one profile (no project memory), under its policy.
    A dialog's ``requestState`` is sealed to the binding and the profile's digest."""
    from engram.mcp.memory_tools import profile_tools

    tools = ToolTable(profile_tools(profile, resources))
    binding = "\0".join(
        [
            profile.tenant,
            profile.workspace,
            profile.principal,
            profile.agent_id,
            profile.purpose,
            profile_digest(profile),
        ]
    )
    return Dispatcher(
        identity=ServerIdentity("engram", __version__, "Engram", INSTRUCTIONS),
        tools=tools,
        binding=f"http\0{binding}",
        elicitation_enabled=options.elicitation,
        elicitation_timeout=options.elicitation_timeout,
        # A retry carrying the person's answer may reach any server of the store.
        sealer=StateSealer(request_state_key(profile)),
    )


def create_app(settings: HttpSettings) -> Starlette:
    """The ASGI application serving ``/mcp``."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    async def endpoint(request: HttpRequest) -> HttpResponse:
        from starlette.concurrency import run_in_threadpool

        # The token's checks read files and the store: off the event loop.
        admitted = await run_in_threadpool(_admit, request, settings)
        if not isinstance(admitted, Admitted):
            return admitted
        served, binding = settings.dispatcher(admitted)
        try:
            if request.method == "GET":
                return _plain(
                    405, "no server-to-client stream is offered", {"Allow": "POST, DELETE"}
                )
            if request.method == "DELETE":
                return _end_session(request, settings, binding)
            return await _post(request, served.dispatcher, settings, binding)
        finally:
            settings.release(served)

    app = Starlette(routes=[Route(ENDPOINT, endpoint, methods=["GET", "POST", "DELETE"])])
    app.router.redirect_slashes = False  # /mcp/ is not the endpoint: 404, never a redirect
    return app


def _admit(request: HttpRequest, settings: HttpSettings) -> Admitted | HttpResponse:
    """The request's admitted token; or, before the body is read, 403 for a foreign
    ``Host`` or ``Origin`` (DNS rebinding), 401 without a token the host issued for a
    profile of this store that is still enabled, trusted and bound as the token says, and
    503 (retry) when the store's revocation list cannot be read: no token is let through
    unchecked."""
    host = request.headers.get("host", "")
    if host not in settings.hosts:
        return _plain(403, "unknown Host")
    origin = request.headers.get("origin")
    if origin is not None and origin.split("://", 1)[-1] not in settings.hosts:
        return _plain(403, "foreign Origin")
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    try:
        if scheme.lower() != "bearer" or not token.strip():
            raise TokenRefused("no bearer token")
        return settings.admit(token.strip())
    except TokenRefused as refused:
        log.warning("refused a request: %s", refused.detail)  # the token is never logged
        return _json(
            401,
            _error(None, UNAUTHORIZED, "Unauthorized"),
            {"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    except StoreUnavailable as unavailable:  # the revocation list could not be read
        log.warning("could not check a token: %s", unavailable.detail)
        return _json(503, _error(None, -32603, StoreUnavailable.message), {"Retry-After": "1"})


async def _post(
    request: HttpRequest, dispatcher: Dispatcher, settings: HttpSettings, binding: tuple[Any, ...]
) -> HttpResponse:
    from starlette.concurrency import run_in_threadpool

    body = await _body(request, settings.options.http_limits.body_timeout)
    if not isinstance(body, bytes):  # refused: too large, too slow, or its client left
        return body
    item = dispatcher.read(Frame(body, oversized=False))
    if isinstance(item, bytes):  # not JSON-RPC: the dispatcher's own error answer
        return _answer(item)
    if isinstance(item, Batch):
        return _json(400, _error(None, -32600, "Invalid Request: one message per POST"))
    mismatch = _header_mismatch(request, item)
    if mismatch is not None:
        return _json(400, _error(getattr(item, "id", None), HEADER_MISMATCH, mismatch))
    modern = isinstance(item, Request) and _is_modern(item)
    if modern:
        connection = Connection(_no_send)  # a 2026-07-28 request stands alone
        answer = await run_in_threadpool(dispatcher.handle, item, connection)
        return _accepted() if answer is None else _answer(answer)
    return await _legacy(request, item, dispatcher, settings, binding)


async def _legacy(
    request: HttpRequest,
    item: Message,
    dispatcher: Dispatcher,
    settings: HttpSettings,
    binding: tuple[Any, ...],
) -> HttpResponse:
    from starlette.concurrency import run_in_threadpool

    version = request.headers.get("mcp-protocol-version")
    if version is not None and version not in LEGACY_VERSIONS:
        return _json(
            400, _error(getattr(item, "id", None), -32600, "Unsupported MCP-Protocol-Version")
        )
    if isinstance(item, Request) and item.method == "initialize":
        session = secrets.token_urlsafe(24)
        connection = Connection(_no_send)
        answer = await run_in_threadpool(dispatcher.handle, item, connection)
        # No stream carries a request of the server's own: no dialog on this session.
        connection.client_capabilities.pop("elicitation", None)
        with settings.lock:
            ended = _oldest_sessions(settings.sessions, binding, MAX_SESSIONS_PER_BINDING - 1)
            for ended_id in ended:
                del settings.sessions[ended_id]
            settings.sessions[session] = (connection, binding)
        for ended_connection in ended.values():
            ended_connection.close()
        assert answer is not None
        return _answer(answer, {"Mcp-Session-Id": session})
    session_id = request.headers.get("mcp-session-id")
    if not session_id:
        return _json(400, _error(getattr(item, "id", None), -32600, "Missing Mcp-Session-Id"))
    with settings.lock:
        found = settings.sessions.get(session_id)
    if found is None or found[1] != binding:  # another binding's session is no session
        return _json(404, _error(getattr(item, "id", None), -32600, "Unknown or ended session"))
    answer = await run_in_threadpool(dispatcher.handle, item, found[0])
    if isinstance(item, Notification | Response) or answer is None:
        return _accepted()
    return _answer(answer)


def _oldest_sessions(
    sessions: dict[str, tuple[Connection, tuple[Any, ...]]], binding: tuple[Any, ...], keep: int
) -> dict[str, Connection]:
    """The sessions of ``binding`` past the ``keep`` newest (``sessions`` is in the order
    they were opened)."""
    mine = [(session, found[0]) for session, found in sessions.items() if found[1] == binding]
    return dict(mine[: max(0, len(mine) - keep)])


def _end_session(
    request: HttpRequest, settings: HttpSettings, binding: tuple[Any, ...]
) -> HttpResponse:
    session_id = request.headers.get("mcp-session-id", "")
    with settings.lock:
        found = settings.sessions.get(session_id)
        if found is None or found[1] != binding:
            return _plain(404, "unknown session")
        del settings.sessions[session_id]
    found[0].close()
    return _plain(200, "session ended")


def _is_modern(request: Request) -> bool:
    meta = request.params.get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def _header_mismatch(request: HttpRequest, item: Message) -> str | None:
    """For a 2026-07-28 request: why its headers do not say what its body says."""
    if not isinstance(item, Request) or not _is_modern(item):
        return None
    version = item.params["_meta"][PROTOCOL_VERSION_KEY]
    expected = {"mcp-protocol-version": version, "mcp-method": item.method}
    if item.method in _NAMED_BY:
        expected["mcp-name"] = item.params.get(_NAMED_BY[item.method])
    for header, value in expected.items():
        given = _header_value(request.headers.get(header))
        if given is None:
            return f"Header mismatch: {header} is missing"
        if given != value:
            return f"Header mismatch: {header} does not match the request"
    return None


def _header_value(raw: str | None) -> str | None:
    """A header's value; ``=?base64?…?=`` carries one that is not plain ASCII."""
    if raw is None:
        return None
    if raw.startswith("=?base64?") and raw.endswith("?="):
        try:
            return base64.b64decode(raw[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return ""
    return raw


async def _body(request: HttpRequest, timeout: float) -> bytes | HttpResponse:
    """The request's body; or the answer refusing it: 413 past the message limit, 408
    when it has not all come within ``timeout`` seconds of the headers (both close the
    connection, whose rest is never read), and none a client reads when it left before
    sending the whole body (one line in the log, as every line a flood repeats:
    :mod:`engram.mcp.http_limits`)."""
    import asyncio

    from starlette.requests import ClientDisconnect

    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_LINE_BYTES:
        return _json(413, _error(None, -32600, "Message too large"), _CLOSE)
    chunks, size = [], 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_LINE_BYTES:
                    return _json(413, _error(None, -32600, "Message too large"), _CLOSE)
                chunks.append(chunk)
    except TimeoutError:
        log.warning("closed requests whose body did not come within %g s", timeout)
        return _json(408, _error(None, -32600, "Request timeout"), _CLOSE)
    except ClientDisconnect:
        log.warning("clients left before sending a whole request body")
        return _plain(400, "the client left", _CLOSE)  # nobody reads it
    return b"".join(chunks)


def _no_send(message: dict[str, Any]) -> None:
    raise RuntimeError("no stream carries a message of the server's own")


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _answer(line: bytes, headers: dict[str, str] | None = None) -> HttpResponse:
    from starlette.responses import Response as HttpResponse

    body = json.loads(line)
    error = body.get("error") if isinstance(body, dict) else None
    status = _ERROR_STATUS.get(error["code"], 400) if isinstance(error, dict) else 200
    return HttpResponse(line, status, headers, media_type="application/json")


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> HttpResponse:
    from starlette.responses import JSONResponse

    return JSONResponse(body, status, headers)


def _plain(status: int, text: str, headers: dict[str, str] | None = None) -> HttpResponse:
    from starlette.responses import PlainTextResponse

    return PlainTextResponse(text, status, headers)


def _accepted() -> HttpResponse:
    from starlette.responses import Response as HttpResponse

    return HttpResponse(status_code=202)


def serve_http(options: ServerOptions, address: str) -> int:
    """Serve until interrupted; ``address`` is ``HOST:PORT``."""
    from engram.host.profile import load_profile
    from engram.mcp.http_limits import serve

    host, _, port_text = address.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    port = int(port_text)
    assert options.host_profile is not None
    with contextlib.ExitStack() as resources:
        settings = HttpSettings(
            load_profile(options.host_profile),
            allowed_hosts(host, port, options.allowed_hosts),
            options,
            resources,
        )
        serve(create_app(settings), host, port, options.http_limits)
    return 0
