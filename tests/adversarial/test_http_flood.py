"""A local process without a token tries to stop ``engram-mcp --http`` (issue 26, item 4):
a flood of idle connections at the common limit of 1,024 open files, connections that
never finish their headers, bodies that stall or are cut off. The real server runs as a
process on a loopback port, with the limits an operator would set (short ones here, so
that the suite stays fast); every wait is bounded, every socket closed."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from engram.host.profile import load_profile
from engram.host.tokens import issue_token
from engram.testing import MODERN_META, host_profile
from engram.testing.clients import server_command
from engram.testing.http import free_port

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="file limits of Linux")

FLOOD = 1_100
#: The limits most of these tests run with (seconds): short, so that a stalled client is
#: dealt with quickly.
SHORT = {"ENGRAM_HTTP_HEADER_TIMEOUT_S": "1", "ENGRAM_HTTP_BODY_TIMEOUT_S": "1"}
#: How long past a timeout the server may take to act on it, on a loaded 2-core machine.
SLACK_S = 4.0
MIB = 1 << 20
#: Sets the file limits, then becomes the server (no ``preexec_fn``: the test process
#: has threads).
_LIMITED = "import os, resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, "
_LIMITED += "(int(sys.argv[1]), int(sys.argv[2]))); os.execv(sys.argv[3], sys.argv[3:])"


@dataclass
class Server:
    port: int
    pid: int
    token: str
    log: Path

    def call(self, timeout: float = 30.0) -> tuple[int, dict[str, object]]:
        """A valid 2026-07-28 ``tools/list`` with the host's token: its status and body."""
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request("POST", "/mcp", json.dumps(body), self.headers())
            answer = connection.getresponse()
            return answer.status, json.loads(answer.read())
        finally:
            connection.close()

    def headers(self, length: int | None = None) -> dict[str, str]:
        sent = {
            "Host": f"127.0.0.1:{self.port}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {self.token}",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/list",
        }
        if length is not None:
            sent["Content-Length"] = str(length)
        return sent

    def head(self, length: int) -> bytes:
        """A valid request's line and headers, announcing a body of ``length`` bytes."""
        lines = [f"{name}: {value}" for name, value in self.headers(length).items()]
        return ("\r\n".join(["POST /mcp HTTP/1.1", *lines]) + "\r\n\r\n").encode()


@contextmanager
def serving(
    tmp_path: Path, env: dict[str, str], files: tuple[int, int] | None = None
) -> Iterator[Server]:
    """``engram-mcp --http`` on a free loopback port with ``env`` added and, if given,
    its soft and hard limits of open files; its stderr is the file ``Server.log``."""
    profile = host_profile(tmp_path / "host")
    port = free_port()
    command = [*server_command(), "--http", f"127.0.0.1:{port}", "--host-profile", str(profile)]
    if files is not None:
        command = [sys.executable, "-c", _LIMITED, *map(str, files), *command]
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=stderr, env={**os.environ, **env}
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"engram-mcp --http did not start: {log.read_text()}"
                    ) from None
                time.sleep(0.05)
        token = issue_token(load_profile(profile), int(time.time()))
        yield Server(port, process.pid, token, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def many_files() -> Iterator[None]:
    """This process may hold the flood's sockets (and its own files besides)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = FLOOD + 512
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"the hard limit of open files ({hard}) is below {wanted}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def open_idle(port: int, count: int, stack: ExitStack, within_s: float = 20.0) -> int:
    """Open ``count`` connections that never send a byte, closed with ``stack``; wait
    until each has connected or failed; how many connected."""
    selector = stack.enter_context(selectors.DefaultSelector())
    for _ in range(count):
        sock = stack.enter_context(socket.socket())
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        selector.register(sock, selectors.EVENT_WRITE)
    connected, deadline = 0, time.monotonic() + within_s
    while selector.get_map() and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.5):
            selector.unregister(key.fileobj)
            assert isinstance(key.fileobj, socket.socket)
            connected += key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
    assert not selector.get_map(), f"{len(selector.get_map())} connections still pending"
    return connected


def closed_within(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing ``sock`` within ``seconds``; ``None`` if it
    is still open then."""
    received, deadline = b"", time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            return None
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk
    return None


@pytest.mark.parametrize("hard", [1024, 4096], ids=["hard-limit-1024", "hard-limit-4096"])
def test_a_valid_call_is_served_while_a_local_process_holds_1100_idle_connections(
    tmp_path: Path, many_files: None, hard: int
) -> None:
    with serving(tmp_path, {}, files=(1024, hard)) as server, ExitStack() as flood:
        started = time.monotonic()
        connected = open_idle(server.port, FLOOD, flood)
        flooded_s = time.monotonic() - started

        started = time.monotonic()
        status, body = server.call()
        served_s = time.monotonic() - started

        assert connected == FLOOD, f"{connected} of {FLOOD} connected in {flooded_s:.1f} s"
        assert status == 200
        assert isinstance(body["result"], dict)
        assert len(body["result"]["tools"]) == 6
        assert served_s < 5.0, f"served in {served_s:.1f} s"
        # The server raised its soft limit as far as its hard limit lets it.
        assert resource.prlimit(server.pid, resource.RLIMIT_NOFILE) == (hard, hard)
    log = server.log.read_bytes()
    assert len(log) < MIB
    assert b"Traceback" not in log
    assert b"out of system resource" not in log  # never out of descriptors


@pytest.mark.parametrize(
    "client",
    ["sends nothing", "sends its headers a byte at a time", "trickles a refused body"],
)
def test_a_connection_that_finishes_no_request_is_closed_after_the_header_timeout(
    tmp_path: Path, client: str
) -> None:
    with (
        serving(tmp_path, SHORT) as server,
        socket.create_connection(("127.0.0.1", server.port)) as sock,
    ):
        if client == "sends its headers a byte at a time":
            deadline = time.monotonic() + 1 + SLACK_S
            for byte in server.head(10):  # a byte each 0.1 s: 35 s, were it let
                try:
                    sock.sendall(bytes([byte]))
                except (BrokenPipeError, ConnectionResetError):
                    return  # closed by the server
                assert time.monotonic() < deadline, "still open past the header timeout"
                time.sleep(0.1)  # the attack's own pace, not synchronisation
        elif client == "trickles a refused body":
            sock.sendall(server.head(1000).replace(b"Bearer ", b"Bearer x"))
            answer = b""
            while b"Unauthorized" not in answer:
                chunk = sock.recv(4096)
                assert chunk, "closed before its answer"
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 401 ")
            sock.sendall(b"{")  # uvicorn's keep-alive timer stops at any byte

        assert closed_within(sock, 1 + SLACK_S) is not None


def test_a_body_that_stalls_is_answered_408_within_the_body_timeout(tmp_path: Path) -> None:
    with (
        serving(tmp_path, SHORT) as server,
        socket.create_connection(("127.0.0.1", server.port)) as sock,
    ):
        sock.sendall(server.head(200) + b'{"jsonrpc": "2.0", ')

        answer = closed_within(sock, 1 + SLACK_S)

    assert answer is not None
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert answer.endswith(
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request timeout"}}'
    )


def test_a_body_announced_over_the_message_limit_is_refused_before_it_is_read(
    tmp_path: Path,
) -> None:
    with (
        serving(tmp_path, {}) as server,
        socket.create_connection(("127.0.0.1", server.port)) as sock,
    ):
        sock.sendall(server.head(4 * MIB))  # and no body

        answer = closed_within(sock, SLACK_S)

    assert answer is not None
    assert answer.startswith(b"HTTP/1.1 413 ")


def test_clients_that_leave_mid_body_cost_one_log_line_and_no_traceback(tmp_path: Path) -> None:
    with serving(tmp_path, {}) as server:
        for _ in range(20):
            with socket.create_connection(("127.0.0.1", server.port)) as sock:
                sock.sendall(server.head(200) + b'{"jsonrpc": "2.0", ')
        status, _ = server.call()  # and the server serves on
        assert status == 200
    # The server has stopped: every request it had is done and its log is whole.
    log = server.log.read_text()
    assert "Traceback" not in log
    assert "ClientDisconnect" not in log
    assert [line for line in log.splitlines() if "left" in line] == [
        "engram-mcp: WARNING clients left before sending a whole request body"
    ]


def test_past_the_cap_the_connection_that_waited_longest_is_closed_for_a_new_one(
    tmp_path: Path,
) -> None:
    with serving(tmp_path, {"ENGRAM_HTTP_MAX_CONNECTIONS": "4"}) as server, ExitStack() as idle:
        # The readiness probe's connection, until the server sees it closed, fills a place:
        # with it, the fourth connection below would close the first (a CI flake).
        assert _server_holds_no_connection(server.port, SLACK_S)
        oldest, *others = [
            idle.enter_context(socket.create_connection(("127.0.0.1", server.port)))
            for _ in range(4)
        ]
        assert closed_within(oldest, 0.5) is None  # all four are held

        status, _ = server.call()  # a fifth connection

        assert status == 200
        assert closed_within(oldest, SLACK_S) is not None
        assert [closed_within(sock, 0.2) for sock in others] == [None, None, None]


def test_past_the_cap_a_new_connection_is_closed_when_every_one_is_in_a_request(
    tmp_path: Path,
) -> None:
    with serving(tmp_path, {"ENGRAM_HTTP_MAX_CONNECTIONS": "4"}) as server, ExitStack() as busy:
        for _ in range(4):  # each in a request: its body is being read, and half has come
            sock = busy.enter_context(socket.create_connection(("127.0.0.1", server.port), 10))
            sock.sendall(server.head(200).replace(b"\r\n\r\n", b"\r\nExpect: 100-continue\r\n\r\n"))
            answer = b""
            while b"\r\n\r\n" not in answer:  # the server reads the body: 100 Continue
                chunk = sock.recv(4096)
                assert chunk, "closed before 100 Continue"
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 100 ")
            sock.sendall(b'{"jsonrpc": "2.0", ')

        with socket.create_connection(("127.0.0.1", server.port)) as fifth:
            assert closed_within(fifth, SLACK_S) == b""


def _server_holds_no_connection(server_port: int, within_s: float) -> bool:
    """Whether, within ``within_s``, no process holds a connection accepted on
    ``server_port`` any more (/proc/net/tcp: a socket of that local port with an owner,
    other than the listening one): the readiness probe's close has been seen."""
    local = f":{server_port:04X}"
    deadline = time.monotonic() + within_s
    while True:
        held = [
            fields
            for fields in (
                line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
            )
            if fields[1].endswith(local) and fields[3] != "0A" and fields[9] != "0"
        ]
        if not held:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def _send_queue(server_port: int, client_port: int) -> int:
    """The bytes the server's socket to ``client_port`` holds unsent (/proc/net/tcp);
    -1 once no process holds that socket (gone, or left to the kernel to finish)."""
    wanted = f":{server_port:04X}", f":{client_port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if (fields[1][-5:], fields[2][-5:]) == wanted and fields[9] != "0":
            return int(fields[4].split(":")[0], 16)
    return -1


def _reads_nothing(server: Server, stack: ExitStack, ends_with_close: bool) -> socket.socket:
    """A connection that asks and asks (no token needed) and reads none of the answers,
    until the server's socket holds all it can; then, if ``ends_with_close``, one more
    request that asks the server to close the connection after its answer."""
    sock = stack.enter_context(socket.socket())
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.connect(("127.0.0.1", server.port))
    sock.settimeout(10)
    ask = f"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    client_port, queued = sock.getsockname()[1], -1
    try:
        for _ in range(400):  # 80,000 requests at most: the server's socket is full long before
            sock.sendall(ask * 200)
            time.sleep(0.05)  # let the server answer them
            now = _send_queue(server.port, client_port)
            if now == queued and now > 0:
                break
            queued = now
        else:
            pytest.fail("the server's socket never filled")
        if ends_with_close:
            sock.sendall(ask.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
        else:
            sock.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                for _ in range(1000):  # until the server stops reading: it waits to send
                    sock.send(ask * 200)
    except (ConnectionResetError, BrokenPipeError):
        # On a loaded machine the server may drop the connection (its answers unread for
        # the body timeout) before this loop saw its socket full: what is tested, early.
        assert queued > 0, "the connection was reset before the server held any answer"
    return sock


@pytest.mark.parametrize("ends_with_close", [False, True], ids=["in-an-answer", "closing"])
def test_connections_whose_clients_read_no_answer_are_dropped_and_a_valid_call_is_served(
    tmp_path: Path, ends_with_close: bool
) -> None:
    # Two such connections fill a cap of two as four fill four: filling each server socket
    # takes about 12,000 answers (5 s here), so the test holds the fewest that prove it.
    limits = {**SHORT, "ENGRAM_HTTP_MAX_CONNECTIONS": "2"}
    with serving(tmp_path, limits) as server, ExitStack() as stack:
        held = [_reads_nothing(server, stack, ends_with_close) for _ in range(2)]
        time.sleep(1 + SLACK_S)  # past the timeouts (the attack's own pace)

        status, _ = server.call(timeout=SLACK_S)

        assert status == 200
        assert [_send_queue(server.port, sock.getsockname()[1]) for sock in held] == [-1] * 2
    log = server.log.read_text()
    assert "Traceback" not in log
