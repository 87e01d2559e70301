"""Fusing the channels: a convex combination of their normalized scores.

Each channel scores candidates on its own scale: BM25 (unbounded, and relative to the
question) and cosine (bounded, but flat: multilingual-e5-small puts nearly every text
between 0.75 and 0.9 of any question). Both are brought to ``[0, 1]`` and weighed:

- **lexical part**: the candidate's BM25 score over the question's best (the first
  lexical candidate has 1);
- **semantic part**: how far the cosine rises above the semantic floor, over what is
  left of the scale: ``(cos - floor) / (1 - floor)`` (0 at the floor);
- ``score = LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * semantic``; a candidate
  only one channel ranks has 0 from the other.

Unlike reciprocal rank fusion (which this replaced: Cormack, Clarke and Büttcher, SIGIR
2009), it keeps how far apart two candidates are, not only their order: a memory the
model finds much closer than the rest is not pulled level with a keyword hit. Measured
with ``bench/retrieval.py`` (docs/retrieval.md#fusion): MRR on LoCoMo 0.470 → 0.492, and
on the coding-agent set +0.02 to +0.035 in every language (governed); the gain holds for a
lexical weight anywhere from 0.15 to 0.25, and 0.2 is kept. This follows Bruch, Gai and Ingber (ACM
TOIS 2023), who found a convex combination at least as good as RRF and little sensitive
to its weight.

Each channel contributes its first :data:`FUSION_DEPTH` candidates; the rest of the
lexical ranking follows, in its order, so the fused head does not depend on how deep
the lexical ranking goes and the pages of one search never repeat or skip a candidate.
Ties keep the order of first appearance, lexical first.

Both faces rank with :func:`hybrid` and describe it with :func:`ranking_receipt`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Final, TypeVar

from engram.search import confidence, lexical
from engram.search.vectors import SEMANTIC_FLOOR

__all__ = [
    "FUSION_DEPTH",
    "LEXICAL_WEIGHT",
    "fused",
    "hybrid",
    "parts",
    "ranking_receipt",
    "signal_parts",
]

#: The lexical channel's weight in the fused score (the semantic channel has the rest).
LEXICAL_WEIGHT: Final = 0.2
#: Each channel contributes its first this many candidates to the fusion; the rest of
#: the lexical ranking follows the fused ones.
FUSION_DEPTH: Final = 50
K = TypeVar("K", bound=Hashable)


def parts(bm25: float, best_bm25: float, cosine: float | None) -> dict[str, float]:
    """Each channel's weighted part of a fused score: ``bm25`` of the candidate (0 if the
    lexical channel did not rank it), ``best_bm25`` of the question's first lexical
    candidate, ``cosine`` (``None`` if the semantic channel did not rank it)."""
    lexical = bm25 / best_bm25 if best_bm25 > 0 else 0.0
    semantic = 0.0 if cosine is None else max(0.0, cosine - SEMANTIC_FLOOR)
    return {
        "lexical": LEXICAL_WEIGHT * lexical,
        "semantic": (1 - LEXICAL_WEIGHT) * semantic / (1 - SEMANTIC_FLOOR),
    }


def hybrid(
    lexical: Sequence[tuple[K, float]], semantic: Sequence[tuple[K, float]]
) -> list[tuple[K, float]]:
    """``(key, fused score)``, best first: the first :data:`FUSION_DEPTH` of each channel
    fused, then the rest of the lexical ranking in its order.

    ``lexical``: ``(key, BM25 score)``, best first; ``semantic``: ``(key, cosine)``, best
    first, at or above the semantic floor.
    """
    return [(key, sum(shares.values())) for key, shares in fused(lexical, semantic)]


def fused(
    lexical: Sequence[tuple[K, float]], semantic: Sequence[tuple[K, float]]
) -> list[tuple[K, dict[str, float]]]:
    """What :func:`hybrid` ranks, with each channel's part of each key's score."""
    best = max((score for _, score in lexical), default=0.0)
    bm25 = dict(lexical[:FUSION_DEPTH])
    cosine = dict(semantic[:FUSION_DEPTH])
    head = sorted(
        (
            (key, parts(bm25.get(key, 0.0), best, cosine.get(key)))
            for key in dict.fromkeys([*bm25, *cosine])
        ),
        key=lambda item: -sum(item[1].values()),  # stable: ties keep the order of appearance
    )
    tail = [
        (key, parts(score, best, None))
        for key, score in lexical[FUSION_DEPTH:]
        if key not in cosine
    ]
    return head + tail


def signal_parts(
    lexical: Sequence[tuple[K, float]], semantic: Sequence[tuple[K, float]] | None
) -> list[tuple[K, tuple[float, float, float | None]]]:
    """Each hit of a ranking, best first, with ``(score, lexical, semantic)``: its score in
    the ranking, its BM25 over the best, and its semantic part before weighing (``None``
    when the semantic channel did not rank: ``semantic`` is ``None``). Without the semantic
    channel the ranking is the lexical one and its score the BM25 share (what the
    confidence model reads: :mod:`engram.search.confidence`)."""
    if semantic is None:
        best = max((score for _, score in lexical), default=0.0)
        return [
            (key, (share, share, None))
            for key, score in lexical
            for share in [score / best if best > 0 else 0.0]
        ]
    return [
        (
            key,
            (
                shares["lexical"] + shares["semantic"],
                shares["lexical"] / LEXICAL_WEIGHT,
                shares["semantic"] / (1 - LEXICAL_WEIGHT),
            ),
        )
        for key, shares in fused(lexical, semantic)
    ]


def ranking_receipt(model: str | None) -> dict[str, Any]:
    """How a search ranked: its channels, with the semantic one its model and fusion, and
    the confidence model (name and version) that scored its hits."""
    if model is None:
        return {
            "channels": ["lexical"],
            "algorithm": lexical.ALGORITHM,
            "confidence": confidence.receipt(semantic=False),
        }
    return {
        "channels": ["lexical", "semantic"],
        "algorithm": (
            f"convex(lexical={LEXICAL_WEIGHT}, semantic={1 - LEXICAL_WEIGHT}):"
            f" {lexical.ALGORITHM} / best, (cosine - {SEMANTIC_FLOOR}) / {1 - SEMANTIC_FLOOR:g}"
        ),
        "model": model,
        "fusion": "convex_combination",
        "confidence": confidence.receipt(semantic=True),
    }
