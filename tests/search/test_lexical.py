"""Query terms to FTS5 expressions: safe terms, and common terms left out of large indexes."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.search.lexical import (
    COMMON_SHARE,
    MAX_QUERY_TERMS,
    PRUNE_MIN_DOCUMENTS,
    common_cutoff,
    fts5_idf,
    idf,
    match_expression,
    query_groups,
    search_stages,
)

LARGE = 10_000  # documents; a term is common above 200 of them
FREQUENCIES = {"the": 9_000, "in": 600, "tarball": 12, "is": 700, "with": 201, "as": 200}
THE, IN, TARBALL, IS, WITH, AS = (("the",), ("in",), ("tarball",), ("is",), ("with",), ("as",))


def search_expressions(
    groups: list[tuple[str, ...]], counts: dict[str, int], documents: int
) -> list[str]:
    """The FTS5 expressions of the stages a search runs."""
    return [match_expression(stage) for stage in search_stages(groups, counts, documents)]


def test_the_cutoff_is_two_percent_of_an_index_of_at_least_2000_documents() -> None:
    assert (common_cutoff(1_999), common_cutoff(2_000), common_cutoff(100_051)) == (None, 40, 2001)


def test_a_small_index_ranks_every_term() -> None:
    documents = PRUNE_MIN_DOCUMENTS - 1
    assert search_expressions([THE, TARBALL], {"the": documents}, documents) == [
        '"the" OR "tarball"'
    ]


def test_a_group_of_variants_matches_any_of_them() -> None:
    groups: list[tuple[str, ...]] = [("publi", "publie"), TARBALL]
    assert search_expressions(groups, {}, 10) == ['("publi" OR "publie") OR "tarball"']


def test_a_group_is_common_when_any_of_its_variants_is() -> None:
    groups: list[tuple[str, ...]] = [("tarball", "the"), ("in", "zz")]
    assert search_expressions(groups, FREQUENCIES, LARGE) == [
        '("tarball" OR "the") AND ("in" OR "zz")',
        '("tarball" OR "the")',
    ]


def test_common_terms_are_left_out_while_a_rarer_one_remains() -> None:
    assert COMMON_SHARE * LARGE == 200
    assert search_expressions([THE, TARBALL, IN, AS], FREQUENCIES, LARGE) == [
        '"tarball" OR "as"',  # 200 documents is not more than the share
        '"the" AND "in"',
        '"the"',
    ]


def test_a_query_of_common_words_asks_for_all_of_them_then_the_first() -> None:
    assert search_expressions([IS, THE, WITH], FREQUENCIES, LARGE) == [
        '"is" AND "the" AND "with"',
        '"is"',
    ]
    assert search_expressions([THE], FREQUENCIES, LARGE) == ['"the"']


def test_a_term_without_a_count_is_not_common() -> None:
    assert search_expressions([("releases",), THE], FREQUENCIES, LARGE) == [
        '"releases"',
        '"the"',
    ]


def test_no_terms_no_expression() -> None:
    assert search_expressions([], FREQUENCIES, LARGE) == []


@given(
    st.lists(st.text(min_size=1), max_size=8),
    st.dictionaries(st.text(min_size=1), st.integers(0, 20_000)),
    st.integers(0, 20_000),
)
def test_every_term_is_quoted_and_every_query_term_can_still_match(
    text: list[str], frequencies: dict[str, int], documents: int
) -> None:
    groups = query_groups(" ".join(text))
    assert len(groups) <= MAX_QUERY_TERMS
    expressions = search_expressions(groups, frequencies, documents)
    assert bool(expressions) == bool(groups)
    parsed = [_terms_of(expression) for expression in expressions]
    every = {variant for group in groups for variant in group}
    assert set().union(*parsed) <= every
    # A term is matched first unless it is common.
    first = parsed[0] if parsed else set()
    assert all(
        set(group) <= first or max(frequencies.get(v, 0) for v in group) > COMMON_SHARE * documents
        for group in groups
    )


def _terms_of(expression: str) -> set[str]:
    flat = expression.replace("(", "").replace(")", "")
    parts = flat.replace(" AND ", " OR ").split(" OR ")
    assert all(len(part) >= 3 for part in parts)
    assert all(part[0] == part[-1] == '"' for part in parts)
    assert all('"' not in part[1:-1] for part in parts)
    return {part[1:-1] for part in parts}


def test_both_idfs_stay_positive_even_for_a_count_above_the_documents() -> None:
    assert fts5_idf(4, 1) == pytest.approx(math.log(3.5 / 1.5))
    assert [fts5_idf(4, 2), fts5_idf(4, 4), fts5_idf(2, 3)] == [1e-6, 1e-6, 1e-6]
    assert [round(idf(2, 1), 6), round(idf(2, 2), 6), round(idf(2, 3), 6)] == [
        0.693147,
        0.182322,
        0.182322,
    ]
