"""A real Git repository for the tests of memories and the files they stand on."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: Git with no user or system configuration, and a fixed author.
GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_COMMITTER_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "ada@example.org",
}


def git(root: Path, *args: str) -> str:
    """Run ``git`` in ``root``; its standard output."""
    done = subprocess.run(
        ["git", *args],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return done.stdout


def write(root: Path, relative: str, text: str) -> Path:
    """Write a file of the repository (as a person would)."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def blob(root: Path, relative: str) -> str:
    """What Git says the blob id of a file is (``git hash-object``)."""
    return git(root, "hash-object", "--no-filters", relative).strip()


def commit_all(root: Path, message: str = "change") -> None:
    git(root, "add", "--all")
    git(root, "commit", "-q", "-m", message)
