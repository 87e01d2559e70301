"""Fusion by a convex combination: exact parts and scores, the depth, ties in order of
first appearance."""

from __future__ import annotations

import pytest

from engram.search.fusion import FUSION_DEPTH, LEXICAL_WEIGHT, fused, hybrid, parts
from engram.search.vectors import SEMANTIC_FLOOR


def test_each_channel_is_normalized_then_weighed() -> None:
    shares = parts(bm25=3.0, best_bm25=6.0, cosine=SEMANTIC_FLOOR + 0.11)

    assert shares["lexical"] == pytest.approx(LEXICAL_WEIGHT * 0.5)
    assert shares["semantic"] == pytest.approx((1 - LEXICAL_WEIGHT) * 0.11 / (1 - SEMANTIC_FLOOR))


def test_a_channel_that_did_not_rank_a_candidate_gives_it_nothing() -> None:
    assert parts(bm25=0.0, best_bm25=6.0, cosine=None) == {"lexical": 0.0, "semantic": 0.0}
    assert parts(bm25=2.0, best_bm25=0.0, cosine=SEMANTIC_FLOOR - 0.1)["semantic"] == 0.0


def test_a_candidate_both_channels_rank_adds_both_parts() -> None:
    ranked = hybrid([("a", 4.0), ("b", 2.0)], [("b", 0.89), ("c", 0.80)])

    scores = dict(ranked)
    assert [key for key, _ in ranked] == ["b", "a", "c"]
    assert scores["b"] == pytest.approx(0.2 * 0.5 + 0.8 * (0.89 - 0.78) / 0.22)
    assert scores["a"] == pytest.approx(0.2)
    assert scores["c"] == pytest.approx(0.8 * (0.80 - 0.78) / 0.22)


def test_a_much_closer_memory_outranks_a_keyword_hit_reciprocal_ranks_would_tie() -> None:
    # RRF gave first-in-one-channel candidates the same score; the distance now counts.
    ranked = hybrid([("keyword", 5.0)], [("meaning", 0.92), ("keyword", 0.79)])

    assert [key for key, _ in ranked] == ["meaning", "keyword"]


def test_equal_scores_keep_the_order_of_first_appearance_lexical_first() -> None:
    assert [key for key, _ in hybrid([("x", 1.0), ("y", 1.0)], [])] == ["x", "y"]
    assert [key for key, _ in hybrid([], [("y", 0.9), ("x", 0.9)])] == ["y", "x"]
    assert [key for key, _ in hybrid([("x", 1.0)], [("y", 0.78)])] == ["x", "y"]


def test_past_the_depth_the_lexical_ranking_follows_in_its_order() -> None:
    lexical = [(f"l{n}", 100.0 - n) for n in range(FUSION_DEPTH + 2)]
    ranked = fused(lexical, [("s", 0.99)])

    keys = [key for key, _ in ranked]
    assert keys[0] == "s"
    assert keys[-2:] == [f"l{FUSION_DEPTH}", f"l{FUSION_DEPTH + 1}"]
    assert ranked[-1][1] == {
        "lexical": pytest.approx(0.2 * (100.0 - FUSION_DEPTH - 1) / 100.0),
        "semantic": 0.0,
    }


def test_nothing_to_fuse_is_nothing() -> None:
    assert hybrid([], []) == []
