"""``engram-mcp --http``: throughput and latency with 1, 4 and 16 concurrent clients.

usage: .venv/bin/python bench/http_server.py [--clients 1 4 16] [--pairs 200] [--searches 400]
           [--backends sqlite postgresql] [--servers 1 2]

One or two server processes on loopback over a fresh store (SQLite with synchronous=FULL,
or a PostgreSQL schema with synchronous_commit=on), one host profile and its token; each
client is a thread with its own keep-alive connection to one of the servers (in turn),
speaking the 2026-07-28 era (every request stands alone). Timed per client count:
capture+admission pairs (two tool calls each) and searches over what was captured.
Figures go to bench/results.json (``http_<backend>_<servers>_servers_<clients>_clients``).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record, summary

from engram.host.profile import load_profile
from engram.host.tokens import issue_token
from engram.testing import MODERN_META, host_profile
from engram.testing.governed import PURPOSE, current_capture_args
from engram.testing.http import HttpServer

MODERN = "2026-07-28"
META = MODERN_META  # the 2026-07-28 envelope of a client with no capabilities
WORDS = [
    "release",
    "deploy",
    "cache",
    "queue",
    "worker",
    "token",
    "schema",
    "index",
    "build",
    "test",
    "lint",
    "retry",
    "payment",
]


class Client:
    """One keep-alive connection speaking 2026-07-28 tools/call."""

    def __init__(self, port: int, token: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.token = token

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": META},
        }
        headers = {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {self.token}",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": tool,
        }
        self.connection.request("POST", "/mcp", json.dumps(body), headers)
        response = self.connection.getresponse()
        answer: dict[str, Any] = json.loads(response.read())
        structured: dict[str, Any] = answer["result"]["structuredContent"]
        if not structured["ok"]:
            raise RuntimeError(structured["error"]["code"])
        return structured


def _text(rng: random.Random) -> str:
    return "The " + " ".join(rng.choices(WORDS, k=8)) + " decision was taken."


def _run(clients: int, jobs: list[Any], work: Any) -> tuple[float, list[float]]:
    """Run ``work(client_index, job)`` over ``jobs`` split across threads."""
    latencies: list[float] = []
    lock = threading.Lock()

    def worker(first: int) -> None:
        mine = []
        for job in jobs[first::clients]:
            started = time.perf_counter()
            work(first, job)
            mine.append((time.perf_counter() - started) * 1000)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--searches", type=int, default=400)
    parser.add_argument("--backends", nargs="+", default=["sqlite"])
    parser.add_argument("--servers", type=int, nargs="+", default=[1])
    options = parser.parse_args()
    for backend in options.backends:
        for servers in options.servers:
            _configuration(backend, servers, options)


def _cpu_busy_s() -> float:
    """CPU seconds the whole machine has spent busy (every process: servers, clients,
    the database), from /proc/stat."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def commits_per_s(backend: str, url: str | None = None, count: int = 300) -> float:
    """Durable commits per second of one small row each: the backend's commit limit."""
    if backend == "postgresql":
        import psycopg

        with psycopg.connect(url or "", autocommit=True) as connection:
            connection.execute("CREATE TABLE IF NOT EXISTS commit_probe (n INTEGER)")
            connection.execute("SET synchronous_commit = on")
            started = time.perf_counter()
            for n in range(count):
                with connection.transaction():
                    connection.execute("INSERT INTO commit_probe VALUES (%s)", (n,))
            return count / (time.perf_counter() - started)
    import sqlite3

    with tempfile.TemporaryDirectory() as work:
        lite = sqlite3.connect(Path(work) / "probe.db", isolation_level=None)
        lite.execute("PRAGMA journal_mode = WAL")
        lite.execute("PRAGMA synchronous = FULL")
        lite.execute("CREATE TABLE commit_probe (n INTEGER)")
        started = time.perf_counter()
        for n in range(count):
            lite.execute("BEGIN IMMEDIATE")
            lite.execute("INSERT INTO commit_probe VALUES (?)", (n,))
            lite.execute("COMMIT")
        rate = count / (time.perf_counter() - started)
        lite.close()
        return rate


def _configuration(backend: str, servers: int, options: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as work:
        run = None
        store: dict[str, Any] = {}
        if backend == "postgresql":
            from engram.testing.postgres import PostgresRun

            run = PostgresRun()
            store["store"] = run.new_store().url
        try:
            limit = commits_per_s(backend, store.get("store"))
            profile = host_profile(Path(work) / "host", **store)
            token = issue_token(load_profile(profile), int(time.time()), ttl_s=86_400)
            with contextlib.ExitStack() as running:
                ports = [running.enter_context(HttpServer(profile)).port for _ in range(servers)]
                for count in options.clients:
                    _measure(backend, count, ports, token, options, limit)
        finally:
            if run is not None:
                run.close()


def _measure(
    backend: str,
    count: int,
    ports: list[int],
    token: str,
    options: argparse.Namespace,
    commit_limit: float,
) -> None:
    clients = [Client(ports[n % len(ports)], token) for n in range(count)]
    rng = random.Random(count)
    stamp = time.time_ns()
    pairs = [(index, _text(rng)) for index in range(options.pairs)]

    def pair(client: int, job: tuple[int, str]) -> None:
        index, text = job
        key = f"c{count}-{stamp}-{index}"
        captured = clients[client].call(
            "engram_memory_capture", current_capture_args(text, key=f"{key}-capture")
        )
        candidate = captured["output"]["value"]["candidate_id"]
        clients[client].call(
            "engram_memory_request_admission",
            {"candidate_id": candidate, "idempotency_key": f"{key}-admit"},
        )

    busy = _cpu_busy_s()
    elapsed, pair_ms = _run(count, pairs, pair)
    cpu_per_pair_s = (_cpu_busy_s() - busy) / len(pairs)
    queries = [" ".join(rng.choices(WORDS, k=2)) for _ in range(options.searches)]

    def search(client: int, query: str) -> None:
        clients[client].call("engram_memory_search", {"query": query, "purpose_ref": PURPOSE})

    search_elapsed, search_ms = _run(count, queries, search)
    record(
        f"http_{backend}_{len(ports)}_servers_{count}_clients",
        {
            "backend": backend,
            "clients": count,
            "server_processes": len(ports),
            "capture_admission_pairs_per_s": round(len(pairs) / elapsed, 1),
            # The model: a pair costs this much CPU of the whole machine (servers, clients
            # and database), and two durable commits; the lower bound is the limit.
            "cpu_ms_per_pair": round(cpu_per_pair_s * 1000, 2),
            "cpu_bound_pairs_per_s": round((os.cpu_count() or 1) / cpu_per_pair_s, 1),
            "durable_commits_per_s": round(commit_limit, 1),
            "commit_bound_pairs_per_s": round(commit_limit / 2, 1),
            "share_of_limit": round(
                len(pairs)
                / elapsed
                / min((os.cpu_count() or 1) / cpu_per_pair_s, commit_limit / 2),
                2,
            ),
            "pair": summary(pair_ms),
            "searches_per_s": round(len(queries) / search_elapsed, 1),
            "search": summary(search_ms),
        },
    )


if __name__ == "__main__":
    main()
