"""Shared fixtures: real ``engram-mcp`` subprocesses and their raw lines."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.demo.client import MODERN_META, StdioClient, server_command

__all__ = ["MODERN_META"]

StartServer = Callable[..., StdioClient]


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    """Start ``engram-mcp`` (or another command) as a subprocess; all are closed after."""
    clients: list[StdioClient] = []

    def start(*args: str, cwd: Path | None = None, **kwargs: Any) -> StdioClient:
        client = StdioClient(args, cwd=cwd or tmp_path, timeout=20.0, **kwargs)
        clients.append(client)
        return client

    yield start
    for client in clients:
        if client.process.poll() is None:
            client.process.kill()
            client.process.wait(timeout=10)


@pytest.fixture
def server(start_server: StartServer) -> StdioClient:
    """One ``engram-mcp`` in an empty directory."""
    return start_server()


def run_raw(lines: list[bytes], *args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Feed whole lines to a fresh server, close stdin, and return what it wrote, raw."""
    return subprocess.run(
        [*server_command(), *args],
        input=b"".join(line + b"\n" for line in lines),
        capture_output=True,
        cwd=cwd,
        timeout=30,
        check=False,
    )


def run_lines(lines: list[bytes], *args: str, cwd: Path) -> tuple[list[dict[str, Any]], str, int]:
    """Feed whole lines to a fresh server, close stdin, return (messages, stderr, status)."""
    process = run_raw(lines, *args, cwd=cwd)
    messages = [json.loads(line) for line in process.stdout.splitlines()]
    return messages, process.stderr.decode(), process.returncode
