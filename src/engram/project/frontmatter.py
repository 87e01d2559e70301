"""The YAML subset of memory frontmatter: read strictly, written canonically.

Accepted: ``key: scalar``, ``key: [a, b]`` flow lists, and block lists (``key:``
followed by ``- item`` lines); scalars may be quoted with ``"`` or ``'``; ``#``
comments and blank lines are ignored. Anything else is an error naming the line,
never a silent guess. Writing always produces the same bytes for the same values.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Final

from engram.errors import FrontmatterError

__all__ = ["FrontmatterError", "Value", "parse_document", "render_frontmatter"]

Value = str | int | list[str]
_KEY: Final = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):(?:\s+(.*?))?\s*$")
_PLAIN_SAFE: Final = re.compile(r"^[A-Za-z0-9_.@/+:=<>()-][A-Za-z0-9 _.@/+:=<>()'-]*$")


@dataclass(frozen=True)
class Document:
    """A memory file split into its frontmatter values and its Markdown body."""

    fields: dict[str, Value]
    body: str
    #: The line (1-based, in the file) where each key was written.
    lines: dict[str, int] = field(default_factory=dict)


def _scalar(raw: str, line: int) -> str | int:
    text = raw.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        if text[0] == '"':
            try:
                value = json.loads(text)
            except ValueError as exc:
                raise FrontmatterError(line, "bad double-quoted string") from exc
            if not isinstance(value, str):
                raise FrontmatterError(line, "bad double-quoted string")
            return value
        return text[1:-1].replace("''", "'")
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    if text.startswith(("[", "{", "&", "*", "!", "|", ">")):
        raise FrontmatterError(line, f"unsupported YAML syntax {text[:1]!r}")
    return text


def _flow_list(raw: str, line: int) -> list[str]:
    inner = raw.strip()[1:-1].strip()
    if not inner:
        return []
    items = [_scalar(part, line) for part in _split_commas(inner, line)]
    return [str(item) for item in items]


def _split_commas(text: str, line: int) -> list[str]:
    parts, current, quote = [], "", ""
    for char in text:
        if quote:
            current += char
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote, current = char, current + char
        elif char == ",":
            parts.append(current)
            current = ""
        else:
            current += char
    if quote:
        raise FrontmatterError(line, "unterminated quote in list")
    return [*parts, current]


def parse_document(text: str) -> Document:
    """Split and parse a memory file; raises :class:`FrontmatterError`."""
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != "---":
        raise FrontmatterError(1, "missing frontmatter (the file must start with ---)")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise FrontmatterError(len(lines), "frontmatter is not closed with ---") from None
    fields: dict[str, Value] = {}
    lines_of: dict[str, int] = {}
    pending: str | None = None
    for number, line in enumerate(lines[1:end], start=2):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") or stripped == "-":
            if pending is None:
                raise FrontmatterError(number, "list item outside a list")
            value = fields[pending]
            assert isinstance(value, list)
            value.append(str(_scalar(stripped[1:], number)))
            continue
        match = _KEY.match(line)
        if match is None:
            raise FrontmatterError(number, "expected 'key: value'")
        key, raw = match.group(1), (match.group(2) or "")
        if key in fields:
            raise FrontmatterError(number, f"duplicate key {key}")
        lines_of[key] = number
        raw = _strip_comment(raw)
        pending = None
        if raw == "":
            fields[key] = []
            pending = key
        elif raw.startswith("["):
            if not raw.endswith("]"):
                raise FrontmatterError(number, "unterminated list")
            fields[key] = _flow_list(raw, number)
        else:
            fields[key] = _scalar(raw, number)
    body = "\n".join(lines[end + 1 :])
    return Document(fields, body.lstrip("\n"), lines_of)


_QUOTED: Final = re.compile(r"""^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*')(?:\s+#.*)?$""")


def _strip_comment(raw: str) -> str:
    if raw[:1] in "\"'":
        quoted = _QUOTED.match(raw)
        return quoted.group(1) if quoted else raw
    position = raw.find(" #")
    return raw[:position].rstrip() if position >= 0 else raw


def _render_scalar(value: str | int) -> str:
    if isinstance(value, int):
        return str(value)
    if (
        value
        and _PLAIN_SAFE.match(value)
        and not re.fullmatch(r"-?[0-9]+", value)
        and (": " not in value and not value.endswith(":"))
    ):
        return value
    return json.dumps(value, ensure_ascii=False)


def render_frontmatter(fields: list[tuple[str, Value]]) -> str:
    """Canonical frontmatter text (with the ``---`` fences) for ordered fields."""
    out = ["---"]
    for key, value in fields:
        if isinstance(value, list):
            out.append(f"{key}: [{', '.join(_render_scalar(item) for item in value)}]")
        else:
            out.append(f"{key}: {_render_scalar(value)}")
    out.append("---")
    return "\n".join(out) + "\n"
