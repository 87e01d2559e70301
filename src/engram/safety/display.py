"""Text an agent wrote, as a person may be shown it: refused where it must be plain, and
escaped wherever it is shown.

An agent can write characters that rewrite what an operator's terminal or a dialog
displays: C0 and C1 controls (a carriage return, an ANSI escape sequence that moves the
cursor or clears the line), line and paragraph separators, and the invisible format
characters of :data:`engram.safety.invisible.INVISIBLE_RANGES` (bidirectional overrides
and isolates among them, which reorder what follows). :func:`displayable` tells whether
a string holds none of them (the schemas refuse the others in refs and keys); :func:`escaped`
shows each of them as a visible ``\\uXXXX`` escape, for every agent-written string printed
to a terminal or put in a dialog, whatever its origin.
"""

from __future__ import annotations

import re

from engram.safety.invisible import INVISIBLE_RANGES

__all__ = ["displayable", "escaped", "shown"]

_UNSAFE = re.compile(
    "[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029"
    + "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in INVISIBLE_RANGES)
    + "]"
)


def displayable(text: str) -> bool:
    """Whether ``text`` holds no control, separator or invisible format character."""
    return _UNSAFE.search(text) is None


def escaped(text: str) -> str:
    """``text`` with each such character shown as ``\\uXXXX`` (``\\UXXXXXXXX`` past the
    Basic Multilingual Plane): what is printed is what is there."""
    return _UNSAFE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    point = ord(match.group())
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def shown(text: str) -> str:
    """Text of several lines as a person may be shown it: each line :func:`escaped`,
    the line breaks and tabs kept (a memory, a diff, an answer)."""
    return "\n".join(
        "\t".join(escaped(part) for part in line.split("\t")) for line in text.split("\n")
    )
