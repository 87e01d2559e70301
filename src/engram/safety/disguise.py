"""Credentials in disguise: what an agent may do to a secret so that a scan of the text as
written misses it, undone before the detector looks again.

:func:`contains_disguised_secret` takes every string of one thing to be stored (a
candidate's components, citations and evidence; a proposal's text) and answers whether
any of these hold a credential:

* **as written**, each string alone (:func:`engram.safety.secrets.contains_secret`);
* **split across strings**: their concatenation, with and without a separator;
* **folded**: NFKC (full-width and other compatibility letters, U+FF47 for ``g``) and
  the Unicode TR39 confusable prototypes of the Cyrillic and Greek letters that look like
  the ASCII letters credentials use (``ghp_`` with a Cyrillic er, U+0440, for the ``p``),
  see :data:`CONFUSABLES`;
* **spaced**: whitespace or a line break inside a token removed (``ghp_abcd efgh…``);
* **glued**: a token written without a word boundary before it (``tokenghp_…``);
* **encoded**: base64, base64url or hex runs long enough to hold a credential, decoded
  when they decode to text, and scanned again (one level).

The spaced and glued variants change prose too (``the key`` becomes ``thekey``), so only
findings of self-identifying formats (a vendor prefix and an exact shape: rank
``SPECIFIC`` in :mod:`engram.safety.rules`) count there; the other variants count every
rule. Offsets are not mapped back: this is a yes-or-no check for refusing content, not
for redaction.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Iterator, Sequence
from typing import Final

from engram.safety.rules import RULES, SPECIFIC
from engram.safety.secrets import contains_secret, find_secrets, strip_invisible

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
    # Latin look-alikes NFKC keeps
    "ı": "i", "ȷ": "j", "ℓ": "l",
}  # fmt: skip
_FOLD: Final = str.maketrans(CONFUSABLES)
#: Kinds that identify themselves (a vendor prefix and an exact shape).
_SELF_IDENTIFYING: Final = frozenset(rule.kind for rule in RULES if rule.rank == SPECIFIC)
#: Prefixes of self-identifying tokens, to un-glue them from a word before them.
_PREFIXES: Final = re.compile(
    r"(?<=[A-Za-z0-9])(?=ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abeoprs]-|xapp-"
    r"|sk_live_|rk_live_|sk_test_|rk_test_|whsec_|AIza|GOCSPX-|sk-|npm_|pypi-|hf_|SG\.|AKIA"
    r"|ASIA|eyJ)"
)
_GAP: Final = re.compile(r"(\s+)")
#: A piece of a token: its characters, and not a plain word (``here``, ``The``).
_TOKENISH: Final = re.compile(r"(?![A-Za-z][a-z]*\Z)[A-Za-z0-9_\-+/=.]+")
#: Runs that may encode a credential: 24+ base64 characters, or 32+ hex digits.
_ENCODED: Final = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}|(?:[0-9A-Fa-f]{2}){16,}")
_MAX_DECODED: Final = 64  # encoded runs decoded per text, a bound for crafted input


def fold(text: str) -> str:
    """NFKC, then the confusable letters to their ASCII prototypes; invisible characters
    removed."""
    return unicodedata.normalize("NFKC", strip_invisible(text)).translate(_FOLD)


def contains_disguised_secret(texts: Sequence[str]) -> bool:
    """Whether the strings, alone or together, hold a credential as written or disguised.

    Their concatenation without a separator joins unrelated strings (a digest and the
    next id), so only self-identifying formats count in it.
    """
    wholes = list(dict.fromkeys(texts))
    if len(wholes) > 1:
        wholes.append("\n".join(wholes))
        glued = fold("".join(wholes))
        if _self_identifying(glued) or _self_identifying(_unspaced(glued)):
            return True
    return any(_holds(text) for text in wholes)


def _holds(text: str) -> bool:
    folded = fold(text)
    if contains_secret(text) or (folded != text and contains_secret(folded)):
        return True
    for variant in (_unspaced(folded), _PREFIXES.sub(" ", folded)):
        if variant != folded and _self_identifying(variant):
            return True
    return any(contains_secret(decoded) for decoded in _decoded(folded))


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


def _self_identifying(text: str) -> bool:
    return any(finding.kind in _SELF_IDENTIFYING for finding in find_secrets(text))


def _decoded(text: str) -> Iterator[str]:
    for count, match in enumerate(_ENCODED.finditer(text)):
        if count >= _MAX_DECODED:
            return
        decoded = _decode(match.group())
        if decoded is not None:
            yield decoded


def _decode(run: str) -> str | None:
    """The text a run encodes (hex, base64 or base64url), or ``None``."""
    data: bytes | None = None
    if len(run) % 2 == 0 and re.fullmatch(r"[0-9A-Fa-f]+", run):
        data = bytes.fromhex(run)
    else:
        padded = run + "=" * (-len(run) % 4)
        for alphabet in (b"+/", b"-_"):
            try:
                data = base64.b64decode(padded, altchars=alphabet, validate=True)
                break
            except (binascii.Error, ValueError):
                continue
    if not data:
        return None
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(character.isprintable() or character in "\n\t" for character in decoded)
    return decoded if printable >= 0.95 * len(decoded) else None
