"""Managed blocks: the lines between an engram start marker and its end marker.

Markdown instruction files (``AGENTS.md``, ``CLAUDE.md``, ``GEMINI.md``) carry
``<!-- engram:start -->`` … ``<!-- engram:end -->``. Everything outside the markers
belongs to the person and is never touched. (Codex's ``config.toml`` has no block:
Codex drops comments when it rewrites its MCP tables, so engram's part there is
its table alone; :mod:`.toml_block`.)

A file with a duplicated marker, an end before its start, or only one of the two
is refused with :class:`~engram.errors.ManagedBlockCorrupt`: guessing which lines
are engram's could delete someone's text, so the person fixes it by hand.

A new block is appended at the end of the file, after one blank line; removing it
takes that blank line away again, so ``remove(add(x)) == x`` for any file that ends
with a line break (or is empty).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engram.errors import ManagedBlockCorrupt

__all__ = ["MARKDOWN", "Markers", "block_body", "find_block", "remove_block", "set_block"]


@dataclass(frozen=True, slots=True)
class Markers:
    """The two marker tokens; a marker line is the token, optionally followed by text."""

    start: str
    end: str

    def is_start(self, line: str) -> bool:
        return _is_marker(line, self.start)

    def is_end(self, line: str) -> bool:
        return _is_marker(line, self.end)


MARKDOWN = Markers("<!-- engram:start -->", "<!-- engram:end -->")


def _is_marker(line: str, token: str) -> bool:
    stripped = line.strip()
    return stripped == token or stripped.startswith(token + " ")


def find_block(text: str, markers: Markers, source: Path | str) -> tuple[int, int] | None:
    """The block's span, from its start-marker line to after its end-marker line."""
    starts: list[tuple[int, int]] = []
    ends: list[tuple[int, int]] = []
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if markers.is_start(line):
            starts.append((number, offset))
        elif markers.is_end(line):
            ends.append((number, offset + len(line)))
        offset += len(line)
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0][1] <= starts[0][1]:
        lines = ", ".join(str(number) for number, _ in sorted(starts + ends))
        raise ManagedBlockCorrupt(
            f"{source}: engram markers are duplicated, missing or out of order "
            f"(lines {lines}); fix them by hand, engram will not guess"
        )
    return starts[0][1], ends[0][1]


def set_block(text: str, body: str, markers: Markers, source: Path | str) -> str:
    """``text`` with the block holding ``body`` (replaced in place, or appended)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    block = newline.join([markers.start, *body.splitlines(), markers.end]) + newline
    span = find_block(text, markers, source)
    if span is not None:
        return text[: span[0]] + block + text[span[1] :]
    if not text.strip():
        return block
    ending = "" if text.endswith("\n") else newline
    return text + ending + newline + block


def remove_block(text: str, markers: Markers, source: Path | str) -> str:
    """``text`` without the block and the blank line that set_block put before it."""
    span = find_block(text, markers, source)
    if span is None:
        return text
    before, after = text[: span[0]], text[span[1] :]
    for blank in ("\r\n\r\n", "\n\n"):
        if before.endswith(blank) and not after:
            before = before[: -len(blank) // 2]
            break
    return before + after


def block_body(text: str, markers: Markers, source: Path | str) -> str | None:
    """The lines between the markers, or ``None`` when there is no block."""
    span = find_block(text, markers, source)
    if span is None:
        return None
    lines = text[span[0] : span[1]].splitlines()
    return "\n".join(lines[1:-1])
