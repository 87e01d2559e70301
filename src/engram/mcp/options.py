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

from engram.project.config import semantic_off
from engram.project.layout import global_root

__all__ = ["USAGE", "ServerOptions", "parse_options"]

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
Host values --http answers to, comma-separated, e.g. behind a proxy).
"""


#: ``--http``'s ``HOST:PORT`` (a name, an IPv4 address or a bracketed IPv6 one).
_ADDRESS = re.compile(r"(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}")


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
        always_load=flags["always_load"],
        elicitation=flags["elicitation"],
        host_profile=paths["host_profile"],
        root=paths["root"],
        show_help=flags["show_help"],
        show_version=flags["show_version"],
        ignored=tuple(ignored),
    )
