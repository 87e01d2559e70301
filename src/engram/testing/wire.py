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
    "human_text",
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
    """The envelope of a tool result, after checking its ``content``. A project tool
    answers in ``content`` only: its human text (or the error's ``engram: <detail>``)
    and then the envelope as JSON, whose ``data`` does not repeat that text; a governed
    tool answers ``structuredContent`` and its identical JSON copy alone. And that
    ``isError`` says what ``ok`` says."""
    result = reply["result"]
    *human, copy = result["content"]
    assert all(part["type"] == "text" for part in result["content"])
    structured: dict[str, Any] = json.loads(copy["text"])
    project = "diagnostics" in structured  # governed envelopes carry auditId instead
    if project:
        assert "structuredContent" not in result
        assert "text" not in structured.get("data", {})
        assert len(human) <= 1
        if not structured["ok"]:
            from engram.safety.display import shown

            assert [part["text"] for part in human] == [
                shown(f"engram: {structured['error']['message']}")
            ]
    else:
        assert result["structuredContent"] == structured
        assert human == []
    assert result.get("isError", False) is (not structured["ok"])
    return structured


def human_text(reply: dict[str, Any]) -> str | None:
    """``content[0].text`` of a project tool result: its words, for the model and the
    person (``None`` when the result has none)."""
    *human, _copy = reply["result"]["content"]
    return str(human[0]["text"]) if human else None


def data_of(reply: dict[str, Any]) -> dict[str, Any]:
    """The ``data`` of a successful project tool result, with its human text
    (``content[0].text``) as ``text`` where it has one."""
    assert "result" in reply, reply
    structured = envelope(reply)
    assert structured["ok"] is True, structured
    data: dict[str, Any] = dict(structured["data"])
    text = human_text(reply)
    if text is not None:
        data["text"] = text
    return data


def value(reply: dict[str, Any]) -> Any:
    """The ``output.value`` of a successful governed tool result."""
    structured = envelope(reply)
    assert structured["ok"] is True, structured
    return structured["output"]["value"]


def legacy_init(
    client: LineClient,
    capabilities: dict[str, Any] | None = None,
    version: str = "2025-11-25",
    client_info: dict[str, Any] | None = None,
) -> None:
    """The legacy handshake: ``initialize`` (answered with ``version``; with
    ``client_info`` as the client's ``clientInfo``), then ``initialized``."""
    params: dict[str, Any] = {"protocolVersion": version, "capabilities": capabilities or {}}
    if client_info is not None:
        params["clientInfo"] = client_info
    reply = client.request("initialize", params)
    assert reply["result"]["protocolVersion"] == version
    client.notify("notifications/initialized")


def elicit_meta(elicitation: bool = True) -> dict[str, Any]:
    """``_meta`` of a 2026-07-28 request, declaring form elicitation or not."""
    capabilities = ELICIT_CAPS if elicitation else {}
    return {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": capabilities}
