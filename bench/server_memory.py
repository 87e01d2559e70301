"""The resident memory of a governed ``engram-mcp``: lexical only, and with the model.

usage: .venv/bin/python bench/server_memory.py [--records 10000] [--queries 200]

Starts a real ``engram-mcp`` over bench/governed.py's store of ``--records`` records
(the lexical store, whose profile turns the semantic channel off), warms it with
``--queries`` searches and gets (each search twice), and reads its resident set from
``/proc`` (``VmRSS`` now, ``VmHWM`` at its peak). With ``--hybrid`` it does the same over
the store of bench/hybrid.py (semantic channel on and built). Figures go to
bench/results.json (``server_memory_<records>``). Target (issue 12): a lexical-only
server's warm RSS at 10,000 records at most 60 MiB.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record
from governed import build_store, over_stdio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--hybrid", action="store_true", help="also the semantic store")
    options = parser.parse_args()
    figures: dict[str, Any] = {"records": options.records, "queries": options.queries}
    profile, _ = build_store(options.records)
    figures["lexical"] = over_stdio(profile, options.queries)["server_rss_mib"]
    if options.hybrid:
        semantic = profile.parent.with_name(profile.parent.name + "-semantic") / "host.toml"
        if not semantic.exists():
            raise SystemExit(f"run bench/hybrid.py --records {options.records} first")
        figures["hybrid"] = over_stdio(semantic, options.queries)["server_rss_mib"]
    record(f"server_memory_{options.records}", figures)


if __name__ == "__main__":
    main()
