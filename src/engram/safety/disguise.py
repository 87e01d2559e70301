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
* **encoded**: base64, base64url, base32, hex, base85 or Ascii85 runs long enough to hold
  a credential, decoded when they decode to text, and scanned again (one level);
* **spelled by code** (:mod:`engram.safety.decoders`): octal escapes, character codes
  (``String.fromCharCode(…)``, ``chr(…) + chr(…)``), literals of any quote kind joined,
  literals assigned to names put back where the names are joined (``f"{a}{b}"``), a
  command substitution that echoes a literal;
* **in labelled pieces** over several texts (``piece 2: HpTZ…``);
* **cut without a vendor prefix**: connection strings (cut or reversed), Telegram and
  Discord starts, AWS secret keys and Azure account keys after their names.

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

from engram.safety.decoders import (
    base85_texts,
    character_codes,
    echoed,
    may_hold_codes,
    may_join_names,
    names_joined,
    octal_escaped,
)
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
_TOKENISH: Final = re.compile(r"(?![A-Za-z][a-z]*\Z)[A-Za-z0-9_\-+/=.:]+")
_PLAIN_WORD: Final = re.compile(r"[A-Za-z][a-z]++")
#: Runs that may encode a credential: 24+ base64 characters, or 32+ hex digits.
_ENCODED: Final = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,6}|(?:[0-9A-Fa-f]{2}){16,}")
_BASE32: Final = re.compile(r"[A-Z2-7]++=*+")
_PERCENT_ENCODED: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_ESCAPE: Final = re.compile(r"\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
#: The end of one string literal and the start of the next, joined by an operator
#: (``"a" + "b"``, ``'a' . 'b'``, ``"a" || "b"``, over a line break too, quotes of any
#: kind: ``'a' + "b" + `c```) ...
_CONCATENATION: Final = re.compile(
    r"[\"'`][ \t]*+(?:\\?\r?\n[ \t]*+)?(?:\+|\.\.?|&|\|\||~)[ \t]*+(?:\\?\r?\n[ \t]*+)?[\"'`]"
)
#: ... or side by side (``"a" "b"``, a Python literal continued on the next line). Side by
#: side, a list that lost its commas would join too, so only self-identifying formats
#: count there; Markdown's inline code spans (`` `a` `b` ``) join the same way. An empty
#: literal (``""``) is left alone.
_ADJACENT: Final = re.compile(r"([\"'`])(?:[ \t]++|[ \t]*+\\?\r?\n[ \t]*+)\1")
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
#: Key names whose value has an exact shape, each with words its text holds (lower case).
_NAMED_SHAPES: Final = tuple(
    (re.compile(words), rule)
    for words, kind in (
        (r"secret_?(?:access_?)?key", "aws_secret_access_key"),
        (r"accountkey|sharedaccesskey", "azure_key"),
    )
    for rule in RULES
    if rule.kind == kind
)
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
#: Key names whose value has an exact shape: an AWS secret access key (40 base64
#: characters), an Azure storage account or Service Bus key (88 or 44, ``=`` padded).
_NAMED_KEY: Final = re.compile(
    "(?:"
    + "|".join(map(_loose, ("awssecretaccesskey", "awssecretkey", "secretaccesskey")))
    + ")"
    + r"[\"']?[-._,;|#>*/ \t\r\n]{0,4}?(?::=|=>|=|:)[ \t]*+[\"']?",
    re.IGNORECASE,
)
_NAMED_AZURE_KEY: Final = re.compile(
    "(?:"
    + "|".join(map(_loose, ("accountkey", "sharedaccesskey")))
    + r")[-._,;|#>*/ \t\r\n]{0,4}?=[ \t]*+",
    re.IGNORECASE,
)
#: Words the text must hold (separators removed, lower case) for a header to be looked
#: for, the header or key name, the start the rebuilt token is given, and how many
#: characters of the body are read (a private key's first line is enough).
_KEY_HEADERS: Final = (
    (("privatekey",), _KEY_HEADER, "-----BEGIN PRIVATE KEY-----\n", 80),
    (("secretaccesskey", "awssecretkey"), _NAMED_KEY, "aws_secret_access_key=", 40),
    (("accountkey", "sharedaccesskey"), _NAMED_AZURE_KEY, "AccountKey=", 88),
)
_DISCORD_START: Final = re.compile(
    "(?<![A-Za-z0-9])"
    + _loose("https://")
    + r"(?:[-._,;:|#>*/ \t\r\n]{0,4}?(?:ptb|canary))?"
    + _FORMAT_SEPARATOR
    + _loose("discord")
    + r"(?:app)?"
    + _FORMAT_SEPARATOR
    + _loose(".com/api/")
    + _FORMAT_SEPARATOR
    + r"(?:v[0-9]{1,2}/)?"
    + _loose("webhooks/")
    + _FORMAT_SEPARATOR
    + r"(?P<id>[0-9](?:[-._,;:|#>* \t\r\n]{0,4}?[0-9]){16,19})"
    + _FORMAT_SEPARATOR
    + "/"
)
#: A Telegram bot's id (8 to 10 digits, perhaps cut too) and its colon.
_TELEGRAM_START: Final = re.compile(
    r"(?<![0-9_:.-])(?P<id>[0-9](?:[-._,;|#>* \t\r\n]{0,4}?[0-9]){7,9})"
    r"[-._,;|#>* \t\r\n]{0,4}?:[ \t]*+"
)
#: Starts of formats without a vendor prefix, each with a word its text must hold (its
#: separators removed) for the start to be looked for.
_OWN_STARTS: Final = (
    ("slack", _SLACK_START),
    ("discord", _DISCORD_START),
    (":", _TELEGRAM_START),
)
_DIGIT_COLON: Final = re.compile(r"[0-9][-._,;| \t\r\n]{0,3}?:")
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


def _first(matches: Iterable[re.Match[str]], count: int) -> list[re.Match[str]]:
    """The first ``count`` matches (a bound for crafted input)."""
    return [match for match, _ in zip(matches, range(count), strict=False)]


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
        folded = [fold(whole) for whole in wholes]
        glued = _glued(folded)
        if _self_identifying("\n".join([glued, *_rebuilt(glued), _token_pieces(folded)])):
            return True
        if _connection(glued):
            return True
        wholes.append("\n".join(wholes))
    singles = [text for text in dict.fromkeys(alone) if text not in wholes]
    return any(_holds(text) for text in [*wholes, *singles])


_RUN_OF_TOKEN: Final = re.compile(r"[A-Za-z0-9+/=_.:-]++")
_LABEL_NUMBER: Final = re.compile(r"[0-9]{1,2}[.:)]?")


def _token_pieces(folded: list[str]) -> str:
    """The pieces of a token spread over many texts, each with a label (``part 2: HpTZ``):
    the runs of a token's characters that are neither plain words nor a label's number,
    from every text in order, glued."""
    return "".join(
        run
        for text in folded
        for run in _RUN_OF_TOKEN.findall(text)
        if _PLAIN_WORD.fullmatch(run) is None and _LABEL_NUMBER.fullmatch(run) is None
    )


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
    if "@" in folded and any(_connection(rebuilt) for rebuilt in _rebuilt_connections(folded)):
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
    (lambda text: "\\" in text, octal_escaped),
    (lambda text: True, lambda text: _CONCATENATION.sub("", text)),
    (lambda text: "," in text, lambda text: _CHARACTER_LIST.sub(_characters, text)),
    (may_hold_codes, lambda text: _CONCATENATION.sub("", character_codes(text))),
    (may_join_names, lambda text: _CONCATENATION.sub("", names_joined(text))),
    (lambda text: "echo" in text or "printf" in text, echoed),
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
    yield from _adjacent_joined(folded)
    # A rebuilt token holding a placeholder's filler (``ghp_xxxx…`` and the word after
    # it) is none: eight equal characters in a row are never random material.
    yield from (token for token in _regrouped(folded) if _FILLER.search(token) is None)
    yield folded[::-1]
    yield folded.translate(_ROT13)


_AROUND: Final = 320  # characters kept on each side of a join: more than any token's half


def _adjacent_joined(text: str) -> Iterator[str]:
    """The neighbourhood of each place where literals side by side were put together, in
    the text with all of them put together: only a token made there is new, and a long
    text need not be searched again whole for it."""
    joins, removed, out, kept_from = [], 0, [], 0
    for match in _first(_ADJACENT.finditer(text), _MAX_DECODED):
        out.append(text[kept_from : match.start()])
        kept_from = match.end()
        joins.append(match.start() - removed)
        removed += match.end() - match.start()
    if not joins:
        return
    joined = "".join(out) + text[kept_from:]
    start, end = joins[0] - _AROUND, joins[0] + _AROUND
    for at in joins[1:]:
        if at - _AROUND > end:
            yield joined[max(0, start) : end]
            start = at - _AROUND
        end = at + _AROUND
    yield joined[max(0, start) : end]


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


_SCHEME_END: Final = re.compile(r":[-._ \t\r\n]{0,4}?/[-._ \t\r\n]{0,4}?/")
_BLANK: Final = re.compile(r"\s")
_BLANK_GAP: Final = re.compile(r"([ \t]*+\r?\n[ \t]*+(?:(?:#|//|--|>|\*|;)[ \t]*+)?|[ \t]++)")


def _rebuilt_connections(folded: str) -> Iterator[str]:
    """Connection strings cut or reversed: the text reversed, and around each ``://``
    (itself perhaps cut: ``:-//``) the blanks and line breaks between two pieces that are
    both plain words removed, then also the marks that cut the ``://``. Removing them
    makes no ``user:password@`` that was not there: only ``:``, ``/`` and ``@`` do."""
    yield folded[::-1]
    for match in _first(_SCHEME_END.finditer(folded), _MAX_PREFIXES):
        at = folded.find("@", match.end(), match.end() + _REACH)
        if at == -1 or (match.group() == "://" and _BLANK.search(folded, match.end(), at) is None):
            continue  # no ``@``, or nothing cut: the text as written was scanned
        window = folded[max(0, match.start() - 40) : match.end() + _REACH]
        pieces = _BLANK_GAP.split(window)
        kept = [pieces[0]]
        for gap, piece in zip(pieces[1::2], pieces[2::2], strict=True):
            if _PLAIN_WORD.fullmatch(kept[-1]) and _PLAIN_WORD.fullmatch(piece):
                kept.append(gap)
            kept.append(piece)
        joined = "".join(kept)
        yield joined
        marks = {mark for mark in "-._" if mark in match.group()}
        if marks:
            yield joined.translate({ord(mark): None for mark in marks})


def _connection(text: str) -> bool:
    """A ``scheme://user:password@host`` in ``text``: a shape unrelated strings do not
    make when glued, so it counts in the join with nothing between too."""
    return "@" in text and any(next(rule.spans(text), None) is not None for rule in _CONNECTIONS)


def _self_identifying(text: str) -> bool:
    """A self-identifying format in ``text``: a vendor's token, or a key name whose value
    has an exact shape (``aws_secret_access_key`` and 40 base64 characters, an Azure
    ``AccountKey``), which a reader cannot make by accident either."""
    if ANY_SPECIFIC_RULE.search(text) is not None and any(
        next(rule.spans(text), None) is not None for rule in SPECIFIC_RULES
    ):
        return True
    lowered = text.lower()
    for words, rule in _NAMED_SHAPES:
        # Only around the key's name: the rule's pattern is slow on a long text.
        for found in _first(words.finditer(lowered), _MAX_PREFIXES):
            near = text[max(0, found.start() - 8) : found.end() + 200]
            if next(rule.spans(near), None) is not None:
                return True
    return False


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
    skeleton = _SKELETON.sub("", text).replace("_", "")
    yield from _rebuilt_keys(text, skeleton.lower())
    starts = sorted(
        [*_LOOSE_PREFIX.finditer(text), *_GLUED_PREFIX.finditer(text)],
        key=lambda match: match.start(),
    )
    for word, start in _OWN_STARTS:
        if word in skeleton or (word == ":" and _DIGIT_COLON.search(text) is not None):
            starts.extend(_first(start.finditer(text), _MAX_PREFIXES))
    for count, match in enumerate(starts):
        if count >= _MAX_PREFIXES:
            return
        prefix = _canonical_start(match)
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


def _canonical_start(match: re.Match[str]) -> str:
    """A token's start as its format writes it, from a start read loosely."""
    if match.re is _SLACK_START:
        return f"https://hooks.slack.com/{_SKELETON.sub('', match.group('kind'))}/"
    if match.re is _DISCORD_START:
        return f"https://discord.com/api/webhooks/{_SKELETON.sub('', match.group('id'))}/"
    if match.re is _TELEGRAM_START:
        return _SKELETON.sub("", match.group("id")) + ":"
    return _CANONICAL[_SKELETON.sub("", match.group())]


def _rebuilt_keys(text: str, skeleton: str) -> Iterator[str]:
    """A private key block whose header and body were cut by separators: the header
    read loosely, and the body's characters after it with every separator removed, when
    they read as random (so that prose after a quoted header is not a key body)."""
    for words, header, start, length in _KEY_HEADERS:
        if not any(word in skeleton for word in words):
            continue
        for match in _first(header.finditer(text), _MAX_PREFIXES):
            body = "".join(chars for sort, chars in _pieces(text, match.end()) if sort == "group")
            body = body[:length]
            if len(body) >= 40 and looks_random(body):
                yield start + body


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
            break
        yield from _decode(match.group())
    yield from base85_texts(text)


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
