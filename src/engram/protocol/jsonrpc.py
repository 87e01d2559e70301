"""JSON-RPC 2.0 messages: codes, classification of incoming lines, response builders.

This module knows JSON-RPC and nothing of MCP methods or engram's domain. It turns a
line of bytes into one of :class:`Request`, :class:`Notification` or
:class:`Response` (a reply to a request the server sent), a :class:`Batch` of them,
or raises the protocol error the line deserves. Whether a batch is served depends on
the negotiated protocol version, which the dispatcher decides (``protocol/eras.py``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Final

from engram.errors import InvalidRequest, ParseError, ProtocolError

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "Batch",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "as_request_id",
    "dumps",
    "error_response",
    "parse_message",
    "result_response",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
#: Legacy MCP only; 2026-07-28 answers an unknown resource with INVALID_PARAMS.
RESOURCE_NOT_FOUND: Final = -32002

#: Output separators: one compact line per message.
_COMPACT: Final = (",", ":")

RequestId = str | int


@dataclass(frozen=True, slots=True)
class Request:
    """A call that expects exactly one response."""

    id: RequestId
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Notification:
    """A message without ``id``: it is never answered, not even with an error."""

    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Response:
    """A client's reply to a request the server sent (for example elicitation)."""

    id: RequestId
    result: dict[str, Any] | None
    error: dict[str, Any] | None


Message = Request | Notification | Response


@dataclass(frozen=True, slots=True)
class Batch:
    """A JSON-RPC 2.0 batch (section 6): an array of at least one member, in order.

    Each member is a message, or the :class:`InvalidRequest` it deserves: an invalid
    member gets its own error object in the batch's answer.
    """

    members: tuple[Message | InvalidRequest, ...]


def parse_message(line: bytes) -> Message | Batch:
    """Classify one framed line.

    Raises :class:`ParseError` for bytes that are not JSON, and :class:`InvalidRequest`
    (carrying the id when it was readable) for JSON that is not a valid message; an
    empty array is one invalid request (JSON-RPC 2.0 section 6).
    """
    try:
        data = json.loads(line, parse_constant=_refuse_constant, parse_float=_finite_float)
    except (ValueError, RecursionError) as exc:
        raise ParseError() from exc
    if isinstance(data, list):
        if not data:
            raise InvalidRequest(None)
        return Batch(tuple(_batch_member(item) for item in data))
    return _classify(data)


def _batch_member(data: object) -> Message | InvalidRequest:
    try:
        return _classify(data)
    except InvalidRequest as error:
        return error


def _classify(data: object) -> Message:
    if not isinstance(data, dict):
        raise InvalidRequest(None)
    request_id = _read_id(data)
    if data.get("jsonrpc") != "2.0":
        raise InvalidRequest(request_id)
    if "method" not in data:
        return _parse_response(data, request_id)
    method = data["method"]
    params = data.get("params", {})
    if not isinstance(method, str) or not isinstance(params, dict):
        raise InvalidRequest(request_id)
    if "id" not in data:
        return Notification(method, params)
    if request_id is None:
        raise InvalidRequest(None)
    return Request(request_id, method, params)


def _refuse_constant(name: str) -> object:
    # NaN and Infinity are not JSON (RFC 8259); Python's json accepts them by default.
    raise ValueError(name)


def _finite_float(text: str) -> float:
    # A literal beyond a double's range (1e400) would become infinity, which no JSON
    # text can carry back; RFC 8259 section 6 lets us refuse numbers out of range.
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def as_request_id(value: object) -> RequestId | None:
    """``value`` if it is a request id (a string or an integer), else ``None``.

    JSON-RPC allows null ids, MCP does not; booleans are ints to Python, not ids.
    """
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return value


def _read_id(data: dict[str, Any]) -> RequestId | None:
    return as_request_id(data.get("id"))


def _parse_response(data: dict[str, Any], request_id: RequestId | None) -> Response:
    result, error = data.get("result"), data.get("error")
    well_formed = request_id is not None and (
        (isinstance(result, dict) and "error" not in data)
        or (isinstance(error, dict) and "result" not in data)
    )
    if not well_formed or request_id is None:
        raise InvalidRequest(request_id)
    return Response(request_id, result, error)


def result_response(request_id: RequestId, result: object) -> dict[str, Any]:
    """Build a success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: RequestId | None, error: ProtocolError) -> dict[str, Any]:
    """Build an error response from a protocol error; its message is constant."""
    body: dict[str, Any] = {"code": error.jsonrpc_code, "message": error.message}
    data = error.wire_data()
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def dumps(message: dict[str, Any]) -> bytes:
    """Serialize one message as a single line of UTF-8 JSON.

    JSON escapes every control character, so a message never spans lines. Never fails
    on a value :func:`parse_message` accepted: a lone surrogate (``"\\ud800"`` is valid
    JSON, but no UTF-8 encodes it) is written as its ASCII escape, which decodes to the
    same string. Raises ``ValueError`` for NaN and infinities (no JSON text carries them)
    and ``TypeError`` for a value that is not JSON at all.
    """
    text = json.dumps(message, ensure_ascii=False, separators=_COMPACT, allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(message, separators=_COMPACT, allow_nan=False).encode("ascii")
