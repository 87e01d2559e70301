"""User text to an FTS5 ``MATCH`` expression that can never be a syntax error.

The text is NFKC-normalized and lowercased, split into Unicode word tokens, and each
token becomes a quoted FTS5 string joined with ``OR``: every match contributes to the
BM25 rank, documents with more (and rarer) terms rank first, and no character of the
user's text is ever read as FTS5 syntax (quotes cannot occur inside a ``\\w`` token).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = [
    "MAX_QUERY_TERMS",
    "PRUNE_MIN_DOCUMENTS",
    "informative_terms",
    "match_expression",
    "quoted",
    "terms",
    "words",
]

MAX_QUERY_TERMS: Final = 32
#: Below this many indexed documents every term is kept: matching is cheap anyway.
PRUNE_MIN_DOCUMENTS: Final = 2000
_WORD: Final = re.compile(r"\w+")


def terms(text: str) -> list[str]:
    """The distinct query terms of ``text``, in order, at most :data:`MAX_QUERY_TERMS`."""
    seen: dict[str, None] = {}
    for token in _WORD.findall(unicodedata.normalize("NFKC", text).lower()):
        if not any(char.isalnum() for char in token):
            continue  # "_" alone: the FTS5 tokenizer would see no token in it
        seen.setdefault(token, None)
        if len(seen) == MAX_QUERY_TERMS:
            break
    return list(seen)


def words(text: str) -> list[str]:
    """Every word token of ``text`` (normalized like query terms), no limit."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


def quoted(found: list[str]) -> str | None:
    """``"a" OR "b"``: the FTS5 expression for already-split terms, ``None`` if none."""
    return " OR ".join(f'"{term}"' for term in found) if found else None


def match_expression(text: str) -> str | None:
    """The FTS5 expression for ``text``, or ``None`` when it has no terms."""
    return quoted(terms(text))


def informative_terms(found: list[str], frequencies: dict[str, int], documents: int) -> list[str]:
    """Drop terms that occur in at least half of the documents, when that matters.

    FTS5's BM25 clamps the IDF of such a term to 1e-6, so it adds nothing to any
    score, while matching it would visit half the index. They are dropped only in
    large indexes (at least :data:`PRUNE_MIN_DOCUMENTS`) and only if another term
    remains, so a query made only of common words still finds what it can.
    """
    if documents < PRUNE_MIN_DOCUMENTS:
        return found
    kept = [term for term in found if 2 * frequencies.get(term, 0) < documents]
    return kept or found
