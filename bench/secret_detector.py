"""Cost of the credential detector: ``find_secrets`` on a 4 KB note and on 1 MB inputs.

usage: .venv/bin/python bench/secret_detector.py [--runs 5]
The 1 MB inputs are the contract's largest argument; the adversarial ones repeat the
start of a pattern so that a backtracking regular expression would go quadratic.
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record, summary

from engram.safety.secrets import find_secrets, strip_invisible

MEGABYTE = 1 << 20
SRC = Path(__file__).resolve().parents[1] / "src" / "engram"


def _fill(unit: str, size: int = MEGABYTE) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _random_words(size: int) -> str:
    rng = random.Random(1)
    alphabet = string.ascii_letters + string.digits
    words = ["".join(rng.choice(alphabet) for _ in range(30)) for _ in range(size // 31)]
    return " ".join(words)


def _note() -> str:
    return _fill(
        "Decision: keep BM25 as the lexical channel; see src/engram/search/lexical.py and "
        "record mem_k5a3rq7xlm2c4v6b8n0p1d3f5h7j9k2m4p6r8t0v2x4z6b8d0f2h content_digest "
        "sha256:9f2b5c7e1a3d4f6b8c0e2a4c6e8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a "
        "after commit 3f9a2b7c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f7a; password = get_password()\n",
        4096,
    )


INPUTS: dict[str, Callable[[], str]] = {
    "note_4kb": _note,
    "engram_source_1mb": lambda: _fill(
        "".join(path.read_text() for path in sorted(SRC.rglob("*.py")))
    ),
    "prose_1mb": lambda: _fill("The quick brown fox jumps over the lazy dog; all is well. "),
    "random_tokens_1mb": lambda: _random_words(MEGABYTE),
    "adversarial_password_1mb": lambda: _fill('password="'),
    "adversarial_pem_1mb": lambda: _fill("-----BEGIN RSA PRIVATE KEY-----\n"),
    "invisible_cjk_1mb": lambda: _fill("漢字\u200bかな\u00ad"),
}


def _time_ms(text: str, runs: int) -> tuple[list[float], int]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        findings = find_secrets(text)
        samples.append((time.perf_counter() - started) * 1000)
    return samples, len(findings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    figures: dict[str, object] = {}
    for name, build in INPUTS.items():
        text = build()
        runs = args.runs * 40 if len(text) < MEGABYTE else args.runs
        samples, found = _time_ms(text, runs)
        figures[name] = {"chars": len(text), "findings": found, **summary(samples)}
    text = INPUTS["invisible_cjk_1mb"]()
    started = time.perf_counter()
    strip_invisible(text)
    figures["strip_invisible_cjk_1mb_ms"] = round((time.perf_counter() - started) * 1000, 3)
    record("secrets_find", figures)


if __name__ == "__main__":
    main()
