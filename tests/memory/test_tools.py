"""The table of governed tools: every tool has exactly one body in the engine, of its kind."""

from __future__ import annotations

from engram.memory import engine
from engram.memory.binding import MEMORY_TOOLS
from engram.memory.tools import TOOLS


def test_every_tool_has_one_body_of_its_kind() -> None:
    reads = {name for name, spec in TOOLS.items() if spec.reads}

    assert set(engine._READS) == reads == {"search", "get"}
    assert set(engine._MUTATIONS) == set(TOOLS) - reads
    assert MEMORY_TOOLS == ("search", "get", "capture", "request_admission", "withdraw", "forget")


def test_the_shredding_tools_are_the_always_gated_ones() -> None:
    shredding = {name: spec.shreds for name, spec in TOOLS.items() if spec.shreds}

    assert shredding == {"withdraw": "candidate_id", "forget": "record_id"}
    assert {name for name, spec in TOOLS.items() if spec.gated == "always"} == set(shredding)
    assert all(spec.destructive == (name in shredding) for name, spec in TOOLS.items())
