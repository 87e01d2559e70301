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

__all__ = ["MAX_QUERY_TERMS", "match_expression", "terms"]

MAX_QUERY_TERMS: Final = 32
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


def match_expression(text: str) -> str | None:
    """The FTS5 expression for ``text``, or ``None`` when it has no terms."""
    found = terms(text)
    if not found:
        return None
    return " OR ".join(f'"{term}"' for term in found)
