"""The host's views of a scope (engram.memory.overview): the p50 of each call at 10k/100k
records.

usage: .venv/bin/python bench/overview.py [--sizes 10000 100000] [--repeat 200]
       .venv/bin/python bench/overview.py --backend postgresql --sizes 100000

Each store holds ``size`` admitted records captured over 400 days by four principals, with
the history around them: for every ten records one more candidate rejected and one
withdrawn, for every hundred one record forgotten and its content captured again (held
for adjudication), and an audit entry for every call plus a read for every other record
(about 2.4 journal events and 3 audit entries per record). Stores are built once under
bench/work/ (or in database ``engram_bench`` of ``ENGRAM_TEST_POSTGRES``'s server, schema
``overview_<size>``) with a deterministic generator, and reused.

Figures go to bench/results.json (``overview_latency``, ``overview_postgresql_latency``).
Target: every call's p50 well under 20 ms at 100k records.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import record, summary
from governed import WORK, arguments, bench_store, sentence, timed, vacuum

from engram.host.profile import load_profile
from engram.host.runtime import binding_of, open_engine
from engram.memory import admission, capture
from engram.memory.admission import Decision
from engram.memory.binding import Binding
from engram.memory.call import Write
from engram.memory.engine import MemoryEngine
from engram.memory.envelope import new_audit_id
from engram.memory.gate import Approval, Operation
from engram.memory.overview import Overview
from engram.memory.ports import AuditEntry, MemoryTransaction
from engram.memory.tools import TOOLS

DAY: Final = 86_400_000
SPAN_DAYS: Final = 400
PRINCIPALS: Final = ("loader", "alice", "bob", "carol")
BATCH: Final = 500
#: An argument digest for the synthetic audit entries (they record no content anyway).
ARGUMENTS: Final = {"arguments": "sha256:" + "ab" * 32}


class _Refuse:
    """An admission policy that refuses (the rejected tenth)."""

    policy_id = "bench.refuse/v1"

    def decide(self, record: dict[str, Any], now_ms: int) -> Decision:
        return Decision(False, self.policy_id, now_ms, ("bench",))


class _Builder:
    """Writes one record's history inside a transaction, as the tools would."""

    def __init__(self, engine: MemoryEngine, bindings: list[Binding], end_ms: int, size: int):
        self.engine, self.bindings = engine, bindings
        self.start = end_ms - SPAN_DAYS * DAY
        self.step = SPAN_DAYS * DAY // size
        self.rng = random.Random(size)

    def _audit(self, tx: MemoryTransaction, who: Binding, tool: str, at: int, outcome: str) -> None:
        entry = AuditEntry(
            new_audit_id(), who.scope.scope_id, at, tool, outcome, who.identity(), ARGUMENTS
        )
        tx.audit(entry)

    def _capture(
        self, tx: MemoryTransaction, who: Binding, text: str, key: str, at: int, again: int = 0
    ) -> str:
        """Capture at ``at`` (``again`` ms later: the same payload once more)."""
        value = capture.capture(
            Write.of(self.engine, tx, "capture", who, arguments(text, key, at), at + again)
        )
        self._audit(tx, who, "capture", at, "ok")
        return str(value["candidate_id"])

    def _admit(
        self, tx: MemoryTransaction, who: Binding, candidate: str, at: int, refuse: bool = False
    ) -> dict[str, Any]:
        policy = _Refuse() if refuse else self.engine.admission_policy
        arguments = {"candidate_id": candidate, "idempotency_key": f"admit-{candidate}"}
        step = Write.of(self.engine, tx, "request_admission", who, arguments, at)
        value = admission.request_admission(step, policy)
        self._audit(tx, who, "request_admission", at, "ok")
        outcome: dict[str, Any] = value["outcome"]
        return outcome

    def one(self, tx: MemoryTransaction, index: int) -> None:
        """Record ``index`` and what happens around it (see the module)."""
        who, at = self.bindings[index % len(self.bindings)], self.start + index * self.step
        text = sentence(self.rng)
        key = f"overview-{index:08d}"
        candidate = self._capture(tx, who, text, key, at)
        record_id = self._admit(tx, who, candidate, at)["record_id"]
        if index % 10 == 3:
            other = self._capture(tx, who, sentence(self.rng), f"refused-{index:08d}", at)
            self._admit(tx, who, other, at, refuse=True)
        if index % 10 == 7:
            draft = self._capture(tx, who, sentence(self.rng), f"withdrawn-{index:08d}", at)
            self._exit(tx, who, "withdraw", {"candidate_id": draft}, at)
        if index % 100 == 50:
            self._exit(tx, who, "forget", {"record_id": record_id}, at + 1)
            again = self._capture(tx, who, text, key, at, again=2)
            assert self._admit(tx, who, again, at + 2)["status"] == "pending_adjudication"
        if index % 2 == 0:
            outcome = "NOT_FOUND" if index % 100 == 0 else "ok"
            self._audit(tx, who, "search" if index % 4 else "get", at + 3, outcome)

    def _exit(
        self, tx: MemoryTransaction, who: Binding, tool: str, target: dict[str, str], at: int
    ) -> None:
        def gate(operation: Operation) -> Approval:
            return Approval("dialog", at)

        arguments = {**target, "idempotency_key": f"{tool}-{at}", "reason_ref": "reason:bench"}
        step = Write.of(self.engine, tx, tool, who, arguments, at)
        body = TOOLS[tool].mutate
        assert body is not None
        body(dataclasses.replace(step, gate=gate))
        self._audit(tx, who, tool, at, "ok")


def build_store(size: int, backend: str) -> tuple[Path, bool]:
    """A profile whose store holds ``size`` records and their history; whether reused."""

    def history(engine: MemoryEngine, base: Binding) -> Callable[[MemoryTransaction, int], None]:
        bindings = [dataclasses.replace(base, principal=name) for name in PRINCIPALS]
        return _Builder(engine, bindings, int(time.time() * 1000), size).one

    return bench_store(f"overview-{size}", size, BATCH, history, backend)


def _cases(overview: Overview, rng: random.Random) -> dict[str, Callable[[int], object]]:
    """Each view, as the console calls it; the argument picks a different page or item."""
    records = [overview.records(limit=500)]
    while len(records) < 20 and records[-1].next is not None:
        records.append(overview.records(after=records[-1].next, limit=500))
    ids = [row.record_id for page in records for row in page.items]
    deep = [page.next for page in records if page.next is not None]
    gone = [row.record_id for row in overview.records(state="tombstoned", limit=200).items]
    head = overview.journal(limit=1).items[0].cursor
    audits = [overview.audit(limit=500)]
    while len(audits) < 20 and audits[-1].next is not None:
        audits.append(overview.audit(before=audits[-1].next, limit=500))
    below = [page.next for page in audits if page.next is not None]
    rng.shuffle(ids)
    return {
        "records": lambda i: overview.records(),
        "records_deep_page": lambda i: overview.records(after=deep[i % len(deep)]),
        "records_tombstoned": lambda i: overview.records(state="tombstoned"),
        "records_current_deep": lambda i: overview.records(
            state="accepted_current", after=deep[i % len(deep)]
        ),
        "record_current_with_text": lambda i: overview.record(ids[i % len(ids)]),
        "record_tombstoned": lambda i: overview.record(gone[i % len(gone)]),
        "journal": lambda i: overview.journal(),
        "journal_deep_page": lambda i: overview.journal(before=rng.randint(2, head)),
        "audit": lambda i: overview.audit(),
        "audit_deep_page": lambda i: overview.audit(before=below[i % len(below)]),
        "audit_principal": lambda i: overview.audit(principal=PRINCIPALS[i % 4]),
        "audit_principal_tool": lambda i: overview.audit(principal=PRINCIPALS[i % 4], tool="get"),
        "audit_rare_tool": lambda i: overview.audit(tool="forget"),
        "audit_rare_outcome": lambda i: overview.audit(outcome="NOT_FOUND"),
        "activity_30_days": lambda i: overview.activity(30),
        "activity_365_days": lambda i: overview.activity(365),
        "counts": lambda i: overview.counts(),
        "held": lambda i: overview.held(),
    }


def measure(profile: Path, repeat: int, backend: str) -> dict[str, Any]:
    """The p50 (and spread) of each view in a freshly opened engine, after one warm-up."""
    loaded = load_profile(profile)
    engine = open_engine(loaded.store, loaded.keys, loaded.policy, semantic=False)
    try:
        if backend == "postgresql":
            vacuum(engine)
        overview = Overview(engine, binding_of(loaded).scope)
        figures: dict[str, Any] = {}
        for name, call in _cases(overview, random.Random(7)).items():
            timed(call, list(range(5)))  # warm the caches and the statements
            figures[name] = summary(timed(call, list(range(repeat))))
        with engine.store.read() as reader:
            scope = binding_of(loaded).scope.scope_id
            figures["journal_events"] = reader.head(scope).cursor
        return figures
    finally:
        engine.store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    WORK.mkdir(exist_ok=True)
    latency: dict[str, Any] = {}
    for size in args.sizes:
        started = time.perf_counter()
        profile, reused = build_store(size, args.backend)
        built = {} if reused else {"build_s": round(time.perf_counter() - started, 1)}
        latency[str(size)] = {**built, **measure(profile, args.repeat, args.backend)}
        slowest = max(
            (figures["p50_ms"], name)
            for name, figures in latency[str(size)].items()
            if isinstance(figures, dict)
        )
        latency[str(size)]["slowest_p50"] = {"view": slowest[1], "p50_ms": slowest[0]}
    name = "overview_latency" if args.backend == "sqlite" else f"overview_{args.backend}_latency"
    record(name, {"target_p50_ms_at_100k": 20, "repeat": args.repeat, **latency})


if __name__ == "__main__":
    main()
