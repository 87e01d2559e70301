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
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def run(home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """Invoke ``engram`` with HOME in the temporary home; engram-mcp is not on PATH."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    return invoke
