"""A temporary home and workspace for the command line, and a runner bound to them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engram.cli.main import cli

Run = Callable[..., Result]
#: The directory of the installed ``engram`` and ``engram-mcp`` scripts.
SCRIPTS = Path(sys.executable).parent


@pytest.fixture
def workspace(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project directory, made the current one (as a user who cd'd into it)."""
    monkeypatch.chdir(workspace)
    return workspace


@pytest.fixture
def run(home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """Invoke ``engram`` with HOME in the temporary home; engram-mcp is not on PATH."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    return invoke
