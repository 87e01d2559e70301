"""``engram-mcp --http`` as a real process on a free loopback port, for tests, benchmarks
and hosts that check their integration: started, waited for, stopped. And
:class:`TokenGateway`, a loopback gateway that adds a host-issued token to each request,
for clients that cannot send one (the official conformance runner)."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType

from engram.testing.clients import server_command

__all__ = ["HttpServer", "TokenGateway", "free_port"]


def free_port() -> int:
    """A loopback port nothing listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class HttpServer:
    """``engram-mcp --http 127.0.0.1:<port> --host-profile <profile>``, listening once
    entered; its stdout must stay empty (only HTTP answers leave the server)."""

    def __init__(
        self, profile: Path, startup_s: float = 30.0, env: Mapping[str, str] | None = None
    ) -> None:
        self.profile = profile
        self._env = {**os.environ, **(env or {})}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.host = f"127.0.0.1:{self.port}"
        self._startup_s = startup_s
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> HttpServer:
        command = [*server_command(), "--http", self.host, "--host-profile", str(self.profile)]
        self._process = process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self._env
        )
        deadline = time.monotonic() + self._startup_s
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    self.__exit__(None, None, None)
                    raise RuntimeError("engram-mcp --http did not start") from None
                time.sleep(0.05)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._process is None:
            return
        self._process.terminate()
        self.stdout, self.stderr = self._process.communicate(timeout=30)
        self._process = None


#: Headers that belong to one hop, never relayed.
_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"}


class TokenGateway:
    """A loopback gateway in front of ``engram-mcp --http``: relays every request as it
    came (``Host`` and ``Origin`` included, so the server still judges them) with
    ``Authorization: Bearer <token>`` added, as a platform's gateway would."""

    def __init__(self, backend_port: int, token: str, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.host = f"127.0.0.1:{self.port}"

        class Relay(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def relay(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                headers["Authorization"] = f"Bearer {token}"
                upstream = http.client.HTTPConnection("127.0.0.1", backend_port, timeout=60)
                upstream.request(self.command, self.path, body, headers)
                answer = upstream.getresponse()
                data = answer.read()
                upstream.close()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in _HOP and name.lower() != "content-length":
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = relay

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Relay)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> TokenGateway:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
