"""User text to an FTS5 ``MATCH`` expression that can never be a syntax error.

The text is NFKC-normalized and lowercased, split into Unicode word tokens, and each
token becomes a quoted FTS5 string joined with ``OR``: every match contributes to the
BM25 rank, documents with more (and rarer) terms rank first, and no character of the
user's text is ever read as FTS5 syntax (quotes cannot occur inside a ``\\w`` token).
In large indexes, :func:`search_expressions` leaves out words most documents hold.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = [
    "COMMON_SHARE",
    "MAX_QUERY_TERMS",
    "PRUNE_MIN_DOCUMENTS",
    "search_expressions",
    "terms",
    "words",
]

MAX_QUERY_TERMS: Final = 32
#: Below this many indexed documents every term is kept: matching is cheap anyway.
PRUNE_MIN_DOCUMENTS: Final = 2000
#: A term held by more than this share of the documents is common (see
#: :func:`search_expressions`).
COMMON_SHARE: Final = 0.05
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


def search_expressions(found: list[str], frequencies: dict[str, int], documents: int) -> list[str]:
    """The FTS5 expressions a search runs, in order, until one matches something.

    ``frequencies`` holds the document count of each term found in the index's
    vocabulary, ``documents`` the size of the index. Small indexes (under
    :data:`PRUNE_MIN_DOCUMENTS`) rank every term. In larger ones a term held by more
    than :data:`COMMON_SHARE` of the documents is *common*: its BM25 weight is small,
    but matching it means scoring a large share of the index (130 ms for four such
    words at 100,000 documents). So the common terms are left out of the match (like
    Lucene's common-terms cutoff, without their small share of the score), and count
    only when the other terms match nothing: first the documents holding all of them,
    then, if there are none, those holding the rarest. A term missing from the
    vocabulary is never common (a stemming tokenizer indexes another form of it).
    """
    if not found:
        return []
    if documents < PRUNE_MIN_DOCUMENTS:
        return [_any_of(found)]
    common = [term for term in found if frequencies.get(term, 0) > COMMON_SHARE * documents]
    rest = [term for term in found if term not in common]
    expressions = [_any_of(rest)] if rest else []
    if len(common) > 1:
        expressions.append(" AND ".join(f'"{term}"' for term in common))
    if common:
        expressions.append(_any_of([min(common, key=lambda term: (frequencies[term], term))]))
    return expressions


def _any_of(found: list[str]) -> str:
    return " OR ".join(f'"{term}"' for term in found)
