"""What keeps ``engram-mcp --http`` serving through a flood of connections.

uvicorn (with h11) bounds a request's head (``h11_max_incomplete_event_size``) and closes
a connection idle after an answer (``timeout_keep_alive``); the rest it leaves open, and
this module closes it (docs/deployment.md, "The HTTP server's limits"):

- **No header timeout.** uvicorn arms its keep-alive timer only after an answer, and any
  byte cancels it: a connection that never sends a request, or sends a byte now and then,
  or trickles the rest of a body after its answer, is held forever. Here each connection
  must finish a request's headers within ``header_timeout`` of opening or of its last
  answer, or it is closed.
- **No timeout on a client that reads nothing.** An answer waits, for ever, for a client
  that reads none of it (or of the answers to requests it sent one after another without
  reading), and a connection closed with unread answers in its buffer is held until they
  are read: each holds its descriptor and, in the middle of an answer, cannot be closed
  for a newcomer. Here an answer whose client has read nothing for ``send_timeout``
  drops the connection, and a connection closed with answers left unread is dropped
  (its buffer discarded) by the header timeout or for a newcomer.
- **No cap that frees a descriptor.** ``limit_concurrency`` counts idle connections too
  and answers 503 once a request arrives; it never closes one, so idle connections still
  use up the file limit, and with the cap full of them every valid request would be 503.
  Here, past the cap, a new connection closes the one that has waited longest for a
  request (none is closed in the middle of one); when every connection is in the middle
  of a request, the new one is closed.
- **The file limit.** Out of descriptors, asyncio's accept loop logs a traceback and
  schedules a retry for each of up to ``backlog`` attempts per wake-up, and retries a
  second later: issue 26 measured 1.55 million log lines in seconds. Here the soft limit
  is raised to the hard one at start, the cap leaves room below it for what one wake-up
  may accept and for the process's own files, and the error, should it come, is one line.
- **Repeated lines.** A flood repeats the same few log lines (a disconnect, a refusal, a
  bad request); each is written at most once per :data:`LOG_INTERVAL_S`, the next one
  saying how many were held back.

The body's own limits (size, time, a client that leaves) are read where the body is:
:func:`engram.mcp.http._body`. Imported only by ``--http``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import uvicorn
    from starlette.applications import Starlette

    from engram.mcp.options import HttpLimits

__all__ = [
    "LOG_INTERVAL_S",
    "MAX_HEADER_BYTES",
    "RepeatLimit",
    "bounded_protocol",
    "plan_connections",
    "raise_file_limit",
    "serve",
]

log = logging.getLogger("engram.mcp.http")

#: How much of a request's line and headers h11 buffers before they are whole (h11's own
#: default, stated): a token is under 1 KiB; past it, the answer is 400 and a close.
MAX_HEADER_BYTES: Final = 16 * 1024
#: Connections the kernel queues before they are accepted; also the most asyncio accepts
#: in one wake-up, before any of them is closed.
BACKLOG: Final = 128
#: Descriptors kept for the process's own files: the store and its journal, key files,
#: pipes, the event loop.
RESERVE: Final = 64
#: A repeated log line is written at most once in this many seconds.
LOG_INTERVAL_S: Final = 10.0
#: The loggers a flood makes repeat themselves: asyncio's, uvicorn's, the HTTP server's.
LIMITED_LOGGERS: Final = ("asyncio", "uvicorn.error", "engram.mcp.http")
#: asyncio's message when ``accept()`` fails for want of descriptors (selector_events.py).
_ACCEPT_EXHAUSTED: Final = "socket.accept() out of system resource"


def raise_file_limit() -> int | None:
    """Raise this process's soft limit of open files to its hard limit (where it can);
    the soft limit now, ``None`` where there is none."""
    try:
        import resource
    except ImportError:  # not POSIX: no limit to raise
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    # An unlimited hard limit still stops at the kernel's nr_open (2**20 by default).
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if target > soft:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def plan_connections(max_connections: int, file_limit: int | None) -> tuple[int, int]:
    """The listen backlog and the cap on open connections for a soft limit of
    ``file_limit`` open files.

    Below the limit there must be room for the cap, for what one wake-up of the accept
    loop takes before any connection is closed (the backlog, counted four times: the
    accepted socket lives through its transport, ``connection_made`` and the close's
    callback before its descriptor is released, while each wake-up accepts more), and
    for the process's own files.
    """
    if file_limit is None:
        return BACKLOG, max_connections
    backlog = max(8, min(BACKLOG, file_limit // 16))
    return backlog, min(max_connections, max(8, file_limit - 4 * backlog - RESERVE))


def bounded_protocol(
    cap: int, header_timeout: float, send_timeout: float
) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a header timeout, a send timeout and a cap of ``cap``
    open connections (the module's docstring says why uvicorn's own settings do not do
    it)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    #: The connections waiting for a request (none in progress), the longest-waiting
    #: first, each with the timer that closes it.
    waiting: dict[H11Protocol, asyncio.TimerHandle] = {}
    #: The connections whose client reads nothing of an answer, each with the timer that
    #: drops it.
    stalled: dict[H11Protocol, asyncio.TimerHandle] = {}

    def idle(connection: H11Protocol) -> bool:
        return connection.cycle is None or connection.cycle.response_complete

    def await_request(connection: H11Protocol) -> None:
        stop_waiting(connection)
        waiting[connection] = connection.loop.call_later(header_timeout, expire, connection)

    def stop_waiting(connection: H11Protocol) -> None:
        timer = waiting.pop(connection, None)
        if timer is not None:
            timer.cancel()

    def drop(connection: H11Protocol) -> None:
        # close() waits for the buffer to be sent, for ever if the client reads nothing.
        transport = connection.transport
        if transport.get_write_buffer_size():
            transport.abort()
        else:
            transport.close()

    def expire(connection: H11Protocol) -> None:
        waiting.pop(connection, None)
        if idle(connection):
            drop(connection)

    def make_room() -> bool:
        while waiting:
            oldest = next(iter(waiting))
            stop_waiting(oldest)
            transport = oldest.transport
            if transport.is_closing() and not transport.get_write_buffer_size():
                continue  # already on its way out (keep-alive, the peer)
            drop(oldest)
            log.warning("closed idle connections for new ones: %d are open, the most", cap)
            return True
        return False

    def stop_stalling(connection: H11Protocol) -> None:
        timer = stalled.pop(connection, None)
        if timer is not None:
            timer.cancel()

    class BoundedH11Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > cap and not make_room():
                log.warning("refused connections: %d are open, each with a request", cap)
                self.transport.close()
                return
            await_request(self)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if not idle(self):  # its headers are in: the body has a timeout of its own
                stop_waiting(self)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if idle(self):  # closing too: its answers may wait for a client that reads none
                await_request(self)

        def pause_writing(self) -> None:
            super().pause_writing()
            stop_stalling(self)
            stalled[self] = self.loop.call_later(send_timeout, self.transport.abort)

        def resume_writing(self) -> None:
            stop_stalling(self)
            super().resume_writing()

        def connection_lost(self, exc: Exception | None) -> None:
            stop_waiting(self)
            stop_stalling(self)
            super().connection_lost(exc)

    return BoundedH11Protocol


class RepeatLimit(logging.Filter):
    """Lets each line through at most once per ``interval`` seconds; the next one after
    it says how many were held back. Lines are told apart by their logger and first line
    of text; past :attr:`KEYS` of them at once, the rest share one."""

    KEYS: Final = 256

    def __init__(
        self, interval: float = LOG_INTERVAL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self._interval, self._clock = interval, clock
        self._last: dict[tuple[str, str], tuple[float, int]] = {}  # when written, held since
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        key = (record.name, text.partition("\n")[0])
        now = self._clock()
        with self._lock:
            if key not in self._last and len(self._last) >= self.KEYS:
                self._last = {
                    seen: last
                    for seen, last in self._last.items()
                    if now - last[0] < self._interval
                }
                if len(self._last) >= self.KEYS:
                    key = (record.name, "")
            written, held = self._last.get(key, (-self._interval, 0))
            if now - written < self._interval:
                self._last[key] = (written, held + 1)
                return False
            self._last[key] = (now, 0)
        if held:
            first, newline, rest = text.partition("\n")
            record.msg = f"{first} ({held} more like it held back){newline}{rest}"
            record.args = None
        return True


def limit_repeats(interval: float = LOG_INTERVAL_S) -> None:
    """Hold back repeated lines of :data:`LIMITED_LOGGERS` (one filter for them all)."""
    limit = RepeatLimit(interval)
    for name in LIMITED_LOGGERS:
        logging.getLogger(name).addFilter(limit)


def serve(app: Starlette, host: str, port: int, limits: HttpLimits) -> None:
    """Serve ``app`` at ``host:port`` with uvicorn on asyncio's own loop (the loop whose
    accept behaviour the limits are planned for), until interrupted."""
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    file_limit = raise_file_limit()
    backlog, cap = plan_connections(limits.max_connections, file_limit)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=bounded_protocol(cap, limits.header_timeout, limits.body_timeout),
        backlog=backlog,
        timeout_keep_alive=limits.keep_alive,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
    limit_repeats()  # after the Config, which sets uvicorn's loggers up
    if cap < limits.max_connections:
        log.warning(
            "at most %d connections at once: the limit of open files is %s", cap, file_limit
        )
    server = uvicorn.Server(config)
    with contextlib.suppress(KeyboardInterrupt):  # as uvicorn.run: Ctrl-C ends the server
        asyncio.run(_serve(server))
    if not server.started:  # uvicorn has said why, and exits so, as uvicorn.run does
        sys.exit(STARTUP_FAILURE)


async def _serve(server: uvicorn.Server) -> None:
    asyncio.get_running_loop().set_exception_handler(_loop_error)
    await server.serve()


def _loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's errors; one that ``accept()`` had no descriptor left is one line."""
    if context.get("message") == _ACCEPT_EXHAUSTED:
        log.error("refused connections: no file descriptor left (%s)", context.get("exception"))
        return
    loop.default_exception_handler(context)
