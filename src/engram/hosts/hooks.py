"""engram's session hook in a host's hook file.

The hook runs ``engram hook <host>`` at session start (upstream-facts.md, "Hooks"):

- Claude Code (``.claude/settings.json``), Codex (``.codex/hooks.json``) and Gemini
  CLI (``.gemini/settings.json``) take matcher groups under ``hooks.SessionStart``:
  ``{"hooks": [{"type": "command", "command": …, "timeout": …}]}`` (Gemini also
  names each hook);
- Cursor (``.cursor/hooks.json``) takes flat items under ``hooks.sessionStart``:
  ``{"command": …, "timeout": …}``.

engram's hook is recognised by its command (``engram hook …``, whatever the path
to ``engram``), wherever it sits: in a matcher group of its own, or among other
hooks in a group someone wrote. Only engram's hook items are changed or removed; a
group goes only when engram's items were all it held. Linking again re-pins
engram's items where they are: only the program before ``hook`` changes, so the
item keeps its place, its group and its other settings, and is never added twice.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from engram.hosts.files import strip_bom
from engram.hosts.jsonc_edit import JsonDocument, KeyPath
from engram.hosts.target import HookSpec

__all__ = ["hook_entry", "installed_hooks", "is_hook_command", "with_hook", "without_hook"]

#: Where one of engram's hook items is: its index in the event's list and, for
#: matcher groups, its index in the group's ``hooks`` (``None`` for flat items).
Position = tuple[int, int | None]


def _hook_word(words: list[str]) -> int | None:
    """The index of ``hook`` in an ``engram hook`` command line, if it is one."""
    if len(words) >= 2 and Path(words[0]).name == "engram" and words[1] == "hook":
        return 1
    return 3 if words[1:4] == ["-m", "engram", "hook"] else None


def is_hook_command(command: object) -> bool:
    """Whether a shell command runs ``engram hook`` (or ``python -m engram hook``)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return _hook_word(words) is not None


def _is_engram_hook(hook: Any) -> bool:
    return isinstance(hook, dict) and is_hook_command(hook.get("command"))


def _positions(spec: HookSpec, items: list[Any]) -> list[Position]:
    if spec.style == "flat":
        return [(group, None) for group, item in enumerate(items) if _is_engram_hook(item)]
    found: list[Position] = []
    for group, item in enumerate(items):
        hooks = item.get("hooks") if isinstance(item, dict) else None
        if isinstance(hooks, list):
            found += [(group, index) for index, hook in enumerate(hooks) if _is_engram_hook(hook)]
    return found


def _item_path(spec: HookSpec, position: Position) -> KeyPath:
    group, index = position
    base: KeyPath = ("hooks", spec.event, group)
    return base if index is None else (*base, "hooks", index)


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


def _event_items(spec: HookSpec, document: JsonDocument) -> list[Any]:
    items = document.get(("hooks", spec.event))
    return items if isinstance(items, list) else []


def installed_hooks(spec: HookSpec, text: str | None, path: Path) -> list[dict[str, Any]]:
    """engram's hook items in the hook file's text (empty when none or no file).

    An item is the hook itself (``{"type": "command", "command": …}``), not the
    matcher group around it.
    """
    if text is None:
        return []
    document = _document(spec, strip_bom(text)[1], path)
    positions = _positions(spec, _event_items(spec, document))
    return [document.get(_item_path(spec, position)) for position in positions]


def _repinned_command(current: str, command: str) -> str:
    """``current`` running ``command``'s program; its ``hook …`` words kept (a host
    name, ``--budget-tokens``). Both are ``engram hook`` commands."""
    old, new = shlex.split(current), shlex.split(command)
    old_hook, new_hook = _hook_word(old), _hook_word(new)
    assert old_hook is not None
    assert new_hook is not None
    words = [*new[:new_hook], *old[old_hook:]]
    return current if words == old else shlex.join(words)


def with_hook(spec: HookSpec, text: str | None, command: str, path: Path) -> str:
    """The hook file with engram's hook running ``command`` (added, or re-pinned)."""
    bom, body = strip_bom(text or "")
    document = _document(spec, body, path)
    positions = _positions(spec, _event_items(spec, document))
    if not positions:
        if document.root is None:
            for key, value in spec.skeleton.items():
                document = document.set((key,), value)
        return bom + document.append(("hooks", spec.event), hook_entry(spec, command)).text
    for position in positions:
        where = (*_item_path(spec, position), "command")
        current = document.get(where)
        repinned = _repinned_command(current, command)
        if repinned != current:
            document = document.set(where, repinned)
    return bom + document.text


def _removals(spec: HookSpec, items: list[Any], positions: list[Position]) -> list[KeyPath]:
    """What to remove, last first: whole groups engram's items fill, else the items."""
    removals: list[KeyPath] = []
    for group in sorted({group for group, _ in positions}, reverse=True):
        inner = [index for found, index in positions if found == group]
        if inner == [None] or len(inner) == len(items[group]["hooks"]):
            removals.append(("hooks", spec.event, group))
        else:
            removals += [_item_path(spec, (group, index)) for index in reversed(inner)]
    return removals


def without_hook(spec: HookSpec, text: str, path: Path) -> str | None:
    """The hook file without engram's hook items; ``None`` when nothing else is left.

    A group is removed only when engram's items were all it held; the event's
    list and ``hooks`` go too when the group leaves them empty (and uncommented).
    """
    bom, body = strip_bom(text)
    document = _document(spec, body, path)
    items = _event_items(spec, document)
    for where in _removals(spec, items, _positions(spec, items)):
        document = document.remove(where, prune=2 if len(where) == 3 else 0)
    if document.is_empty() or (spec.skeleton and document.value() == spec.skeleton):
        return None
    return bom + document.text
