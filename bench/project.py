"""Project memory at 5,000 and 10,000 memories: reindex time, load and search latency.

usage: .venv/bin/python bench/project.py [--sizes 5000 10000] [--calls 200]

A deterministic generator writes memory files (rules, skills, knowledge with tags,
dependencies and rule variants) under bench/work/project-N/. Measured: a full
reindex from scratch (the derived index deleted), then engram_load and
engram_search over MCP stdio against the real engram-mcp, warm (after the first
call). Targets: load p50 <= 20 ms, search p50 <= 5 ms, reindex of 10,000 <= 10 s.
For scale, the TypeScript engram measured here: 1.1 s a search at 1,000 memories,
14 s at 10,000, 25 minutes to reindex 10,000.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record, summary
from governed import sentence

from engram.compose import open_project
from engram.project.layout import init_layout
from engram.project.memory_file import FOLDERS, Memory, render_memory, slugify, title_for
from engram.testing.clients import StdioClient

WORK = Path(__file__).resolve().parent / "work"
TYPES = ("rule", "skill", "knowledge", "knowledge")


def generate(root: Path, size: int) -> None:
    """Write ``size`` memory files (deterministic for a given size)."""
    layout, _ = init_layout(root)
    rng = random.Random(size)
    ids: list[str] = []
    for number in range(size):
        kind = TYPES[number % len(TYPES)]
        text = sentence(rng)
        title = title_for(f"{text.split()[0]} {number} {' '.join(text.split()[1:8])}", kind)
        memory_id = slugify(title)
        body = f"# {title}\n\n## Content\n- {text}\n- {sentence(rng)}\n"
        if kind == "rule":
            body += "\n## Rule Variants\n### Light\n- Prefer it.\n### Balanced\n- Do it.\n"
            body += "### Strict\n- Always do it.\n"
        fields: dict[str, str | int | list[str]] = {
            "tags": sorted({rng.choice(text.split()).strip(".") for _ in range(3)})[:6],
            "confidence": "high",
            "authority": "instruction" if kind == "rule" else "reference",
            "revision": 1,
            "source": "manual",
            "created": "2026-01-01",
            "updated": "2026-01-01",
            "valid_from": "2026-01-01",
            "last_confirmed": "2026-01-01",
        }
        if ids and rng.random() < 0.1:
            fields["depends_on"] = [rng.choice(ids)]
        memory = Memory(memory_id, kind, "workspace", title, body, fields)
        path = layout.folder(FOLDERS[kind]) / f"{memory_id}.md"
        path.write_text(render_memory(memory), encoding="utf-8")
        ids.append(memory_id)


def reindex_seconds(root: Path) -> float:
    index = root / ".agents" / ".engram" / "index.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(str(index) + suffix).unlink(missing_ok=True)
    started = time.perf_counter()
    open_project(root).refresh()
    return time.perf_counter() - started


def over_stdio(root: Path, calls: int) -> dict[str, object]:
    rng = random.Random(7)
    queries = [" ".join(sentence(rng).split()[2:7]) for _ in range(calls)]
    env = {"ENGRAM_GLOBAL_DIR": str(root / "no-global")}
    with StdioClient(cwd=root, env=env, timeout=120) as client:

        def call(name: str, arguments: dict[str, object]) -> float:
            started = time.perf_counter()
            reply = client.request("tools/call", {"name": name, "arguments": arguments})
            elapsed = (time.perf_counter() - started) * 1000
            assert reply["result"]["structuredContent"]["ok"], reply
            return elapsed

        first = call("engram_load", {"query": queries[0]})
        load = [call("engram_load", {"query": query}) for query in queries]
        search = [call("engram_search", {"query": query}) for query in queries]
    return {
        "first_call_ms": round(first, 1),
        "engram_load": summary(load),
        "engram_search": summary(search),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    figures: dict[str, object] = {
        "targets": {"engram_load_p50_ms": 20, "engram_search_p50_ms": 5, "reindex_10000_s": 10}
    }
    for size in args.sizes:
        root = WORK / f"project-{size}"
        if not (root / "built").exists():  # an interrupted generation starts over
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            generate(root, size)
            (root / "built").touch()
        files = sum(len(os.listdir(root / ".agents" / ".engram" / f)) for f in FOLDERS.values())
        figures[str(size)] = {
            "files": files,
            "reindex_s": round(reindex_seconds(root), 2),
            "mcp_stdio": over_stdio(root, args.calls),
        }
    record("project_load_search", figures)


if __name__ == "__main__":
    main()
