"""engram's session hook in a host's hook file.

The hook runs ``engram hook <host>`` at session start (upstream-facts.md, "Hooks"):

- Claude Code (``.claude/settings.json``), Codex (``.codex/hooks.json``) and Gemini
  CLI (``.gemini/settings.json``) take matcher groups under ``hooks.SessionStart``:
  ``{"hooks": [{"type": "command", "command": …, "timeout": …}]}`` (Gemini also
  names each hook);
- Cursor (``.cursor/hooks.json``) takes flat items under ``hooks.sessionStart``:
  ``{"command": …, "timeout": …}``.

engram's hook is recognised by its command (``engram hook …``, whatever the path
to ``engram``), so other hooks, even in the same event, are never touched. Linking
again replaces engram's own item when its command changed (a re-pin).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from engram.hosts.files import strip_bom
from engram.hosts.jsonc_edit import MISSING, JsonDocument
from engram.hosts.target import HookSpec

__all__ = ["hook_entry", "installed_hooks", "is_hook_command", "with_hook", "without_hook"]


def is_hook_command(command: object) -> bool:
    """Whether a shell command runs ``engram hook`` (or ``python -m engram hook``)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) >= 2 and Path(words[0]).name == "engram" and words[1] == "hook":
        return True
    return words[1:4] == ["-m", "engram", "hook"]


def _is_engram_item(spec: HookSpec, item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    if spec.style == "flat":
        return is_hook_command(item.get("command"))
    hooks = item.get("hooks")
    return (
        isinstance(hooks, list)
        and bool(hooks)
        and all(isinstance(hook, dict) and is_hook_command(hook.get("command")) for hook in hooks)
    )


def hook_entry(spec: HookSpec, command: str) -> dict[str, Any]:
    """engram's item in the host's session-start list."""
    if spec.style == "flat":
        return {"command": command, "timeout": spec.timeout}
    hook: dict[str, Any] = {"type": "command", "command": command, "timeout": spec.timeout}
    if spec.named:
        hook = {"name": "engram", **hook}
    return {"hooks": [hook]}


def _document(spec: HookSpec, body: str, path: Path) -> JsonDocument:
    return JsonDocument(body, jsonc=spec.format == "jsonc", source=path)


def installed_hooks(spec: HookSpec, text: str | None, path: Path) -> list[Any]:
    """engram's items in the hook file's text (empty when none or no file)."""
    if text is None:
        return []
    items = _document(spec, strip_bom(text)[1], path).get(("hooks", spec.event))
    if items is MISSING or not isinstance(items, list):
        return []
    return [item for item in items if _is_engram_item(spec, item)]


def with_hook(spec: HookSpec, text: str | None, command: str, path: Path) -> str:
    """The hook file with engram's hook running ``command`` (added or re-pinned)."""
    bom, body = strip_bom(text or "")
    document = _document(spec, body, path)
    entry = hook_entry(spec, command)
    if installed_hooks(spec, body, path) == [entry]:
        return text or ""
    if document.root is None:
        for key, value in spec.skeleton.items():
            document = document.set((key,), value)
    document = document.remove_items(
        ("hooks", spec.event), lambda item: _is_engram_item(spec, item)
    )
    return bom + document.append(("hooks", spec.event), entry).text


def without_hook(spec: HookSpec, text: str, path: Path) -> str | None:
    """The hook file without engram's hook; ``None`` when nothing else is left."""
    bom, body = strip_bom(text)
    document = _document(spec, body, path).remove_items(
        ("hooks", spec.event), lambda item: _is_engram_item(spec, item), prune=1
    )
    if document.is_empty() or (spec.skeleton and document.value() == spec.skeleton):
        return None
    return bom + document.text
