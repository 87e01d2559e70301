"""Project memory as MCP resources, and the ``propose`` prompt.

``engram://index`` lists one-line cards; ``engram://memory/{id}`` reads the same body
as ``engram load --id`` (and counts as a retrieval); ``resources/list`` gives the
index plus the ``mcp.resource_limit`` most-used memories (configuration, default 20,
0..200).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from engram.errors import ProjectError, ProjectUnavailable, ResourceNotFound, UnknownPrompt
from engram.mcp.project_tools import ProjectTools

if TYPE_CHECKING:
    from engram.project.workspace import ProjectMemory

__all__ = ["PROPOSE_PROMPT", "ProjectPrompts", "ProjectResources"]

INDEX_URI: Final = "engram://index"
MEMORY_PREFIX: Final = "engram://memory/"

PROPOSE_PROMPT: Final = """\
Memory proposal protocol (engram).

1. Record only durable project knowledge: rules the team follows, decisions with their
   reason, conventions, recurring pitfalls and their fix. Never secrets, credentials,
   personal data or unverified claims; never chat transcripts or raw tool output.
2. Search first (engram_search): if a memory already says it, propose an UPDATE of it
   (UPDATE: <id>) instead of a new one.
3. Propose with engram_save (one memory) or engram_save_session (one line each):
   TYPE: rule|skill|workflow|knowledge | TEXT: <one clear statement>
   [| CONTEXT: <why>] [| ORIGIN: <where it came from>] [| DEPENDS_ON: <id>] [| UPDATE: <id>]
4. Show the numbered preview and every Verdict line to the human. Only after the human
   approves, call engram_commit with the approval_token and approve: "all" or the
   numbers they chose. Never call engram_commit on your own, and never auto-approve it.
5. For short-lived task notes use engram_note; they expire and never become durable
   unless the human runs `engram promote <id>`.
"""


class ProjectResources:
    """``engram://index`` and ``engram://memory/{id}``."""

    def __init__(self, project: ProjectTools) -> None:
        self.project = project

    def _memory(self) -> ProjectMemory | None:
        try:
            return self.project.memory()
        except ProjectError:
            return None

    def list_resources(self) -> list[dict[str, Any]]:
        resources: list[dict[str, Any]] = [
            {
                "uri": INDEX_URI,
                "name": "index",
                "title": "Engram memory index",
                "description": "One-line cards of every memory",
                "mimeType": "text/markdown",
            }
        ]
        memory = self._memory()
        if memory is None:
            return resources
        try:
            memory.refresh()
            most_used = memory.most_used(memory.config().resource_limit)
        except ProjectError as error:
            raise ProjectUnavailable(error) from error
        for memory_id in most_used:
            item = memory.index.memory(memory_id)
            if item is not None:
                resources.append(
                    {
                        "uri": MEMORY_PREFIX + memory_id,
                        "name": memory_id,
                        "title": item.title,
                        "mimeType": "text/markdown",
                    }
                )
        return resources

    def list_templates(self) -> list[dict[str, Any]]:
        return [
            {
                "uriTemplate": MEMORY_PREFIX + "{id}",
                "name": "memory",
                "title": "One memory by id",
                "mimeType": "text/markdown",
            }
        ]

    def read(self, uri: str) -> list[dict[str, Any]]:
        memory = self._memory()
        if memory is None:
            raise ResourceNotFound()
        if uri == INDEX_URI:
            memory.refresh()
            cards = [
                f"- {m.id} ({m.type}): {m.title}"
                for m in memory.index.memories()
                if m.tier != "working"
            ]
            text = "\n".join(cards) + "\n" if cards else "(no memories yet)\n"
        elif uri.startswith(MEMORY_PREFIX):
            try:
                text = memory.load(memory_id=uri.removeprefix(MEMORY_PREFIX)).packed
            except ProjectError as error:
                raise ResourceNotFound() from error
        else:
            raise ResourceNotFound()
        return [{"uri": uri, "mimeType": "text/markdown", "text": text}]


class ProjectPrompts:
    """The ``propose`` prompt."""

    def list_prompts(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "propose",
                "title": "Propose project memory",
                "description": "The protocol for proposing memories the human approves.",
            }
        ]

    def get(self, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        if name != "propose":
            raise UnknownPrompt()
        return {
            "description": "The memory proposal protocol",
            "messages": [{"role": "user", "content": {"type": "text", "text": PROPOSE_PROMPT}}],
        }
