"""Text analysis for the lexical channel: the same words for what is indexed and what is asked.

Both faces index the output of :func:`index_terms` and search with the groups of
:func:`query_groups`, so a memory and a question meet on the same terms:

- **Words** are the ``\\w+`` runs of the NFKC-normalized text. A code identifier also
  gives its parts and their join: ``retry_policy``, ``RetryPolicy`` and ``retryPolicy``
  all give ``retry``, ``policy`` and ``retrypolicy`` (digits stay with their letters:
  ``sha256``); a path gives its segments
  (``src/payments/retry.py``: ``src``, ``payments``, ``retry``, ``py``).
- **Language.** A text's language is the one of the four (English, French, German,
  Portuguese) whose function words it uses most; English when it uses none.
- **Stop words** of the text's language are left out (:mod:`engram.search.stopwords`).
  A question made only of stop words keeps them.
- **Stems.** Each word is stemmed by the Snowball stemmer of the text's language, then
  case-folded and stripped of diacritics (``publiées`` → ``publi``, ``Zahlungen`` →
  ``zahlung``). A question's words are stemmed in all four languages (a question may be
  written in another language than the memory it looks for); its *group* of variants
  matches a memory that holds any of them.

:func:`shared_words` says, in the question's own words, which texts hold which of them
(the review console explains a score with it).

Not here: ranking (SQLite FTS5's BM25), the common-term cutoff
(:mod:`engram.search.lexical`).
"""

from __future__ import annotations

import collections
import functools
import re
import threading
import unicodedata
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Final

from engram.search.stopwords import STOP_WORDS

if TYPE_CHECKING:
    import Stemmer

__all__ = [
    "ANALYZER_VERSION",
    "LANGUAGES",
    "MAX_QUERY_GROUPS",
    "analyzer_tag",
    "detect_language",
    "index_terms",
    "query_groups",
    "shared_words",
]

#: Changes whenever the terms of an indexed text change: indexes built by another
#: version are rebuilt.
ANALYZER_VERSION: Final = 2
#: The languages with a stemmer and stop words, in the order ties are broken.
LANGUAGES: Final = ("en", "fr", "de", "pt")
#: A question counts at most this many distinct words.
MAX_QUERY_GROUPS: Final = 32
#: Words each of the analyzer's caches remembers (the least recently used go first). A
#: server runs for days, and records bring ids and numbers never seen again: at 65,536
#: the three caches grew to 27 MiB over 20,000 texts of bench/governed.py (a 20,000-word
#: vocabulary, a new reference in each) and could reach about 70; at 8,192 they stay
#: under 9 MiB, for 0.35 ms a text instead of 0.24 there. LoCoMo's 2,760 turns use
#: 3,600 words, and are analyzed as fast with either.
CACHED_WORDS: Final = 8192

_SNOWBALL: Final = {"en": "english", "fr": "french", "de": "german", "pt": "portuguese"}
_WORD: Final = re.compile(r"\w+")
#: The parts of an identifier: runs of capitals before a capitalized word, capitalized or
#: lower-case words; digits stay with the letters before them (``sha256``, ``v2``, and a
#: random id stays one word); underscores separate.
_PART: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")


def _fold(word: str) -> str:
    """Case-folded, without diacritics (``Größe`` → ``grosse``, ``é`` → ``e``)."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


@functools.cache
def analyzer_tag() -> str:
    """What the terms of a text depend on: this module's version, the Snowball stemmers'
    version and the Unicode tables of this Python (NFKC, case folding, ``\\w``). An index
    built under another tag holds other terms, and must be rebuilt before a record can
    leave it with the terms it entered with."""
    import hashlib

    import Stemmer

    basis = f"{ANALYZER_VERSION}|{Stemmer.version()}|{unicodedata.unidata_version}"
    return f"{ANALYZER_VERSION}{hashlib.sha256(basis.encode()).hexdigest()[:8]}"


@functools.cache
def _stop_words(language: str) -> frozenset[str]:
    # Listed words split like text (``don't`` → ``don``, ``t``) and compared lowercased.
    return frozenset(
        token for word in STOP_WORDS[language] for token in _WORD.findall(word.lower())
    )


@functools.cache
def _stemmer(language: str) -> Stemmer.Stemmer:
    import Stemmer

    return Stemmer.Stemmer(_SNOWBALL[language])


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text))


def _parts(word: str) -> list[str]:
    """An identifier's lower-case parts (``RetryPolicy`` → ``retry``, ``policy``); only
    underscores split a word that is not ASCII (``Größe`` stays whole)."""
    pieces = [piece for piece in word.split("_") if piece]
    if not word.isascii():
        return [piece.lower() for piece in pieces]
    return [part.lower() for piece in pieces for part in _PART.findall(piece)]


def detect_language(words: list[str]) -> str:
    """The language whose stop words ``words`` (lower-case) hold most; English if none."""
    counts = dict.fromkeys(LANGUAGES, 0)
    languages_of = _stop_word_languages()
    for word, times in collections.Counter(words).items():
        for language in languages_of.get(word, ()):
            counts[language] += times
    best = max(LANGUAGES, key=lambda language: counts[language])
    return best if counts[best] else "en"


@functools.cache
def _stop_word_languages() -> dict[str, tuple[str, ...]]:
    """Each stop word and the languages that list it."""
    return {
        word: tuple(language for language in LANGUAGES if word in _stop_words(language))
        for word in set().union(*(_stop_words(language) for language in LANGUAGES))
    }


#: A stemmer must not be called from two threads at once (PyStemmer's rule).
_STEMMING = threading.Lock()


@functools.lru_cache(maxsize=CACHED_WORDS)
def _stem(word: str, language: str) -> str:
    """The folded stem of a lower-case word (cached: a text repeats its vocabulary)."""
    with _STEMMING:
        stem = _stemmer(language).stemWord(word)
    return _fold(stem)


def _analyzed(words: list[str], language: str) -> Iterator[tuple[str, ...]]:
    """For each word: its lower-case forms to stem (the word, or an identifier's parts and
    their join); stop words are left out."""
    for word in words:
        forms = _forms(word, language)
        if forms:
            yield forms


@functools.lru_cache(maxsize=CACHED_WORDS)
def _forms(word: str, language: str) -> tuple[str, ...]:
    parts = _parts(word)
    if len(parts) > 1:
        return (*parts, "".join(parts))
    lower = word.lower()
    return () if lower in _stop_words(language) else (lower,)


def index_terms(text: str) -> str:
    """What the index holds for ``text``: its stems, space-separated, in order."""
    words = _words(text)
    language = detect_language([word.lower() for word in words])
    return " ".join(filter(None, (_word_terms(word, language) for word in words)))


@functools.lru_cache(maxsize=CACHED_WORDS)
def _word_terms(word: str, language: str) -> str:
    """What the index holds for one word (space-separated stems; empty for a stop word)."""
    return " ".join(_stem(form, language) for form in _forms(word, language))


def query_groups(text: str) -> list[tuple[str, ...]]:
    """The question's terms: one group of stem variants per distinct word (or identifier
    part), in order, at most :data:`MAX_QUERY_GROUPS`; a memory matches a group when it
    holds any of its variants."""
    words = _words(text)
    lowered = [word.lower() for word in words]
    language = detect_language(lowered)
    forms = [form for found in _analyzed(words, language) for form in found]
    if not forms:  # only stop words: ask for them after all
        forms = lowered
    groups: dict[tuple[str, ...], None] = {}
    for form in forms:
        variants = tuple(dict.fromkeys(_stem(form, language) for language in LANGUAGES))
        if variants[0]:
            groups.setdefault(variants, None)
        if len(groups) == MAX_QUERY_GROUPS:
            break
    return list(groups)


def shared_words(question: str, texts: Mapping[str, str]) -> list[tuple[str, tuple[str, ...]]]:
    """Each word of ``question`` a search counts, lower-case as asked, in order and once,
    with the names of the ``texts`` that hold it as a search matches it (any of its stem
    variants among a text's terms). Its stop words are left out, as a search leaves them
    (unless it has only those); an identifier gives its parts, and their join only where
    a text holds it (``RetryPolicy``: ``retry``, ``policy``, and ``retrypolicy`` when
    written so). At most :data:`MAX_QUERY_GROUPS` words, as a search counts."""
    words = _words(question)
    lowered = [word.lower() for word in words]
    language = detect_language(lowered)
    forms = [_forms(word, language) for word in words]
    if not any(forms):  # only stop words: a search asks for them after all
        forms = [(word,) for word in lowered]
    held = {name: set(index_terms(text).split()) for name, text in texts.items()}
    found: dict[str, tuple[str, ...]] = {}
    for parts in forms:
        for position, form in enumerate(parts):
            variants = {_stem(form, other) for other in LANGUAGES}
            holders = tuple(name for name, terms in held.items() if terms & variants)
            joined = len(parts) > 1 and position == len(parts) - 1
            if form in found or (joined and not holders) or not _stem(form, "en"):
                continue
            found[form] = holders
            if len(found) == MAX_QUERY_GROUPS:
                return list(found.items())
    return list(found.items())
