"""What a question searches: FTS5 ``MATCH`` expressions that can never be a syntax error.

A question's terms are groups of stem variants (:func:`engram.search.analysis.query_groups`);
each variant becomes a quoted FTS5 string, a group the ``OR`` of its variants, and the
groups are joined with ``OR``: every match contributes to the BM25 rank, memories with
more (and rarer) terms rank first, and no character of the user's text is ever read as
FTS5 syntax (variants are ``\\w`` runs: a quote cannot occur in one). In large indexes,
:func:`search_stages` leaves out terms most memories hold. A stage is a plain value, so
the PostgreSQL store runs the same stages over its postings tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from engram.search.analysis import MAX_QUERY_GROUPS, query_groups

__all__ = [
    "COMMON_SHARE",
    "MAX_QUERY_TERMS",
    "PRUNE_MIN_DOCUMENTS",
    "Group",
    "Stage",
    "common_cutoff",
    "match_expression",
    "query_groups",
    "search_expressions",
    "search_stages",
    "variants",
]

#: One query term: the stem variants any of which a memory may hold.
Group = tuple[str, ...]

MAX_QUERY_TERMS: Final = MAX_QUERY_GROUPS
#: Below this many indexed documents every term is kept: matching is cheap anyway.
PRUNE_MIN_DOCUMENTS: Final = 2000
#: A term held by more than this share of the documents is common (see
#: :func:`search_expressions`).
COMMON_SHARE: Final = 0.02


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


def search_expressions(groups: list[Group], counts: dict[str, int], documents: int) -> list[str]:
    """The FTS5 expressions of :func:`search_stages`."""
    return [match_expression(stage) for stage in search_stages(groups, counts, documents)]


def _group(group: Group) -> str:
    quoted = " OR ".join(f'"{variant}"' for variant in group)
    return quoted if len(group) == 1 else f"({quoted})"
