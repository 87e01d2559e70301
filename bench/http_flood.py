"""``engram-mcp --http`` under a flood of idle connections from a local process.

usage: .venv/bin/python bench/http_flood.py [--connections 1100] [--calls 5] [--churn-s 6]
           [--src DIR] [--name http_flood]

The server runs as a process with its soft and hard limits of open files set (1,024 and
1,024; then 1,024 and 4,096, which it may raise to); the bench opens ``--connections``
connections that never send a byte and waits until each has connected. Then, twice:
``--calls`` valid ``tools/list`` calls with a host-issued token while the flood is held
(``held``), and the same while a thread reopens every connection the server closes
(``churning``, for ``--churn-s`` seconds). Measured: how long the flood took to connect,
each call's time (or that it was not served within 10 s), the server's descriptors and
resident memory (peak, sampled every 10 ms, and before the flood), and its log (bytes,
lines). ``--src DIR`` runs the server from another source tree (``python -m engram.mcp``
with ``PYTHONPATH=DIR``: an older commit's ``src`` in a worktree, for the figures before).
Figures go to bench/results.json (``<name>_<soft>_<hard>``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record

from engram.host.profile import load_profile
from engram.host.tokens import issue_token
from engram.testing import MODERN_META, host_profile
from engram.testing.clients import server_command
from engram.testing.http import free_port

#: Sets the file limits, then becomes the server.
LIMITED = (
    "import os, resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, "
    "(int(sys.argv[1]), int(sys.argv[2]))); os.execv(sys.argv[3], sys.argv[3:])"
)
CALL_TIMEOUT_S = 10.0
#: Connections opened at once: below the smallest listen queue the server plans (64).
BATCH = 32


class Flooded:
    """The server process, its token, and what it uses (sampled in a thread)."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, token: str, log: Path):
        self.process, self.port, self.token, self.log = process, port, token, log
        self.peak_fds = self.peak_rss_kib = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)

    def usage(self) -> tuple[int, int]:
        """The server's open descriptors and resident memory (KiB) now."""
        fds = len(os.listdir(f"/proc/{self.process.pid}/fd"))
        status = Path(f"/proc/{self.process.pid}/status").read_text().splitlines()
        rss = next(line for line in status if line.startswith("VmRSS:")).split()[1]
        return fds, int(rss)

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            try:
                fds, rss = self.usage()
            except (OSError, StopIteration):
                continue
            self.peak_fds, self.peak_rss_kib = max(self.peak_fds, fds), max(self.peak_rss_kib, rss)

    def start_sampling(self) -> None:
        self._sampler.start()

    def stop_sampling(self) -> None:
        self._stop.set()
        self._sampler.join(timeout=5)

    def call(self) -> float | None:
        """One valid 2026-07-28 ``tools/list``: its milliseconds, ``None`` if not served."""
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Authorization": f"Bearer {self.token}",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/list",
        }
        started = time.monotonic()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=CALL_TIMEOUT_S)
        try:
            connection.request("POST", "/mcp", json.dumps(body), headers)
            answer = connection.getresponse()
            answer.read()
            served = answer.status == 200
        except OSError:
            served = False
        finally:
            connection.close()
        return round((time.monotonic() - started) * 1000, 1) if served else None


@contextmanager
def flooded_server(directory: Path, files: tuple[int, int], src: str | None) -> Iterator[Flooded]:
    profile = host_profile(directory / "host")
    port = free_port()
    command = [*server_command(), "--http", f"127.0.0.1:{port}", "--host-profile", str(profile)]
    env = dict(os.environ)
    if src is not None:
        command = [sys.executable, "-m", "engram.mcp", *command[1:]]
        env["PYTHONPATH"] = src
    log = directory / "stderr.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-c", LIMITED, *map(str, files), *command],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=env,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("engram-mcp --http did not start") from None
                time.sleep(0.05)
        yield Flooded(process, port, issue_token(load_profile(profile), int(time.time())), log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def connect(port: int, count: int, stack: ExitStack) -> tuple[list[socket.socket], float]:
    """``count`` connections that never send a byte, opened :data:`BATCH` at a time (each
    batch connected before the next: more at once would overflow the listen queue, and
    the kernel would drop some before the server sees them); the seconds it took."""
    selector = stack.enter_context(selectors.DefaultSelector())
    sockets: list[socket.socket] = []
    stack.callback(close_all, sockets)  # those churn puts in, too
    started = time.monotonic()
    while len(sockets) < count and time.monotonic() - started < 30:
        for _ in range(min(BATCH, count - len(sockets))):
            sock = socket.socket()
            sockets.append(sock)
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
            selector.register(sock, selectors.EVENT_WRITE)
        while selector.get_map() and time.monotonic() - started < 30:
            for key, _ in selector.select(timeout=0.5):
                selector.unregister(key.fileobj)
    return sockets, round(time.monotonic() - started, 2)


def close_all(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def churn(port: int, sockets: list[socket.socket], seconds: float) -> int:
    """Reopen every connection the server closed, for ``seconds``; how many were."""
    reopened, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        for index, sock in enumerate(sockets):
            try:
                if sock.recv(1) != b"":
                    continue
            except BlockingIOError:
                continue
            except OSError:
                pass
            sock.close()
            sockets[index] = fresh = socket.socket()
            fresh.setblocking(False)
            fresh.connect_ex(("127.0.0.1", port))
            reopened += 1
    return reopened


def run(files: tuple[int, int], args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        with flooded_server(Path(tmp), files, args.src) as server:
            quiet = server.call()
            fds, rss = server.usage()
            server.start_sampling()
            with ExitStack() as stack:
                sockets, connect_s = connect(server.port, args.connections, stack)
                held = [server.call() for _ in range(args.calls)]
                reopened: list[int] = []
                thread = threading.Thread(
                    target=lambda: reopened.append(churn(server.port, sockets, args.churn_s))
                )
                thread.start()
                churning = [server.call() for _ in range(args.calls)]
                thread.join()
            server.stop_sampling()
        log = server.log.read_bytes()  # the server has stopped: its whole log
    return {
        "connections": args.connections,
        "soft_hard_file_limit": list(files),
        "connected_in_s": connect_s,
        "call_before_flood_ms": quiet,
        "calls_held_ms": held,
        "calls_churning_ms": churning,
        "reopened_while_churning": reopened[0] if reopened else 0,
        "server_fds": {"before": fds, "peak": server.peak_fds},
        "server_rss_kib": {"before": rss, "peak": server.peak_rss_kib},
        "log_bytes": len(log),
        "log_lines": log.count(b"\n"),
        "src": args.src or os.environ.get("PYTHONPATH") or "installed",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1100)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--churn-s", type=float, default=6.0)
    parser.add_argument("--src", default=None)
    parser.add_argument("--name", default="http_flood")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, args.connections + 512), hard))
    for files in [(1024, 1024), (1024, 4096)]:
        record(f"{args.name}_{files[0]}_{files[1]}", run(files, args))


if __name__ == "__main__":
    main()
