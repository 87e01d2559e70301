"""Governed memory: search/get latency at 1k/10k/100k records, and mutation throughput.

usage: .venv/bin/python bench/governed.py [--sizes 1000 10000 100000] [--queries 200]
       .venv/bin/python bench/governed.py --backend postgresql --sizes 100000 --no-throughput

Figures go to bench/results.json (``governed_*`` keys; ``governed_postgresql_*`` for the
PostgreSQL store). Stores are built once under bench/work/ (ignored by git), or in
database ``engram_bench`` of ``ENGRAM_TEST_POSTGRES``'s server (a schema per size), with a
deterministic generator and reused.
Targets: search p50 <= 5 ms in-process at 100k; capture+admission pairs per second at
least half the fsync-bound rate with synchronous=FULL. Search is timed twice over the
same 200 queries: ``search_first_pass`` in a freshly opened engine or server (SQLite's
page cache and the remembered document counts cold), then ``search`` (warm).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record, summary

from engram.host.profile import load_profile
from engram.host.runtime import binding_of, open_engine
from engram.host.setup import init_host
from engram.memory import admission, capture
from engram.memory.binding import Binding
from engram.memory.call import Write
from engram.memory.engine import MemoryEngine
from engram.memory.ports import MemoryTransaction
from engram.testing.clients import StdioClient

WORK = Path(__file__).resolve().parent / "work"
PURPOSE = "purpose:bench"
STOPWORDS = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "they",
    "you",
    "were",
    "her",
    "she",
    "there",
    "been",
    "one",
    "all",
    "we",
    "their",
    "has",
    "would",
    "when",
    "if",
    "so",
    "no",
    "will",
    "more",
    "can",
    "who",
    "what",
    "how",
    "do",
    "our",
    "use",
]
TECH = [
    "release",
    "deploy",
    "build",
    "cache",
    "index",
    "query",
    "shard",
    "replica",
    "backup",
    "restore",
    "token",
    "schema",
    "migration",
    "rollback",
    "feature",
    "flag",
    "canary",
    "latency",
    "throughput",
    "queue",
    "worker",
    "cron",
    "retry",
    "timeout",
    "circuit",
    "breaker",
    "gateway",
    "proxy",
    "certificate",
    "rotation",
    "secret",
    "vault",
    "audit",
    "journal",
    "tenant",
    "workspace",
    "principal",
    "policy",
    "admission",
    "review",
    "approval",
    "commit",
    "branch",
    "merge",
    "rebase",
    "pipeline",
    "artifact",
    "container",
    "image",
    "registry",
    "kernel",
    "network",
    "socket",
    "buffer",
    "stream",
    "parser",
    "compiler",
    "linker",
    "module",
    "package",
    "version",
    "pin",
    "lockfile",
    "dependency",
    "vendor",
    "license",
    "header",
    "config",
    "profile",
    "environment",
    "region",
    "zone",
    "cluster",
    "node",
    "pod",
    "volume",
    "snapshot",
    "quota",
    "limit",
    "metric",
    "trace",
    "span",
    "log",
    "alert",
    "dashboard",
    "incident",
    "postmortem",
    "runbook",
    "oncall",
    "escalation",
    "database",
    "table",
    "column",
    "vacuum",
    "checkpoint",
    "wal",
    "fsync",
    "durability",
    "isolation",
    "lock",
    "encryption",
    "key",
    "envelope",
    "nonce",
    "digest",
    "signature",
    "verify",
    "checksum",
    "tarball",
    "mirror",
    "cdn",
]
_SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "ta",
    "vo",
    "si",
    "pe",
    "da",
    "go",
    "ri",
    "fu",
    "ze",
    "ho",
    "ba",
    "ni",
    "to",
    "le",
    "mu",
]


def _vocabulary(size: int = 20_000) -> list[str]:
    """Stopwords first, then technical words, then deterministic pseudo-words."""
    rng = random.Random(2026)
    words = [*STOPWORDS, *TECH]
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


WORDS = _vocabulary()
_CUMULATIVE = list(itertools.accumulate(1 / (rank + 1) ** 1.07 for rank in range(len(WORDS))))


def sentence(rng: random.Random) -> str:
    """A Zipf-distributed sentence of 15 to 60 words (natural-language-like statistics)."""
    words = rng.choices(WORDS, cum_weights=_CUMULATIVE, k=rng.randint(15, 60))
    return " ".join(words) + f" ref{rng.randrange(10**6)}."


def arguments(text: str, key: str, now: int) -> dict[str, Any]:
    content = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    return {
        "idempotency_key": key,
        "payload": {
            "schema_version": 2,
            "purpose_ref": PURPOSE,
            "valid_time": {"t": now - 3_600_000},
            "components": [
                {"component_id": "c1", "kind": "context", "text": text, "citation_ids": ["s1"]}
            ],
            "primary_component_id": "c1",
            "primary_event": {"at": now - 3_600_000, "type_ref": "observed", "citation_id": "s1"},
            "citations": [
                {
                    "citation_id": "s1",
                    "source_ref": "bench",
                    "content_digest": content,
                    "locator": {"scheme": "bench", "value": key},
                }
            ],
        },
        "evidence": {"evidence_ref": "bench", "evidence_digest": content, "citation_ids": ["s1"]},
    }


def vacuum(engine: MemoryEngine) -> None:
    """Vacuum and analyze a PostgreSQL store, as autovacuum would (this CI server runs
    with it off): the planner's statistics grow with the store, and the plans each
    connection keeps are made again from them. Without it a build here slowed to 37
    records a second by 18,000, and searches were timed against stale statistics."""
    database = engine.store.database  # type: ignore[attr-defined]
    assert database.maintain(("VACUUM ANALYZE",))


def bench_store(
    name: str,
    size: int,
    batch: int,
    add: Callable[[MemoryEngine, Binding], Callable[[MemoryTransaction, int], None]],
    backend: str = "sqlite",
    semantic: bool = False,
) -> tuple[Path, bool]:
    """A benchmark's store: ``WORK/NAME`` (``NAME-postgresql`` with its schema in database
    ``engram_bench``), filled once by ``add(engine, binding)(tx, index)`` for each of
    ``size`` records, ``batch`` a transaction, and reused by later runs; whether reused.

    Fixture building only writes many records a transaction; measurements do not. On
    PostgreSQL the store is analyzed as it grows (:func:`vacuum`). The profile turns the
    semantic channel on only when asked.
    """
    directory = WORK / (name if backend == "sqlite" else f"{name}-{backend}")
    profile, built = directory / "host.toml", directory / "built"
    if built.exists():
        return profile, True
    shutil.rmtree(directory, ignore_errors=True)  # an interrupted build starts over
    store = None
    if backend == "postgresql":
        from engram.testing.postgres import PostgresRun

        schema = name.replace("-", "_")
        store = PostgresRun(name="engram_bench").new_store(schema=schema).url
    profile = init_host(
        directory,
        tenant="bench",
        workspace="ws",
        principal="loader",
        purpose=PURPOSE,
        grants=["all"],
        retention_max_days=3650,
        semantic=semantic,
        store=store,
    )
    loaded = load_profile(profile)
    engine = open_engine(
        loaded.store, loaded.keys, loaded.policy, durability="normal", semantic=False
    )
    one = add(engine, binding_of(loaded))
    for first in range(0, size, batch):
        with engine.store.write() as tx:
            for index in range(first, min(size, first + batch)):
                one(tx, index)
        if backend == "postgresql" and first % 20_000 == 0:
            vacuum(engine)  # what autovacuum does as a store grows (docs/deployment.md)
    if backend == "postgresql":
        vacuum(engine)
    engine.store.close()
    built.touch()
    return profile, False


def build_store(size: int, semantic: bool = False, backend: str = "sqlite") -> tuple[Path, bool]:
    """A profile whose store holds ``size`` admitted records, and whether it was reused
    (these figures are the lexical channel's: a server with the semantic channel on would
    also embed the records in the background while it is timed)."""

    def admitting(
        engine: MemoryEngine, binding: Binding
    ) -> Callable[[MemoryTransaction, int], None]:
        rng, now = random.Random(size), int(time.time() * 1000)

        def one(tx: MemoryTransaction, index: int) -> None:
            text = arguments(sentence(rng), f"bench-capture-{index:08d}", now)
            captured = capture.capture(Write.of(engine, tx, "capture", binding, text, now))
            admit = {
                "candidate_id": captured["candidate_id"],
                "idempotency_key": f"bench-admit-{index:08d}",
            }
            admission.request_admission(
                Write.of(engine, tx, "request_admission", binding, admit, now)
            )

        return one

    name = f"governed-{size}" + ("-semantic" if semantic else "")
    return bench_store(name, size, 1000, admitting, backend, semantic)


def queries(count: int, seed: int) -> list[str]:
    """Natural queries: 3 to 6 consecutive words of a generated sentence (stopwords too)."""
    rng = random.Random(seed)
    found = []
    for _ in range(count):
        words = sentence(rng).split()
        start = rng.randrange(max(1, len(words) - 6))
        found.append(" ".join(words[start : start + rng.randint(3, 6)]))
    return found


def timed(call: Any, items: list[Any]) -> list[float]:
    samples = []
    for item in items:
        started = time.perf_counter()
        call(item)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def in_process(profile: Path, count: int) -> dict[str, Any]:
    loaded = load_profile(profile)
    engine = open_engine(loaded.store, loaded.keys, loaded.policy, semantic=False)
    binding = binding_of(loaded)

    def search(query: str) -> dict[str, Any]:
        return engine.call("search", {"query": query, "purpose_ref": PURPOSE}, binding)

    texts = queries(count, 7)
    first_ms = timed(search, texts)  # a fresh process: caches cold
    results = [search(text) for text in texts[:20]]
    ids = [p["record"]["record_id"] for r in results for p in r["output"]["value"]["records"]]
    lookups = (ids * (count // max(1, len(ids)) + 1))[:count]
    search_ms = timed(search, texts)
    get_ms = timed(
        lambda rid: engine.call("get", {"record_id": rid, "purpose_ref": PURPOSE}, binding), lookups
    )
    return {
        "search_first_pass": summary(first_ms),
        "search": summary(search_ms),
        "get": summary(get_ms),
    }


def over_stdio(profile: Path, count: int) -> dict[str, Any]:
    with StdioClient(["--host-profile", str(profile)], timeout=120) as client:

        def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            reply = client.request("tools/call", {"name": name, "arguments": arguments})
            envelope: dict[str, Any] = reply["result"]["structuredContent"]
            return envelope

        texts = queries(count, 11)
        first = call("engram_memory_search", {"query": texts[0], "purpose_ref": PURPOSE})
        ids = [p["record"]["record_id"] for p in first["output"]["value"]["records"]] or ["mem_a"]
        first_ms = timed(
            lambda q: call("engram_memory_search", {"query": q, "purpose_ref": PURPOSE}), texts
        )
        search_ms = timed(
            lambda q: call("engram_memory_search", {"query": q, "purpose_ref": PURPOSE}), texts
        )
        get_ms = timed(
            lambda rid: call("engram_memory_get", {"record_id": rid, "purpose_ref": PURPOSE}),
            (ids * count)[:count],
        )
        rss = _memory_mib(client.process.pid)
    return {
        "search_first_pass": summary(first_ms),
        "search": summary(search_ms),
        "get": summary(get_ms),
        "server_rss_mib": rss,
    }


def _memory_mib(pid: int) -> dict[str, float]:
    """The server's resident memory now (warm, after the timed calls) and at its peak."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return {
        name: round(int(fields[key].split()[0]) / 1024, 1)
        for name, key in (("warm", "VmRSS"), ("peak", "VmHWM"))
    }


#: Concurrent agents of one process in the second throughput measurement.
AGENTS = 4


def fsync_rate(directory: Path, seconds: float = 1.5) -> float:
    """fsyncs per second of 4 KiB appends on the store's own disk."""
    path = directory / "fsync-probe"
    count, started = 0, time.perf_counter()
    with path.open("wb") as handle:
        while time.perf_counter() - started < seconds:
            handle.write(b"\0" * 4096)
            handle.flush()
            os.fsync(handle.fileno())
            count += 1
    path.unlink()
    return count / (time.perf_counter() - started)


class _TimedConnection:
    """A SQLite connection that adds the time of its statements to ``spent``."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection
        self.spent = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)

    def execute(self, sql: str, parameters: Any = ()) -> Any:
        started = time.perf_counter()
        try:
            return self._connection.execute(sql, parameters)
        finally:
            self.spent += time.perf_counter() - started


def pair_rate(
    durability: str, pairs: int, agents: int = 1, statements: list[float] | None = None
) -> float:
    """Capture+admission pairs per second through ``MemoryEngine.call``.

    ``agents`` threads of one process share the engine, as a host's agents do; each
    runs its pairs one after another (capture, then admission of that candidate).
    With ``statements``, the seconds spent in SQLite statements (commits included)
    are appended to it.
    """
    with tempfile.TemporaryDirectory(dir=WORK) as directory:
        profile = init_host(
            Path(directory),
            tenant="t",
            workspace="w",
            principal="p",
            purpose=PURPOSE,
            grants=["all"],
            semantic=False,
        )
        loaded = load_profile(profile)
        engine: MemoryEngine = open_engine(
            loaded.store, loaded.keys, loaded.policy, durability=durability, semantic=False
        )
        binding = binding_of(loaded)
        if statements is not None:
            database = engine.store.database  # type: ignore[attr-defined]
            timed = database._connection = _TimedConnection(database._connection)
        now = int(time.time() * 1000)
        texts = [sentence(random.Random(index)) for index in range(pairs)]

        def agent(first: int) -> None:
            for index in range(first, pairs, agents):
                captured = engine.call(
                    "capture", arguments(texts[index], f"pair-capture-{index:08d}", now), binding
                )
                candidate = captured["output"]["value"]["candidate_id"]
                admitted = engine.call(
                    "request_admission",
                    {"candidate_id": candidate, "idempotency_key": f"pair-admit-{index:08d}"},
                    binding,
                )
                assert admitted["output"]["value"]["outcome"]["status"] == "accepted"

        threads = [threading.Thread(target=agent, args=(first,)) for first in range(agents)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        rate = pairs / (time.perf_counter() - started)
        if statements is not None:
            statements.append(timed.spent)
        return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--only-throughput", action="store_true")
    parser.add_argument("--no-throughput", action="store_true")
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    WORK.mkdir(exist_ok=True)
    latency = {}
    for size in [] if args.only_throughput else args.sizes:
        started = time.perf_counter()
        profile, reused = build_store(size, backend=args.backend)
        # A reused store took no building: its time is not a build time.
        built = {} if reused else {"build_s": round(time.perf_counter() - started, 1)}
        latency[str(size)] = {
            **built,
            "in_process": in_process(profile, args.queries),
            "mcp_stdio": over_stdio(profile, args.queries),
        }
    if latency:
        name = "governed_search_get_latency"
        if args.backend != "sqlite":
            name = f"governed_{args.backend}_search_get_latency"
        record(name, {"target_search_p50_ms_at_100k": 5, **latency})
    if args.no_throughput:
        return
    rate = fsync_rate(WORK)
    # The median of three runs each: a run's rate varies by up to a fifth on this machine.
    rates = {
        f"{durability}_{agents}": statistics.median(
            pair_rate(durability, args.pairs, agents) for _ in range(3)
        )
        for durability in ("full", "normal")
        for agents in (1, AGENTS)
    }
    # One more run, for where one agent's time goes (the timing costs about 1%).
    statements: list[float] = []
    pair_rate("normal", args.pairs, 1, statements)
    record(
        "governed_capture_admission_throughput",
        {
            "disk_fsyncs_per_s": round(rate, 1),
            "fsync_bound_pairs_per_s": round(rate / 2, 1),
            "target_pairs_per_s": round(rate / 4, 1),
            "pairs_per_s_synchronous_full": round(rates["full_1"], 1),
            "pairs_per_s_synchronous_normal": round(rates["normal_1"], 1),
            f"pairs_per_s_synchronous_full_{AGENTS}_agents": round(rates[f"full_{AGENTS}"], 1),
            f"pairs_per_s_synchronous_normal_{AGENTS}_agents": round(rates[f"normal_{AGENTS}"], 1),
            "pairs": args.pairs,
            "note": (
                "each pair is two transactions (capture, admission): two fsyncs with FULL "
                "for one agent; concurrent agents of one process share commits (group commit)"
            ),
            "median_pair_ms_full": round(1000 / rates["full_1"], 2),
            # The target in other words: with one fsync per mutation, half the fsync-bound
            # rate leaves each mutation as much time for its work as the fsync takes.
            "fsync_ms": round(1000 / rate, 3),
            "mutation_work_ms_synchronous_normal": round(500 / rates["normal_1"], 3),
            "mutation_sqlite_ms_synchronous_normal": round(500 * statements[0] / args.pairs, 3),
            "mutation_disk_wait_ms": round(500 / rates["full_1"] - 500 / rates["normal_1"], 3),
        },
    )


if __name__ == "__main__":
    main()
