"""``engram demo`` runs end to end through the real server and tells the story."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.e2e
def test_demo_runs_every_part_and_exits_zero() -> None:
    engram = Path(sys.executable).with_name("engram")
    done = subprocess.run(
        [str(engram), "demo"], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = [line.strip() for line in done.stdout.splitlines()]
    for expected in (
        "engram-mcp exited with status 0 at end of input",
        "same key, same content: duplicate_exact",
        "get: NOT_FOUND",
        "withdraw: gate_failed",
        "forget: gate_failed",
        "projection_invalidation: complete",
        "|   changed: scripts/deploy",
        "engram_load again: no longer marked",
    ):
        assert expected in lines, expected
    assert any(line.startswith("forget: accepted_current -> tombstoned") for line in lines)
    assert any(line.startswith("| Stale: scripts/deploy changed since") for line in lines)
