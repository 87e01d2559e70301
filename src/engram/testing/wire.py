"""What a client says and checks on the wire: tool calls, result envelopes, the legacy
handshake and the 2026-07-28 request envelope."""

from __future__ import annotations

import json
from typing import Any

from engram.testing.clients import MODERN_META, LineClient

__all__ = [
    "ELICIT_CAPS",
    "call",
    "data_of",
    "elicit_meta",
    "envelope",
    "legacy_init",
    "tool_request",
    "value",
]

#: Client capabilities that declare form elicitation.
ELICIT_CAPS: dict[str, Any] = {"elicitation": {"form": {}}}


def tool_request(
    request_id: int | str, name: str, arguments: dict[str, Any], **params: Any
) -> dict[str, Any]:
    """A whole ``tools/call`` request message, for a client that sends it itself."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, **params},
    }


def call(client: LineClient, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """``tools/call`` and its whole response (``extra`` joins the params, e.g. ``_meta``)."""
    return client.request("tools/call", {"name": name, "arguments": arguments, **extra})


def envelope(reply: dict[str, Any]) -> dict[str, Any]:
    """The structured envelope of a tool result, after checking its ``content``: a project
    tool's human text (``data.text``, or the error's ``engram: <detail>``) and then the
    same JSON; a governed tool's JSON alone. And that ``isError`` says what ``ok`` says."""
    result = reply["result"]
    structured: dict[str, Any] = result["structuredContent"]
    *human, copy = result["content"]
    assert all(part["type"] == "text" for part in result["content"])
    assert json.loads(copy["text"]) == structured
    project = "diagnostics" in structured  # governed envelopes carry auditId instead
    expected = None
    if project:
        ok = structured["ok"]
        expected = (
            structured["data"].get("text") if ok else f"engram: {structured['error']['message']}"
        )
    from engram.safety.display import shown

    assert [part["text"] for part in human] == ([] if expected is None else [shown(expected)])
    assert result.get("isError", False) is (not structured["ok"])
    return structured


def data_of(reply: dict[str, Any]) -> dict[str, Any]:
    """The ``data`` of a successful project tool result."""
    assert "result" in reply, reply
    structured = envelope(reply)
    assert structured["ok"] is True, structured
    data: dict[str, Any] = structured["data"]
    return data


def value(reply: dict[str, Any]) -> Any:
    """The ``output.value`` of a successful governed tool result."""
    structured = envelope(reply)
    assert structured["ok"] is True, structured
    return structured["output"]["value"]


def legacy_init(
    client: LineClient, capabilities: dict[str, Any] | None = None, version: str = "2025-11-25"
) -> None:
    """The legacy handshake: ``initialize`` (answered with ``version``), then ``initialized``."""
    reply = client.request(
        "initialize", {"protocolVersion": version, "capabilities": capabilities or {}}
    )
    assert reply["result"]["protocolVersion"] == version
    client.notify("notifications/initialized")


def elicit_meta(elicitation: bool = True) -> dict[str, Any]:
    """``_meta`` of a 2026-07-28 request, declaring form elicitation or not."""
    capabilities = ELICIT_CAPS if elicitation else {}
    return {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": capabilities}
