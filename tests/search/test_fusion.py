"""Reciprocal rank fusion: exact scores, ties in order of first appearance."""

from __future__ import annotations

import pytest

from engram.search.fusion import RRF_K, fuse


def test_a_candidate_both_channels_rank_sums_both_contributions() -> None:
    fused = fuse([["a", "b", "c"], ["c", "d"]])
    assert [key for key, _ in fused] == ["c", "a", "b", "d"]
    assert dict(fused)["c"] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert dict(fused)["a"] == pytest.approx(1 / (RRF_K + 1))


def test_equal_scores_keep_the_order_of_first_appearance_lexical_first() -> None:
    assert [key for key, _ in fuse([["x", "y"], ["y", "x"]])] == ["x", "y"]
    assert [key for key, _ in fuse([["x"], ["y"]])] == ["x", "y"]


def test_nothing_to_fuse_is_nothing() -> None:
    assert fuse([[], []]) == []
