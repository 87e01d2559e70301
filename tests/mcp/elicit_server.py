"""A test composition of the real protocol layer with one tool that asks the human.

Run as a script; it serves on stdio exactly like ``engram-mcp`` but with the tool
``confirm_write``, which asks through whichever elicitation path the call has and
appends to ``$ELICIT_LOG`` only when the human accepts. Tests read that file to
prove that nothing was written on decline, cancel, timeout or a bad requestState.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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


def confirm_write(arguments: Mapping[str, Any], context: CallContext) -> ToolResult:
    note = str(arguments["note"])
    if not context.elicitation.available:
        return ToolResult({"outcome": "no-dialog"})
    try:
        answer = context.elicitation.ask("confirm", f"Write note {note!r}?", FORM, shown=note)
    except ElicitationFailed:
        return ToolResult({"outcome": "failed"})
    if answer.action != "accept" or answer.content.get("approve") is not True:
        return ToolResult({"outcome": answer.action})
    with Path(os.environ["ELICIT_LOG"]).open("a") as log:
        log.write(note + "\n")
    return ToolResult({"outcome": "written"})


def main() -> None:
    options = parse_options(sys.argv[1:])
    tool = Tool(
        name="confirm_write",
        title="Confirm and write",
        description="Ask the human, then write the note.",
        input_schema=SCHEMA,
        output_schema=OUTPUT,
        handler=confirm_write,
    )
    dispatcher = Dispatcher(
        identity=ServerIdentity("engram", "test", "Engram test", "Test server."),
        tools=ToolTable([tool]),
        binding="test-workspace",
        elicitation_enabled=options.elicitation,
        elicitation_timeout=options.elicitation_timeout,
    )
    out = claim_stdout()
    serve(dispatcher, sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
