"""The embedding example in docs/embedding.md runs and shows what it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "embed_memory.py"


def test_the_embedding_example_captures_admits_finds_and_isolates() -> None:
    output = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert output.splitlines() == [
        "capture: committed_pending",
        "admission: accepted",
        "search: [True]",
        "other tenant: NOT_FOUND",
    ]
