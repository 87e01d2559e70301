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
As with MCP entries, settings someone changed (a matcher, a timeout) are kept and
reported (:func:`kept_settings`); ``--force`` resets engram's hook to its own item.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from engram.hosts.entries import differing_keys
from engram.hosts.files import strip_bom
from engram.hosts.jsonc_edit import JsonDocument, KeyPath
from engram.hosts.target import HookSpec

__all__ = [
    "hook_entry",
    "installed_hooks",
    "is_hook_command",
    "kept_settings",
    "with_hook",
    "without_hook",
]

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


def _settings(spec: HookSpec, items: list[Any], positions: list[Position]) -> list[str]:
    """The keys where engram's items (and their groups) differ from engram's own
    item, the command aside: what someone changed. Sharing a group is not one."""
    own = hook_entry(spec, "")
    changed: list[str] = []
    for group, index in positions:
        item = items[group] if index is None else items[group]["hooks"][index]
        model = own if index is None else own["hooks"][0]
        changed += differing_keys(item, model, ignore=("command",))
        if index is not None:
            changed += [key for key in items[group] if key != "hooks"]
    return list(dict.fromkeys(changed))


def kept_settings(spec: HookSpec, text: str | None, path: Path) -> list[str]:
    """The settings of engram's hook items that differ from engram's (``matcher``,
    ``timeout``, …), which linking again keeps; empty when there are none."""
    if text is None:
        return []
    document = _document(spec, strip_bom(text)[1], path)
    items = _event_items(spec, document)
    return _settings(spec, items, _positions(spec, items))


def with_hook(
    spec: HookSpec, text: str | None, command: str, path: Path, *, force: bool = False
) -> str:
    """The hook file with engram's hook running ``command`` (added, or re-pinned).

    ``force`` resets engram's hook when someone changed it, or when it is installed
    more than once: its items are removed and engram's own item is appended.
    """
    bom, body = strip_bom(text or "")
    document = _document(spec, body, path)
    items = _event_items(spec, document)
    positions = _positions(spec, items)
    if force and (len(positions) > 1 or _settings(spec, items, positions)):
        # Containers stay (no pruning): engram's item goes straight back into them.
        document = _without_items(spec, document, items, positions, prune=False)
        positions = []
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


def _without_items(
    spec: HookSpec,
    document: JsonDocument,
    items: list[Any],
    positions: list[Position],
    *,
    prune: bool,
) -> JsonDocument:
    """``document`` without engram's items (last first, so that indices hold):
    a group they fill goes whole; ``prune`` also removes containers left empty."""
    for group in sorted({group for group, _ in positions}, reverse=True):
        inner = [index for found, index in positions if found == group]
        if inner == [None] or len(inner) == len(items[group]["hooks"]):
            where = ("hooks", spec.event, group)
            document = document.remove(where, prune=2 if prune else 0)
            continue
        for index in reversed(inner):
            document = document.remove(_item_path(spec, (group, index)))
    return document


def without_hook(spec: HookSpec, text: str, path: Path) -> str | None:
    """The hook file without engram's hook items; ``None`` when nothing else is left.

    A group is removed only when engram's items were all it held; the event's
    list and ``hooks`` go too when the group leaves them empty (and uncommented).
    """
    bom, body = strip_bom(text)
    document = _document(spec, body, path)
    items = _event_items(spec, document)
    document = _without_items(spec, document, items, _positions(spec, items), prune=True)
    if document.is_empty() or (spec.skeleton and document.value() == spec.skeleton):
        return None
    return bom + document.text
