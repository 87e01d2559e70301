"""Open ``subscriptions/listen`` streams: the 2026-07-28 "Subscribe and Notify" pattern.

A listen request is long-lived. The server acknowledges it at once with
``notifications/subscriptions/acknowledged``, which reports the subset of the
requested notification types it agreed to honour, and answers the request itself
only when it ends the stream (the graceful close). A client ends it with
``notifications/cancelled`` naming the listen request's id; after that the server
writes nothing more for it. Every message of a stream carries the listen request's
id in ``_meta["io.modelcontextprotocol/subscriptionId"]``.

engram's tool, resource and prompt lists never change while it runs, and it
watches no resource on a client's behalf (it advertises neither ``listChanged``
nor ``resources.subscribe``), so the honoured subset is always empty and no
notification ever follows the acknowledgement. An open subscription is therefore
only an id in a set: it holds no thread, and the worker that opened it goes on
serving the next request.

This module does not deliver change notifications (there are none to deliver) and
knows nothing of HTTP; the dispatcher routes the requests here and the stdio
transport closes what is still open when its input ends.
"""

from __future__ import annotations

import threading
from typing import Any, Final

from engram.errors import InvalidParams
from engram.protocol.eras import SERVER_INFO_KEY
from engram.protocol.jsonrpc import RequestId, result_response

__all__ = [
    "SUBSCRIPTION_ID_KEY",
    "Subscriptions",
    "acknowledgement",
    "check_filter",
    "graceful_close",
]

SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"

_FLAGS: Final = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")


def check_filter(params: dict[str, Any]) -> None:
    """Check a listen request's ``notifications`` filter.

    ``notifications`` is required (``SubscriptionsListenRequestParams``); its three
    flags are booleans and ``resourceSubscriptions`` is a list of strings, else
    -32602. Keys the schema does not define are ignored.
    """
    requested = params.get("notifications")
    if not isinstance(requested, dict):
        raise InvalidParams()
    for flag in _FLAGS:
        if flag in requested and not isinstance(requested[flag], bool):
            raise InvalidParams()
    uris = requested.get("resourceSubscriptions", [])
    if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
        raise InvalidParams()


def acknowledgement(subscription_id: RequestId) -> dict[str, Any]:
    """The ``notifications/subscriptions/acknowledged`` that opens a stream.

    The honoured subset is empty: it "only includes notification types the server
    actually supports", and engram emits none of them.
    """
    return {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUBSCRIPTION_ID_KEY: subscription_id}, "notifications": {}},
    }


def graceful_close(subscription_id: RequestId, server_info: dict[str, str]) -> dict[str, Any]:
    """The empty ``subscriptions/listen`` result that ends a stream the server tears down.

    Its ``_meta`` carries the subscription id (``SubscriptionsListenResultMetaObject``)
    and, like every 2026-07-28 result of ours, the server's identity.
    """
    meta = {SUBSCRIPTION_ID_KEY: subscription_id, SERVER_INFO_KEY: server_info}
    return result_response(subscription_id, {"resultType": "complete", "_meta": meta})


class Subscriptions:
    """The ids of the listen streams open on one connection; safe from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[RequestId, None] = {}  # a dict keeps the order they opened in

    def open(self, subscription_id: RequestId) -> bool:
        """Record a new stream; ``False`` if one with this id is already open."""
        with self._lock:
            if subscription_id in self._open:
                return False
            self._open[subscription_id] = None
            return True

    def cancel(self, subscription_id: RequestId | None) -> None:
        """Forget the stream the client cancelled.

        Anything that is not an open stream's id (another request's, ``None`` for a
        malformed one) is ignored, as the cancellation rules ask.
        """
        if subscription_id is not None:
            with self._lock:
                self._open.pop(subscription_id, None)

    def close_all(self) -> list[RequestId]:
        """End every open stream; returns their ids in the order they opened."""
        with self._lock:
            ids = list(self._open)
            self._open.clear()
        return ids
