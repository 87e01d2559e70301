"""``engram-mcp --http`` as a real process on a free loopback port, for tests, benchmarks
and hosts that check their integration: started, waited for, stopped."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

from engram.testing.clients import server_command

__all__ = ["HttpServer", "free_port"]


def free_port() -> int:
    """A loopback port nothing listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class HttpServer:
    """``engram-mcp --http 127.0.0.1:<port> --host-profile <profile>``, listening once
    entered; its stdout must stay empty (only HTTP answers leave the server)."""

    def __init__(self, profile: Path, startup_s: float = 30.0) -> None:
        self.profile = profile
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.host = f"127.0.0.1:{self.port}"
        self._startup_s = startup_s
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> HttpServer:
        command = [*server_command(), "--http", self.host, "--host-profile", str(self.profile)]
        self._process = process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE
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
