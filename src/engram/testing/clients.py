"""Line-level MCP clients: ``engram-mcp`` in this process, or as a real subprocess.

Both speak raw newline-delimited JSON-RPC, so a test (or the demo) sees exactly
what travels on the wire in either protocol era, and both have the same verbs:
:meth:`~LineClient.request`, :meth:`~LineClient.notify`, :meth:`~LineClient.send`,
:meth:`~LineClient.receive`, :meth:`~LineClient.close` and :attr:`~LineClient.stderr`.

- :class:`InProcessClient` serves :func:`engram.mcp.main.run` on a thread of this
  process over a pair of OS pipes: the same bytes, framing, reader loop, workers and
  dispatcher as ``engram-mcp``, without a Python start-up per test.
- :class:`StdioClient` spawns the installed ``engram-mcp`` (or another command): for
  what only a real process shows (start-up, exit status, signals, stdout hygiene).

Every wait is bounded by the client's ``timeout``.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import logging
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO, Protocol, Self, TextIO, cast

__all__ = [
    "MODERN_META",
    "InProcessClient",
    "LineClient",
    "Serve",
    "Served",
    "StartServer",
    "StdioClient",
    "Trace",
    "serve_lines",
    "server_command",
    "start_in_process",
]

#: The ``_meta`` envelope of a 2026-07-28 request from a client with no capabilities.
MODERN_META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "engram-demo", "version": "1"},
}

ServerRequestHandler = Callable[[dict[str, Any]], dict[str, Any]]
Trace = Callable[[str, dict[str, Any] | bytes], None]
#: A whole server over a pair of streams, as :func:`engram.mcp.main.run`:
#: ``(argv, stdin, stdout, stderr, environ, cwd) -> exit status``.
Serve = Callable[[Sequence[str], BinaryIO, BinaryIO, TextIO, Mapping[str, str], Path], int]


def server_command() -> list[str]:
    """The installed ``engram-mcp`` next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).with_name("engram-mcp")
    if script.exists():
        return [str(script)]
    found = shutil.which("engram-mcp")
    return [found] if found else [sys.executable, "-m", "engram.mcp"]


class LineClient:
    """Newline-delimited JSON-RPC over a server's input and output streams.

    A subclass starts the server, hands its streams to :meth:`_attach`, says in
    :meth:`_wait` how the server ends and in :meth:`_kill` how it is made to.
    """

    timeout: float

    def __init__(self, *, timeout: float, trace: Trace | None) -> None:
        self.timeout = timeout
        self._trace = trace
        self._ids = itertools.count(1)
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._input: IO[bytes] | None = None
        #: Each stream the client reads, with the thread reading it to its end.
        self._readers: list[tuple[IO[bytes], threading.Thread]] = []
        self._status: int | None = None

    def _attach(self, server_input: IO[bytes], server_output: IO[bytes]) -> None:
        self._input = server_input
        self._read_in_background(server_output, self._lines.put, end=lambda: self._lines.put(None))

    def _read_in_background(
        self, stream: IO[bytes], take: Callable[[bytes], None], end: Callable[[], None]
    ) -> None:
        def pump() -> None:
            for line in stream:
                take(line)
            end()

        reader = threading.Thread(target=pump, name="engram-client-reader", daemon=True)
        self._readers.append((stream, reader))
        reader.start()

    @property
    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        raise NotImplementedError

    def send(self, message: dict[str, Any] | bytes) -> None:
        """Write one line (a message, or raw bytes exactly as given)."""
        assert self._input is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        if self._trace is not None:
            self._trace("->", message)
        self._input.write(data + b"\n")
        self._input.flush()

    def receive(self) -> dict[str, Any]:
        """The next message from the server."""
        line = self._lines.get(timeout=self.timeout)
        if line is None:
            self._lines.put(None)  # every later receive sees the end too
            raise EOFError("engram-mcp closed its output")
        message: dict[str, Any] = json.loads(line)
        if self._trace is not None:
            self._trace("<-", message)
        return message

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        on_request: ServerRequestHandler | None = None,
    ) -> dict[str, Any]:
        """Send a request and return its response, answering server requests meanwhile."""
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = self.receive()
            if "method" in reply and "id" in reply and on_request is not None:
                self.send({"jsonrpc": "2.0", "id": reply["id"], "result": on_request(reply)})
            elif reply.get("id") == request_id:
                return reply

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def close_input(self) -> None:
        """End the server's input (as a client that hangs up does)."""
        if self._input is not None and not self._input.closed:
            with contextlib.suppress(BrokenPipeError):  # the server ended without reading
                self._input.close()

    def close(self) -> int:
        """End the server's input, wait for it to finish; returns its exit status.

        Closing twice returns the same status.
        """
        if self._status is None:
            self.close_input()
            self._status = self._wait()
            self._release()
        return self._status

    def stop(self) -> None:
        """Make sure the server is gone and everything the client holds is released
        (after a test, whatever state it left): close as :meth:`close` does, and kill
        the server only if it has not finished within the timeout."""
        if self._status is not None:
            return
        self.close_input()
        try:
            self._status = self._wait()
        except TimeoutError:
            self._status = self._kill()
        self._release()

    def _release(self) -> None:
        """Close each stream the client reads once its reader has reached the end (a
        stream is never closed under a reader still reading it)."""
        for stream, reader in self._readers:
            reader.join(self.timeout)
            if not reader.is_alive():
                stream.close()

    def _wait(self) -> int:
        """Wait for the server to finish; its status (``TimeoutError`` past the timeout)."""
        raise NotImplementedError

    def _kill(self) -> int:
        """End the server now; its status."""
        raise NotImplementedError

    @property
    def running(self) -> bool:
        """Whether the server is still serving."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class StdioClient(LineClient):
    """Spawns ``engram-mcp`` (or ``command``) and speaks to it on its stdin and stdout."""

    def __init__(
        self,
        args: Sequence[str] = (),
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        trace: Trace | None = None,
        command: Sequence[str] | None = None,
    ) -> None:
        super().__init__(timeout=timeout, trace=trace)
        self.process = subprocess.Popen(
            [*(command or server_command()), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, **(env or {})},
        )
        # Popen makes all three pipes when asked to (narrowing for the type checker).
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        self._stderr = bytearray()
        self._attach(self.process.stdin, self.process.stdout)
        self._read_in_background(self.process.stderr, self._stderr.extend, end=lambda: None)

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def _wait(self) -> int:
        try:
            return self.process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired as expired:
            raise TimeoutError(f"engram-mcp did not exit within {self.timeout} s") from expired

    def _kill(self) -> int:
        self.process.kill()
        return self.process.wait(timeout=self.timeout)


def _log_handler(stderr: io.StringIO, level: int) -> logging.Handler:
    from engram.mcp.main import LOG_FORMAT

    handler = logging.StreamHandler(stderr)
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    return handler


class InProcessClient(LineClient):
    """``engram-mcp`` served by :func:`engram.mcp.main.run` on a thread of this process.

    ``args``, ``cwd`` and ``env`` mean what they mean to the command (``env`` is added
    to this process's environment, which is not changed). While the client is open,
    the records of the ``engram`` loggers at ``ENGRAM_LOG_LEVEL`` (WARNING) and above
    are written to its :attr:`stderr` as the command writes them: those of every
    server in this process, since loggers are shared (the ``engram`` logger's level is
    lowered to that level meanwhile). The server's input and output are OS pipes, so a
    write blocks when the server is not reading, as on stdio. ``serve`` composes
    another server the same way (a test's own tool table).
    """

    def __init__(
        self,
        args: Sequence[str] = (),
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        trace: Trace | None = None,
        serve: Serve | None = None,
    ) -> None:
        from engram.mcp.main import run

        super().__init__(timeout=timeout, trace=trace)
        composed = run if serve is None else serve
        environ = {**os.environ, **(env or {})}
        to_server, from_client = _pipe()
        to_client, from_server = _pipe()
        self._stderr = io.StringIO()
        self._ended: int | None = None
        level = logging.getLevelName(environ.get("ENGRAM_LOG_LEVEL", "WARNING").upper())
        self._level = level if isinstance(level, int) else logging.WARNING
        self._logger = logging.getLogger("engram")
        self._previous_level: int | None = None
        if self._logger.getEffectiveLevel() > self._level:
            self._previous_level = self._logger.level
            self._logger.setLevel(self._level)
        self._log = _log_handler(self._stderr, self._level)
        self._logger.addHandler(self._log)

        def serving() -> None:
            try:
                self._ended = composed(
                    list(args), to_server, from_server, self._stderr, environ, cwd or Path.cwd()
                )
            finally:
                from_server.close()  # the client's reader sees end of output
                to_server.close()

        self._server = threading.Thread(target=serving, name="engram-mcp-in-process", daemon=True)
        self._server.start()
        self._attach(from_client, to_client)

    @property
    def stderr(self) -> str:
        return self._stderr.getvalue()

    @property
    def running(self) -> bool:
        return self._server.is_alive()

    def _wait(self) -> int:
        self._server.join(self.timeout)
        if self._server.is_alive():
            raise TimeoutError(f"engram-mcp did not finish within {self.timeout} s")
        if self._ended is None:
            raise RuntimeError("engram-mcp ended by an exception (see the test's output)")
        return self._ended

    def _kill(self) -> int:
        # A thread cannot be killed: the server was told its input ended and is left to
        # finish on its own (a daemon thread, gone with the process).
        return -1

    def _release(self) -> None:
        super()._release()
        self._logger.removeHandler(self._log)
        if self._previous_level is not None:
            self._logger.setLevel(self._previous_level)


def _pipe() -> tuple[BinaryIO, BinaryIO]:
    """An OS pipe as (read end, write end) binary files."""
    read_fd, write_fd = os.pipe()
    return cast(BinaryIO, os.fdopen(read_fd, "rb")), cast(BinaryIO, os.fdopen(write_fd, "wb"))


class StartServer(Protocol):
    """Starts a server the way a test asks: ``start(*args, cwd=..., env=...)``."""

    def __call__(
        self, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
    ) -> LineClient: ...


def start_in_process(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> InProcessClient:
    """:class:`InProcessClient` with the arguments spread, as a :class:`StartServer`."""
    return InProcessClient(args, cwd=cwd, env=env)


@dataclass(frozen=True)
class Served:
    """What one whole conversation with a server left: its output, stderr and status."""

    stdout: bytes
    stderr: str
    status: int

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Each line of output, parsed."""
        return [json.loads(line) for line in self.stdout.splitlines()]


def serve_lines(
    lines: Sequence[bytes],
    *args: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    in_process: bool = True,
    timeout: float = 30.0,
) -> Served:
    """Feed whole lines to a fresh server, end its input, and return all it wrote.

    In this process by default; ``in_process=False`` runs the real ``engram-mcp``.
    """
    data = b"".join(line + b"\n" for line in lines)
    if not in_process:
        done = subprocess.run(
            [*server_command(), *args],
            input=data,
            capture_output=True,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            timeout=timeout,
            check=False,
        )
        return Served(done.stdout, done.stderr.decode("utf-8", "replace"), done.returncode)
    client = InProcessClient(args, cwd=cwd, env=env, timeout=timeout)
    try:
        # The client's reader keeps whatever the server writes, so writing every line
        # before reading any cannot deadlock.
        assert client._input is not None
        with contextlib.suppress(BrokenPipeError):  # a server that reads nothing
            client._input.write(data)
        status = client.close()
    finally:
        client.stop()
    output = []
    while (line := client._lines.get_nowait()) is not None:
        output.append(line)
    return Served(b"".join(output), client.stderr, status)
