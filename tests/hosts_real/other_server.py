"""Someone else's MCP server, which the tests add with each host's own ``mcp add``.

It answers the handshake (with the protocol version the host asked for), lists one tool,
``ping``, and answers ``ping``; nothing else. Being a working server, not a command that
fails, the host reports it connected, so a test sees that engram's link, upgrade and
unlink left a neighbour the host can still start. Standard library only: it runs under
the interpreter that runs the tests.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [{"name": "ping", "description": "Answers pong.", "inputSchema": {"type": "object"}}]


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The result of one request (``KeyError`` for a method this server lacks)."""
    results: dict[str, dict[str, Any]] = {
        "initialize": {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "other", "version": "1.0.0"},
        },
        "ping": {},
        "tools/list": {"tools": TOOLS},
        "tools/call": {"content": [{"type": "text", "text": "pong"}]},
    }
    return results[method]


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification, or a reply to nothing this server asked
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = answer(message["method"], message.get("params") or {})
        except KeyError:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
