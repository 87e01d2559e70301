"""engram's entry in a TOML configuration (Codex ``~/.codex/config.toml``).

The entry is a managed block: the ``[mcp_servers.engram]`` tables rendered by
``tomlkit``, between ``# engram:start`` and ``# engram:end`` (:mod:`.blocks`), appended
at the end of the file. Because the block is whole tables, appending it never
changes the meaning of the lines above it, and removing it gives the file back
byte for byte. ``tomlkit`` parses the file before and after every change: a file it
cannot parse is refused (naming the line), and an edit whose result does not read
back as exactly engram's entry (say, ``mcp_servers`` written as an inline table
above) is refused too rather than written.

An ``[mcp_servers.engram]`` table written by hand (no markers) is engram's entry as
well: it is read, and replaced by a managed block when it must change.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.container import Container

from engram.errors import HostConfigShape, HostConfigUnparseable
from engram.hosts.blocks import TOML, find_block, remove_block, set_block

__all__ = ["read_entry", "remove_entry", "write_entry"]

_NOTE = "# Managed by engram link; engram unlink removes this block."


def _parse(text: str, source: Path | str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except tomlkit.exceptions.TOMLKitError as error:
        line = getattr(error, "line", None)
        where = f"line {line}: " if line else ""
        raise HostConfigUnparseable(
            f"{source}: {where}not valid TOML ({type(error).__name__}); the file was left unchanged"
        ) from None


def _lookup(document: Any, key: Sequence[str], source: Path | str) -> Any:
    node = document
    for depth, part in enumerate(key):
        if not isinstance(node, dict | Container):
            where = ".".join(key[:depth])
            raise HostConfigShape(f"{source}: {where} is not a table")
        if part not in node:
            return None
        node = node[part]
    return node


def read_entry(text: str, key: Sequence[str], source: Path | str) -> dict[str, Any] | None:
    """engram's entry as plain Python values, or ``None``."""
    found = _lookup(_parse(text, source).unwrap(), key, source)
    if found is None:
        return None
    if not isinstance(found, dict):
        raise HostConfigShape(f"{source}: {'.'.join(key)} is not a table")
    return found


def _render(key: Sequence[str], entry: dict[str, Any]) -> str:
    nested: Any = entry
    for part in reversed(key):
        nested = {part: nested}
    return _NOTE + "\n" + tomlkit.dumps(nested).strip()


def _without_unmanaged(text: str, key: Sequence[str], source: Path | str) -> str:
    document = _parse(text, source)
    parent = _lookup(document, key[:-1], source)
    if parent is None or key[-1] not in parent:
        return text
    del parent[key[-1]]
    return document.as_string()


def write_entry(text: str, key: Sequence[str], entry: dict[str, Any], source: Path | str) -> str:
    """``text`` with engram's managed block holding ``entry``."""
    _parse(text, source)
    if find_block(text, TOML, source) is None:
        text = _without_unmanaged(text, key, source)
    result = set_block(text, _render(key, entry), TOML, source)
    try:
        readable = read_entry(result, key, source) == entry
    except HostConfigUnparseable:  # the appended tables clash with the file's own
        readable = False
    if not readable:
        raise HostConfigShape(
            f"{source}: engram's [{'.'.join(key)}] table cannot be added here "
            f"(is {key[0]} written as an inline table?); the file was left unchanged"
        )
    return result


def remove_entry(text: str, key: Sequence[str], source: Path | str) -> str:
    """``text`` without engram's block (or its hand-written table)."""
    _parse(text, source)
    if find_block(text, TOML, source) is not None:
        return remove_block(text, TOML, source)
    return _without_unmanaged(text, key, source)
