"""Credentials in disguise: what an agent may do to a secret so that a scan of the text as
written misses it, undone before the detector looks again.

:func:`contains_disguised_secret` takes the strings of one thing to be stored *in the
order a reader reads them* (a candidate's component texts and its evidence attestation;
a proposal's text and context) and, apart, strings that are only ever read alone (ids,
refs, locators), and answers whether any of these hold a credential:

* **as written**, each string alone (:func:`engram.safety.secrets.contains_secret`);
* **split across strings**: the read strings joined in order, with and without a line
  break between them;
* **folded** (:func:`fold`): invisible characters removed, NFKD (full-width and other
  compatibility letters, U+FF47 for ``g``), every combining mark dropped (Unicode
  categories Mn and Me: ``g\\u0301hp_…`` is ``ghp_…``), and the Unicode TR39 confusable
  prototypes of the Cyrillic and Greek letters that look like ASCII ones, see
  :data:`CONFUSABLES`;
* **percent-encoded**: ``%67%68%70%5F…`` decoded;
* **spaced or grouped**: a token's pieces put back together when separators stand
  between them: whitespace, line breaks (with a comment marker or indentation after
  them), dashes, dots, underscores, commas, colons, bars (``ghp_Vq HpTZ …``,
  ``AKIA-ABCD-EFGH-…``, a token wrapped over lines);
* **glued**: a token written without a word boundary before it (``tokenghp_…``);
* **reversed** or in **ROT13**;
* **encoded**: base64, base64url or hex runs long enough to hold a credential, decoded
  when they decode to text, and scanned again (one level).

Joining, grouping, reversing and ROT13 change ordinary text too (``the key`` becomes
``thekey``), so only findings of self-identifying formats (a vendor prefix and an exact
shape: rank ``SPECIFIC`` in :mod:`engram.safety.rules`) count there; the other variants
count every rule. Offsets are not mapped back: this is a yes-or-no check for refusing
content, not for redaction.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Final

from engram.safety.guards import is_placeholder, looks_random, percent_decoded
from engram.safety.rules import (
    ANY_SPECIFIC_RULE,
    PUBLISHED_EXAMPLES,
    RULES,
    SPECIFIC_RULES,
    VENDOR_PREFIXES,
)
from engram.safety.secrets import contains_secret, strip_invisible

__all__ = ["CONFUSABLES", "contains_disguised_secret", "fold"]

#: TR39 confusables (``confusables.txt``) whose prototype is an ASCII letter or digit,
#: from the scripts a look-alike is usually taken from: Cyrillic and Greek.
CONFUSABLES: Final[dict[str, str]] = {
    # Cyrillic, lower case
    "а": "a", "в": "B", "е": "e", "ѕ": "s", "і": "i", "ј": "j", "к": "k", "м": "M",
    "н": "H", "о": "o", "р": "p", "с": "c", "т": "T", "у": "y", "х": "x", "ь": "b",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g",
    # Cyrillic, upper case
    "А": "A", "В": "B", "Е": "E", "Ѕ": "S", "І": "I", "Ј": "J", "К": "K", "М": "M",
    "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ԛ": "Q",
    "Ԝ": "W", "Ӏ": "I", "Ү": "Y", "Ζ": "Z",
    # Greek
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "τ": "t", "υ": "u",
    "Α": "A", "Β": "B", "Ε": "E", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin look-alikes NFKD keeps
    "ı": "i", "ȷ": "j", "ℓ": "l",
}  # fmt: skip
_FOLD: Final = str.maketrans(CONFUSABLES)
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]++")
_MARKS: Final = frozenset({"Mn", "Me"})
_ROT13: Final = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
)
#: Prefixes of self-identifying tokens, to un-glue them from a word before them.
_PREFIXES: Final = re.compile(
    "(?<=[A-Za-z0-9])(?=" + "|".join(re.escape(prefix) for prefix in VENDOR_PREFIXES) + ")"
)
_GAP: Final = re.compile(r"(\s+)")
#: A piece of a token: its characters, and not a plain word (``here``, ``The``).
_TOKENISH: Final = re.compile(r"(?![A-Za-z][a-z]*\Z)[A-Za-z0-9_\-+/=.]+")
_PLAIN_WORD: Final = re.compile(r"[A-Za-z][a-z]++")
#: Runs that may encode a credential: 24+ base64 characters, or 32+ hex digits.
_ENCODED: Final = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,6}|(?:[0-9A-Fa-f]{2}){16,}")
_BASE32: Final = re.compile(r"[A-Z2-7]++=*+")
_PERCENT_ENCODED: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_ESCAPE: Final = re.compile(r"\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
#: The end of one string literal and the start of the next, joined by an operator
#: (``"a" + "b"``, ``'a' . 'b'``, ``"a" || "b"``, over a line break too) ...
_CONCATENATION: Final = re.compile(
    r"([\"'])[ \t]*+(?:\\?\r?\n[ \t]*+)?(?:\+|\.\.?|&|\|\||~)[ \t]*+(?:\\?\r?\n[ \t]*+)?\1"
)
#: ... or side by side (``"a" "b"``, a Python literal continued on the next line). Side by
#: side, a list that lost its commas would join too, so only self-identifying formats
#: count there. An empty literal (``""``) and RST's double backquotes are left alone.
_ADJACENT: Final = re.compile(r"([\"'])(?:[ \t]++|[ \t]*+\\?\r?\n[ \t]*+)\1")
#: A run of eight or more one-character string literals between commas (``['g', 'h',
#: 'p', '_', …]`` for ``''.join``, a JavaScript array for ``.join('')``): a string.
_ONE_CHARACTER = r"""(?:'(?:\\.|[^'\\\r\n])'|"(?:\\.|[^"\\\r\n])")"""
_CHARACTER_LIST: Final = re.compile(
    _ONE_CHARACTER + r"(?:[ \t]*+,[ \t]*+(?:\r?\n[ \t]*+)?" + _ONE_CHARACTER + "){7,}+"
)
_LITERAL: Final = re.compile(r"'(\\.|[^'\\])'" + r'|"(\\.|[^"\\])"')
_LITERAL_ESCAPES: Final = {"\\n": "\n", "\\r": "\r", "\\t": "\t"}
_MAX_DECODED: Final = 64  # encoded runs decoded per text, a bound for crafted input
#: No self-identifying token is shorter, nor its regrouped form (that only drops
#: separators, and a prefix gains at most its own one or two marks back): shorter text
#: (ids, kinds, refs) skips those variants.
_CONNECTIONS: Final = tuple(rule for rule in RULES if rule.kind == "connection_string")
_SHORTEST_TOKEN: Final = min(rule.shortest for rule in SPECIFIC_RULES) - 2

# --- Grouping ------------------------------------------------------------------------
# A vendor prefix, with a separator allowed between any two of its characters (``gh-p_``
# when the whole token is cut in twos), not glued to a letter or digit before it.
_SEPARATOR_CHAR: Final = r"[-._,;:|#>*/ \t\r\n]{0,4}?"
_LOOSE_PREFIX: Final = re.compile(
    "(?<![A-Za-z0-9])(?:"
    + "|".join(_SEPARATOR_CHAR.join(map(re.escape, prefix)) for prefix in VENDOR_PREFIXES)
    + ")"
)
_GLUED_PREFIX: Final = re.compile(
    "(?<=[A-Za-z0-9])(?:"
    + "|".join(
        re.escape(prefix)
        for prefix in VENDOR_PREFIXES
        if len(prefix) >= 4 and any(mark in prefix for mark in "-_.")
    )
    + ")"
)
#: Formats that name themselves without a vendor prefix: a Slack webhook's URL and a
#: private key block's header, each with separators allowed between any two of its
#: characters (an underscore too: neither holds one), and where the rebuilt token starts.
_FORMAT_SEPARATOR: Final = r"[-._,;:|#>*/ \t\r\n]{0,4}?"


def _loose(word: str) -> str:
    return _FORMAT_SEPARATOR.join(map(re.escape, word))


_SLACK_START: Final = re.compile(
    "(?<![A-Za-z0-9])"
    + _loose("https://hooks.slack.com/")
    + _FORMAT_SEPARATOR
    + "(?P<kind>"
    + "|".join(f"(?:{_loose(kind)})" for kind in ("services", "workflows", "triggers"))
    + ")"
    + _FORMAT_SEPARATOR
    + "/"
)
_KEY_HEADER: Final = re.compile(
    _loose("BEGIN")
    + r"[-._,;:|#>*/ \t\r\nA-Z0-9]{0,48}?"
    + _loose("PRIVATE")
    + _FORMAT_SEPARATOR
    + _loose("KEY")
    + r"(?:[-._,;:|#>*/ \t\r\n]{0,4}?BLOCK)?[-._,;:|#>*/ \t\r\n]{0,24}+"
)
_KEY_START: Final = "-----BEGIN PRIVATE KEY-----\n"
_KEY_BODY: Final = 80  # characters of a rebuilt key body: its first line is enough
_SKELETON: Final = re.compile(r"[-._,;:|#>*/ \t\r\n]")
_CANONICAL: Final = {_SKELETON.sub("", prefix): prefix for prefix in VENDOR_PREFIXES}
#: What follows a prefix: runs of a token's characters and runs of separators (a line
#: break may carry indentation and a comment marker: ``#``, ``//``, ``--``, ``>``, ``*``).
_PIECE: Final = re.compile(
    r"(?P<group>[A-Za-z0-9+/=]++)|(?P<mark>[-._,;:|])"
    r"|(?P<blank>[ \t]*+\r?\n[ \t]*+(?:(?:#|//|--|>|\*|;)[ \t]*+)?|[ \t]++)"
)
_REACH: Final = 400  # characters after a prefix the grouping looks at
#: Cut candidates are written for bodies up to this long: every exact-length format is
#: shorter, and a longer token is matched by length ranges, whole.
_CUTS_UP_TO: Final = 100
_MAX_PREFIXES: Final = 32  # prefix occurrences regrouped per text, a bound for crafted input
_WIDTHS: Final = range(1, 65)  # the group widths tried


def fold(text: str) -> str:
    """What a reader sees, in ASCII where it looks like ASCII: invisible characters
    removed, NFKD, combining marks dropped, confusable letters to their prototypes."""
    visible = strip_invisible(text)
    if visible.isascii():
        return visible
    decomposed = unicodedata.normalize("NFKD", visible)
    return _NON_ASCII.sub(_unmarked, decomposed).translate(_FOLD)


def _unmarked(match: re.Match[str]) -> str:
    return "".join(c for c in match.group() if unicodedata.category(c) not in _MARKS)


def contains_disguised_secret(texts: Sequence[str], alone: Iterable[str] = ()) -> bool:
    """Whether the strings hold a credential as written or disguised.

    ``texts`` are read in order, so they are checked each alone and joined (a key may be
    split between them); ``alone`` are checked each by itself only (an id or a ref sits
    between texts in a record, never inside what a reader reads). Joined without a
    separator, unrelated strings meet (a digest and the next sentence), so only
    self-identifying formats count in that join.
    """
    wholes = list(dict.fromkeys(texts))
    if len(wholes) > 1:
        glued = _glued([fold(whole) for whole in wholes])
        if _self_identifying("\n".join([glued, *_rebuilt(glued)])) or _connection(glued):
            return True
        wholes.append("\n".join(wholes))
    singles = [text for text in dict.fromkeys(alone) if text not in wholes]
    return any(_holds(text) for text in [*wholes, *singles])


_TAIL_RUN: Final = re.compile(r"[A-Za-z0-9_+/-]++\Z")
_HEAD_RUN: Final = re.compile(r"[A-Za-z0-9_+/-]++")


def _glued(folded: list[str]) -> str:
    """The folded strings joined with nothing between, but where a placeholder on one
    side would meet a plain word on the other (``ghp_xxxx…`` + ``observed in the
    repository``): there a line break stands, since the token such a join makes is the
    placeholder's filler lengthened by a word, never a credential."""
    out = [folded[0]]
    for text in folded[1:]:
        tail, head = _TAIL_RUN.search(out[-1]), _HEAD_RUN.match(text)
        closed = (
            tail is not None
            and head is not None
            and (
                (_filler(tail.group()) and _PLAIN_WORD_START.match(head.group()) is not None)
                or (_filler(head.group()) and _PLAIN_WORD_END.search(tail.group()) is not None)
            )
        )
        out.append("\n" + text if closed else text)
    return "".join(out)


_FILLER: Final = re.compile(r"(.)\1{7}")
_PLAIN_WORD_START: Final = re.compile(r"[A-Za-z][a-z]*+(?![A-Za-z0-9])")
_PLAIN_WORD_END: Final = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][a-z]*+\Z")


def _filler(run: str) -> bool:
    """A placeholder's run: ``ghp_xxxx…``, ``****``, ``<token>`` or eight characters or
    more of two symbols at most at the end (``0000``, ``xXxX``)."""
    return is_placeholder(run) or (len(run) >= 8 and len(set(run[-8:])) <= 2)


def _holds(text: str, decode: bool = True) -> bool:
    """``text`` as written, folded, unescaped, rebuilt and, with ``decode``, its encoded
    runs decoded and put through the same (one level: what they decode to is not decoded
    again)."""
    if contains_secret(text):
        return True
    folded = fold(text)
    if folded != text and contains_secret(folded):
        return True
    if any(contains_secret(unescaped) for unescaped in _unescaped(folded)):
        return True
    if len(folded) >= _SHORTEST_TOKEN and _self_identifying("\n".join(_rebuilt(folded))):
        return True
    return decode and any(_holds(decoded, decode=False) for decoded in _decoded(folded))


def _unescaped(folded: str) -> Iterator[str]:
    """The variants of ``folded`` where every rule counts, each when it changes something:
    percent-encoding decoded, HTML character references and backslash escapes decoded
    (``&#103;``, ``\\x67``, ``\\u0067``), string literals joined by an operator
    (``"ghp_Vq" + "HpTZ…"``), lists of one-character literals read as a string."""
    for may_hold, undo in _UNDONE:
        if may_hold(folded):
            undone = undo(folded)
            if undone != folded:
                yield undone


def _characters(match: re.Match[str]) -> str:
    """The string a list of one-character literals spells (``\\n`` a line break)."""
    out = []
    for literal in _LITERAL.finditer(match.group()):
        character = literal.group(1) or literal.group(2)
        out.append(_LITERAL_ESCAPES.get(character, character[-1]))
    return "".join(out)


def _escaped(match: re.Match[str]) -> str:
    code = int(next(group for group in match.groups() if group), 16)
    return chr(code) if code <= 0x10FFFF else match.group()


def _html_unescaped(text: str) -> str:
    import html  # only for text that may hold a character reference

    return html.unescape(text)


#: What :func:`_unescaped` undoes: for each way of writing a character, a cheap test that
#: a text may hold it, and the decoder.
_UNDONE: Final[tuple[tuple[Callable[[str], object], Callable[[str], str]], ...]] = (
    (_PERCENT_ENCODED.search, percent_decoded),
    (lambda text: "&" in text and ";" in text, _html_unescaped),
    (lambda text: "\\" in text, lambda text: _ESCAPE.sub(_escaped, text)),
    (lambda text: True, lambda text: _CONCATENATION.sub("", text)),
    (lambda text: "," in text, lambda text: _CHARACTER_LIST.sub(_characters, text)),
)


def _rebuilt(folded: str) -> Iterator[str]:
    """The variants of ``folded`` where only self-identifying formats count: unspaced,
    un-glued, string literals side by side joined, tokens regrouped, reversed, ROT13. A
    published example is not regrouped (its own dots and dashes read as separators would
    make new tokens of it)."""
    for example in PUBLISHED_EXAMPLES:
        if example in folded:
            folded = folded.replace(example, " ")
    for variant in (_unspaced(folded), _PREFIXES.sub(" ", folded)):
        if variant != folded:
            yield variant
    adjacent = _ADJACENT.sub("", folded)
    if adjacent != folded:
        yield adjacent
    # A rebuilt token holding a placeholder's filler (``ghp_xxxx…`` and the word after
    # it) is none: eight equal characters in a row are never random material.
    yield from (token for token in _regrouped(folded) if _FILLER.search(token) is None)
    yield folded[::-1]
    yield folded.translate(_ROT13)


def _unspaced(text: str) -> str:
    """``text`` with the spaces and line breaks between two pieces of a token removed (a
    plain word on either side keeps its space), and any token glued to a word before it
    set apart."""
    pieces = _GAP.split(text)
    kept = [pieces[0]]
    for gap, piece in zip(pieces[1::2], pieces[2::2], strict=True):
        if not (_TOKENISH.fullmatch(kept[-1]) and _TOKENISH.fullmatch(piece)):
            kept.append(gap)
        kept.append(piece)
    return _PREFIXES.sub(" ", "".join(kept))


def _connection(text: str) -> bool:
    """A ``scheme://user:password@host`` in ``text``: a shape unrelated strings do not
    make when glued, so it counts in the join with nothing between too."""
    return "@" in text and any(next(rule.spans(text), None) is not None for rule in _CONNECTIONS)


def _self_identifying(text: str) -> bool:
    if ANY_SPECIFIC_RULE.search(text) is None:
        return False
    return any(next(rule.spans(text), None) is not None for rule in SPECIFIC_RULES)


# --- Grouping --------------------------------------------------------------------------


def _regrouped(text: str) -> Iterator[str]:
    """Candidate tokens rebuilt from the pieces after each vendor prefix, one per line.

    Two readings, each cut after every group (a token of exact length ends at a group's
    end, and the words after it must not make it longer):

    * *every separator removed*, stopping before a plain word (``here``, ``The``): a
      token cut anywhere, by anything, for example wrapped over lines; and again with up
      to three plain words left out (``ghp_abcd then efgh…``);
    * *groups of one width*: a separator after every ``n`` characters removed and any
      other kept (a token's own ``-`` or ``_``), for each ``n`` from 1 to 64 the first
      group allows, counted from the token's start, from the end of its prefix, or from
      its first three separators (the first group may be shorter or longer). Random
      groups may read as words (``Vqab``), so this reading does not stop at them; it
      stops where the width breaks.

    A prefix counts where a letter or digit does not stand before it, and, for the
    prefixes that hold a mark of their own and are four characters or more
    (``ghp_``, ``sk_live_``, not ``sk-`` or ``hf_``), glued to a word too.
    """
    yield from _rebuilt_keys(text)
    starts = sorted(
        [*_LOOSE_PREFIX.finditer(text), *_GLUED_PREFIX.finditer(text)],
        key=lambda match: match.start(),
    )
    if "slack" in _SKELETON.sub("", text).replace("_", ""):
        for count, match in enumerate(_SLACK_START.finditer(text)):
            if count >= _MAX_PREFIXES:
                break
            starts.append(match)
    for count, match in enumerate(starts):
        if count >= _MAX_PREFIXES:
            return
        if match.re is _SLACK_START:
            prefix = f"https://hooks.slack.com/{_SKELETON.sub('', match.group('kind'))}/"
        else:
            prefix = _CANONICAL[_SKELETON.sub("", match.group())]
        after = _pieces(text, match.end())
        glued = match.end() < len(text) and text[match.end()].isalnum()
        yield from _joined(prefix, after, glued, keep="")
        yield from _joined(prefix, after, glued, keep="-_")
        yield from _joined(prefix, after, glued, keep="", skip=3)
        walks = [("", _pieces(text, match.start()), False), (prefix, after, False)]
        for nth in (1, 2, 3):
            first = _first_group(prefix, after, nth)
            if first is not None:
                yield first[0]
                walks.append((first[0], after[first[1] :], True))
        for begun, pieces, cut in walks:
            for width in _widths(pieces):
                yield from _every(width, begun, pieces, prefix, cut)


def _rebuilt_keys(text: str) -> Iterator[str]:
    """A private key block whose header and body were cut by separators: the header
    read loosely, and the body's characters after it with every separator removed, when
    they read as random (so that prose after a quoted header is not a key body)."""
    for count, match in enumerate(_KEY_HEADER.finditer(text)):
        if count >= _MAX_PREFIXES:
            return
        body = "".join(chars for sort, chars in _pieces(text, match.end()) if sort == "group")
        body = body[:_KEY_BODY]
        if len(body) >= 40 and looks_random(body):
            yield _KEY_START + body


def _pieces(text: str, start: int) -> list[tuple[str, str]]:
    """``(sort, characters)`` from ``start``, up to the first other character: runs of a
    token's characters (``group``), single ``mark``s, and ``blank``s (a line break takes
    the indentation and comment marker after it)."""
    pieces: list[tuple[str, str]] = []
    position, end = start, min(len(text), start + _REACH)
    while position < end:
        match = _PIECE.match(text, position, end)
        if match is None:
            break
        pieces.append((str(match.lastgroup), match.group()))
        position = match.end()
    return pieces


def _joined(
    prefix: str, pieces: list[tuple[str, str]], glued: bool, keep: str, skip: int = 0
) -> Iterator[str]:
    """Every separator removed but the marks in ``keep`` (a token's own ``-`` and ``_``);
    a plain word after a blank ends the token (but the first ``skip`` of them, left out),
    and so does a long one after a mark (``sk-learn-compatible``)."""
    body, after_blank = "", False
    for index, (sort, characters) in enumerate(pieces):
        if sort != "group":
            after_blank = after_blank or sort == "blank"
            if sort == "mark" and characters in keep:
                body += characters
            continue
        plain = not (glued and index == 0) and _PLAIN_WORD.fullmatch(characters) is not None
        if plain and after_blank and skip > 0:
            skip -= 1
            continue
        if plain and (after_blank or len(characters) >= 7):
            break
        body, after_blank = body + characters, False
        if len(body) <= _CUTS_UP_TO:
            yield prefix + body
    if len(body) > _CUTS_UP_TO:
        yield prefix + body


def _first_group(prefix: str, pieces: list[tuple[str, str]], nth: int) -> tuple[str, int] | None:
    """The token up to its ``nth`` separator (any before it the token's own marks), and
    the index of the piece after that separator."""
    out, seen = prefix, 0
    for index, (sort, characters) in enumerate(pieces):
        if sort == "group":
            out += characters
            continue
        seen += 1
        if seen == nth:
            following = index + 1
            while following < len(pieces) and pieces[following][0] != "group":
                ahead = pieces[following + 1][0] if following + 1 < len(pieces) else "end"
                if pieces[following][0] == "mark" and ahead == "group":
                    break  # a mark before a group is the token's own
                following += 1
            return out, following
        if sort != "mark" or characters not in "-._":
            return None
        out += characters
    return None


def _widths(pieces: list[tuple[str, str]]) -> list[int]:
    """The widths a walk over ``pieces`` can have: its first group ends at a separator, so
    its width is what comes before one of the first separators (up to the first blank)."""
    widths, filled = [], 0
    for sort, characters in pieces:
        if sort != "group" and 0 < filled <= _WIDTHS[-1]:
            widths.append(filled)
        if sort == "blank" or filled > _WIDTHS[-1]:
            break
        filled += len(characters)
    return widths


def _every(
    width: int, start: str, pieces: list[tuple[str, str]], prefix: str, cut: bool
) -> Iterator[str]:
    """The token read as groups of ``width`` characters, cut after each group; nothing
    when no separator stands at a group's end (the token as written is all there is).

    At a group's end the separator is inserted: one mark or a blank, and ``" - "``. A
    mark right after it and before a group is the token's own (``ghp`` ``" "`` ``_pL…``);
    so is a ``-``, ``.`` or ``_`` inside a group.
    """
    out, filled, at_end = start, 0, cut
    for index, (sort, characters) in enumerate(pieces):
        if sort == "group":
            if len(characters) > width - filled:
                break  # a group runs past the width: not this width, or the token's end
            out, filled, at_end = out + characters, filled + len(characters), False
            continue
        following = pieces[index + 1][0] if index + 1 < len(pieces) else "end"
        if filled == width or (filled == 0 and not cut and sort == "blank"):
            cut, at_end, filled = True, True, 0
            if len(prefix) < len(out) <= len(prefix) + _CUTS_UP_TO and out.startswith(prefix):
                yield out
        elif at_end and (sort == "blank" or (following == "blank" and width > 1)):
            pass  # the rest of an inserted " - " (between single characters, a mark is theirs)
        elif sort == "mark" and characters in "-._" and filled < width:
            out, filled, at_end = out + characters, filled + 1, False
        else:
            break
    if cut and len(out) > len(prefix) and out.startswith(prefix):
        yield out


def _decoded(text: str) -> Iterator[str]:
    for count, match in enumerate(_ENCODED.finditer(text)):
        if count >= _MAX_DECODED:
            return
        yield from _decode(match.group())


def _decode(run: str) -> Iterator[str]:
    """The texts a run may encode (hex, base32, base64 or base64url) that decode to
    printable UTF-8."""
    if len(run) % 2 == 0 and re.fullmatch(r"[0-9A-Fa-f]+", run):
        yield from _text(bytes.fromhex(run))
        return
    if _BASE32.fullmatch(run):
        yield from _text(_base32(run))
    padded = run.rstrip("=") + "=" * (-len(run.rstrip("=")) % 4)
    for alphabet in (b"+/", b"-_"):
        try:
            yield from _text(base64.b64decode(padded, altchars=alphabet, validate=True))
            return
        except (binascii.Error, ValueError):
            continue


def _base32(run: str) -> bytes:
    try:
        return base64.b32decode(run.rstrip("=") + "=" * (-len(run.rstrip("=")) % 8))
    except (binascii.Error, ValueError):
        return b""


def _text(data: bytes) -> Iterator[str]:
    if not data:
        return
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    printable = sum(character.isprintable() or character in "\n\t" for character in decoded)
    if printable >= 0.95 * len(decoded):
        yield decoded
