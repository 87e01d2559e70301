"""A test composition of the real protocol layer with one tool that asks the human.

:func:`run` serves exactly like :func:`engram.mcp.main.run` (and, run as a script,
like ``engram-mcp``) but with the one tool
``confirm_write``, which asks through whichever elicitation path the call has and
appends to ``$ELICIT_LOG`` only when the human accepts. Tests read that file to
prove that nothing was written on decline, cancel, timeout or a bad requestState.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from engram.errors import ElicitationFailed
from engram.mcp.dispatcher import Dispatcher, ServerIdentity
from engram.mcp.options import parse_options
from engram.mcp.stdio import claim_stdout, serve
from engram.mcp.tools import CallContext, Tool, ToolResult, ToolTable

SCHEMA = {
    "type": "object",
    "properties": {"note": {"type": "string", "minLength": 1}},
    "required": ["note"],
    "additionalProperties": False,
}
FORM = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Write the note?"}},
    "required": ["approve"],
}
OUTPUT = {
    "type": "object",
    "properties": {"outcome": {"type": "string"}},
    "required": ["outcome"],
}


def confirm_write(log: Path) -> Callable[[Mapping[str, Any], CallContext], ToolResult]:
    """The tool's handler, writing accepted notes to ``log``."""

    def handle(arguments: Mapping[str, Any], context: CallContext) -> ToolResult:
        note = str(arguments["note"])
        if not context.elicitation.available:
            return ToolResult({"outcome": "no-dialog"})
        try:
            answer = context.elicitation.ask("confirm", f"Write note {note!r}?", FORM, shown=note)
        except ElicitationFailed:
            return ToolResult({"outcome": "failed"})
        if answer.action != "accept" or answer.content.get("approve") is not True:
            return ToolResult({"outcome": answer.action})
        with log.open("a") as written:
            written.write(note + "\n")
        return ToolResult({"outcome": "written"})

    return handle


def run(
    argv: Sequence[str],
    stdin: BinaryIO,
    stdout: BinaryIO,
    stderr: TextIO,
    environ: Mapping[str, str],
    cwd: Path,
) -> int:
    """Serve ``confirm_write`` until end of input (the signature of ``engram-mcp``'s run)."""
    options = parse_options(argv, environ, cwd)
    tool = Tool(
        name="confirm_write",
        title="Confirm and write",
        description="Ask the human, then write the note.",
        input_schema=SCHEMA,
        output_schema=OUTPUT,
        handler=confirm_write(Path(environ["ELICIT_LOG"])),
    )
    dispatcher = Dispatcher(
        identity=ServerIdentity("engram", "test", "Engram test", "Test server."),
        tools=ToolTable([tool]),
        binding="test-workspace",
        elicitation_enabled=options.elicitation,
        elicitation_timeout=options.elicitation_timeout,
    )
    serve(dispatcher, stdin, stdout)
    return 0


def main() -> None:
    """Serve on this process's stdio, as ``engram-mcp`` does (for the SDK clients' tests)."""
    out = claim_stdout()
    sys.exit(run(sys.argv[1:], sys.stdin.buffer, out, sys.stderr, os.environ, Path.cwd()))


if __name__ == "__main__":
    main()
