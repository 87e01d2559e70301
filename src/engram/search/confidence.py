"""How sure a search is of each hit: a calibrated confidence in ``[0, 1]``.

A hit given 0.7 should be relevant about 70% of the time. The confidence is a logistic
model over signals every search already has (:class:`Signals`): how much of the question
the hit holds, how each channel scored it, how far it stands above the next hit and its
rank. It is deterministic (a dot product and a sigmoid, in pure Python) and cheap: the only
work beyond the ranking is analysing the texts of the hits it is asked for (their stems,
cached by the analyzer).

There are two models, each a declarative table (:data:`HYBRID`, :data:`LEXICAL`): one for
a search both channels ranked, and one of the lexical signals alone, used when the semantic
channel is off, not installed or not current. Their coefficients were fitted by
``bench/calibration.py`` (logistic regression with grouped cross-validation on LoCoMo dev
and the coding-agent set; docs/retrieval.md#confidence has the method, the reliability
curves and what it still misses); a new fit is a new :attr:`Model.version`, and the rank
receipt names the model and version that scored a search (:func:`receipt`).

This module computes; it does not decide. What a floor omits is routing's and recall's
business (``engram.project.routing``, ``engram.memory.recall``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from engram.search.analysis import index_terms, query_groups

__all__ = [
    "FEATURES",
    "HYBRID",
    "LEXICAL",
    "Model",
    "Signals",
    "confidence",
    "coverage",
    "model_for",
    "query_groups",
    "receipt",
    "signals",
]


@dataclass(frozen=True, slots=True)
class Signals:
    """What a search knows of one hit.

    ``coverage``: the share of the question's terms the hit holds (:func:`coverage`);
    ``lexical``: its BM25 score over the question's best (0 when the lexical channel did
    not rank it); ``semantic``: how far its cosine rises above the semantic floor, over
    what is left of the scale (0 when the semantic channel did not find it, ``None`` when
    that channel did not rank at all); ``score``: its score in the ranking (fused, or the
    lexical share alone); ``margin``: its score minus the next hit's (its whole score for
    the last hit); ``rank``: its position, from 1.
    """

    coverage: float
    lexical: float
    semantic: float | None
    score: float
    margin: float
    rank: int


@dataclass(frozen=True)
class Model:
    """A logistic model: ``sigmoid(intercept + sum(weight * feature))``."""

    name: str
    version: int
    intercept: float
    weights: Mapping[str, float]

    def features(self, signals: Signals) -> dict[str, float]:
        """The model's inputs, by name (:data:`FEATURES`)."""
        values = {
            "coverage": signals.coverage,
            "lexical": signals.lexical,
            "semantic": signals.semantic or 0.0,
            "score": signals.score,
            "margin": signals.margin,
            "inverse_rank": 1.0 / signals.rank,
        }
        return {name: values[name] for name in self.weights}

    def __call__(self, signals: Signals) -> float:
        z = self.intercept + sum(
            self.weights[name] * value for name, value in self.features(signals).items()
        )
        return round(_sigmoid(z), 4)


#: Every feature a model may use.
FEATURES: Final = ("coverage", "lexical", "semantic", "score", "margin", "inverse_rank")

# Fitted by bench/calibration.py on LoCoMo dev and the coding-agent set (32,069 hits of
# both faces; docs/retrieval.md#confidence), numbers as it printed them. Do not edit by hand:
# refit, and raise the version.
HYBRID: Final = Model(
    name="logistic-hybrid",
    version=1,
    intercept=-5.6283,
    weights={
        "coverage": 1.1889,
        "lexical": 0.99,
        "semantic": 1.359,
        "score": 1.2852,
        "margin": 5.4513,
        "inverse_rank": 2.4039,
    },
)
LEXICAL: Final = Model(
    name="logistic-lexical",
    version=1,
    intercept=-5.7916,
    weights={"coverage": 1.3711, "lexical": 2.1368, "margin": 3.509, "inverse_rank": 1.6166},
)


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def model_for(semantic: bool) -> Model:
    """The model of a search whose semantic channel ranked (or not)."""
    return HYBRID if semantic else LEXICAL


def confidence(signals: Signals) -> float:
    """The hit's confidence, rounded to 4 decimals (the model by whether the semantic
    channel ranked)."""
    return model_for(signals.semantic is not None)(signals)


def coverage(groups: Sequence[tuple[str, ...]], text: str) -> float:
    """The share of the question's terms (``groups``, :func:`query_groups`) that ``text``
    holds as a search matches them (any stem variant of a term among its index terms)."""
    if not groups:
        return 0.0
    held = set(index_terms(text).split())
    return sum(1 for group in groups if held.intersection(group)) / len(groups)


def signals(
    groups: Sequence[tuple[str, ...]],
    ranked: Sequence[tuple[float, float, float | None]],
    position: int,
    text: str,
) -> Signals:
    """The signals of the hit at ``position`` (from 0) of a ranking.

    ``groups``: the question's terms (:func:`query_groups`); ``ranked``: every hit of the
    ranking, best first, as ``(score, lexical, semantic)`` (the parts of :class:`Signals`:
    :func:`engram.search.fusion.signal_parts`); ``text``: the hit's text, what its
    coverage is measured on.
    """
    score, lexical, semantic = ranked[position]
    following = ranked[position + 1][0] if position + 1 < len(ranked) else 0.0
    return Signals(
        coverage=round(coverage(groups, text), 6),
        lexical=round(lexical, 6),
        semantic=None if semantic is None else round(semantic, 6),
        score=round(score, 6),
        margin=round(score - following, 6),
        rank=position + 1,
    )


def receipt(semantic: bool) -> dict[str, Any]:
    """How a search's confidences were computed, as its rank receipt names it."""
    model = model_for(semantic)
    return {"model": model.name, "version": model.version}
