"""The retrieval scorer: Recall@k, reciprocal rank, nDCG@10 and negatives, exactly."""

from __future__ import annotations

import math

import pytest
from scoring import Judged, judge, summarize


def test_a_first_hit_at_rank_one_scores_everything_one() -> None:
    assert judge(["a"], ["a", "b", "c"]) == Judged("all", False, 1.0, 1.0, 1.0, 1.0, 3)


def test_recall_counts_the_share_of_relevant_keys_within_k() -> None:
    ranked = ["x1", "a", "x2", "x3", "x4", "b", "x5"]
    judged = judge(["a", "b", "c"], ranked, "multi-hop")
    assert (judged.recall_5, judged.recall_10) == (1 / 3, 2 / 3)
    assert judged.reciprocal_rank == 0.5
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert judged.ndcg_10 == pytest.approx((1 / math.log2(3) + 1 / math.log2(7)) / ideal)


def test_nothing_found_scores_zero_and_a_repeated_key_counts_once() -> None:
    assert judge(["a"], ["b", "b", "c"]) == Judged("all", False, 0.0, 0.0, 0.0, 0.0, 2)
    assert judge(["a"], ["b", "b", "a"]).reciprocal_rank == 0.5


def test_a_hit_past_rank_ten_counts_for_reciprocal_rank_only() -> None:
    ranked = [f"x{n}" for n in range(10)] + ["a"]
    judged = judge(["a"], ranked)
    assert (judged.recall_10, judged.ndcg_10, judged.reciprocal_rank) == (0.0, 0.0, 1 / 11)


def test_a_negative_question_only_counts_what_it_returned() -> None:
    assert judge([], ["a", "b"], "negative") == Judged("negative", True, 0.0, 0.0, 0.0, 0.0, 2)
    assert judge([], []).returned == 0


def test_summaries_average_positives_per_category_and_count_answered_negatives() -> None:
    judged = [
        judge(["a"], ["a"], "single-hop"),
        judge(["a"], ["b", "a"], "temporal"),
        judge(["a"], [], "temporal"),
        judge([], ["z"], "negative"),
        judge([], [], "negative"),
    ]
    assert summarize(judged) == {
        "questions": 3,
        "recall_5": round(2 / 3, 4),
        "recall_10": round(2 / 3, 4),
        "mrr": 0.5,
        "ndcg_10": round((1 + 1 / math.log2(3)) / 3, 4),
        "by_category": {
            "single-hop": {
                "questions": 1,
                "recall_5": 1.0,
                "recall_10": 1.0,
                "mrr": 1.0,
                "ndcg_10": 1.0,
            },
            "temporal": {
                "questions": 2,
                "recall_5": 0.5,
                "recall_10": 0.5,
                "mrr": 0.25,
                "ndcg_10": round(1 / math.log2(3) / 2, 4),
            },
        },
        "negatives": 2,
        "negatives_answered": 1,
    }
