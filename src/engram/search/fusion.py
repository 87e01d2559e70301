"""Fusing rankings: reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

Each channel ranks candidates on its own scale (BM25, cosine); RRF looks only at ranks:
``score(d) = Σ 1 / (k + rank_c(d))`` over the channels ``c`` that rank ``d``. It needs no
calibration between the channels and is stable when one of them is noisy. ``k = 10``
rather than the paper's 60: with two channels of 50 candidates each, 60 flattens the
ranks so much that a memory both channels place in the middle beats one a channel places
first (LoCoMo R@5 0.546 with 60, 0.567 with 10; docs/retrieval.md). Ties are broken by
the order of first appearance, lexical first, so the same rankings always fuse the same
way.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Final, TypeVar

__all__ = ["RRF_K", "fuse"]

RRF_K: Final = 10
K = TypeVar("K", bound=Hashable)


def fuse(rankings: Sequence[Sequence[K]], k: int = RRF_K) -> list[tuple[K, float]]:
    """The candidates of every ranking, best fused score first."""
    scores: dict[K, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    order = {key: position for position, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))
