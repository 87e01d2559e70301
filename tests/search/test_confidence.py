"""The confidence model: signals, the logistic tables, and what a search receipt names."""

from __future__ import annotations

import math

import pytest

from engram.search.analysis import query_groups
from engram.search.confidence import (
    FEATURES,
    HYBRID,
    LEXICAL,
    Model,
    Signals,
    confidence,
    coverage,
    model_for,
    receipt,
    signals,
)
from engram.search.fusion import signal_parts


def test_coverage_is_the_share_of_the_question_terms_a_text_holds() -> None:
    groups = query_groups("retry policy for the card processor")

    # Four terms (retry, policy, card, processor; "for" and "the" are stop words).
    assert len(groups) == 4
    assert coverage(groups, "RetryPolicy backs off on card declines") == 0.75
    assert coverage(groups, "Retries use a policy") == 0.5
    assert coverage(groups, "nothing in common") == 0.0
    assert coverage([], "anything") == 0.0


def test_a_model_is_a_sigmoid_of_its_weighted_features_rounded_to_four_places() -> None:
    model = Model("test", 1, -1.0, {"coverage": 2.0, "inverse_rank": 1.0})
    hit = Signals(coverage=0.5, lexical=1.0, semantic=None, score=1.0, margin=0.2, rank=2)

    # -1 + 2 * 0.5 + 1 * 0.5 = 0.5
    assert model.features(hit) == {"coverage": 0.5, "inverse_rank": 0.5}
    assert model(hit) == round(1 / (1 + math.exp(-0.5)), 4) == 0.6225


def test_a_very_negative_sum_is_zero_without_overflow() -> None:
    model = Model("test", 1, -1000.0, {"coverage": 1.0})
    hit = Signals(coverage=0.0, lexical=0.0, semantic=None, score=0.0, margin=0.0, rank=1)

    assert model(hit) == 0.0


def test_the_shipped_models_use_only_known_features_and_name_themselves() -> None:
    assert set(HYBRID.weights) <= set(FEATURES)
    assert set(LEXICAL.weights) <= set(FEATURES)
    assert "semantic" not in LEXICAL.weights
    assert model_for(semantic=True) is HYBRID
    assert model_for(semantic=False) is LEXICAL
    assert receipt(semantic=True) == {"model": "logistic-hybrid", "version": HYBRID.version}
    assert receipt(semantic=False) == {"model": "logistic-lexical", "version": LEXICAL.version}


def test_without_the_semantic_channel_the_lexical_model_scores() -> None:
    hit = Signals(coverage=1.0, lexical=1.0, semantic=None, score=1.0, margin=1.0, rank=1)

    assert confidence(hit) == LEXICAL(hit)
    assert confidence(Signals(1.0, 1.0, 0.5, 1.0, 1.0, 1)) == HYBRID(
        Signals(1.0, 1.0, 0.5, 1.0, 1.0, 1)
    )


def test_signals_of_a_lexical_ranking_are_shares_of_the_best_and_margins_to_the_next() -> None:
    ranked = signal_parts([("a", 4.0), ("b", 3.0), ("c", 1.0)], None)
    parts = [shares for _, shares in ranked]
    groups = query_groups("deploy staging")

    assert ranked == [("a", (1.0, 1.0, None)), ("b", (0.75, 0.75, None)), ("c", (0.25, 0.25, None))]
    assert signals(groups, parts, 0, "deploy to staging") == Signals(1.0, 1.0, None, 1.0, 0.25, 1)
    assert signals(groups, parts, 2, "deploy") == Signals(0.5, 0.25, None, 0.25, 0.25, 3)


def test_signals_of_a_fused_ranking_undo_the_weights() -> None:
    ranked = signal_parts([("a", 2.0), ("b", 1.0)], [("b", 0.89), ("c", 0.80)])

    # b: 0.2 * 0.5 + 0.8 * (0.89 - 0.78) / 0.22 = 0.1 + 0.4
    assert [key for key, _ in ranked] == ["b", "a", "c"]
    assert ranked[0][1] == pytest.approx((0.5, 0.5, 0.5))
    assert ranked[1][1] == pytest.approx((0.2, 1.0, 0.0))
    assert ranked[2][1] == pytest.approx((0.8 * 0.02 / 0.22, 0.0, 0.02 / 0.22))


@pytest.mark.parametrize(
    ("hit", "expected"),
    [
        # The best hit, holding every term, found by both channels well above the next one:
        # -5.6283 + 1.1889 + 0.99 + 1.359 * 0.5 + 1.2852 * 0.6 + 5.4513 * 0.3 + 2.4039
        # = 2.0414, and 1 / (1 + e^-2.0414) = 0.88499.
        (Signals(1.0, 1.0, 0.5, 0.6, 0.3, 1), 0.885),
        # The same hit barely above the next one.
        (Signals(1.0, 1.0, 0.5, 0.6, 0.01, 1), 0.6129),
        # A third hit holding half the terms, found by meaning only.
        (Signals(0.5, 0.0, 0.3, 0.24, 0.02, 3), 0.0321),
    ],
)
def test_the_hybrid_model_gives_these_confidences(hit: Signals, expected: float) -> None:
    assert confidence(hit) == HYBRID(hit) == expected


@pytest.mark.parametrize(
    ("hit", "expected"),
    [
        (Signals(1.0, 1.0, None, 1.0, 0.6, 1), 0.8082),
        (Signals(1.0, 1.0, None, 1.0, 0.05, 1), 0.3795),
        (Signals(0.25, 0.4, None, 0.4, 0.1, 2), 0.0312),
    ],
)
def test_the_lexical_model_gives_these_confidences(hit: Signals, expected: float) -> None:
    assert confidence(hit) == LEXICAL(hit) == expected
