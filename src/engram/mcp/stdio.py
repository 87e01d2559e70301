"""The stdio transport: newline-delimited JSON-RPC on stdin and stdout.

The main thread reads frames; requests are handled by a worker so that the reader
keeps reading while a tool waits for the human (a legacy ``elicitation/create`` is
answered on stdin too). Exactly one worker is runnable at a time, so answers come
in request order; a worker that blocks on the client is compensated by a fresh
worker for as long as it waits. Standard output carries only protocol messages:
before serving, file descriptor 1 is moved aside and pointed at stderr, so a stray
``print`` anywhere in the process cannot corrupt the stream.
"""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from engram.mcp.connection import Connection
from engram.mcp.dispatcher import Dispatcher
from engram.protocol.framing import read_frame
from engram.protocol.jsonrpc import Batch, Message, Response, dumps

__all__ = ["LineWriter", "Workers", "claim_stdout", "serve"]

Job = Callable[[], None]


class LineWriter:
    """Writes one message per line and flushes; safe from several threads."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.broken = False

    def __call__(self, message: dict[str, Any]) -> None:
        """Serialize and write one message (raises what :func:`dumps` raises)."""
        self.write(dumps(message))

    def write(self, line: bytes) -> None:
        """Write one serialized message and its newline."""
        with self._lock:
            if self.broken:
                return
            try:
                self._stream.write(line + b"\n")
                self._stream.flush()
            except (BrokenPipeError, ValueError, OSError):
                self.broken = True  # the client went away; nothing left to tell it


class Workers:
    """A queue of jobs run in order by one runnable worker, compensated when it blocks."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._blocked = 0
        self._stopping = False
        self._spawn()

    def submit(self, job: Job) -> None:
        self._jobs.put(job)

    @contextlib.contextmanager
    def blocking(self) -> Iterator[None]:
        """Mark the calling worker as waiting on the client for the duration."""
        with self._lock:
            self._blocked += 1
            if len(self._threads) - self._blocked < 1:
                self._spawn()
        try:
            yield
        finally:
            with self._lock:
                self._blocked -= 1

    def stop(self, timeout: float = 10.0) -> None:
        """Run what is queued, then stop every worker."""
        with self._lock:
            self._stopping = True
            count = len(self._threads)
        for _ in range(count):
            self._jobs.put(None)
        for thread in list(self._threads):
            thread.join(timeout)

    def _spawn(self) -> None:
        thread = threading.Thread(target=self._run, name="engram-worker", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job()
            with self._lock:
                surplus = len(self._threads) - self._blocked > 1 and not self._stopping
                if surplus:
                    self._threads.remove(threading.current_thread())
                    return


def claim_stdout() -> BinaryIO:
    """Take file descriptor 1 for the protocol and send everything else to stderr."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol_fd, "wb")


def serve(dispatcher: Dispatcher, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Serve until end of input; return once queued requests are answered."""
    writer = LineWriter(stdout)
    workers = Workers()
    connection = Connection(writer, workers.blocking)

    def answer(message: Message | Batch) -> Job:
        # The dispatcher's boundary turns any failure into an answer, so a job never
        # raises and the worker that runs it lives on.
        def job() -> None:
            line = dispatcher.handle(message, connection)
            if line is not None:
                writer.write(line)

        return job

    while (frame := read_frame(stdin)) is not None:
        item = dispatcher.read(frame)
        if isinstance(item, bytes):
            # Queued like answers, so that an error never overtakes an earlier request.
            workers.submit(functools.partial(writer.write, item))
        elif isinstance(item, Response):
            dispatcher.handle(item, connection)
        else:
            workers.submit(answer(item))
    connection.close()
    workers.stop()
    # Shutting down is the server tearing down the listen streams still open: each
    # gets its graceful close (an empty result), written after every queued answer.
    for line in dispatcher.close_subscriptions(connection):
        writer.write(line)
