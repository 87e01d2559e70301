"""docs/cli.md is the current ``--help`` of every command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "cli_reference.py"


def test_the_cli_reference_matches_the_help_of_every_command() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], timeout=60, check=False)
    assert done.returncode == 0, "run: .venv/bin/python scripts/cli_reference.py"
