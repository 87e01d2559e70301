"""The semantic channel of project memory: a vector per memory, kept in the derived index.

The same model, scoring and floor as governed memory (:mod:`engram.search.embedding`,
:class:`engram.search.vectors.VectorSet`). A memory is embedded from its
:attr:`~engram.project.memory_file.Memory.passage`; its vector is keyed by the passage's
digest, so an edit re-embeds only what changed. The channel ranks only while it is
*current* (every memory has its vector); until then routing and search are lexical.

Who embeds depends on the process. A command (``engram search``, ``load``, ``route``)
embeds what is missing before it ranks: a project holds tens to hundreds of memories, a
few seconds the first time and nothing after. ``engram-mcp`` never embeds on a request:
a background thread catches up after the files change, and requests rank lexically
meanwhile (``engram_search`` says which channels ranked).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from engram.errors import EngramError
from engram.project.ports import MemoryIndex, Progress, no_progress
from engram.search.fusion import FUSION_DEPTH
from engram.search.vectors import VectorSet

if TYPE_CHECKING:
    from engram.search.embedding import Embedder

__all__ = ["BATCH", "ProjectVectors"]

#: Passages embedded per call and stored per transaction.
BATCH: Final = 32
log = logging.getLogger("engram.project")


class ProjectVectors:
    """The semantic channel of one project index.

    ``background``: embed in a thread of this process (a server), not before ranking.
    ``embedder``: how to get the model (by default the process's, loaded on first use;
    ``None`` without the ``semantic`` extra).
    """

    def __init__(
        self,
        index: MemoryIndex,
        background: bool,
        embedder: Callable[[], Embedder | None] | None = None,
        progress: Progress = no_progress,
    ) -> None:
        self.index = index
        self.background = background
        self.progress = progress
        self._embedder = embedder or _process_embedder
        self._lock = threading.Lock()
        self._loaded: tuple[tuple[int, int], VectorSet[str]] | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def nearest(self, query: str, version: int) -> tuple[str, list[tuple[str, float]]] | None:
        """``(model, (memory id, cosine) nearest the query, best first)``, or ``None`` while the
        channel is not installed or not current. ``version``: the catalog's version (it
        changes whenever a memory does)."""
        embedder = self._embedder()
        if embedder is None:
            return None
        memories, embedded = self.index.vector_counts(embedder.model)
        if embedded < memories:
            if self.background:
                self._start()
                return None
            self.build(embedder, lambda done, total: self.progress("embedding", done, total))
            embedded = memories  # each memory has its vector now
        vectors = self._vectors(embedder, (version, embedded))
        return embedder.model, vectors.nearest(embedder.query(query), FUSION_DEPTH)

    def build(self, embedder: Embedder, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every passage that has no vector yet, a batch per transaction."""
        done = 0
        total = None
        while not self._stop.is_set():
            batch = self.index.unembedded(embedder.model, BATCH)
            if not batch:
                break
            if total is None:
                memories, embedded = self.index.vector_counts(embedder.model)
                total = memories - embedded
            vectors = embedder.passages([passage for _, passage in batch])
            self.index.put_vectors(
                embedder.model,
                [
                    (digest, vector.tobytes())
                    for (digest, _), vector in zip(batch, vectors, strict=True)
                ],
            )
            done += len(batch)
            if progress is not None:
                progress(done, max(total, done))
        return done

    def close(self) -> None:
        """Stop a background build (the index stays open: its owner closes it)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()

    def _vectors(self, embedder: Embedder, key: tuple[int, int]) -> VectorSet[str]:
        """The index's vectors, loaded again when ``key`` (the catalog's version and the
        number of vectors) changes."""
        with self._lock:
            if self._loaded is None or self._loaded[0] != key:
                rows = self.index.vectors(embedder.model)
                self._loaded = (key, VectorSet.from_blobs(rows, embedder.dimension))
            return self._loaded[1]

    def _start(self) -> None:
        with self._lock:
            running = self._thread is not None and self._thread.is_alive()
            if not running and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._run, name="engram-project-vectors", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            embedder = self._embedder()
            if embedder is None or self._stop.is_set():
                return
            try:
                self.build(embedder)
            except EngramError as error:  # the index busy or closing: tried at the next wake
                log.warning("the project's vectors could not be built (%s)", error.code)
            except (OSError, RuntimeError, ValueError, MemoryError) as error:  # the model
                log.warning("the project's vectors could not be built (%s)", type(error).__name__)


def _process_embedder() -> Embedder | None:
    from engram.search.embedding import load_embedder

    return load_embedder()
