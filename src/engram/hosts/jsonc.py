"""A JSON / JSONC reader that keeps where every value sits in the text.

Host configuration files are edited by splicing text, never by re-serialising the
whole document, so that comments, key order, indentation, line endings and every
byte engram does not own survive (see :mod:`engram.hosts.jsonc_edit`). This module
only reads: it turns text into a small syntax tree of spans (:class:`Node`,
:class:`Entry`) and converts a node to Python values.

Two dialects: strict JSON (RFC 8259) and JSONC, which adds ``//`` and ``/* */``
comments and trailing commas (the dialect of VS Code, Gemini CLI and OpenCode
settings). It deliberately does not accept JSON5 (unquoted keys, single quotes,
hexadecimal numbers): a host that reads JSONC would refuse those too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from engram.errors import HostConfigUnparseable

__all__ = ["Entry", "Node", "line_and_column", "parse", "to_python"]

Kind = Literal["object", "array", "string", "number", "literal"]

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = ("true", "false", "null")
_WHITESPACE = " \t\r\n"
#: Configuration files are shallow; a deeper one is refused rather than risking
#: Python's recursion limit.
MAX_DEPTH = 128


@dataclass(frozen=True, slots=True)
class Entry:
    """One member of an object (``key`` set) or one item of an array.

    ``start`` is where the entry begins (its key, or its value for array items);
    ``comma`` is the offset of the comma that follows the value, if any.
    """

    start: int
    key: str | None
    value: Node
    comma: int | None


@dataclass(frozen=True, slots=True)
class Node:
    """A value and its span ``[start, end)`` in the text."""

    kind: Kind
    start: int
    end: int
    entries: tuple[Entry, ...] = ()

    def member(self, key: str) -> Entry | None:
        """The last member named ``key`` (JSON parsers keep the last duplicate)."""
        found = [entry for entry in self.entries if entry.key == key]
        return found[-1] if found else None

    def members(self, key: str) -> list[Entry]:
        """Every member named ``key`` (more than one means duplicated keys)."""
        return [entry for entry in self.entries if entry.key == key]


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset``."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


class _Syntax(Exception):
    """Internal: where and why the text stopped being valid."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(reason)
        self.offset = offset
        self.reason = reason


def parse(text: str, *, jsonc: bool, source: Path | str = "<text>") -> Node:
    """Parse a whole document; raises :class:`HostConfigUnparseable` naming the line."""
    parser = _Parser(text, jsonc)
    try:
        parser.skip()
        root = parser.value(0)
        parser.skip()
        if parser.pos != len(text):
            raise _Syntax(parser.pos, "unexpected text after the top-level value")
    except _Syntax as error:
        line, column = line_and_column(text, error.offset)
        dialect = "JSONC" if jsonc else "JSON"
        raise HostConfigUnparseable(
            f"{source}: line {line}, column {column}: not valid {dialect} ({error.reason}); "
            "the file was left unchanged"
        ) from None
    return root


def to_python(text: str, node: Node) -> Any:
    """The Python value of ``node`` (objects keep the last duplicate key, like JSON)."""
    if node.kind == "object":
        return {entry.key: to_python(text, entry.value) for entry in node.entries}
    if node.kind == "array":
        return [to_python(text, entry.value) for entry in node.entries]
    return json.loads(text[node.start : node.end])


class _Parser:
    """Recursive descent over the text; positions are string offsets."""

    def __init__(self, text: str, jsonc: bool) -> None:
        self.text = text
        self.jsonc = jsonc
        self.pos = 0

    def skip(self) -> None:
        """Skip whitespace and, in JSONC, comments."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in _WHITESPACE:
                self.pos += 1
            elif self.jsonc and text.startswith("//", self.pos):
                newline = text.find("\n", self.pos)
                self.pos = len(text) if newline < 0 else newline
            elif self.jsonc and text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                if close < 0:
                    raise _Syntax(self.pos, "unterminated /* comment")
                self.pos = close + 2
            else:
                return

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise _Syntax(self.pos, "nested too deeply")
        if self.pos >= len(self.text):
            raise _Syntax(self.pos, "unexpected end of file")
        char = self.text[self.pos]
        if char == "{":
            return self.container("object", "}", depth)
        if char == "[":
            return self.container("array", "]", depth)
        if char == '"':
            start = self.pos
            self.pos = self.string_end(start)
            return Node("string", start, self.pos)
        return self.scalar()

    def scalar(self) -> Node:
        start = self.pos
        for literal in _LITERALS:
            if self.text.startswith(literal, start):
                self.pos = start + len(literal)
                return Node("literal", start, self.pos)
        match = _NUMBER.match(self.text, start)
        if match is None:
            raise _Syntax(start, f"unexpected character {self.text[start]!r}")
        self.pos = match.end()
        return Node("number", start, self.pos)

    def string_end(self, start: int) -> int:
        """Offset just after the string starting at ``start`` (validated like JSON)."""
        text = self.text
        pos = start + 1
        while pos < len(text):
            char = text[pos]
            if char == '"':
                try:
                    json.loads(text[start : pos + 1])
                except json.JSONDecodeError:
                    raise _Syntax(start, "invalid escape in string") from None
                return pos + 1
            if char == "\\":
                pos += 2
                continue
            if ord(char) < 0x20:
                raise _Syntax(pos, "control character in string")
            pos += 1
        raise _Syntax(start, "unterminated string")

    def container(self, kind: Kind, close: str, depth: int) -> Node:
        start = self.pos
        self.pos += 1
        entries: list[Entry] = []
        while True:
            self.skip()
            if self.pos >= len(self.text):
                raise _Syntax(start, f"{kind} is never closed")
            if self.text[self.pos] == close:
                break
            if entries and entries[-1].comma is None:
                raise _Syntax(self.pos, f"expected ',' or {close!r}")
            entries.append(self.entry(kind, depth))
        if entries and entries[-1].comma is not None and not self.jsonc:
            raise _Syntax(entries[-1].comma, "trailing comma")
        self.pos += 1
        return Node(kind, start, self.pos, tuple(entries))

    def entry(self, kind: Kind, depth: int) -> Entry:
        start = self.pos
        key: str | None = None
        if kind == "object":
            if self.text[self.pos] != '"':
                raise _Syntax(self.pos, "expected a double-quoted key")
            self.pos = self.string_end(start)
            key = json.loads(self.text[start : self.pos])
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise _Syntax(self.pos, "expected ':'")
            self.pos += 1
            self.skip()
        value = self.value(depth + 1)
        self.skip()
        comma: int | None = None
        if self.text.startswith(",", self.pos):
            comma = self.pos
            self.pos += 1
        return Entry(start, key, value, comma)
