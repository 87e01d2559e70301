"""Recording benchmark figures: one JSON file in the repository, one key per benchmark."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).with_name("results.json")


def machine() -> dict[str, Any]:
    """Where the figures were measured."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "commit": commit,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def summary(samples_ms: list[float]) -> dict[str, float]:
    """Median and spread of a list of milliseconds."""
    ordered = sorted(samples_ms)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]

    return {
        "n": len(ordered),
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(pct(0.95), 3),
        "min_ms": round(ordered[0], 3),
        "max_ms": round(ordered[-1], 3),
        "stdev_ms": round(statistics.pstdev(ordered), 3),
    }


def record(name: str, figures: dict[str, Any]) -> None:
    """Store ``figures`` under ``name`` (replacing the previous run) and print them."""
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data[name] = {"machine": machine(), **figures}
    RESULTS.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    print(json.dumps({name: figures}, indent=2))
