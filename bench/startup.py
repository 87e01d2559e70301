"""Cold start of engram-mcp: spawn, ``initialize``, ``tools/list``; time to that answer.

usage: .venv/bin/python bench/startup.py [--runs 20] [-- extra engram-mcp args]
Target on a 2-core machine: median <= 100 ms (the TypeScript engram takes 169 ms).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record, summary

from engram.testing.clients import server_command

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b"}},
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def one_start(command: list[str], cwd: str) -> tuple[float, int, int]:
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write((json.dumps(INITIALIZE) + "\n" + json.dumps(LIST) + "\n").encode())
    process.stdin.flush()
    process.stdout.readline()
    answer = json.loads(process.stdout.readline())
    elapsed_ms = (time.perf_counter() - started) * 1000
    assert answer["id"] == 2, answer
    assert answer["result"]["tools"], answer
    rss = peak_rss_kib(process.pid)
    process.stdin.close()
    process.wait(timeout=10)
    return elapsed_ms, rss, len(answer["result"]["tools"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("extra", nargs="*")
    args = parser.parse_args()
    command = [*server_command(), *args.extra]
    with tempfile.TemporaryDirectory() as cwd:
        one_start(command, cwd)  # warm the page cache and bytecode once, not counted
        runs = [one_start(command, cwd) for _ in range(args.runs)]
    times = [run[0] for run in runs]
    record(
        "startup_initialize_tools_list",
        {
            "command": " ".join(Path(part).name for part in command),
            "tools": runs[0][2],
            "target_p50_ms": 100,
            **summary(times),
            "peak_rss_kib_max": max(run[1] for run in runs),
        },
    )


if __name__ == "__main__":
    main()
