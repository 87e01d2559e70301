"""``engram-mcp``: the composition root of the MCP server.

Only this module reads options and the environment; everything below receives
what it needs. Imports stay light: the domain is loaded by the first call that
needs it, so the server answers its first request within milliseconds.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence

from engram import __version__
from engram.mcp.dispatcher import Dispatcher, ServerIdentity
from engram.mcp.instructions import INSTRUCTIONS
from engram.mcp.options import USAGE, ServerOptions, parse_options
from engram.mcp.stdio import claim_stdout, serve
from engram.mcp.tools import ToolTable

__all__ = ["build_dispatcher", "main"]


def build_dispatcher(options: ServerOptions) -> Dispatcher:
    """Compose the server from its options."""
    from engram.mcp.project_resources import ProjectPrompts, ProjectResources
    from engram.mcp.project_tools import ProjectTools, project_tools

    project = ProjectTools(options)
    tools = ToolTable(project_tools(project, options))
    if options.host_profile is not None:  # governed memory is loaded only when asked for
        from engram.mcp.memory_tools import memory_tools

        for tool in memory_tools(options.host_profile):
            tools.add(tool)
    profile = str(options.host_profile.resolve()) if options.host_profile else ""
    return Dispatcher(
        identity=ServerIdentity("engram", __version__, "Engram", INSTRUCTIONS),
        tools=tools,
        resources=ProjectResources(project),
        prompts=ProjectPrompts(),
        binding=f"{options.root or os.getcwd()}\0{profile}",
        elicitation_enabled=options.elicitation,
        elicitation_timeout=options.elicitation_timeout,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Serve MCP on stdio until stdin closes, then exit 0."""
    logging.basicConfig(
        stream=sys.stderr,
        level=os.environ.get("ENGRAM_LOG_LEVEL", "WARNING").upper(),
        format="engram-mcp: %(levelname)s %(message)s",
    )
    options = parse_options(sys.argv[1:] if argv is None else argv)
    for arg in options.ignored:
        print(f"engram-mcp: ignoring unknown option {arg}", file=sys.stderr)
    if options.show_help or options.show_version:
        print(USAGE if options.show_help else f"engram-mcp {__version__}", file=sys.stderr)
        sys.exit(0)
    protocol_out = claim_stdout()
    serve(build_dispatcher(options), sys.stdin.buffer, protocol_out)
    sys.exit(0)
