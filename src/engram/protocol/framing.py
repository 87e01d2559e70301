"""Newline-delimited framing: one JSON-RPC message per line, bounded in size.

A line longer than the limit is consumed in bounded chunks and reported as
oversized, so a runaway client can neither kill the process nor grow its memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Final

__all__ = ["MAX_LINE_BYTES", "Frame", "read_frame"]

#: The transport's own guard, above the contract's 1,048,576-byte argument ceiling
#: (which the governed tools enforce themselves) with room for JSON escaping.
MAX_LINE_BYTES: Final = 3 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Frame:
    """One line read from the stream, without its newline."""

    data: bytes
    oversized: bool = False


def read_frame(stream: BinaryIO, limit: int = MAX_LINE_BYTES) -> Frame | None:
    """Read the next non-empty line, or ``None`` at end of stream."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return None
        if len(line) > limit and not line.endswith(b"\n"):
            _discard_rest_of_line(stream, limit)
            return Frame(b"", oversized=True)
        data = line.rstrip(b"\r\n")
        if data.strip():
            return Frame(data)


def _discard_rest_of_line(stream: BinaryIO, chunk: int) -> None:
    while True:
        part = stream.readline(chunk)
        if not part or part.endswith(b"\n"):
            return
