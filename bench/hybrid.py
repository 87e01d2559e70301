"""Hybrid search speed: the semantic projection's build, and search with both channels.

usage: .venv/bin/python bench/hybrid.py [--records 10000] [--queries 100]
                                          [--embed-at-most N] [--no-stdio]

Builds bench/governed.py's store of ``--records`` records with the semantic channel on in
its profile (reused when it is there), embeds them with ``engram host reindex``'s code
(timed: records per second on this machine), then times ``search`` over distinct
questions, so the query-vector cache never answers: in process, lexical and hybrid, and
over MCP stdio through a real ``engram-mcp``. Figures go to bench/results.json
(``hybrid_search_<records>``). Needs ``engram[semantic]``.

``--embed-at-most N`` embeds only the first N records with the model (at about 19
records per second, 100,000 records take 90 minutes); each other record gets a vector
*derived* from an embedded one (that vector plus Gaussian noise, cosine about 0.95 to
it, normalized), so the cosines a question meets stay those of real passages. Scoring
time depends on the number of vectors and their dimension, not on what they say; the
figures record how many vectors were derived.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record, summary
from governed import PURPOSE, build_store, sentence

from engram.host.runtime import open_memory
from engram.testing import StdioClient, call, value


def _questions(count: int) -> list[str]:
    rng = random.Random(11)
    return [" ".join(sentence(rng).split()[:8]) for _ in range(count)]


def _timed(search: Any, questions: list[str]) -> dict[str, float]:
    samples = []
    for question in questions:
        started = time.perf_counter()
        search(question)
        samples.append((time.perf_counter() - started) * 1000)
    return summary(samples)


def _embed_some(memory: Any, most: int) -> int:
    """Embed the scope's records with the model until ``most`` have a vector."""
    engine, scope = memory.engine, memory.binding.scope
    stop = threading.Event()
    model = engine.semantic.key

    def progress(done: int, total: int) -> None:
        with engine.store.read() as reader:
            if reader.vector_version(scope.scope_id, model)[0] >= most:
                stop.set()

    return int(engine.refresh_semantic(scope, progress, stop))


def _derive_the_rest(memory: Any) -> int:
    """Give every record still without a vector one derived from an embedded record's."""
    import numpy as np

    engine, scope_id = memory.engine, memory.binding.scope.scope_id
    model, dimension = engine.semantic.key, engine.semantic.embedder.dimension
    with engine.store.read() as reader:
        sources = [blob for _, blob in reader.vectors(scope_id, model)]
    if not sources:
        return 0
    rng = np.random.default_rng(7)
    derived = 0
    while True:
        with engine.store.read() as reader:
            batch = reader.unembedded(scope_id, model, 5000)
        if not batch:
            return derived
        with engine.store.write() as tx:
            for rowid, _ in batch:
                source = np.frombuffer(sources[int(rng.integers(len(sources)))], np.float32)
                vector = source + rng.normal(0.0, 0.0168, dimension).astype(np.float32)
                vector /= np.linalg.norm(vector)
                tx.put_vector(scope_id, rowid, model, vector.astype(np.float32).tobytes())
        derived += len(batch)


def _over_stdio(profile: Path, questions: list[str]) -> dict[str, float]:
    """Hybrid search timed through a real ``engram-mcp`` over stdio."""
    directory = profile.parent
    with StdioClient(["--host-profile", str(profile)], cwd=directory, timeout=120) as server:
        hybrid = {"minimum_channels": "lexical_and_semantic"}

        def over_stdio(question: str) -> None:
            query = {"query": question, "purpose_ref": PURPOSE, "capability_policy": hybrid}
            value(call(server, "engram_memory_search", query))

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the server loads its vectors once
            reply = call(
                server,
                "engram_memory_search",
                {"query": "warm up", "purpose_ref": PURPOSE, "capability_policy": hybrid},
            )
            if reply["result"]["structuredContent"]["ok"]:
                break
        return _timed(over_stdio, questions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--embed-at-most", type=int, help="derive the other records' vectors")
    parser.add_argument("--no-stdio", action="store_true", help="time in process only")
    parser.add_argument("--record-as", help="the results key (default hybrid_search_RECORDS)")
    options = parser.parse_args()
    started = time.perf_counter()
    profile, reused = build_store(options.records, semantic=True)
    build_s = 0.0 if reused else time.perf_counter() - started
    memory = open_memory(profile, sweep=False)
    if memory.engine.semantic is None:
        raise SystemExit("needs the semantic extra: pip install '.[semantic]'")
    started = time.perf_counter()
    if options.embed_at_most is None:
        embedded = memory.engine.refresh_semantic(memory.binding.scope)
    else:
        embedded = _embed_some(memory, options.embed_at_most)
    embed_s = time.perf_counter() - started
    figures: dict[str, Any] = {"records": options.records}
    derived = _derive_the_rest(memory)
    if derived:
        figures["derived_vectors"] = derived
    if build_s:
        figures["store_build_s"] = round(build_s, 1)
    if embedded:
        figures["embedded"] = embedded
        figures["embed_records_per_s"] = round(embedded / embed_s, 1)

    def search(question: str, channels: str = "lexical") -> None:
        policy = {"minimum_channels": channels}
        query = {"query": question, "purpose_ref": PURPOSE, "capability_policy": policy}
        envelope = memory.call("search", query)
        assert envelope["ok"], envelope

    questions = _questions(2 * options.queries)
    lexical_only = open_memory(profile, sweep=False, semantic=False)
    figures["in_process_lexical"] = _timed(
        lambda q: lexical_only.call("search", {"query": q, "purpose_ref": PURPOSE}),
        questions[: options.queries],
    )
    figures["in_process_hybrid"] = _timed(
        lambda q: search(q, "lexical_and_semantic"), questions[: options.queries]
    )
    figures["peak_rss_mib_in_process"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
    )
    memory.close()
    lexical_only.close()
    if options.no_stdio:
        record(options.record_as or f"hybrid_search_{options.records}", figures)
        return
    figures["stdio_hybrid"] = _over_stdio(profile, questions[options.queries :])
    record(options.record_as or f"hybrid_search_{options.records}", figures)


if __name__ == "__main__":
    main()
