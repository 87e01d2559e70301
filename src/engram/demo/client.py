"""A small line-level MCP client over a real ``engram-mcp`` subprocess.

It speaks raw JSON-RPC so the demo can show exactly what travels on the wire in
both protocol eras. Every wait is bounded.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["MODERN_META", "StdioClient", "Trace", "server_command"]

MODERN_META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "engram-demo", "version": "1"},
}

ServerRequestHandler = Callable[[dict[str, Any]], dict[str, Any]]
Trace = Callable[[str, dict[str, Any] | bytes], None]


def server_command() -> list[str]:
    """The installed ``engram-mcp`` next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).with_name("engram-mcp")
    if script.exists():
        return [str(script)]
    found = shutil.which("engram-mcp")
    return [found] if found else [sys.executable, "-m", "engram.mcp"]


class StdioClient:
    """Spawns ``engram-mcp`` and exchanges newline-delimited JSON-RPC with it."""

    def __init__(
        self,
        args: Sequence[str] = (),
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 30.0,
        trace: Trace | None = None,
        command: Sequence[str] | None = None,
    ) -> None:
        self.timeout = timeout
        self._trace = trace
        self._ids = itertools.count(1)
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self.process = subprocess.Popen(
            [*(command or server_command()), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, **(env or {})},
        )
        self._stderr = bytearray()
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.extend(line)

    @property
    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        return self._stderr.decode("utf-8", "replace")

    def send(self, message: dict[str, Any] | bytes) -> None:
        """Write one line (a message, or raw bytes exactly as given)."""
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        if self._trace is not None:
            self._trace("->", message)
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        """The next message from the server."""
        line = self._lines.get(timeout=self.timeout)
        if line is None:
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

    def close(self) -> int:
        """Close stdin and wait for the server to exit; returns its status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        status = self.process.wait(timeout=self.timeout)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return status

    def __enter__(self) -> StdioClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.close()
