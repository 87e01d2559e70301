"""Demo, part 1: one ``engram-mcp`` process serving both protocol eras."""

from __future__ import annotations

from engram.demo import transcript
from engram.testing.clients import MODERN_META, StdioClient

__all__ = ["run"]


def run(client: StdioClient) -> None:
    """Talk to the server as a legacy client, then as a 2026-07-28 client."""
    transcript.heading("Legacy era: initialize, then list and call tools")
    init = client.request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "engram-demo", "version": "1"},
        },
    )
    transcript.note(f"negotiated protocolVersion {init['result']['protocolVersion']}")
    client.notify("notifications/initialized")
    client.request("ping")
    tools = client.request("tools/list")["result"]["tools"]
    transcript.note(f"{len(tools)} tools: {', '.join(tool['name'] for tool in tools)}")
    client.request("resources/read", {"uri": "engram://index"})
    client.request("tools/call", {"name": "engram_status", "arguments": {}})
    transcript.note("no project memory in this folder yet: an error result, not a crash")

    transcript.heading("Modern era (2026-07-28), stateless, on the same process")
    discover = client.request("server/discover", {"_meta": MODERN_META})
    transcript.note(f"supportedVersions {discover['result']['supportedVersions']}")
    client.request("tools/call", {"name": "engram_status", "arguments": {}, "_meta": MODERN_META})
    client.request("ping", {"_meta": MODERN_META})
    transcript.note("ping does not exist in the modern era: -32601")

    transcript.heading("A malformed line gets -32700 and the server keeps serving")
    client.send(b"{this is not json")
    client.receive()
    client.request("ping")
