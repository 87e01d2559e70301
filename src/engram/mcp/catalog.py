"""Resource and prompt tables: the seams the dispatcher routes ``resources/*`` and
``prompts/*`` to. Each face (project memory, governed memory) supplies its own."""

from __future__ import annotations

from typing import Any, Protocol

from engram.errors import ResourceNotFound, UnknownPrompt

__all__ = ["EmptyPrompts", "EmptyResources", "PromptCatalog", "ResourceCatalog"]


class ResourceCatalog(Protocol):
    """Resources by URI."""

    def list_resources(self) -> list[dict[str, Any]]:
        """``Resource`` objects for ``resources/list``."""
        ...

    def list_templates(self) -> list[dict[str, Any]]:
        """``ResourceTemplate`` objects for ``resources/templates/list``."""
        ...

    def read(self, uri: str) -> list[dict[str, Any]]:
        """``contents`` for ``resources/read``; raises ``ResourceNotFound``."""
        ...


class PromptCatalog(Protocol):
    """Prompts by name."""

    def list_prompts(self) -> list[dict[str, Any]]:
        """``Prompt`` objects for ``prompts/list``."""
        ...

    def get(self, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        """A ``GetPromptResult`` body; raises ``UnknownPrompt``."""
        ...


class EmptyResources:
    """No resources."""

    def list_resources(self) -> list[dict[str, Any]]:
        return []

    def list_templates(self) -> list[dict[str, Any]]:
        return []

    def read(self, uri: str) -> list[dict[str, Any]]:
        raise ResourceNotFound()


class EmptyPrompts:
    """No prompts."""

    def list_prompts(self) -> list[dict[str, Any]]:
        return []

    def get(self, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        raise UnknownPrompt()
