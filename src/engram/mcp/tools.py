"""The tool table: what a tool declares, what a handler receives and returns.

A :class:`Tool` is a value: name, title, description, closed input schema, output
schema, annotations, ``_meta`` and a handler. The table keeps a deterministic order
(the order tools were registered) and knows nothing of the wire or the eras: the
dispatcher turns a :class:`ToolResult` into a ``CallToolResult``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from engram.protocol.eras import ClientInfo, FormRules

__all__ = [
    "CallContext",
    "Caller",
    "Elicitation",
    "ElicitationAnswer",
    "Tool",
    "ToolResult",
    "ToolTable",
]

Era = Literal["legacy", "modern"]


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    """The human's answer to a form dialog."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] = field(default_factory=dict)


class Elicitation(Protocol):
    """Asks the human through the client's form dialog, in whichever era applies."""

    @property
    def available(self) -> bool:
        """Whether a form can be shown: the client declared form elicitation in a
        protocol version that has it, and it is not disabled."""
        ...

    @property
    def forms(self) -> FormRules:
        """What a form may use in the call's protocol version (when ``available``)."""
        ...

    def ask(
        self, key: str, message: str, schema: Mapping[str, Any], *, shown: str = ""
    ) -> ElicitationAnswer:
        """Ask one question; ``shown`` is a digest of what the form displays.

        Legacy era: blocks until the answer (raises ``ElicitationFailed`` on a
        timeout, an error reply or a closed stream). Modern era: returns the answer
        carried by the client's retry, or raises ``InputRequired`` so that the
        dispatcher answers with an ``input_required`` result.
        """
        ...

    def answered(self, key: str, shown: str) -> ElicitationAnswer | None:
        """The answer already given for ``key`` about ``shown``, without asking: the
        2026-07-28 era's retry carries it; otherwise ``None``."""
        ...


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a call comes from, as the server knows it: what the client says of itself
    (``clientInfo``, unverified), the server process's session (one id per
    ``engram-mcp`` process), and the agent id of the host profile that binds the server
    (empty without one). Never anything a tool's arguments say."""

    client: ClientInfo = field(default_factory=ClientInfo)
    session: str = ""
    agent: str = ""


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a tool handler may know about the call besides its arguments."""

    era: Era
    elicitation: Elicitation
    caller: Caller = field(default_factory=Caller)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A handler's answer. ``structured`` becomes ``structuredContent``.

    ``content`` carries the identical JSON copy of ``structured`` (so hosts that read
    only ``content`` see the same data). A result with ``human`` text (the project
    tools: mcp-server.txt, "Structured results") puts that text first, in
    ``content[0].text``, and the JSON copy after it; the governed tools answer with the
    JSON copy alone. ``text`` is the plain-text answer to a bare legacy call (method =
    tool name); it defaults to the JSON copy.

    ``in_content_only`` (the project tools) leaves ``structuredContent`` out: hosts that
    find it give their model that block alone (Claude Code, Codex), so a human text
    beside it would never be read, and both blocks would carry every word twice
    (docs/protocol.md, "Tools": how each block is read).
    """

    structured: Mapping[str, Any]
    is_error: bool = False
    text: str | None = None
    human: str | None = None
    in_content_only: bool = False

    def plain_text(self) -> str:
        """The plain-text rendering of this result."""
        if self.text is not None:
            return self.text
        return json.dumps(self.structured, ensure_ascii=False, separators=(",", ":"))

    def to_wire(self) -> dict[str, Any]:
        """The MCP ``CallToolResult`` body (without era-specific fields)."""
        copy = json.dumps(self.structured, ensure_ascii=False, separators=(",", ":"))
        content = [{"type": "text", "text": copy}]
        if self.human is not None:
            content.insert(0, {"type": "text", "text": self.human})
        if self.in_content_only:
            return {"content": content, "isError": self.is_error}
        # isError is written out on success too: the memory contract says it equals !ok.
        return {
            "content": content,
            "structuredContent": self.structured,
            "isError": self.is_error,
        }


Handler = Callable[[Mapping[str, Any], CallContext], ToolResult]


@dataclass(frozen=True, slots=True)
class Tool:
    """One MCP tool. ``input_schema`` is the closed schema the handler enforces."""

    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    #: ``None``: the tool answers in ``content`` only (no ``structuredContent``).
    output_schema: Mapping[str, Any] | None
    handler: Handler
    read_only: bool = False
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)
    #: Unlisted tools answer calls but never appear in ``tools/list``.
    listed: bool = True

    def describe(self) -> dict[str, Any]:
        """The ``Tool`` object of ``tools/list``."""
        annotations: dict[str, Any] = {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "openWorldHint": self.open_world,
        }
        if self.destructive is not None:
            annotations["destructiveHint"] = self.destructive
        if self.idempotent is not None:
            annotations["idempotentHint"] = self.idempotent
        description: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": dict(self.input_schema),
            "annotations": annotations,
        }
        if self.output_schema is not None:
            # A schema promises structuredContent (tools: "Servers MUST provide structured
            # results that conform to this schema").
            description["outputSchema"] = dict(self.output_schema)
        if self.meta:
            description["_meta"] = dict(self.meta)
        return description


class ToolTable:
    """Tools by name, in registration order."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool {tool.name}")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools
