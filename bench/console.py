"""How long the review console takes to answer each page, as a person's browser asks for
it: the real ``engram console`` over loopback HTTP, a project of a few thousand memories
and a host profile whose store holds many governed records.

Each page is fetched ``--repeat`` times after one warm-up fetch; the figure is the time
from sending the request to the last byte of the page (p50 and p95). The target
(issue 16) is 200 ms a page on this 2-core machine.

    .venv/bin/python bench/console.py --memories 3000 --records 100000
"""

from __future__ import annotations

import argparse
import http.client
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import record, summary
from governed import WORK, build_store

ENGRAM = Path(sys.executable).with_name("engram")
URL = re.compile(
    r"engram console: (http://(engram-[0-9a-f]{16}\.localhost:(\d+))/login\?secret=\S+)"
)
TYPES = ("rule", "skill", "knowledge")
WORDS = [
    "release",
    "deploy",
    "retry",
    "payments",
    "cache",
    "schema",
    "migration",
    "index",
    "token",
    "budget",
    "review",
    "checkout",
    "branch",
    "staging",
    "rollback",
    "logging",
    "metrics",
    "alert",
    "queue",
    "worker",
    "timeout",
]


def build_project(count: int) -> Path:
    """A project of ``count`` memory files (written as a person would write them)."""
    root = WORK / f"console-project-{count}"
    base = root / ".agents" / ".engram"
    if (root / "built").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(ENGRAM), "init"], cwd=root, check=True, capture_output=True)
    for number in range(count):
        kind = TYPES[number % 3]
        words = [WORDS[(number * 7 + k * 3) % len(WORDS)] for k in range(6)]
        memory_id = f"memory-{number:05d}"
        folder = {"rule": "rules", "skill": "skills", "knowledge": "knowledge"}[kind]
        (base / folder / f"{memory_id}.md").write_text(
            "\n".join(
                [
                    "---",
                    "schema_version: 3",
                    f"id: {memory_id}",
                    f"type: {kind}",
                    f"updated: 2026-{1 + number % 12:02d}-{1 + number % 28:02d}",
                    "---",
                    "",
                    f"# {' '.join(words).capitalize()} {number}",
                    "",
                    "## Content",
                    f"- {' '.join(reversed(words))} for case {number}.",
                    "",
                ]
            ),
            encoding="utf-8",
        )
    (root / "built").touch()
    return root


def with_audit(profile: Path) -> Path:
    """The store of ``profile`` with two audit entries a record (its capture and its
    admission; the fast builder writes none), from several principals and outcomes, as
    agents' calls would have left them. Added once."""
    from engram.host.profile import load_profile
    from engram.host.runtime import binding_of, open_engine
    from engram.memory.ports import AuditEntry

    marker = profile.with_name("audited")
    if marker.exists():
        return profile
    loaded = load_profile(profile)
    engine = open_engine(
        loaded.store, loaded.keys, loaded.policy, durability="normal", semantic=False
    )
    binding = binding_of(loaded)
    with engine.store.read() as reader:
        count = reader.indexed_count(binding.scope.scope_id)
    now = int(time.time() * 1000)
    for batch in range(0, 2 * count, 2000):
        with engine.store.write() as tx:
            for number in range(batch, min(2 * count, batch + 2000)):
                tx.audit(
                    AuditEntry(
                        audit_id=f"aud_bench{number:012d}",
                        scope_id=binding.scope.scope_id,
                        at_ms=now - (2 * count - number) * 1000,
                        tool=("capture", "request_admission")[number % 2],
                        outcome=("ok", "ok", "ok", "gate_failed")[number % 4],
                        identity={**binding.identity(), "principal": f"agent-{number % 7}"},
                        digests={},
                    )
                )
    engine.store.close()
    marker.touch()
    return profile


class Console:
    """A running ``engram console`` and a logged-in HTTP connection to it."""

    def __init__(self, root: Path, profile: Path | None) -> None:
        args = [str(ENGRAM), "console", *(["--host-profile", str(profile)] if profile else [])]
        env = {**os.environ, "ENGRAM_SEMANTIC": "off", "ENGRAM_GLOBAL_DIR": str(WORK / "global")}
        self.process = subprocess.Popen(
            args, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        lines: queue.Queue[str] = queue.Queue()
        assert self.process.stdout is not None
        stdout = self.process.stdout

        def read() -> None:
            for line in stdout:
                lines.put(line)

        threading.Thread(target=read, daemon=True).start()
        while not (match := URL.search(lines.get(timeout=600))):
            pass
        self.host, self.port = match.group(2), int(match.group(3))
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        self.connection.connect()
        # As a browser does: no Nagle delay on the request's packets.
        self.connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connection.request(
            "GET", match.group(1).split(self.host, 1)[1], headers={"Host": self.host}
        )
        response = self.connection.getresponse()
        response.read()
        self.cookie = str(response.getheader("set-cookie")).split(";", 1)[0]

    def fetch(self, path: str) -> tuple[float, str]:
        """One page: milliseconds to its last byte, and its text."""
        started = time.perf_counter()
        self.connection.request("GET", path, headers={"Host": self.host, "Cookie": self.cookie})
        response = self.connection.getresponse()
        body = response.read().decode()
        elapsed = (time.perf_counter() - started) * 1000
        if response.status != 200:
            raise SystemExit(f"{path}: HTTP {response.status}")
        return elapsed, body

    def stop(self) -> None:
        self.connection.close()
        self.process.terminate()
        self.process.wait(timeout=60)


def timed_pages(console: Console, paths: list[str], repeat: int) -> dict[str, Any]:
    figures = {}
    for path in paths:
        console.fetch(path)  # warm-up
        figures[path] = summary([console.fetch(path)[0] for _ in range(repeat)])
        print(f"{figures[path]['p50_ms']:8.1f} ms p50  {figures[path]['p95_ms']:8.1f} p95  {path}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=3000)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    options = parser.parse_args()
    root = build_project(options.memories)
    profile = with_audit(build_store(options.records, backend=options.backend)[0])
    console = Console(root, profile)
    try:
        _, records_page = console.fetch("/governed/0/records")
        after = re.search(r"after=([0-9.]+)", records_page)
        _, journal_page = console.fetch("/governed/0/journal")
        before = re.search(r"before=([0-9]+)", journal_page)
        record_id = re.search(r"/governed/0/records/(mem_[a-z0-9]+)", records_page)
        if not (after and before and record_id):
            raise SystemExit("the pages do not link to their next pages")
        paths = [
            "/",
            "/project",
            "/project?type=rule&page=5",
            "/project/memory/memory-01234",
            "/project/search?q=release+rollback+staging",
            "/project/load?task=deploy+the+payments+worker&budget=2000",
            "/project/proposals",
            "/governed/0",
            "/governed/0/records",
            f"/governed/0/records?after={after.group(1)}",
            f"/governed/0/records/{record_id.group(1)}",
            "/governed/0/journal",
            f"/governed/0/journal?before={before.group(1)}",
            "/governed/0/audit",
            "/governed/0/audit?tool=request_admission&outcome=ok",
            "/governed/0/audit?principal=agent-3",
            "/governed/0/audit?principal=nobody",
        ]
        figures = timed_pages(console, paths, options.repeat)
    finally:
        console.stop()
    worst = max(page["p50_ms"] for page in figures.values())
    record(
        f"console_pages_{options.memories}_memories_{options.records}_records"
        + ("" if options.backend == "sqlite" else f"_{options.backend}"),
        {
            "backend": options.backend,
            "memories": options.memories,
            "records": options.records,
            "repeat": options.repeat,
            "target_ms": 200,
            "worst_p50_ms": worst,
            "pages": figures,
        },
    )


if __name__ == "__main__":
    main()
