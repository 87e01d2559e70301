"""Every tool's arguments, written to hurt, thousands of them, on both backends (issue 15,
item 5): each call gets an envelope (never an exception), a refusal names a contract
code and shows no trace or path, and a refused call changes no state: the journal ends
holding exactly the events of the calls that succeeded."""

from __future__ import annotations

import json
import random
from typing import Any

from engram.errors import TrustedContextUnavailable
from engram.memory.tools import MEMORY_TOOLS
from engram.testing import PURPOSE, binding, capture_args
from engram.testing.hostile import hostile_arguments, leaks
from tests.memory.conftest import Memory, contract_errors

#: Hostile calls per backend (with the stdio frames and HTTP requests of
#: tests/mcp/test_hostile_wire.py, over 20,000 a run).
CALLS = 6_000
CODES = {cls.code for cls in contract_errors()}


def _valid(memory: Memory) -> dict[str, dict[str, Any]]:
    record_id = memory.admit("The hostile suite keeps its own record.", "hostile.valid")
    candidate = memory.capture("A draft to withdraw.", "hostile.draft.capture-01")
    return {
        "capture": capture_args(key="hostile.capture-000001"),
        "request_admission": {"candidate_id": candidate, "idempotency_key": "hostile.admit-0001"},
        "search": {"query": "hostile suite record", "purpose_ref": PURPOSE, "limit": 5},
        "get": {"record_id": record_id, "purpose_ref": PURPOSE},
        "withdraw": {
            "candidate_id": candidate,
            "idempotency_key": "hostile.withdraw-01",
            "reason_ref": "reason:wrong",
        },
        "forget": {
            "record_id": record_id,
            "idempotency_key": "hostile.forget-0001",
            "reason_ref": "reason:obsolete",
        },
    }


def test_thousands_of_hostile_arguments_get_envelopes_and_change_nothing_when_refused(
    memory: Memory,
) -> None:
    valid = _valid(memory)
    assert sorted(valid) == sorted(MEMORY_TOOLS)
    before = memory.events()
    chosen = random.Random(20_000)
    changed = 0
    codes: set[str] = set()
    for _ in range(CALLS):
        tool = chosen.choice(sorted(valid))
        arguments = hostile_arguments(valid[tool], chosen)
        try:
            envelope = memory.engine.call(tool, arguments, binding())
        except TrustedContextUnavailable as refused:  # a purpose not the bound one: JSON-RPC
            codes.add(refused.code)  # -32001 before anything runs, by design
            continue
        text = json.dumps(envelope)
        assert leaks(text) == [], (tool, text[:500])
        if envelope["ok"] is False:
            codes.add(envelope["error"]["code"])
            assert envelope["error"]["code"] in CODES | {"gate_failed"}, envelope
            continue
        value = envelope["output"]["value"]
        if tool in ("capture", "request_admission"):  # a hostile call may still be valid
            changed += value.get("status") == "committed_pending" or value.get("replayed") is False
    after = memory.events()
    assert after - before == changed
    assert "INVALID_SCHEMA" in codes
    assert len(codes) >= 3, codes  # refusals of several kinds, not one gate
