"""What checking memories for stale files costs: 1,000 memories citing 5,000 files.

usage: .venv/bin/python bench/stale.py [--memories 1000] [--files 5000] [--runs 30]

A deterministic generator writes ``--files`` source files (about 2 KB each) in a Git
repository under bench/work/stale-N/ and ``--memories`` memory files, each citing five of
them with their blob ids recorded (as engram records them), then changes 1% of the files.
Measured, over the whole project (what ``engram stale`` and ``engram status`` check;
a load checks only the memories it returns, at most ``load.max_memories``):

- ``cold``: nothing remembered (the first check in a fresh clone): every file read and
  hashed;
- ``new_process``: a check in a new process (the CLI: ``engram stale``, ``engram load``),
  the blob ids remembered beside the index read back from disk;
- ``same_process``: a further check in the same process (``engram-mcp``);
- ``load_8``: the check a load makes of the eight memories it returns, in a new process.

Each figure is the check alone (``ProjectMemory.stale``), with the index already up to date.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record, summary

from engram.compose import open_project
from engram.project.layout import init_layout
from engram.project.memory_file import FOLDERS, Memory, render_memory
from engram.project.repository import blob_id
from engram.project.staleness import CACHE_NAME

WORK = Path(__file__).resolve().parent / "work"
CITED = 5


def generate(root: Path, memories: int, files: int) -> list[str]:
    """Write the files and the memories citing them; the paths of the files."""
    rng = random.Random(files)
    layout, _ = init_layout(root)
    paths = [f"src/pkg{number % 50:02d}/module_{number:05d}.txt" for number in range(files)]
    hashes = {}
    for path in paths:
        text = "".join(f"VALUE_{i} = {rng.randrange(10**9)}\n" for i in range(90))
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
        hashes[path] = blob_id(text.encode())
    for number in range(memories):  # each cites five files, as engram records them
        cited = [paths[(number * CITED + k) % files] for k in range(CITED)]
        memory_id = f"rule-{number:05d}"
        body = f"# Rule {number:05d}\n\n## Content\n- Read {', '.join(cited)} first.\n"
        fields: dict[str, str | int | list[str]] = {
            "created": "2026-01-01",
            "updated": "2026-01-01",
            "source_files": cited,
            "source_hashes": [hashes[path] for path in cited],
            "last_verified": "2026-01-01",
        }
        memory = Memory(memory_id, "rule", "workspace", f"Rule {number:05d}", body, fields)
        file = layout.folder(FOLDERS["rule"]) / f"{memory_id}.md"
        file.write_text(render_memory(memory), encoding="utf-8")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "--all"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    old = time.time() - 3600  # older than a timestamp tick: remembered by their stat
    for path in paths:
        os.utime(root / path, (old, old))
    for path in rng.sample(paths, files // 100):  # 1% of the files changed
        with (root / path).open("a", encoding="utf-8") as handle:
            handle.write("CHANGED = True\n")
        os.utime(root / path, (old, old))
    return paths


def timed(root: Path, ids: list[str] | None, forget: bool) -> tuple[float, int]:
    """One check in a fresh ``ProjectMemory`` (a new process); milliseconds, stale count."""
    if forget:
        (root / ".agents" / ".engram" / CACHE_NAME).unlink(missing_ok=True)
    memory = open_project(root)
    try:
        with memory.call():  # the index up to date and read, as a command has it by then
            memory.memories()
            started = time.perf_counter()
            report = memory.stale(ids)
            return (time.perf_counter() - started) * 1000, len(report.memories)
    finally:
        memory.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    root = WORK / f"stale-{args.memories}-{args.files}"
    if not (root / "built").exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        generate(root, args.memories, args.files)
        (root / "built").touch()
    ids = [f"rule-{number:05d}" for number in range(args.memories)]
    cold = [timed(root, None, forget=True) for _ in range(max(3, args.runs // 5))]
    stale = cold[0][1]
    timed(root, None, forget=False)  # leaves the remembered ids
    fresh = [timed(root, None, forget=False)[0] for _ in range(args.runs)]
    rng = random.Random(8)
    load = [timed(root, rng.sample(ids, 8), forget=False)[0] for _ in range(args.runs)]
    memory = open_project(root)
    memory.stale()
    same = []
    for _ in range(args.runs):
        with memory.call():
            started = time.perf_counter()
            memory.stale()
            same.append((time.perf_counter() - started) * 1000)
    memory.close()
    record(
        "stale_check",
        {
            "memories": args.memories,
            "files": args.files,
            "cited_per_memory": CITED,
            "stale_memories": stale,
            "cold": summary([ms for ms, _ in cold]),
            "new_process": summary(fresh),
            "same_process": summary(same),
            "load_8": summary(load),
            # The machine is shared: its load says how much of it the figures had.
            "load_average_1min": round(os.getloadavg()[0], 2),
        },
    )


if __name__ == "__main__":
    main()
