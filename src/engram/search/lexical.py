"""What a question searches: FTS5 ``MATCH`` expressions that can never be a syntax error.

A question's terms are groups of stem variants (:func:`engram.search.analysis.query_groups`);
each variant becomes a quoted FTS5 string, a group the ``OR`` of its variants, and the
groups are joined with ``OR``: every match contributes to the BM25 rank, memories with
more (and rarer) terms rank first, and no character of the user's text is ever read as
FTS5 syntax (variants are ``\\w`` runs: a quote cannot occur in one). In large indexes,
:func:`search_stages` leaves out terms most memories hold. A stage is a plain value, so
the PostgreSQL store runs the same stages over its postings tables.

Both backends score a stage with BM25 (:data:`K1`, :data:`B`) and one IDF, :func:`idf`.
FTS5's ``bm25()`` has its own IDF, which gives a term held by half the documents or more
a weight of 1e-6: in a project of a few memories every word weighs that, and an exact
match scored 0.000002. SQLite therefore ranks a stage in :func:`Stage.parts`, one per
number of holding documents, each FTS5 rank multiplied by :func:`idf` over
:func:`fts5_idf` (exact: BM25 is a sum over phrases, and FTS5 weighs the phrases of a
part alike).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from engram.search.analysis import MAX_QUERY_GROUPS, query_groups

__all__ = [
    "ALGORITHM",
    "COMMON_SHARE",
    "K1",
    "MAX_QUERY_TERMS",
    "PROJECT_WEIGHTS",
    "PRUNE_MIN_DOCUMENTS",
    "B",
    "Group",
    "Part",
    "Stage",
    "common_cutoff",
    "fts5_idf",
    "idf",
    "match_expression",
    "query_groups",
    "search_stages",
    "variants",
]

#: One query term: the stem variants any of which a memory may hold.
Group = tuple[str, ...]

MAX_QUERY_TERMS: Final = MAX_QUERY_GROUPS
#: Below this many indexed documents every term is kept: matching is cheap anyway.
PRUNE_MIN_DOCUMENTS: Final = 2000
#: A term held by more than this share of the documents is common (see
#: :func:`search_stages`).
COMMON_SHARE: Final = 0.02
#: BM25's term-frequency saturation and length normalisation (FTS5's ``bm25()`` values).
K1: Final = 1.2
B: Final = 0.75
#: How much a term counts in each column of project memory's index: a memory's title
#: weighs most, then its tags, then its text.
PROJECT_WEIGHTS: Final = {"title": 3.0, "tags": 2.0, "body": 1.0}
#: The lexical channel's algorithm as a rank receipt names it (:func:`idf`).
ALGORITHM: Final = f"bm25(k1={K1}, b={B}, idf=ln(1+(N-n+0.5)/(n+0.5)))"


def idf(documents: int, holding: int) -> float:
    """A term's BM25 weight in an index of ``documents`` of which ``holding`` hold it:
    ``ln(1 + (N - n + 0.5) / (n + 0.5))`` (Lucene's). Always positive and falling as
    more documents hold the term: in a project of two memories a word both hold weighs
    0.18 and a word one holds 0.69; above a few thousand documents, for the terms a
    search matches on (:data:`COMMON_SHARE`), it is FTS5's IDF within 0.5%. A count
    above ``documents`` (one that drifted from the table's) counts as all of them."""
    holding = min(holding, documents)
    return math.log(1 + (documents - holding + 0.5) / (holding + 0.5))


def fts5_idf(documents: int, holding: int) -> float:
    """The IDF of FTS5's ``bm25()``: ``ln((N - n + 0.5) / (n + 0.5))``, at least 1e-6."""
    ratio = (documents - holding + 0.5) / (holding + 0.5)
    return math.log(ratio) if ratio > 1 else 1e-6


def variants(groups: list[Group]) -> list[str]:
    """Every distinct variant of ``groups``, in order (what document counts are asked for)."""
    return list(dict.fromkeys(variant for group in groups for variant in group))


def common_cutoff(documents: int) -> int | None:
    """Above how many holding documents a term of an index this size is common;
    ``None`` for a small index, where every term counts."""
    return None if documents < PRUNE_MIN_DOCUMENTS else int(COMMON_SHARE * documents)


@dataclass(frozen=True, slots=True)
class Stage:
    """One match a search runs: memories holding any of ``groups`` (or, when
    ``every``, all of them), ranked by BM25 over every variant of ``groups``."""

    groups: tuple[Group, ...]
    every: bool = False

    def phrases(self) -> list[str]:
        """The variants BM25 sums over, in order (as FTS5 counts the phrases of a match)."""
        return [variant for group in self.groups for variant in group]

    def parts(self, counts: dict[str, int]) -> list[Part]:
        """The stage's phrases by how many documents hold each (``counts``, exact), in
        order of first appearance; phrases no document holds are left out."""
        holding: dict[int, list[str]] = {}
        for phrase in self.phrases():
            if counts.get(phrase, 0) > 0:
                holding.setdefault(counts[phrase], []).append(phrase)
        return [Part(tuple(phrases), n) for n, phrases in holding.items()]


@dataclass(frozen=True, slots=True)
class Part:
    """Phrases of a stage that the same number of documents hold (``holding``)."""

    phrases: tuple[str, ...]
    holding: int

    def match(self) -> str:
        """The FTS5 ``MATCH`` expression of the part: any of its phrases (a phrase the
        stage holds twice is here twice, as BM25 counts it)."""
        return " OR ".join(f'"{phrase}"' for phrase in self.phrases)

    def factor(self, documents: int) -> float:
        """What turns FTS5's rank of the part into :func:`idf`'s."""
        return idf(documents, self.holding) / fts5_idf(documents, self.holding)


def search_stages(groups: list[Group], counts: dict[str, int], documents: int) -> list[Stage]:
    """The matches a search runs, in order, until one matches something.

    ``counts`` holds how many documents hold each variant, counted at least up to
    :func:`common_cutoff` ``+ 1``; ``documents`` is the size of the index. Small indexes
    (under :data:`PRUNE_MIN_DOCUMENTS`) rank every term. In larger ones a term (a group)
    any variant of which is held by more than :data:`COMMON_SHARE` of the documents is
    *common*: its BM25 weight is small, but matching it means scoring a large share of the
    index (130 ms for four such words at 100,000 documents). So the common terms are left
    out of the match (like Lucene's common-terms cutoff, without their small share of the
    score), and count only when the other terms match nothing (the caller may also skip a
    stage whose matches it cannot use): first the documents holding all of them, then, if
    there are none, those holding the first of them in the question.
    """
    if not groups:
        return []
    cutoff = common_cutoff(documents)
    if cutoff is None:
        return [Stage(tuple(groups))]
    common = [group for group in groups if max(counts.get(v, 0) for v in group) > cutoff]
    rest = [group for group in groups if group not in common]
    stages = [Stage(tuple(rest))] if rest else []
    if len(common) > 1:
        stages.append(Stage(tuple(common), every=True))
    if common:
        stages.append(Stage(tuple(common[:1])))
    return stages


def match_expression(stage: Stage) -> str:
    """The FTS5 ``MATCH`` expression of a stage."""
    return (" AND " if stage.every else " OR ").join(_group(group) for group in stage.groups)


def _group(group: Group) -> str:
    quoted = " OR ".join(f'"{variant}"' for variant in group)
    return quoted if len(group) == 1 else f"({quoted})"
