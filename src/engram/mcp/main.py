"""``engram-mcp``: the composition root of the MCP server.

Only this module reads options and the environment; everything below receives
what it needs. Imports stay light: the domain is loaded by the first call that
needs it, so the server answers its first request within milliseconds.

:func:`run` is the whole server over any pair of byte streams, so that a host (or
a test, through :mod:`engram.testing`) can serve in its own process exactly what
:func:`main` serves on the process's stdin and stdout.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, TextIO

from engram import __version__
from engram.errors import EngramError
from engram.mcp.dispatcher import Dispatcher, ServerIdentity
from engram.mcp.instructions import INSTRUCTIONS
from engram.mcp.options import USAGE, ServerOptions, parse_options
from engram.mcp.stdio import claim_stdout, serve
from engram.mcp.tools import ToolTable

__all__ = ["LOG_FORMAT", "build_dispatcher", "main", "run"]

#: How ``engram-mcp`` writes its log lines to stderr.
LOG_FORMAT = "engram-mcp: %(levelname)s %(message)s"


def build_dispatcher(options: ServerOptions, resources: contextlib.ExitStack) -> Dispatcher:
    """Compose the server from its options; what it opens is closed with ``resources``."""
    from engram.mcp.project_resources import ProjectPrompts, ProjectResources
    from engram.mcp.project_tools import ProjectTools, project_tools

    project = resources.enter_context(ProjectTools(options))
    tools = ToolTable(project_tools(project, options))
    agent = ""
    if options.host_profile is not None:  # governed memory is loaded only when asked for
        from engram.mcp.memory_tools import memory_tools, trusted_profile

        bound = trusted_profile(options.host_profile)
        for tool in memory_tools(bound, resources):
            tools.add(tool)
        # The agent the host runs here: recorded with what this server proposes.
        agent = bound.agent_id if bound is not None else ""
    profile = str(options.host_profile.resolve()) if options.host_profile else ""
    return Dispatcher(
        identity=ServerIdentity("engram", __version__, "Engram", INSTRUCTIONS),
        tools=tools,
        resources=ProjectResources(project),
        prompts=ProjectPrompts(),
        binding=f"{options.root or options.cwd}\0{profile}",
        elicitation_enabled=options.elicitation,
        elicitation_timeout=options.elicitation_timeout,
        agent=agent,
    )


def _serve_http(options: ServerOptions, stderr: TextIO) -> int:
    """``--http``: the governed tools of a host profile, over Streamable HTTP."""
    if options.host_profile is None:
        print("engram-mcp: --http serves a host profile: give --host-profile PATH", file=stderr)
        return 2
    from engram.extras import require

    try:
        # Before anything is opened: Starlette and uvicorn are imported only to serve.
        require("http", "--http")
        from engram.mcp.http import serve_http

        return serve_http(options, options.http or "")
    except EngramError as error:  # the profile cannot be trusted, the port is taken, …
        print(f"engram-mcp: {error.detail}", file=stderr)
        return error.exit_code


def run(
    argv: Sequence[str],
    stdin: BinaryIO,
    stdout: BinaryIO,
    stderr: TextIO,
    environ: Mapping[str, str],
    cwd: Path,
) -> int:
    """Serve MCP on ``stdin``/``stdout`` until end of input; returns the exit status.

    Notes for the operator go to ``stderr``; logging is the caller's to configure.
    """
    options = parse_options(argv, environ, cwd)
    for arg in options.ignored:
        print(f"engram-mcp: ignoring unknown option {arg}", file=stderr)
    if options.show_help or options.show_version:
        print(USAGE if options.show_help else f"engram-mcp {__version__}", file=stderr)
        return 0
    if options.http is not None:
        return _serve_http(options, stderr)
    with contextlib.ExitStack() as resources:
        try:
            dispatcher = build_dispatcher(options, resources)
        except EngramError as error:  # what the server needs is missing: an extra, …
            print(f"engram-mcp: {error.detail}", file=stderr)
            return error.exit_code
        serve(dispatcher, stdin, stdout)
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    """Serve MCP on stdio until stdin closes, then exit 0."""
    logging.basicConfig(
        stream=sys.stderr,
        level=os.environ.get("ENGRAM_LOG_LEVEL", "WARNING").upper(),
        format=LOG_FORMAT,
    )
    args = sys.argv[1:] if argv is None else argv
    options = parse_options(args)
    # Only a server that serves takes file descriptor 1 (--help and --version print to
    # stderr and leave, whatever stdout is).
    serving = not (options.show_help or options.show_version)
    protocol_out = claim_stdout() if serving else io.BytesIO()  # nothing is written to it
    sys.exit(run(args, sys.stdin.buffer, protocol_out, sys.stderr, os.environ, Path.cwd()))
