"""Which command a host runs to start engram, and where things live on this machine.

The command form (mcp-server.txt, "Registration"; docs/hosts.md, "Command form") is one
that runs without the ``PATH`` of the shell that linked it: a host started from the
desktop (Cursor, Windsurf, Antigravity) or from a new shell does not have that ``PATH``
(the Quick start's ``export PATH=…`` lasts one shell). So an entry names, in this order:
the package runner pinned to this version by its absolute path, when this engram was
installed from a package index and ``uvx`` (else ``pipx``) is on ``PATH``
(``/home/me/.local/bin/uvx --from engram-trust==<version> engram-mcp``: the Python
equivalent of upstream's ``npx -y --package @…@<version> engram-mcp``); else the
``engram-mcp`` script next to the running interpreter (``<venv>/bin/engram-mcp``);
else ``<python> -m engram.mcp`` (a checkout run with ``python -m engram``). Each is
pinned to this version by the ``ENGRAM_PINNED_VERSION`` marker in the entry's
environment.

The *portable* form is for a workspace file Git shares with the team (tracked, or
``engram link --portable``), where this machine's paths mean nothing to the others:
``engram-mcp`` as found on each person's ``PATH`` (unpinned), else the runner by name,
else the absolute path as above (with a note that it is this machine's).

:class:`HostEnv` is the one place that reads ``HOME``, ``XDG_CONFIG_HOME``, ``SHELL``
and ``PATH``; everything else receives it, so tests run in a temporary home.

:func:`read_command_line` splits an entry's command line where ``engram-mcp``
starts. A re-pin replaces the launcher only when it is engram's own form or a
known package runner (``npx -y --package @the-long-ride/engram@X engram-mcp``,
``uvx --from engram==X engram-mcp``, ``pipx run``, ``uv run``, ``uv tool run``),
and keeps only engram-mcp's own options. Any other launcher (``docker run … image
engram-mcp``, ``ssh host engram-mcp``) runs engram-mcp somewhere engram cannot see,
so it is never replaced by a local command: like a wrapper script, it is kept.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engram import DISTRIBUTION, __version__

__all__ = [
    "ENGRAM_VARIABLES",
    "PIN_VARIABLE",
    "SERVER_FLAGS",
    "SERVER_SCRIPT",
    "SERVER_VALUED_OPTIONS",
    "CommandLine",
    "HostEnv",
    "ServerCommand",
    "hook_command",
    "new_shell_path",
    "own_option_marks",
    "read_command_line",
    "server_command",
]

SERVER_SCRIPT = "engram-mcp"
CLI_SCRIPT = "engram"
#: The version marker of a pinned entry (in the entry's environment).
PIN_VARIABLE = "ENGRAM_PINNED_VERSION"
#: The entry variables engram writes itself. Only their values are ever printed:
#: the others are the person's, and may be secrets (an API key).
ENGRAM_VARIABLES = frozenset({PIN_VARIABLE})
_MODULE_PREFIX = ("-m", "engram.mcp")
#: engram-mcp's options in a host entry (``engram-mcp --help``; a test keeps these
#: in step with the server's own parser): flags, and options that take a value.
SERVER_FLAGS = frozenset({"--always-load", "--no-elicitation"})
SERVER_VALUED_OPTIONS = frozenset({"--host-profile", "--root", "--http"})
#: Variables a host reads to decide whether it starts a project's servers (Gemini CLI's
#: folder trust); nothing else of the environment is kept.
HOST_VARIABLES = (
    "GEMINI_CLI_TRUST_WORKSPACE",
    "GEMINI_RESTRICTED_MODE",
    "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
)
#: Package runners a re-pin may replace: they fetch engram-mcp and run it on this
#: machine, as the command engram writes does. Each is the runner program's name and
#: the words of its run subcommand.
_RUNNERS = (("npx",), ("uvx",), ("pipx", "run"), ("uv", "run"), ("uv", "tool", "run"))
#: A Python interpreter's file name (``python3.12``, ``pypy3``, ``python.exe``).
_INTERPRETER = re.compile(r"(python|pypy)[\w.-]*", re.IGNORECASE)


@dataclass(frozen=True)
class HostEnv:
    """The workspace and the machine engram links hosts on."""

    workspace: Path
    home: Path
    config_home: Path
    which: Callable[[str], str | None] = field(default=shutil.which, compare=False)
    executable: Path = field(default_factory=lambda: Path(sys.executable))
    version: str = __version__
    #: ``$XDG_STATE_HOME`` (``None``: ``~/.local/state``), where backups are kept.
    state_home: Path | None = None
    #: Whether this engram was installed from a package index (which then holds its
    #: version, so a runner pinned to it can fetch it).
    from_index: bool = False
    #: ``$SHELL``: the shell a new terminal starts (:func:`new_shell_path`).
    shell: str | None = None
    #: The variables of this environment that change what a host decides
    #: (:data:`HOST_VARIABLES`), and only those.
    host_variables: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def ephemeral(self) -> bool:
        """Whether the running interpreter lives in a cache folder: a runner's
        temporary environment (``uvx``, ``pipx run``), which may be deleted any time,
        so an entry names the runner rather than its path."""
        return ".cache" in self.executable.parts

    @property
    def backups(self) -> Path:
        """Where the previous version of every host file engram changes is kept."""
        return (self.state_home or self.home / ".local" / "state") / "engram" / "backups"

    @classmethod
    def from_environ(
        cls, workspace: Path | None = None, environ: Mapping[str, str] | None = None
    ) -> HostEnv:
        """Read ``HOME``, ``XDG_CONFIG_HOME`` (default ``$HOME/.config``) and
        ``XDG_STATE_HOME`` (default ``$HOME/.local/state``)."""
        env = os.environ if environ is None else environ
        home = Path(env.get("HOME") or Path.home())
        config_home = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        path = env.get("PATH", os.defpath)
        return cls(
            workspace=(workspace or Path.cwd()).absolute(),
            home=home,
            config_home=config_home,
            which=lambda name: shutil.which(name, path=path),
            state_home=Path(env["XDG_STATE_HOME"]) if env.get("XDG_STATE_HOME") else None,
            from_index=_installed_from_index(),
            shell=env.get("SHELL") or None,
            host_variables={name: env[name] for name in HOST_VARIABLES if name in env},
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


def server_command(env: HostEnv, portable: bool = False) -> ServerCommand:
    """The command a host entry runs to start ``engram-mcp``: one that runs without
    this shell's ``PATH``, or with ``portable`` the form a shared workspace file keeps."""
    if portable and env.which(SERVER_SCRIPT):
        return ServerCommand(SERVER_SCRIPT)
    installed = _beside(env, SERVER_SCRIPT)
    if installed is not None and not (env.ephemeral and env.from_index):
        return installed
    spec = f"{DISTRIBUTION}=={env.version}"
    for runner, words in (("uvx", ("--from", spec)), ("pipx", ("run", "--spec", spec))):
        found = env.which(runner) if env.from_index else None
        if found:
            program = runner if portable else str(Path(found).absolute())
            return ServerCommand(program, (*words, SERVER_SCRIPT), pinned=env.version)
    return installed or ServerCommand(str(env.executable), _MODULE_PREFIX, pinned=env.version)


def _beside(env: HostEnv, script: str) -> ServerCommand | None:
    """``script`` next to the running interpreter, pinned to this version."""
    beside = env.executable.with_name(script)
    return ServerCommand(str(beside), pinned=env.version) if beside.exists() else None


_PATH_MARK = "engram-new-shell-path:"


def new_shell_path(env: HostEnv, timeout: float = 5.0) -> str:
    """The ``PATH`` a new terminal gets, and a desktop host that takes its environment
    from the login shell (Cursor, Windsurf and Antigravity, as VS Code does): what the
    person's login shell sets, started interactive from nothing but ``HOME``,
    ``SHELL``, the user's name and the locale. Without an answer within ``timeout``,
    the system's default ``PATH``."""
    default = os.confstr("CS_PATH") or os.defpath
    shell = env.shell or "/bin/sh"
    environ = {"HOME": str(env.home), "SHELL": shell, "LANG": os.environ.get("LANG", "C.UTF-8")}
    environ |= {name: os.environ[name] for name in ("USER", "LOGNAME") if name in os.environ}
    script = f'printf "\\n{_PATH_MARK}%s\\n" "$PATH"'
    try:
        done = subprocess.run(
            [shell, "-l", "-i", "-c", script],
            check=False,
            env=environ,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            cwd=env.home if env.home.is_dir() else None,
        )
    except (OSError, subprocess.SubprocessError):
        return default
    for line in reversed(done.stdout.decode("utf-8", "replace").splitlines()):
        if line.startswith(_PATH_MARK):
            return line.removeprefix(_PATH_MARK)
    return default


def _installed_from_index() -> bool:
    """Whether the running engram came from a package index: its distribution has no
    ``direct_url.json`` (PEP 610), which a checkout, a path or a VCS URL leaves."""
    from importlib import metadata

    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return False  # run from a checkout without installing it
    return distribution.read_text("direct_url.json") is None


def hook_command(env: HostEnv, host: str, portable: bool = False) -> str:
    """The shell command of a session hook: ``engram hook <host>``, by the same rule
    (``engram`` by name in a shared file, else the script beside the interpreter)."""
    found = ServerCommand(CLI_SCRIPT) if portable and env.which(CLI_SCRIPT) else None
    found = found or _beside(env, CLI_SCRIPT)
    argv = found.argv if found is not None else [str(env.executable), "-m", "engram"]
    return shlex.join([*argv, "hook", host])


@dataclass(frozen=True, slots=True)
class CommandLine:
    """An entry's command line, split where ``engram-mcp`` starts.

    ``launcher`` is every word up to the one naming the server (``…/engram-mcp``,
    or ``-m engram.mcp`` after an interpreter), that word included; ``options``
    are engram-mcp's own arguments.
    """

    launcher: tuple[str, ...]
    options: tuple[str, ...]

    @property
    def own_form(self) -> bool:
        """Whether the launcher is one of engram's forms (not a runner)."""
        return len(self.launcher) == self._program_words()

    @property
    def repinnable(self) -> bool:
        """Whether a re-pin may replace the launcher: engram's own forms (even with
        a runner's words left after them) and the known package runners. Any other
        launcher (``docker run``, ``ssh``, ``env``) is kept as it is."""
        return bool(self._program_words()) or _runs_package(self.launcher)

    @property
    def program(self) -> str:
        """The launcher's first word: what the host starts."""
        return self.launcher[0]

    def _program_words(self) -> int:
        """How many words the program takes when it is the server itself, else 0."""
        if _names_server(self.launcher[0]):
            return 1
        interpreter = _INTERPRETER.fullmatch(_file_name(self.launcher[0])) is not None
        return 3 if interpreter and self.launcher[1:3] == _MODULE_PREFIX else 0

    @property
    def leftover(self) -> tuple[str, ...]:
        """Another launcher's words left after engram's own program, which engram-mcp
        receives as arguments (``engram-mcp -y --package … engram-mcp``)."""
        own = self._program_words()
        return self.launcher[own:] if own else ()

    @property
    def unknown_options(self) -> tuple[str, ...]:
        """Options engram-mcp does not know (it starts anyway, ignoring them)."""
        marks = own_option_marks(self.options)
        return tuple(word for word, own in zip(self.options, marks, strict=True) if not own)


def own_option_marks(options: Sequence[str]) -> tuple[bool, ...]:
    """For each of engram-mcp's arguments, whether it is one of its own options or
    the value of one, read in order as its parser reads them: ``--root --root X``
    is ``--root`` given the value ``--root``, and ``X`` is not engram-mcp's.

    The one reading of engram-mcp's options: what :attr:`CommandLine.unknown_options`
    reports is what it does not mark, and what :mod:`.masking` leaves readable is what
    it marks.
    """
    marks, index = [False] * len(options), 0
    while index < len(options):
        word = options[index]
        name, inline, _ = word.partition("=")
        if word in SERVER_FLAGS or (inline and name in SERVER_VALUED_OPTIONS):
            marks[index] = True
        elif word in SERVER_VALUED_OPTIONS and index + 1 < len(options):
            marks[index] = marks[index + 1] = True
            index += 1
        index += 1
    return tuple(marks)


def _file_name(word: str) -> str:
    """A program's file name, without a Windows ``.exe`` or ``.cmd`` suffix."""
    name = Path(word).name
    stem, dot, suffix = name.rpartition(".")
    return stem if dot and suffix.lower() in ("exe", "cmd") else name


def _runs_package(launcher: Sequence[str]) -> bool:
    words = (_file_name(launcher[0]), *launcher[1:])
    return any(tuple(words[: len(runner)]) == runner for runner in _RUNNERS)


def _names_server(word: str) -> bool:
    return not word.startswith("-") and Path(word).name == SERVER_SCRIPT


def read_command_line(argv: Sequence[str]) -> CommandLine | None:
    """``argv`` split where engram-mcp starts; ``None`` when no word names it.

    The last word naming the server counts (skipping the values of engram-mcp's
    own options), so that runner words left before it are part of the launcher.
    """
    words, start, index = list(argv), None, 0
    while index < len(words):
        if start is not None and words[index] in SERVER_VALUED_OPTIONS:
            index += 2
        elif _names_server(words[index]):
            start = index = index + 1
        elif index > 0 and tuple(words[index : index + 2]) == _MODULE_PREFIX:
            start = index = index + 2
        else:
            index += 1
    if start is None:
        return None
    return CommandLine(tuple(words[:start]), tuple(words[start:]))
