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

Escaping is not enough where a person reads a list: a reason of 300 spaces and then text
that looks like the list's next entry wraps, on a terminal of known width, into a line of
its own. :func:`one_line` is agent text fit for one field of such a list (whitespace runs
collapsed, a length in terminal columns with a marker for what was cut), and
:func:`wrapped` cuts it into lines a caller frames, so that every line holding agent text
starts with the caller's frame and none is wider than the caller chose.
"""

from __future__ import annotations

import re

from engram.safety.invisible import INVISIBLE_RANGES

__all__ = ["columns", "displayable", "escaped", "one_line", "shown", "wrapped"]

#: Combining marks kept on one base character; more are escaped: a stack of hundreds
#: draws over the lines above and below it, and a browser cannot break a cell's text
#: inside one character and its marks.
_MARKS_KEPT = 2
#: Emoji skin-tone modifiers, which extend the character before them as marks do.
_MODIFIERS = range(0x1F3FB, 0x1F400)

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


def columns(text: str) -> int:
    """At most how many terminal columns ``text`` (already escaped) takes: one for each
    ASCII character, two for every other, combining marks included.

    An upper bound, not a guess: terminals disagree on which characters take two (each
    has its Unicode version and its own table: glibc draws the Yijing hexagrams and the
    Hangul tone marks U+302E and U+302F two wide where Python's tables say one and none;
    an East Asian setting draws every ambiguous character, Greek and Cyrillic among them,
    two), and none draws a code point wider than two. A line counted here never wraps
    where its caller said it fits; one counted as Python's tables say did, into a line
    of its own at the margin of an 80-column tmux.
    """
    return sum(1 if character.isascii() else 2 for character in text)


def one_line(text: str, limit: int) -> str:
    """``text`` as one field of a list a person reads: :func:`escaped` (so one line, and
    no character reorders or hides another; every other character Python does not call
    printable, and a mark past the second on one character, escaped too),
    every run of the whitespace left (spaces of any width) one space, the ends trimmed,
    and at most ``limit`` columns: what does not fit is replaced by `` [+N characters]``
    (N: how many characters of the collapsed text were left out, an escape counting as
    one), the whole still within ``limit``."""
    pieces = _pieces(text)
    if sum(columns(piece) for piece in pieces) <= limit:
        return "".join(pieces)
    kept: list[str] = []
    used = 0
    for index, piece in enumerate(pieces):
        marker = f" [+{len(pieces) - index} characters]"
        if used + columns(piece) + len(marker) > limit:
            # The marker of what is left from here, checked to fit with what is kept.
            while kept and used + len(marker) > limit:
                used -= columns(kept.pop())
                marker = f" [+{len(pieces) - len(kept)} characters]"
            return "".join(kept).rstrip() + marker
        kept.append(piece)
        used += columns(piece)
    return "".join(kept)  # pragma: no cover - the sum above said it does not fit


def _pieces(text: str) -> list[str]:
    """Each character of ``text`` as it is shown (escaped, or one space for a run of
    whitespace), the ends trimmed."""
    pieces: list[str] = []
    marks = 0
    for character in text:
        point = ord(character)
        marks = marks + 1 if _extends(character, pieces) else 0
        if character.isspace() and not _UNSAFE.match(character):
            if pieces and pieces[-1] != " ":
                pieces.append(" ")
        elif _UNSAFE.match(character) or not character.isprintable() or marks > _MARKS_KEPT:
            # Past the escapes of every display: a lone surrogate, a private-use or an
            # unassigned code point (a later Unicode's, which a terminal may draw).
            pieces.append(f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}")
        else:
            pieces.append(character)
    while pieces and pieces[-1] == " ":
        pieces.pop()
    return pieces


def _extends(character: str, pieces: list[str]) -> bool:
    """Whether ``character`` is drawn on the one before it: any combining mark (also
    one of combining class 0, such as the Thai vowel and tone marks, U+0489 or the
    enclosing circle U+20DD), a skin-tone modifier, or a conjoining Hangul jamo after
    Hangul (a run of leading jamo is one character to a browser, however long)."""
    import unicodedata  # here: engram-mcp imports this module on its start-up path

    if unicodedata.combining(character) or unicodedata.category(character).startswith("M"):
        return True
    if ord(character) in _MODIFIERS:
        return True
    before = ord(pieces[-1][-1]) if pieces else 0
    if _jamo(ord(character)):
        return _jamo(before) or 0xAC00 <= before <= 0xD7A3
    # A syllable after a leading jamo joins it; one after another syllable does not.
    return 0xAC00 <= ord(character) <= 0xD7A3 and 0x1100 <= before <= 0x115F


def _jamo(point: int) -> bool:
    return 0x1100 <= point <= 0x11FF or 0xA960 <= point <= 0xA97F or 0xD7B0 <= point <= 0xD7FF


def wrapped(text: str, width: int) -> list[str]:
    """``text`` (one line, already safe: :func:`one_line`) cut into lines of at most
    ``width`` columns, at spaces where a word fits, else inside the word."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if columns(candidate) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
        line = ""
        for character in word:
            if columns(line + character) > width:
                lines.append(line)
                line = ""
            line += character
    if line or not lines:
        lines.append(line)
    return lines
