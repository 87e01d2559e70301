"""The table of governed tools: every tool has exactly one body, of its kind, in its spec."""

from __future__ import annotations

import ast
import inspect

from engram.memory import admission, capture, engine, recall, withdrawal
from engram.memory.tools import MEMORY_TOOLS, TOOLS


def test_every_tool_has_one_body_of_its_kind() -> None:
    bodies = {name: (spec.read, spec.mutate) for name, spec in TOOLS.items()}

    assert bodies == {
        "search": (recall.search, None),
        "get": (recall.get, None),
        "capture": (None, capture.capture),
        "request_admission": (None, admission.request_admission),
        "withdraw": (None, withdrawal.withdraw),
        "forget": (None, withdrawal.forget),
    }
    assert {name for name, spec in TOOLS.items() if spec.reads} == {"search", "get"}
    assert MEMORY_TOOLS == ("search", "get", "capture", "request_admission", "withdraw", "forget")


def test_the_shredding_tools_are_the_always_gated_ones() -> None:
    shredding = {name: spec.shreds for name, spec in TOOLS.items() if spec.shreds}

    assert shredding == {"withdraw": "candidate_id", "forget": "record_id"}
    assert {name for name, spec in TOOLS.items() if spec.gated == "always"} == set(shredding)
    assert all(spec.destructive == (name in shredding) for name, spec in TOOLS.items())
    assert {name: spec.purge_status for name, spec in TOOLS.items() if spec.purge_status} == {
        "withdraw": "key_destruction",
        "forget": "projection_invalidation",
    }
    assert [name for name, spec in TOOLS.items() if spec.forgets_record] == ["forget"]
    assert {name: spec.question for name, spec in TOOLS.items() if spec.question} == {
        "search": "query"
    }


def test_the_engine_never_branches_on_a_tool_name() -> None:
    # Issue 29, item 2: what differs between tools is a column of TOOLS; the pipeline
    # carries the spec and never compares a name with a literal.
    tree = ast.parse(inspect.getsource(engine))
    names = set(MEMORY_TOOLS)
    compared = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(
            isinstance(side, ast.Constant) and side.value in names
            for side in (node.left, *node.comparators)
        )
    ]
    assert compared == []
