"""The project-memory tools (``engram_*``) and their result envelope.

Each handler checks the wire shape, calls the project domain, and shapes the answer
as ``{contract_version, ok, data | error, diagnostics}`` (mcp-server.txt,
"Structured results"). The domain is imported by the first call, not at start-up.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from engram import __version__
from engram.mcp.options import ServerOptions
from engram.mcp.tools import CallContext, Tool, ToolResult

__all__ = ["CONTRACT_VERSION", "project_tools"]

CONTRACT_VERSION = "1"

_EMPTY_INPUT: Mapping[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}

_ENVELOPE_OUTPUT: Mapping[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["contract_version", "ok", "diagnostics"],
    "properties": {
        "contract_version": {"const": CONTRACT_VERSION},
        "ok": {"type": "boolean"},
        "data": {"type": "object"},
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        },
        "diagnostics": {"type": "array", "items": {"type": "object"}},
    },
}


def ok(data: Mapping[str, Any], text: str | None = None) -> ToolResult:
    """A successful project-tool result."""
    structured = {
        "contract_version": CONTRACT_VERSION,
        "ok": True,
        "data": dict(data),
        "diagnostics": [],
    }
    return ToolResult(structured, text=text)


def project_tools(options: ServerOptions) -> Iterator[Tool]:
    """The project tools, in the order ``tools/list`` shows them."""

    def status(arguments: Mapping[str, Any], context: CallContext) -> ToolResult:
        root = options.root
        return ok(
            {"version": __version__, "root": str(root) if root else None},
            text=f"engram {__version__}",
        )

    yield Tool(
        name="engram_status",
        title="Memory status",
        description="Report the health of this project's memory and its counters.",
        input_schema=_EMPTY_INPUT,
        output_schema=_ENVELOPE_OUTPUT,
        handler=status,
        read_only=True,
    )
