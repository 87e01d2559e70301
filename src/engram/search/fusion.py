"""Fusing rankings: reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

Each channel ranks candidates on its own scale (BM25, cosine); RRF looks only at ranks:
``score(d) = Σ 1 / (k + rank_c(d))`` over the channels ``c`` that rank ``d``. It needs no
calibration between the channels and is stable when one of them is noisy. ``k = 10``
rather than the paper's 60: with two channels of 50 candidates each, 60 flattens the
ranks so much that a memory both channels place in the middle beats one a channel places
first (LoCoMo R@5 0.546 with 60, 0.567 with 10; docs/retrieval.md). Ties are broken by
the order of first appearance, lexical first, so the same rankings always fuse the same
way.

Both faces rank with :func:`hybrid` and describe it with :func:`ranking_receipt`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Final, TypeVar

__all__ = ["FUSION_DEPTH", "RRF_K", "fuse", "hybrid", "ranking_receipt"]

RRF_K: Final = 10
#: Each channel contributes its first this many candidates to the fusion; the rest of
#: the lexical ranking follows the fused ones.
FUSION_DEPTH: Final = 50
K = TypeVar("K", bound=Hashable)


def fuse(rankings: Sequence[Sequence[K]], k: int = RRF_K) -> list[tuple[K, float]]:
    """The candidates of every ranking, best fused score first."""
    scores: dict[K, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    order = {key: position for position, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))


def hybrid(lexical: Sequence[K], semantic: Sequence[K]) -> list[tuple[K, float]]:
    """The first :data:`FUSION_DEPTH` of each channel fused, then the rest of the lexical
    ranking in its order (scored as a lexical-only candidate of its rank).

    The fused head does not depend on how deep the lexical ranking goes, so the pages of
    one search never repeat or skip a candidate.
    """
    head = fuse([lexical[:FUSION_DEPTH], semantic[:FUSION_DEPTH]])
    taken = {key for key, _ in head}
    tail = [
        (key, 1.0 / (RRF_K + rank))
        for rank, key in enumerate(lexical, start=1)
        if rank > FUSION_DEPTH and key not in taken
    ]
    return head + tail


def ranking_receipt(model: str | None) -> dict[str, Any]:
    """How a search ranked: its channels, and with the semantic one its model and fusion."""
    if model is None:
        return {"channels": ["lexical"], "algorithm": "sqlite-fts5-bm25"}
    return {
        "channels": ["lexical", "semantic"],
        "algorithm": f"rrf(k={RRF_K}): sqlite-fts5-bm25, cosine",
        "model": model,
        "fusion": "reciprocal_rank",
    }
