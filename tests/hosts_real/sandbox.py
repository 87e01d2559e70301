"""A temporary home and git project where the real host CLIs and engram run.

Every program runs with an environment built from nothing but the locale: the home,
its XDG folders, ``PATH`` and the hosts' switches against updates and telemetry. So no
setting, credential or config folder of the developer's (``CLAUDE_CONFIG_DIR``,
``CODEX_HOME``, an API key) reaches a host, and nothing a host writes leaves the home.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
#: Where scripts/setup-hosts writes the folder holding the host CLIs' commands.
HOSTS_FILE = REPOSITORY / ".venv" / ".engram-hosts"
HOST_COMMANDS = ("claude", "gemini", "codex", "opencode")
#: The folder of this interpreter's ``engram`` and ``engram-mcp`` (the installed wheel).
VENV_BIN = Path(sys.executable).parent

#: The hosts' own switches: no self-update, no telemetry, no model list fetched.
QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "GEMINI_CLI_NO_RELAUNCH": "true",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
}
_LOCALE = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")


def host_commands() -> Path:
    """The folder scripts/setup-hosts installed the host CLIs into; fails, never skips,
    when they are not there."""
    hint = "the host CLIs are not installed: run scripts/setup-hosts (scripts/test runs it)"
    if not HOSTS_FILE.is_file():
        pytest.fail(f"{hint}; {HOSTS_FILE} is missing", pytrace=False)
    folder = Path(HOSTS_FILE.read_text().strip())
    missing = [name for name in HOST_COMMANDS if not (folder / name).exists()]
    if missing:
        pytest.fail(f"{hint}; {folder} lacks {', '.join(missing)}", pytrace=False)
    return folder


@dataclass(frozen=True)
class Sandbox:
    """A temporary home, a git project in it where ``engram init`` ran, and the folder
    of the host CLIs' commands (``clis``)."""

    home: Path
    project: Path
    clis: Path

    def env(self, *, engram_mcp_on_path: bool = True) -> dict[str, str]:
        """The whole environment of a program run here. Without ``engram_mcp_on_path``
        no folder on ``PATH`` holds an ``engram-mcp``, as for a user whose engram lives
        in a virtual environment they did not activate."""
        inherited = [
            folder
            for folder in os.environ.get("PATH", os.defpath).split(os.pathsep)
            if folder and not (Path(folder) / "engram-mcp").exists()
        ]
        path = [str(VENV_BIN)] if engram_mcp_on_path else []
        return {
            **{name: os.environ[name] for name in _LOCALE if name in os.environ},
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "PATH": os.pathsep.join([*path, str(self.clis), *inherited]),
            "ENGRAM_SEMANTIC": "off",
            "NO_COLOR": "1",
            **QUIET,
        }

    def run(
        self, *argv: str, timeout: float, engram_mcp_on_path: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a program in the project; a non-zero exit fails the test with its output."""
        done = subprocess.run(
            argv,
            cwd=self.project,
            env=self.env(engram_mcp_on_path=engram_mcp_on_path),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}{done.stderr}"
        return done

    def engram(self, *args: str, engram_mcp_on_path: bool = True) -> str:
        """The installed ``engram`` command, run in the project; its output."""
        done = self.run(
            str(VENV_BIN / "engram"), *args, timeout=60, engram_mcp_on_path=engram_mcp_on_path
        )
        return done.stdout

    def write_json(self, path: Path, value: Any) -> None:
        """Write a host's settings file as the host's own dialog would have."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=2) + "\n")
