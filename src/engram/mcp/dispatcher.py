"""The dispatcher: routes each message to its handler table, in its protocol era.

It owns the one mapping from exceptions to the wire: a :class:`ProtocolError`
becomes a JSON-RPC error response, anything unexpected becomes -32603 with the
stack logged to stderr (never the exception's message, which could carry data).
This is one of engram's two catch-all boundaries; the other is the CLI entry point.
The boundary ends at bytes: a request's answer is serialized inside it, so nothing
that goes wrong while answering one message can stop the worker that answers it.
"""

from __future__ import annotations

import logging
import secrets
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from engram.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    InvalidRequestState,
    MessageTooLarge,
    MethodNotFound,
    ProtocolError,
    UnknownTool,
)
from engram.mcp.catalog import EmptyPrompts, EmptyResources, PromptCatalog, ResourceCatalog
from engram.mcp.connection import Connection
from engram.mcp.elicitation import (
    ELICITATION_TIMEOUT_S,
    InputRequired,
    LegacyElicitation,
    ModernElicitation,
    NoElicitation,
    declares_form_elicitation,
)
from engram.mcp.request_state import OpenState, StateSealer
from engram.mcp.subscriptions import acknowledgement, check_filter, graceful_close
from engram.mcp.tools import CallContext, Caller, Elicitation, ToolResult, ToolTable
from engram.protocol.eras import (
    SERVER_INFO_KEY,
    SUPPORTED_VERSIONS,
    ClientInfo,
    ModernEnvelope,
    accepts_batches,
    client_info,
    modern_envelope,
    negotiate_legacy_version,
)
from engram.protocol.framing import Frame
from engram.protocol.jsonrpc import (
    Batch,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    as_request_id,
    dumps,
    error_response,
    parse_message,
    result_response,
)

__all__ = ["Dispatcher", "ServerIdentity"]

log = logging.getLogger("engram.mcp")

#: Lists whose content is fixed for the life of the process may be cached for
#: five minutes; resource contents change as memory changes and are never cached.
STATIC_TTL_MS: Final = 300_000
#: Every answer may depend on the repository or the host binding.
CACHE_SCOPE: Final = "private"

_MODERN_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
    }
)


@dataclass(frozen=True)
class ServerIdentity:
    """What the server says about itself."""

    name: str
    version: str
    title: str
    instructions: str

    def info(self) -> dict[str, str]:
        return {"name": self.name, "title": self.title, "version": self.version}


def new_session() -> str:
    """A server process's session id: ``ses_`` and 16 random hex digits."""
    return "ses_" + secrets.token_hex(8)


@dataclass
class Dispatcher:
    """Routes requests to the tool, resource and prompt tables.

    ``session`` names this server's session in what its tools record (who proposed a
    project memory); ``agent`` is the agent id of the host profile that binds it, if any.
    """

    identity: ServerIdentity
    tools: ToolTable
    resources: ResourceCatalog = field(default_factory=EmptyResources)
    prompts: PromptCatalog = field(default_factory=EmptyPrompts)
    binding: str = ""
    elicitation_enabled: bool = True
    elicitation_timeout: float = ELICITATION_TIMEOUT_S
    sealer: StateSealer = field(default_factory=StateSealer)
    session: str = field(default_factory=new_session)
    agent: str = ""

    # --- framing level ----------------------------------------------------------

    def read(self, frame: Frame) -> Message | Batch | bytes:
        """Classify a frame: a message to handle, or the error line to send now."""
        try:
            if frame.oversized:
                raise MessageTooLarge()
            return parse_message(frame.data)
        except InvalidRequest as error:
            return dumps(error_response(error.request_id, error))
        except ProtocolError as error:
            return dumps(error_response(None, error))

    def handle(self, message: Message | Batch, connection: Connection) -> bytes | None:
        """The line answering a message or a batch; ``None`` when nothing is answered."""
        if isinstance(message, Batch):
            return self._batch(message, connection)
        if isinstance(message, Response):
            if not connection.deliver(message):
                log.debug("dropped a reply to no pending request")
            return None
        if isinstance(message, Notification):
            if message.method == "notifications/initialized":
                connection.begin_operation()
            elif message.method == "notifications/cancelled":
                # Only a listen stream outlives its request's turn; any other id (a
                # finished request, an unknown or malformed one) is ignored.
                connection.subscriptions.cancel(as_request_id(message.params.get("requestId")))
            return None  # every other notification is ignored
        try:
            response = self._respond(message, connection)
            return None if response is None else dumps(response)
        except Exception as error:
            log.error(
                "internal error in %s: %s\n%s",
                message.method,
                type(error).__name__,
                "".join(traceback.format_tb(error.__traceback__)),
            )
            return dumps(error_response(message.id, InternalError()))

    def _batch(self, batch: Batch, connection: Connection) -> bytes | None:
        """JSON-RPC 2.0 batch semantics, on a connection whose version has batches.

        Any other connection, and one not yet initialized, gets the single -32600 it
        always got. The answer is the array of the members' answers in member order;
        notifications and replies add nothing, so a batch of only those gets no answer.
        """
        if not accepts_batches(connection.protocol_version):
            return dumps(error_response(None, InvalidRequest()))
        answers = [self._batch_member(member, connection) for member in batch.members]
        lines = [line for line in answers if line is not None]
        return b"[" + b",".join(lines) + b"]" if lines else None

    def _batch_member(
        self, member: Message | InvalidRequest, connection: Connection
    ) -> bytes | None:
        if isinstance(member, InvalidRequest):
            return dumps(error_response(member.request_id, member))
        if isinstance(member, Request) and member.method == "initialize":
            # 2025-03-26 lifecycle: "The initialize request MUST NOT be part of a
            # JSON-RPC batch".
            return dumps(error_response(member.id, InvalidRequest(member.id)))
        return self.handle(member, connection)

    def _respond(self, request: Request, connection: Connection) -> dict[str, Any] | None:
        """The response to a request; ``None`` for a listen stream, answered when it ends."""
        modern = False
        try:
            envelope = modern_envelope(request.params)
            modern = envelope is not None
            if envelope is None:
                result = self._legacy(request, connection)
            elif request.method == "subscriptions/listen":
                self._listen(request, connection)
                return None
            else:
                result = self._modern(request, envelope)
            return result_response(request.id, result)
        except ProtocolError as error:
            return self._error(request.id, error, modern)

    def _error(self, request_id: RequestId, error: ProtocolError, modern: bool) -> dict[str, Any]:
        response = error_response(request_id, error)
        if modern and error.modern_jsonrpc_code is not None:
            response["error"]["code"] = error.modern_jsonrpc_code
        return response

    # --- legacy era -------------------------------------------------------------

    def _legacy(self, request: Request, connection: Connection) -> object:
        method, params = request.method, request.params
        if method == "initialize":
            return self._initialize(params, connection)
        if method == "ping":
            return {}
        caller = self._caller(connection.client)
        if method in _MODERN_METHODS and method != "server/discover":
            elicitation = self._legacy_elicitation(connection)
            return self._route(method, params, elicitation, caller, modern=False)
        tool = self.tools.get(method)
        if tool is not None:
            context = CallContext("legacy", self._legacy_elicitation(connection), caller)
            return tool.handler(_bare_arguments(params), context).plain_text()
        raise MethodNotFound()

    def _initialize(self, params: dict[str, Any], connection: Connection) -> dict[str, Any]:
        version = negotiate_legacy_version(params.get("protocolVersion"))
        capabilities = params.get("capabilities")
        connection.initialized(
            version,
            capabilities if isinstance(capabilities, dict) else {},
            client_info(params.get("clientInfo")),
        )
        return {
            "protocolVersion": version,
            "capabilities": self._capabilities(),
            "serverInfo": self.identity.info(),
            "instructions": self.identity.instructions,
        }

    def _legacy_elicitation(self, connection: Connection) -> Elicitation:
        if not self.elicitation_enabled:
            return NoElicitation()
        return LegacyElicitation(connection, self.elicitation_timeout)

    # --- modern era -------------------------------------------------------------

    def _modern(self, request: Request, envelope: ModernEnvelope) -> dict[str, Any]:
        method, params = request.method, request.params
        if method not in _MODERN_METHODS:
            raise MethodNotFound()
        meta = {SERVER_INFO_KEY: self.identity.info()}
        if method == "server/discover":
            return {
                "resultType": "complete",
                "supportedVersions": list(SUPPORTED_VERSIONS),
                "capabilities": self._capabilities(),
                "serverInfo": self.identity.info(),
                "instructions": self.identity.instructions,
                "ttlMs": STATIC_TTL_MS,
                "cacheScope": CACHE_SCOPE,
                "_meta": meta,
            }
        available = self.elicitation_enabled and declares_form_elicitation(
            envelope.client_capabilities
        )
        try:
            elicitation = self._modern_elicitation(params, available)
            caller = self._caller(envelope.client)
            result = self._route(method, params, elicitation, caller, modern=True)
        except InputRequired as needed:
            return self._input_required(params, needed, meta)
        result = {"resultType": "complete", **result, "_meta": meta}
        if method in ("resources/read", "resources/list"):
            result.update(ttlMs=0, cacheScope=CACHE_SCOPE)
        elif method.endswith("/list"):
            result.update(ttlMs=STATIC_TTL_MS, cacheScope=CACHE_SCOPE)
        return result

    def _listen(self, request: Request, connection: Connection) -> None:
        """Open a listen stream and acknowledge it; the request stays unanswered.

        The stream holds no thread: nothing is ever sent on it (we honour no
        notification type), so it is only an id until the client cancels it or the
        input ends (:meth:`close_subscriptions`). An id already naming an open stream
        breaks the rule that a request id is unique among those awaiting a response:
        -32600, and the open stream stays as it was.
        """
        check_filter(request.params)
        if not connection.subscriptions.open(request.id):
            raise InvalidRequest(request.id)
        connection.send(acknowledgement(request.id))

    def close_subscriptions(self, connection: Connection) -> list[bytes]:
        """The graceful close of every stream still open when the server shuts down."""
        info = self.identity.info()
        return [
            dumps(graceful_close(subscription_id, info))
            for subscription_id in connection.subscriptions.close_all()
        ]

    def _modern_elicitation(self, params: dict[str, Any], available: bool) -> ModernElicitation:
        if "requestState" not in params:
            if "inputResponses" in params:
                raise InvalidRequestState()
            return ModernElicitation(available)
        state = self.sealer.open(
            params["requestState"], _call_target(params), self.binding, params.get("arguments")
        )
        responses = params.get("inputResponses", {})
        if not isinstance(responses, dict):
            raise InvalidRequestState()
        answers = dict(state.answers)
        for key in state.asked:
            if key not in answers and isinstance(responses.get(key), dict):
                answers[key] = responses[key]
        return ModernElicitation(available, state.asked, answers)

    def _input_required(
        self, params: dict[str, Any], needed: InputRequired, meta: dict[str, Any]
    ) -> dict[str, Any]:
        state = self.sealer.seal(
            _call_target(params),
            self.binding,
            params.get("arguments"),
            OpenState(asked=needed.asked, answers=needed.answers),
        )
        return {
            "resultType": "input_required",
            "inputRequests": needed.requests,
            "requestState": state,
            "_meta": meta,
        }

    # --- shared routing ---------------------------------------------------------

    def _capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {"tools": {}}
        if not isinstance(self.resources, EmptyResources):
            capabilities["resources"] = {}
        if not isinstance(self.prompts, EmptyPrompts):
            capabilities["prompts"] = {}
        return capabilities

    def _caller(self, client: ClientInfo) -> Caller:
        return Caller(client, self.session, self.agent)

    def _route(
        self,
        method: str,
        params: dict[str, Any],
        elicitation: Elicitation,
        caller: Caller,
        *,
        modern: bool,
    ) -> dict[str, Any]:
        if method.startswith("resources/") and isinstance(self.resources, EmptyResources):
            raise MethodNotFound()
        if method.startswith("prompts/") and isinstance(self.prompts, EmptyPrompts):
            raise MethodNotFound()
        if method.endswith("/list") and params.get("cursor") is not None:
            raise InvalidParams()  # we never hand out cursors: every list is one page
        routes: dict[str, Callable[[], dict[str, Any]]] = {
            "tools/list": lambda: {
                "tools": [tool.describe() for tool in self.tools if tool.listed]
            },
            "tools/call": lambda: self._call_tool(params, elicitation, caller, modern),
            "resources/list": lambda: {"resources": self.resources.list_resources()},
            "resources/templates/list": lambda: {
                "resourceTemplates": self.resources.list_templates()
            },
            "resources/read": lambda: {"contents": self.resources.read(_string(params, "uri"))},
            "prompts/list": lambda: {"prompts": self.prompts.list_prompts()},
            "prompts/get": lambda: self.prompts.get(
                _string(params, "name"), _prompt_arguments(params)
            ),
        }
        return routes[method]()

    def _call_tool(
        self, params: dict[str, Any], elicitation: Elicitation, caller: Caller, modern: bool
    ) -> dict[str, Any]:
        name = _string(params, "name")
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise InvalidParams()
        arguments = _without_host_controls(arguments)
        tool = self.tools.get(name)
        if tool is None:
            raise UnknownTool()
        result: ToolResult = tool.handler(
            arguments, CallContext("modern" if modern else "legacy", elicitation, caller)
        )
        return result.to_wire()


#: Arguments a host adds to every tool call for itself, never the tool's, and their type:
#: Gemini CLI (0.61) adds ``wait_for_previous`` to every tool's input schema it shows its
#: model and passes the model's value on. They are removed before the tool's closed schema
#: is checked (docs/hosts.md, "Tool schemas every host accepts").
HOST_CONTROL_ARGUMENTS: Final = {"wait_for_previous": bool}


def _without_host_controls(arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value
        for key, value in arguments.items()
        if not (key in HOST_CONTROL_ARGUMENTS and isinstance(value, HOST_CONTROL_ARGUMENTS[key]))
    }


def _string(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise InvalidParams()
    return value


def _prompt_arguments(params: dict[str, Any]) -> dict[str, str]:
    arguments = params.get("arguments", {})
    if not isinstance(arguments, dict) or not all(
        isinstance(value, str) for value in arguments.values()
    ):
        raise InvalidParams()
    return arguments


def _call_target(params: dict[str, Any]) -> str:
    name = params.get("name")
    return name if isinstance(name, str) else ""


def _bare_arguments(params: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in params.items() if key != "_meta"}
