"""The semantic projection of governed memory: a vector per indexed record.

A record enters the projection after it entered the lexical index, and leaves it in the
same transaction as it leaves the lexical index (the store deletes its vectors in
``unindex``). Its vector is the mean of the unit vectors of its *views*
(:func:`engram.memory.records.semantic_views`): the whole record, the text the lexical
index holds, and, when other components go with it, its primary component alone. Its dot
product with a question is the mean of the views' cosines: a turn of a conversation
captured with its context is found both by what it says and by the setting the context
gives it (LoCoMo hybrid MRR 0.504 → 0.555, docs/retrieval.md), and a record
of one component keeps its one vector. The vectors
are made off the request path by :meth:`SemanticProjection.build` (``engram host
reindex``, or a background thread of ``engram-mcp``), a batch per transaction, so a build
resumes where it stopped.

A scope's channel is *current* when every record of its lexical index has a vector under
the projection's key (the model and :data:`VIEWS`); only then does search use it
(:meth:`SemanticProjection.ranking`).
Scoring is brute force (:class:`engram.search.vectors.VectorSet`) over the scope's
vectors, kept in memory per scope and reloaded when the projection changes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from engram.memory.binding import Scope
from engram.memory.ports import MemoryReader, MemoryStore
from engram.memory.recall import SemanticRanking
from engram.memory.records import semantic_views
from engram.memory.vault import Vault
from engram.search.vectors import VectorSet

if TYPE_CHECKING:
    from engram.search.embedding import Embedder

__all__ = ["VIEWS", "SemanticProjection", "projection_key"]

BATCH: Final = 32
#: How a record's vector is made; with the model's name, the projection's key in the
#: store, so vectors made another way (or by another model) are made again.
VIEWS: Final = "views-2"


def projection_key(model: str) -> str:
    """The key of the projection a model makes (``model`` in the store's vectors)."""
    return f"{model}#{VIEWS}"


class SemanticProjection:
    """The vectors of every scope of one store, for one embedder."""

    def __init__(self, store: MemoryStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self.key = projection_key(embedder.model)
        self._lock = threading.Lock()
        #: scope id -> (projection version, the scope's vectors by record rowid)
        self._loaded: dict[str, tuple[tuple[int, int, int], VectorSet[int]]] = {}

    def embed_query(self, query: str) -> Any:
        """The question's vector (embedded before the search opens its snapshot)."""
        return self.embedder.query(query)

    def ranking(self, reader: MemoryReader, scope: Scope, question: Any) -> SemanticRanking | None:
        """The scope's channel for this search (``question``: the question's vector), or
        ``None`` while it is not current."""
        scope_id, model = scope.scope_id, self.embedder.model
        version = reader.vector_version(scope_id, self.key)
        if version[0] != reader.indexed_count(scope_id):
            return None
        vectors = self._vectors(reader, scope_id, version)

        def nearest(depth: int) -> list[tuple[int, float]]:
            return vectors.nearest(question, depth)

        return SemanticRanking(scope_id, model, "/".join(map(str, version)), nearest)

    def forget_scope(self, scope: Scope) -> None:
        """Drop the scope's vectors held in memory (after a record left the projection)."""
        with self._lock:
            self._loaded.pop(scope.scope_id, None)

    def _vectors(
        self, reader: MemoryReader, scope_id: str, version: tuple[int, int, int]
    ) -> VectorSet[int]:
        with self._lock:
            loaded = self._loaded.get(scope_id)
            if loaded is None or loaded[0] != version:
                rows = reader.vectors(scope_id, self.key)
                loaded = (version, VectorSet.from_blobs(rows, self.embedder.dimension))
                self._loaded[scope_id] = loaded
            return loaded[1]

    def build(
        self,
        vault: Vault,
        scope: Scope,
        progress: Callable[[int, int], None] | None = None,
        stop: threading.Event | None = None,
    ) -> int:
        """Embed the scope's records that have no vector yet, a batch per transaction,
        until done or ``stop`` is set."""
        scope_id, key = scope.scope_id, self.key
        with self.store.read() as reader:
            total = reader.indexed_count(scope_id) - reader.vector_version(scope_id, key)[0]
        done = 0
        while stop is None or not stop.is_set():
            with self.store.read() as reader:
                batch = reader.unembedded(scope_id, key, BATCH)
                views = [
                    semantic_views(
                        json.loads(vault.open(reader, row.record_id, scope_id, row.sealed))[
                            "content"
                        ]
                    )
                    for _, row in batch
                ]
            if not batch:
                return done
            vectors = self.embedder.passages([text for texts in views for text in texts])
            with self.store.write() as tx:
                if done == 0:  # what another model or recipe made is of no use now
                    tx.drop_other_vectors(scope_id, key)
                start = 0
                for (rowid, _), texts in zip(batch, views, strict=True):
                    vector = vectors[start : start + len(texts)].mean(axis=0, dtype="float32")
                    tx.put_vector(scope_id, rowid, key, vector.tobytes())
                    start += len(texts)
            done += len(batch)
            if progress is not None:
                progress(done, max(total, done))
        return done
