"""Scoring the semantic channel: brute-force cosine over a set of vectors.

Both faces keep their vectors in their own store (governed memory per scope, project
memory in its derived index) and score a question the same way: one matrix-vector
product (numpy) and a partial sort, keeping the neighbours at or above
:data:`SEMANTIC_FLOOR`. At 384 dimensions a vector is 1.5 KiB: 150 MiB and a few
milliseconds at 100,000 vectors on two cores.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from engram.search.embedding import Vectors

__all__ = ["SEMANTIC_FLOOR", "VectorSet"]

#: The lowest cosine (multilingual-e5-small) at which a text is a semantic candidate:
#: every question has *some* nearest vector, and one about something never stored must
#: not be answered with it. Calibrated on the development sets (docs/retrieval.md): it
#: keeps 95% of LoCoMo's evidence turns and 99% of the coding-agent set's relevant
#: memories.
SEMANTIC_FLOOR: Final = 0.78
#: From this many vectors on, the product is split between the machine's cores: numpy's
#: BLAS is kept to one thread (search/embedding.py), and one core reads 150 MB of
#: vectors in 14 ms where two take 8 (100,000 vectors).
SPLIT_FROM: Final = 20_000
K = TypeVar("K", bound=Hashable)


class VectorSet(Generic[K]):
    """Vectors, one per key, in the keys' order (which breaks equal scores): unit vectors,
    or the mean of a few (a governed record's views), whose dot product with a question is
    the mean of their cosines."""

    def __init__(self, keys: Sequence[K], matrix: Vectors) -> None:
        self.keys = list(keys)
        self.matrix = matrix

    @classmethod
    def from_blobs(cls, rows: Sequence[tuple[K, bytes]], dimension: int) -> VectorSet[K]:
        """Vectors stored as float32 bytes, ``(key, blob)`` in the order to keep."""
        import numpy as np

        matrix: Any = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
        return cls([key for key, _ in rows], matrix.reshape(len(rows), dimension))

    def __len__(self) -> int:
        return len(self.keys)

    def nearest(
        self, question: Vectors, depth: int, floor: float = SEMANTIC_FLOOR
    ) -> list[tuple[K, float]]:
        """At most ``depth`` keys whose cosine with ``question`` is at least ``floor``,
        best first (equal scores in the keys' order)."""
        import numpy as np

        if not self.keys or depth <= 0:
            return []
        scores = _scores(self.matrix, question)
        depth = min(depth, len(self.keys))
        top = np.sort(np.argpartition(-scores, depth - 1)[:depth])
        ordered = top[np.argsort(-scores[top], kind="stable")]
        return [(self.keys[i], float(scores[i])) for i in ordered if scores[i] >= floor]


def _scores(matrix: Vectors, question: Vectors) -> Vectors:
    """``matrix @ question``, in parallel parts for a large matrix (numpy releases the GIL
    in the product)."""
    import numpy as np

    workers = min(os.cpu_count() or 1, 4)
    if len(matrix) < SPLIT_FROM or workers < 2:
        return matrix @ question
    parts = np.array_split(matrix, workers)
    scores: Vectors = np.concatenate(list(_pool(workers).map(lambda part: part @ question, parts)))
    return scores


@functools.cache
def _pool(workers: int) -> ThreadPoolExecutor:
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(workers, thread_name_prefix="engram-vectors")
