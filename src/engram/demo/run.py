"""The demo's running order: each part drives the real ``engram-mcp`` subprocess."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from engram.demo import governed_scene, project_scene, protocol_scene, transcript
from engram.testing.clients import StdioClient

__all__ = ["run_demo"]


def _trace(direction: str, message: dict[str, Any] | bytes) -> None:
    if direction == "->":
        transcript.sent(message)
    elif isinstance(message, dict):
        transcript.received(message)


def run_demo() -> int:
    """Run every part; return the server's exit status (0 when all went well)."""
    with tempfile.TemporaryDirectory(prefix="engram-demo-") as directory:
        workdir = Path(directory)
        with StdioClient(cwd=workdir, trace=_trace) as client:
            protocol_scene.run(client)
            status = client.close()
        transcript.note(f"engram-mcp exited with status {status} at end of input")
        project_scene.run(workdir, _trace)
        governed_scene.run(workdir, _trace)
    return status
