"""User text to an FTS5 ``MATCH`` expression that can never be a syntax error.

The text is NFKC-normalized and lowercased (and also taken as written, lowercased,
where that differs), split into Unicode word tokens, and each
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
    "common_cutoff",
    "search_expressions",
    "terms",
    "words",
]

MAX_QUERY_TERMS: Final = 32
#: Below this many indexed documents every term is kept: matching is cheap anyway.
PRUNE_MIN_DOCUMENTS: Final = 2000
#: A term held by more than this share of the documents is common (see
#: :func:`search_expressions`).
COMMON_SHARE: Final = 0.02
_WORD: Final = re.compile(r"\w+")


def terms(text: str) -> list[str]:
    """The distinct query terms of ``text``, in order, at most :data:`MAX_QUERY_TERMS`.

    The words of the NFKC-normalized text come first, then those of the text as
    written where they differ: the index holds stored text as written, so a record
    holding "ﬁle" (a ligature) or fullwidth letters is found by its own words, and by
    "file" wherever it is written plainly.
    """
    seen: dict[str, None] = {}
    folded = unicodedata.normalize("NFKC", text).lower()
    found = _WORD.findall(folded) + _WORD.findall(text.lower())
    for token in found:
        if not any(char.isalnum() for char in token):
            continue  # "_" alone: the FTS5 tokenizer would see no token in it
        seen.setdefault(token, None)
        if len(seen) == MAX_QUERY_TERMS:
            break
    return list(seen)


def words(text: str) -> list[str]:
    """Every word token of ``text`` (normalized like query terms), no limit."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


def common_cutoff(documents: int) -> int | None:
    """Above how many holding documents a term of an index this size is common;
    ``None`` for a small index, where every term counts."""
    return None if documents < PRUNE_MIN_DOCUMENTS else int(COMMON_SHARE * documents)


def search_expressions(found: list[str], counts: dict[str, int], documents: int) -> list[str]:
    """The FTS5 expressions a search runs, in order, until one matches something.

    ``counts`` holds how many documents hold each term, counted at least up to
    :func:`common_cutoff` ``+ 1``; ``documents`` is the size of the index. Small indexes
    (under :data:`PRUNE_MIN_DOCUMENTS`) rank every term. In larger ones a term held by
    more than :data:`COMMON_SHARE` of the documents is *common*: its BM25 weight is
    small, but matching it means scoring a large share of the index (130 ms for four
    such words at 100,000 documents). So the common terms are left out of the match
    (like Lucene's common-terms cutoff, without their small share of the score), and
    count only when the other terms match nothing (the caller may also skip a stage
    whose matches it cannot use): first the documents holding all of them, then, if
    there are none, those holding the first of them in the query.
    """
    if not found:
        return []
    cutoff = common_cutoff(documents)
    if cutoff is None:
        return [_any_of(found)]
    common = [term for term in found if counts.get(term, 0) > cutoff]
    rest = [term for term in found if term not in common]
    expressions = [_any_of(rest)] if rest else []
    if len(common) > 1:
        expressions.append(" AND ".join(f'"{term}"' for term in common))
    if common:
        expressions.append(_any_of(common[:1]))
    return expressions


def _any_of(found: list[str]) -> str:
    return " OR ".join(f'"{term}"' for term in found)
