"""A temporary home and workspace, and a :class:`HostEnv` bound to them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engram.hosts.command import HostEnv

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def env(home: Path, workspace: Path) -> HostEnv:
    """No engram on PATH: entries use the pinned absolute form of this interpreter."""
    return HostEnv.from_environ(workspace, {"HOME": str(home), "PATH": "/nonexistent"})


def install_fixture(name: str, destination: Path) -> bytes:
    """Copy ``fixtures/<name>`` to ``destination``; returns its bytes."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / name, destination)
    return destination.read_bytes()
