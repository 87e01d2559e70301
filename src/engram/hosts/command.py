"""Which command a host runs to start engram, and where things live on this machine.

The command form (mcp-server.txt, "Registration"): ``engram-mcp`` when it is on
``PATH``; otherwise the absolute path of the ``engram-mcp`` script installed next to
the running interpreter (``<venv>/bin/engram-mcp``), pinned to this version by the
``ENGRAM_PINNED_VERSION`` marker in the entry's environment. That absolute path is the
Python equivalent of upstream's ``npx -y --package @…@<version> engram-mcp``: it runs
exactly the installation that wrote it, offline, with no package manager at start-up
(docs/hosts.md, "Command form", says why not ``pipx run`` or ``uvx``). When even
that script is missing (a checkout run with ``python -m engram``), the interpreter
itself is used: ``<python> -m engram.mcp``.

:class:`HostEnv` is the one place that reads ``HOME``, ``XDG_CONFIG_HOME`` and
``PATH``; everything else receives it, so tests run in a temporary home.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from engram import __version__

__all__ = [
    "PIN_VARIABLE",
    "SERVER_SCRIPT",
    "HostEnv",
    "ServerCommand",
    "hook_command",
    "server_command",
]

SERVER_SCRIPT = "engram-mcp"
CLI_SCRIPT = "engram"
#: The version marker of a pinned entry (in the entry's environment).
PIN_VARIABLE = "ENGRAM_PINNED_VERSION"
_MODULE_PREFIX = ("-m", "engram.mcp")


@dataclass(frozen=True)
class HostEnv:
    """The workspace and the machine engram links hosts on."""

    workspace: Path
    home: Path
    config_home: Path
    which: Callable[[str], str | None] = field(default=shutil.which, compare=False)
    executable: Path = field(default_factory=lambda: Path(sys.executable))
    version: str = __version__

    @classmethod
    def from_environ(
        cls, workspace: Path | None = None, environ: Mapping[str, str] | None = None
    ) -> HostEnv:
        """Read ``HOME`` and ``XDG_CONFIG_HOME`` (default ``$HOME/.config``)."""
        env = os.environ if environ is None else environ
        home = Path(env.get("HOME") or Path.home())
        config_home = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        path = env.get("PATH", os.defpath)
        return cls(
            workspace=(workspace or Path.cwd()).absolute(),
            home=home,
            config_home=config_home,
            which=lambda name: shutil.which(name, path=path),
        )


@dataclass(frozen=True, slots=True)
class ServerCommand:
    """How to start a program: ``program`` then ``prefix`` arguments; pinned or not."""

    program: str
    prefix: tuple[str, ...] = ()
    pinned: str | None = None

    @property
    def argv(self) -> list[str]:
        return [self.program, *self.prefix]

    @property
    def env(self) -> dict[str, str]:
        """The entry environment: the pin marker for a pinned command, else nothing."""
        return {PIN_VARIABLE: self.pinned} if self.pinned else {}


def _installed(env: HostEnv, script: str) -> ServerCommand | None:
    if env.which(script):
        return ServerCommand(script)
    beside = env.executable.with_name(script)
    if beside.exists():
        return ServerCommand(str(beside), pinned=env.version)
    return None


def server_command(env: HostEnv) -> ServerCommand:
    """The command a host entry runs to start ``engram-mcp``."""
    found = _installed(env, SERVER_SCRIPT)
    if found is not None:
        return found
    return ServerCommand(str(env.executable), _MODULE_PREFIX, pinned=env.version)


def hook_command(env: HostEnv, host: str) -> str:
    """The shell command of a session hook: ``engram hook <host>`` (same form rule)."""
    found = _installed(env, CLI_SCRIPT)
    argv = found.argv if found is not None else [str(env.executable), "-m", "engram"]
    return shlex.join([*argv, "hook", host])


def strip_prefix(args: list[str]) -> list[str]:
    """Arguments without a ``-m engram.mcp`` prefix (for re-pinning an entry)."""
    if tuple(args[: len(_MODULE_PREFIX)]) == _MODULE_PREFIX:
        return args[len(_MODULE_PREFIX) :]
    return args
