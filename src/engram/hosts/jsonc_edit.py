"""Edit one entry of a JSON / JSONC document by splicing its text.

Every operation parses the document (:mod:`engram.hosts.jsonc`), finds the span of
the entry it owns, and replaces only that span plus the separators around it: a
comma, a newline and the entry's indentation. Everything else (comments, other
keys, key order, blank lines, CRLF line endings, odd indentation) is kept byte for
byte. Insertion and removal are exact inverses for the layouts insertion produces,
so ``remove(add(x)) == x`` (a property test holds it).

The new entry follows the document's own style: its indentation unit, its line
ending, a trailing comma when the container already ends with one, and a compact
one-line form when the document is a single line.

Paths are tuples of object keys and array indices (``("hooks", "SessionStart", 0,
"hooks", 1)``); an index reaches an item that exists, a key may also be created.
Removing an entry also removes the containers on its path that it leaves empty
(``prune``), and :meth:`JsonDocument.is_empty` tells the caller when a file has
nothing left but ``{}``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.errors import HostConfigShape
from engram.hosts.jsonc import Entry, Node, line_and_column, parse, to_python

__all__ = ["MISSING", "JsonDocument", "KeyPath"]

MISSING: Any = object()
#: Object keys and array indices, from the top level down.
KeyPath = Sequence[str | int]


def _dotted(path: KeyPath) -> str:
    return ".".join(str(key) for key in path)


def _keys(path: KeyPath, depth: int, source: Path | str) -> list[str]:
    """The missing part of ``path`` (from ``depth``) as object keys: what
    :meth:`JsonDocument.set` can create (an array index must already exist)."""
    keys = [key for key in path[depth:] if isinstance(key, str)]
    if len(keys) != len(path) - depth:
        raise HostConfigShape(f"{source}: {_dotted(path)} is not in the document")
    return keys


@dataclass(frozen=True, slots=True)
class _Splice:
    start: int
    end: int
    text: str


def _apply(text: str, splices: Sequence[_Splice]) -> str:
    for splice in sorted(splices, key=lambda s: s.start, reverse=True):
        text = text[: splice.start] + splice.text + text[splice.end :]
    return text


class JsonDocument:
    """An immutable JSON or JSONC document; every edit returns a new document."""

    def __init__(self, text: str, *, jsonc: bool, source: Path | str = "<text>") -> None:
        self.text = text
        self.jsonc = jsonc
        self.source = source
        self.root = parse(text, jsonc=jsonc, source=source) if text.strip() else None
        if self.root is not None and self.root.kind != "object":
            raise HostConfigShape(f"{source}: the top-level value is not an object")

    def _with(self, text: str) -> JsonDocument:
        return JsonDocument(text, jsonc=self.jsonc, source=self.source)

    # --- reading -----------------------------------------------------------------

    def value(self) -> dict[str, Any]:
        """The whole document as Python values (``{}`` for an empty file)."""
        return {} if self.root is None else dict(to_python(self.text, self.root))

    def get(self, path: KeyPath) -> Any:
        """The value at ``path``, or :data:`MISSING`."""
        entry = self._find(path)
        return MISSING if entry is None else to_python(self.text, entry.value)

    def is_empty(self) -> bool:
        """True when nothing but ``{}`` (and whitespace) is left."""
        return self.root is None or self.text.strip() == "{}"

    def _object(self, node: Node, path: KeyPath, kind: str = "object") -> Node:
        if node.kind != kind:
            line, _ = line_and_column(self.text, node.start)
            where = _dotted(path) or "the top level"
            noun = "an object" if kind == "object" else "a list"
            raise HostConfigShape(f"{self.source}: line {line}: {where} is not {noun}")
        return node

    def _find(self, path: KeyPath) -> Entry | None:
        node = self.root
        entry: Entry | None = None
        for depth, key in enumerate(path):
            if node is None:
                return None
            if isinstance(key, int):
                items = self._object(node, path[:depth], "array").entries
                entry = items[key] if 0 <= key < len(items) else None
                node = entry.value if entry is not None else None
                continue
            found = self._object(node, path[:depth]).members(key)
            if len(found) > 1:
                line, _ = line_and_column(self.text, found[-1].start)
                where = _dotted(path[: depth + 1])
                raise HostConfigShape(f"{self.source}: line {line}: {where} is duplicated")
            entry = found[0] if found else None
            node = entry.value if entry is not None else None
        return entry

    # --- editing -----------------------------------------------------------------

    def set(self, path: KeyPath, value: Any) -> JsonDocument:
        """Set ``path`` to ``value``, creating the objects on the way."""
        if self.root is None:
            return self._with(_new_document(_keys(path, 0, self.source), value, self.text))
        parent = self.root
        for depth in range(len(path)):
            entry = self._find(path[: depth + 1])
            if entry is None:
                first, *rest = _keys(path, depth, self.source)
                nested: Any = value
                for key in reversed(rest):
                    nested = {key: nested}
                return self._insert(self._object(parent, path[:depth]), first, nested)
            parent = entry.value
        return self._replace(parent, value)

    def append(self, path: KeyPath, item: Any) -> JsonDocument:
        """Append ``item`` to the array at ``path`` (created when missing)."""
        entry = self._find(path)
        if entry is None:
            return self.set(path, [item])
        if entry.value.kind != "array":
            line, _ = line_and_column(self.text, entry.start)
            raise HostConfigShape(f"{self.source}: line {line}: {_dotted(path)} is not a list")
        return self._insert(entry.value, None, item)

    def remove(self, path: KeyPath, *, prune: int = 0) -> JsonDocument:
        """Remove ``path``; then remove up to ``prune`` parents it leaves empty."""
        if self._find(path) is None:
            return self
        depth = len(path)
        while prune > 0 and depth > 1:
            parent = self._find(path[: depth - 1])
            if parent is None or not _holds_only(self.text, parent.value):
                break
            depth, prune = depth - 1, prune - 1
        holder = self._find(path[: depth - 1]) if depth > 1 else None
        container = self.root if holder is None else holder.value
        entry = self._find(path[:depth])
        assert container is not None
        assert entry is not None
        return self._with(_apply(self.text, _removal(self.text, container, entry)))

    def _replace(self, node: Node, value: Any) -> JsonDocument:
        rendered = _render(value, _line_indent(self.text, node.start), _style(self.text))
        return self._with(self.text[: node.start] + rendered + self.text[node.end :])

    def _insert(self, container: Node, key: str | None, value: Any) -> JsonDocument:
        return self._with(_apply(self.text, _insertion(self.text, container, key, value)))


# --- layout ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Style:
    newline: str
    unit: str
    multiline: bool


def _style(text: str) -> _Style:
    newline = "\r\n" if "\r\n" in text else "\n"
    indents = [
        line[: len(line) - len(line.lstrip(" \t"))]
        for line in text.splitlines()
        if line.strip() and line[:1] in " \t"
    ]
    if any(indent.startswith("\t") for indent in indents):
        unit = "\t"
    else:
        unit = " " * min((len(indent) for indent in indents), default=2)
    return _Style(newline, unit if 0 < len(unit) <= 8 else "  ", "\n" in text.strip())


def _render(value: Any, indent: str, style: _Style) -> str:
    if not style.multiline or not isinstance(value, dict | list) or not value:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    text = json.dumps(value, ensure_ascii=False, indent=style.unit)
    return text.replace("\n", style.newline + indent)


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _line_indent(text: str, offset: int) -> str:
    start = _line_start(text, offset)
    line = text[start:offset]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _starts_line(text: str, offset: int) -> bool:
    return not text[_line_start(text, offset) : offset].strip(" \t")


def _line_end(text: str, pos: int) -> int:
    """After ``pos``, skip spaces and same-line comments; stop before a newline."""
    while pos < len(text):
        rest = text[pos:]
        if rest[0] in " \t":
            pos += 1
        elif rest.startswith("//"):
            newline = text.find("\n", pos)
            end = len(text) if newline < 0 else newline
            return end - 1 if text[end - 1 : end] == "\r" else end
        elif rest.startswith("/*") and "\n" not in rest[: rest.find("*/") + 2]:
            pos += rest.find("*/") + 2
        else:
            break
    return pos


def _entry_text(key: str | None, value: Any, indent: str, style: _Style) -> str:
    rendered = _render(value, indent, style)
    if key is None:
        return rendered
    return json.dumps(key, ensure_ascii=False) + ": " + rendered


def _new_document(path: Sequence[str], value: Any, old: str) -> str:
    nested: Any = value
    for key in reversed(path):
        nested = {key: nested}
    style = _Style("\r\n" if "\r\n" in old else "\n", "  ", True)
    return _render(nested, "", style) + style.newline


def _insertion(text: str, node: Node, key: str | None, value: Any) -> list[_Splice]:
    """Splices that add ``key: value`` (or an array item) as ``node``'s last entry."""
    style = _style(text)
    if not node.entries:
        return [_into_empty(text, node, key, value, style)]
    last = node.entries[-1]
    after = last.comma + 1 if last.comma is not None else last.value.end
    if "\n" not in text[node.start : node.end]:
        entry = _entry_text(key, value, "", style)
        if last.comma is not None:
            return [_Splice(after, after, " " + entry + ",")]
        return [_Splice(after, after, ", " + entry)]
    indent = (
        _line_indent(text, last.start)
        if _starts_line(text, last.start)
        else _line_indent(text, node.start) + style.unit
    )
    entry = style.newline + indent + _entry_text(key, value, indent, style)
    end = _line_end(text, after)
    if last.comma is not None:
        return [_Splice(end, end, entry + ",")]
    if end == last.value.end:
        return [_Splice(end, end, "," + entry)]
    return [_Splice(last.value.end, last.value.end, ","), _Splice(end, end, entry)]


def _into_empty(text: str, node: Node, key: str | None, value: Any, style: _Style) -> _Splice:
    if not style.multiline:
        return _Splice(node.start + 1, node.start + 1, _entry_text(key, value, "", style))
    base = _line_indent(text, node.start)
    inner = base + style.unit
    body = style.newline + inner + _entry_text(key, value, inner, style) + style.newline
    interior = text[node.start + 1 : node.end - 1]
    # Comments inside an otherwise empty container stay before the new entry.
    keep = node.start + 1 + len(interior.rstrip(" \t\r\n"))
    return _Splice(keep, node.end - 1, body + base)


def _newline_before(text: str, offset: int) -> int:
    """Where the line break before the line of ``offset`` starts (``\\r\\n`` or ``\\n``)."""
    start = _line_start(text, offset) - 1
    return start - 1 if text[start - 1 : start] == "\r" else start


def _holds_only(text: str, node: Node) -> bool:
    """True when ``node`` has one entry and nothing else (no comment) inside it."""
    if len(node.entries) != 1:
        return False
    entry = node.entries[0]
    end = entry.comma + 1 if entry.comma is not None else entry.value.end
    return not (text[node.start + 1 : entry.start] + text[end : node.end - 1]).strip()


def _removal(text: str, node: Node, entry: Entry) -> list[_Splice]:
    """Splices that remove ``entry`` and the separators insertion put around it."""
    index = node.entries.index(entry)
    end = entry.comma + 1 if entry.comma is not None else entry.value.end
    if len(node.entries) == 1:
        interior = text[node.start + 1 : entry.start] + text[end : node.end - 1]
        if not interior.strip():
            return [_Splice(node.start + 1, node.end - 1, "")]
        own_line = _starts_line(text, entry.start)
        return [_Splice(_newline_before(text, entry.start) if own_line else entry.start, end, "")]
    if index == len(node.entries) - 1:
        return _remove_last(text, node.entries[index - 1], entry, end)
    if not _starts_line(text, entry.start):
        return [_Splice(entry.start, node.entries[index + 1].start, "")]
    stop = end
    while stop < len(text) and text[stop] in " \t":
        stop += 1
    if text.startswith("\r\n", stop):
        stop += 2
    elif text.startswith("\n", stop):
        stop += 1
    else:
        stop = end
    return [_Splice(_line_start(text, entry.start), stop, "")]


def _remove_last(text: str, previous: Entry, entry: Entry, end: int) -> list[_Splice]:
    if _starts_line(text, entry.start):
        splices = [_Splice(_newline_before(text, entry.start), end, "")]
        if entry.comma is None and previous.comma is not None:
            splices.append(_Splice(previous.comma, previous.comma + 1, ""))
        return splices
    if entry.comma is not None and previous.comma is not None:
        return [_Splice(previous.comma + 1, end, "")]
    return [_Splice(previous.value.end, entry.value.end, "")]
