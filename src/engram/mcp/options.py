"""``engram-mcp`` command-line options.

Parsed by hand rather than with ``argparse`` or ``click``: the server starts on every
agent session and must answer within milliseconds, and an unknown option must be
ignored with a note on stderr rather than refused (mcp-server.txt).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from engram.project.config import semantic_off
from engram.project.layout import global_root

__all__ = ["USAGE", "HttpLimits", "ServerOptions", "parse_options"]

USAGE = """usage: engram-mcp [--always-load] [--no-elicitation] [--host-profile PATH] [--root DIR]
                  [--http ADDRESS]

Serves engram over MCP on stdin/stdout (newline-delimited JSON-RPC, both protocol eras),
or with --http the governed tools of a host profile over Streamable HTTP at /mcp (every
request carries `Authorization: Bearer <token>` from `engram host issue-token`).

  --always-load        mark engram_load with _meta["anthropic/alwaysLoad"] (Claude Code)
  --no-elicitation     never ask through the client's dialog; use approval tokens
  --host-profile PATH  add the granted engram_memory_* tools bound to this host profile
                       (default: $ENGRAM_HOST_PROFILE)
  --root DIR           the project to serve (default: the nearest directory, from the
                       current one upwards, that holds .agents/.engram)
  --http ADDRESS       serve over HTTP at HOST:PORT (e.g. 127.0.0.1:8765; needs a host
                       profile and the http extra: pip install 'engram-trust[http]')

Environment: ENGRAM_HOST_PROFILE, ENGRAM_ELICITATION_TIMEOUT_S (default 60),
ENGRAM_LOG_LEVEL (default WARNING; logs go to stderr), ENGRAM_HTTP_ALLOWED_HOSTS (more
Host values --http answers to, comma-separated, e.g. behind a proxy); the limits of
--http (docs/deployment.md): ENGRAM_HTTP_HEADER_TIMEOUT_S (10), ENGRAM_HTTP_BODY_TIMEOUT_S
(30), ENGRAM_HTTP_KEEP_ALIVE_S (5, whole seconds), ENGRAM_HTTP_MAX_CONNECTIONS (1000).
"""


#: ``--http``'s ``HOST:PORT`` (a name, an IPv4 address or a bracketed IPv6 one).
_ADDRESS = re.compile(r"(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}")


@dataclass(frozen=True)
class HttpLimits:
    """How long and how much the ``--http`` server waits for and holds a client
    (docs/deployment.md, "The HTTP server's limits")."""

    #: Seconds from a connection's opening (or its last answer) to a request's last header.
    header_timeout: float = 10.0
    #: Seconds from a request's headers to the last byte of its body; also how long an
    #: answer waits for a client that reads none of it.
    body_timeout: float = 30.0
    #: Whole seconds an idle connection is kept open after an answer (uvicorn's own timer).
    keep_alive: int = 5
    #: Connections open at once (lowered to what the file limit leaves room for).
    max_connections: int = 1000


@dataclass(frozen=True)
class ServerOptions:
    """What the operator asked of this server process.

    ``cwd`` is the directory the server was started in (the project is found from it
    when ``root`` is not given); ``global_dir`` is the user's global memory folder,
    read from the environment once, here.
    """

    cwd: Path = field(default_factory=Path.cwd)
    global_dir: Path = field(default_factory=global_root)
    always_load: bool = False
    elicitation: bool = True
    host_profile: Path | None = None
    root: Path | None = None
    show_help: bool = False
    show_version: bool = False
    elicitation_timeout: float = 60.0
    #: Project memory's semantic channel (``ENGRAM_SEMANTIC=off`` turns it off).
    semantic: bool = True
    #: ``--http HOST:PORT``: serve Streamable HTTP there instead of stdio.
    http: str | None = None
    #: ``ENGRAM_HTTP_ALLOWED_HOSTS``: more ``Host`` values the HTTP server answers to.
    allowed_hosts: str = ""
    #: ``ENGRAM_HTTP_*_S``, ``ENGRAM_HTTP_MAX_CONNECTIONS``: the HTTP server's limits.
    http_limits: HttpLimits = field(default_factory=HttpLimits)
    ignored: tuple[str, ...] = field(default_factory=tuple)


def parse_options(
    argv: Sequence[str], environ: Mapping[str, str] | None = None, cwd: Path | None = None
) -> ServerOptions:
    """Parse arguments; unknown ones are collected in ``ignored``, never fatal.

    Relative paths are taken from ``cwd`` (the process's working directory by default);
    ``~`` is the user's home, also where no shell expanded it (a host's configuration).
    """
    env = os.environ if environ is None else environ
    here = Path.cwd() if cwd is None else cwd
    flags = {"always_load": False, "elicitation": True, "show_help": False, "show_version": False}
    paths: dict[str, Path | None] = {
        "host_profile": here / Path(env["ENGRAM_HOST_PROFILE"]).expanduser()
        if env.get("ENGRAM_HOST_PROFILE")
        else None,
        "root": None,
    }
    ignored: list[str] = []
    http: str | None = None
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, has_value, inline = arg.partition("=")
        if arg == "--always-load":
            flags["always_load"] = True
        elif arg == "--no-elicitation":
            flags["elicitation"] = False
        elif arg in ("-h", "--help"):
            flags["show_help"] = True
        elif arg in ("-V", "--version"):
            flags["show_version"] = True
        elif name in ("--host-profile", "--root", "--http"):
            value = inline if has_value else (args.pop(0) if args else "")
            if name == "--http" and _ADDRESS.fullmatch(value):
                http = value
            elif value and name != "--http":
                paths[name[2:].replace("-", "_")] = here / Path(value).expanduser()
            else:
                ignored.append(arg if has_value or not value else f"{arg} {value}")
        else:
            ignored.append(arg)
    timeout = env.get("ENGRAM_ELICITATION_TIMEOUT_S", "60")
    try:
        elicitation_timeout = float(timeout)
    except ValueError:
        elicitation_timeout = 60.0
        ignored.append(f"ENGRAM_ELICITATION_TIMEOUT_S={timeout}")
    return ServerOptions(
        cwd=here,
        global_dir=global_root(env),
        elicitation_timeout=elicitation_timeout,
        semantic=not semantic_off(env),
        http=http,
        allowed_hosts=env.get("ENGRAM_HTTP_ALLOWED_HOSTS", ""),
        http_limits=_http_limits(env, ignored),
        always_load=flags["always_load"],
        elicitation=flags["elicitation"],
        host_profile=paths["host_profile"],
        root=paths["root"],
        show_help=flags["show_help"],
        show_version=flags["show_version"],
        ignored=tuple(ignored),
    )


def _http_limits(env: Mapping[str, str], ignored: list[str]) -> HttpLimits:
    """The limits the environment sets; a value that is not a positive number is noted
    in ``ignored`` and the default kept."""
    default = HttpLimits()
    return HttpLimits(
        header_timeout=_positive(
            env, "ENGRAM_HTTP_HEADER_TIMEOUT_S", default.header_timeout, ignored
        ),
        body_timeout=_positive(env, "ENGRAM_HTTP_BODY_TIMEOUT_S", default.body_timeout, ignored),
        keep_alive=_positive(env, "ENGRAM_HTTP_KEEP_ALIVE_S", default.keep_alive, ignored),
        max_connections=_positive(
            env, "ENGRAM_HTTP_MAX_CONNECTIONS", default.max_connections, ignored
        ),
    )


_Number = TypeVar("_Number", int, float)


def _positive(
    env: Mapping[str, str], variable: str, default: _Number, ignored: list[str]
) -> _Number:
    text = env.get(variable)
    if text is None:
        return default
    try:
        value = type(default)(text)
    except ValueError:
        value = type(default)(0)
    if 0 < value < float("inf"):
        return value
    ignored.append(f"{variable}={text}")
    return default
