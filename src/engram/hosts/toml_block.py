"""engram's entry in a TOML configuration (Codex ``config.toml``).

engram's part of the file is exactly its table, ``[mcp_servers.engram]``, and that
table's sub-tables (``[mcp_servers.engram.env]``,
``[mcp_servers.engram.tools.engram_commit]``, …): no comment marks it. Codex rewrites
the whole ``[mcp_servers]`` group whenever ``codex mcp add`` or ``remove`` changes it,
dropping every comment attached to those tables, and its other writers (``codex
features enable``, ``codex exec --trust``) append their tables at the end of the
file; a table is the one thing all of them keep (docs/hosts.md, "Codex").

- A new entry is appended at the end of the file after one blank line, so removing
  it gives the file back byte for byte.
- An existing entry is replaced where it stands (its first table's place); its
  other tables, if someone spread them over the file, are removed.
- Removing takes engram's tables and one blank line that separated them away;
  every other line stays as it was.

engram's tables are found by their header lines (:func:`_scan` reads the file's
lines as TOML does: a ``[`` inside a string or an array value is not a header); the
lines from an engram header to the last line of its values are engram's.
``tomlkit`` parses the file before and after every change: a file it cannot parse is
refused (naming the line), and a result whose tables, read back, differ from the
file's in anything but engram's entry is refused rather than written.

Files written by engram 0.1 carried the entry between ``# engram:start`` and
``# engram:end``, with a ``# Managed by engram link`` line. Those three comment lines
are engram's own leftovers, wherever Codex left them: every write removes them (and
only them: a table between them is someone's, Codex put it there). An entry written
as an inline table or dotted keys is engram's entry too: ``tomlkit`` removes it, and
the table is written at the end of the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit
import tomlkit.exceptions
from tomlkit.container import Container

from engram.errors import HostConfigShape, HostConfigUnparseable

__all__ = ["LEGACY_MARKERS", "read_entry", "read_values", "remove_entry", "write_entry"]

#: The comment lines engram 0.1 wrote around its entry (a managed block).
LEGACY_MARKERS = frozenset(
    {
        "# engram:start",
        "# engram:end",
        "# Managed by engram link; engram unlink removes this block.",
    }
)

Kind = Literal["blank", "comment", "header", "value", "continued"]


@dataclass(frozen=True, slots=True)
class _Line:
    """One line of a TOML file: what starts it, and a header's table path."""

    kind: Kind
    path: tuple[str, ...] = ()


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


def read_values(text: str, source: Path | str) -> dict[str, Any]:
    """The whole file as plain Python values."""
    values: dict[str, Any] = _parse(text, source).unwrap()
    return values


def read_entry(text: str, key: Sequence[str], source: Path | str) -> dict[str, Any] | None:
    """engram's entry as plain Python values, or ``None``."""
    found = _lookup(_parse(text, source).unwrap(), key, source)
    if found is None:
        return None
    if not isinstance(found, dict):
        raise HostConfigShape(f"{source}: {'.'.join(key)} is not a table")
    return found


# --- Reading lines as TOML does -----------------------------------------------------


def _skip_string(line: str, start: int) -> int:
    """The index after the one-line string that opens at ``start``."""
    quote, index = line[start], start + 1
    while index < len(line):
        if quote == '"' and line[index] == "\\":
            index += 2
        elif line[index] == quote:
            return index + 1
        else:
            index += 1
    return index


class _Lexer:
    """Where a line starts: inside a multi-line string or array, or at a statement.

    Only valid TOML is ever scanned (``tomlkit`` parsed it first), so the lexer
    tracks just what decides that: open multi-line strings and bracket depth.
    """

    def __init__(self) -> None:
        self.string: str | None = None
        self.depth = 0

    def classify(self, line: str) -> _Line:
        stripped = line.strip()
        if self.string is not None or self.depth > 0:
            self._advance(line)
            return _Line("continued")
        if not stripped:
            return _Line("blank")
        if stripped.startswith("#"):
            return _Line("comment")
        if stripped.startswith("["):
            return _Line("header", _header_path(stripped))
        self._advance(line)
        return _Line("value")

    def _advance(self, line: str) -> None:
        index = 0
        while index < len(line):
            char = line[index]
            if self.string is not None:
                index = self._in_string(line, index)
            elif char == "#":
                return
            elif char in "\"'":
                if line.startswith(char * 3, index):
                    self.string, index = char * 3, index + 3
                else:
                    index = _skip_string(line, index)
            else:
                self.depth += (char in "[{") - (char in "]}")
                index += 1

    def _in_string(self, line: str, index: int) -> int:
        assert self.string is not None
        if self.string == '"""' and line[index] == "\\":
            return index + 2
        if not line.startswith(self.string, index):
            return index + 1
        index += 3
        while index < len(line) and line[index] == self.string[0]:
            index += 1  # up to two quotes before the closing three belong to the string
        self.string = None
        return index


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key_part(quoted: str) -> str:
    if quoted.startswith("'"):
        return quoted[1:-1]
    try:
        part: str = json.loads(quoted)  # TOML's basic-string escapes are JSON's, mostly
    except ValueError:  # \U0001F600 and the like: let tomlkit read it
        part = tomlkit.parse(f"k = {quoted}")["k"].unwrap()
    return part


def _header_path(stripped: str) -> tuple[str, ...]:
    """The table path a ``[a."b".c]`` or ``[[a.b]]`` header names."""
    path: list[str] = []
    index = 2 if stripped.startswith("[[") else 1
    while True:
        while stripped[index] in " \t":
            index += 1
        if stripped[index] in "\"'":
            end = _skip_string(stripped, index)
            path.append(_key_part(stripped[index:end]))
        else:
            match = _BARE_KEY.match(stripped, index)
            assert match is not None  # tomlkit parsed the file: the header is valid
            end = match.end()
            path.append(match.group())
        index = end
        while stripped[index] in " \t":
            index += 1
        if stripped[index] != ".":
            return tuple(path)
        index += 1


def _scan(lines: Sequence[str]) -> list[_Line]:
    lexer = _Lexer()
    return [lexer.classify(line) for line in lines]


def _regions(lines: Sequence[_Line], key: Sequence[str]) -> list[tuple[int, int]]:
    """The line spans of engram's tables: from each run of engram headers to the last
    line of their values. Comments and blank lines after that belong to what follows."""
    regions: list[tuple[int, int]] = []
    start: int | None = None
    end = 0
    ours = False
    for number, line in enumerate(lines):
        if line.kind == "header":
            ours = line.path[: len(key)] == tuple(key)
            if ours:
                start = number if start is None else start
                end = number + 1
            elif start is not None:
                regions.append((start, end))
                start = None
        elif line.kind in ("value", "continued") and ours:
            end = number + 1
    if start is not None:
        regions.append((start, end))
    return regions


def _with_separator(lines: Sequence[_Line], start: int, end: int) -> tuple[int, int]:
    """``start, end`` widened by the blank line that separated engram's tables from
    the file: the one before them (as :func:`write_entry` appends them), or, at the
    top of the file, the one after."""
    before = start > 0 and lines[start - 1].kind == "blank"
    after = end < len(lines) and lines[end].kind == "blank"
    if before and (after or end == len(lines)):
        return start - 1, end
    if start == 0 and after:
        return start, end + 1
    return start, end


# --- Editing ------------------------------------------------------------------------


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _read_lines(text: str) -> tuple[list[str], list[_Line]]:
    """``text``'s lines and what each is, without engram 0.1's marker comment lines
    (never a line inside a string)."""
    lines = _split_lines(text)
    kept = [
        (line, read)
        for line, read in zip(lines, _scan(lines), strict=True)
        if not (read.kind == "comment" and line.strip() in LEGACY_MARKERS)
    ]
    return [line for line, _ in kept], [read for _, read in kept]


def _render(key: Sequence[str], entry: dict[str, Any], newline: str) -> list[str]:
    nested: Any = entry
    for part in reversed(key):
        nested = {part: nested}
    return [line.rstrip("\r\n") + newline for line in _split_lines(tomlkit.dumps(nested).strip())]


def _split_lines(text: str) -> list[str]:
    """``text``'s lines with their ends. Only ``\n`` ends a line, as in TOML:
    ``str.splitlines`` also breaks at ``\x85``, ``\u2028`` and others, which a TOML
    string may hold."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _splice(
    lines: list[str], scanned: list[_Line], key: Sequence[str], replacement: list[str] | None
) -> bool:
    """Remove engram's tables from ``lines``, or replace the first by ``replacement``
    lines; whether there were any."""
    regions = _regions(scanned, key)
    for number, region in reversed(list(enumerate(regions))):
        if number == 0 and replacement is not None:
            lines[region[0] : region[1]] = replacement
        else:
            start, end = _with_separator(scanned, *region)
            del lines[start:end]
            del scanned[start:end]
    return bool(regions)


def _without_inline(text: str, key: Sequence[str], source: Path | str) -> str:
    """``text`` without an entry written as an inline table or dotted keys."""
    document = _parse(text, source)
    parent = _lookup(document, key[:-1], source)
    if parent is None or key[-1] not in parent:
        return text
    del parent[key[-1]]
    return document.as_string()


def _others(values: dict[str, Any], key: Sequence[str]) -> dict[str, Any]:
    """``values`` without engram's entry, and without the tables on its path that its
    removal leaves empty (changes ``values``)."""
    parents: list[Any] = [values]
    for part in key[:-1]:
        node = parents[-1].get(part)
        if not isinstance(node, dict):
            return values
        parents.append(node)
    parents[-1].pop(key[-1], None)
    for depth in range(len(key) - 1, 0, -1):
        if not parents[depth]:
            del parents[depth - 1][key[depth - 1]]
    return values


def _checked(
    before: dict[str, Any],
    after: str,
    key: Sequence[str],
    entry: dict[str, Any] | None,
    source: Path | str,
) -> str:
    """``after``, once it reads back as ``entry``, and as ``before`` (the file's
    values) in everything else."""
    dotted = ".".join(key)
    try:
        values: dict[str, Any] = tomlkit.parse(after).unwrap()
        readable = _lookup(values, key, source) == entry
    except tomlkit.exceptions.TOMLKitError:  # the appended tables clash with the file's own
        readable = False
    if not readable:
        raise HostConfigShape(
            f"{source}: engram's [{dotted}] table cannot be added here "
            f"(is {key[0]} written as an inline table?); the file was left unchanged"
        )
    if _others(values, key) != _others(before, key):
        raise HostConfigShape(
            f"{source}: engram cannot change its [{dotted}] table here without changing "
            "your other settings; the file was left unchanged"
        )
    return after


def write_entry(text: str, key: Sequence[str], entry: dict[str, Any], source: Path | str) -> str:
    """``text`` with engram's ``[key]`` tables holding ``entry``: replaced where they
    stand, or appended at the end of the file."""
    before: dict[str, Any] = _parse(text, source).unwrap()
    newline = _newline(text)
    table = _render(key, entry, newline)
    lines, scanned = _read_lines(text)
    replaced = _splice(lines, scanned, key, table)
    result = "".join(lines)
    if not replaced:
        if _lookup(before, key, source) is not None:
            result = _without_inline(result, key, source)
        if not result.strip():
            result = "".join(table)
        else:
            ending = "" if result.endswith("\n") else newline
            result = result + ending + newline + "".join(table)
    return _checked(before, result, key, entry, source)


def remove_entry(text: str, key: Sequence[str], source: Path | str) -> str:
    """``text`` without engram's tables (and without engram 0.1's marker comments)."""
    before: dict[str, Any] = _parse(text, source).unwrap()
    lines, scanned = _read_lines(text)
    removed = _splice(lines, scanned, key, None)
    result = "".join(lines)
    if not removed and _lookup(before, key, source) is not None:
        result = _without_inline(result, key, source)
    return _checked(before, result, key, None, source)
