"""One client connection: legacy handshake state and server-to-client requests.

The legacy era keeps what ``initialize`` said (the negotiated version and the
client's capabilities) per connection, and whether the client has since sent
``notifications/initialized``: before it the server sends no request of its own
(lifecycle: it SHOULD NOT, other than pings and logging). Requests the server sends
to the client (``elicitation/create``) are correlated here by id: the worker that
asked waits on an event while the transport keeps reading, and a reply, a timeout or
the end of the stream wakes it. The modern era never uses this state (every request
stands alone), except for the ``subscriptions/listen`` streams open on the connection,
which can only live as long as it does.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from engram.errors import ElicitationFailed
from engram.mcp.subscriptions import Subscriptions
from engram.protocol.eras import ClientInfo
from engram.protocol.jsonrpc import RequestId, Response

__all__ = ["Connection"]

Send = Callable[[dict[str, Any]], None]
Blocking = Callable[[], AbstractContextManager[None]]


@dataclass
class _Pending:
    done: threading.Event
    response: Response | None = None


class Connection:
    """Handshake state and outgoing-request correlation for one stream."""

    def __init__(self, send: Send, blocking: Blocking = nullcontext) -> None:
        self._send = send
        self._blocking = blocking
        self._lock = threading.Lock()
        self._pending: dict[RequestId, _Pending] = {}
        self._ids: Iterator[int] = itertools.count(1)
        self._closed = False
        self.protocol_version: str | None = None
        self.client_capabilities: dict[str, Any] = {}
        #: What the client said of itself in ``initialize`` (``clientInfo``).
        self.client = ClientInfo()
        #: The client sent ``notifications/initialized`` after the last ``initialize``.
        self.operating = False
        #: The 2026-07-28 ``subscriptions/listen`` streams open on this connection.
        self.subscriptions = Subscriptions()

    def initialized(self, version: str, capabilities: dict[str, Any], client: ClientInfo) -> None:
        """Record what a legacy ``initialize`` negotiated and who the client says it is;
        the handshake awaits the client."""
        self.protocol_version = version
        self.client_capabilities = capabilities
        self.client = client
        self.operating = False

    def begin_operation(self) -> None:
        """The client sent ``notifications/initialized``: the operation phase begins.

        Ignored before ``initialize``, when there is no handshake to complete.
        """
        if self.protocol_version is not None:
            self.operating = True

    def send(self, message: dict[str, Any]) -> None:
        """Write one message to the client."""
        self._send(message)

    def request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send a request to the client and wait for its result.

        Raises ``ElicitationFailed`` on an error reply, a timeout (after telling the
        client with ``notifications/cancelled``) or a closed stream.
        """
        request_id = f"engram-{next(self._ids)}"
        pending = _Pending(threading.Event())
        with self._lock:
            if self._closed:
                raise ElicitationFailed("connection closed")
            self._pending[request_id] = pending
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        with self._blocking():
            answered = pending.done.wait(timeout)
        with self._lock:
            self._pending.pop(request_id, None)
        if not answered:
            self._send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": request_id, "reason": "timeout"},
                }
            )
            raise ElicitationFailed("timeout")
        response = pending.response
        if response is None or response.result is None:
            raise ElicitationFailed("error reply" if response else "connection closed")
        return response.result

    def deliver(self, response: Response) -> bool:
        """Hand a client's reply to the waiting request; ``False`` if none waits."""
        with self._lock:
            pending = self._pending.get(response.id)
        if pending is None:
            return False
        pending.response = response
        pending.done.set()
        return True

    def close(self) -> None:
        """The stream ended: wake every waiting request; later ones fail at once."""
        with self._lock:
            self._closed = True
            waiting = list(self._pending.values())
        for pending in waiting:
            pending.done.set()
